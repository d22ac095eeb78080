"""Diagnosis: one finding of `gradtool inspect` or of gradcheck, and KINDS, the registry of
their kinds: one entry per kind (severity, advice, documentation, the example that provokes
it, when its detector runs). The detectors register themselves on their entry (@finds: a
finding of inspect, in findings.py; @explains: a step of gradcheck's diagnosis, in
diagnose.py and reasons.py), and each checker runs them in registry order: the likeliest root
cause first. docs/diagnoses.md is generated from here (page(), through docs/generate.py)."""
import dataclasses
from typing import Callable, Optional

SEVERITIES = ("error", "warning", "info")


@dataclasses.dataclass
class Kind:
    name: str
    severity: str       # the usual one (a check's outcome may raise or lower it)
    advice: str         # one line: what to do about it
    about: str          # what it means and why it happens (docs/diagnoses.md)
    examples: tuple = ()  # stems: examples/broken_<stem>.py provokes it, <stem>_ok.py does not
    raised: str = ""    # where it is raised besides its detectors (or instead of them)
    orders: tuple = (1, 2)        # the gradcheck orders its step runs at
    trusts_forward: bool = False  # its step probes func: meaningless once the forward is random
    escalates: bool = False       # a hazard torch passes: an error when the check fails
    from_graph: bool = False      # its inspect detector needs only the graph snapshot
    finds: Optional[Callable] = None     # capture -> [Diagnosis]          (@finds)
    explains: Optional[Callable] = None  # (check, unexplained pairs) ->
    #                                      (pairs it explains, [Diagnosis]) (@explains)


_PROBE = "the probe of each custom Function's backward (hazards.probe_backward)"
_OPCHECK = ("the custom-op check (checks/custom_ops.py), from torch.library.opcheck's result "
            "on either engine")
_OP_PROBE = "the custom-op check (checks/custom_ops.py), gradtool's own probe"
_STAGES = "gradcheck's stages (gradcheck._Check)"


def _registry(*kinds):
    registry = {k.name: k for k in kinds}
    assert len(registry) == len(kinds), "a kind is registered twice"
    return registry


KINDS = _registry(
    Kind("output_no_grad", "warning", "check grad modes, detach() and the inputs' requires_grad",
         "An output does not require grad, so no gradient flows back from it: it was made "
         "under no_grad() or inference_mode(), cut off by detach(), or from inputs none of "
         "which requires grad. The message names the first such line (examples/grad_modes.py)."),
    Kind("saved_modified_in_place", "error", "use the out-of-place op or clone() first",
         "A tensor a node saved for backward was modified in place afterwards, so backward "
         "through that node fails with torch's 'modified by an inplace operation' error. The "
         "message names the line of the in-place op (examples/inplace_trouble.py).",
         from_graph=True),
    Kind("backward_failed", "error", "fix the cause above",
         "backward raised; the location is the user's line, or the custom Function's backward "
         "the engine's message names. An in-place op is the commonest cause."),
    Kind("input_no_grad", "warning", "check that the output really depends on it",
         "An input requires grad but gets no gradient: it is used only with grad mode off, no "
         "path from the outputs leads back to it, or the target never uses it."),
    Kind("non_finite_output", "error", "keep the op inside its domain (log of > 0, sqrt of >= 0)",
         "An output holds NaN or Inf made by the forward (log of a negative number, division "
         "by 0, overflow in exp); the message names the first op that made one. gradcheck puts "
         "the mismatches whose numbers are not finite down to it.",
         raised="gradtool inspect: by non_finite_grad's detector, which looks at both"),
    Kind("random_forward", "error",
         "fix the seed inside the function, or draw the noise once outside it",
         "Two calls at the same inputs differ by more than central differences can bear: the "
         "forward draws random numbers (dropout, randn), so f(x + h) - f(x - h) measures the "
         "noise, not the slope. The later probes are skipped: the noise defeats them.",
         examples=("random_forward",)),
    Kind("gradient_cut", "warning",
         "keep the value in the graph (no .item(), .detach(), numpy or no_grad on the way to "
         "the output)",
         "The forward took a value out of the graph (.item(), .detach(), .data, numpy, "
         "no_grad) and the result reaches an output, so the gradient leaves that path out. "
         "inspect warns where the input still gets a gradient by another path; a gradcheck "
         "that fails on that input names the cut as the error.",
         examples=("gradient_cut", "data_init"), orders=(1,), trusts_forward=True),
    Kind("backward_not_reentrant", "error",
         "compute out of place in backward (grad = grad * grad_output, not grad *= "
         "grad_output)",
         "backward is right the first time and not the next: it modifies state it reads (a "
         "saved tensor in place, a counter), and gradcheck runs backward many times on one "
         "graph. A warning from the probe; an error once a failed check is traced to it.",
         examples=("not_reentrant",), raised=_PROBE, orders=(1,), trusts_forward=True),
    Kind("surrogate_gradient", "error",
         "declare it with @gradtool.surrogate(...) if the surrogate is meant; fix the "
         "backward if it is not",
         "A custom Function's backward is a recognisable surrogate, not the true gradient: "
         "straight-through (of a sign, a rounding, a clamp; or written with detach, "
         "`x + (q(x) - x).detach()`), a pass-through where the forward is flat, a constant "
         "multiple (gradient reversal), the true gradient clipped or masked. Found inside a "
         "target by localisation, it is the target's finding. Declared, it is checked "
         "against what was declared.",
         examples=("straight_through", "gradient_reversal", "clamp_straight_through",
                   "round_pass", "pass_through"),
         raised="gradcheck's gradient_cut step (a straight-through written with detach); "
                "localisation (localize.Localized)", orders=(1,), trusts_forward=True),
    Kind("saved_detached", "info", "save the tensor itself, not a detached copy",
         "A custom Function saves a detached tensor: first derivatives are right, but second "
         "derivatives through it come out as zero. An error when gradgradcheck fails so.",
         examples=("saved_detached",),
         raised="the forward capture (findings.saved_detached), cited by gradcheck's "
                "once_differentiable step"),
    Kind("non_leaf_grad", "warning", "call retain_grad() on it, or read the leaf's .grad",
         ".grad was read on a tensor that is not a leaf: autograd keeps the gradients of "
         "leaves only, so it is None there."),
    Kind("non_finite_grad", "error", "look for a division by zero or sqrt'(0) in backward",
         "A leaf's gradient holds NaN or Inf: a backward formula divides by zero or "
         "overflows. detect_anomaly() names the node that made it."),
    Kind("precision", "warning", "check with float64 inputs and float64 arithmetic",
         "Values are not float64, or a float64 function computes in lower precision inside "
         "(x.float(), the cast named with its line), and gradcheck's tolerances assume "
         "float64: central differences at its eps measure rounding. On a failure the "
         "numerical side is redone in float64, or with the step suited to that precision: if "
         "the Jacobians then agree, precision is the error, not the formula (never a kink or "
         "a wrong formula on that evidence alone; a low-precision kernel is judged against "
         "a reference).",
         examples=("float32", "float32_inside"), trusts_forward=True, from_graph=True),
    Kind("round_off", "error", "check with a larger --eps or without the large offset",
         "The outputs are so large next to the change a step of eps makes (x.sum() + 1e9) "
         "that central differences keep few digits: every mismatch lies within that noise.",
         trusts_forward=True),
    Kind("once_differentiable", "error", "write backward with differentiable ops",
         "gradgradcheck fails and a custom Function's backward is @once_differentiable: it "
         "records no graph, so its result cannot be differentiated again.",
         examples=("once_differentiable",), orders=(2,), trusts_forward=True),
    Kind("backward_detaches", "error", "keep backward's computation in the graph",
         "gradgradcheck fails and a custom Function's backward computes outside autograd "
         "(.detach(), .data, numpy, no_grad), so second derivatives through it are zero.",
         examples=("detached_backward",), raised="gradcheck's once_differentiable step"),
    Kind("non_differentiable_point", "error", "check at a point away from the kink",
         "The mismatch is at a kink (relu or abs at 0, a tie in max): central differences "
         "average the one-sided derivatives, which a five-point stencil names; the analytical "
         "value follows a convention. Info where the check passes at a kink.",
         examples=("kink",), trusts_forward=True),
    Kind("one_branch", "info",
         "give inputs on both sides of the kink, e.g. "
         "@gradtool.example(gradtool.uniform(shape, -2, 2))",
         "Every input of a piecewise op (relu, abs, clamp, where) fell on one side of its "
         "kink: a check of this run exercises one branch only."),
    Kind("vmap_batched", "info",
         "give in_dims=None to an argument every example shares",
         "torch.func.vmap ran a function over a batch: which dim of each argument it "
         "batched, and which arguments every example shares (as read from the run)."),
    Kind("grad_none_for_input", "warning",
         "return the input's gradient, or None only where it is truly 0",
         "A custom Function's backward returns None for an input that requires grad, taken as "
         "a zero gradient: info where central differences give 0 too, else an error.",
         examples=("none_grad",), raised=_PROBE, escalates=True),
    Kind("input_modified_in_forward", "warning", "clone() the input, or ctx.mark_dirty it",
         "The forward modified an input in place without ctx.mark_dirty: each evaluation "
         "starts from another point, so finite differences on that input are meaningless.",
         examples=("mark_dirty",), raised="gradcheck (hazards.modified_inputs)",
         escalates=True),
    Kind("ignores_grad_output", "error", "return grad_output times the local derivative",
         "backward returns the same gradients whatever grad_output is, instead of the "
         "vector-Jacobian product: every mismatch of the check is put down to it.",
         examples=("ignores_grad_output",), raised=f"{_PROBE}; {_STAGES}"),
    Kind("wrong_gradient", "error", "fix the backward formula",
         "What is left when nothing else explains a mismatch: the analytical gradient "
         "differs from central differences where the function is smooth, at the entry named.",
         examples=("wrong_gradient", "complex_conj", "custom_op_backward")),
    Kind("wrong_jvp", "error", "fix the jvp formula",
         "As wrong_gradient, for the Jacobian a custom Function's jvp computes (--mode "
         "forward or both).", examples=("jvp",), raised="gradcheck's wrong_gradient step"),
    Kind("grad_wrong_dtype", "warning", "return a gradient of the input's dtype",
         "A custom Function's backward returns a gradient of another dtype than its input: it "
         "is cast silently (as torch does), and precision lost on the way stays lost.",
         examples=("grad_dtype",), raised=_PROBE, escalates=True),
    Kind("grad_wrong_shape", "warning", "return a gradient of the input's shape",
         "A custom Function's backward returns a gradient of another shape than its input: "
         "one that broadcasts is summed down (as torch does, hiding the mistake), any other "
         "is rejected (error).", examples=("grad_shape",), raised=_PROBE, escalates=True),
    Kind("ctx_stored_tensor", "warning", "use ctx.save_for_backward(...)",
         "A custom Function keeps tensors on ctx: an in-place change to them goes unnoticed, "
         "they outlive backward, and an output kept so holds its own graph alive.",
         examples=("ctx_storage",), raised=_PROBE),
    Kind("nonlinear_in_grad_output", "warning", "return grad_output times the local derivative",
         "backward(2g) is not 2 backward(g): a vector-Jacobian product is linear in the "
         "vector.", raised=f"{_PROBE}; {_STAGES}", escalates=True),
    Kind("nondeterministic_backward", "warning", "make backward deterministic, or pass nondet_tol",
         "Two backward passes with the same grad_output differ (random numbers, a reduction "
         "order that varies): an error where torch's reentrancy check fails.",
         examples=("nondeterministic",), raised=f"{_PROBE}; {_STAGES}", escalates=True),
    Kind("no_jvp", "info", "define the Function's jvp(ctx, *tangents) to check forward mode too",
         "With --mode both, a custom Function on the way defines no jvp, so only the backward "
         "was checked (with --mode forward, a usage error).",
         raised="checks.target._forward_checkable"),
    Kind("wrong_node", "error", "fix that Function's backward (its own check is shown)",
         "Each custom Function call (each op, with --localize all) checked on its own at the "
         "inputs it received, in backward order: the first that fails is to blame.",
         examples=("model_function",), raised="localisation (localize.Localized)"),
    Kind("output_aliases_input", "error",
         "return a new tensor (x.clone()), never an input or a view of one",
         "A custom op's kernel returns one of its inputs, a view of one, or one output twice: "
         "torch refuses it at the call (and opcheck's test_schema fails), since the compiler "
         "assumes a custom op's outputs are fresh memory. The location is the kernel's return.",
         raised=_OPCHECK),
    Kind("undeclared_mutation", "error", "list the argument in mutates_args, or clone() it "
         "before writing",
         "A custom op's kernel changes an input that mutates_args does not name (opcheck's "
         "test_schema): torch.compile would reorder or drop the write, and gradcheck's "
         "evaluations start from another point each time. The location is the write where "
         "the engine knows it, else the kernel.",
         examples=("undeclared_mutation",), raised=_OPCHECK),
    Kind("declared_mutation_unused", "warning", "take the argument out of mutates_args",
         "A custom op declares in mutates_args an argument its kernel never changes: torch "
         "passes it, but the op cannot have an autograd formula (register_autograd refuses "
         "mutable ops) and the compiler copies the tensor for nothing.",
         raised=_OP_PROBE),
    Kind("no_autograd", "error",
         "register a backward with op.register_autograd(backward, setup_context=...)",
         "A custom op is called on an input that requires grad and returns a differentiable "
         "output, but no autograd formula is registered: torch raises at backward (opcheck's "
         "test_aot_dispatch_dynamic fails; for a Library op, test_autograd_registration). "
         "The gradients cannot be checked until one is registered.",
         examples=("no_autograd",), raised=_OPCHECK),
    Kind("no_fake_kernel", "error", "register a fake kernel with @op.register_fake",
         "A custom op that returns tensors has no fake (meta) kernel, so torch.compile, export "
         "and FX tracing cannot run it (opcheck's test_faketensor fails). The fake kernel "
         "computes the outputs' shapes, dtypes and strides from the inputs' alone.",
         raised=_OPCHECK),
    Kind("fake_kernel_mismatch", "error",
         "make the fake kernel return what the real one does (same shape, dtype, strides)",
         "A custom op's fake kernel, run on the same inputs, gives an output of another shape, "
         "dtype or stride than the real kernel (opcheck's test_faketensor): a compiled "
         "program would be built for the wrong tensors. On gradtool's engine the fake kernel "
         "runs on the real inputs (no FakeTensor mode). The location is the fake kernel.",
         examples=("fake_shape",), raised=_OPCHECK),
    Kind("saved_unused", "warning", "save only what backward reads",
         "A custom op's setup_context saves a tensor that its backward never uses: backward's "
         "result is the same whatever that tensor holds. It costs memory until backward; or "
         "the backward forgot a term that needed it.",
         raised=_OP_PROBE),
    Kind("backward_reads_unsaved", "error",
         "save it in setup_context (ctx.save_for_backward, or ctx.name = value)",
         "A custom op's backward reads what setup_context never saved: an attribute of ctx it "
         "never set, or more saved tensors than were saved (an empty ctx.saved_tensors when "
         "setup_context is missing). backward raises.",
         raised=_OP_PROBE),
    Kind("opcheck_failed", "error", "fix what torch's message says",
         "torch.library.opcheck failed a custom op for a reason none of the other kinds names "
         "(the kernel raised on the inputs, or the fake kernel did): torch's message is "
         "shown with the test that failed.",
         raised=_OPCHECK),
    Kind("custom_functions_pass", "info",
         "look at how the Functions are composed, and at built-in ops used outside their "
         "domain",
         "Localisation found every custom Function right on its own: the error is in how they "
         "are composed, or in a built-in op used outside its domain.",
         raised="localisation (localize.Localized)"),
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
             "<!-- Generated from the registry, gradtool/checks/diagnoses.py, by "
             "`.venv/bin/python docs/generate.py`: edit the registry, not this page. -->",
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
