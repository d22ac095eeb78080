"""torch's elementwise functions beyond arithmetic: logaddexp, logaddexp2, hypot, copysign,
nextafter, fmax, fmin, ldexp, frexp, heaviside, nan_to_num (rows of the op table), and
float_power, signbit, gcd, lcm (composites, and integer results outside the graph). Tensor
methods in ElementwiseTensorMethods, with the in-place twins torch has; torch.<name> for each
is the method (namespace.py)."""
import collections
import numbers

import numpy as np

from . import dtypes
from .dispatch import call
from .inplace import call_inplace
from .ops import derivatives as table
from .tensor import Tensor, _as_tensor

FrexpResult = collections.namedtuple("frexp", ["mantissa", "exponent"])


def _integers_only(name, fn):
    """gcd and lcm: numpy's on integer tensors (torch refuses others), promoted as torch."""
    def method(self, other):
        other = _as_tensor(other)
        dtype = dtypes.result_type(self._data, other._data)
        if dtype.kind not in "iu":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                      f"'{dtypes.LEGACY_TYPE_NAMES[dtype.name]}'")
        return Tensor._wrap(np.asarray(fn(self._data, other._data)).astype(dtype))

    def in_place(self, other):
        return self.copy_(method(self, other))
    return method, in_place


class ElementwiseTensorMethods:
    def logaddexp(self, other):
        return call(table.LOGADDEXP, (self, _as_tensor(other)))

    def logaddexp2(self, other):
        return call(table.LOGADDEXP2, (self, _as_tensor(other)))

    def hypot(self, other):
        return call(table.HYPOT, (self, _as_tensor(other)))

    def hypot_(self, other):
        return call_inplace(table.HYPOT, (self, _as_tensor(other)))

    def nextafter(self, other):
        return call(table.NEXTAFTER, (self, _as_tensor(other)))

    def nextafter_(self, other):
        return call_inplace(table.NEXTAFTER, (self, _as_tensor(other)))

    def copysign(self, other):
        if isinstance(other, Tensor):
            return call(table.COPYSIGN, (self, other))
        return call(table.COPYSIGN_SCALAR, (self,), (other,))

    def copysign_(self, other):
        if isinstance(other, Tensor):
            return call_inplace(table.COPYSIGN, (self, other))
        return call_inplace(table.COPYSIGN_SCALAR, (self,), (other,))

    def fmax(self, other):
        return call(table.FMAX, (self, _as_tensor(other)))

    def fmin(self, other):
        return call(table.FMIN, (self, _as_tensor(other)))

    def ldexp(self, other):
        return call(table.LDEXP, (self, _exponent(other)))

    def ldexp_(self, other):
        return call_inplace(table.LDEXP, (self, _exponent(other)))

    def frexp(self):
        if self._data.dtype.kind not in "fV":
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        return FrexpResult(*call(table.FREXP, (self,)))

    def heaviside(self, values):
        if self._data.dtype != values._data.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different "
                               "dtypes.")
        return call(table.HEAVISIDE, (self, values))

    def heaviside_(self, values):
        if self._data.dtype != values._data.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different "
                               "dtypes.")
        return call_inplace(table.HEAVISIDE, (self, values))

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return call(table.NAN_TO_NUM, (self,), (nan, posinf, neginf))

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return call_inplace(table.NAN_TO_NUM, (self,), (nan, posinf, neginf))

    def float_power(self, exponent):
        """pow in float64 (complex128 for complex operands), whatever the inputs' dtypes."""
        wide = _float_power_dtype(self, exponent)
        if isinstance(exponent, Tensor):
            exponent = exponent.to(wide)
        return self.to(wide).pow(exponent)

    def float_power_(self, exponent):
        wide = _float_power_dtype(self, exponent)
        if self.dtype != wide:
            raise RuntimeError(f"the base given to float_power_ has dtype "
                               f"{dtypes.LEGACY_TYPE_NAMES[self._data.dtype.name]} but the "
                               f"operation's result requires dtype "
                               f"{dtypes.LEGACY_TYPE_NAMES[wide.numpy.name]}")
        return self.pow_(exponent.to(wide) if isinstance(exponent, Tensor) else exponent)

    def signbit(self):
        if self._data.dtype.kind == "c":
            raise RuntimeError("signbit is not implemented for complex tensors.")
        return Tensor._wrap(np.asarray(np.signbit(self._data)))

    gcd, gcd_ = _integers_only("gcd", np.gcd)
    lcm, lcm_ = _integers_only("lcm", np.lcm)


def _exponent(other):
    """ldexp's exponent: torch's 2^other has no bool kernel."""
    other = _as_tensor(other)
    if other._data.dtype == np.bool_:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    return other


def _float_power_dtype(base, exponent):
    complex_ = base.is_complex() or (isinstance(exponent, Tensor) and exponent.is_complex()) or (
        isinstance(exponent, numbers.Complex) and not isinstance(exponent, numbers.Real))
    return dtypes.complex128 if complex_ else dtypes.float64


NAMES = ("logaddexp", "logaddexp2", "hypot", "nextafter", "copysign", "fmax", "fmin", "ldexp",
         "frexp", "heaviside", "nan_to_num", "float_power", "signbit", "gcd", "lcm")
