"""Diagnosis: one finding of `gradtool inspect` or of gradcheck, and KINDS, the registry of
their kinds: one entry per kind (severity, advice, documentation, the example that provokes
it, when its detector runs). The detectors register themselves on their entry (@finds: a
finding of inspect, in findings.py; @explains: a step of gradcheck's diagnosis, in
diagnose.py and reasons.py), and each checker runs them in registry order: the likeliest root
cause first. docs/diagnoses.md is generated from here (page()):

    .venv/bin/python -m gradtool.checks > docs/diagnoses.md
"""
import dataclasses
from typing import Callable, Optional

SEVERITIES = ("error", "warning", "info")


@dataclasses.dataclass
class Kind:
    name: str
    severity: str       # the usual one (a check's outcome may raise or lower it)
    advice: str         # one line: what to do about it
    about: str          # what it means, why it happens, what to do (docs/diagnoses.md)
    examples: tuple = ()  # stems: examples/broken_<stem>.py provokes it, <stem>_ok.py does not
    raised: str = ""    # where it is raised besides its detectors (or instead of them)
    orders: tuple = (1, 2)        # the gradcheck orders its step runs at
    trusts_forward: bool = False  # its step probes func: meaningless once the forward is random
    escalates: bool = False       # a hazard torch passes: an error when the check fails
    from_graph: bool = False      # its inspect detector needs only the graph snapshot
    finds: Optional[Callable] = None     # capture -> [Diagnosis]          (@finds)
    explains: Optional[Callable] = None  # (check, unexplained pairs) ->
    #                                      (pairs it explains, [Diagnosis]) (@explains)


_PROBE = ("gradcheck's probe of each custom Function's backward (hazards.probe_backward), "
          "before the check runs")
_STAGES = "gradcheck's own stages (gradcheck._Check)"



def _registry(*kinds):
    registry = {k.name: k for k in kinds}
    assert len(registry) == len(kinds), "a kind is registered twice"
    return registry


KINDS = _registry(
    Kind("output_no_grad", "warning",
         "check grad modes, detach() and the inputs' requires_grad",
         "An output of the target does not require grad, so no gradient flows back from it. "
         "It was computed under no_grad() or inference_mode(), cut off by detach() or .data, "
         "or from inputs none of which requires grad; the message names the first such "
         "place on the way back and its line (examples/grad_modes.py shows each). Compute "
         "it outside the grad mode, drop the detach, or create the inputs with "
         "requires_grad=True."),
    Kind("saved_modified_in_place", "error",
         "use the out-of-place op or clone() first",
         "A tensor a node saved for backward was modified in place after it was saved (its "
         "version moved on), so backward through that node fails with torch's 'modified by "
         "an inplace operation' error. The message names the saved tensor, the node and the "
         "line of the in-place op (examples/inplace_trouble.py). Use the out-of-place op "
         "(y = y * 2, not y *= 2), or clone() before modifying.", from_graph=True),
    Kind("backward_failed", "error", "fix the cause above",
         "backward raised: the message is the error, its location the user's line (or the "
         "custom Function's backward the engine's message names). An in-place error is the "
         "commonest cause; the other diagnoses usually say why."),
    Kind("input_no_grad", "warning", "check that the output really depends on it",
         "An input requires grad but gets no gradient after backward: it is used only with "
         "grad mode off, no path from the outputs leads back to it, or the target never "
         "uses it. The message says which, at the first line that used it."),
    Kind("non_finite_output", "error",
         "keep the op inside its domain (log of > 0, sqrt of >= 0)",
         "An output contains NaN or Inf, made by the forward (log of a negative number, "
         "division by 0, overflow in exp); the message names the first op that made one and "
         "its line. gradcheck cannot pass where it happens: the mismatches whose numbers "
         "are not finite are put down to it, not to the formula. Keep the ops inside their "
         "domain, or check at another point.",
         raised="gradtool inspect: with non_finite_grad, in one look at NaN and Inf"),
    Kind("random_forward", "error",
         "fix the seed inside the function, or draw the noise once outside it",
         "Two calls of the function at the same inputs differ by more than central "
         "differences can bear: the forward draws random numbers (dropout, randn, "
         "sampling), so f(x + h) - f(x - h) measures the noise, not the slope. Found first "
         "because the noise makes every later probe meaningless. Fix the seed inside the "
         "function, or draw the noise once outside it and pass it in.",
         examples=("random_forward",)),
    Kind("gradient_cut", "warning",
         "keep the value in the graph (no .item(), .detach(), numpy or no_grad on the way "
         "to the output)",
         "The forward took a value out of the graph (.item(), .detach(), .data, a numpy "
         "round-trip, an op under no_grad()) from a tensor that depends on the inputs, and "
         "the result still reaches an output: gradients do not flow back through that path. "
         "inspect warns where the inputs still get a gradient by another path (with no "
         "other path, input_no_grad says so); when gradcheck fails on those inputs the cut "
         "is the error, since central differences see the path the analytical gradient "
         "leaves out.", examples=("gradient_cut",), orders=(1,), trusts_forward=True),
    Kind("backward_not_reentrant", "error",
         "compute out of place in backward (grad = grad * grad_output, not grad *= "
         "grad_output)",
         "A backward that gives the right gradient the first time and another one the "
         "next: it modifies state it reads (an in-place op on a saved tensor or a ctx "
         "attribute, a counter). gradcheck runs backward many times on one graph, and so "
         "does a retain_graph=True backward. A warning from the probe when backward "
         "modifies what it reads; an error when the check fails and a fresh graph confirms "
         "the formula is right. Compute out of place in backward.",
         examples=("not_reentrant",), raised=_PROBE, orders=(1,), trusts_forward=True),
    Kind("surrogate_gradient", "error",
         "if the surrogate is meant, declare it with @gradtool.surrogate(...)",
         "A custom Function's backward is recognisably not the true gradient of its forward "
         "but a deliberate surrogate: straight-through (a flat forward with a non-zero "
         "backward), a constant multiple (gradient reversal, scaling), or the true gradient "
         "clipped or masked. If that is meant, declare it with @gradtool.surrogate(...) on "
         "the class and gradtool checks the backward against what was declared.",
         examples=("straight_through", "gradient_reversal"), orders=(1,),
         trusts_forward=True),
    Kind("saved_detached", "info", "save the tensor itself, not a detached copy",
         "A custom Function saves a detached tensor (ctx.save_for_backward(x.detach())): "
         "first derivatives are right, but backward cannot be differentiated through it, so "
         "second derivatives that depend on it come out as zero. Found by the forward "
         "capture; an error when gradgradcheck fails with an all-zero analytical Jacobian. "
         "Save the tensor itself.", examples=("saved_detached",),
         raised="the forward capture (findings.saved_detached); gradcheck cites it in the "
                "once_differentiable step"),
    Kind("non_leaf_grad", "warning", "call retain_grad() on it, or read the leaf's .grad",
         ".grad was read on a tensor that is not a leaf: autograd keeps gradients of leaves "
         "only, so it is None there. Call .retain_grad() on that tensor before backward, or "
         "read the leaf's .grad."),
    Kind("non_finite_grad", "error", "look for a division by zero or sqrt'(0) in backward",
         "A leaf's gradient contains NaN or Inf after backward although the forward was "
         "finite: a backward formula divides by zero (sqrt'(0), 1/x at 0) or overflows. Run "
         "backward under gradtool.autograd.detect_anomaly() to find the node that made it."),
    Kind("precision", "warning", "check with float64 inputs and float64 arithmetic",
         "Inputs or outputs are not float64, and gradcheck's tolerances assume float64: "
         "central differences with a step of 1e-6 drown in float32 rounding. When the check "
         "fails, gradtool redoes the numerical side in float64 (and with a step suited to "
         "the arithmetic's precision); if the Jacobians then agree, precision, not the "
         "formula, is the error. A kernel meant for low precision is judged against a "
         "float64 reference instead (gradtool.testing.assert_matches_reference, "
         "@gradtool.reference).", examples=("float32",), trusts_forward=True,
         from_graph=True),
    Kind("round_off", "error", "check with a larger --eps or without the large offset",
         "The outputs are so large next to the change a step of eps makes (x.sum() + 1e9) "
         "that central differences keep few digits: every mismatch lies within that "
         "rounding noise. Check with a larger --eps, with float64 throughout, or without the "
         "large constant offset.", trusts_forward=True),
    Kind("once_differentiable", "error", "write backward with differentiable ops",
         "gradgradcheck fails and a custom Function's backward is decorated "
         "@once_differentiable: it runs without recording a graph, so its result cannot be "
         "differentiated again. Write backward with differentiable ops and drop the "
         "decorator. This step of the diagnosis also names backward_detaches and cites "
         "saved_detached.", examples=("once_differentiable",), orders=(2,),
         trusts_forward=True),
    Kind("backward_detaches", "error", "keep backward's computation in the graph",
         "gradgradcheck fails and a custom Function's backward computes outside autograd "
         "(.detach(), .data, .numpy(), no_grad): the gradients it returns do not require "
         "grad under create_graph=True, or do not depend on its saved tensors in the graph, "
         "so second derivatives through them come out as zero. Keep backward's computation "
         "in the graph.", examples=("detached_backward",),
         raised="the once_differentiable step of gradcheck's diagnosis "
                "(hazards.double_backward_findings)"),
    Kind("non_differentiable_point", "error", "check at a point away from the kink",
         "The mismatch is at a kink (relu or abs at 0, a tie in max): the one-sided "
         "derivatives differ there, central differences give their average, and the "
         "analytical value follows a convention. gradtool probes the worst entries with a "
         "five-point stencil and names the left and right derivatives. Info when the check "
         "passes at such a point. Check at a point away from the kink.",
         examples=("kink",), trusts_forward=True),
    Kind("one_branch", "info",
         "give inputs on both sides of the kink, e.g. "
         "@gradtool.example(gradtool.uniform(shape, -2, 2))",
         "Every input of a piecewise op (relu, abs, clamp, where) fell on one side of its "
         "kink, so a check of this run exercises one branch only. Give inputs on both "
         "sides."),
    Kind("grad_none_for_input", "warning",
         "return the input's gradient, or None only where it is truly 0",
         "A custom Function's backward returns None for an input that requires grad: the "
         "engine treats it as a zero gradient. Right where that input's true gradient is 0 "
         "(central differences say so: info), wrong where it is not (error).",
         examples=("none_grad",), raised=_PROBE, escalates=True),
    Kind("input_modified_in_forward", "warning", "clone() the input, or ctx.mark_dirty it",
         "The forward modified an input in place without ctx.mark_dirty: autograd does not "
         "know it changed, and each evaluation of the function starts from a different "
         "point, so finite differences are meaningless; the mismatches on that input are put "
         "down to it. clone() the input, or mark it dirty.", examples=("mark_dirty",),
         raised="gradcheck, watching the inputs' versions (hazards.modified_inputs)",
         escalates=True),
    Kind("ignores_grad_output", "error", "return grad_output times the local derivative",
         "backward returns the same gradients whatever grad_output is (and non-zero ones "
         "for a zero grad_output): it must return grad_output times the local derivative, "
         "the vector-Jacobian product. Every mismatch of the check is put down to it.",
         examples=("ignores_grad_output",), raised=f"{_PROBE}, and {_STAGES}"),
    Kind("wrong_gradient", "error", "fix the backward formula",
         "What is left when nothing else explains a mismatch: the analytical gradient "
         "differs from central differences where the function is smooth. The message names "
         "the worst entry with both values. Fix the backward formula (with --localize, the "
         "first wrong custom Function is named instead: wrong_node).",
         examples=("wrong_gradient", "complex_conj")),
    Kind("wrong_jvp", "error", "fix the jvp formula",
         "As wrong_gradient, for the Jacobian computed in forward mode (a custom Function's "
         "jvp, checked with --mode forward or both). Fix the jvp formula.",
         examples=("jvp",), raised="the wrong_gradient step, for forward-mode pairs"),
    Kind("grad_wrong_dtype", "warning", "return a gradient of the input's dtype",
         "A custom Function's backward returns a gradient of another dtype than its input: "
         "the engine casts it silently (as torch does), and precision lost on the way is "
         "lost for good.", examples=("grad_dtype",), raised=_PROBE, escalates=True),
    Kind("grad_wrong_shape", "warning", "return a gradient of the input's shape",
         "A custom Function's backward returns a gradient of another shape than its input: "
         "the engine sums a broadcastable one down to the input's shape (as torch does), "
         "which hides a backward that broadcasts by mistake, and rejects any other (error).",
         examples=("grad_shape",), raised=_PROBE, escalates=True),
    Kind("ctx_stored_tensor", "warning", "use ctx.save_for_backward(...)",
         "A custom Function keeps tensors as ctx attributes instead of "
         "ctx.save_for_backward(...): an in-place change to them before backward goes "
         "unnoticed, they are not freed after backward, and an output kept this way holds "
         "its own graph alive.", examples=("ctx_storage",), raised=_PROBE),
    Kind("nonlinear_in_grad_output", "warning",
         "return grad_output times the local derivative",
         "backward(2g) is not 2 backward(g) (or backward(0) is not 0): a vector-Jacobian "
         "product is linear in the vector, so backward does something else with "
         "grad_output than multiply it.", raised=f"{_PROBE}, and {_STAGES}",
         escalates=True),
    Kind("nondeterministic_backward", "warning",
         "make backward deterministic, or pass nondet_tol",
         "Two backward passes with the same grad_output differ: backward draws random "
         "numbers, or reduces in an order that varies. An error where it makes torch's "
         "reentrancy check fail; if it is expected, pass nondet_tol above the spread.",
         examples=("nondeterministic",), raised=f"{_PROBE}, and {_STAGES}", escalates=True),
    Kind("no_jvp", "info",
         "define the Function's jvp(ctx, *tangents) to check forward mode too",
         "With --mode both, a custom Function on the way defines no jvp, so only the "
         "backward was checked (with --mode forward the same is a usage error, exit 2). "
         "Define jvp(ctx, *tangents) to check forward mode too.",
         raised="checking a target (target._forward_checkable)"),
    Kind("wrong_node", "error", "fix that Function's backward (its own check is shown)",
         "On a failed check, each custom Function call (with --localize all, each op) is "
         "checked on its own at the inputs it received, in backward order: the first that "
         "fails is to blame, with its own diagnosis. It replaces the target's wrong_gradient "
         "paragraphs.", examples=("model_function",),
         raised="localisation (localize.Localized.as_diagnosis)"),
    Kind("custom_functions_pass", "info",
         "look at how the Functions are composed, and at built-in ops used outside their "
         "domain",
         "Localisation found every custom Function right on its own: the error is in how "
         "they are composed, or in a built-in op used outside its domain (a kink, a NaN).",
         raised="localisation (localize.Localized.as_diagnosis)"),
)


def finds(kind):
    """Register the function as `kind`'s detector in gradtool inspect."""
    def register(detector):
        assert KINDS[kind].finds is None, f"{kind}: two inspect detectors"
        KINDS[kind].finds = detector
        return detector
    return register


def explains(kind):
    """Register the function as `kind`'s step in gradcheck's diagnosis of a verdict."""
    def register(step):
        assert KINDS[kind].explains is None, f"{kind}: two gradcheck steps"
        KINDS[kind].explains = step
        return step
    return register


def page():
    """docs/diagnoses.md: every kind, in registry order."""
    lines = ["# Diagnoses", "",
             "<!-- Generated from gradtool/checks/diagnoses.py by `.venv/bin/python -m "
             "gradtool.checks > docs/diagnoses.md`: edit the registry, not this page. -->",
             "",
             "Every finding of `gradtool inspect` and every reason `gradtool gradcheck` gives "
             "for a verdict has one of these kinds (the `kind` of a diagnosis in the JSON "
             "output). They are listed in the order the checks look for them: the likeliest "
             "root cause first. The severity is the usual one; a check's outcome may raise "
             "or lower it.", "",
             "| kind | severity | advice |", "|---|---|---|"]
    lines += [f"| [`{k.name}`](#{k.name}) | {k.severity} | {k.advice} |"
              for k in KINDS.values()]
    for k in KINDS.values():
        lines += ["", f"## {k.name}", "", f"**{k.severity}**. {k.about}", "",
                  f"What to do: {k.advice}."]
        if k.examples:
            pairs = "; ".join(f"[`examples/broken_{s}.py`](../examples/broken_{s}.py) "
                              f"provokes it, [`examples/{s}_ok.py`](../examples/{s}_ok.py) "
                              f"does not" for s in k.examples)
            lines += ["", f"Example: {pairs}."]
    return "\n".join(lines) + "\n"


@dataclasses.dataclass
class Diagnosis:
    """What is wrong (or worth knowing), how bad, and where.

    severity: "error" is something wrong (a failed check is explained by it, a backward that
    raises); "warning" a hazard the verdict does not reflect (torch would pass it too; exit 1
    only under --strict); "info" context."""
    kind: str                       # snake_case, e.g. wrong_gradient, input_no_grad
    severity: str                   # error | warning | info
    message: str
    details: dict = dataclasses.field(default_factory=dict)
    advice: str = ""                # one line: what to do about it
    location: Optional[str] = None  # file:line in the user's code

    def __post_init__(self):
        assert self.severity in SEVERITIES, self.severity
        assert self.kind in KINDS, f"{self.kind!r}: add it to diagnoses.KINDS"
        if not self.advice:
            self.advice = KINDS[self.kind].advice
