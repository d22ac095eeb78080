"""Diagnosis: one finding of inspect's diagnostics or of gradcheck, with one set of
snake_case kinds for both: KINDS, the registry (usual severity, advice, where documented)."""
import dataclasses
from typing import Optional

SEVERITIES = ("error", "warning", "info")


@dataclasses.dataclass(frozen=True)
class Kind:
    severity: str     # the usual one (a check's outcome may raise or lower it)
    advice: str       # one line: what to do about it
    documented: str   # where a user reads about it: README.md, or the example that provokes it


_README = "README.md"
KINDS = {
    # inspect (and the forward capture gradcheck starts from)
    "output_no_grad": Kind("warning", "check grad modes, detach() and the inputs' requires_grad",
                           _README),
    "input_no_grad": Kind("warning", "check that the output really depends on it", _README),
    "gradient_cut": Kind("warning", "keep the value in the graph (no .item(), .detach(), numpy or "
                                    "no_grad on the way to the output)",
                         "examples/broken_gradient_cut.py"),
    "saved_modified_in_place": Kind("error", "use the out-of-place op or clone() first",
                                    _README),
    "backward_failed": Kind("error", "fix the cause above", _README),
    "saved_detached": Kind("info", "save the tensor itself, not a detached copy",
                           "examples/broken_saved_detached.py"),
    "non_leaf_grad": Kind("warning", "call retain_grad() on it, or read the leaf's .grad",
                          _README),
    "non_finite_output": Kind("error", "keep the op inside its domain (log of > 0, sqrt of >= 0)",
                              _README),
    "non_finite_grad": Kind("error", "look for a division by zero or sqrt'(0) in backward",
                            _README),
    "precision": Kind("warning", "check with float64 inputs and float64 arithmetic",
                      "examples/broken_float32.py"),
    "one_branch": Kind("info", "give inputs on both sides of the kink, e.g. "
                               "@gradtool.example(gradtool.uniform(shape, -2, 2))", _README),
    # gradcheck: why a check fails
    "wrong_gradient": Kind("error", "fix the backward formula", "examples/broken_wrong_gradient.py"),
    "wrong_jvp": Kind("error", "fix the jvp formula", "examples/broken_jvp.py"),
    "no_jvp": Kind("info", "define the Function's jvp(ctx, *tangents) to check forward mode too",
                   _README),
    "round_off": Kind("error", "check with a larger --eps or without the large offset", _README),
    "non_differentiable_point": Kind("error", "check at a point away from the kink",
                                     "examples/broken_kink.py"),
    "nondeterministic_backward": Kind("warning", "make backward deterministic, or pass "
                                                 "nondet_tol", "examples/broken_nondeterministic.py"),
    "ignores_grad_output": Kind("error", "return grad_output times the local derivative",
                                "examples/broken_ignores_grad_output.py"),
    "nonlinear_in_grad_output": Kind("warning", "return grad_output times the local derivative",
                                     _README),
    "grad_none_for_input": Kind("warning", "return the input's gradient, or None only where it is "
                                           "truly 0", "examples/broken_none_grad.py"),
    "grad_wrong_dtype": Kind("warning", "return a gradient of the input's dtype",
                             "examples/broken_grad_dtype.py"),
    "grad_wrong_shape": Kind("warning", "return a gradient of the input's shape",
                             "examples/broken_grad_shape.py"),
    "ctx_stored_tensor": Kind("warning", "use ctx.save_for_backward(...)",
                              "examples/broken_ctx_storage.py"),
    "input_modified_in_forward": Kind("warning", "clone() the input, or ctx.mark_dirty it",
                                      "examples/broken_mark_dirty.py"),
    "once_differentiable": Kind("error", "write backward with differentiable ops",
                                "examples/broken_once_differentiable.py"),
    "backward_detaches": Kind("error", "keep backward's computation in the graph",
                              "examples/broken_detached_backward.py"),
    "random_forward": Kind("error", "fix the seed inside the function, or draw the noise once "
                                    "outside it", "examples/broken_random_forward.py"),
    "backward_not_reentrant": Kind("error", "compute out of place in backward (grad = grad * "
                                            "grad_output, not grad *= grad_output)",
                                   "examples/broken_not_reentrant.py"),
    "surrogate_gradient": Kind("error", "if the surrogate is meant, declare it with "
                                        "@gradtool.surrogate(...)",
                               "examples/broken_straight_through.py"),
    # gradcheck: where it goes wrong
    "wrong_node": Kind("error", "fix that Function's backward (its own check is shown)",
                       "examples/broken_model_function.py"),
    "custom_functions_pass": Kind("info", "look at how the Functions are composed, and at "
                                          "built-in ops used outside their domain", _README),
}


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
        assert self.kind in KINDS, f"{self.kind!r}: add it to diagnosis.KINDS"
        if not self.advice:
            self.advice = KINDS[self.kind].advice
