"""Telling a non-differentiable point from a wrong gradient.

At a kink (relu at 0, abs at 0, a tie in max) the one-sided derivatives differ and central
differences report their average, which no analytical convention need match. Five points
f(x + s h), s = -2..2, tell the cases apart:
  L1, R1  first-order one-sided derivatives: differ at a kink, or where h * f'' is large;
  L2, R2  second-order one-sided derivatives, and C vs the five-point central F5: agree
          (to O(h^2)) wherever f is smooth over [x - 2h, x + 2h], and not across a kink.
So an entry is a kink when L1 != R1 and (L2 != R2 or F5 != C)."""
import numpy as np

from .wording import count

MAX_PROBED_ELEMENTS = 8  # per input: each costs 5 evaluations of func


def one_sided(values, h):
    """Derivative estimates from the five-point stencil values {s: f(x + s h)} (arrays)."""
    f = values
    return {
        "left": (f[0] - f[-1]) / h,
        "right": (f[1] - f[0]) / h,
        "left2": (3 * f[0] - 4 * f[-1] + f[-2]) / (2 * h),
        "right2": (-3 * f[0] + 4 * f[1] - f[2]) / (2 * h),
        "central": (f[1] - f[-1]) / (2 * h),
        "five_point": (-f[2] + 8 * f[1] - 8 * f[-1] + f[-2]) / (12 * h),
    }


def classify(d, analytical, atol, rtol):
    """For each output element of one input element's stencil estimates `d`: whether it is
    a kink, and where the analytical value sits relative to the one-sided derivatives."""
    left, right = d["left"], d["right"]
    tol = atol + rtol * np.maximum(np.abs(left), np.abs(right))
    kink = (np.abs(right - left) > tol) & ((np.abs(d["right2"] - d["left2"]) > tol) |
                                          (np.abs(d["five_point"] - d["central"]) > tol))
    lo, hi = np.minimum(left, right), np.maximum(left, right)
    side = np.where(np.abs(analytical - left) <= tol, "left",
                    np.where(np.abs(analytical - right) <= tol, "right",
                             np.where((analytical >= lo - tol) & (analytical <= hi + tol),
                                      "between", "outside")))
    return kink, side


def describe(points):
    """One sentence for a list of kink points (dicts made by the caller)."""
    p = points[0]
    where = (f"input {p['input_index']} element {list(p['input_element'])} "
             f"(output {p['output_index']} element {list(p['output_element'])})")
    side = {"left": "equals the left derivative", "right": "equals the right derivative",
            "between": "lies between them (a subgradient)",
            "outside": "lies outside them, so the formula may be wrong as well"}[p["side"]]
    more = (f" ({count(len(points) - 1, 'entry', grouped=False).replace(' ', ' more such ', 1)})"
            if len(points) > 1 else "")
    return (f"the mismatch is at a non-differentiable point: at {where} the left derivative "
            f"is {p['left']:.6g} and the right derivative {p['right']:.6g}; central "
            f"differences give their average {p['numerical']:.6g}, while the analytical "
            f"value {p['analytical']:.6g} {side}{more}. The gradient is defined there only "
            f"by convention; check at a point away from the kink.")
