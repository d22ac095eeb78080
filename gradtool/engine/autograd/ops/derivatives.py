"""The op table: every built-in op, one row each, with its forward (a numpy kernel) and one
derivative per input, written once (registry.py says what a row's fields mean; formulas.py
holds the formulas that need local variables; generic.py the ops formulas are written with).

Adding an op is one row here (plus a named helper in formulas.py for a hard formula) and
one case in tests/engine/test_op_gradients.py; its Tensor method and gradtool.<name> function are
a `method=` away (tensor_methods.py reads it)."""
import numpy as np

from ..dtypes import BFLOAT16, result_type
from . import formulas
from . import kernels
from . import rows
from .generic import (bmm, cat, conj, contiguous, cos, cosh, diagonal, exp, expand, flip, gather,
                      imag, index, index_put, is_complex, masked_fill, matmul, mm, mv, ones_like,
                      permute, real, reshape, roll, rsqrt, scatter, scatter_add, select, sgn, sin,
                      sinh, slice, squeeze, stack, sum, sum_to, t, to, transpose, tril, triu,
                      unbind, unsqueeze, view_as_complex, view_as_real, where, zeros, zeros_like)
from .generic import floor as _floor, index_select, sigmoid as _sigmoid, trunc as _trunc
from .generic import grouped_mm
from .generic import exp2, isfinite, isnan
from .registry import MANY, NON_DIFFERENTIABLE, OpSpec, no_forward_ad

# ======================= elementwise, one input =======================
# `method`: Tensor.exp(), its in-place twin Tensor.exp_() and gradtool.exp() are generated
# complex=True: torch's formulas for complex values too (a conj is the identity on reals)
NEG = OpSpec("neg", "NegBackward0", np.negative, jvp="elementwise", batches=True, method=True,
             method_aliases=("negative",), complex=True, self=lambda grad: -grad)
ABS = OpSpec("abs", "AbsBackward0", np.abs, jvp="elementwise", batches=True, method=True,
             complex=True, self=lambda grad, self: grad * sgn(self))
SIGN = OpSpec("sign", "SignBackward0", np.sign, jvp="elementwise", batches=True, method=True,
              self=lambda grad: zeros_like(grad))
# functions of float results (an integer input gives the default float dtype): their fields
_FLOATING = dict(jvp="elementwise", batches=True, method=True, promotion="float", complex=True)
EXP = OpSpec("exp", "ExpBackward0", kernels.exp, **_FLOATING,
             self=lambda grad, result: grad * conj(result))
LOG = OpSpec("log", "LogBackward0", kernels.log, **_FLOATING,
             self=lambda grad, self: grad / conj(self))
LOG1P = OpSpec("log1p", "Log1PBackward0", kernels.log1p, **_FLOATING,
               self=lambda grad, self: grad / conj(self + 1))
EXPM1 = OpSpec("expm1", "Expm1Backward0", kernels.expm1, **_FLOATING,
               self=lambda grad, result: grad * conj(result + 1))

# logarithms and powers of 2 and 10
_LN2, _LN10 = 0.6931471805599453, 2.302585092994046
LOG2 = OpSpec("log2", "Log2Backward0", kernels.rounded_once(np.log2), **_FLOATING,
              self=lambda grad, self: grad / conj(self * _LN2))
LOG10 = OpSpec("log10", "Log10Backward0", kernels.rounded_once(np.log10), **_FLOATING,
               self=lambda grad, self: grad / conj(self * _LN10))
EXP2 = OpSpec("exp2", "Exp2Backward0", kernels.rounded_once(np.exp2), **_FLOATING,
              self=lambda grad, result: grad * conj(result * _LN2))

# angles: a constant factor (Tensor.rad2deg refuses complex input, as torch)
_DEGREES_PER_RADIAN = 57.29577951308232
RAD2DEG = OpSpec("rad2deg", "Rad2DegBackward0", kernels.rounded_once(np.rad2deg),
                 **dict(_FLOATING, complex=False, method=False),
                 self=lambda grad: formulas.scale(grad, _DEGREES_PER_RADIAN))
DEG2RAD = OpSpec("deg2rad", "Deg2RadBackward0", kernels.rounded_once(np.deg2rad),
                 **dict(_FLOATING, complex=False, method=False),
                 self=lambda grad: formulas.scale(grad, 1 / _DEGREES_PER_RADIAN))

SQRT = OpSpec("sqrt", "SqrtBackward0", np.sqrt, **_FLOATING,
              self=lambda grad, result: grad / (2 * conj(result)))
RECIPROCAL = OpSpec("reciprocal", "ReciprocalBackward0", kernels.reciprocal, **_FLOATING,
                    self=lambda grad, result: -grad * conj(result * result))
RSQRT = OpSpec("rsqrt", "RsqrtBackward0", kernels.rsqrt, **_FLOATING,
               self=lambda grad, result: -0.5 * grad * conj(result ** 3))
SIN = OpSpec("sin", "SinBackward0", kernels.sin, **_FLOATING,
             self=lambda grad, self: grad * conj(cos(self)))
COS = OpSpec("cos", "CosBackward0", kernels.cos, **_FLOATING,
             self=lambda grad, self: -grad * conj(sin(self)))
TAN = OpSpec("tan", "TanBackward0", kernels.tan, **_FLOATING,
             self=lambda grad, result: grad * conj(1 + result * result))
SINH = OpSpec("sinh", "SinhBackward0", kernels.sinh, **_FLOATING,
              self=lambda grad, self: grad * conj(cosh(self)))
COSH = OpSpec("cosh", "CoshBackward0", kernels.cosh, **_FLOATING,
              self=lambda grad, self: grad * conj(sinh(self)))
TANH = OpSpec("tanh", "TanhBackward0", kernels.tanh, **_FLOATING,
              self=lambda grad, result: grad * conj(1 - result * result))
SIGMOID = OpSpec("sigmoid", "SigmoidBackward0", kernels.sigmoid, **_FLOATING,
                 self=lambda grad, result: grad * conj(result * (1 - result)))
# the inverse trigonometric and hyperbolic functions (torch's arc* names are aliases)
ASIN = OpSpec("asin", "AsinBackward0", kernels.asin, **_FLOATING, method_aliases=("arcsin",),
              self=lambda grad, self: grad * conj(rsqrt(1 - self * self)))
ACOS = OpSpec("acos", "AcosBackward0", kernels.acos, **_FLOATING, method_aliases=("arccos",),
              self=lambda grad, self: -grad * conj(rsqrt(1 - self * self)))
ATAN = OpSpec("atan", "AtanBackward0", kernels.atan, **_FLOATING, method_aliases=("arctan",),
              self=lambda grad, self: grad / conj(self * self + 1))
# torch leaves asinh_, acosh_ and atanh_ without a derivative (their Backward1 raises)
ASINH = OpSpec("asinh", "AsinhBackward0", kernels.asinh, **_FLOATING, method_aliases=("arcsinh",),
               in_place_node="AsinhBackward1",
               self=lambda grad, self: grad * conj(rsqrt(self * self + 1)))
ACOSH = OpSpec("acosh", "AcoshBackward0", kernels.acosh, **_FLOATING, method_aliases=("arccosh",),
               in_place_node="AcoshBackward1",  # (sqrt(z^2 - 1) is not sqrt(z-1) sqrt(z+1))
               self=lambda grad, self: grad * conj(rsqrt(self + 1) * rsqrt(self - 1))
                   if is_complex(self) else grad * rsqrt(self * self - 1))
ATANH = OpSpec("atanh", "AtanhBackward0", kernels.atanh, **_FLOATING, method_aliases=("arctanh",),
               in_place_node="AtanhBackward1", self=lambda grad, self: grad / conj(1 - self * self))
# round (half to even; decimals scale first, as torch's) is flat: zero gradient, as torch's
# (RoundBackward1 with decimals=)
ROUND = OpSpec("round", "RoundBackward0", np.round, function=True, jvp="elementwise",
               batches=True, self=lambda grad: zeros_like(grad))
ROUND_DECIMALS = OpSpec("round", "RoundBackward1", np.round, jvp="elementwise",
                        batches=True, args=("decimals",), self=lambda grad: zeros_like(grad))

# rounding to integers
# floor, ceil and trunc (fix is its alias) are flat between the integers: zero gradient, as
# round's; an integer tensor is its own floor and keeps its dtype (numpy's would be float).
# frac = x - trunc(x) passes the gradient through.


def _integral_kept(fn):
    def kernel(x):
        return x.copy() if x.dtype.kind in "iub" else fn(x)
    kernel.__name__ = fn.__name__
    return kernel


FLOOR = OpSpec("floor", "FloorBackward0", _integral_kept(np.floor), jvp="elementwise",
               batches=True, method=True, self=lambda grad: zeros_like(grad))
CEIL = OpSpec("ceil", "CeilBackward0", _integral_kept(np.ceil), jvp="elementwise",
              batches=True, method=True, self=lambda grad: zeros_like(grad))
TRUNC = OpSpec("trunc", "TruncBackward0", _integral_kept(np.trunc), jvp="elementwise",
               batches=True, method=True, method_aliases=("fix",),
               self=lambda grad: zeros_like(grad))


def _frac(x):
    if x.dtype.kind in "iub":  # torch has no integer frac kernel
        from ..dtypes import LEGACY_TYPE_NAMES
        raise NotImplementedError(
            f"\"frac_cpu\" not implemented for '{LEGACY_TYPE_NAMES[x.dtype.name]}'")
    return x - np.trunc(x)


FRAC = OpSpec("frac", "FracBackward0", _frac, jvp="elementwise",
              batches=True, method=True, self=lambda grad: grad)

# logit = log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given
LOGIT = OpSpec("logit", "LogitBackward0", kernels.logit, jvp="elementwise", batches=True,
               args=("eps",), promotion="float", self=formulas.logit_backward)
# relu'(0) = 0: the gradient passes only where the output is positive; through
# threshold_backward, as torch, so the gradient is differentiable (in `result`, with
# derivative zero) and a second order gives zeros, not an error.
RELU = OpSpec("relu", "ReluBackward0", kernels.relu, jvp="elementwise", batches=True,
              method=True, self=lambda grad, result: formulas.threshold_backward(grad, result, 0))
# clamp passes the gradient at the bounds themselves (torch: min <= x <= max).
CLAMP = OpSpec("clamp", "ClampBackward1", kernels.clamp, function=True, jvp="elementwise",
               batches=True, args=("min", "max"), promotion="promote", promoted_args=("min", "max"),
               promotion_always=True, self=formulas.clamp_backward)
CLAMP_MIN = OpSpec("clamp_min", "ClampMinBackward0", kernels.clamp, jvp="elementwise",
                   batches=True, args=("min", "max"),
                   self=lambda grad, self, min: formulas.clamp_backward(grad, self, min, None))
CLAMP_MAX = OpSpec("clamp_max", "ClampMaxBackward0", kernels.clamp, jvp="elementwise",
                   batches=True, args=("min", "max"),
                   self=lambda grad, self, max: formulas.clamp_backward(grad, self, None, max))
# nan_to_num: NaN and the infinities replaced by numbers (by default 0 and the dtype's largest
# and smallest); the replaced elements get no gradient; an integer tensor is itself
NAN_TO_NUM = OpSpec("nan_to_num", "NanToNumBackward0", kernels.nan_to_num, jvp="elementwise",
                    batches=True, args=("nan", "posinf", "neginf"),
                    self=lambda grad, self: where(isfinite(self), grad, 0))
CLONE = OpSpec("clone", "CloneBackward0", kernels.clone, function=True, jvp="linear", batches=True,
               args=("memory_format",), self=lambda grad: grad)
# Ops that overwrite their input entirely (used in place): no gradient flows to what was there.
COPY = OpSpec("copy_", "CopyBackwards", kernels.copy, jvp="elementwise", complex=True,
              broadcasts=True, self=lambda grad: zeros_like(grad),
              src=lambda grad: grad)
FILL = OpSpec("fill_", "FillBackward2", np.full_like, jvp="elementwise", args=("value",),
              writes_overlapping=True, complex=True, self=lambda grad: zeros_like(grad))
FILL_TENSOR = OpSpec("fill_", "FillBackward3", np.full_like,
                     jvp=lambda value_t: value_t, self=lambda grad: zeros_like(grad),
                     value=lambda grad: sum(grad))
# torch.fill: fill_'s out-of-place form
FILL_OUT = OpSpec("fill", "FillBackward0", np.full_like, jvp="elementwise", args=("value",),
                  self=lambda grad: zeros_like(grad))
ZERO = OpSpec("zero_", "ZeroBackward0", np.zeros_like, jvp="elementwise",
              writes_overlapping=True, self=lambda grad: zeros_like(grad))
NORMAL = OpSpec("normal_", "NormalBackward0", kernels.normal, jvp="elementwise",
                args=("mean", "std", "generator"), self=lambda grad: zeros_like(grad))
# torch.normal(mean, std) with a tensor mean and/or std: draws, with zero gradients
NORMAL_TENSOR_FLOAT = OpSpec("normal", "NormalBackward1", kernels.normal_like,
                             jvp="elementwise", args=("std", "generator"),
                             mean=lambda grad, mean_sym_sizes: zeros(mean_sym_sizes, grad))
NORMAL_FLOAT_TENSOR = OpSpec("normal", "NormalBackward2", kernels.normal_std_tensor,
                             jvp="elementwise", args=("mean", "generator"),
                             std=lambda grad, std_sym_sizes: zeros(std_sym_sizes, grad))
NORMAL_TENSOR_TENSOR = OpSpec("normal", "NormalBackward3", kernels.normal_like, jvp="elementwise",
                              args=("generator",),
                              mean=lambda grad, mean_sym_sizes: zeros(mean_sym_sizes, grad),
                              std=lambda grad, std_sym_sizes: zeros(std_sym_sizes, grad))
UNIFORM = OpSpec("uniform_", "UniformBackward0", kernels.uniform, jvp="elementwise",
                 args=("low", "high", "generator"), self=lambda grad: zeros_like(grad))
# torch's other random fills, each drawing from its distribution: zero gradient, as normal_'s
# (random_'s three forms: integers in [from, to), in [0, to), or all a dtype represents exactly)
_RANDOM_FILL = dict(jvp="elementwise", self=lambda grad: zeros_like(grad))
RANDOM_FROM_TO = OpSpec("random_", "RandomBackward0", kernels.random_integers,
                        args=("from", "to", "generator"), **_RANDOM_FILL)
RANDOM_TO = OpSpec("random_", "RandomBackward1", kernels.random_integers,
                   args=("from", "to", "generator"), **_RANDOM_FILL)
RANDOM = OpSpec("random_", "RandomBackward2", kernels.random_integers,
                args=("from", "to", "generator"), **_RANDOM_FILL)
LOG_NORMAL = OpSpec("log_normal_", "LogNormalBackward0", kernels.log_normal,
                    args=("mean", "std", "generator"), **_RANDOM_FILL)
EXPONENTIAL = OpSpec("exponential_", "ExponentialBackward0", kernels.exponential,
                     args=("lambd", "generator"), **_RANDOM_FILL)
GEOMETRIC = OpSpec("geometric_", "GeometricBackward0", kernels.geometric,
                   args=("p", "generator"), **_RANDOM_FILL)
CAUCHY = OpSpec("cauchy_", "CauchyBackward0", kernels.cauchy,
                args=("median", "sigma", "generator"), **_RANDOM_FILL)
TO_COPY = OpSpec("to", "ToCopyBackward0", kernels.to_dtype, jvp="linear", args=("dtype",),
                 promotes_dtype=False,
                 self=lambda grad, self_scalar_type: to(grad, self_scalar_type))

# ======================= elementwise, two inputs (broadcasting) =======================
# Gradients come back in the broadcast shape; the engine sums them to each input's shape.
# The ops promoting their inputs' dtypes to one (torch's result_type) share these fields
_BROADCASTING = dict(jvp="elementwise", batches=True, promotion="promote", broadcasts=True)
ADD = OpSpec("add", "AddBackward0", kernels.add, function=True, **_BROADCASTING, args=("alpha",),
             complex=True, self=lambda grad: grad,
             other=lambda grad, alpha: formulas.scale(grad, conj(alpha)))
SUB = OpSpec("sub", "SubBackward0", kernels.sub, function=True, **_BROADCASTING, args=("alpha",),
             complex=True, self=lambda grad: grad,
             other=lambda grad, alpha: formulas.scale(grad, -conj(alpha)))
RSUB = OpSpec("rsub", "RsubBackward1", kernels.rsub, **_BROADCASTING, args=("other", "alpha"),
              promoted_args=("other",), complex=True,
              self=lambda grad, alpha: formulas.scale(grad, -conj(alpha)))
RSUB_TENSOR = OpSpec("rsub", "RsubBackward0", kernels.rsub, **_BROADCASTING, args=("alpha",),
                     complex=True, self=lambda grad, alpha: formulas.scale(grad, -conj(alpha)),
                     other=lambda grad: grad)
# add.Scalar and sub.Scalar: a tensor and a number inside torch's C++ (the margin losses,
# pairwise_distance's eps);
# Python's tensor + 2.0 is ADD, the number wrapped in a tensor
ADD_SCALAR = OpSpec("add", "AddBackward1", kernels.add, jvp="elementwise", batches=True,
                    args=("other", "alpha"), complex=True, self=lambda grad: grad)
SUB_SCALAR = OpSpec("sub", "SubBackward1", kernels.sub, jvp="elementwise", batches=True,
                    args=("other", "alpha"), complex=True, self=lambda grad: grad)
MUL = OpSpec("mul", "MulBackward0", kernels.mul, function=True, **_BROADCASTING, complex=True,
             self=lambda grad, other: grad * conj(other),
             other=lambda grad, self: grad * conj(self))
# mul.Scalar: a tensor times a number inside torch's C++ (cross_entropy's label smoothing);
# Python's tensor * 2.0 is MUL, the number wrapped in a tensor
MUL_SCALAR = OpSpec("mul", "MulBackward1", kernels.mul, jvp="elementwise", batches=True,
                    args=("other",), complex=True, self=lambda grad, other: grad * conj(other))
DIV = OpSpec("div", "DivBackward0", kernels.div, function=True, jvp="elementwise", batches=True,
             promotion="float", broadcasts=True, complex=True,
             self=lambda grad, other: grad / conj(other),
             other=lambda grad, self, other: -grad * conj(self / other / other))
# div with rounding_mode: the quotient is flat between its jumps, so torch's gradient is zero
# (its formulas name self, other and rounding_mode, which its node keeps: so does this one)
DIV_ROUNDED = OpSpec("div", "DivBackward2", kernels.div_rounded, **_BROADCASTING,
                     args=("rounding_mode",),
                     self=lambda grad, self, other, rounding_mode: zeros_like(grad),
                     other=lambda grad, self, other, rounding_mode: zeros_like(grad))
POW = OpSpec("pow", "PowBackward0", kernels.power, function=True, **_BROADCASTING,
             args=("exponent",), promoted_args=("exponent",), complex=True,
             self=formulas.pow_backward)
POW_TENSOR = OpSpec("pow", "PowBackward1", kernels.power, **_BROADCASTING, complex=True,
                    self=formulas.pow_backward_self,
                    exponent=formulas.pow_backward_exponent)
POW_SCALAR_BASE = OpSpec("pow", "PowBackward2", kernels.pow_scalar_base, **_BROADCASTING,
                         args=("self",), promoted_args=("self",), complex=True,
                         exponent=formulas.pow_backward_exponent)
ATAN2 = OpSpec("atan2", "Atan2Backward0", kernels.atan2, function=True, jvp="elementwise",
               batches=True, promotion="float", broadcasts=True,
               self=lambda grad, self, other: grad * other / (self * self + other * other),
               other=lambda grad, self, other: -grad * self / (self * self + other * other))
ADDCMUL = OpSpec("addcmul", "AddcmulBackward0", kernels.addcmul, function=True, **_BROADCASTING,
                 args=("value",), self=lambda grad: grad,
                 tensor1=lambda grad, tensor2, value: grad * tensor2 * value,
                 tensor2=lambda grad, tensor1, value: grad * tensor1 * value)
ADDCDIV = OpSpec("addcdiv", "AddcdivBackward0", kernels.addcdiv, function=True, **_BROADCASTING,
                 args=("value",), self=lambda grad: grad,
                 tensor1=lambda grad, tensor2, value: grad * value / tensor2,
                 tensor2=lambda grad, tensor1, tensor2, value:
                     -grad * value * tensor1 / (tensor2 * tensor2))
# Ties split the gradient in half between the two inputs, as torch does.
MAXIMUM = OpSpec("maximum", "MaximumBackward0", kernels.maximum, **_BROADCASTING,
                 self=lambda grad, self, other:
                     formulas.tie_split(grad, self, other, self < other),
                 other=lambda grad, self, other:
                     formulas.tie_split(grad, self, other, self > other))
MINIMUM = OpSpec("minimum", "MinimumBackward0", kernels.minimum, **_BROADCASTING,
                 self=lambda grad, self, other:
                     formulas.tie_split(grad, self, other, self > other),
                 other=lambda grad, self, other:
                     formulas.tie_split(grad, self, other, self < other))
# clamp with tensor bounds (either may be None), torch's clamp.Tensor: x's gradient where
# min <= x <= max, min's where x < min < max, max's where x > max or max < min (the bounds
# crossed, the result is max); clamp_min and clamp_max with a tensor bound are ops of their own
CLAMP_TENSOR = OpSpec("clamp", "ClampBackward0", kernels.clamp_tensor, **_BROADCASTING,
                      self=formulas.clamp_backward, min=formulas.clamp_backward_min,
                      max=formulas.clamp_backward_max)
CLAMP_MIN_TENSOR = OpSpec("clamp_min", "ClampMinBackward1", kernels.maximum, **_BROADCASTING,
                          self=lambda grad, self, min: where(self >= min, grad, 0),
                          min=lambda grad, self, min: where(self < min, grad, 0))
CLAMP_MAX_TENSOR = OpSpec("clamp_max", "ClampMaxBackward1", kernels.minimum, **_BROADCASTING,
                          self=lambda grad, self, max: where(self <= max, grad, 0),
                          max=lambda grad, self, max: where(self > max, grad, 0))
WHERE = OpSpec("where", "WhereBackward0", kernels.where, **_BROADCASTING, complex=True,
               condition=NON_DIFFERENTIABLE,
               self=lambda grad, condition: where(condition, grad, 0),
               other=lambda grad, condition: where(condition, 0, grad))
MASKED_FILL = OpSpec("masked_fill", "MaskedFillBackward0", kernels.masked_fill, function=True,
                     jvp="elementwise", batches=True, args=("value",), broadcasts=True,
                     writes_overlapping=True, complex=True,
                     self=lambda grad, mask: masked_fill(grad, mask, 0), mask=NON_DIFFERENTIABLE)

# lerp
# start + weight * (end - start), computed from the nearer end as torch's kernel does (so the
# values agree to the last bit); a number weight (LerpBackward0) or a tensor (LerpBackward1)


@kernels.rounded_once
def _lerp_kernel(start, end, weight):
    diff = end - start
    return np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))


LERP_SCALAR = OpSpec("lerp", "LerpBackward0", _lerp_kernel, **_BROADCASTING, args=("weight",),
                     self=lambda grad, weight: grad * (1 - weight),
                     end=lambda grad, weight: grad * weight)
LERP = OpSpec("lerp", "LerpBackward1", _lerp_kernel, **_BROADCASTING,
              self=lambda grad, weight: grad * (1 - weight),
              end=lambda grad, weight: grad * weight,
              weight=lambda grad, self, end: grad * (end - self))

# remainder and fmod
# remainder is Python's % (the sign of the divisor), fmod C's (the sign of the dividend):
# self - q * other with q = floor(self / other) or trunc(self / other), so the gradient is
# grad for self and -grad * q for other. A number divisor: RemainderBackward0 / FmodBackward0.


def _modulo_rows(name, kernel, rounded, node):
    tensor = OpSpec(name, f"{node}Backward1", kernel, function=True, **_BROADCASTING, self=lambda grad: grad,
                    other=lambda grad, self, other: -grad * rounded(self / other))
    number = OpSpec(name, f"{node}Backward0", kernel, jvp="elementwise", batches=True,
                    args=("other",), promoted_args=("other",), promotion="promote",
                    self=lambda grad: grad)
    return tensor, number


REMAINDER, REMAINDER_SCALAR = _modulo_rows("remainder", np.remainder, _floor, "Remainder")
FMOD, FMOD_SCALAR = _modulo_rows("fmod", np.fmod, _trunc, "Fmod")


def _comparison_rows(name, compare, node):
    """x.eq_(y) and its kin: the comparison written into x (1 or 0 in x's dtype). It is flat,
    so torch's gradient is zero for x and y (...Backward0 for a number, ...Backward1 for a
    tensor); the out-of-place comparisons record nothing."""
    def written(self, other):  # (compared in torch's common dtype; in self's dtype: 1 or 0)
        common = result_type(self, other)
        return compare(self.astype(common, copy=False),
                       np.asarray(other).astype(common, copy=False)).astype(self.dtype)
    written.__name__ = compare.__name__
    # (a bfloat16 x reaches the kernel as float32 values: compared in the dtype x really has)
    written.in_bfloat16 = lambda self, other: written(self.astype(BFLOAT16), other)
    number = OpSpec(name + "_", f"{node}Backward0", written, jvp="elementwise", batches=True,
                    args=("other",), self=lambda grad: zeros_like(grad))
    tensor = OpSpec(name + "_", f"{node}Backward1", written, jvp="elementwise", batches=True,
                    broadcasts=True, self=lambda grad: zeros_like(grad),
                    other=lambda grad: zeros_like(grad))
    return number, tensor


EQ_, EQ_TENSOR_ = _comparison_rows("eq", np.equal, "Eq")
NE_, NE_TENSOR_ = _comparison_rows("ne", np.not_equal, "Ne")
LT_, LT_TENSOR_ = _comparison_rows("lt", np.less, "Lt")
LE_, LE_TENSOR_ = _comparison_rows("le", np.less_equal, "Le")
GT_, GT_TENSOR_ = _comparison_rows("gt", np.greater, "Gt")
GE_, GE_TENSOR_ = _comparison_rows("ge", np.greater_equal, "Ge")


# logaddexp, logaddexp2, hypot and nextafter: torch has float kernels only (integers refused);
# logaddexp's gradients are each input's softmax weight: 1 / (1 + e^(other - self))
_FLOAT_KERNEL = dict(function=True, **_BROADCASTING)
LOGADDEXP = OpSpec("logaddexp", "LogaddexpBackward0",
                   kernels.floating_only("logaddexp", kernels.rounded_once(np.logaddexp)),
                   **_FLOAT_KERNEL,
                   self=lambda grad, self, other: grad / (1 + exp(other - self)),
                   other=lambda grad, self, other: grad / (1 + exp(self - other)))
LOGADDEXP2 = OpSpec("logaddexp2", "Logaddexp2Backward0",
                    kernels.floating_only("logaddexp2", kernels.rounded_once(np.logaddexp2)),
                    **_FLOAT_KERNEL,
                    self=lambda grad, self, other: grad / (1 + exp((other - self) * _LN2)),
                    other=lambda grad, self, other: grad / (1 + exp((self - other) * _LN2)))
HYPOT = OpSpec("hypot", "HypotBackward0",
               kernels.floating_only("hypot", kernels.rounded_once(np.hypot)), **_FLOAT_KERNEL,
               self=lambda grad, self, result: grad * self / result,
               other=lambda grad, other, result: grad * other / result)
# the next float after self towards other: a step of one ulp, so torch passes the gradient
# through to self and none to other (saving both)
NEXTAFTER = OpSpec("nextafter", "NextafterBackward0",
                   kernels.floating_only("nextafter", np.nextafter), **_FLOAT_KERNEL,
                   self=lambda grad, self, other: grad,
                   other=lambda grad, self, other: zeros_like(grad))
# copysign: |self| with other's sign (an integer result is the default float); the gradient
# to self is the sign flip result / self (0 where self is 0), none to other
COPYSIGN = OpSpec("copysign", "CopysignBackward0", np.copysign, function=True, jvp="elementwise",
                  batches=True, promotion="float", broadcasts=True,
                  self=lambda grad, self, result: formulas.copysign_self_backward(grad, self,
                                                                                  result),
                  other=lambda grad: zeros_like(grad))
COPYSIGN_SCALAR = OpSpec("copysign", "CopysignBackward1", np.copysign, jvp="elementwise",
                         batches=True, args=("other",), promotion="float",
                         self=lambda grad, self, result:
                             formulas.copysign_self_backward(grad, self, result))
# fmax and fmin ignore a NaN (maximum and minimum spread it); ties give all to self, as torch's
FMAX = OpSpec("fmax", "FmaxBackward0", np.fmax, function=True, **_BROADCASTING,
              self=lambda grad, self, other: where((self >= other) | isnan(other), grad, 0),
              other=lambda grad, self, other: where((self >= other) | isnan(other), 0, grad))
FMIN = OpSpec("fmin", "FminBackward0", np.fmin, function=True, **_BROADCASTING,
              self=lambda grad, self, other: where((self <= other) | isnan(other), grad, 0),
              other=lambda grad, self, other: where((self <= other) | isnan(other), 0, grad))
# ldexp: self * 2^other (a float result); frexp: its inverse, mantissa in [0.5, 1) and an int32
# exponent, the gradient scaled back by 2^-exponent
LDEXP = OpSpec("ldexp", "LdexpBackward0", kernels.rounded_once(kernels.ldexp), function=True,
               jvp="elementwise", batches=True, promotion="float", broadcasts=True,
               self=lambda grad, other: grad * exp2(other),
               other=lambda grad, result: grad * result * _LN2)
FREXP = OpSpec("frexp", "FrexpBackward0", kernels.frexp, function=True,
               jvp=lambda self_t, exponent: self_t * formulas.power_of_two(-exponent, self_t),
               outputs=("mantissa", "exponent"), nondiff_outputs=("exponent",),
               self=lambda grad, exponent: grad * formulas.power_of_two(-exponent, grad))
# heaviside: a step, which torch does not differentiate (its node refuses at backward); out
# of the table, whose rows all compute a derivative
HEAVISIDE = OpSpec("heaviside", "NotImplemented", kernels.heaviside, jvp="elementwise",
                   promotion="promote", broadcasts=True,
                   self=formulas.not_implemented("heaviside"),
                   values=formulas.not_implemented("heaviside"))
HEAVISIDE.derivative_implemented = False

# ======================= matrix products =======================
# (the products' formulas conjugate the other factor: mm_mat1_backward's grad @ mat2^H)
MM = OpSpec("mm", "MmBackward0", np.matmul, function=True, jvp="bilinear", batches=True,
            complex=True,
            self=lambda grad, mat2, self_sym_sizes, self_sym_strides:
                formulas.mm_mat1_backward(grad, mat2, self_sym_sizes, self_sym_strides),
            mat2=lambda grad, self, mat2_sym_sizes, mat2_sym_strides:
                formulas.mm_mat2_backward(grad, self, mat2_sym_sizes, mat2_sym_strides))
# Linear's node: bias + input @ weight.t(), the product's backward as mm's
ADDMM = OpSpec("addmm", "AddmmBackward0", kernels.addmm, function=True, args=("beta", "alpha"),
               batches=True, complex=True,
               jvp=lambda self_t, mat1_t, mat2_t, mat1, mat2, beta, alpha:
                   formulas.scale(self_t, beta)
                   + formulas.scale(mm(mat1_t, mat2) + mm(mat1, mat2_t), alpha),
               self=lambda grad, beta: formulas.scale(grad, conj(beta)),
               mat1=lambda grad, mat2, mat1_sym_sizes, mat1_sym_strides, alpha:
                   formulas.scale(formulas.mm_mat1_backward(
                       grad, mat2, mat1_sym_sizes, mat1_sym_strides), conj(alpha)),
               mat2=lambda grad, mat1, mat2_sym_sizes, mat2_sym_strides, alpha:
                   formulas.scale(formulas.mm_mat2_backward(
                       grad, mat1, mat2_sym_sizes, mat2_sym_strides), conj(alpha)))
# MultiheadAttention's masked scores: mask + q @ k^T in one node
BADDBMM = OpSpec("baddbmm", "BaddbmmBackward0", kernels.addmm, function=True,
                 args=("beta", "alpha"),
                 jvp=lambda self_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
                     formulas.scale(self_t, beta)
                     + formulas.scale(bmm(batch1_t, batch2) + bmm(batch1, batch2_t), alpha),
                 self=lambda grad, beta: formulas.scale(grad, beta),
                 batch1=lambda grad, batch2, alpha:
                     formulas.scale(bmm(grad, transpose(batch2, 1, 2)), alpha),
                 batch2=lambda grad, batch1, alpha:
                     formulas.scale(bmm(transpose(batch1, 1, 2), grad), alpha))
# beta * self + alpha * (a product): matrix-vector, outer, and a batch of products summed
ADDMV = OpSpec("addmv", "AddmvBackward0", kernels.addmv, function=True, args=("beta", "alpha"),
               complex=True,
               jvp=lambda self_t, mat_t, vec_t, mat, vec, beta, alpha:
                   formulas.scale(self_t, beta) + formulas.scale(mv(mat_t, vec) + mv(mat, vec_t),
                                                                 alpha),
               self=lambda grad, beta: formulas.scale(grad, conj(beta)),
               mat=lambda grad, vec, alpha: formulas.scale(unsqueeze(grad, 1) * conj(vec),
                                                           conj(alpha)),
               vec=lambda grad, mat, alpha: formulas.scale(mv(conj(t(mat)), grad), conj(alpha)))
ADDR = OpSpec("addr", "AddrBackward0", kernels.addr, function=True, args=("beta", "alpha"),
              complex=True,
              jvp=lambda self_t, vec1_t, vec2_t, vec1, vec2, beta, alpha:
                  formulas.scale(self_t, beta) + formulas.scale(
                      unsqueeze(vec1_t, 1) * vec2 + unsqueeze(vec1, 1) * vec2_t, alpha),
              self=lambda grad, beta: formulas.scale(grad, conj(beta)),
              vec1=lambda grad, vec2, alpha: formulas.scale(mv(grad, conj(vec2)), conj(alpha)),
              vec2=lambda grad, vec1, alpha: formulas.scale(mv(t(grad), conj(vec1)), conj(alpha)))
ADDBMM = OpSpec("addbmm", "AddbmmBackward0", kernels.addbmm, function=True,
                args=("beta", "alpha"), complex=True,
                jvp=lambda self_t, batch1_t, batch2_t, batch1, batch2, beta, alpha:
                    formulas.scale(self_t, beta) + formulas.scale(
                        sum(bmm(batch1_t, batch2) + bmm(batch1, batch2_t), 0), alpha),
                self=lambda grad, beta: formulas.scale(grad, conj(beta)),
                batch1=lambda grad, batch2, batch1_sym_argsize_0, batch1_sym_argsize_1,
                batch2_sym_argsize_2, alpha: formulas.scale(bmm(expand(unsqueeze(grad, 0), (
                    batch1_sym_argsize_0, batch1_sym_argsize_1, batch2_sym_argsize_2)),
                    conj(transpose(batch2, 1, 2))), conj(alpha)),
                batch2=lambda grad, batch1, batch1_sym_argsize_0, batch1_sym_argsize_1,
                batch2_sym_argsize_2, alpha: formulas.scale(bmm(conj(transpose(batch1, 1, 2)),
                    expand(unsqueeze(grad, 0), (batch1_sym_argsize_0, batch1_sym_argsize_1,
                                                batch2_sym_argsize_2))), conj(alpha)))
MV = OpSpec("mv", "MvBackward0", np.matmul, function=True, jvp="bilinear", complex=True,
            self=lambda grad, vec: unsqueeze(grad, 1) * conj(vec),
            vec=lambda grad, self: mv(conj(t(self)), grad))
DOT = OpSpec("dot", "DotBackward0", np.dot, function=True, jvp="bilinear", complex=True,
             self=lambda grad, tensor: grad * conj(tensor),
             tensor=lambda grad, self: grad * conj(self))
VDOT = OpSpec("vdot", "VdotBackward0", np.vdot, jvp="bilinear", complex=True,
              self=lambda grad, other: conj(grad) * other,
              other=lambda grad, self: grad * self)
BMM = OpSpec("bmm", "BmmBackward0", np.matmul, function=True, jvp="bilinear", complex=True,
             self=lambda grad, mat2: bmm(grad, conj(transpose(mat2, 1, 2))),
             mat2=lambda grad, self: bmm(conj(transpose(self, 1, 2)), grad))
# F.grouped_mm (mixture-of-experts layers): a product per group of a jagged operand (offs, as
# Python ints, the ends of the groups); each input's gradient is grouped_mm again, with the
# other operand transposed, over the same groups
GROUPED_MM = OpSpec("_grouped_mm", "GroupedMmBackward0", kernels.grouped_mm, args=("offs",),
                    jvp="bilinear",
                    self=lambda grad, mat2, offs: grouped_mm(grad, transpose(mat2, -2, -1), offs),
                    mat2=lambda grad, self, offs: grouped_mm(transpose(self, -2, -1), grad, offs))
# _trilinear (nn.Bilinear's node): the three inputs unsqueezed at their expand dims,
# multiplied and summed over sumdim; each input's gradient the product of the other two and
# the gradient (unsqueezed at sumdim), summed over the input's expand dims
TRILINEAR = OpSpec("_trilinear", "TrilinearBackward0", kernels.trilinear,
                   args=("expand1", "expand2", "expand3", "sumdim", "unroll_dim"),
                   jvp="bilinear",  # (linear in each input: the rule holds for three)
                   i1=lambda grad, i2, i3, expand1, expand2, expand3, sumdim:
                       formulas.trilinear_backward(grad, expand1, (i2, expand2), (i3, expand3),
                                                   sumdim),
                   i2=lambda grad, i1, i3, expand1, expand2, expand3, sumdim:
                       formulas.trilinear_backward(grad, expand2, (i1, expand1), (i3, expand3),
                                                   sumdim),
                   i3=lambda grad, i1, i2, expand1, expand2, expand3, sumdim:
                       formulas.trilinear_backward(grad, expand3, (i1, expand1), (i2, expand2),
                                                   sumdim))

# ======================= reductions =======================
SUM = OpSpec("sum", "SumBackward0", np.sum, function=True, jvp="linear", batches=True,
             batched_jvp=formulas.batched_reduction("sum"),
             self=lambda grad, self_sym_sizes: expand(grad, self_sym_sizes))
SUM_DIM = OpSpec("sum", "SumBackward1", kernels.sum_dim, jvp="linear", batches=True,
                 batched_jvp=formulas.batched_reduction("sum"), args=("dim", "keepdim"),
                 self=lambda grad, self_sym_sizes, dim, keepdim:
                     formulas.sum_backward(grad, self_sym_sizes, dim, keepdim))
MEAN = OpSpec("mean", "MeanBackward0", np.mean, function=True, jvp="linear", batches=True,
              batched_jvp=formulas.batched_reduction("mean"),
              self=lambda grad, self_sym_sizes, self_sym_numel:
                  expand(grad / self_sym_numel, self_sym_sizes))
# (self_sym_numel: torch's mean_backward reads it for an empty dim list; saved as torch does)
MEAN_DIM = OpSpec("mean", "MeanBackward1", kernels.mean_dim, jvp="linear", batches=True,
                  batched_jvp=formulas.batched_reduction("mean"), args=("dim", "keepdim"),
                  self=lambda grad, self_sym_sizes, dim, self_sym_numel, keepdim:
                      formulas.mean_backward(grad, self_sym_sizes, dim, keepdim))
VAR = OpSpec("var", "VarBackward0", kernels.var, function=True, jvp="reduction",
             args=("dim", "correction", "keepdim"), self=formulas.var_backward)
STD = OpSpec("std", "StdBackward0", kernels.std, function=True, jvp="reduction",
             args=("dim", "correction", "keepdim"), self=formulas.std_backward)
PROD = OpSpec("prod", "ProdBackward0", np.prod, function=True, jvp="reduction",
              self=lambda grad, self, result:
                  formulas.prod_backward(grad, self, result, None, False))
PROD_DIM = OpSpec("prod", "ProdBackward1", kernels.prod_dim, jvp="reduction",
                  args=("dim", "keepdim"),
                  self=lambda grad, self, dim, keepdim, result:
                      formulas.prod_backward(grad, self, result, dim, keepdim))
# nansum: NaNs count as zero (and get no gradient)
NANSUM = OpSpec("nansum", "NansumBackward0", kernels.nansum, jvp="reduction",
                args=("dim", "keepdim"), self=formulas.nansum_backward)
# Full reductions spread the gradient evenly over ties; max(dim) sends it to the returned index.
MAX = OpSpec("max", "MaxBackward1", np.max, function=True, jvp="reduction",
             self=formulas.evenly_distribute_backward)
MIN = OpSpec("min", "MinBackward1", np.min, function=True, jvp="reduction",
             self=formulas.evenly_distribute_backward)
MAX_DIM = OpSpec("max", "MaxBackward0", kernels.max_dim, jvp="reduction", args=("dim", "keepdim"),
                 outputs=("result", "indices"), nondiff_outputs=("indices",),
                 self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                     formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim))
MIN_DIM = OpSpec("min", "MinBackward0", kernels.min_dim, jvp="reduction", args=("dim", "keepdim"),
                 outputs=("result", "indices"), nondiff_outputs=("indices",),
                 self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                     formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim))

# median
# the lower of the two middle values (torch's); a NaN anywhere makes the median NaN, at the
# first NaN's index. Over everything its gradient is spread over the elements equal to it, as
# max's; along a dim it goes to the returned index


def _median_all(x):
    if x.size and np.isnan(x).any():
        return np.asarray(np.nan, x.dtype)
    return np.asarray(np.sort(x, axis=None)[(x.size - 1) // 2])


def _median_dim(x, dim, keepdim):
    order = np.argsort(x, axis=dim, kind="stable")  # (NaN sorts last, so is never picked...)
    index = np.take(order, [(x.shape[dim] - 1) // 2], axis=dim)
    nan = np.isnan(x)
    has_nan = nan.any(axis=dim, keepdims=True)
    index = np.where(has_nan, np.argmax(nan, axis=dim, keepdims=True), index)  # (...but wins)
    values = np.take_along_axis(x, index, axis=dim)
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return values, index.astype(np.int64)


MEDIAN = OpSpec("median", "MedianBackward0", _median_all, jvp="reduction",
                self=formulas.evenly_distribute_backward)
MEDIAN_DIM = OpSpec("median", "MedianBackward1", _median_dim, jvp="reduction",
                    args=("dim", "keepdim"), outputs=("result", "indices"),
                    nondiff_outputs=("indices",),
                    self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                        formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes,
                                                          keepdim))

AMAX = OpSpec("amax", "AmaxBackward0", kernels.amax, function=True, jvp="reduction",
              args=("dim", "keepdim"),
              self=lambda grad, self, dim, keepdim, result:
                  formulas.amax_backward(grad, self, result, dim, keepdim))
AMIN = OpSpec("amin", "AminBackward0", kernels.amin, function=True, jvp="reduction",
              args=("dim", "keepdim"),
              self=lambda grad, self, dim, keepdim, result:
                  formulas.amax_backward(grad, self, result, dim, keepdim))
LOGSUMEXP = OpSpec("logsumexp", "LogsumexpBackward0", kernels.logsumexp, function=True,
                   jvp="reduction", args=("dim", "keepdim"),
                   self=lambda grad, self, dim, keepdim, result:
                       formulas.logsumexp_backward(grad, self, result, dim, keepdim))
# torch 2's norm is linalg.vector_norm: it saves ord and dim (None: all)
NORM = OpSpec("norm", "LinalgVectorNormBackward0", kernels.norm, function=True,
              args=("ord", "dim", "keepdim"),
              jvp=lambda self_t, self, ord, dim, keepdim, result:
                  formulas.norm_jvp(self_t, self, result, ord, dim, keepdim),
              self=lambda grad, self, ord, dim, keepdim, result:
                  formulas.norm_backward(grad, self, result, ord, dim, keepdim))
# norm.ScalarOpt_dim: the norm torch's C++ calls (pairwise_distance), saving p, not ord
NORM_SCALAROPT_DIM = OpSpec("norm", "NormBackward1", kernels.norm, args=("p", "dim", "keepdim"),
                            jvp=lambda self_t, self, p, dim, keepdim, result:
                                formulas.norm_jvp(self_t, self, result, p, dim, keepdim),
                            self=lambda grad, self, p, dim, keepdim, result:
                                formulas.norm_backward(grad, self, result, p, dim, keepdim))
# renorm: the slices along dim whose p-norm exceeds maxnorm scaled down to it
RENORM = OpSpec("renorm", "RenormBackward0", kernels.renorm, function=True,
                args=("p", "dim", "maxnorm"), jvp=formulas.renorm_jvp,
                self=formulas.renorm_backward)
SOFTMAX = OpSpec("softmax", "SoftmaxBackward0", kernels.softmax, function=True, args=("dim",),
                 batches=True,
                 jvp=lambda self_t, result, dim:
                     result * (self_t - sum(self_t * result, dim, True)),
                 self=lambda grad, result, dim: result * (grad - sum(grad * result, dim, True)))
LOG_SOFTMAX = OpSpec("log_softmax", "LogSoftmaxBackward0", kernels.log_softmax, function=True,
                     args=("dim",), batches=True,
                     jvp=lambda self_t, result, dim: self_t - sum(self_t * exp(result), dim, True),
                     self=lambda grad, result, dim: grad - exp(result) * sum(grad, dim, True))

# ======================= complex numbers =======================
# torch's conventions: a real loss L's gradient at z is dL/dRe z + i dL/dIm z (twice the
# conjugate Wirtinger derivative); a real input's gradient is the real part of a complex one
# (the engine takes it: torch's handle_r_to_c)
CONJ = OpSpec("conj", "ConjBackward0", np.conjugate, jvp="linear", self=lambda grad: conj(grad))
CONJ_PHYSICAL = OpSpec("conj_physical", "ConjPhysicalBackward0", np.conjugate, jvp="linear",
                       function=True, self=lambda grad: conj(grad))
SGN = OpSpec("sgn", "SgnBackward0", kernels.sgn, jvp="elementwise", method=True, complex=True,
             self=formulas.sgn_backward)
# (torch has no angle_: Tensor.angle is written by hand)
ANGLE = OpSpec("angle", "AngleBackward0", kernels.angle, jvp="elementwise", function=True,
               complex=True, self=formulas.angle_backward)
VIEW_AS_REAL = OpSpec("view_as_real", "ViewAsRealBackward0", kernels.view_as_real, jvp="linear",
                      view=True, self=lambda grad: view_as_complex(contiguous(grad)))
VIEW_AS_COMPLEX = OpSpec("view_as_complex", "ViewAsComplexBackward0", kernels.view_as_complex,
                         jvp="linear", view=True, self=lambda grad: view_as_real(contiguous(grad)))
COMPLEX = OpSpec("complex", "ComplexBackward0", kernels.complex_, jvp="linear", broadcasts=True,
                 real=lambda grad: real(grad), imag=lambda grad: imag(grad))
POLAR = OpSpec("polar", "PolarBackward0", kernels.polar, jvp="elementwise", complex=True,
               broadcasts=True, abs=lambda grad, result: real(conj(grad) * sgn(result)),
               angle=lambda grad, result: real(conj(grad) * result * 1j))

# ======================= shapes =======================
VIEW = OpSpec("view", "ViewBackward0", kernels.view, jvp="linear", view=True, batches=True,
              batched_jvp=formulas.batched_reshape,
              args=("size",), self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
RESHAPE_ALIAS = OpSpec("reshape", "ReshapeAliasBackward0", kernels.view, function=True,
                       jvp="linear", batched_jvp=formulas.batched_reshape, view=True, batches=True,
                       args=("size",),
                       self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
UNSAFE_VIEW = OpSpec("reshape", "UnsafeViewBackward0", np.reshape, jvp="linear",
                     batched_jvp=formulas.batched_reshape, batches=True, args=("size",),
                     self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
SQUEEZE = OpSpec("squeeze", "SqueezeBackward0", kernels.squeeze, function=True, jvp="linear",
                 batched_jvp=formulas.batched_reshape, view=True, batches=True, args=("dim",),
                 self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
# matmul's 1-D @ 2-D squeezes its mm's fresh result in place (squeeze_(0)): not a view
SQUEEZE_ = OpSpec("squeeze_", "SqueezeBackward4", kernels.squeeze, jvp="linear", batches=True,
                  args=("dim",),
                  self=lambda grad, self_sym_sizes, dim: reshape(grad, self_sym_sizes))
# Tensor.squeeze_ and unsqueeze_ change the tensor's own shape (as transpose_): nodes of
# their own, as torch's (squeeze_() of every size-1 dim, of one dim above, of several dims)
SQUEEZE_ALL_ = OpSpec("squeeze_", "SqueezeBackward3", kernels.squeeze, jvp="linear", args=("dim",),
                      self=lambda grad, self_sym_sizes: reshape(grad, self_sym_sizes))
SQUEEZE_DIMS_ = OpSpec("squeeze_", "SqueezeBackward5", kernels.squeeze, jvp="linear",
                       args=("dim",),
                       self=lambda grad, self_sym_sizes, dim: reshape(grad, self_sym_sizes))
UNSQUEEZE_ = OpSpec("unsqueeze_", "UnsqueezeBackward1", np.expand_dims, jvp="linear",
                    args=("dim",), self=lambda grad, dim: squeeze(grad, dim))
# squeeze(int) and squeeze(tuple) save their dim (an int, a tuple) as torch's nodes do
SQUEEZE_DIM = OpSpec("squeeze", "SqueezeBackward1", kernels.squeeze, jvp="linear", view=True,
                     batched_jvp=formulas.batched_reshape, batches=True, args=("dim",),
                     self=lambda grad, self_sym_sizes, dim: reshape(grad, self_sym_sizes))
SQUEEZE_DIMS = OpSpec("squeeze", "SqueezeBackward2", kernels.squeeze, jvp="linear", view=True,
                      batched_jvp=formulas.batched_reshape, batches=True, args=("dim",),
                      self=lambda grad, self_sym_sizes, dim: reshape(grad, self_sym_sizes))
UNSQUEEZE = OpSpec("unsqueeze", "UnsqueezeBackward0", np.expand_dims, function=True, jvp="linear",
                   batched_jvp=formulas.batched_reshape, view=True, batches=True, args=("dim",),
                   self=lambda grad, dim: squeeze(grad, dim))
TRANSPOSE = OpSpec("transpose", "TransposeBackward0", np.swapaxes, function=True, jvp="linear",
                   batched_jvp=formulas.batched_permute(formulas.transposed), view=True,
                   batches=True, args=("dim0", "dim1"),
                   self=lambda grad, dim0, dim1: transpose(grad, dim0, dim1))
T = OpSpec("t", "TBackward0", np.transpose, function=True, jvp="linear", view=True, batches=True,
           batched_jvp=formulas.batched_permute(formulas.reversed_dims), self=lambda grad: t(grad))
PERMUTE = OpSpec("permute", "PermuteBackward0", np.transpose, function=True, jvp="linear",
                 batched_jvp=formulas.batched_permute(formulas.permuted), view=True, batches=True,
                 args=("dims",), self=lambda grad, dims: permute(grad, tuple(np.argsort(dims))))
EXPAND = OpSpec("expand", "ExpandBackward0", kernels.expand, jvp="linear", view=True,
                batched_jvp=formulas.batched_expand, batches=True, args=("size",),
                self=lambda grad, self_sym_sizes: sum_to(grad, self_sym_sizes))

# ======================= indexing, joining, splitting =======================
# x[...] and x[:, :]: a new tensor on the same memory, as torch
ALIAS = OpSpec("alias", "AliasBackward0", kernels.alias, jvp="linear", view=True, batches=True,
               self=lambda grad: grad)
SELECT = OpSpec("select", "SelectBackward0", kernels.select, jvp="linear", view=True,
                args=("dim", "index"),
                self=lambda grad, self_sym_sizes, dim, index:
                    formulas.select_backward(grad, self_sym_sizes, dim, index))
SLICE = OpSpec("slice", "SliceBackward0", kernels.slice_, jvp="linear", view=True,
               args=("dim", "start", "end", "step"),
               self=lambda grad, self_sym_sizes, dim, start, end, step:
                   formulas.slice_backward(grad, self_sym_sizes, dim, start, end, step))
DIAGONAL = OpSpec("diagonal", "DiagonalBackward0", kernels.diagonal, function=True, jvp="linear",
                  view=True, args=("offset", "dim1", "dim2"),
                  self=lambda grad, self_sym_sizes, offset, dim1, dim2:
                      formulas.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2))
# torch.diag: of a vector, diag_embed; of a matrix, a copy of its diagonal (not a view)
DIAG_EMBED = OpSpec("diag_embed", "DiagEmbedBackward0", kernels.diag_embed, function=True,
                    jvp="linear", args=("offset", "dim1", "dim2"),
                    self=lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2))
DIAGONAL_COPY = OpSpec("diagonal_copy", "DiagonalBackward0_copy", kernels.diagonal_copy,
                       jvp="linear", args=("offset", "dim1", "dim2"),
                       self=lambda grad, self_sym_sizes, offset, dim1, dim2:
                           formulas.diagonal_backward(grad, self_sym_sizes, offset, dim1, dim2))
# detach_copy: a copy that torch records under a node refusing backward (no derivative)
DETACH_COPY = OpSpec("detach_copy", "NotImplemented", np.copy, jvp="elementwise",
                     promotes_dtype=False, self=formulas.not_implemented("detach_copy"))
DETACH_COPY.derivative_implemented = False
# trace: the diagonal's sum; its gradient is grad on the diagonal (trace_backward)
TRACE = OpSpec("trace", "TraceBackward0", kernels.trace, jvp="linear",
               self=lambda grad, self_sym_sizes: formulas.trace_backward(grad, self_sym_sizes))
AS_STRIDED = OpSpec("as_strided", "AsStridedBackward0", kernels.take_flat, jvp="linear",
                    args=("size", "flat_indices"),
                    hidden=("self_sym_sizes", "self_sym_numel", "flat_indices"),
                    self=lambda grad, self_sym_sizes, self_sym_numel, flat_indices: reshape(
                        formulas.index_backward(grad, (self_sym_numel,), (flat_indices,)),
                        self_sym_sizes))
# torch.as_strided: a view of the input's storage (strided.py); each element's gradient goes
# to the input element on its memory, summed where windows overlap (as_strided_backward)
AS_STRIDED_VIEW = OpSpec("as_strided", "AsStridedBackward0", kernels.as_strided, view=True,
                         args=("size", "stride", "storage_offset", "flat_indices"),
                         hidden=("self_sym_sizes", "self_sym_numel", "flat_indices"),
                         jvp=lambda self_t, size, flat_indices: AS_STRIDED(self_t, size,
                                                                           flat_indices),
                         # (size, stride, storage_offset: saved, as torch's node shows them)
                         self=lambda grad, self_sym_sizes, self_sym_numel, flat_indices, size,
                         stride, storage_offset: reshape(formulas.index_backward(
                             grad, (self_sym_numel,), (flat_indices,)), self_sym_sizes))
INDEX = OpSpec("index", "IndexBackward0", kernels.index, jvp="linear", args=("indices",),
               self=lambda grad, self_sym_sizes, indices:
                   formulas.index_backward(grad, self_sym_sizes, indices))
# nn.Embedding's rows of weight picked by integer indices; the padding_idx row (-1: none)
# gets no gradient. Its backward is an op of its own, as torch's (the gradient of gradients)
EMBEDDING = OpSpec("embedding", "EmbeddingBackward0", kernels.embedding, jvp="linear",
                   args=("padding_idx", "scale_grad_by_freq", "sparse"),
                   # (sparse: read by torch's formula, saved as torch does)
                   weight=lambda grad, indices, weight_sym_argsize_0, padding_idx,
                   scale_grad_by_freq, sparse: formulas.embedding_dense_backward(
                       grad, indices, weight_sym_argsize_0, padding_idx, scale_grad_by_freq),
                   indices=NON_DIFFERENTIABLE)
EMBEDDING_DENSE_BACKWARD = OpSpec(
    "embedding_dense_backward", "EmbeddingDenseBackwardBackward0", kernels.embedding_dense_backward,
    jvp="linear", args=("num_weights", "padding_idx", "scale_grad_by_freq"),
    grad_output=formulas.embedding_dense_double_backward, indices=NON_DIFFERENTIABLE)
# nn.EmbeddingBag's bags of rows summed, averaged or maxed (torch's _embedding_bag, with its
# offset2bag, bag_size and max_indices outputs); its gradients are ops torch does not
# differentiate (once_differentiable: a second order raises, at the second backward).
# (scale_grad_by_freq and sparse: saved, as torch's node does; nn.functional refuses them)
EMBEDDING_BAG = OpSpec(
    "_embedding_bag", "EmbeddingBagBackward0", kernels.embedding_bag,
    args=("scale_grad_by_freq", "mode", "sparse", "include_last_offset", "padding_idx"),
    outputs=("result0", "result1", "result2", "result3"),
    nondiff_outputs=("result1", "result2", "result3"), once_differentiable=True,
    jvp=no_forward_ad("_embedding_bag", "weight"),
    weight=lambda grad, indices, offsets, per_sample_weights, result1, result2, result3,
    weight_sym_argsize_0, scale_grad_by_freq, mode, sparse, padding_idx: EMBEDDING_BAG_BACKWARD(
        grad, per_sample_weights, indices, result1, result2, result3, weight_sym_argsize_0,
        mode, padding_idx),
    indices=NON_DIFFERENTIABLE, offsets=NON_DIFFERENTIABLE,
    per_sample_weights=lambda grad, weight, indices, result1, padding_idx:
        EMBEDDING_BAG_PER_SAMPLE_WEIGHTS_BACKWARD(grad, weight, indices, result1, padding_idx))
# torch's _embedding_bag_backward and _embedding_bag_per_sample_weights_backward: out of the
# table (torch does not differentiate them), as CTC_LOSS_BACKWARD
EMBEDDING_BAG_BACKWARD = OpSpec(
    "_embedding_bag_backward", "EmbeddingBagBackwardBackward0", kernels.embedding_bag_backward,
    args=("num_weights", "mode", "padding_idx"),
    jvp=no_forward_ad("_embedding_bag_backward", "grad_output"),
    grad_output=formulas.derivative_not_implemented("_embedding_bag_backward"),
    per_sample_weights=formulas.derivative_not_implemented("_embedding_bag_backward"),
    indices=NON_DIFFERENTIABLE, offset2bag=NON_DIFFERENTIABLE, bag_size=NON_DIFFERENTIABLE,
    maximum_indices=NON_DIFFERENTIABLE)
EMBEDDING_BAG_BACKWARD.derivative_implemented = False
EMBEDDING_BAG_PER_SAMPLE_WEIGHTS_BACKWARD = OpSpec(
    "_embedding_bag_per_sample_weights_backward", "NotImplemented",
    kernels.embedding_bag_per_sample_weights_backward, args=("padding_idx",),
    jvp=no_forward_ad("_embedding_bag_per_sample_weights_backward", "grad_output"),
    grad_output=formulas.not_implemented("_embedding_bag_per_sample_weights_backward"),
    weight=formulas.not_implemented("_embedding_bag_per_sample_weights_backward"),
    indices=NON_DIFFERENTIABLE, offset2bag=NON_DIFFERENTIABLE)
EMBEDDING_BAG_PER_SAMPLE_WEIGHTS_BACKWARD.derivative_implemented = False
# leaky_relu's backward as an op of its own, as torch's: differentiable in `self` (with
# derivative zero), so gradients of gradients require grad as torch's do
LEAKY_RELU_BACKWARD = OpSpec("leaky_relu_backward", "LeakyReluBackwardBackward0",
                             kernels.leaky_relu_backward, jvp="elementwise",
                             args=("negative_slope", "self_is_result"),
                             grad_output=lambda grad, self, negative_slope:
                                 formulas.leaky_relu_backward(grad, self, negative_slope, False),
                             self=lambda grad: zeros_like(grad))
THRESHOLD_BACKWARD = OpSpec("threshold_backward", "ThresholdBackwardBackward0",
                            kernels.threshold_backward, jvp="elementwise", args=("threshold",),
                            grad_output=formulas.threshold_backward,
                            self=lambda grad: zeros_like(grad))
SELECT_BACKWARD = OpSpec("select_backward", "SelectBackwardBackward0", kernels.select_backward,
                         jvp="linear", args=("input_sizes", "dim", "index"),
                         grad_output=lambda grad, dim, index: select(grad, dim, index))
SLICE_BACKWARD = OpSpec("slice_backward", "SliceBackwardBackward0", kernels.slice_backward,
                        jvp="linear", args=("input_sizes", "dim", "start", "end", "step"),
                        grad_output=lambda grad, dim, start, end, step:
                            slice(grad, dim, start, end, step))
DIAGONAL_BACKWARD = OpSpec("diagonal_backward", "DiagonalBackwardBackward0",
                           kernels.diagonal_backward, jvp="linear",
                           args=("input_sizes", "offset", "dim1", "dim2"),
                           grad_output=lambda grad, offset, dim1, dim2:
                               diagonal(grad, offset, dim1, dim2))
INDEX_BACKWARD = OpSpec("index_backward", "IndexBackwardBackward0", kernels.index_backward,
                        jvp="linear", args=("input_sizes", "indices"),
                        grad_output=lambda grad, indices: index(grad, indices))
INDEX_PUT = OpSpec("index_put", "IndexPutBackward0", kernels.index_put, jvp="linear",
                   args=("indices", "accumulate"), writes_overlapping=True, reads_no_overlap=True,
                   self=lambda grad, indices, accumulate:
                       grad if accumulate else index_put(grad, indices, 0),
                   values=lambda grad, indices: index(grad, indices))
# compressed sparse layouts (CSR, CSC, BSR, BSC), held densely: built from values at their
# coordinates; to_dense passes on the gradient of the specified elements alone (torch's
# sparse_mask), a conversion to a compressed layout the whole gradient; values() picks them
SPARSE_COMPRESSED_TENSOR = OpSpec(
    "_sparse_compressed_tensor_unsafe", "SparseCompressedTensorBackward0",
    kernels.sparse_compressed_dense, args=("coordinates", "size"), jvp="linear",
    hidden=("coordinates",),
    values=lambda grad, values, result, coordinates: index(grad, coordinates))
TO_DENSE = OpSpec("to_dense", "ToDenseBackward0", kernels.masked_dense, args=("mask",),
                  jvp="linear", hidden=("mask",),
                  self=lambda grad, self, mask: where(_constant(mask, grad), grad, 0))
TO_SPARSE = {layout: OpSpec(f"to_sparse_{layout}", f"ToSparse{layout.capitalize()}Backward0",
                            kernels.masked_dense, args=("mask",), jvp="linear",
                            hidden=("mask",), self=lambda grad: grad)
             for layout in ("csr", "csc", "bsr", "bsc")}
TO_SPARSE_CSR, TO_SPARSE_CSC, TO_SPARSE_BSR, TO_SPARSE_BSC = TO_SPARSE.values()
VALUES = OpSpec("values", "ValuesBackward0", kernels.index, args=("coordinates",),
                jvp="linear", hidden=("coordinates",),
                self=lambda grad, self, coordinates: index_put(zeros_like(self), coordinates,
                                                               grad))
GATHER = OpSpec("gather", "GatherBackward0", kernels.gather, function=True, jvp="linear",
                args=("dim", "sparse_grad"),
                self=lambda grad, self, dim, index, sparse_grad: scatter_add(
                    zeros(self.shape, grad), dim, index, grad),
                index=NON_DIFFERENTIABLE)
SCATTER = OpSpec("scatter", "ScatterBackward0", kernels.scatter, function=True, jvp="linear",
                 args=("dim",), self=lambda grad, dim, index: scatter(grad, dim, index, 0),
                 index=NON_DIFFERENTIABLE, src=lambda grad, dim, index: gather(grad, dim, index))
SCATTER_VALUE = OpSpec("scatter", "ScatterBackward1", kernels.scatter_value,
                       jvp=lambda self_t, dim, index: scatter(self_t, dim, index, 0),
                       args=("dim", "value"),
                       self=lambda grad, dim, index: scatter(grad, dim, index, 0),
                       index=NON_DIFFERENTIABLE)
SCATTER_ADD = OpSpec("scatter_add", "ScatterAddBackward0", kernels.scatter_add, function=True,
                     jvp="linear", args=("dim",), self=lambda grad: grad, index=NON_DIFFERENTIABLE,
                     src=lambda grad, dim, index: gather(grad, dim, index))
# scatter_reduce: src reduced into self at index by sum, prod, mean, amax or amin (with or
# without self's own values); torch's gradients for each (formulas.scatter_reduce_backward)
SCATTER_REDUCE = OpSpec("scatter_reduce", "ScatterReduceBackward0", kernels.scatter_reduce,
                        args=("dim", "reduce", "include_self"), jvp=formulas.scatter_reduce_jvp,
                        self=lambda grad, self, index, src, dim, reduce, include_self, result:
                            formulas.scatter_reduce_backward(
                                grad, self, index, src, dim, reduce, include_self, result)[0],
                        index=NON_DIFFERENTIABLE,
                        src=lambda grad, self, index, src, dim, reduce, include_self, result:
                            formulas.scatter_reduce_backward(
                                grad, self, index, src, dim, reduce, include_self, result)[1])
# index_reduce: source's slices along dim reduced into self's slices at a 1-d index by prod,
# mean, amax or amin: scatter_reduce's gradients, the index spread over each slice
INDEX_REDUCE = OpSpec("index_reduce", "IndexReduceBackward0", kernels.index_reduce,
                      args=("dim", "reduce", "include_self"),
                      jvp=no_forward_ad("index_reduce", "self"),
                      self=lambda grad, self, index, source, dim, reduce, include_self, result:
                          formulas.index_reduce_backward(
                              grad, self, index, source, dim, reduce, include_self, result)[0],
                      index=NON_DIFFERENTIABLE,
                      source=lambda grad, self, index, source, dim, reduce, include_self, result:
                          formulas.index_reduce_backward(
                              grad, self, index, source, dim, reduce, include_self, result)[1])
MASKED_SELECT = OpSpec("masked_select", "MaskedSelectBackward0", kernels.masked_select,
                       function=True, jvp="linear", self=formulas.masked_select_backward,
                       mask=NON_DIFFERENTIABLE)
# index_copy, index_fill: slices along dim at `index` overwritten (by source's slices, by a
# number); what was there gets no gradient
INDEX_COPY = OpSpec("index_copy", "IndexCopyBackward0", kernels.index_copy, function=True,
                    jvp="linear", args=("dim",), reads_no_overlap=True,
                    self=lambda grad, dim, index: formulas.index_fill(grad, dim, index, 0),
                    index=NON_DIFFERENTIABLE,
                    source=lambda grad, dim, index, source, source_dim: reshape(
                        index_select(grad, dim, index), source.shape)
                        if source_dim == 0 else index_select(grad, dim, index))
INDEX_FILL = OpSpec("index_fill", "IndexFillBackward0", kernels.index_fill, function=True,
                    jvp=lambda self_t, dim, index: formulas.index_fill(self_t, dim, index, 0),
                    args=("dim", "value"), writes_overlapping=True,
                    self=lambda grad, dim, index: formulas.index_fill(grad, dim, index, 0),
                    index=NON_DIFFERENTIABLE)
# put and take address the tensor as one flat dim
PUT = OpSpec("put", "PutBackward0", kernels.put, function=True, jvp="linear",
             args=("accumulate",), reads_no_overlap=True, hidden=("source_sym_sizes",),
             self=lambda grad, index, source_sym_sizes, accumulate: grad if accumulate
                 else formulas.put(grad, index, zeros(source_sym_sizes, grad), False),
             index=NON_DIFFERENTIABLE,
             source=lambda grad, index, source: reshape(formulas.take(grad, index), source.shape))
TAKE = OpSpec("take", "TakeBackward0", kernels.take, function=True, jvp="linear",
              self=lambda grad, self, index: formulas.put(zeros_like(self), index, grad, True),
              index=NON_DIFFERENTIABLE)
# select_scatter, slice_scatter, diagonal_scatter: src written into a copy of self where the
# view op (select, slice, diagonal) reads; src gets the view of the gradient, self the rest
SELECT_SCATTER = OpSpec("select_scatter", "SelectScatterBackward0", kernels.select_scatter,
                        function=True, jvp="linear", args=("dim", "index"),
                        self=lambda grad, dim, index: formulas.select_scatter(
                            grad, zeros_like(select(grad, dim, index)), dim, index),
                        src=lambda grad, dim, index: select(grad, dim, index))
SLICE_SCATTER = OpSpec("slice_scatter", "SliceScatterBackward0", kernels.slice_scatter,
                       function=True, jvp="linear", args=("dim", "start", "end", "step"),
                       self=lambda grad, dim, start, end, step: formulas.slice_scatter(
                           grad, zeros_like(slice(grad, dim, start, end, step)), dim, start, end,
                           step),
                       src=lambda grad, dim, start, end, step: slice(grad, dim, start, end, step))
DIAGONAL_SCATTER = OpSpec("diagonal_scatter", "DiagonalScatterBackward0",
                          kernels.diagonal_scatter, function=True, jvp="linear",
                          args=("offset", "dim1", "dim2"),
                          self=lambda grad, offset, dim1, dim2: formulas.diagonal_scatter(
                              grad, zeros_like(diagonal(grad, offset, dim1, dim2)), offset, dim1,
                              dim2),
                          src=lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2))
# masked_scatter: source's leading elements, in order, where the (broadcast) mask is true
MASKED_SCATTER = OpSpec("masked_scatter", "MaskedScatterBackward0", kernels.masked_scatter,
                        function=True, jvp="linear", broadcasts=True,
                        self=lambda grad, mask: masked_fill(grad, mask, 0),
                        mask=NON_DIFFERENTIABLE,
                        source=lambda grad, mask, source_sym_sizes:
                            formulas.masked_scatter_backward(grad, mask, source_sym_sizes))
# unfold: windows along a dim (a view); its backward adds each window back, an op of its own
UNFOLD = OpSpec("unfold", "UnfoldBackward0", kernels.unfold, jvp="linear", view=True,
                args=("dimension", "size", "step"),
                self=lambda grad, self_sym_sizes, dimension, size, step:
                    formulas.unfold_backward(grad, self_sym_sizes, dimension, size, step))
UNFOLD_BACKWARD = OpSpec("unfold_backward", "UnfoldBackwardBackward0", kernels.unfold_backward,
                         jvp="linear", args=("input_sizes", "dim", "size", "step"),
                         grad_in=lambda grad, dim, size, step:
                             formulas.unfold(grad, dim, size, step))
CAT = OpSpec("cat", "CatBackward0", np.concatenate, jvp="linear", args=("dim",), variadic=True,
             batches=True, promotion="promote",
             tensors=lambda grad, tensors_args_sizes, dim:
                 formulas.cat_backward(grad, tensors_args_sizes, dim))
STACK = OpSpec("stack", "StackBackward0", np.stack, jvp="linear", args=("dim",), variadic=True,
               batches=True, promotion="promote", tensors=lambda grad, dim: unbind(grad, dim))
# block_diag: the tensors (0-d as 1x1, 1-d as a row) down the diagonal of a matrix of zeros;
# each gets its block of the gradient back
BLOCK_DIAG = OpSpec("block_diag", "BlockDiagBackward0", kernels.block_diag, jvp="linear",
                    variadic=True, promotion="promote",
                    tensors=lambda grad, tensors_args_sizes:
                        formulas.block_diag_backward(grad, tensors_args_sizes))
UNBIND = OpSpec("unbind", "UnbindBackward0", kernels.unbind, function=True, jvp="linear", view=True,
                args=("dim",), outputs=MANY, self=lambda grads, dim: stack(grads, dim))
SPLIT = OpSpec("split", "SplitBackward0", kernels.split, function=True, jvp="linear", view=True,
               args=("split_size", "dim"), outputs=MANY,
               self=lambda grads, self_sym_sizes, split_size, dim: cat(grads, dim))
# unsafe_split / unsafe_chunk: split's outputs, not tracked as views (the RNN cells' gates)
UNSAFE_SPLIT = OpSpec("unsafe_split", "UnsafeSplitBackward0", kernels.split, function=True,
                      jvp="linear", args=("split_size", "dim"), outputs=MANY,
                      self=lambda grads, self_sym_sizes, split_size, dim: cat(grads, dim))
UNSAFE_SPLIT_WITH_SIZES = OpSpec("unsafe_split_with_sizes", "UnsafeSplitWithSizesBackward0",
                                 kernels.split_with_sizes, function=True, jvp="linear",
                                 args=("split_sizes", "dim"), outputs=MANY,
                                 self=lambda grads, self_sym_sizes, split_sizes, dim:
                                     cat(grads, dim))
SPLIT_WITH_SIZES = OpSpec("split_with_sizes", "SplitWithSizesBackward0", kernels.split_with_sizes,
                          jvp="linear", view=True, args=("split_sizes", "dim"), outputs=MANY,
                          self=lambda grads, self_sym_sizes, split_sizes, dim: cat(grads, dim))

# ======================= activations =======================
ERF = OpSpec("erf", "ErfBackward0", kernels.erf, jvp="elementwise", batches=True, method=True,
             promotion="float", self=formulas.erf_backward)
GELU = OpSpec("gelu", "GeluBackward0", kernels.gelu, jvp="elementwise", batches=True,
              args=("approximate",), self=formulas.gelu_backward)
SILU = OpSpec("silu", "SiluBackward0", kernels.silu, jvp="elementwise", batches=True,
              self=formulas.silu_backward)
SOFTPLUS = OpSpec("softplus", "SoftplusBackward0", kernels.softplus, jvp="elementwise",
                  batches=True, args=("beta", "threshold"), self=formulas.softplus_backward)
# leaky_relu'(0) = negative_slope: the gradient passes whole only where x > 0 (as torch);
# in place (leaky_relu_) the input is gone: the output's sign says which side it was on
LEAKY_RELU = OpSpec("leaky_relu", "LeakyReluBackward0", kernels.leaky_relu, jvp="elementwise",
                    batches=True, args=("negative_slope",), in_place_node="LeakyReluBackward1",
                    self=lambda grad, self, negative_slope, self_is_result=False:
                        formulas.leaky_relu_backward(grad, self, negative_slope, self_is_result))
ELU = OpSpec("elu", "EluBackward0", kernels.elu, jvp="elementwise", batches=True,
             args=("alpha", "scale", "input_scale"), in_place_node="EluBackward1",
             self=lambda grad, self, alpha, scale, input_scale, self_is_result=False:
                 formulas.elu_backward(grad, alpha, scale, input_scale, self_is_result, self))
BERNOULLI = OpSpec("bernoulli", "BernoulliBackward0", kernels.bernoulli, function=True,
                   jvp="elementwise", args=("generator",), self=lambda grad: zeros_like(grad))
# Tensor.bernoulli_(p): self overwritten by draws of probability p, a number
# (BernoulliBackward2) or a tensor (BernoulliBackward1); no gradient, as torch's
BERNOULLI_FILL = OpSpec("bernoulli_", "BernoulliBackward2", kernels.bernoulli_fill,
                        jvp="elementwise", args=("p", "generator"),
                        self=lambda grad: zeros_like(grad))
BERNOULLI_FILL_TENSOR = OpSpec("bernoulli_", "BernoulliBackward1", kernels.bernoulli_fill,
                               jvp="elementwise", args=("generator",),
                               self=lambda grad: zeros_like(grad),
                               p=lambda grad, p: zeros_like(p))

# more of nn's activations
# torch's own nodes for nn's activations (hardtanh also serves relu6); each gradient is
# torch's at the kinks: hardtanh and hardsigmoid pass nothing at their bounds, hardswish
# takes its middle piece at +-3.

def _tanh_softplus(x):
    """tanh(softplus(x)) from sigmoid(x), which never overflows: 1 + e^x = 1 / (1 - s)."""
    u = 1 - _sigmoid(x)
    return (1 - u * u) / (1 + u * u)


_SIXTH = float(np.float32(1 / 6))  # torch's hardsigmoid_backward scales by 1.0f / 6 (a float)
HARDTANH = OpSpec("hardtanh", "HardtanhBackward0", lambda x, lo, hi: np.clip(x, lo, hi),
                  jvp="elementwise", batches=True, args=("min_val", "max_val"),
                  self=lambda grad, self, min_val, max_val:
                      grad * ((self > min_val) & (self < max_val)))
HARDSIGMOID = OpSpec("hardsigmoid", "HardsigmoidBackward0",
                     kernels.rounded_once(lambda x: np.clip(x / 6 + 0.5, 0, 1)),
                     jvp="elementwise", batches=True,
                     self=lambda grad, self: grad * ((self > -3) & (self < 3)) * _SIXTH)
HARDSWISH = OpSpec("hardswish", "HardswishBackward0",
                   kernels.rounded_once(lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
                   jvp="elementwise", batches=True,
                   self=lambda grad, self: where(self < -3, 0 * grad, where(
                       self <= 3, grad * (self / 3 + 0.5), grad)))
MISH = OpSpec("mish", "MishBackward0",
              kernels.rounded_once(lambda x: x * np.tanh(np.logaddexp(0, x))),
              jvp="elementwise", batches=True,
              self=lambda grad, self: grad * (_tanh_softplus(self) + self * _sigmoid(self) * (
                  1 - _tanh_softplus(self) ** 2)))
# log_sigmoid saves torch's `buffer` beside the input: exp(-|x|), which its CPU kernel keeps
LOG_SIGMOID = OpSpec("log_sigmoid_forward", "LogSigmoidBackward0",
                     lambda x: ((np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))).astype(
                         x.dtype, copy=False), np.exp(-np.abs(x)).astype(x.dtype, copy=False)),
                     outputs=("output", "buffer"), nondiff_outputs=("buffer",),
                     jvp=lambda self_t, self: [self_t * _sigmoid(-self), None],
                     self=lambda grad, self, buffer: grad * _sigmoid(-self))
# prelu: x where x > 0, else weight * x, the weight broadcast (nn.PReLU's per channel)
PRELU = OpSpec("_prelu_kernel", "PreluKernelBackward0",
               lambda x, w: np.where(x > 0, x, w * x), **_BROADCASTING,
               self=lambda grad, self, weight: where(self > 0, grad, weight * grad),
               weight=lambda grad, self: where(self > 0, 0 * grad, self * grad))


def _glu_halves(x, dim):
    n = x.shape[dim] // 2
    return slice(x, dim, 0, n, 1), slice(x, dim, n, 2 * n, 1)


def _glu_backward(grad, self, dim):
    a, b = _glu_halves(self, dim)
    s = _sigmoid(b)
    return cat([grad * s, grad * a * s * (1 - s)], dim)


def _glu_jvp(self_t, self, dim):
    (a, b), (a_t, b_t) = _glu_halves(self, dim), _glu_halves(self_t, dim)
    s = _sigmoid(b)
    return a_t * s + a * s * (1 - s) * b_t


def _glu_kernel(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return (a / (1 + np.exp(-b))).astype(x.dtype, copy=False)


# glu: a * sigmoid(b), a and b the halves of the input along dim
GLU = OpSpec("glu", "GluBackward0", _glu_kernel, args=("dim",), jvp=_glu_jvp,
             self=_glu_backward)

# the shrinks pass the gradient where |x| > lambd, nothing on [-lambd, lambd] (as torch's)
def _shrunk(x, lambd):
    return (x < -lambd) | (x > lambd)


HARDSHRINK = OpSpec("hardshrink", "HardshrinkBackward0",
                    lambda x, lambd: np.where(_shrunk(x, lambd), x, 0).astype(x.dtype, copy=False),
                    jvp="elementwise", batches=True, args=("lambd",),
                    self=lambda grad, self, lambd: grad * _shrunk(self, lambd))
SOFTSHRINK = OpSpec("softshrink", "SoftshrinkBackward0",
                    lambda x, lambd: np.where(_shrunk(x, lambd), x - np.sign(x) * lambd, 0).astype(
                        x.dtype, copy=False),
                    jvp="elementwise", batches=True, args=("lambd",),
                    self=lambda grad, self, lambd: grad * _shrunk(self, lambd))
# threshold: x where x > threshold, else value; its gradient is relu's threshold_backward.
# threshold_ keeps the input as it was (ThresholdBackward1 saves self, not the result)
_THRESHOLD_FIELDS = dict(jvp="elementwise", batches=True, args=("threshold", "value"),
                         self=lambda grad, self, threshold:
                             formulas.threshold_backward(grad, self, threshold))
THRESHOLD = OpSpec("threshold", "ThresholdBackward0", kernels.threshold, **_THRESHOLD_FIELDS)
THRESHOLD_ = OpSpec("threshold_", "ThresholdBackward1", kernels.threshold, **_THRESHOLD_FIELDS)
# celu(x, alpha) = elu(x, alpha, scale=1, input_scale=1/alpha), torch's nodes of its own
CELU = OpSpec("celu", "CeluBackward0", kernels.celu, jvp="elementwise", batches=True,
              args=("alpha",), in_place_node="CeluBackward1",
              self=lambda grad, self, alpha, self_is_result=False: formulas.elu_backward(
                  grad, alpha, 1, 1 / alpha, self_is_result, self))
# rrelu: x * noise, the noise drawn by nn.functional (1 where x > 0, U(lower, upper) below) in
# training; leaky_relu with the mean slope (lower + upper) / 2 otherwise
RRELU_WITH_NOISE = OpSpec(
    "rrelu_with_noise", "RreluWithNoiseBackward0", kernels.rrelu_with_noise, jvp="elementwise",
    batches=True, args=("lower", "upper", "training"), in_place_node="RreluWithNoiseBackward1",
    self=formulas.rrelu_with_noise_backward, noise=NON_DIFFERENTIABLE)


# ======================= losses (one node each, as torch's) =======================
# reduction is torch's enum: 0 none, 1 mean, 2 sum
MSE_LOSS = OpSpec("mse_loss", "MseLossBackward0", kernels.mse_loss, args=("reduction",),
                  jvp=lambda self_t, target_t, self, target, reduction: formulas.reduce_loss(
                      formulas.mse_loss_backward(1, self, target, 0) * (self_t - target_t),
                      reduction),
                  self=formulas.mse_loss_backward,
                  target=lambda grad, self, target, reduction:
                      -formulas.mse_loss_backward(grad, self, target, reduction))
SMOOTH_L1_LOSS = OpSpec(
    "smooth_l1_loss", "SmoothL1LossBackward0", kernels.smooth_l1_loss,
    jvp=lambda self_t, target_t, self, target, reduction, beta: formulas.reduce_loss(
        formulas.smooth_l1_loss_backward(1, self, target, 0, beta) * (self_t - target_t),
        reduction),
    args=("reduction", "beta"), self=formulas.smooth_l1_loss_backward,
    target=lambda grad, self, target, reduction, beta:
        -formulas.smooth_l1_loss_backward(grad, self, target, reduction, beta))
HUBER_LOSS = OpSpec(
    "huber_loss", "HuberLossBackward0", kernels.huber_loss, args=("reduction", "delta"),
    jvp=lambda self_t, target_t, self, target, reduction, delta: formulas.reduce_loss(
        formulas.huber_loss_backward(1, self, target, 0, delta) * (self_t - target_t),
        reduction),
    self=formulas.huber_loss_backward,
    target=lambda grad, self, target, reduction, delta:
        -formulas.huber_loss_backward(grad, self, target, reduction, delta))
BINARY_CROSS_ENTROPY = OpSpec(
    "binary_cross_entropy", "BinaryCrossEntropyBackward0", kernels.binary_cross_entropy,
    jvp=lambda self_t, target_t, self, target, weight, reduction: formulas.reduce_loss(
        formulas.binary_cross_entropy_backward(self_t, self, target, weight, 0)
        + formulas.binary_cross_entropy_target_backward(target_t, self, target, weight, 0),
        reduction),
    args=("reduction",), self=formulas.binary_cross_entropy_backward,
    target=formulas.binary_cross_entropy_target_backward, weight=NON_DIFFERENTIABLE)
BINARY_CROSS_ENTROPY_WITH_LOGITS = OpSpec(
    "binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
    kernels.binary_cross_entropy_with_logits, args=("reduction",),
    jvp=lambda self_t, target_t, self, target, weight, pos_weight, reduction:
        formulas.reduce_loss(
            formulas.bce_with_logits_backward(self_t, self, target, weight, pos_weight, 0)
            + formulas.bce_with_logits_target_backward(target_t, self, target, weight,
                                                       pos_weight, 0), reduction),
    self=formulas.bce_with_logits_backward,
    target=formulas.bce_with_logits_target_backward,
    weight=NON_DIFFERENTIABLE, pos_weight=NON_DIFFERENTIABLE)
SOFT_MARGIN_LOSS = OpSpec(
    "soft_margin_loss", "SoftMarginLossBackward0", kernels.soft_margin_loss,
    args=("reduction",),
    jvp=lambda self_t, self, target, reduction: formulas.reduce_loss(
        formulas.soft_margin_loss_backward(1, self, target, 0) * self_t, reduction),
    self=formulas.soft_margin_loss_backward, target=NON_DIFFERENTIABLE)
# the per-sample jvp: the backward with each sample's gradient 1 (reduction sum), summed
MULTI_MARGIN_LOSS = OpSpec(
    "multi_margin_loss", "MultiMarginLossBackward0", kernels.multi_margin_loss,
    args=("p", "margin", "reduction"),
    jvp=lambda self_t, self, target, weight, p, margin, reduction: formulas.reduce_loss(
        sum(formulas.multi_margin_loss_backward(1, self, target, weight, p, margin, 2)
            * self_t, -1), reduction),
    self=formulas.multi_margin_loss_backward, target=NON_DIFFERENTIABLE,
    weight=NON_DIFFERENTIABLE)
# is_target (which classes a row lists) is its second output, saved, as torch's
MULTILABEL_MARGIN_LOSS = OpSpec(
    "multilabel_margin_loss", "MultilabelMarginLossBackward0", kernels.multilabel_margin_loss,
    args=("reduction",), outputs=("result", "is_target"), nondiff_outputs=("is_target",),
    jvp=lambda self_t, self, target, reduction, is_target: formulas.reduce_loss(
        sum(formulas.multilabel_margin_loss_backward(1, self, target, 2, is_target)
            * self_t, -1), reduction),
    self=formulas.multilabel_margin_loss_backward, target=NON_DIFFERENTIABLE)
# nll_loss's second output is the total weight the mean divides by (saved, as torch)
_NLL_LOSS = dict(
    jvp="linear", args=("reduction", "ignore_index"), outputs=("result", "total_weight"),
    nondiff_outputs=("total_weight",),
    self=formulas.nll_loss_backward,
    target=NON_DIFFERENTIABLE, weight=NON_DIFFERENTIABLE)  # (inputs in the forward's order)
NLL_LOSS = OpSpec("nll_loss", "NllLossBackward0", kernels.nll_loss, **_NLL_LOSS)
# (N, C, H, W) inputs
NLL_LOSS2D = OpSpec("nll_loss2d", "NllLoss2DBackward0", kernels.nll_loss, **_NLL_LOSS)
# their backward, an op (its gradient is nll_loss of the gradient's gradient; none for self)
_NLL_LOSS_BACKWARD = dict(
    jvp="linear", args=("reduction", "ignore_index"),
    grad_output=lambda grad, target, weight, reduction, ignore_index:
        formulas.nll_loss(grad, target, weight, reduction, ignore_index),
    self=lambda grad: zeros_like(grad), target=NON_DIFFERENTIABLE, weight=NON_DIFFERENTIABLE,
    total_weight=NON_DIFFERENTIABLE)
NLL_LOSS_BACKWARD = OpSpec("nll_loss_backward", "NllLossBackwardBackward0",
                           kernels.nll_loss_backward, **_NLL_LOSS_BACKWARD)
NLL_LOSS2D_BACKWARD = OpSpec("nll_loss2d_backward", "NllLoss2DBackwardBackward0",
                             kernels.nll_loss_backward, **_NLL_LOSS_BACKWARD)
# CTC: the loss per sample (result0) and log_alpha (result1, saved for the backward); torch
# has no forward AD for it, and its backward is an op torch does not differentiate
# (once_differentiable: a second order raises, at the second backward)
CTC_LOSS = OpSpec(
    "_ctc_loss", "CtcLossBackward0", kernels.ctc_loss,
    args=("input_lengths", "target_lengths", "blank", "zero_infinity"),
    outputs=("result0", "result1"), nondiff_outputs=("result1",), once_differentiable=True,
    jvp=no_forward_ad("_ctc_loss", "log_probs"),
    log_probs=lambda grad, log_probs, targets, input_lengths, target_lengths, result0,
                     result1, blank, zero_infinity: CTC_LOSS_BACKWARD(
        grad, log_probs, targets, result0, result1, input_lengths, target_lengths, blank,
        zero_infinity),
    targets=NON_DIFFERENTIABLE)
# torch's _ctc_loss_backward: out of the table (torch does not differentiate it), which is
# why CTC_LOSS's formula runs it from here rather than from formulas.py
CTC_LOSS_BACKWARD = OpSpec(
    "_ctc_loss_backward", "NotImplemented", kernels.ctc_loss_backward,
    args=("input_lengths", "target_lengths", "blank", "zero_infinity"),
    jvp=no_forward_ad("_ctc_loss_backward", "grad_output"),
    grad_output=formulas.not_implemented("_ctc_loss_backward"),
    log_probs=formulas.not_implemented("_ctc_loss_backward"), targets=NON_DIFFERENTIABLE,
    neg_log_likelihood=NON_DIFFERENTIABLE, log_alpha=NON_DIFFERENTIABLE)
CTC_LOSS_BACKWARD.derivative_implemented = False
# mean (result1) and 1/std (result2) are outputs, saved; the formulas use them
NATIVE_LAYER_NORM = OpSpec(
    "native_layer_norm", "NativeLayerNormBackward0", kernels.native_layer_norm,
    args=("normalized_shape", "eps"), outputs=("result", "result1", "result2"),
    nondiff_outputs=("result1", "result2"), jvp=formulas.layer_norm_jvp,
    # torch's one formula for the three reads input, weight and bias: it saves all of them
    input=lambda grad, input, weight, bias, normalized_shape, result1, result2:
        formulas.layer_norm_backward_input(grad, input, weight, normalized_shape, result1, result2),
    weight=lambda grad, input, weight, bias, normalized_shape, result1, result2:
        formulas.layer_norm_backward_weight(grad, input, normalized_shape, result1, result2),
    bias=lambda grad, normalized_shape, bias: sum_to(grad, bias.shape))

# ======================= reductions with two results, scans =======================
VAR_MEAN = OpSpec("var_mean", "VarMeanBackward0", kernels.var_mean,
                  args=("dim", "correction", "keepdim"),
                  jvp=lambda self_t, self, dim, correction, keepdim, result0:
                      formulas.var_mean_jvp(self_t, self, dim, correction, keepdim, result0),
                  outputs=("result0", "result1"), undefined_grads=True,
                  self=formulas.var_mean_backward)
STD_MEAN = OpSpec("std_mean", "StdMeanBackward0", kernels.std_mean,
                  args=("dim", "correction", "keepdim"),
                  jvp=lambda self_t, self, dim, correction, keepdim, result0:
                      formulas.var_mean_jvp(self_t, self, dim, correction, keepdim, result0,
                                            std=True),
                  outputs=("result0", "result1"), undefined_grads=True,
                  self=formulas.std_mean_backward)
# the most frequent value along dim (the least of equally frequent ones), at its last index
MODE = OpSpec("mode", "ModeBackward0", kernels.mode, function=True, jvp="reduction",
              args=("dim", "keepdim"), outputs=("values", "indices"), nondiff_outputs=("indices",),
              self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                  formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes, keepdim))
# the k-th smallest value along dim, at the index torch's quickselect finds
KTHVALUE = OpSpec("kthvalue", "KthvalueBackward0", kernels.kthvalue, jvp="reduction",
                  args=("k", "dim", "keepdim"), outputs=("values", "indices"),
                  nondiff_outputs=("indices",),
                  self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                      formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes,
                                                        keepdim))
CUMSUM = OpSpec("cumsum", "CumsumBackward0", kernels.cumsum, function=True, jvp="linear",
                batches=True, args=("dim",), self=formulas.reverse_cumsum)
CUMPROD = OpSpec("cumprod", "CumprodBackward0", kernels.cumprod, function=True, args=("dim",),
                 jvp=formulas.cumprod_jvp,
                 self=formulas.cumprod_backward)
# cummax / cummin: the running extreme and the index it came from (a later equal value takes
# over; a NaN, once met, stays); each gradient goes back to the index it came from
CUMMAX = OpSpec("cummax", "CummaxBackward0", kernels.cummax, args=("dim",),
                outputs=("values", "indices"), nondiff_outputs=("indices",),
                jvp=lambda self_t, dim, indices: gather(self_t, dim, indices),
                self=formulas.cummaxmin_backward)
CUMMIN = OpSpec("cummin", "CumminBackward0", kernels.cummin, args=("dim",),
                outputs=("values", "indices"), nondiff_outputs=("indices",),
                jvp=lambda self_t, dim, indices: gather(self_t, dim, indices),
                self=formulas.cummaxmin_backward)
# logcumsumexp: log of the running sum of exp, float only; its backward and jvp are torch's
# (written with logcumsumexp itself, so that large inputs do not overflow)
LOGCUMSUMEXP = OpSpec("logcumsumexp", "LogcumsumexpBackward0", kernels.logcumsumexp, args=("dim",),
                      jvp=formulas.logcumsumexp_jvp, self=formulas.logcumsumexp_backward)
# aminmax: the least and the greatest element (of all, or along dim) at once; each output's
# gradient is spread over the elements equal to it, as amin's and amax's
AMINMAX = OpSpec("aminmax", "AminmaxBackward0", kernels.aminmax, args=("dim", "keepdim"),
                 outputs=("min", "max"), jvp=formulas.aminmax_jvp,
                 self=formulas.aminmax_backward)
# nanmedian: median of the elements that are not NaN (NaN only where all are), as median's
NANMEDIAN = OpSpec("nanmedian", "NanmedianBackward0", kernels.nanmedian_all, jvp="reduction",
                   self=formulas.evenly_distribute_backward)
NANMEDIAN_DIM = OpSpec("nanmedian", "NanmedianBackward1", kernels.nanmedian_dim, jvp="reduction",
                       args=("dim", "keepdim"), outputs=("result", "indices"),
                       nondiff_outputs=("indices",),
                       self=lambda grad, dim, indices, keepdim, self_sym_sizes:
                           formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes,
                                                             keepdim))

# ======================= reordering, repeating =======================
FLIP = OpSpec("flip", "FlipBackward0", kernels.flip, function=True, jvp="linear", batches=True,
              args=("dims",), self=lambda grad, dims: flip(grad, dims))
ROLL = OpSpec("roll", "RollBackward0", kernels.roll, function=True, jvp="linear",
              args=("shifts", "dims"),
              self=lambda grad, shifts, dims: roll(grad, tuple(-s for s in shifts), dims))
REPEAT = OpSpec("repeat", "RepeatBackward0", kernels.repeat, jvp="linear", args=("repeats",),
                self=lambda grad, repeats, self_sym_sizes:
                    formulas.repeat_backward(grad, repeats, self_sym_sizes))
TRIU = OpSpec("triu", "TriuBackward0", np.triu, function=True, jvp="linear", batches=True,
              args=("diagonal",), self=lambda grad, diagonal: triu(grad, diagonal))
TRIL = OpSpec("tril", "TrilBackward0", np.tril, function=True, jvp="linear", batches=True,
              args=("diagonal",), self=lambda grad, diagonal: tril(grad, diagonal))
# transpose_ changes the tensor's own shape (see Tensor.transpose_)
TRANSPOSE_ = OpSpec("transpose_", "TransposeBackward1", np.swapaxes,
                    jvp=lambda self_t, dim0, dim1: transpose(self_t, dim0, dim1),
                    args=("dim0", "dim1"),
                    self=lambda grad, dim0, dim1: transpose(grad, dim0, dim1))
# rot90: k quarter turns in the plane of dims (a new tensor); its gradient turns back
ROT90 = OpSpec("rot90", "Rot90Backward0", kernels.rot90, function=True, jvp="linear",
               args=("k", "dims"), self=lambda grad, k, dims: formulas.rot90(grad, -k, dims))
T_ = OpSpec("t_", "TBackward1", np.transpose, jvp=lambda self_t: t(self_t),
            self=lambda grad: t(grad))

# ======================= selecting, sorting =======================
SORT = OpSpec("sort", "SortBackward0", kernels.sort, function=True,
              jvp=lambda self_t, dim, indices: gather(self_t, dim, indices),
              args=("dim", "descending"), outputs=("values", "indices"),
              nondiff_outputs=("indices",),
              self=lambda grad, dim, indices, self_sym_sizes:
                  formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes, True))
TOPK = OpSpec("topk", "TopkBackward0", kernels.topk, function=True,
              args=("k", "dim", "largest", "sorted"),
              jvp=lambda self_t, dim, indices: gather(self_t, dim, indices),
              outputs=("values", "indices"), nondiff_outputs=("indices",),
              self=lambda grad, dim, indices, self_sym_sizes:
                  formulas.value_selecting_backward(grad, dim, indices, self_sym_sizes, True))
INDEX_SELECT = OpSpec("index_select", "IndexSelectBackward0", kernels.index_select,
                      function=True, jvp="linear", args=("dim",),
                      self=lambda grad, self_sym_sizes, dim, index:
                          formulas.index_select_backward(grad, self_sym_sizes, dim, index),
                      index=NON_DIFFERENTIABLE)
INDEX_ADD = OpSpec("index_add", "IndexAddBackward0", kernels.index_add, function=True, jvp="linear",
                   args=("dim", "alpha"), reads_no_overlap=True, self=lambda grad: grad,
                   index=NON_DIFFERENTIABLE, source=formulas.index_add_source_backward)

# ======================= convolutions, pooling, normalisation (N, C, *spatial) ===============
# conv1d/2d and their transposes are one op, as torch's CPU `convolution`; its backward is
# written with convolutions (the input's a transposed one, the weight's one of the input with
# the gradient as kernel), so gradients of any order come from this row. torch's one formula
# for the three reads input and weight: it saves both, whichever requires grad.
_CONVOLUTION_ARGS = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")
CONVOLUTION = OpSpec(
    "convolution", "ConvolutionBackward0", kernels.convolution, args=_CONVOLUTION_ARGS,
    jvp=formulas.convolution_jvp,
    input=formulas.convolution_backward_input,
    weight=formulas.convolution_backward_weight,
    bias=lambda grad, input, weight, bias_sym_sizes_opt: formulas.channel_sum(grad))
# conv_tbc: a 1-d convolution of (time, batch, channels) inputs by a (kernel, in, out)
# weight; its gradients are conv_tbcs too (torch saves all three inputs: one formula)
CONV_TBC = OpSpec("conv_tbc", "ConvTbcBackward0", kernels.conv_tbc, args=("pad",),
                  jvp=no_forward_ad("conv_tbc", "self"), one_formula=True,
                  **dict.fromkeys(("self", "weight", "bias"), formulas.conv_tbc_backward))
# max pooling returns each max's index in the (H, W) plane (result1); its backward is an op
# of its own (torch's), whose own gradient reads the gradient at those indices
MAX_POOL2D_WITH_INDICES = OpSpec(
    "max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0", kernels.max_pool_with_indices,
    args=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
    outputs=("result", "result1"), nondiff_outputs=("result1",),
    jvp=lambda self_t, result1: formulas.max_pool_double_backward(self_t, result1),
    self=lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
        formulas.max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding,
                                                  dilation, ceil_mode, result1))
MAX_POOL2D_WITH_INDICES_BACKWARD = OpSpec(
    "max_pool2d_with_indices_backward", "MaxPool2DWithIndicesBackwardBackward0",
    kernels.max_pool_backward, jvp="linear",
    args=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
    grad_output=formulas.max_pool_double_backward,
    self=lambda grad: zeros_like(grad), indices=NON_DIFFERENTIABLE)
ADAPTIVE_MAX_POOL2D = OpSpec(
    "adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", kernels.adaptive_max_pool,
    args=("output_size",), outputs=("result", "result1"), nondiff_outputs=("result1",),
    jvp=lambda self_t, result1: formulas.max_pool_double_backward(self_t, result1),
    self=lambda grad, self, result1: formulas.adaptive_max_pool2d_backward(grad, self, result1))
ADAPTIVE_MAX_POOL2D_BACKWARD = OpSpec(
    "adaptive_max_pool2d_backward", "AdaptiveMaxPool2DBackwardBackward0", kernels.max_pool_backward,
    jvp="linear", grad_output=formulas.max_pool_double_backward,
    self=lambda grad: zeros_like(grad), indices=NON_DIFFERENTIABLE)
_AVG_POOL2D_ARGS = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                    "divisor_override")
AVG_POOL2D = OpSpec(
    "avg_pool2d", "AvgPool2DBackward0", kernels.avg_pool, jvp="linear", args=_AVG_POOL2D_ARGS,
    self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: formulas.avg_pool2d_backward(grad, self, kernel_size, stride, padding,
                                                   ceil_mode, count_include_pad,
                                                   divisor_override))
AVG_POOL2D_BACKWARD = OpSpec(
    "avg_pool2d_backward", "AvgPool2DBackwardBackward0", kernels.avg_pool_backward,
    jvp="linear", args=_AVG_POOL2D_ARGS,
    grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: formulas.avg_pool2d(grad, kernel_size, stride, padding, ceil_mode,
                                          count_include_pad, divisor_override),
    self=lambda grad: zeros_like(grad))
ADAPTIVE_AVG_POOL2D = OpSpec(
    "adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", kernels.adaptive_avg_pool, jvp="linear",
    args=("output_size",), self=formulas.adaptive_avg_pool2d_backward)
ADAPTIVE_AVG_POOL2D_BACKWARD = OpSpec(
    "adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0",
    kernels.adaptive_avg_pool2d_backward, jvp="linear",
    grad_output=lambda grad, grad_output_sym_sizes:
        formulas.adaptive_avg_pool2d(grad, grad_output_sym_sizes[-2:]),
    self=lambda grad: zeros_like(grad))
# max unpooling writes each value at its max pool index; its gradient reads it back there
MAX_UNPOOL2D = OpSpec(
    "max_unpool2d", "MaxUnpool2DBackward0", kernels.max_unpool, jvp="linear",
    args=("output_size",),
    self=lambda grad, indices: formulas.max_pool_double_backward(grad, indices, 2),
    indices=NON_DIFFERENTIABLE)
MAX_UNPOOL3D = OpSpec(
    "max_unpool3d", "MaxUnpool3DBackward0", kernels.max_unpool, jvp="linear",
    args=("output_size", "stride", "padding"),
    self=lambda grad, indices: formulas.max_pool_double_backward(grad, indices, 3),
    indices=NON_DIFFERENTIABLE)
# fractional max pooling: windows at starts drawn from random_samples; a max pool's backward
_FRACTIONAL_ARGS = ("kernel_size", "output_size")
FRACTIONAL_MAX_POOL2D = OpSpec(
    "fractional_max_pool2d", "FractionalMaxPool2DBackward0", kernels.fractional_max_pool,
    args=_FRACTIONAL_ARGS, outputs=("result", "result1"), nondiff_outputs=("result1",),
    jvp=lambda self_t, result1: formulas.max_pool_double_backward(self_t, result1, 2),
    self=lambda grad, self, kernel_size, output_size, result1:
        formulas.fractional_max_pool2d_backward(grad, self, kernel_size, output_size, result1),
    random_samples=NON_DIFFERENTIABLE)
FRACTIONAL_MAX_POOL2D_BACKWARD = OpSpec(
    "fractional_max_pool2d_backward", "FractionalMaxPool2DBackwardBackward0",
    kernels.max_pool_backward, jvp="linear", args=_FRACTIONAL_ARGS,
    grad_output=lambda grad, indices: formulas.max_pool_double_backward(grad, indices, 2),
    self=lambda grad: zeros_like(grad), indices=NON_DIFFERENTIABLE)
FRACTIONAL_MAX_POOL3D = OpSpec(
    "fractional_max_pool3d", "FractionalMaxPool3DBackward0", kernels.fractional_max_pool,
    args=_FRACTIONAL_ARGS, outputs=("result", "result1"), nondiff_outputs=("result1",),
    jvp=lambda self_t, result1: formulas.max_pool_double_backward(self_t, result1, 3),
    self=lambda grad, self, kernel_size, output_size, result1:
        formulas.fractional_max_pool3d_backward(grad, self, kernel_size, output_size, result1),
    random_samples=NON_DIFFERENTIABLE)
FRACTIONAL_MAX_POOL3D_BACKWARD = OpSpec(
    "fractional_max_pool3d_backward", "FractionalMaxPool3DBackwardBackward0",
    kernels.max_pool3d_backward, jvp="linear", args=_FRACTIONAL_ARGS,
    grad_output=lambda grad, indices: formulas.max_pool_double_backward(grad, indices, 3),
    self=lambda grad: zeros_like(grad), indices=NON_DIFFERENTIABLE)
# the 3-d pools: the same kernels over (D, H, W), indices into the flattened (D, H, W) block
MAX_POOL3D_WITH_INDICES = OpSpec(
    "max_pool3d_with_indices", "MaxPool3DWithIndicesBackward0", kernels.max_pool_with_indices,
    args=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
    outputs=("result", "result1"), nondiff_outputs=("result1",),
    jvp=lambda self_t, result1: formulas.max_pool_double_backward(self_t, result1, 3),
    self=lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode, result1:
        formulas.max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding,
                                                  dilation, ceil_mode, result1))
MAX_POOL3D_WITH_INDICES_BACKWARD = OpSpec(
    "max_pool3d_with_indices_backward", "MaxPool3DWithIndicesBackwardBackward0",
    kernels.max_pool3d_backward, jvp="linear",
    args=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
    grad_output=lambda grad, indices: formulas.max_pool_double_backward(grad, indices, 3),
    self=lambda grad: zeros_like(grad), indices=NON_DIFFERENTIABLE)
ADAPTIVE_MAX_POOL3D = OpSpec(
    "adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0", kernels.adaptive_max_pool,
    args=("output_size",), outputs=("result", "result1"), nondiff_outputs=("result1",),
    jvp=lambda self_t, result1: formulas.max_pool_double_backward(self_t, result1, 3),
    self=lambda grad, self, result1: formulas.adaptive_max_pool3d_backward(grad, self, result1))
ADAPTIVE_MAX_POOL3D_BACKWARD = OpSpec(
    "adaptive_max_pool3d_backward", "AdaptiveMaxPool3DBackwardBackward0",
    kernels.max_pool3d_backward, jvp="linear",
    grad_output=lambda grad, indices: formulas.max_pool_double_backward(grad, indices, 3),
    self=lambda grad: zeros_like(grad), indices=NON_DIFFERENTIABLE)
AVG_POOL3D = OpSpec(
    "avg_pool3d", "AvgPool3DBackward0", kernels.avg_pool, jvp="linear", args=_AVG_POOL2D_ARGS,
    self=lambda grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: formulas.avg_pool3d_backward(grad, self, kernel_size, stride, padding,
                                                   ceil_mode, count_include_pad,
                                                   divisor_override))
AVG_POOL3D_BACKWARD = OpSpec(
    "avg_pool3d_backward", "AvgPool3DBackwardBackward0", kernels.avg_pool_backward,
    jvp="linear", args=_AVG_POOL2D_ARGS,
    grad_output=lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override: formulas.avg_pool3d(grad, kernel_size, stride, padding, ceil_mode,
                                          count_include_pad, divisor_override),
    self=lambda grad: zeros_like(grad))
ADAPTIVE_AVG_POOL3D = OpSpec(
    "adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", kernels.adaptive_avg_pool, jvp="linear",
    args=("output_size",), self=formulas.adaptive_avg_pool3d_backward)
ADAPTIVE_AVG_POOL3D_BACKWARD = OpSpec(
    "adaptive_avg_pool3d_backward", "AdaptiveAvgPool3DBackwardBackward0",
    kernels.adaptive_avg_pool3d_backward, jvp="linear",
    grad_output=lambda grad, grad_output_sym_sizes:
        formulas.adaptive_avg_pool3d(grad, grad_output_sym_sizes[-3:]),
    self=lambda grad: zeros_like(grad))
# F.affine_grid's sampling grid: each output position's base coordinates mapped by theta
AFFINE_GRID_GENERATOR = OpSpec(
    "affine_grid_generator", "AffineGridGeneratorBackward0", kernels.affine_grid_generator,
    jvp="linear", args=("size", "align_corners"),
    theta=formulas.affine_grid_generator_backward)
# F.grid_sample: the input read at the grid's positions (formulas.py's taps); interpolation
# 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection
_GRID_SAMPLER = dict(
    args=("interpolation_mode", "padding_mode", "align_corners"),
    jvp=formulas.grid_sampler_jvp, input=formulas.grid_sampler_input_backward,
    grid=formulas.grid_sampler_grid_backward)
GRID_SAMPLER_2D = OpSpec("grid_sampler_2d", "GridSampler2DBackward0", formulas.grid_sampler,
                         **_GRID_SAMPLER)
GRID_SAMPLER_3D = OpSpec("grid_sampler_3d", "GridSampler3DBackward0", formulas.grid_sampler,
                         **_GRID_SAMPLER)
# F.pad's modes (pads given last dim first); constant pads of negative size crop
CONSTANT_PAD_ND = OpSpec(
    "constant_pad_nd", "ConstantPadNdBackward0", kernels.constant_pad_nd, args=("pad", "value"),
    complex=True,
    jvp=lambda self_t, pad: formulas.constant_pad_nd(self_t, pad),
    self=lambda grad, pad: formulas.constant_pad_nd(grad, [-p for p in pad]))
_PAD = dict(jvp="linear", args=("padding",))
_REFLECTION_PAD = dict(_PAD, self=formulas.reflection_pad_backward)
_REFLECTION_PAD_BACKWARD = dict(_PAD, grad_output=lambda grad, padding:
                                formulas.reflection_pad(grad, padding),
                                self=lambda grad: zeros_like(grad))
REFLECTION_PAD1D = OpSpec("reflection_pad1d", "ReflectionPad1DBackward0", kernels.reflection_pad,
                          **_REFLECTION_PAD)
REFLECTION_PAD2D = OpSpec("reflection_pad2d", "ReflectionPad2DBackward0", kernels.reflection_pad,
                          **_REFLECTION_PAD)
REFLECTION_PAD3D = OpSpec("reflection_pad3d", "ReflectionPad3DBackward0", kernels.reflection_pad,
                          **_REFLECTION_PAD)
REFLECTION_PAD1D_BACKWARD = OpSpec("reflection_pad1d_backward", "ReflectionPad1DBackwardBackward0",
                                   kernels.reflection_pad_backward, **_REFLECTION_PAD_BACKWARD)
REFLECTION_PAD2D_BACKWARD = OpSpec("reflection_pad2d_backward", "ReflectionPad2DBackwardBackward0",
                                   kernels.reflection_pad_backward, **_REFLECTION_PAD_BACKWARD)
REFLECTION_PAD3D_BACKWARD = OpSpec("reflection_pad3d_backward", "ReflectionPad3DBackwardBackward0",
                                   kernels.reflection_pad_backward, **_REFLECTION_PAD_BACKWARD)
_REPLICATION_PAD = dict(_PAD, self=formulas.replication_pad_backward)
_REPLICATION_PAD_BACKWARD = dict(_PAD, grad_output=lambda grad, padding:
                                 formulas.replication_pad(grad, padding),
                                 self=lambda grad: zeros_like(grad))
REPLICATION_PAD1D = OpSpec("replication_pad1d", "ReplicationPad1DBackward0",
                           kernels.replication_pad, **_REPLICATION_PAD)
REPLICATION_PAD2D = OpSpec("replication_pad2d", "ReplicationPad2DBackward0",
                           kernels.replication_pad, **_REPLICATION_PAD)
REPLICATION_PAD3D = OpSpec("replication_pad3d", "ReplicationPad3DBackward0",
                           kernels.replication_pad, **_REPLICATION_PAD)
REPLICATION_PAD1D_BACKWARD = OpSpec("replication_pad1d_backward",
                                    "ReplicationPad1DBackwardBackward0",
                                    kernels.replication_pad_backward, **_REPLICATION_PAD_BACKWARD)
REPLICATION_PAD2D_BACKWARD = OpSpec("replication_pad2d_backward",
                                    "ReplicationPad2DBackwardBackward0",
                                    kernels.replication_pad_backward, **_REPLICATION_PAD_BACKWARD)
REPLICATION_PAD3D_BACKWARD = OpSpec("replication_pad3d_backward",
                                    "ReplicationPad3DBackwardBackward0",
                                    kernels.replication_pad_backward, **_REPLICATION_PAD_BACKWARD)
# F.interpolate: scales (1 / scale_factor when given) decide the source positions as torch's
UPSAMPLE_NEAREST1D = OpSpec(
    "upsample_nearest1d", "UpsampleNearest1DBackward0", kernels.upsample_nearest, jvp="linear",
    args=("output_size", "scales"),
    self=lambda grad, output_size, self_sym_sizes, scales:
        formulas.upsample_nearest_backward(grad, output_size, self_sym_sizes, (scales,)))
UPSAMPLE_NEAREST2D = OpSpec(
    "upsample_nearest2d", "UpsampleNearest2DBackward0", kernels.upsample_nearest, jvp="linear",
    args=("output_size", "scales_h", "scales_w"),
    self=lambda grad, output_size, self_sym_sizes, scales_h, scales_w:
        formulas.upsample_nearest_backward(grad, output_size, self_sym_sizes, (scales_h, scales_w)))
UPSAMPLE_BILINEAR2D = OpSpec(
    "upsample_bilinear2d", "UpsampleBilinear2DBackward0", kernels.upsample_linear, jvp="linear",
    args=("output_size", "align_corners", "scales_h", "scales_w"),
    self=lambda grad, output_size, self_sym_sizes, align_corners, scales_h, scales_w:
        formulas.upsample_bilinear2d_backward(grad, output_size, self_sym_sizes, align_corners,
                                              (scales_h, scales_w)))
UPSAMPLE_NEAREST1D_BACKWARD = OpSpec(
    "upsample_nearest1d_backward", "UpsampleNearest1DBackwardBackward0",
    kernels.upsample_nearest_backward, jvp="linear", args=("output_size", "input_size", "scales"),
    grad_output=lambda grad, output_size, scales:
        formulas.upsample_nearest(grad, output_size, (scales,)))
UPSAMPLE_NEAREST2D_BACKWARD = OpSpec(
    "upsample_nearest2d_backward", "UpsampleNearest2DBackwardBackward0",
    kernels.upsample_nearest_backward, jvp="linear",
    args=("output_size", "input_size", "scales_h", "scales_w"),
    grad_output=lambda grad, output_size, scales_h, scales_w:
        formulas.upsample_nearest(grad, output_size, (scales_h, scales_w)))
UPSAMPLE_BILINEAR2D_BACKWARD = OpSpec(
    "upsample_bilinear2d_backward", "UpsampleBilinear2DBackwardBackward0",
    kernels.upsample_linear_backward, jvp="linear",
    args=("output_size", "input_size", "align_corners", "scales_h", "scales_w"),
    grad_output=lambda grad, output_size, align_corners, scales_h, scales_w:
        formulas.upsample_bilinear2d(grad, output_size, align_corners, (scales_h, scales_w)))
# batch statistics (result1: mean, result2: 1/std; empty in eval mode) are outputs, saved; the
# running statistics are updated inside the op. torch's one formula for the three reads every
# saved value, so each formula here names them all
NATIVE_BATCH_NORM = OpSpec(
    "native_batch_norm", "NativeBatchNormBackward0", kernels.native_batch_norm,
    args=("training", "momentum", "eps"), outputs=("result", "result1", "result2"),
    nondiff_outputs=("result1", "result2"), jvp=formulas.batch_norm_jvp,
    input=formulas.batch_norm_backward_input,
    weight=lambda grad, input, weight, running_mean, running_var, result1, result2, training,
    eps: formulas.batch_norm_backward_weight(grad, input, running_mean, running_var, result1,
                                             result2, training, eps),
    bias=lambda grad, input, weight, running_mean, running_var, result1, result2, training, eps:
        formulas.channel_sum(grad),
    running_mean=NON_DIFFERENTIABLE, running_var=NON_DIFFERENTIABLE)
NATIVE_GROUP_NORM = OpSpec(
    "native_group_norm", "NativeGroupNormBackward0", kernels.native_group_norm,
    args=("N", "C", "HxW", "group", "eps"), outputs=("result", "result1", "result2"),
    nondiff_outputs=("result1", "result2"), jvp=formulas.group_norm_jvp,
    input=formulas.group_norm_backward_input,
    weight=lambda grad, input, weight, N, C, HxW, group, eps, result1, result2:
        formulas.group_norm_backward_weight(grad, input, N, group, eps, result1, result2),
    bias=lambda grad, input, weight, N, C, HxW, group, eps, result1, result2:
        formulas.channel_sum(grad))
# F.unfold (sliding blocks as columns) and F.fold (columns summed back): each the other's
# adjoint
_BLOCK_ARGS = ("kernel_size", "dilation", "padding", "stride")
IM2COL = OpSpec(
    "im2col", "Im2ColBackward0", kernels.im2col, jvp="linear", args=_BLOCK_ARGS,
    self=lambda grad, self_sym_argsize_minus_2, self_sym_argsize_minus_1, kernel_size,
    dilation, padding, stride: formulas.col2im(
        grad, (self_sym_argsize_minus_2, self_sym_argsize_minus_1), kernel_size, dilation,
        padding, stride))
COL2IM = OpSpec(
    "col2im", "Col2ImBackward0", kernels.col2im, jvp="linear",
    args=("output_size",) + _BLOCK_ARGS,
    self=lambda grad, kernel_size, dilation, padding, stride: formulas.im2col(
        grad, kernel_size, dilation, padding, stride))
# pixel (un)shuffle: channels r*r*C <-> an r-times finer (H, W) grid; each the other's adjoint
PIXEL_SHUFFLE = OpSpec(
    "pixel_shuffle", "PixelShuffleBackward0", kernels.pixel_shuffle, jvp="linear",
    args=("upscale_factor",),
    self=lambda grad, upscale_factor: formulas.pixel_unshuffle(grad, upscale_factor))
# its inverse is the shuffle of the other factor of C: C / groups groups
CHANNEL_SHUFFLE = OpSpec(
    "channel_shuffle", "ChannelShuffleBackward0", kernels.channel_shuffle, jvp="linear",
    args=("groups",),
    self=lambda grad, groups: formulas.channel_shuffle(grad, grad.shape[1] // groups))
# native_channel_shuffle: the same kernel, an op torch does not differentiate (its node
# NotImplemented refuses at backward; out of the table, as heaviside)
NATIVE_CHANNEL_SHUFFLE = OpSpec(
    "native_channel_shuffle", "NotImplemented", kernels.channel_shuffle, args=("groups",),
    jvp=no_forward_ad("native_channel_shuffle", "self", listed=False),
    self=formulas.not_implemented("native_channel_shuffle"))
NATIVE_CHANNEL_SHUFFLE.derivative_implemented = False
PIXEL_UNSHUFFLE = OpSpec(
    "pixel_unshuffle", "PixelUnshuffleBackward0", kernels.pixel_unshuffle, jvp="linear",
    args=("downscale_factor",),
    self=lambda grad, downscale_factor: formulas.pixel_shuffle(grad, downscale_factor))

# ======================= recurrent layers =======================
# torch's CPU LSTM in float32: oneDNN's kernel, one op per layer and direction (nn/rnn.py
# takes it where torch's use_mkldnn does). One formula gives every input's gradient; the
# workspace (result3) is gradtool's own layout (each step's gates and cell state).
_LSTM_LAYER_INPUTS = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_")
MKLDNN_RNN_LAYER = OpSpec(
    "mkldnn_rnn_layer", "MkldnnRnnLayerBackward0", formulas.lstm_layer,
    args=("reverse", "batch_sizes", "mode", "hidden_size", "num_layers", "has_biases",
          "bidirectional", "batch_first", "train"),
    outputs=("result0", "result1", "result2", "result3"), nondiff_outputs=("result3",),
    one_formula=True, jvp=no_forward_ad("mkldnn_rnn_layer", "input"),
    **dict.fromkeys(_LSTM_LAYER_INPUTS, lambda grads, input, weight0, weight1, weight2, weight3,
                    hx_, cx_, result0, result1, result2, result3, reverse, mode, hidden_size,
                    num_layers, has_biases, train, bidirectional, batch_sizes, batch_first:
                    formulas.lstm_layer_backward(grads, input, weight0, weight1, weight2,
                                                 weight3, hx_, cx_, result0, result3, reverse,
                                                 has_biases)))

# ======================= linear algebra (torch.linalg) =======================
# The LU factors of solve, det and slogdet are outputs, saved as torch's nodes save them: the
# first-order formulas solve with them (torch's lu_solve), gradients of gradients with A.
LINALG_INV_EX = OpSpec("linalg_inv_ex", "LinalgInvExBackward0", kernels.linalg_inv_ex,
                       outputs=("inverse", "info"), nondiff_outputs=("info",),
                       jvp=lambda A_t, inverse: -matmul(inverse, matmul(A_t, inverse)),
                       A=formulas.linalg_inv_backward)
LINALG_SOLVE_EX = OpSpec(
    "linalg_solve_ex", "LinalgSolveExBackward0", kernels.linalg_solve_ex, args=("left",),
    complex=True,  # (eig's gradient solves with complex eigenvectors)
    outputs=("result", "LU", "pivots", "info"), nondiff_outputs=("LU", "pivots", "info"),
    jvp=formulas.linalg_solve_jvp,
    A=formulas.linalg_solve_backward_A,
    B=formulas.linalg_solve_backward_B)
LINALG_DET = OpSpec("linalg_det", "LinalgDetBackward0", kernels.linalg_det,
                    outputs=("result", "LU", "pivots"), nondiff_outputs=("LU", "pivots"),
                    jvp=lambda A_t, A, LU, pivots, result: [sum(formulas.linalg_det_backward(
                        ones_like(result), result, A, LU, pivots) * A_t, (-2, -1)), None, None],
                    A=lambda grad, A, LU, pivots, result:
                        formulas.linalg_det_backward(grad, result, A, LU, pivots))
LINALG_SLOGDET = OpSpec("linalg_slogdet", "LinalgSlogdetBackward0", kernels.linalg_slogdet,
                        outputs=("sign", "logabsdet", "LU", "pivots"),
                        nondiff_outputs=("LU", "pivots"),  # (sign: differentiable, zero)
                        jvp=lambda A_t, A, sign: [zeros_like(sign), formulas.trace(
                            formulas.solve(A, A_t)), None, None],
                        A=formulas.linalg_slogdet_backward)
LINALG_CHOLESKY_EX = OpSpec("linalg_cholesky_ex", "LinalgCholeskyExBackward0",
                            kernels.linalg_cholesky_ex, args=("upper",), outputs=("L", "info"),
                            nondiff_outputs=("info",), jvp=formulas.cholesky_jvp,
                            A=formulas.cholesky_backward)
# torch.cholesky (deprecated): the same factor and formulas, torch's older node
CHOLESKY = OpSpec("cholesky", "CholeskyBackward0", kernels.cholesky, args=("upper",),
                  jvp=lambda self_t, result, upper: formulas.cholesky_jvp(self_t, result, upper),
                  self=lambda grad, upper, result: formulas.cholesky_backward(grad, upper, result))
LINALG_QR = OpSpec("linalg_qr", "LinalgQrBackward0", kernels.linalg_qr, args=("mode",),
                   outputs=("Q", "R"), jvp=formulas.linalg_qr_jvp,
                   A=formulas.linalg_qr_backward)
LINALG_CROSS = OpSpec("linalg_cross", "LinalgCrossBackward0", kernels.linalg_cross,
                      jvp="bilinear", args=("dim",), broadcasts=True, promotion="promote",
                      self=lambda grad, other, dim: formulas.linalg_cross(conj(other), grad, dim),
                      other=lambda grad, self, dim: formulas.linalg_cross(grad, conj(self), dim))
# dist: the p-norm of self - other; cdist: of every pair of rows of x1 and x2 (torch's
# _cdist_forward; for p = 2 and more than 25 rows torch computes it through matmuls instead)
DIST = OpSpec("dist", "DistBackward0", kernels.dist, function=True, args=("p",),
              broadcasts=True, promotion="promote",
              jvp=lambda self_t, other_t, self, other, p, result: formulas.norm_jvp(
                  reshape(self_t - other_t, (-1,)), reshape(self - other, (-1,)), result, p,
                  (0,), False),
              self=formulas.dist_backward,
              other=lambda grad, self, other, p, result:
                  -formulas.dist_backward(grad, self, other, p, result))
CDIST = OpSpec("_cdist_forward", "CdistBackward0", kernels.cdist, args=("p", "compute_mode"),
               jvp=formulas.cdist_jvp,
               x1=lambda grad, x1, x2, p, result:
                   formulas.cdist_backward(grad, x1, x2, p, result, "x1"),
               x2=lambda grad, x1, x2, p, result:
                   formulas.cdist_backward(grad, x1, x2, p, result, "x2"))
# pdist: the p-norm of every pair of rows i < j of one matrix, in row-major pair order
PDIST = OpSpec("_pdist_forward", "PdistBackward0", kernels.pdist, args=("p",),
               jvp=formulas.pdist_jvp, self=formulas.pdist_backward)
LINALG_EIGH = OpSpec("linalg_eigh", "LinalgEighBackward0", np.linalg.eigh, args=("UPLO",),
                     outputs=("eigenvalues", "eigenvectors"), undefined_grads=True,
                     jvp=formulas.linalg_eigh_jvp,
                     A=formulas.linalg_eigh_backward)
# eig: complex results even for a real A (whose gradient is then the real part, as torch's)
LINALG_EIG = OpSpec("linalg_eig", "LinalgEigBackward0", kernels.linalg_eig,
                    outputs=("eigenvalues", "eigenvectors"), undefined_grads=True, complex=True,
                    jvp=formulas.linalg_eig_jvp, self=formulas.linalg_eig_backward)
LINALG_SVD = OpSpec("linalg_svd", "LinalgSvdBackward0", np.linalg.svd, args=("full_matrices",),
                    outputs=("U", "S", "Vh"), undefined_grads=True, jvp=formulas.linalg_svd_jvp,
                    A=formulas.linalg_svd_backward)

# triangular solves: A's triangle only is read (its diagonal ones when unitriangular), so its
# gradient lies on that triangle; torch.triangular_solve (deprecated) also returns a copy of A
LINALG_SOLVE_TRIANGULAR = OpSpec(
    "linalg_solve_triangular", "LinalgSolveTriangularBackward0", kernels.solve_triangular,
    args=("upper", "left", "unitriangular"), promotes_dtype=False, complex=True,
    jvp=formulas.linalg_solve_triangular_jvp, one_formula=True,
    **dict.fromkeys(("self", "B"), formulas.linalg_solve_triangular_backward))
TRIANGULAR_SOLVE = OpSpec(
    "triangular_solve", "TriangularSolveBackward0", kernels.triangular_solve,
    args=("upper", "transpose", "unitriangular"), outputs=("solution", "cloned_coefficient"),
    undefined_grads=True, jvp=formulas.triangular_solve_jvp, one_formula=True,
    **dict.fromkeys(("self", "A"), formulas.triangular_solve_backward))
# getrf's packed LU (L's multipliers below the diagonal, U on and above it) and its pivots
LINALG_LU_FACTOR_EX = OpSpec(
    "linalg_lu_factor_ex", "LinalgLuFactorExBackward0", kernels.lu_factor_ex, args=("pivot",),
    complex=True, outputs=("LU", "pivots", "info"), nondiff_outputs=("pivots", "info"),
    jvp=formulas.linalg_lu_factor_ex_jvp, A=formulas.linalg_lu_factor_ex_backward)
# linalg.lu: the same factors unpacked, one node (P, a permutation, has no gradient)
LINALG_LU = OpSpec(
    "linalg_lu", "LinalgLuBackward0", kernels.linalg_lu, args=("pivot",), complex=True,
    outputs=("P", "L", "U"), nondiff_outputs=("P",), undefined_grads=True,
    jvp=formulas.linalg_lu_jvp,
    A=lambda grads, P, L, U, pivot: formulas.linalg_lu_backward(grads[1], grads[2], P, L, U))
# solves with lu_factor's packed LU and its pivots (op(A) A or A^H with adjoint); the
# gradient reaches LU's two triangles, as torch's
LINALG_LU_SOLVE = OpSpec(
    "linalg_lu_solve", "LinalgLuSolveBackward0", kernels.linalg_lu_solve,
    args=("left", "adjoint"), promotes_dtype=False, complex=True,
    jvp=formulas.linalg_lu_solve_jvp,
    LU=formulas.linalg_lu_solve_LU, pivots=NON_DIFFERENTIABLE,
    B=lambda grad, LU, pivots, left, adjoint: LINALG_LU_SOLVE(LU, pivots, grad, left,
                                                              not adjoint))
# QR as LAPACK keeps it: geqrf's reflectors below R (torch does not differentiate it) and
# householder_product (orgqr), the product of the reflectors, whose gradient reaches the
# reflectors' entries below the diagonal and tau
GEQRF = OpSpec("geqrf", "GeqrfBackward0", kernels.geqrf, outputs=("a", "tau"), complex=True,
               jvp=no_forward_ad("geqrf", "self"), self=formulas.geqrf_backward)
GEQRF.derivative_implemented = False
LINALG_HOUSEHOLDER_PRODUCT = OpSpec(
    "linalg_householder_product", "LinalgHouseholderProductBackward0",
    kernels.householder_product, jvp=formulas.householder_product_jvp, one_formula=True,
    complex=True,
    **dict.fromkeys(("input", "tau"), formulas.householder_product_backward))
ORMQR = OpSpec("ormqr", "OrmqrBackward0", kernels.ormqr, args=("left", "transpose"),
               complex=True,
               jvp=no_forward_ad("ormqr", "self"), one_formula=True,
               **dict.fromkeys(("self", "input2", "input3"), formulas.ormqr_backward))
# LDL^T (LDL^H when hermitian) with Bunch-Kaufman pivoting (LAPACK's sytrf / sytrs, hetrf /
# hetrs): torch differentiates neither
LINALG_LDL_FACTOR_EX = OpSpec(
    "linalg_ldl_factor_ex", "NotImplemented", kernels.linalg_ldl_factor_ex, args=("hermitian",),
    complex=True,
    outputs=("LD", "pivots", "info"), nondiff_outputs=("pivots", "info"),
    jvp=no_forward_ad("linalg_ldl_factor_ex", "self"),
    self=lambda grads: formulas.not_implemented("linalg_ldl_factor_ex")(grads))
LINALG_LDL_FACTOR_EX.derivative_implemented = False
LINALG_LDL_SOLVE = OpSpec(
    "linalg_ldl_solve", "NotImplemented", kernels.linalg_ldl_solve, args=("hermitian",),
    complex=True,
    promotes_dtype=False, jvp=no_forward_ad("linalg_ldl_solve", "LD"),
    LD=formulas.not_implemented("linalg_ldl_solve"), pivots=NON_DIFFERENTIABLE,
    B=formulas.not_implemented("linalg_ldl_solve"))
LINALG_LDL_SOLVE.derivative_implemented = False
# solves and inverses from a Cholesky factor L (A = L L^T, or U^T U when upper); their
# gradients reach all of L, as torch's formulas give them
CHOLESKY_SOLVE = OpSpec("cholesky_solve", "CholeskySolveBackward0", kernels.cholesky_solve,
                        args=("upper",), jvp=formulas.cholesky_solve_jvp, one_formula=True,
                        **dict.fromkeys(("self", "input2"), formulas.cholesky_solve_backward))
CHOLESKY_INVERSE = OpSpec("cholesky_inverse", "CholeskyInverseBackward0",
                          kernels.cholesky_inverse, args=("upper",),
                          jvp=formulas.cholesky_inverse_jvp,
                          self=formulas.cholesky_inverse_backward)
# the pseudo-inverse (differentiable where A's rank does not change), least squares through
# it, and the matrix exponential (its derivative: the exponential of a block matrix)
LINALG_PINV = OpSpec("linalg_pinv", "LinalgPinvBackward0", kernels.linalg_pinv,
                     args=("atol", "rtol", "hermitian"), jvp=formulas.pinv_jvp,
                     self=formulas.pinv_backward)
LINALG_LSTSQ = OpSpec(
    "linalg_lstsq", "LinalgLstsqBackward0", kernels.linalg_lstsq, args=("rcond", "driver"),
    outputs=("solution", "residuals", "rank", "singular_values"),
    nondiff_outputs=("rank", "singular_values"), undefined_grads=True, one_formula=True,
    jvp=formulas.linalg_lstsq_jvp,
    **dict.fromkeys(("self", "b"), formulas.linalg_lstsq_backward))
LINALG_MATRIX_EXP = OpSpec("linalg_matrix_exp", "LinalgMatrixExpBackward0",
                           kernels.linalg_matrix_exp, jvp=formulas.linalg_matrix_exp_jvp,
                           complex=True, self=formulas.linalg_matrix_exp_backward)

TABLE = vars(rows.table)  # every row by name (the code below the table reads it there)
TABLE.update({name: value for name, value in globals().items()
              if isinstance(value, OpSpec) and value.derivative_implemented})
# (and the in-place twins that compute a gradient: tests/engine/test_api.py checks the others)
TABLE.update({f"{name}_": spec.in_place for name, spec in list(TABLE.items())
              if spec.in_place and spec.in_place.derivative_implemented})

# ======================= discrete Fourier transforms (torch.fft) =======================
# torch.fft's functions are three ops, as torch's: a real-to-complex transform (onesided:
# rfft's half spectrum), complex-to-complex (forward or inverse) and complex-to-real (the
# inverse of a onesided spectrum, `last_dim_size` long), each over `dim` and scaled by
# `normalization` (0: not, 1: by 1/sqrt(n), 2: by 1/n). The gradient of each is another
# transform with the same scaling in the opposite direction (an unscaled DFT's adjoint is the
# unscaled inverse DFT); computed in float64 and rounded once to the input's precision.
from .generic import constant as _constant  # noqa: E402

_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float16): np.complex64}


def _fft_scaled(out, n, normalization, dtype):
    if normalization == 1:
        out *= 1 / np.sqrt(n)
    elif normalization == 2:
        out *= 1 / n
    return out.astype(dtype, copy=False)


def _fft_r2c(self, dim, normalization, onesided):
    x = self.astype(np.float64)
    out = np.fft.rfftn(x, axes=dim) if onesided else np.fft.fftn(x, axes=dim)
    n = int(np.prod([self.shape[d] for d in dim]))
    return _fft_scaled(out, n, normalization, _COMPLEX_OF.get(self.dtype, np.complex128))


def _fft_c2c(self, dim, normalization, forward):
    x = self.astype(np.complex128)
    out = np.fft.fftn(x, axes=dim) if forward else np.fft.ifftn(x, axes=dim, norm="forward")
    n = int(np.prod([self.shape[d] for d in dim]))
    return _fft_scaled(out, n, normalization, self.dtype)


def _fft_c2r(self, dim, normalization, last_dim_size):
    sizes = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = np.fft.irfftn(self.astype(np.complex128), s=sizes, axes=dim, norm="forward")
    real_dtype = np.float32 if self.dtype == np.complex64 else np.float64
    return _fft_scaled(out, int(np.prod(sizes)), normalization, real_dtype)


def _fft_r2c_backward(grad, self, dim, normalization, onesided):
    """The inverse transform of the full spectrum, whose real part reaches the real input;
    a onesided gradient is the full spectrum's with the dropped half zero."""
    last = dim[-1]
    missing = self.shape[last] - grad.shape[last]
    if onesided and missing > 0:
        sizes = list(grad.shape)
        sizes[last] = missing
        grad = cat([grad, zeros(sizes, grad)], last)
    return real(FFT_C2C(grad, dim, normalization, False))


def _fft_c2r_backward(grad, dim, normalization):
    """The onesided forward transform; the bins whose mirror image lies outside the half
    spectrum stood for two of the full spectrum's, so their gradient counts twice."""
    out = FFT_R2C(grad, dim, normalization, True)
    last = dim[-1]
    doubled = grad.shape[last] - out.shape[last]
    if doubled > 0:
        complex64 = getattr(out, "_data", out).dtype == np.complex64
        weights = np.ones(out.shape[last], np.float32 if complex64 else np.float64)
        weights[1:1 + doubled] = 2
        out = out * _constant(weights.reshape((-1,) + (1,) * (len(out.shape) - 1 - last)), out)
    return out


FFT_R2C = OpSpec("_fft_r2c", "FftR2CBackward0", _fft_r2c, jvp="linear",
                 args=("dim", "normalization", "onesided"), self=_fft_r2c_backward)
FFT_C2C = OpSpec("_fft_c2c", "FftC2CBackward0", _fft_c2c, jvp="linear",
                 args=("dim", "normalization", "forward"),
                 self=lambda grad, dim, normalization, forward:
                     FFT_C2C(grad, dim, normalization, not forward))
FFT_C2R = OpSpec("_fft_c2r", "FftC2RBackward0", _fft_c2r, jvp="linear",
                 args=("dim", "normalization", "last_dim_size"), self=_fft_c2r_backward)
TABLE.update({"FFT_R2C": FFT_R2C, "FFT_C2C": FFT_C2C, "FFT_C2R": FFT_C2R})

# ======================= special functions (torch.special) =======================
# torch's own series for each (autograd/special_functions.py), computed in float64 and
# rounded once for float32; the derivatives are torch's (derivatives.yaml), at the edges too:
# i1 and i1e take 1/2 at 0, xlogy and xlog1py pass nothing where self is 0 and the logarithm
# is not finite. (Functions torch gives no gradient, bessel_j0 and the like, are not rows.)
from .. import special_functions as _special  # noqa: E402
from .generic import log as _log, sgn as _sgn  # noqa: E402

_SPECIAL = dict(jvp="elementwise", batches=True, promotion="float")
_ROOT_PI, _ROOT_2PI = float(np.sqrt(np.pi)), float(np.sqrt(2 * np.pi))


def _tiny_safe(self):
    """|x| > eps, and x with eps where it is not (so no 0 / 0 reaches the gradient)."""
    eps = np.finfo(getattr(self, "_data", self).dtype).eps
    not_tiny = abs(self) > eps
    return not_tiny, where(not_tiny, self, eps)


def _i1_backward(grad, self, result):
    not_tiny, safe = _tiny_safe(self)
    return grad * where(not_tiny, I0(safe) - result / safe, 0.5)


def _i1e_backward(grad, self, result):
    not_tiny, safe = _tiny_safe(self)
    return grad * where(not_tiny, SPECIAL_I0E(safe) - result * (_sgn(safe) + 1 / safe), 0.5)


def _sinc(x):
    product = np.pi * x
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x == 0, 1.0, np.sin(product) / product)


def _sinc_backward(grad, self):
    self_pi = self * np.pi
    self_squared_pi = self * self * np.pi
    out = grad * (self_pi * cos(self_pi) - sin(self_pi)) / self_squared_pi
    return where(self_squared_pi == 0, 0 * grad, out)


def _entr(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1)),
                        np.where(x == 0, 0.0, np.where(np.isnan(x), x, -np.inf)))


def _xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


def _xlog1py(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log1p(y)))


def _mvlgamma(x, p):
    offsets = -np.arange(p) / 2.0  # (torch's arange(-p/2 + 0.5, 0.5, 0.5), reversed)
    return _special.lgamma(x[..., None] + offsets).sum(-1) + p * (p - 1) * np.log(np.pi) / 4


def _mvlgamma_backward(grad, self, p):
    offsets = _constant(-np.arange(p) / 2.0, self)
    return grad * sum(DIGAMMA(unsqueeze(self, -1) + offsets), -1)


def _number_first(kernel):
    """A kernel of (tensor other, number self), as a Scalar overload's row calls it, from
    one of (self, other)."""
    def swapped(other, self):
        return kernel(self, other)
    swapped.__name__ = kernel.__name__
    return swapped


def _not_implemented(what):
    """The formula of an input torch does not differentiate: its error, at backward."""
    def no_derivative(grad):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return no_derivative


def _igamma_other_backward(grad, self, other):
    """d/dx of the regularized lower incomplete gamma function P(a, x): x^(a-1) e^-x / G(a)."""
    return grad * exp((self - 1) * _log(other) - other - LGAMMA(self))


_rounded = kernels.rounded_once
I0 = OpSpec("i0", "I0Backward0", _rounded(_special.i0), **_SPECIAL, method=True,
            self=lambda grad, self: grad * SPECIAL_I1(self))
SPECIAL_I0E = OpSpec("special_i0e", "SpecialI0EBackward0", _rounded(_special.i0e), **_SPECIAL,
                     self=lambda grad, self, result: grad * (SPECIAL_I1E(self) - _sgn(self) *
                                                             result))
SPECIAL_I1 = OpSpec("special_i1", "SpecialI1Backward0", _rounded(_special.i1), **_SPECIAL,
                    self=_i1_backward)
SPECIAL_I1E = OpSpec("special_i1e", "SpecialI1EBackward0", _rounded(_special.i1e), **_SPECIAL,
                     self=_i1e_backward)
LGAMMA = OpSpec("lgamma", "LgammaBackward0", _rounded(_special.lgamma), **_SPECIAL, method=True,
                self=lambda grad, self: grad * DIGAMMA(self))
DIGAMMA = OpSpec("digamma", "DigammaBackward0", _rounded(_special.digamma), **_SPECIAL,
                 method=True, self=lambda grad, self: grad * POLYGAMMA(self, 1))
POLYGAMMA = OpSpec("polygamma", "PolygammaBackward0", _rounded(_special.polygamma), **_SPECIAL,
                   args=("n",), self=lambda grad, n, self: grad * POLYGAMMA(self, n + 1))
# Tensor.polygamma_(n): torch's in-place overload (self first) has a node of its own, whose
# formula reads the original self (call_inplace keeps it, as torch's codegen does)
POLYGAMMA_ = OpSpec("polygamma_", "PolygammaBackward1", _rounded(_special.polygamma), **_SPECIAL,
                    args=("n",), self=lambda grad, n, self: grad * POLYGAMMA(self, n + 1))
MVLGAMMA = OpSpec("mvlgamma", "MvlgammaBackward0", _rounded(_mvlgamma), jvp="elementwise",
                  promotion="float", args=("p",), self=_mvlgamma_backward)
ERFC = OpSpec("erfc", "ErfcBackward0", _rounded(_special.erfc), **_SPECIAL, method=True,
              self=lambda grad, self: -2.0 / _ROOT_PI * exp(-self * self) * grad)
ERFINV = OpSpec("erfinv", "ErfinvBackward0", _rounded(_special.erfinv), **_SPECIAL, method=True,
                self=lambda grad, self: 0.5 * _ROOT_PI * exp(ERFINV(self) ** 2) * grad)
SPECIAL_ERFCX = OpSpec("special_erfcx", "SpecialErfcxBackward0", _rounded(_special.erfcx),
                       **_SPECIAL, self=lambda grad, self, result:
                           (2.0 * self * result - 2.0 / _ROOT_PI) * grad)
SPECIAL_NDTRI = OpSpec("special_ndtri", "SpecialNdtriBackward0", _rounded(_special.ndtri),
                       **_SPECIAL, self=lambda grad, result:
                           grad * _ROOT_2PI * exp(result * result / 2))
SPECIAL_LOG_NDTR = OpSpec("special_log_ndtr", "SpecialLogNdtrBackward0",
                          _rounded(_special.log_ndtr), **_SPECIAL,
                          self=lambda grad, self, result:
                              grad / _ROOT_2PI * exp(-(result + self * self / 2)))
SINC = OpSpec("sinc", "SincBackward0", _rounded(_sinc), **_SPECIAL, method=True,
              self=_sinc_backward)
SPECIAL_ENTR = OpSpec("special_entr", "SpecialEntrBackward0", _rounded(_entr), **_SPECIAL,
                      self=lambda grad, self: grad * -(1 + _log(self)))
# two inputs (a number for either: its own node, as torch's Scalar overloads)
XLOGY = OpSpec("xlogy", "XlogyBackward0", _rounded(_xlogy), **_BROADCASTING, promotion_always=True,
               self=lambda grad, self, other: masked_fill(
                   XLOGY(grad, other), (self == 0) & (other <= 0), 0),
               other=lambda grad, self, other: grad * self / other)
XLOGY_SCALAR_SELF = OpSpec("xlogy", "XlogyBackward1", _rounded(_number_first(_xlogy)), **_SPECIAL,
                           args=("self",), promoted_args=("self",),
                           other=lambda grad, self, other: grad * self / other)
XLOGY_SCALAR_OTHER = OpSpec("xlogy", "XlogyBackward2", _rounded(_xlogy), **_SPECIAL,
                            args=("other",), promoted_args=("other",),
                            self=lambda grad, self, other: masked_fill(
                                XLOGY_SCALAR_OTHER(grad, other), (self == 0) & (other <= 0), 0))
SPECIAL_XLOG1PY = OpSpec(
    "special_xlog1py", "SpecialXlog1PyBackward0", _rounded(_xlog1py), **_BROADCASTING,
    promotion_always=True,
    self=lambda grad, self, other: masked_fill(
        SPECIAL_XLOG1PY(grad, other), (self == 0) & (other <= -1), 0),
    other=lambda grad, self, other: grad * self / (other + 1))
SPECIAL_XLOG1PY_SCALAR_SELF = OpSpec(
    "special_xlog1py", "SpecialXlog1PyBackward1", _rounded(_number_first(_xlog1py)), **_SPECIAL,
    args=("self",), promoted_args=("self",),
    other=lambda grad, self, other: grad * self / (other + 1))
SPECIAL_XLOG1PY_SCALAR_OTHER = OpSpec(
    "special_xlog1py", "SpecialXlog1PyBackward2", _rounded(_xlog1py), **_SPECIAL,
    args=("other",), promoted_args=("other",),
    self=lambda grad, self, other: masked_fill(
        SPECIAL_XLOG1PY_SCALAR_OTHER(grad, other), (self == 0) & (other <= -1), 0))
# zeta(x, q): torch differentiates in q only
SPECIAL_ZETA = OpSpec("special_zeta", "SpecialZetaBackward0", _rounded(_special.zeta),
                      **_BROADCASTING, promotion_always=True,
                      self=_not_implemented("zeta"),
                      other=lambda grad, self, other: grad * -self * SPECIAL_ZETA(self + 1.0,
                                                                                    other))
SPECIAL_ZETA_SCALAR_SELF = OpSpec(
    "special_zeta", "SpecialZetaBackward1", _rounded(_number_first(_special.zeta)), **_SPECIAL,
    args=("self",), promoted_args=("self",),
    other=lambda grad, self, other: grad * -self * SPECIAL_ZETA_SCALAR_SELF(other, self + 1.0))
SPECIAL_ZETA_SCALAR_OTHER = OpSpec(
    "special_zeta", "SpecialZetaBackward2", _rounded(_special.zeta), **_SPECIAL,
    args=("other",), promoted_args=("other",), self=_not_implemented("zeta"))
# the regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P: torch
# differentiates in x only
IGAMMA = OpSpec("igamma", "IgammaBackward0", _rounded(_special.gammainc), **_BROADCASTING,
                promotion_always=True, self=_not_implemented("igamma: input"),
                other=_igamma_other_backward)
IGAMMAC = OpSpec("igammac", "IgammacBackward0", _rounded(_special.gammaincc), **_BROADCASTING,
                 promotion_always=True, self=_not_implemented("igammac: input"),
                 other=lambda grad, self, other: -_igamma_other_backward(grad, self, other))
# torch._standard_gamma: Gamma(self, 1) draws, differentiable as Gamma's, Beta's and
# Dirichlet's rsample need: a draw x moves with the concentration at a fixed CDF value,
# dx/dself = -(dP/dself) / (dP/dx), torch's approximation of it in _standard_gamma_grad (which
# torch does not differentiate further). _dirichlet_grad (Dirichlet's rsample) and
# _sample_dirichlet are not differentiable at all: their nodes refuse, as torch's.
def _refuse_forward_ad(op_name):
    """A node torch refuses (NotImplemented) refuses forward AD too, in its words."""
    raise NotImplementedError(f"Trying to use forward AD with aten::{op_name} that does not "
                              f"support it.")


# (once_differentiable: its formula's _standard_gamma_grad is not differentiated, as torch's)
STANDARD_GAMMA = OpSpec("_standard_gamma", "StandardGammaBackward0", kernels.standard_gamma,
                        args=("generator",), promotes_dtype=False, once_differentiable=True,
                        jvp=no_forward_ad("_standard_gamma", "self"),
                        self=lambda grad, self, result: grad * STANDARD_GAMMA_GRAD(self, result))
STANDARD_GAMMA_GRAD = OpSpec(
    "_standard_gamma_grad", "StandardGammaGradBackward0",
    kernels.floating_only("_standard_gamma_grad", _rounded(_special.standard_gamma_grad)),
    broadcasts=True, promotes_dtype=False, jvp=no_forward_ad("_standard_gamma_grad", "self"),
    self=_not_implemented("_standard_gamma_grad"), output=_not_implemented("_standard_gamma_grad"))
STANDARD_GAMMA_GRAD.derivative_implemented = False
DIRICHLET_GRAD = OpSpec(
    "_dirichlet_grad", "NotImplemented",
    kernels.floating_only("_dirichlet_grad", _rounded(_special.dirichlet_grad)), broadcasts=True,
    promotes_dtype=False, jvp=lambda x_t: _refuse_forward_ad("_dirichlet_grad"),
    **dict.fromkeys(("x", "alpha", "total"), formulas.not_implemented("_dirichlet_grad")))
DIRICHLET_GRAD.derivative_implemented = False
SAMPLE_DIRICHLET = OpSpec("_sample_dirichlet", "NotImplemented", kernels.sample_dirichlet,
                          args=("generator",), promotes_dtype=False,
                          jvp=lambda self_t: _refuse_forward_ad("_sample_dirichlet"),
                          self=formulas.not_implemented("_sample_dirichlet"))
SAMPLE_DIRICHLET.derivative_implemented = False
TABLE["STANDARD_GAMMA"] = STANDARD_GAMMA
_SPECIALS = {
    "I0": I0, "SPECIAL_I0E": SPECIAL_I0E, "SPECIAL_I1": SPECIAL_I1, "SPECIAL_I1E": SPECIAL_I1E,
    "LGAMMA": LGAMMA, "DIGAMMA": DIGAMMA, "POLYGAMMA": POLYGAMMA, "POLYGAMMA_": POLYGAMMA_,
    "MVLGAMMA": MVLGAMMA,
    "ERFC": ERFC, "ERFINV": ERFINV, "SPECIAL_ERFCX": SPECIAL_ERFCX,
    "SPECIAL_NDTRI": SPECIAL_NDTRI, "SPECIAL_LOG_NDTR": SPECIAL_LOG_NDTR, "SINC": SINC,
    "SPECIAL_ENTR": SPECIAL_ENTR, "XLOGY": XLOGY, "XLOGY_SCALAR_SELF": XLOGY_SCALAR_SELF,
    "XLOGY_SCALAR_OTHER": XLOGY_SCALAR_OTHER, "SPECIAL_XLOG1PY": SPECIAL_XLOG1PY,
    "SPECIAL_XLOG1PY_SCALAR_SELF": SPECIAL_XLOG1PY_SCALAR_SELF,
    "SPECIAL_XLOG1PY_SCALAR_OTHER": SPECIAL_XLOG1PY_SCALAR_OTHER, "SPECIAL_ZETA": SPECIAL_ZETA,
    "SPECIAL_ZETA_SCALAR_SELF": SPECIAL_ZETA_SCALAR_SELF, "IGAMMA": IGAMMA, "IGAMMAC": IGAMMAC}
# (zeta with a number for q has no derivative at all, as torch's: out of the table, whose rows
# all compute one; tests/engine/test_fft_special.py checks its refusal)
SPECIAL_ZETA_SCALAR_OTHER.derivative_implemented = False
TABLE.update(_SPECIALS)
TABLE.update({f"{name}_": spec.in_place for name, spec in _SPECIALS.items()
              if spec.in_place and spec.in_place.derivative_implemented})
