"""repr(tensor) laid out as torch lays it out (torch/_tensor_str.py): 4 decimals, scientific
notation when magnitudes span more than 1000x, integer-valued floats as `1.`, 80 columns."""
import math

import numpy as np

from . import forward_ad, forward_level

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3
SCI_MODE = None  # None: the values decide; True, False: set_printoptions(sci_mode=)'s choice
_DEFAULT_DTYPES = ("float32", "int64", "bool", "complex64")
# torch's profiles: (precision, threshold, edgeitems, linewidth)
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions: a profile first, then the options given; sci_mode is always
    set (None gives the choice back to the values), as torch's."""
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH, SCI_MODE
    if profile is not None:
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = _PROFILES[profile]
    PRECISION = PRECISION if precision is None else precision
    THRESHOLD = THRESHOLD if threshold is None else threshold
    EDGEITEMS = EDGEITEMS if edgeitems is None else edgeitems
    LINEWIDTH = LINEWIDTH if linewidth is None else linewidth
    SCI_MODE = sci_mode


class _Formatter:
    def __init__(self, values):
        self.floating = values.dtype.kind in "fV"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.ravel()
        if not self.floating:
            self.width = max((len(str(v)) for v in flat.tolist()), default=1)
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:  # all zeros, nan or inf: torch keeps width 1
            return
        # (Python floats: 1e308 / 1e-308 is inf, not numpy's overflow warning)
        lo, hi = float(np.abs(finite).min()), float(np.abs(finite).max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        # (tiny magnitudes switch to scientific notation only for non-integer values)
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4)
        if SCI_MODE is not None:
            self.sci_mode = SCI_MODE
        fmt = (f"{{:.{PRECISION}e}}" if self.sci_mode else
               "{:.0f}." if self.int_mode else f"{{:.{PRECISION}f}}")
        self.width = max(len(fmt.format(v)) for v in finite.tolist())

    def format(self, value):
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRECISION}f}"
        return " " * (self.width - len(text)) + text


class _ComplexFormatter:
    """torch's two formatters, one for the real parts and one for the imaginary parts."""

    def __init__(self, values):
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.width = self.real.width + self.imag.width + 1

    def format(self, value):
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _shown(n, summarize):
    """The indices of the n items printed, None where torch prints "..." instead of the
    middle ones."""
    if summarize and n > 2 * EDGEITEMS:
        return [*range(EDGEITEMS), None, *range(n - EDGEITEMS, n)]
    return range(n)


def _vector(values, indent, summarize, fmt):
    per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
    items = values.tolist()
    data = [" ..." if i is None else fmt.format(items[i]) for i in _shown(len(items), summarize)]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values, indent, summarize, fmt):
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, fmt)
    rows = ["..." if i is None else _nested(values[i], indent + 1, summarize, fmt)
            for i in _shown(values.shape[0], summarize)]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _summarized(values):
    """Only the elements that will be shown, so the formatter sizes columns for them."""
    if values.shape[0] > 2 * EDGEITEMS:
        values = np.concatenate([values[:EDGEITEMS], values[-EDGEITEMS:]])
    return np.stack([_summarized(v) for v in values]) if values.ndim > 1 else values


def array_str(values, indent):
    summarize = values.size > THRESHOLD
    shown = _summarized(values) if summarize else values
    fmt = (_ComplexFormatter if values.dtype.kind == "c" else _Formatter)(shown)
    return _nested(values, indent, summarize, fmt)


def tensor_repr(t, prefix="tensor("):
    values = t._data
    indent = len(prefix)
    suffixes = []
    # as torch: an empty tensor names its size (unless 1-d) and every dtype but float32
    if values.size == 0 and values.ndim != 1:
        suffixes.append(f"size={tuple(values.shape)}")
    if values.dtype.name not in (_DEFAULT_DTYPES if values.size else ("float32",)):
        suffixes.append(f"dtype={t.dtype}")
    body = array_str(values, indent) if values.size else "[]"
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    tangent = forward_ad.tangent_of(t) if forward_level.active is not None else None
    if tangent is not None:
        suffixes.append(f"tangent={tensor_repr(tangent)}")
    return _with_suffixes(prefix + body, suffixes, indent)


def _with_suffixes(text, suffixes, indent):
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
