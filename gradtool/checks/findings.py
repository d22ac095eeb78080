"""What `gradtool inspect` warns about, each with a line of advice. Reads a Capture: the graph
snapshot, the forward trace, the warnings the user's code raised and the backward's outcome.
Each detector is registered on its kind (diagnoses.KINDS), whose order is inspect's."""
import types

from ..engine.frames import location, site_location
from .diagnoses import KINDS, Diagnosis, finds

NON_LEAF_GRAD_WARNING = "is not a leaf Tensor is being accessed"


def _found(kind, severity, message, advice, location=None, details=None):
    """A Diagnosis of inspect (which always has advice, and a location where it can)."""
    return Diagnosis(kind, severity, message, details or {}, advice, location)


def diagnose(capture):
    """Every kind's inspect detector, in registry order."""
    return [d for kind in KINDS.values() if kind.finds for d in kind.finds(capture)]


def diagnose_snapshot(snapshot):
    """What a graph alone tells (gradtool.inspect(y) of a graph already made, with no trace
    of the forward and no backward run): the detectors that need only the snapshot."""
    view = types.SimpleNamespace(snapshot=snapshot)
    return [d for kind in KINDS.values() if kind.from_graph for d in kind.finds(view)]


@finds("backward_failed")
def _backward_failed(capture):
    if not capture.backward_error:
        return []
    return [_found("backward_failed", "error", f"backward raised {capture.backward_error}",
                   "fix the cause above; with an in-place error, use the out-of-place op "
                   "(y = y + 1, not y += 1) or clone() the tensor before modifying it",
                   site_location(capture.backward_location))]


@finds("gradient_cut")
def _partial_cuts(capture):
    """The forward's cuts (gradient_cuts) after which the inputs still get a gradient by
    another path (with none, input_no_grad says so)."""
    return [d for d in capture.causes if d.kind == "gradient_cut" and d.details["partial"]]


@finds("saved_detached")
def _detached_saves(capture):
    return [d for d in capture.causes if d.kind == "saved_detached"]


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _branch(node):
    """Which side of its kink every input of a piecewise op fell on, or None (both sides, or
    not known): relu, abs, clamp, where."""
    saved = {s.name: s for s in node.saved}
    if node.name == "ReluBackward0" and "_saved_result" in saved:
        r = saved["_saved_result"]
        if r.min is not None and r.min > 0:
            return "every input above 0"
        if r.max is not None and r.max <= 0:
            return "every input at or below 0"
    if node.name == "AbsBackward0" and "_saved_self" in saved:
        x = saved["_saved_self"]
        if x.min is not None and (x.min > 0 or x.max < 0):
            return "every input " + ("above" if x.min > 0 else "below") + " 0"
    if node.name.startswith("Clamp") and "_saved_self" in saved:
        x = saved["_saved_self"]
        low = _number(getattr(saved.get("_saved_min"), "value", None))
        high = _number(getattr(saved.get("_saved_max"), "value", None))
        if x.min is None:
            return None
        if (low is None or x.min > low) and (high is None or x.max < high):
            return "every input inside the bounds (never clamped)"
        if high is not None and x.min > high:
            return f"every input above max={high:g}"
        if low is not None and x.max < low:
            return f"every input below min={low:g}"
    if node.name == "WhereBackward0" and "_saved_condition" in saved:
        c = saved["_saved_condition"]
        if c.min is not None and c.min == c.max:
            return f"the condition {'True' if c.min else 'False'} everywhere"
    return None


@finds("one_branch")
def one_branch(capture):
    """Piecewise ops whose inputs all fell on one side of the kink: a check of this run
    exercises that branch only (info)."""
    found = []
    for node in capture.snapshot.nodes:
        side = _branch(node)
        if side is not None:
            found.append(_found(
                "one_branch", "info",
                f"{node.name} ({node.id}) saw {side}: checks of this run exercise one branch "
                f"of it only",
                "give inputs on both sides of the kink, e.g. "
                "@gradtool.example(gradtool.uniform(shape, -2, 2))",
                node.site, {"node": node.id, "side": side}))
    return found


_CUT_WORDS = {
    "detach": "`.detach()` takes {what} out of the graph",
    "data": "`.data` takes {what} out of the graph",
    "item": "`.item()` turns {what} into a Python number",
    "tolist": "`.tolist()` turns {what} into Python numbers",
    "numpy": "a numpy round-trip (`{op}`) takes {what} out of the graph",
    "no_grad": "`{op}` ran with grad mode off (no_grad()) on {what}",
}


def gradient_cuts(capture):
    """Every place the forward took a value out of the graph from a tensor that requires
    grad and descends from the target's inputs (or module parameters): kind gradient_cut,
    details {cut, op, inputs: the names whose path it cuts, partial: whether they still get
    a gradient by another path}. Cuts whose result never reaches an output are left out."""
    trace, names = capture.trace, capture.leaf_names
    if not trace.cuts:  # (the walk below holds a key per tensor of the run: none needed)
        return []
    reaching = _ancestors(trace, [trace.key(t) for t in capture.outputs])
    found = []
    for cut in trace.cuts:
        if cut.result is not None and cut.kind != "numpy" and cut.result not in reaching:
            continue  # e.g. a detached copy only printed
        ids = _ancestors(trace, [cut.source])
        inputs = [name for tid, name in names.items() if tid in ids]
        if not inputs:
            continue
        partial = any(grad is not None for tid, grad in capture.leaf_grads.items()
                      if tid in ids)
        what = (names[cut.source] if cut.source in names else
                f"a tensor computed from {', '.join(inputs)}")
        message = (_CUT_WORDS[cut.kind].format(what=what, op=cut.op) +
                   ": gradients do not flow back through it, so "
                   + ("that path's contribution is missing from the gradient of " if partial
                      else "no gradient reaches ") + ", ".join(inputs))
        found.append(_found(
            "gradient_cut", "warning", message,
            "keep it a tensor computation outside no_grad() (no .item(), .detach(), .data or "
            "numpy) if gradients should flow through it",
            site_location(cut.site), {"cut": cut.kind, "op": cut.op, "inputs": inputs,
                              "partial": partial}))
    return found


def _ancestors(trace, ids):
    """Keys (the trace's) of the tensors the given ones were computed from (themselves
    included), and of what was written into them through `.data`."""
    seen, stack = set(), list(ids)
    while stack:
        tid = stack.pop()
        if tid in seen:
            continue
        seen.add(tid)
        event = trace.made_by.get(tid)
        if event is not None:
            stack.extend(event.inputs)
        cut = trace.detached_from.get(tid)
        if cut is not None:
            stack.append(cut.source)
        stack.extend(trace.written_through.get(tid, ()))  # x.data.copy_(...) set its values
    return seen


def saved_detached(E, trace, nodes):
    """Custom Functions that save a detached tensor (ctx.save_for_backward(x.detach())):
    first derivatives are fine, but backward cannot be differentiated through it."""
    found = []
    for node in nodes:
        for k, saved in enumerate(E.saved_values(node).values()):
            tensor = getattr(saved, "_tensor", saved)  # gradtool's SavedTensor, or torch's
            site = trace.detached.get(trace.key(tensor)) if trace._is_tensor(tensor) else None
            if site is None:
                continue
            name = node._forward_cls.__name__
            found.append(_found(
                "saved_detached", "info",
                f"{name} saves a detached tensor (saved_tensors[{k}]): its backward cannot be "
                f"differentiated through it, so second derivatives (gradcheck --order 2) that "
                f"depend on it come out as zero",
                "save the tensor itself (ctx.save_for_backward(x)); detach only what must "
                "not be differentiated", site_location(site),
                {"function": name, "saved_tensor": k}))
    return found


@finds("output_no_grad")
def _outputs_without_grad(capture):
    found = []
    inputs_require_grad = any(getattr(v, "requires_grad", False) for _, v in capture.inputs)
    for info, tensor in zip(capture.snapshot.outputs, capture.outputs):
        if info.requires_grad or tensor.dtype.is_floating_point is False:
            continue
        name = info.name or f"output {info.index}"
        reason, advice, where = _why_no_grad(capture, tensor, inputs_require_grad)
        found.append(_found("output_no_grad", "warning",
                                f"{name} does not require grad: {reason}", advice, where))
    return found


def _why_no_grad(capture, tensor, inputs_require_grad):
    trace = capture.trace
    if tensor.is_inference():
        event = trace.made_by.get(trace.key(tensor))
        return ("it is an inference tensor, made under inference_mode()",
                "compute it outside inference_mode() if you need its gradient",
                site_location(event.site) if event else None)
    # walk back through the ops that made it, to the first place the graph was cut
    stack, seen = [trace.key(tensor)], set()
    while stack:
        tid = stack.pop()
        if tid in seen:
            continue
        seen.add(tid)
        if tid in trace.detached:
            return ("a detach() cut it off from the graph",
                    "remove the detach() (or .data) if gradients should flow through here",
                    site_location(trace.detached[tid]))
        event = trace.made_by.get(tid)
        if event is None:
            continue
        if event.inference:
            return (f"`{event.op}` ran under inference_mode()",
                    "compute it outside inference_mode() if you need its gradient",
                    site_location(event.site))
        if not event.grad_enabled and event.any_input_requires_grad:
            return (f"`{event.op}` ran with grad mode off (no_grad() or "
                    f"set_grad_enabled(False))",
                    "move this computation out of the no_grad() block",
                    site_location(event.site))
        stack.extend(event.inputs)
    if not inputs_require_grad:
        return ("none of the inputs requires grad",
                "create the inputs with requires_grad=True", None)
    return ("it was not computed from any tensor that requires grad",
            "make sure the output depends on an input that requires grad", None)


@finds("saved_modified_in_place")
def _saved_modified_in_place(capture):
    found = []
    for node in capture.snapshot.nodes:
        for saved in node.saved:
            if saved.modified:
                found.append(_found(
                    "saved_modified_in_place", "error",
                    f"{saved.name} of {node.name} ({node.id}) was saved at version "
                    f"{saved.version_saved} and an in-place op moved it to version "
                    f"{saved.version_now}: backward through {node.name} will fail",
                    "use the out-of-place op (y = y * 2, not y *= 2) or clone() before the "
                    "in-place op", site_location(saved.modified_at)))
    return found


@finds("input_no_grad")
def _inputs_without_grad(capture):
    found = []
    for name, value in capture.inputs:
        if getattr(value, "requires_grad", False) and value.is_leaf and value.grad is None \
                and not capture.backward_error:
            key = capture.trace.key(value)
            used_under = [e for e in capture.trace.events if key in e.inputs]
            cut = [e for e in used_under if not e.grad_enabled]
            if cut:
                reason = f"it is only used with grad mode off (`{cut[0].op}`)"
                where = site_location(cut[0].site)
            elif used_under:
                reason = "no path from the outputs leads back to it"
                where = site_location(used_under[0].site)
            else:
                reason, where = "the target never uses it", None
            found.append(_found("input_no_grad", "warning",
                                    f"input {name} requires grad but gets no gradient: {reason}",
                                    "check that the output really depends on it", where))
    return found


@finds("non_leaf_grad")
def _non_leaf_grad_reads(capture):
    found = []
    for w in capture.warnings:
        if NON_LEAF_GRAD_WARNING in str(w.message):
            found.append(_found(
                "non_leaf_grad", "warning",
                ".grad was read on a tensor that is not a leaf: it is always None there",
                "call .retain_grad() on that tensor before backward, or read the leaf's .grad",
                location(w.filename, w.lineno)))
    return found


@finds("non_finite_grad")
def _non_finite(capture):
    """NaN or Inf in the outputs (non_finite_output), then in the leaves' gradients."""
    found = []
    first = next((e for e in capture.trace.events if e.made_nonfinite), None)
    for info in capture.snapshot.outputs:
        if not info.finite:
            where = site_location(first.site) if first else None
            origin = f"; the first NaN/Inf came from `{first.op}`" if first else ""
            found.append(_found("non_finite_output", "error",
                                    f"{info.name or f'output {info.index}'} contains NaN or "
                                    f"Inf{origin}",
                                    "check the inputs' domain at that line (log of <= 0, "
                                    "division by 0, overflow in exp)", where))
    for leaf in capture.snapshot.leaves:
        if leaf.leaf.grad_finite is False:
            found.append(_found("non_finite_grad", "error",
                                    f"the gradient of {leaf.label or leaf.id} contains NaN or Inf",
                                    "run with gradtool.autograd.detect_anomaly() to find the "
                                    "backward node that produced it", None))
    return found


@finds("precision")
def _precision(capture):
    low = [leaf.label or leaf.id for leaf in capture.snapshot.leaves
           if leaf.leaf.dtype in ("float16", "float32")]
    if not low:
        return []
    return [_found("precision", "info",
                       f"{', '.join(low)} {'is' if len(low) == 1 else 'are'} not float64: "
                       f"numerical gradient checks are limited by precision there",
                       "use dtype=float64 inputs when checking gradients", None)]


@finds("vmap_batched")
def _vmap_batches(capture):
    """Each vmap the forward ran: the dim it batched of each argument, named as the user's
    function names its parameters."""
    found = []
    for t in getattr(capture.trace, "transforms", ()):
        details, names = t.details, t.parameters
        parts, shared = [], []
        for i, d in enumerate(details["in_dims"]):
            name = names[i] if i < len(names) else f"argument {i}"
            (shared.append(name) if d is None else
             parts.append(f"{name} along dim {d}" if isinstance(d, int) else f"{name} ({d})"))
        message = (f"vmap({t.function}) ran {details['size']} examples at once, batching "
                   f"{', '.join(parts) or 'nothing'}" +
                   (f"; {', '.join(shared)} the same for every example" if shared else ""))
        found.append(_found("vmap_batched", "info", message,
                            KINDS["vmap_batched"].advice, site_location(t.site),
                            {"function": t.function, "size": details["size"],
                             "in_dims": [d if d is None or isinstance(d, int) else str(d)
                                         for d in details["in_dims"]]}))
    return found
