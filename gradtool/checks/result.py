"""GradcheckReport: everything one gradcheck found, for the CLI to print and report/json.py to
dump.

Jacobians are kept in torch's layout (the one its error messages print): one row per input
element, one column per output element."""
import math
from dataclasses import dataclass, field

import numpy as np

from .diagnoses import Diagnosis  # noqa: F401  (checks' findings are Diagnoses)

MAX_DIFFERING = 50     # differing entries kept per pair (the worst); n_differing counts all


@dataclass
class Failure:
    """One failed check, worded as torch words it (GradcheckError shows the first one)."""
    kind: str
    message: str
    output_index: int = None
    input_index: int = None


@dataclass
class PairResult:
    """The comparison of one (differentiable output, input requiring grad) pair.

    Indices count differentiable outputs and inputs requiring grad, as torch's messages do;
    `*_position` is the place in the function's inputs / outputs tuple."""
    output_index: int
    input_index: int
    output_position: int
    input_position: int
    mode: str                        # "full" (whole Jacobians) or "fast" (random projections)
    passed: bool
    max_abs_error: float
    max_rel_error: float
    worst: dict = None               # the entry with the largest absolute error
    # (the Jacobians and lists stay out of repr: a report printed in a notebook was kilobytes)
    numerical: np.ndarray = field(default=None, repr=False)  # full mode: (input numel, output
    analytical: np.ndarray = field(default=None, repr=False)  # numel), float64
    differing: list = field(default_factory=list, repr=False)  # the MAX_DIFFERING most differing
    n_differing: int = 0             # all of them (the JSON says how many it leaves out)
    projections: list = field(default_factory=list, repr=False)  # fast mode: one per projection
    recheck: "PairResult" = None     # fast mode: this pair redone in full mode
    ad: str = "reverse"              # the analytical side: "reverse" (backward) or "forward" (jvp)


@dataclass
class GradcheckReport:
    """The outcome of gradcheck / gradgradcheck: `passed` is torch's verdict; `pairs`,
    `failures` and `diagnoses` say where and why."""
    order: int
    mode: str
    options: dict
    inputs: list                     # one dict per input: position, label, shape, dtype, ...
    outputs: list
    pairs: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    diagnoses: list = field(default_factory=list)
    evaluations: dict = field(default_factory=dict)  # calls of func, by phase, and "total"
    exception: BaseException = None  # an error raised by the user's code (torch lets it out)
    declared: str = None             # the surrogate gradient checked instead of the true one
    localized: object = None         # checks.localize.Localized: the first wrong node, if any

    @property
    def passed(self):
        return not self.failures and self.exception is None

    def input_label(self, pair):
        """The name of pair's input (the user's parameter, or gradgradcheck's `grad of ...`)."""
        return _label(self.inputs, pair.input_position, f"input {pair.input_index}")

    def output_label(self, pair):
        """The name of pair's output (gradgradcheck's: `grad w.r.t. x`)."""
        return _label(self.outputs, pair.output_position, f"output {pair.output_index}")

    def diagnoses_of(self, kind):
        return [d for d in self.diagnoses if d.kind == kind]

    def message(self):
        """The text of the GradcheckError: torch's message for the first failure, then every
        diagnosis that explains it."""
        head = (self.failures[0].message if self.failures else
                f"{type(self.exception).__name__}: {self.exception}" if self.exception else
                "gradcheck passed")
        lines = [f"  - [{d.severity}] {d.kind}: {d.message}" for d in self.diagnoses
                 if d.severity != "info"]
        if lines:
            head = head.rstrip("\n") + "\n\ngradtool diagnosis:\n" + "\n".join(lines) + "\n"
        return head


def compare(numerical, analytical, atol, rtol):
    """analytical against numerical under torch.allclose's rule |a - n| <= atol + rtol * |n|:
    (passed, max abs error, max rel error, violation per entry). violation is
    |a - n| / (atol + rtol * |n|), 0 where they are equal, inf where either is NaN; an entry
    differs when it is > 1.
    The relative error leaves out entries where numerical is 0."""
    diff = np.abs(analytical - numerical)
    with np.errstate(divide="ignore", invalid="ignore"):  # atol = rtol = 0 is allowed
        violation = diff / (atol + rtol * np.abs(numerical))
    violation[diff == 0] = 0  # equal entries never differ, whatever the tolerances
    violation[np.isnan(violation)] = np.inf
    nonzero = numerical != 0
    rel = diff[nonzero] / np.abs(numerical[nonzero])
    max_abs = math.nan if np.isnan(diff).any() else float(np.max(diff, initial=0.0))
    max_rel = math.nan if np.isnan(rel).any() else float(np.max(rel, initial=0.0))
    return not (violation > 1).any(), max_abs, max_rel, violation


def worst_index(numerical, analytical):
    """The flat index of the entry with the largest absolute error (NaN counts as worst): the
    report's "worst element", and the entry the heatmaps ring. None for an empty Jacobian."""
    abs_error = np.nan_to_num(np.abs(analytical - numerical), nan=np.inf)
    return int(np.argmax(abs_error)) if abs_error.size else None


def entry(flat, jac_shape, input_shape, output_shape, numerical, analytical):
    """A Jacobian entry (flat index into the (n_in, n_out) matrix) as a readable dict."""
    k, m = np.unravel_index(flat, jac_shape)
    return {"input_element": element_index(k, input_shape),
            "output_element": element_index(m, output_shape),
            "numerical": float(numerical.flat[flat]), "analytical": float(analytical.flat[flat])}


def element_index(flat, shape):
    """A flat (C-order) index as the index tuple of an element of a tensor of `shape`."""
    shape = tuple(shape)
    return tuple(int(i) for i in np.unravel_index(int(flat), shape)) if shape else ()


def _label(described, position, default):
    return next((x.get("label") for x in described if x.get("position") == position),
                None) or default
