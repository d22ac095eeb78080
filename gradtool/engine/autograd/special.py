"""torch.special's functions (gradtool/engine/special.py is the module under torch's name):
each a row of the op table (derivatives.py, "special functions") or torch's alias of one
(special.expit is sigmoid, special.gammaln lgamma, ...); the functions torch gives no
gradient (bessel_j0, bessel_j1) are values only, as torch's."""
import functools
import inspect
import math
import numbers

import numpy as np

from . import creation, dtypes
from .dispatch import call
from .inplace import call_inplace
from .out_argument import rules_of, written_to
from .ops import derivatives as table
from .ops.kernels import rounded_once
from . import special_functions
from .tensor import Tensor

__all__ = ["i0", "i0e", "i1", "i1e", "gammaln", "digamma", "psi", "polygamma", "multigammaln",
           "erf", "erfc", "erfcx", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit",
           "exp2", "expm1", "log1p", "round", "softmax", "log_softmax", "logsumexp", "sinc",
           "entr", "xlogy", "xlog1py", "zeta", "bessel_j0", "bessel_j1", "spherical_bessel_j0",
           "airy_ai", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
           "chebyshev_polynomial_v", "chebyshev_polynomial_w", "hermite_polynomial_h",
           "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "gammainc",
           "gammaincc"]


def _unary(row, name):
    def fn(input, *, out=None):
        return call(row, (input,))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}: the op table's {row.name!r} row."
    return fn


i0 = _unary(table.I0, "i0")
i0e = _unary(table.SPECIAL_I0E, "i0e")
i1 = _unary(table.SPECIAL_I1, "i1")
i1e = _unary(table.SPECIAL_I1E, "i1e")
gammaln = _unary(table.LGAMMA, "gammaln")
digamma = psi = _unary(table.DIGAMMA, "digamma")
erfc = _unary(table.ERFC, "erfc")
erfcx = _unary(table.SPECIAL_ERFCX, "erfcx")
erfinv = _unary(table.ERFINV, "erfinv")
ndtri = _unary(table.SPECIAL_NDTRI, "ndtri")
log_ndtr = _unary(table.SPECIAL_LOG_NDTR, "log_ndtr")
sinc = _unary(table.SINC, "sinc")
entr = _unary(table.SPECIAL_ENTR, "entr")


def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma (n = 0: digamma itself)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return call(table.POLYGAMMA, (input,), (int(n),))


def multigammaln(input, p, *, out=None):
    """log of the multivariate gamma function of dimension p (torch.mvlgamma)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError("mvlgamma is not implemented for "
                           f"{dtypes.LEGACY_TYPE_NAMES[input._data.dtype.name]}")
    return call(table.MVLGAMMA, (input,), (int(p),))


def ndtr(input, *, out=None):
    """The standard normal distribution function, (1 + erf(x / sqrt 2)) / 2 as torch composes
    it (its last node MulBackward1)."""
    x = input if input._data.dtype.kind in "fV" else input.to(
        dtypes.from_numpy_dtype(dtypes.DEFAULT_FLOAT))
    return call(table.MUL_SCALAR, ((x * math.sqrt(0.5)).erf() + 1,), (0.5,))


def _binary(tensors, numbers_first, numbers_second, name):
    """A two-input special function: a number on either side has its own row (torch's Scalar
    overloads); two numbers are refused as torch's."""
    def fn(input, other, *, out=None):
        if isinstance(input, Tensor) and isinstance(other, Tensor):
            return call(tensors, (input, other))
        if isinstance(other, Tensor) and isinstance(input, numbers.Number):
            return call(numbers_first, (other,), (input,))
        if isinstance(input, Tensor) and isinstance(other, numbers.Number):
            return call(numbers_second, (input,), (other,))
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    fn.__name__ = fn.__qualname__ = name
    return fn


xlogy = _binary(table.XLOGY, table.XLOGY_SCALAR_SELF, table.XLOGY_SCALAR_OTHER, "xlogy")
xlog1py = _binary(table.SPECIAL_XLOG1PY, table.SPECIAL_XLOG1PY_SCALAR_SELF,
                  table.SPECIAL_XLOG1PY_SCALAR_OTHER, "special_xlog1py")
zeta = _binary(table.SPECIAL_ZETA, table.SPECIAL_ZETA_SCALAR_SELF,
               table.SPECIAL_ZETA_SCALAR_OTHER, "special_zeta")


def gammainc(input, other, *, out=None):
    """The regularized lower incomplete gamma function P(input, other) (torch.igamma)."""
    return call(table.IGAMMA, (input, other))


def gammaincc(input, other, *, out=None):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P (torch.igammac)."""
    return call(table.IGAMMAC, (input, other))


def _without_gradient(kernel, name):
    """A function torch gives no derivative: its value, recording nothing (so requiring no
    grad, as torch's result)."""
    rounded = rounded_once(kernel)

    def fn(input, *, out=None):
        data = input._data
        if data.dtype.kind == "c":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                      f"'{dtypes.LEGACY_TYPE_NAMES[data.dtype.name]}'")
        if data.dtype.kind not in "fV":
            data = data.astype(dtypes.DEFAULT_FLOAT)
        with np.errstate(all="ignore"):  # (beyond float32's range: inf, as torch's)
            return creation.tensor(np.asarray(rounded(data)).astype(data.dtype, copy=False))
    fn.__name__ = fn.__qualname__ = name
    return fn


bessel_j0 = _without_gradient(special_functions.bessel_j0, "bessel_j0")
bessel_j1 = _without_gradient(special_functions.bessel_j1, "bessel_j1")
spherical_bessel_j0 = _without_gradient(special_functions.spherical_bessel_j0,
                                        "spherical_bessel_j0")
airy_ai = _without_gradient(special_functions.airy_ai, "airy_ai")
bessel_y0 = _without_gradient(special_functions.bessel_y0, "bessel_y0")
bessel_y1 = _without_gradient(special_functions.bessel_y1, "bessel_y1")
# (torch's modified_bessel_i0/i1 are i0's and i1's series, with no gradient)
modified_bessel_i0 = _without_gradient(special_functions.i0, "modified_bessel_i0")
modified_bessel_i1 = _without_gradient(special_functions.i1, "modified_bessel_i1")
modified_bessel_k0 = _without_gradient(special_functions.modified_bessel_k0,
                                       "modified_bessel_k0")
modified_bessel_k1 = _without_gradient(special_functions.modified_bessel_k1,
                                       "modified_bessel_k1")
scaled_modified_bessel_k0 = _without_gradient(special_functions.scaled_modified_bessel_k0,
                                              "scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _without_gradient(special_functions.scaled_modified_bessel_k1,
                                              "scaled_modified_bessel_k1")


def _polynomial(name, degree_fn):
    """A polynomial of degree n in x, either a tensor or a number (n cut to an integer, as
    torch's); the result's dtype is the two's (the default float for integers), recording
    nothing (torch gives these no derivative). `degree_fn(x, n, low_precision)`."""
    def fn(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(n).__name__})")
        dtype = dtypes.result_type(input, n)
        dtype = dtype if dtype.kind in "fV" else dtypes.DEFAULT_FLOAT
        x, degree = (np.asarray(v._data if isinstance(v, Tensor) else v, np.float64)
                     for v in (input, n))
        with np.errstate(invalid="ignore"):
            degree = np.where(np.isfinite(degree), degree, -1).astype(np.int64)
        low = dtype != np.float64
        values = np.frompyfunc(lambda a, k: degree_fn(a, int(k), low), 2, 1)(x, degree)
        with np.errstate(all="ignore"):  # (beyond float32's range: inf, as torch's)
            return creation.tensor(np.asarray(values, np.float64).astype(dtype))
    fn.__name__ = fn.__qualname__ = name
    return fn


for _name, _fn in special_functions.POLYNOMIALS.items():
    globals()[_name] = _polynomial(_name, lambda a, k, low, f=_fn: f(a, k))
# (torch returns NaN past degree 512, 128 in float32: its recurrence's own limit)
hermite_polynomial_h = _polynomial(
    "hermite_polynomial_h", lambda a, k, low: special_functions.hermite_h(a, k, 128 if low else
                                                                          512))
hermite_polynomial_he = _polynomial(
    "hermite_polynomial_he", lambda a, k, low: special_functions.hermite_he(a, k, 128 if low
                                                                            else 512))


# ---- torch's aliases of ops the engine has under their own names ----
def erf(input, *, out=None):
    return input.erf()


def expit(input, *, out=None):
    return input.sigmoid()


def exp2(input, *, out=None):
    return input.exp2()


def expm1(input, *, out=None):
    return input.expm1()


def log1p(input, *, out=None):
    return input.log1p()


def logit(input, eps=None, *, out=None):
    return input.logit(eps)


def round(input, *, decimals=0, out=None):
    """(torch.special.round is round.decimals, RoundBackward1, decimals=0 too)"""
    return call(table.ROUND_DECIMALS, (input,), (decimals,))


def softmax(input, dim, *, dtype=None):
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input, dim, *, dtype=None):
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return input.logsumexp(dim, keepdim)


class SpecialTensorMethods:
    """Tensor.polygamma(n), Tensor.mvlgamma(p), Tensor.xlogy(other), Tensor.igamma(other),
    Tensor.igammac(other)."""

    def igamma(self, other):
        return gammainc(self, other)

    def igammac(self, other):
        return gammaincc(self, other)

    def polygamma(self, n):
        return polygamma(n, self)

    def polygamma_(self, n):
        if n < 0:
            raise RuntimeError("polygamma(n, x) does not support negative n.")
        return call_inplace(table.POLYGAMMA_, (self,), (int(n),))

    def mvlgamma(self, p):
        return multigammaln(self, p)

    def xlogy(self, other):
        return xlogy(self, other)

    def xlogy_(self, other):
        if isinstance(other, Tensor):
            return call_inplace(table.XLOGY, (self, other))
        return call_inplace(table.XLOGY_SCALAR_OTHER, (self,), (other,))


def _writing_out(fn):
    """fn with torch's out= (out_argument.written_to), one wrapper for every function here."""
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        return written_to(out, fn(*args, **kwargs), fn.__name__, rules_of(fn.__name__))
    return with_out


for _name in __all__:
    if "out" in inspect.signature(globals()[_name]).parameters:
        globals()[_name] = _writing_out(globals()[_name])
