"""torch.testing on the engine: assert_close, with the default tolerances of the dtype and
torch's messages. (gradtool.testing adds the tool's gradient assertions to it.)"""
import cmath
import collections.abc

import numpy as np

from .autograd.tensor import Tensor
from .errors import missing_attribute

__all__ = ["assert_close", "assert_allclose"]

# torch.testing's default (rtol, atol) by dtype; other dtypes (ints, bool) compare exactly
_DEFAULT_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
                       "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
                       "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: "int64", float: "float64"}


class _Mismatch(Exception):
    """A failed comparison: the exception type and torch's message for it."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """torch.testing.assert_close: tensors (or numpy arrays), numbers, and sequences or
    mappings of them, compared element-wise with |actual - expected| <= atol + rtol *
    |expected|. rtol and atol default to the dtype's (float32: 1.3e-6 and 1e-5, float64: 1e-7
    and 1e-7, integers and bool: exact); give both or neither. Raises AssertionError with
    torch's message; `msg` replaces it (a string) or rewrites it (a callable). check_device,
    check_layout and check_stride are accepted and not compared (one device, one layout)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    try:
        _compare(actual, expected, (), dict(
            allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
            check_dtype=check_dtype))
    except _Mismatch as e:
        message = str(e)
        if e.kind is AssertionError and msg is not None:
            message = msg(message) if callable(msg) else msg
        raise e.kind(message) from None


def _compare(actual, expected, path, opts):
    """Compare recursively; `path` is the item's place in nested sequences and mappings."""
    if _is_tensor_like(actual) or _is_tensor_like(expected):
        return _compare_tensors(actual, expected, path, opts)
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) is not bool(expected):
            _fail(f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", path)
        return None
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, path, opts)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                  path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), opts)
        return None
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected,
                                                                  collections.abc.Mapping):
        if set(actual) != set(expected):
            missing = sorted(set(expected) - set(actual), key=repr)
            extra = sorted(set(actual) - set(expected), key=repr)
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual "
                  f"mapping: {missing}\nAdditional keys in the actual mapping: {extra}", path)
        for key in actual:
            _compare(actual[key], expected[key], path + (key,), opts)
        return None
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.")


def _is_tensor_like(x):
    return isinstance(x, (Tensor, np.ndarray))


def _is_number(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, bytes))


def _fail(message, path, kind=AssertionError):
    if path:  # torch names the item of a nested structure that failed
        message += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    raise _Mismatch(kind, message)


def _compare_tensors(actual, expected, path, opts):
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or (not opts["allow_subclasses"] and type(actual) is not type(expected)):
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                                   f"{type(actual)} and {type(expected)}.")
    a, e = _array(actual), _array(expected)
    if a.shape != e.shape:
        _fail(f"The values for attribute 'shape' do not match: {_shape(actual)} != "
              f"{_shape(expected)}.", path)
    if opts["check_dtype"] and a.dtype != e.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {_dtype(actual)} != "
              f"{_dtype(expected)}.", path)
    rtol, atol = opts["rtol"], opts["atol"]
    if rtol is None:  # the looser of the two dtypes' defaults, as torch
        rtol = max(_DEFAULT_TOLERANCES.get(x.dtype.name, (0.0, 0.0))[0] for x in (a, e))
        atol = max(_DEFAULT_TOLERANCES.get(x.dtype.name, (0.0, 0.0))[1] for x in (a, e))
    common = np.promote_types(a.dtype, e.dtype)
    if common.kind in "biu":  # integer differences cannot overflow in int64
        common = np.dtype(np.int64)
    a, e = a.astype(common), e.astype(common)
    with np.errstate(all="ignore"):
        diff = np.abs(a - e)
        close = (a == e) | (np.isfinite(diff) & (diff <= atol + rtol * np.abs(e)))
        if opts["equal_nan"]:
            close |= np.isnan(a) & np.isnan(e)
        if close.all():
            return
        if a.ndim == 0:  # a 0-d tensor is reported as a scalar, as torch does
            _fail(_scalar_message(a.item(), e.item(), rtol, atol), path)
        diff[close] = 0
        # torch divides in the floating dtype of the operands (float32 for integer tensors)
        floating = common if common.kind in "fV" else np.dtype(
            np.float64 if common.kind == "c" else np.float32)
        rel = diff.astype(floating) / np.abs(e).astype(floating)
        rel[close] = 0
    n, bad = close.size, int((~close).sum())
    abs_at, rel_at = _nan_argmax(diff), _nan_argmax(rel)
    lines = [f"Mismatched elements: {bad} / {n} ({bad / n:.1%})",
             _diff_line("Greatest absolute difference", diff.flat[abs_at].item(),
                        np.unravel_index(abs_at, a.shape), atol, rtol, atol),
             _diff_line("Greatest relative difference", rel.flat[rel_at].item(),
                        np.unravel_index(rel_at, a.shape), rtol, rtol, atol)]
    _fail(f"Tensor-likes are not {_verb(rtol, atol)}!\n\n" + "\n".join(lines), path)


def _nan_argmax(values):
    """torch.max's index: the first NaN if there is one, else the first largest."""
    flat = values.ravel()
    nans = np.flatnonzero(np.isnan(flat))
    return int(nans[0]) if nans.size else int(np.argmax(flat))


def _diff_line(what, value, index, tol, rtol, atol):
    index = tuple(int(i) for i in index)
    line = f"{what}: {value} at index {index}"
    return line if rtol == 0 and atol == 0 else line + f" (up to {tol} allowed)"


def _verb(rtol, atol):
    return "equal" if rtol == 0 and atol == 0 else "close"


def _compare_numbers(actual, expected, path, opts):
    kinds = (_NUMBER_DTYPES[_number_type(actual)], _NUMBER_DTYPES[_number_type(expected)])
    if opts["check_dtype"] and kinds[0] != kinds[1]:
        _fail(f"The (d)types do not match: {_number_type(actual)} != "
              f"{_number_type(expected)}.", path)
    rtol, atol = opts["rtol"], opts["atol"]
    if rtol is None:
        rtol = max(_DEFAULT_TOLERANCES.get(k, (0.0, 0.0))[0] for k in kinds)
        atol = max(_DEFAULT_TOLERANCES.get(k, (0.0, 0.0))[1] for k in kinds)
    if opts["equal_nan"] and cmath.isnan(actual) and cmath.isnan(expected):
        return
    if actual == expected:
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    _fail(_scalar_message(actual, expected, rtol, atol), path)


def _number_type(x):
    return int if isinstance(x, (int, np.integer)) else float


def _scalar_message(actual, expected, rtol, atol):
    diff = abs(actual - expected)
    rel = float("inf") if expected == 0 else diff / abs(expected)
    equal = rtol == 0 and atol == 0
    tail = (lambda tol: "") if equal else (lambda tol: f" (up to {tol} allowed)")
    return (f"Scalars are not {_verb(rtol, atol)}!\n\nExpected {expected} but got {actual}.\n"
            f"Absolute difference: {diff}{tail(atol)}\nRelative difference: {rel}{tail(rtol)}")


def _array(x):
    return x.detach().numpy() if isinstance(x, Tensor) else np.asarray(x)


def _shape(x):
    return repr(x.shape) if isinstance(x, Tensor) else repr(tuple(x.shape))


def _dtype(x):
    return repr(x.dtype) if isinstance(x, Tensor) else f"numpy.{x.dtype.name}"


__getattr__ = missing_attribute(__name__)  # a torch.testing name gradtool lacks: a clear error


# assert_allclose's default (rtol, atol) by dtype (its own: looser than assert_close's)
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5),
                        "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated (torch warns the same): assert_close with expected made a tensor of
    actual's dtype, dtypes not compared, NaNs equal, and the tolerances of the less precise
    dtype of the two (float32: 1e-4 and 1e-5, float64: 1e-5 and 1e-8, others exact)."""
    import warnings
    from .autograd.creation import tensor
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    __tracebackhide__ = True
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(t._data.dtype.name, (0.0, 0.0))
                 for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_dtype=False, msg=msg or None)
