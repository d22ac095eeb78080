"""What `gradtool inspect` warns about, each with a line of advice. Reads a Capture: the graph
snapshot, the forward trace, the warnings the user's code raised and the backward's outcome."""
import dataclasses
import os
from typing import Optional

NON_LEAF_GRAD_WARNING = "is not a leaf Tensor is being accessed"


@dataclasses.dataclass
class Diagnostic:
    code: str
    severity: str          # error | warning | info
    message: str
    advice: str
    location: Optional[str] = None   # file:line in the user's code

    def to_dict(self):
        return dataclasses.asdict(self)


def diagnose(capture):
    found = []
    found += _outputs_without_grad(capture)
    found += _saved_modified_in_place(capture)
    if capture.backward_error:
        found.append(Diagnostic(
            "backward-failed", "error", f"backward raised {capture.backward_error}",
            "fix the cause above; with an in-place error, use the out-of-place op "
            "(y = y + 1, not y += 1) or clone() the tensor before modifying it",
            _where(capture.backward_location)))
    found += _inputs_without_grad(capture)
    found += _non_leaf_grad_reads(capture)
    found += _non_finite(capture)
    found += _precision(capture)
    return found


def _where(location):
    if not location:
        return None
    filename, lineno = location[0], location[1]
    return f"{os.path.relpath(filename)}:{lineno}" if filename else None


def _site(site):
    return _where(site) if site else None


def _outputs_without_grad(capture):
    found = []
    inputs_require_grad = any(getattr(v, "requires_grad", False) for _, v in capture.inputs)
    for info, tensor in zip(capture.snapshot.outputs, capture.outputs):
        if info.requires_grad or tensor.dtype.is_floating_point is False:
            continue
        name = info.name or f"output {info.index}"
        reason, advice, where = _why_no_grad(capture, tensor, inputs_require_grad)
        found.append(Diagnostic("output-no-grad", "warning",
                                f"{name} does not require grad: {reason}", advice, where))
    return found


def _why_no_grad(capture, tensor, inputs_require_grad):
    trace = capture.trace
    if tensor.is_inference():
        event = trace.made_by.get(id(tensor))
        return ("it is an inference tensor, made under inference_mode()",
                "compute it outside inference_mode() if you need its gradient",
                _site(event.site) if event else None)
    # walk back through the ops that made it, to the first place the graph was cut
    stack, seen = [id(tensor)], set()
    while stack:
        tid = stack.pop()
        if tid in seen:
            continue
        seen.add(tid)
        if tid in trace.detached:
            return ("a detach() cut it off from the graph",
                    "remove the detach() (or .data) if gradients should flow through here",
                    _site(trace.detached[tid]))
        event = trace.made_by.get(tid)
        if event is None:
            continue
        if event.inference:
            return (f"`{event.op}` ran under inference_mode()",
                    "compute it outside inference_mode() if you need its gradient",
                    _site(event.site))
        if not event.grad_enabled and event.any_input_requires_grad:
            return (f"`{event.op}` ran with grad mode off (no_grad() or "
                    f"set_grad_enabled(False))",
                    "move this computation out of the no_grad() block",
                    _site(event.site))
        stack.extend(event.inputs)
    if not inputs_require_grad:
        return ("none of the inputs requires grad",
                "create the inputs with requires_grad=True", None)
    return ("it was not computed from any tensor that requires grad",
            "make sure the output depends on an input that requires grad", None)


def _saved_modified_in_place(capture):
    found = []
    for node in capture.snapshot.nodes:
        for saved in node.saved:
            if saved.modified:
                found.append(Diagnostic(
                    "saved-modified-in-place", "error",
                    f"{saved.name} of {node.name} ({node.id}) was saved at version "
                    f"{saved.version_saved} and an in-place op moved it to version "
                    f"{saved.version_now}: backward through {node.name} will fail",
                    "use the out-of-place op (y = y * 2, not y *= 2) or clone() before the "
                    "in-place op", _site(saved.modified_at)))
    return found


def _inputs_without_grad(capture):
    found = []
    for name, value in capture.inputs:
        if getattr(value, "requires_grad", False) and value.is_leaf and value.grad is None \
                and not capture.backward_error:
            used_under = [e for e in capture.trace.events if id(value) in e.inputs]
            cut = [e for e in used_under if not e.grad_enabled]
            if cut:
                reason = f"it is only used with grad mode off (`{cut[0].op}`)"
                where = _site(cut[0].site)
            elif used_under:
                reason = "no path from the outputs leads back to it"
                where = _site(used_under[0].site)
            else:
                reason, where = "the target never uses it", None
            found.append(Diagnostic("input-no-grad", "warning",
                                    f"input {name} requires grad but gets no gradient: {reason}",
                                    "check that the output really depends on it", where))
    return found


def _non_leaf_grad_reads(capture):
    found = []
    for w in capture.warnings:
        if NON_LEAF_GRAD_WARNING in str(w.message):
            found.append(Diagnostic(
                "non-leaf-grad", "warning",
                ".grad was read on a tensor that is not a leaf: it is always None there",
                "call .retain_grad() on that tensor before backward, or read the leaf's .grad",
                f"{os.path.relpath(w.filename)}:{w.lineno}"))
    return found


def _non_finite(capture):
    found = []
    first = next((e for e in capture.trace.events if e.made_nonfinite), None)
    for info in capture.snapshot.outputs:
        if not info.finite:
            where = _site(first.site) if first else None
            origin = f"; the first NaN/Inf came from `{first.op}`" if first else ""
            found.append(Diagnostic("non-finite-output", "error",
                                    f"{info.name or f'output {info.index}'} contains NaN or "
                                    f"Inf{origin}",
                                    "check the inputs' domain at that line (log of <= 0, "
                                    "division by 0, overflow in exp)", where))
    for leaf in capture.snapshot.leaves:
        if leaf.leaf.grad_finite is False:
            found.append(Diagnostic("non-finite-grad", "error",
                                    f"the gradient of {leaf.label or leaf.id} contains NaN or Inf",
                                    "run with gradtool.autograd.detect_anomaly() to find the "
                                    "backward node that produced it", None))
    return found


def _precision(capture):
    low = [leaf.label or leaf.id for leaf in capture.snapshot.leaves
           if leaf.leaf.dtype in ("float16", "float32")]
    if not low:
        return []
    return [Diagnostic("low-precision", "info",
                       f"{', '.join(low)} {'is' if len(low) == 1 else 'are'} not float64: "
                       f"numerical gradient checks are limited by precision there",
                       "use dtype=float64 inputs when checking gradients", None)]

