"""Forward computations on numpy arrays that need more than one numpy call.
Each takes the op's tensor inputs (as arrays) then its other arguments, in the table's order,
and returns arrays; dims arrive normalised (non-negative, tuples for multi-dim reductions)."""
import functools
import math
import operator

import numpy as np

from .. import memory

from ..dtypes import LEGACY_TYPE_NAMES
from ...errors import _LinAlgError

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_ndarray = np.ndarray
# a float64 or complex128 result rounded to the dtype of the low-precision operands
_ROUNDED_TO = {_F32: {_F64: _F32, np.dtype(np.complex128): np.dtype(np.complex64)},
               _F16: {_F64: _F16, np.dtype(np.complex128): np.dtype(np.complex64)}}


def rounded_once(kernel):
    """`kernel` computed in float64 where its operands are float32 or float16, the result
    rounded once to their dtype: the correctly rounded value, as IEEE's +, -, *, / and sqrt
    are and numpy's float32 exp, log, tanh, sin, ... are not (they are an ulp or more off for
    10-40% of inputs, torch's for 0.02-5%). Float64 rounded to float32 is off only where the
    exact value lies within float64's error of a midpoint between two float32s (about 2^-29
    of inputs), and then by that error. Number arguments are rounded to float32 first, as the
    float32 kernel had them (and torch's, whose float16 kernels compute in float32 too).
    With a float64 or complex operand, or none of low precision, the kernel runs as it is
    (`.as_is`: what dispatch runs for a float64 tensor, without this wrapper's cost)."""
    def in_float64(*operands):
        first = getattr(operands[0], "dtype", None)
        if first is _F64:  # (the common cases first)
            return kernel(*operands)
        if len(operands) == 1 and (first is _F32 or first is _F16):
            return kernel(operands[0].astype(_F64)).astype(first)
        low = None
        for a in operands:
            dtype = getattr(a, "dtype", None)
            if dtype is _F32 or dtype is _F16:
                low = low or dtype
            elif dtype is not None and dtype.kind in "fcV":
                return kernel(*operands)  # (float64 or complex: numpy's precision is the op's)
        if low is None:
            return kernel(*operands)
        wide = []
        for a in operands:
            dtype = getattr(a, "dtype", None)
            wide.append(a.astype(_F64) if dtype is _F32 or dtype is _F16 else
                        float(np.float32(a)) if type(a) is float else a)
        out = kernel(*wide)
        return out.astype(_ROUNDED_TO[low].get(out.dtype, out.dtype))
    in_float64.__name__ = getattr(kernel, "__name__", "kernel")
    in_float64.as_is = kernel
    return in_float64


# numpy's float32 kernels of these are not correctly rounded
exp, log, log1p, expm1, sin, cos, tan, sinh, cosh, tanh, asin, acos, atan, asinh, acosh, atanh, \
    power, atan2 = map(rounded_once, (
        np.exp, np.log, np.log1p, np.expm1, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
        np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh, np.power,
        np.arctan2))


class _NumberArrays(dict):
    """Python floats as read-only 0-d arrays of one dtype, made once each. numpy's loop for
    two arrays costs about a third less than its path for a Python number (NEP 50's weak
    scalar), which casts the number to the array's dtype first: so the same values. (Zero
    is left out: 0.0 and -0.0 are one key.)"""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def __missing__(self, number):
        if len(self) >= 1024:  # bounded: numbers that keep changing must not pile up
            self.clear()
        with np.errstate(all="ignore"):  # (1e300 as float32 is inf, as numpy's cast of it)
            array = np.array(number, self.dtype)
        array.flags.writeable = False
        self[number] = array
        return array


_NUMBER_ARRAYS = {_F32: _NumberArrays(_F32), _F64: _NumberArrays(_F64)}


def _elementwise(numpy_op, with_alpha=False):
    """A binary elementwise kernel: numpy's op, its result laid out as torch's when the first
    operand is not C-ordered; with_alpha: other scaled by alpha first (add, sub), with one
    rounding (torch's fused multiply-add)."""
    # (numpy's layout is torch's for a result of at most one dim, read first: it spares the
    # flags object _c_ordered makes, on every op)
    scaled = with_alpha and rounded_once(lambda self, other, alpha: numpy_op(self, other * alpha))

    def kernel(self, other, alpha=1):  # (alpha: add's and sub's)
        if alpha != 1:
            out = scaled(self, other, alpha)
        else:
            if type(other) is float and other and type(self) is _ndarray:  # (x * 0.9)
                numbers = _NUMBER_ARRAYS.get(self.dtype)
                if numbers is not None:
                    other = numbers[other]
            out = numpy_op(self, other)
        if type(out) is not _ndarray or out.ndim < 2 or _c_ordered(self):
            return out
        return torch_layout(out, self, other)
    return kernel


add = _elementwise(operator.add, with_alpha=True)
sub = _elementwise(operator.sub, with_alpha=True)
mul = _elementwise(np.multiply)
div = _elementwise(np.true_divide)


def div_rounded(self, other, rounding_mode):
    """div with a rounding_mode: the quotient rounded toward zero ("trunc") or down ("floor");
    integers divide as integers, and by zero raise as torch's."""
    kind = np.result_type(self, other).kind
    if kind == "c":
        raise NotImplementedError(f'"div_{rounding_mode}_cpu" not implemented for '
                                  f"'{LEGACY_TYPE_NAMES[np.result_type(self, other).name]}'")
    if kind in "iub":
        if np.any(np.asarray(other) == 0):
            raise RuntimeError("ZeroDivisionError")
        quotient = np.floor_divide(self, other)
        if rounding_mode == "trunc":  # one up where the floor went past zero
            quotient = quotient + ((np.remainder(self, other) != 0) & (
                (np.asarray(self) < 0) != (np.asarray(other) < 0)))
        return quotient
    if rounding_mode == "floor":
        return np.floor_divide(self, other)
    return np.trunc(np.true_divide(self, other))
maximum = _elementwise(np.maximum)
minimum = _elementwise(np.minimum)


def _contiguous(a):
    # (np.ascontiguousarray makes a 0-d array 1-d)
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _laid_out_like(a, like):
    """`a` in the memory layout of `like` (torch's empty_like: the same order of strides)."""
    if like.flags.c_contiguous or a.ndim < 2:
        return a
    out = np.empty_like(like, dtype=a.dtype)
    out[...] = a
    return out


def _c_ordered(a):
    # a C-ordered first operand: numpy's layout is torch's (the rare other case is checked)
    return type(a) is not np.ndarray or a.flags.c_contiguous


def torch_layout(out, *operands):
    """`out` laid out as torch's elementwise ops lay theirs out (TensorIterator): its dims
    ordered by the operands' strides, the first operand that orders a pair of dims deciding
    (numpy's K order falls back to C order when the operands disagree). So .view() succeeds
    or fails on the result as it does in torch."""
    if out.ndim < 2:
        return out
    first = operands[0]
    if (out.flags.c_contiguous and type(first) is np.ndarray and first.shape == out.shape
            and _strictly_decreasing(first.strides)):
        return out  # (a slice of rows or columns: the first operand orders every pair as C)
    return _laid_out(out, [np.broadcast_to(a, out.shape).strides for a in operands
                           if type(a) is np.ndarray and a.ndim])


def _strictly_decreasing(strides):
    return all(a > b for a, b in zip(strides, strides[1:])) and strides[-1] > 0


def _laid_out(out, strides):
    """`out` in the order of dims TensorIterator gives operands of these strides."""
    shape = out.shape

    def should_swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:  # broadcast in one of them: the next operand decides
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    perm = list(range(out.ndim - 1, -1, -1))  # fastest-varying dim first
    for i in range(1, out.ndim):  # torch's insertion sort, ambiguous pairs left in place
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            order = should_swap(perm[dim0], perm[dim1])
            if order > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif order < 0:
                break
    slowest_first = perm[::-1]
    result = np.empty([shape[d] for d in slowest_first], dtype=out.dtype).transpose(
        np.argsort(slowest_first))
    if result.strides == out.strides:
        return out
    result[...] = out
    return result


@rounded_once
def _rsub_scaled(self, other, alpha):
    return other - self * alpha


def rsub(self, other, alpha):
    return other - self if alpha == 1 else _rsub_scaled(self, other, alpha)


def relu(self):  # (numpy's maximum returns its second operand at a tie: relu(-0.0) is -0.0)
    return np.maximum(0, self).astype(self.dtype, copy=False)


@rounded_once
def sigmoid(self):
    # torch's 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving 0 (forwards
    # and formulas run with numpy's warnings off)
    x = self if self.dtype.kind in "fcV" else self.astype(np.float64)  # (promotion casts after)
    out = np.exp(np.negative(x))
    out += 1
    return np.reciprocal(out, out=out) if type(out) is np.ndarray else 1 / out  # (0-d: a scalar)


@rounded_once
def rsqrt(self):
    return 1 / np.sqrt(self)


def clamp(self, min, max):  # (x itself at a tie, as torch's: numpy's maximum and minimum
    # return their second operand)
    out = self
    if min is not None:
        out = np.maximum(min, out)
    if max is not None:
        out = np.minimum(max, out)
    return out.astype(self.dtype, copy=False)


def clamp_tensor(self, min, max):  # (bounds: arrays or None; call promotes the dtype)
    out = self if min is None else maximum(self, min)
    return out if max is None else minimum(out, max)


def masked_fill(self, mask, value):  # (contiguous, as torch's: a clone, then filled)
    return _contiguous(np.where(mask, np.asarray(value, dtype=self.dtype), self))


def pow_scalar_base(exponent, self):
    return power(self, exponent)


def unbind(self, dim):
    moved = np.moveaxis(self, dim, 0)
    return tuple(moved[i, ...] for i in range(len(moved)))  # views, 0-d ones included


def reciprocal(self):
    return 1.0 / self  # (np.reciprocal of an int array would divide in ints)


def split(self, split_size, dim):
    n = self.shape[dim]
    sizes = [min(split_size, n - i) for i in range(0, n, split_size)] or [0]
    return split_with_sizes(self, sizes, dim)


def where(condition, self, other):
    if type(other) in (int, float) and other == 0:
        return _keep_where(condition, self)
    if type(self) in (int, float) and self == 0:
        return _keep_where(np.logical_not(condition), other)
    return np.where(condition, self, other)


_SAME_SIZE_INT = {np.dtype(np.float16): np.int16, np.dtype(np.float32): np.int32,
                  np.dtype(np.float64): np.int64}


def _keep_where(condition, x):
    """np.where(condition, x, 0) as x's bits and-ed with an all-ones or all-zeros mask: the
    same values (NaN and inf kept, +0.0 elsewhere), without np.where's branch per element,
    which costs ~10x on a random mask (relu's backward)."""
    bits = _SAME_SIZE_INT.get(getattr(x, "dtype", None))
    if (bits is None or type(x) is not np.ndarray or type(condition) is not np.ndarray
            or condition.dtype != np.bool_ or condition.shape != x.shape or not x.ndim):
        return np.where(condition, x, 0)
    mask = np.negative(condition.view(np.uint8), dtype=bits)  # True: -1, all bits set
    return np.bitwise_and(mask, x.view(bits), out=mask).view(x.dtype)


# ---- reductions ----
# reductions give contiguous results, as torch's (numpy's follow the input's layout)
def _reduction(numpy_reduce):
    def kernel(self, dim, keepdim):
        return _contiguous(numpy_reduce(self, axis=dim, keepdims=keepdim))
    return kernel


def _reduction_with_correction(numpy_reduce):  # (var, std: ddof is torch's correction)
    def kernel(self, dim, correction, keepdim):
        return _contiguous(numpy_reduce(self, axis=dim, ddof=correction, keepdims=keepdim))
    return kernel


sum_dim = _reduction(np.sum)
mean_dim = _reduction(np.mean)
prod_dim = _reduction(np.prod)
amax = _reduction(np.amax)
amin = _reduction(np.amin)
var = _reduction_with_correction(np.var)
std = _reduction_with_correction(np.std)


def _extreme_dim(numpy_arg):
    """max.dim / min.dim: the values and their indices (numpy_arg: np.argmax or np.argmin)."""
    def kernel(self, dim, keepdim):
        indices = np.expand_dims(numpy_arg(self, axis=dim), dim)
        values = np.take_along_axis(self, indices, axis=dim)
        if keepdim:
            return values, indices
        return np.squeeze(values, axis=dim), np.squeeze(indices, axis=dim)
    return kernel


max_dim = _extreme_dim(np.argmax)
min_dim = _extreme_dim(np.argmin)


def logsumexp(self, dim, keepdim):
    m = np.amax(self, axis=dim, keepdims=True, initial=-np.inf)  # (-inf for an empty dim)
    m = np.where(np.isfinite(m), m, 0)  # rows of all -inf (or inf) need no shift, as torch
    out = np.log(np.sum(np.exp(self - m), axis=dim, keepdims=True)) + m
    return _contiguous(out if keepdim else np.squeeze(out, axis=dim))


def softmax(self, dim):  # (initial: an empty dim has no max, and needs none)
    e = np.exp(self - np.amax(self, axis=dim, keepdims=True, initial=-np.inf))
    return _contiguous(e / np.sum(e, axis=dim, keepdims=True))


def log_softmax(self, dim):
    shifted = self - np.amax(self, axis=dim, keepdims=True, initial=-np.inf)
    return _contiguous(shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True)))


def norm(self, ord, dim, keepdim):
    """linalg.vector_norm: (sum |x|^ord)^(1/ord) over `dim` (None: all); 0 counts the
    nonzeros, +-inf is the largest/smallest |x|."""
    if ord == 2:
        out = np.sqrt(np.sum(self * self, axis=dim, keepdims=keepdim))
    elif ord == 1:
        out = np.sum(np.abs(self), axis=dim, keepdims=keepdim)
    elif ord == np.inf:
        out = np.amax(np.abs(self), axis=dim, keepdims=keepdim)
    elif ord == -np.inf:
        out = np.amin(np.abs(self), axis=dim, keepdims=keepdim)
    elif ord == 0:
        out = np.sum(self != 0, axis=dim, keepdims=keepdim)
    else:
        out = np.sum(np.abs(self) ** ord, axis=dim, keepdims=keepdim) ** (1 / ord)
    return _contiguous(np.asarray(out, dtype=self.dtype))


def renorm(self, p, dim, maxnorm):
    """Each slice along dim whose p-norm (over the other dims) exceeds maxnorm scaled down to
    maxnorm / (norm + 1e-7), as torch's."""
    norms = norm(self, p, tuple(d for d in range(self.ndim) if d != dim), True)
    factor = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0).astype(self.dtype)
    return _contiguous(self * factor)


# ---- shapes ----
def view(self, size):
    try:
        return np.reshape(self, size, copy=False)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.") from None


def squeeze(self, dim):
    if dim is None:
        return np.squeeze(self)
    dim = (dim,) if isinstance(dim, int) else dim
    # torch ignores dims of size != 1 (and a 0-d tensor's dim 0, which it has not)
    dims = tuple(d for d in dim if self.ndim and self.shape[d] == 1)
    return np.squeeze(self, axis=dims) if dims else self.view()


def expand(self, size):
    """A writeable view, as torch's (writes that would overlap are refused when made), with
    torch's strides: 0 where a dim is expanded, and for new dims of size 1 the stride a
    contiguous layout would give them (numpy gives 0), which decides full vs partial overlap."""
    np.broadcast_to(self, size)  # (numpy's error for sizes that cannot be broadcast)
    lead = len(size) - self.ndim
    strides = [0] * len(size)  # (a 0-d tensor's are all 0, as torch's)
    for i in range(len(size) - 1, -1, -1):
        if i >= lead:
            n, stride = self.shape[i - lead], self.strides[i - lead]
        else:
            n, stride = 1, size[i + 1] * strides[i + 1] if i + 1 < len(size) else 0
        strides[i] = stride if n == size[i] else 0
    return np.lib.stride_tricks.as_strided(self, tuple(size), strides, writeable=True)


def to_dtype(self, dtype):
    if self.dtype.kind == "c" and dtype.kind != "c":  # as torch: the imaginary part dropped
        self = self.real
    return self.astype(dtype)


# ---- complex numbers ----
def sgn(self):
    """z / |z|, 0 at 0 (torch.sgn); the sign of real values."""
    if self.dtype.kind != "c":
        return np.sign(self)
    magnitude = np.abs(self)
    return np.where(magnitude == 0, 0, self / np.where(magnitude == 0, 1, magnitude))


def angle(self):
    """The argument of z; of a real x, pi where x < 0 (nan stays nan), as torch."""
    if self.dtype.kind == "c":
        return np.angle(self)
    return np.where(self < 0, np.pi, np.where(np.isnan(self), self, 0)).astype(
        self.dtype if self.dtype.kind in "fV" else np.float32)


def view_as_real(self):
    """A view of complex z as its (real, imag) pairs: a last dim of 2 (torch's strides)."""
    parts = self.real  # numpy's view of the real parts, z's strides
    return np.lib.stride_tricks.as_strided(parts, self.shape + (2,),
                                           self.strides + (parts.itemsize,))


def view_as_complex(self):
    """A view of real pairs (a last dim of 2, stride 1) as complex values."""
    # (numpy views a last dim of 2 contiguous values as one complex value)
    return self.view(np.promote_types(self.dtype, np.complex64))[..., 0]


def complex_(real, imag):
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape),
                   np.promote_types(real.dtype, np.complex64))
    out.real, out.imag = real, imag
    return out


@rounded_once
def polar(abs, angle):
    return complex_(abs * np.cos(angle), abs * np.sin(angle))


def clone(self, memory_format=None):  # None: torch's preserve_format, the input's dim order
    if memory_format is None:
        return self.copy(order="K")
    from ..memory import laid_out
    out = laid_out(self, memory_format)  # (the input itself when laid out so already: a clone
    return out.copy(order="K") if np.may_share_memory(out, self) else out  # never shares)


def copy(self, src):
    try:
        return np.broadcast_to(src, self.shape).astype(self.dtype)
    except ValueError:  # (shapes that do not broadcast at all: the row's broadcast error)
        shape = np.broadcast_shapes(self.shape, np.shape(src))
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}") from None


def threshold_backward(grad_output, self, threshold):
    return where(self > threshold, grad_output, 0)


def normal(self, mean, std, generator):
    return generator.normal(mean, std, self.shape).astype(self.dtype)


def uniform(self, low, high, generator):
    return generator.uniform(low, high, self.shape).astype(self.dtype)


def random_integers(self, low, high, generator):
    """Integers drawn uniformly from [low, high); high None: up to what the dtype holds
    exactly, as torch's random_() (2^mantissa bits for floats, the largest value for ints)."""
    if high is None:
        if self.dtype.kind in "fV":
            high = 2 ** (np.finfo(self.dtype).nmant + 1) + 1
        elif self.dtype.kind == "b":
            high = 2
        else:
            high = int(np.iinfo(self.dtype).max) + 1
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    return generator.integers(low, high, self.shape).astype(self.dtype)


def log_normal(self, mean, std, generator):
    return generator.lognormal(mean, std, self.shape).astype(self.dtype)


def exponential(self, lambd, generator):
    return generator.exponential(1 / lambd, self.shape).astype(self.dtype)


def geometric(self, p, generator):
    return generator.geometric(p, self.shape).astype(self.dtype)


def cauchy(self, median, sigma, generator):
    return (median + sigma * generator.standard_cauchy(self.shape)).astype(self.dtype)


# ---- indexing ----
def take_flat(self, size, flat_indices):
    return self.reshape(-1)[flat_indices]


def as_strided(self, size, stride, storage_offset, flat_indices):
    """The elements of self's storage (the array owning its memory, C order) at
    storage_offset + sum(i * stride), as a view (strided.py checked the bounds)."""
    storage = memory.owning_array(self).reshape(-1)
    return np.lib.stride_tricks.as_strided(storage[storage_offset:], tuple(size),
                                           [s * storage.itemsize for s in stride])


def index_put(self, values, indices, accumulate):
    out = self.copy()
    if accumulate:
        np.add.at(out, indices, values)
    else:
        out[indices] = values
    return out


def select(self, dim, index):
    return self[(slice(None),) * dim + (index, Ellipsis)]  # Ellipsis: a 0-d view, not a copy


def slice_(self, dim, start, end, step):
    return self[(slice(None),) * dim + (slice(start, end, step),)]


def embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    return np.take(weight, indices, axis=0)


def embedding_bags(indices, offsets, include_last_offset):
    """The bag of each index (torch's offset2bag) and the number of bags."""
    starts = offsets[:-1] if include_last_offset else offsets
    bag = np.searchsorted(starts, np.arange(len(indices)), side="right") - 1
    return bag, len(starts)


def embedding_bag(weight, indices, offsets, per_sample_weights, scale_grad_by_freq, mode,
                  sparse, include_last_offset, padding_idx):
    """torch's _embedding_bag: each bag's rows of weight summed (times per_sample_weights),
    averaged or maxed (mode 0, 1, 2), the padding_idx rows left out and empty bags zero; with
    offset2bag, bag_size (0 for sums) and max_indices (bag_size but for maxes) as torch's."""
    bag, n_bags = embedding_bags(indices, offsets, include_last_offset)
    kept = indices != padding_idx
    rows = weight[indices] * (1 if per_sample_weights is None else per_sample_weights[:, None])
    out = np.zeros((n_bags, weight.shape[1]), weight.dtype)
    counts = np.bincount(bag[kept], minlength=n_bags)
    if mode == 2:  # per feature, the first of the bag's rows holding the maximum
        max_indices = np.zeros(out.shape, np.int64)
        for b in range(n_bags):
            members = np.nonzero((bag == b) & kept)[0]
            if members.size:
                first = np.argmax(rows[members], axis=0)
                out[b] = rows[members][first, np.arange(out.shape[1])]
                max_indices[b] = indices[members][first]
        return out, bag, counts, max_indices
    np.add.at(out, bag[kept], rows[kept])
    if mode == 1:
        out /= np.maximum(counts, 1)[:, None]
        return out, bag, counts, counts.copy()
    return out, bag, np.zeros(n_bags, np.int64), np.zeros(n_bags, np.int64)


def embedding_bag_backward(grad_output, per_sample_weights, indices, offset2bag, bag_size,
                           maximum_indices, num_weights, mode, padding_idx):
    """_embedding_bag's weight gradient: each index's row gets its bag's gradient (times its
    per-sample weight, over the bag's size for means, per feature only where it was the
    maximum), none for padding_idx."""
    out = np.zeros((num_weights, grad_output.shape[1]), grad_output.dtype)
    if mode == 2:
        filled = bag_size > 0
        np.add.at(out, (maximum_indices[filled], np.arange(grad_output.shape[1])),
                  grad_output[filled])
        return out
    rows = grad_output[offset2bag]
    if mode == 1:
        rows = rows / np.maximum(bag_size, 1)[offset2bag][:, None]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    kept = indices != padding_idx
    np.add.at(out, indices[kept], rows[kept])
    return out


def embedding_bag_per_sample_weights_backward(grad_output, weight, indices, offset2bag,
                                              padding_idx):
    """d(out[bag]) / d(per_sample_weight[i]) = weight[index[i]]: their dot with the gradient."""
    out = (grad_output[offset2bag] * weight[indices]).sum(-1) * (indices != padding_idx)
    return out.astype(grad_output.dtype, copy=False)


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """Each index's rows of grad_output summed into its row of weight; padding_idx's row
    stays zero."""
    dim = grad_output.shape[-1]
    out = np.zeros((num_weights, dim), grad_output.dtype)
    np.add.at(out, indices.reshape(-1), grad_output.reshape(-1, dim))
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def sparse_compressed_dense(values, coordinates, size):
    """A compressed sparse tensor's dense storage: its values at their coordinates, zeros
    elsewhere."""
    out = np.zeros(size, values.dtype)
    out[coordinates] = values
    return out


def masked_dense(self, mask):
    """self where mask holds, zeros elsewhere (to_dense of a compressed tensor's storage, a
    conversion to a compressed layout)."""
    return np.where(mask, self, np.zeros((), self.dtype))


def index(self, indices):
    try:
        out = self[indices]
    except IndexError:  # torch checks the indices it reads: none when the result is empty
        safe = tuple(np.zeros_like(i) if type(i) is np.ndarray and i.dtype != np.bool_ else i
                     for i in indices)
        try:
            out = self[safe]
        except IndexError:
            out = None
        if out is None or out.size:
            raise _out_of_bounds(self, indices) from None
    return out if out.ndim < 2 else _index_layout(out, self, indices)


def _out_of_bounds(self, indices):
    """torch's message for an index tensor's value outside its dim: the dim is counted among
    the index tensors (x[:, [1], [9]] of a (2, 3, 4) tensor: "dimension 1 with size 4"),
    where numpy counts every axis."""
    axis = ordinal = 0
    for index in indices:
        if type(index) is np.ndarray and index.dtype == np.bool_:  # torch: its nonzero()
            axis, ordinal = axis + index.ndim, ordinal + index.ndim
            continue
        if type(index) is np.ndarray:
            size = self.shape[axis]
            bad = index[(index >= size) | (index < -size)]
            if bad.size:
                return IndexError(f"index {bad.flat[0]} is out of bounds for dimension "
                                  f"{ordinal} with size {size}")
            ordinal += 1
        axis += 1
    return IndexError("index out of range")  # not reached: numpy raised for a bound


def _index_layout(out, self, indices):
    """torch's layout for an advanced-indexing result: TensorIterator over self restrided
    (the indexed dims replaced by the indices' shape, stride 0; moved to the front first
    when not adjacent) and the indices."""
    items = []
    for item in indices:  # a bool mask is the indices of its True elements, one per dim
        items.extend(np.nonzero(item) if getattr(item, "dtype", None) == np.bool_ else [item])
    strides = list(self.strides) + [0] * max(0, len(items) - self.ndim)
    items += [slice(None)] * (self.ndim - len(items))
    advanced = [d for d, item in enumerate(items) if type(item) is np.ndarray]
    if advanced != list(range(advanced[0], advanced[-1] + 1)):  # torch's transposeToFront
        order = advanced + [d for d in range(len(items)) if d not in advanced]
        items, strides = [items[d] for d in order], [strides[d] for d in order]
        advanced = list(range(len(advanced)))
    shape = np.broadcast_shapes(*(items[d].shape for d in advanced))
    before, after = advanced[0], len(items) - advanced[-1] - 1
    operands = [tuple(strides[:before]) + (0,) * len(shape) + tuple(strides[advanced[-1] + 1:])]
    for d in advanced:
        inner = np.broadcast_to(items[d], shape).strides
        operands.append((0,) * before + inner + (0,) * after)
    return _laid_out(out, operands)


def alias(self):
    return self.view()


def diagonal(self, offset, dim1, dim2):
    """A writeable view, as torch's (numpy's own diagonal is read-only): the diagonal's
    shape and strides, from the corner where it starts."""
    start = [slice(None)] * self.ndim
    start[dim2 if offset >= 0 else dim1] = slice(abs(offset), None)
    corner = self[tuple(start)]
    diag = np.diagonal(corner, 0, dim1, dim2)
    return np.lib.stride_tricks.as_strided(corner, diag.shape, diag.strides,
                                           writeable=corner.flags.writeable)


def _into_zeros(view_op):
    """The backward of a view op: zeros of the input's sizes, the gradient written into the
    op's view of them (the view's arguments follow input_sizes)."""
    def backward(grad_output, input_sizes, *view_args):
        out = np.zeros(input_sizes, dtype=grad_output.dtype)
        view_op(out, *view_args)[...] = grad_output
        return out
    return backward


select_backward = _into_zeros(select)
slice_backward = _into_zeros(slice_)
diagonal_backward = _into_zeros(diagonal)


def _scatter_into(view_op):
    """select_scatter, slice_scatter, diagonal_scatter: a copy of self with src written where
    the view op reads (in self's dtype)."""
    def scatter(self, src, *view_args):
        out = self.copy()
        view_op(out, *view_args)[...] = src
        return out
    return scatter


select_scatter = _scatter_into(select)
slice_scatter = _scatter_into(slice_)
diagonal_scatter = _scatter_into(diagonal)


def masked_scatter(self, mask, source):
    """self (broadcast with mask) with source's leading elements written, in order, where the
    mask is true."""
    shape = np.broadcast_shapes(self.shape, mask.shape)
    out = np.array(np.broadcast_to(self, shape))
    where_true = np.broadcast_to(mask, shape)
    out[where_true] = source.reshape(-1)[:np.count_nonzero(where_true)]
    return out


def index_backward(grad_output, input_sizes, indices):
    out = np.zeros(input_sizes, dtype=grad_output.dtype)
    np.add.at(out, indices, grad_output)  # repeated indices add up
    return out


def gather(self, index, dim, sparse_grad=False):
    return self[_scatter_index(index, dim)]  # (index may be smaller than self: no broadcast)


def _scatter_index(index, dim):
    """Full index tuple addressing, for each element of `index`, its target along `dim`."""
    if not index.ndim:  # (a 0-d index of a 1-d tensor: one element)
        return (index,)
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def scatter(self, index, src, dim):
    out = self.copy()
    if not index.size:  # (torch checks nothing of an empty index, nor writes)
        return out
    out[_scatter_index(index, dim)] = (src[tuple(slice(0, n) for n in index.shape)]
                                       if np.ndim(src) else src)  # (src may be larger)
    return out


def scatter_add(self, index, src, dim):
    out = self.copy()
    if not index.size:
        return out
    np.add.at(out, _scatter_index(index, dim), src[tuple(slice(0, n) for n in index.shape)])
    return out


_SCATTER_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
                       "amin": np.minimum, "max": np.maximum, "min": np.minimum}  # (max, min:
# torch's forward takes amax's and amin's old names; its backward refuses them)


def scatter_reduce(self, index, src, dim, reduce, include_self):
    """src's values reduced into self at index along dim; without include_self the targets'
    own values take no part (they start from the reduction's identity)."""
    out = self.copy()
    if not index.size:
        return out
    where = _scatter_index(index, dim)
    values = src[tuple(slice(0, n) for n in index.shape)]
    if not include_self:
        identity = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
        if identity is None:  # amax / amin: the dtype's lowest / highest
            info = np.finfo(out.dtype) if out.dtype.kind in "fV" else np.iinfo(out.dtype)
            identity = info.min if reduce in ("amax", "max") else info.max
        out[where] = identity
    _SCATTER_REDUCTIONS[reduce].at(out, where, values)
    if reduce == "mean":
        count = np.full(out.shape, 1 if include_self else 0, np.int64)
        np.add.at(count, where, 1)
        count = np.maximum(count, 1)
        out = out // count if out.dtype.kind in "iu" else (out / count).astype(out.dtype)
    return out


def index_along(index, shape, dim):
    """A 1-d index of positions along dim, as scatter's index: one per element of a tensor
    of `shape`."""
    along = [1] * len(shape)
    along[dim] = -1
    return np.broadcast_to(np.asarray(index).reshape(along), shape)


def index_reduce(self, index, source, dim, reduce, include_self):
    """source's slices along dim reduced into self's slices at index (scatter_reduce with
    the index spread over each slice)."""
    return scatter_reduce(self, index_along(index, source.shape, dim), source, dim, reduce,
                          include_self)


def split_with_sizes(self, split_sizes, dim):
    # basic slices (views), not np.split: its Python-level array_split costs 10x (the LSTM's
    # gates are split at every step)
    index = [slice(None)] * self.ndim
    pieces, start = [], 0
    for size in split_sizes:
        index[dim] = slice(start, start + size)
        pieces.append(self[tuple(index)])
        start += size
    return tuple(pieces)


# ---- matrix products ----
def _scaled_sum(product, self, beta, alpha):
    """beta * self + alpha * product, as addmm's: beta = 0 ignores self, NaNs included."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return np.broadcast_to(product, np.broadcast_shapes(product.shape, self.shape)).copy()
    return product + (self if beta == 1 else beta * self)


def addmv(self, mat, vec, beta, alpha):
    return _scaled_sum(np.matmul(mat, vec), self, beta, alpha)


def addr(self, vec1, vec2, beta, alpha):
    return _scaled_sum(np.multiply.outer(vec1, vec2), self, beta, alpha)


def addbmm(self, batch1, batch2, beta, alpha):
    return _scaled_sum(np.matmul(batch1, batch2).sum(0), self, beta, alpha)


def grouped_mm(a, b, offs):
    """F.grouped_mm: one product per group. Both 3d: the batch is the groups. Else offs ends
    each group's slice of a 2d operand's jagged dim: a's rows (2d @ 3d), b's columns (3d @ 2d),
    or the contraction (2d @ 2d, one result per group). Outside every group: zeros (torch
    leaves them unwritten). A group ending before it starts is empty."""
    if offs is None:
        return np.matmul(a, b)
    starts = (0,) + tuple(offs[:-1])
    if a.ndim == 2 and b.ndim == 3:
        out = np.zeros((a.shape[0], b.shape[-1]), np.result_type(a, b))
        for g, (start, end) in enumerate(zip(starts, offs)):
            out[start:end] = a[start:end] @ b[g]
    elif a.ndim == 3:
        out = np.zeros((a.shape[1], b.shape[-1]), np.result_type(a, b))
        for g, (start, end) in enumerate(zip(starts, offs)):
            out[:, start:end] = a[g] @ b[:, start:end]
    else:
        out = np.zeros((len(offs), a.shape[0], b.shape[-1]), np.result_type(a, b))
        for g, (start, end) in enumerate(zip(starts, offs)):
            out[g] = a[:, start:end] @ b[start:end]
    return out


def addmm(self, mat1, mat2, beta, alpha):
    """beta * self + alpha * (mat1 @ mat2), adding into the product (no second buffer);
    beta = 0 ignores self, NaNs included, as torch. The result is C-ordered, as torch's."""
    if by_transposed_product(mat1, mat2):
        out = np.matmul(mat2.T, mat1.T).T  # the same product, laid out transposed
    else:
        out = np.matmul(mat1, mat2)
    if alpha != 1:
        out *= alpha
    if beta != 0:
        term = self if beta == 1 else beta * self
        if out.flags.c_contiguous:
            out += term
        else:  # the sum re-lays the product out in C order: the bias add's one pass
            out = np.add(out, term, out=np.empty(out.shape, out.dtype))
    elif not out.flags.c_contiguous:
        out = np.ascontiguousarray(out)
    return out


def by_transposed_product(mat1, mat2):
    """Whether addmm computes x @ weight.t() as (weight @ x.t()).t(): for a float32 x of at
    most 32 rows by a transposed weight whose other dims are at least 256, OpenBLAS's sgemm
    is 1.2-2x faster that way round (measured on 2-D shapes from 1x1024x4096 to 32x256x4096;
    smaller dims or more rows, or float64, are slower). The LSTM's per-step linear is one."""
    return (mat1.ndim == 2 and mat2.ndim == 2 and mat1.dtype == np.float32
            and mat2.dtype == np.float32 and mat1.shape[0] <= 32
            and min(mat2.shape) >= 256 and mat1.flags.c_contiguous and mat2.T.flags.c_contiguous)


def is_column_major(sizes, strides):
    """A matrix stored transposed (weight.t()): torch's test in mm's backward."""
    return strides[0] == 1 and strides[1] == sizes[0]


# ---- activations ----
# numpy has no erf: math's, correctly rounded in float64 (or nearly)
_ERF, _ERFC = np.frompyfunc(math.erf, 1, 1), np.frompyfunc(math.erfc, 1, 1)


def erf(self):
    out = np.asarray(_ERF(self), dtype=np.float64)  # (a 0-d input gives a Python float)
    return out.astype(self.dtype) if self.dtype.kind in "fV" else out


def gelu(self, approximate):
    """torch's CPU formulas, step for step in the input's dtype (float32 for lower ones),
    cancellation included (a very negative x gives 0, not the tiny x Phi(x)):
    x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), or x/2 (1 + erf(x/sqrt2)), which float32
    computes as x/2 + x/2 erf (one fused multiply-add) with torch's vectorised erf; float16
    and bfloat16 (gelu_of_bfloat16) as x/2 (1 + erf), without the fused add (in the tails,
    where 1 + erf cancels, that gives -0.0 where the fused add gives +0.0)."""
    work = self.dtype.type if self.dtype == np.float64 else np.float32
    x, half, one = self.astype(work, copy=False), work(0.5), work(1)
    if approximate == "tanh":
        inner = work(_GELU_BETA) * (x + work(0.044715) * (x * x * x))
        out = half * x * (one + _rounded(np.tanh, inner))
    elif self.dtype == np.float32:
        half_x = half * x
        out = _fused(half_x, _vectorised_erf(x * work(np.sqrt(0.5))), half_x)
    elif work is np.float32:  # (float16)
        out = _gelu_of_reduced(x)
    else:
        out = x * half * (one + np.asarray(_ERF(x * np.sqrt(0.5)), dtype=np.float64))
    return np.asarray(out).astype(self.dtype, copy=False)


_GELU_BETA = np.sqrt(2) * (2 / np.sqrt(np.pi)) * 0.5  # (torch's M_SQRT2 * M_2_SQRTPI * 0.5)


def _gelu_of_reduced(x):
    """x/2 (1 + erf(x/sqrt2)) on float32 values, no fused add: torch's kernel for float16 and
    bfloat16."""
    half, one = np.float32(0.5), np.float32(1)
    return x * half * (one + _vectorised_erf(x * np.float32(np.sqrt(0.5))))


def gelu_of_bfloat16(self, approximate):  # (self: a bfloat16 tensor's values, in float32)
    return gelu(self, approximate) if approximate == "tanh" else _gelu_of_reduced(self)


gelu.in_bfloat16 = gelu_of_bfloat16  # (dispatch.bfloat16_forward's kernel for this row)


def _rounded(fn, x):
    """fn of float32 values computed in float64, rounded once (as Sleef's are, nearly)."""
    return fn(x.astype(np.float64)).astype(x.dtype) if x.dtype == np.float32 else fn(x)


def _fused(a, b, c):
    """a * b + c rounded once to float32 (a fused multiply-add: the product is exact in
    float64)."""
    return (a.astype(np.float64) * b + c).astype(np.float32)


def _vectorised_erf(x):
    """torch's Vectorized<float>::erf: sign(x) (1 - t r(t) exp(-x^2)), t = 1 / (1 + p|x|), r
    a quartic (Abramowitz and Stegun 7.1.26, within 1.5e-7 of erf), with its fused
    multiply-adds."""
    f32 = np.float32
    ax = np.abs(x)
    t = f32(1) / _fused(np.full_like(ax, 0.3275911), ax, f32(1))
    r = np.full_like(t, 1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        r = _fused(r, t, f32(c))
    tail = -_rounded(np.exp, -(x * x)) * t
    return np.copysign(_fused(tail, r, f32(1)), x)


@rounded_once
def silu(self):
    return self * sigmoid(self)


@rounded_once
def softplus(self, beta, threshold):
    scaled = self * beta
    # log1p(exp(z)) / beta without overflow; linear above the threshold, as torch
    smooth = (np.maximum(scaled, 0) + np.log1p(np.exp(-np.abs(scaled)))) / beta
    return np.where(scaled > threshold, self, smooth).astype(self.dtype, copy=False)


def leaky_relu(self, negative_slope):
    return np.where(self > 0, self, self * negative_slope).astype(self.dtype, copy=False)


def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    return np.where(self > 0, grad_output, grad_output * negative_slope).astype(
        grad_output.dtype, copy=False)


@rounded_once
def elu(self, alpha, scale, input_scale):
    negative = alpha * scale * np.expm1(np.minimum(self, 0) * input_scale)
    return np.where(self > 0, self * scale, negative).astype(self.dtype, copy=False)


def threshold(self, threshold, value):
    return np.where(self > threshold, self, value).astype(self.dtype, copy=False)


def celu(self, alpha):
    return elu(self, alpha, 1, 1 / alpha)


def rrelu_with_noise(self, noise, lower, upper, training):
    if training:
        return (self * noise).astype(self.dtype, copy=False)
    return leaky_relu(self, (lower + upper) / 2)


# ---- losses (reduction: 0 none, 1 mean, 2 sum, torch's enum) ----
def reduce(loss, reduction):
    if reduction == 1:
        return np.mean(loss)
    return np.sum(loss) if reduction == 2 else loss


def mse_loss(self, target, reduction):
    diff = self - target
    return reduce(diff * diff, reduction)


def smooth_l1_loss(self, target, reduction, beta):
    diff = np.abs(self - target)  # (beta 0: diff < 0 never holds, diff - 0 is l1's)
    return reduce(np.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta), reduction)


def huber_loss(self, target, reduction, delta):
    diff = np.abs(self - target)
    return reduce(np.where(diff <= delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta)),
                  reduction)


def soft_margin_loss(self, target, reduction):
    return reduce(np.log1p(np.exp(-target * self)), reduction)


def margin_rows(self):
    """A (C,) or (N, C) input of the margin losses as (N, C) rows."""
    return self.reshape(-1, self.shape[-1]) if self.ndim else self.reshape(1, 1)


def multi_margin_loss(self, target, weight, p, margin, reduction):
    """sum over j != y of max(0, margin - x[y] + x[j]) ** p (times weight[y]), / C."""
    x = margin_rows(self)
    n, c = x.shape
    rows, y = np.arange(n), np.asarray(target).reshape(-1)
    z = np.maximum(margin - x[rows, y][:, None] + x, 0)
    z[rows, y] = 0
    z = z ** p
    if weight is not None:
        z = z * weight[y][:, None]
    return reduce((z.sum(1) / c).reshape(np.shape(target)), reduction)


def multilabel_targets(target, shape):
    """(count, is_target), both (N, C): how often each class is listed in a row of target
    before its first -1, and whether it is."""
    labels = np.asarray(target).reshape(shape)
    count = np.zeros(shape)
    for i, row in enumerate(labels):
        for label in row:
            if label < 0:
                break
            count[i, label] += 1
    return count, (count > 0).astype(float)


def multilabel_margin_loss(self, target, reduction):
    """sum over listed classes a and unlisted j of max(0, 1 - (x[a] - x[j])), / C; with
    is_target, torch's second output."""
    x = margin_rows(self)
    count, is_target = multilabel_targets(target, x.shape)
    d = np.maximum(1 - x[:, :, None] + x[:, None, :], 0)
    loss = (count[:, :, None] * (1 - is_target)[:, None, :] * d).sum((1, 2)) / x.shape[1]
    return (reduce(loss.reshape(self.shape[:-1]), reduction),
            is_target.reshape(self.shape).astype(self.dtype))


def binary_cross_entropy(self, target, weight, reduction):
    # torch clamps each log at -100, so probabilities of exactly 0 or 1 give finite losses
    loss = -(target * np.maximum(np.log(self), -100)
             + (1 - target) * np.maximum(np.log1p(-self), -100))
    return reduce(loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction):
    softplus_neg = np.maximum(-self, 0) + np.log1p(np.exp(-np.abs(self)))  # -log sigmoid(x)
    positives_scale = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    loss = (1 - target) * self + positives_scale * softplus_neg
    return reduce(loss if weight is None else loss * weight, reduction)


def nll_loss_weights(self, target, weight, ignore_index):
    """Each target's class weight (0 where ignored), the target with ignored entries
    replaced by a valid class, so it can index, and the classes' dim of self."""
    ignored = target == ignore_index
    safe = np.where(ignored, 0, target)
    w = np.ones(target.shape, self.dtype) if weight is None else weight[safe].astype(self.dtype)
    class_dim = 0 if self.ndim == 1 else 1
    return np.where(ignored, 0, w).astype(self.dtype, copy=False), safe, class_dim


def nll_loss(self, target, weight, reduction, ignore_index):
    """-self[n, target[n]] * weight[target[n]] (classes on dim 1, or 0 for one sample), and
    the total weight the mean divides by (torch's second output)."""
    w, safe, class_dim = nll_loss_weights(self, target, weight, ignore_index)
    picked = np.squeeze(np.take_along_axis(self, np.expand_dims(safe, class_dim), class_dim),
                        class_dim)
    loss = -picked * w
    total_weight = np.sum(w)
    if reduction == 0:
        return loss, np.asarray(0, self.dtype)
    return (np.sum(loss) / total_weight if reduction == 1 else np.sum(loss)), total_weight


def nll_loss_backward(grad_output, self, target, weight, total_weight, reduction, ignore_index):
    """-grad * weight[target] at each target's class, 0 elsewhere (linear in grad)."""
    w, safe, class_dim = nll_loss_weights(self, target, weight, ignore_index)
    g = -w * (grad_output / total_weight if reduction == 1 else grad_output)
    if reduction == 1 and not w.all():  # ignored targets get 0, even when all are (0/0)
        g = np.where(w != 0, g, 0)
    out = np.zeros_like(self)
    np.put_along_axis(out, np.expand_dims(safe, class_dim), np.expand_dims(g, class_dim), class_dim)
    return out


# CTC (Graves et al. 2006) as torch's CPU kernels: the forward (alpha) and backward (beta)
# recursions over the extended targets l' = (blank, l1, blank, l2, ..., blank), in log
# space, vectorised over the batch; each sum of logs as torch's: log(sum exp(a - max)) + max
# with a max of -inf taken as 0
def _ctc_extended(targets, target_lengths, blank, n):
    """l' per sample (N, 2 max(S) + 1), blank-padded past 2 S + 1; and where a label may
    be reached by skipping the blank before it (it differs from the label two states back)."""
    max_length = max(target_lengths, default=0)
    extended = np.full((n, 2 * max_length + 1), blank, np.int64)
    offsets = np.cumsum((0,) + tuple(target_lengths))
    for b, length in enumerate(target_lengths):
        labels = targets[b, :length] if targets.ndim == 2 else targets[offsets[b]:offsets[b + 1]]
        extended[b, 1:2 * length:2] = labels
    skip = np.zeros(extended.shape, bool)
    skip[:, 3::2] = extended[:, 3::2] != extended[:, 1:-2:2]
    return extended, skip


def _ctc_log_add(*terms):
    top = np.maximum.reduce(terms)
    top = np.where(top == -np.inf, 0, top)
    with np.errstate(divide="ignore"):
        return np.log(sum(np.exp(t - top) for t in terms)) + top


def _shifted(values, by):
    """values[..., s - by] (by > 0) or values[..., s + |by|], -inf where there is none."""
    out = np.full_like(values, -np.inf)
    if by > 0:
        out[..., by:] = values[..., :-by]
    else:
        out[..., :by] = values[..., -by:]
    return out


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """-log p(target | log_probs) per sample, and log_alpha (N, T, 2 max(S) + 1), torch's
    saved second output (-inf where a state is out of reach or past a sample's lengths)."""
    t_max, n = log_probs.shape[:2]
    extended, skip = _ctc_extended(targets, target_lengths, blank, n)
    emit = np.take_along_axis(log_probs, np.broadcast_to(extended, (t_max,) + extended.shape),
                              2)  # (T, N, L): log p of each state's label
    states = np.arange(extended.shape[1])
    lengths, in_lengths = np.asarray(target_lengths, np.int64), np.asarray(input_lengths,
                                                                            np.int64)
    valid = states <= 2 * lengths[:, None]  # (N, L)
    log_alpha = np.full((n, t_max, extended.shape[1]), -np.inf, log_probs.dtype)
    if t_max:  # the first frame: the first blank, or the first label
        first = np.where((states[:2] == 0) | (lengths[:, None] > 0), emit[0, :, :2], -np.inf)
        log_alpha[:, 0, :2] = np.where((in_lengths > 0)[:, None], first, -np.inf)
    for t in range(1, t_max):
        previous = log_alpha[:, t - 1]
        two_back = np.where(skip, _shifted(previous, 2), -np.inf)
        step = _ctc_log_add(previous, _shifted(previous, 1), two_back) + emit[t]
        log_alpha[:, t] = np.where(valid & (t < in_lengths)[:, None], step, -np.inf)
    last = log_alpha[np.arange(n), np.maximum(in_lengths - 1, 0)]  # (N, L)
    end = np.take_along_axis(last, 2 * lengths[:, None], 1)[:, 0]
    before = np.where(lengths > 0, np.take_along_axis(
        last, np.maximum(2 * lengths - 1, 0)[:, None], 1)[:, 0], -np.inf)
    nll = -_ctc_log_add(end, before)
    empty = in_lengths == 0  # no frames: certain for an empty target, impossible otherwise
    nll = np.where(empty, np.where(lengths == 0, 0, np.inf), nll).astype(log_probs.dtype)
    return nll, log_alpha


def ctc_loss_backward(grad_output, log_probs, targets, neg_log_likelihood, log_alpha,
                      input_lengths, target_lengths, blank, zero_infinity):
    """torch's ctc_loss_backward_cpu: log_beta by the backward recursion, then for each frame
    and class exp(log_probs) - exp(log sum of alpha beta over the class's states + nll -
    log_probs), times the sample's gradient; 0 past a sample's frames, and for samples of
    infinite loss under zero_infinity."""
    t_max, n, classes = log_probs.shape
    extended, skip = _ctc_extended(targets, target_lengths, blank, n)
    emit = np.take_along_axis(log_probs, np.broadcast_to(extended, (t_max,) + extended.shape), 2)
    lengths, in_lengths = np.asarray(target_lengths, np.int64), np.asarray(input_lengths,
                                                                            np.int64)
    states = np.arange(extended.shape[1])
    # the last frame starts at the final blank and the last label
    last_states = (states == 2 * lengths[:, None]) | (states == 2 * lengths[:, None] - 1)
    log_beta = np.full(log_alpha.shape, -np.inf, log_alpha.dtype)
    skip_from = _shifted(skip, -2)  # state s may skip to s + 2
    for t in range(t_max - 1, -1, -1):
        if t < t_max - 1:
            following = log_beta[:, t + 1]
            two_ahead = np.where(skip_from, _shifted(following, -2), -np.inf)
            step = _ctc_log_add(following, _shifted(following, -1), two_ahead) + emit[t]
        else:
            step = np.full_like(emit[t], -np.inf)
        first = np.where(last_states, emit[t], -np.inf)
        log_beta[:, t] = np.where((t == in_lengths - 1)[:, None], first,
                                  np.where((t < in_lengths - 1)[:, None], step, -np.inf))
    # log sum over each class's states of alpha beta: (N, T, C)
    alpha_beta = log_alpha + log_beta
    top = np.max(alpha_beta, axis=2, keepdims=True, initial=-np.inf)
    top = np.where(top == -np.inf, 0, top)
    one_hot = extended[:, :, None] == np.arange(classes)  # (N, L, C)
    with np.errstate(divide="ignore"):
        log_class = np.log(np.matmul(np.exp(alpha_beta - top), one_hot)) + top
    log_class = log_class.transpose(1, 0, 2)  # (T, N, C)
    nll = neg_log_likelihood[None, :, None]
    with np.errstate(invalid="ignore", over="ignore"):
        grad = (np.exp(log_probs) - np.exp(log_class + nll - log_probs)) * grad_output[None, :,
                                                                                       None]
    keep = np.arange(t_max)[:, None] < in_lengths[None, :]  # (T, N)
    if zero_infinity:
        keep = keep & (neg_log_likelihood != np.inf)[None, :]
    return np.where(keep[:, :, None], grad, 0).astype(log_probs.dtype)


def native_layer_norm(input, weight, bias, normalized_shape, eps):
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    if input.dtype in _MEAN_VAR_BY_UFUNCS:
        mean, centred, variance = _mean_var_by_ufuncs(input, dims)
    else:
        mean = np.mean(input, axis=dims, keepdims=True)
        variance = np.var(input, axis=dims, keepdims=True)
        centred = input - mean
    rstd = 1 / np.sqrt(variance + eps)
    out = centred * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return _contiguous(out), mean, rstd  # (torch's output is contiguous)


# np.mean and np.var's own steps for float32/64 (their Python wrappers cost more than the sums of
# a small layer: a model's layer_norm on 2x8 spent two thirds of its kernel there), the same
# values bit for bit; float16's mean accumulates in float32 and its var does not, so it goes
# through numpy's functions
_MEAN_VAR_BY_UFUNCS = (np.dtype(np.float32), np.dtype(np.float64))


def _mean_var_by_ufuncs(a, dims):
    """(mean, a - mean, biased variance) over dims, kept dims, as np.mean and np.var compute them."""
    count = np.intp(1)
    for d in dims:
        count *= a.shape[d]
    mean = np.add.reduce(a, axis=dims, keepdims=True)
    np.true_divide(mean, count, out=mean, casting="unsafe")
    centred = a - mean
    variance = np.add.reduce(centred * centred, axis=dims, keepdims=True)
    np.true_divide(variance, count, out=variance, casting="unsafe")
    return mean, centred, variance


# ---- reductions and scans ----
def var_mean(self, dim, correction, keepdim):
    return (np.var(self, axis=dim, ddof=correction, keepdims=keepdim),
            np.mean(self, axis=dim, keepdims=keepdim))


def std_mean(self, dim, correction, keepdim):
    return (np.std(self, axis=dim, ddof=correction, keepdims=keepdim),
            np.mean(self, axis=dim, keepdims=keepdim))


def _accumulated(scan):
    """A scan as torch's CPU kernels run it: in the dtype's accumulate type (at::acc_type),
    float32 in float64 and float16 in float32, the result rounded once to the dtype. A
    bfloat16 tensor reaches the kernel as float32 (`in_bfloat16`): accumulated in float32."""
    def kernel(self, dim):
        wide = _SCAN_ACCUMULATE.get(self.dtype)
        if wide is None:
            return _contiguous(scan(self, dim))
        return _contiguous(scan(self.astype(wide), dim).astype(self.dtype))
    kernel.__name__ = scan.__name__
    kernel.in_bfloat16 = lambda self, dim: _contiguous(scan(self, dim))
    return kernel


_SCAN_ACCUMULATE = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}


@_accumulated
def cumsum(self, dim):
    out = np.cumsum(self, axis=dim)
    out += 0  # torch's sum starts from 0: a sum of -0.0s is +0.0 (numpy's from the first)
    return out


@_accumulated
def cumprod(self, dim):
    return np.cumprod(self, axis=dim)


def _running_extreme(better):
    """cummax / cummin along dim: values and the index each came from (torch's CPU loop: a
    later value takes over when `better` or equal; a NaN takes over and stays)."""
    def kernel(self, dim):
        if self.ndim == 0:
            return self.copy(), np.zeros((), np.int64)
        x = np.moveaxis(self, dim, 0)
        values, indices = np.empty_like(x), np.zeros(x.shape, np.int64)
        if x.shape[0]:
            best, where = x[0].copy(), np.zeros(x.shape[1:], np.int64)
            floating = x.dtype.kind in "fcV"
            for i in range(x.shape[0]):
                take = better(x[i], best) | (x[i] == best)
                if floating:
                    take = (take & ~np.isnan(best)) | np.isnan(x[i])
                best, where = np.where(take, x[i], best), np.where(take, i, where)
                values[i], indices[i] = best, where
        return (_contiguous(np.moveaxis(values, 0, dim)),
                _contiguous(np.moveaxis(indices, 0, dim)))
    return kernel


cummax = _running_extreme(np.greater)
cummin = _running_extreme(np.less)


@rounded_once
def _logcumsumexp(self, dim):
    return _contiguous(np.logaddexp.accumulate(self, axis=dim))


def logcumsumexp(self, dim):
    if self.dtype.kind not in "fcV":
        from ..dtypes import LEGACY_TYPE_NAMES
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{LEGACY_TYPE_NAMES[self.dtype.name]}'")
    if self.ndim == 0:
        return self.copy()
    return _logcumsumexp(self, dim)


def aminmax(self, dim, keepdim):
    axis = None if dim is None else dim
    low, high = np.min(self, axis=axis, keepdims=keepdim), np.max(self, axis=axis,
                                                                  keepdims=keepdim)
    return np.asarray(low), np.asarray(high)


def nanmedian_all(self):
    kept = self[~np.isnan(self)] if self.dtype.kind in "fV" else self.reshape(-1)
    if kept.size == 0:
        return np.asarray(np.nan, self.dtype)
    return np.asarray(np.sort(kept)[(kept.size - 1) // 2])


def nanmedian_dim(self, dim, keepdim):
    """Per slice, the lower middle of the non-NaN values, at its index (NaN sorts last, so
    the (count - 1) // 2-th of the sorted slice; an all-NaN slice gives its first NaN)."""
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    order = np.argsort(self, axis=dim, kind="stable")
    count = (~np.isnan(self)).sum(axis=dim, keepdims=True) if self.dtype.kind in "fV" else \
        np.full(np.delete(self.shape, dim).tolist()[:dim] + [1] + list(self.shape[dim + 1:]),
                self.shape[dim])
    index = np.take_along_axis(order, np.maximum(count - 1, 0) // 2, axis=dim)
    values = np.take_along_axis(self, index, axis=dim)
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return values, index.astype(np.int64)


# ---- reordering ----
def flip(self, dims):
    return np.flip(self, dims).copy(order="K")  # a copy laid out as the input, as torch's


def roll(self, shifts, dims):
    if not dims:  # rolled as if flattened, then the shape restored
        return np.roll(self.reshape(-1), shifts).reshape(self.shape)
    return _contiguous(np.roll(self, shifts, dims))


def repeat(self, repeats):
    lead = len(repeats) - self.ndim
    return np.tile(self.reshape((1,) * lead + self.shape), repeats)


def sort(self, dim, descending):
    # stable, so ties keep their order (torch's stable=True); descending reverses the keys
    if descending and self.dtype.kind == "b":  # (bools cannot be negated)
        indices = np.flip(np.argsort(self, axis=dim, kind="stable"), dim)
    else:
        indices = np.argsort(-self if descending else self, axis=dim, kind="stable")
    return _laid_out_like(np.take_along_axis(self, indices, dim), self), _laid_out_like(
        indices, self)


def topk(self, k, dim, largest, sorted):
    values, indices = sort(self, dim, largest)
    index = (slice(None),) * dim + (slice(0, k),)
    return values[index].copy(), indices[index].copy()


def index_add(self, index, source, dim, alpha):
    out = self.copy()
    source = source if alpha == 1 else source * alpha
    if np.ndim(source) == 0:
        source = np.reshape(source, (1,))
    np.add.at(out, (slice(None),) * dim + (np.reshape(index, -1),), source)
    return out


def index_select(self, index, dim):
    """The slices at index along dim; a 0-d index picks one and keeps the dim, as torch's."""
    return np.take(self, np.reshape(index, -1) if self.ndim else index, axis=dim)


def bernoulli(self, generator):
    return (generator.random(self.shape) < self).astype(self.dtype)


def bernoulli_fill(self, p, generator):
    return (generator.random(self.shape) < p).astype(self.dtype)


# ---- convolutions and pooling: (N, C, *spatial) arrays, vectorised over pixels ----
def expanded(values, n):
    """A per-dim argument of n spatial dims (torch expands a single value: padding (0,))."""
    return tuple(values) * n if len(values) == 1 else tuple(values)


def windows(x, kernel, stride, padding, dilation, pad_value=0):
    """Every window a kernel visits, as a view: (N, C, *out, *kernel). `padding` is a
    (before, after) pair per spatial dim."""
    spatial = len(kernel)
    if any(p for pair in padding for p in pair):
        x = np.pad(x, ((0, 0),) * (x.ndim - spatial) + tuple(padding), constant_values=pad_value)
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    view = np.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(-spatial, 0)))
    lead = (slice(None),) * (x.ndim - spatial)
    return view[lead + tuple(slice(None, None, s) for s in stride)
                + tuple(slice(None, None, d) for d in dilation)]


def add_windows(target, values, stride, dilation):
    """The adjoint of `windows` (col2im): target[window of out position o, offset k] +=
    values[..., k, o] for values shaped (..., *kernel, *out). A loop over the kernel's
    offsets, each a strided add of the whole output."""
    spatial = len(stride)
    kernel, out = values.shape[-2 * spatial:-spatial], values.shape[-spatial:]
    lead = (slice(None),) * (values.ndim - 2 * spatial)
    for offset in np.ndindex(*kernel):
        place = tuple(slice(k * d, k * d + s * (n - 1) + 1, s)
                      for k, d, s, n in zip(offset, dilation, stride, out))
        target[lead + place] += values[lead + offset]
    return target


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch's convolution (cross-correlation), or its transpose (the adjoint in the input),
    of (N, C, *spatial) inputs: im2col (one copy of the windows) and a matmul per group."""
    spatial = weight.ndim - 2
    stride, padding, dilation, output_padding = (
        expanded(v, spatial) for v in (stride, padding, dilation, output_padding))
    if transposed:
        out = _convolution_transpose(input, weight, stride, padding, dilation,
                                     output_padding, groups)
    else:
        out = _convolution(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out += bias.reshape((-1,) + (1,) * spatial)
    return out


def _convolution(x, w, stride, padding, dilation, groups):
    spatial = w.ndim - 2
    view = windows(x, w.shape[2:], stride, [(p, p) for p in padding], dilation)
    n, c, out = x.shape[0], x.shape[1], view.shape[2:2 + spatial]
    pixels, taps = int(np.prod(out)), int(np.prod(w.shape[2:]))
    kernels = w.reshape(groups, w.shape[0] // groups, -1)  # (G, O/G, C/G * taps)
    if pixels >= taps:
        # im2col: (N, G, C/G * taps, pixels), one copy, the pixels innermost
        order = (0, 1) + tuple(range(2 + spatial, 2 + 2 * spatial)) + tuple(range(2, 2 + spatial))
        cols = view.transpose(order).reshape(n, groups, -1, pixels)
        return np.matmul(kernels, cols).reshape((n, w.shape[0]) + out)
    # a kernel larger than its output (a weight's gradient): (N, G, pixels, C/G * taps),
    # the taps innermost, so the copy reads rows of x
    split = view.reshape((n, groups, c // groups) + view.shape[2:])
    order = (0, 1) + tuple(range(3, 3 + spatial)) + (2,) + tuple(range(3 + spatial,
                                                                     3 + 2 * spatial))
    cols = split.transpose(order).reshape(n, groups, pixels, -1)
    result = np.matmul(cols, kernels.swapaxes(1, 2))  # (N, G, pixels, O/G)
    return np.ascontiguousarray(result.swapaxes(2, 3)).reshape((n, w.shape[0]) + out)


def _convolution_transpose(x, w, stride, padding, dilation, output_padding, groups):
    """The adjoint of _convolution in its input: each input pixel's contribution at each
    kernel offset (one batched matmul, channels last), added into the output offset by
    offset (a loop over the kernel, each a strided add of whole contiguous rows)."""
    n, c_in = x.shape[:2]
    sizes, kernel = x.shape[2:], w.shape[2:]
    per_group_in, per_group_out = c_in // groups, w.shape[1]
    rows = np.moveaxis(x, 1, -1).reshape(-1, groups, per_group_in).swapaxes(0, 1)
    taps = np.moveaxis(w.reshape(groups, per_group_in, per_group_out, -1), -1, 0)
    cols = np.matmul(rows, taps)  # (taps, G, N * pixels, C_out / G)
    cols = np.moveaxis(cols, 1, -2).reshape(kernel + (n,) + sizes + (groups * per_group_out,))
    full = tuple((i - 1) * s + d * (k - 1) + 1 + o for i, s, d, k, o in
                 zip(sizes, stride, dilation, kernel, output_padding))
    out = np.zeros((n,) + full + (groups * per_group_out,), dtype=cols.dtype)
    for offset in np.ndindex(*kernel):
        place = tuple(slice(k * d, k * d + s * (i - 1) + 1, s)
                      for k, d, s, i in zip(offset, dilation, stride, sizes))
        out[(slice(None),) + place] += cols[offset]
    out = np.moveaxis(out, -1, 1)[(slice(None),) * 2 + tuple(
        slice(p, f - p) for p, f in zip(padding, full))]
    return np.ascontiguousarray(out)


def conv_tbc(self, weight, bias, pad):
    """torch's conv_tbc: out[t] = bias + sum over k of self[t + k - pad] @ weight[k], the
    frames outside self zero (a negative pad crops)."""
    frames, batch = self.shape[:2]
    kernel, out_channels = weight.shape[0], weight.shape[2]
    out_frames = frames - kernel + 1 + 2 * pad
    if out_frames < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_frames}: "
                           f"[{out_frames}, {batch}, {out_channels}]")
    out = np.empty((out_frames, batch, out_channels), self.dtype)
    out[...] = bias
    for k in range(kernel):
        first, last = max(0, pad - k), min(out_frames, frames + pad - k)
        if last > first:
            out[first:last] += np.matmul(self[first + k - pad:last + k - pad], weight[k])
    return out

def pooling_output_size(size, kernel, pad, stride, dilation, ceil_mode):
    """torch's pooling_output_shape: the last window starts inside the input or its left
    padding."""
    span = dilation * (kernel - 1) + 1
    out = (size + 2 * pad - span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_padding(sizes, kernel, stride, padding, dilation, ceil_mode):
    """(output sizes, (before, after) padding per dim): ceil mode's last window may reach
    past the padding; it is padded further (and those cells never count)."""
    out = tuple(pooling_output_size(n, k, p, s, d, ceil_mode)
                for n, k, p, s, d in zip(sizes, kernel, padding, stride, dilation))
    pads = tuple((p, max(p, (o - 1) * s + d * (k - 1) + 1 - n - p))
                 for n, k, p, s, d, o in zip(sizes, kernel, padding, stride, dilation, out))
    return out, pads


def _flat_index(coords, sizes):
    """Coordinates (numbers, or arrays that broadcast), one per spatial dim, as row-major
    indices into the flattened spatial block of `sizes`."""
    index = 0
    for c, n in zip(coords, sizes):
        index = index * n + c
    return index


def _along_axes(vectors):
    """Each 1-d vector along its own axis (the first along the first of len(vectors))."""
    n = len(vectors)
    return [np.asarray(v).reshape((-1,) + (1,) * (n - 1 - i)) for i, v in enumerate(vectors)]


def max_pool_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    """The largest value of each window and its index in the flattened spatial block (H, W)
    or (D, H, W): torch's CPU scan, vectorised over the windows (a loop over the kernel's
    offsets): a value wins if larger than the best so far (ties: the first) or NaN (the last
    NaN); the best starts at -inf on the window's first cell inside the input."""
    spatial = len(kernel_size)
    stride = stride or kernel_size
    sizes = tuple(self.shape[-spatial:])
    out, pads = _pool_padding(sizes, kernel_size, stride, padding, dilation, ceil_mode)
    padded = np.pad(self, ((0, 0),) * (self.ndim - spatial) + pads,
                    constant_values=-np.inf) if any(p for pair in pads for p in pair) else self
    starts = [np.arange(o) * s - p for o, s, p in zip(out, stride, padding)]
    first = [np.where(a < 0, a + -(a // d) * d, a) for a, d in zip(starts, dilation)]
    best = np.full(self.shape[:-spatial] + out, -np.inf, self.dtype)
    index = np.broadcast_to(_flat_index(_along_axes(first), sizes), best.shape)
    grid = _flat_index(_along_axes(starts), sizes)
    nan_aware = bool(np.isnan(self).any())  # (without a NaN, one comparison an offset)
    for offset in np.ndindex(*kernel_size):
        shift = tuple(k * d for k, d in zip(offset, dilation))
        value = padded[(Ellipsis,) + tuple(slice(h, h + s * (o - 1) + 1, s)
                                           for h, s, o in zip(shift, stride, out))]
        wins = (value > best) | np.isnan(value) if nan_aware else value > best
        best = np.where(wins, value, best)
        index = np.where(wins, grid + _flat_index(shift, sizes), index)
    return best, index.astype(np.int64, copy=False)


def _max_pool_backward(spatial):
    def max_pool_backward(grad_output, self, indices, *pool_args):
        """Each output's gradient added at the index its max came from (repeated ones add
        up); the pool's arguments (pool_args, as its backward op takes them) are not needed."""
        block = int(np.prod(self.shape[-spatial:]))
        lead = int(np.prod(self.shape[:-spatial]))
        at = (np.arange(lead) * block).reshape(grad_output.shape[:-spatial] + (1,) * spatial) + (
            indices)
        out = np.bincount(at.ravel(), weights=grad_output.ravel(), minlength=lead * block)
        return out.astype(grad_output.dtype, copy=False).reshape(self.shape)
    return max_pool_backward


max_pool_backward, max_pool3d_backward = _max_pool_backward(2), _max_pool_backward(3)


def _fractional_starts(samples, size, out, pool):
    """torch's generate_intervals: each window's start for one sample u in [0, 1) per plane,
    floor((i + u) alpha) - floor(u alpha) with alpha = (size - pool) / (out - 1) in the input's
    float type; the last window ends at the input's end."""
    alpha = (samples.dtype.type(size - pool) / samples.dtype.type(out - 1)) if out > 1 else 0
    u = samples[:, None]
    starts = ((np.arange(out, dtype=samples.dtype) + u) * alpha).astype(np.int64) - (
        (u * alpha).astype(np.int64))
    starts[:, -1] = size - pool
    return starts  # (planes, out)


def fractional_max_pool(self, random_samples, kernel_size, output_size):
    """The largest value of each window of kernel_size at pseudo-random starts (one sample
    per plane and dim: the width's first for 2-d, the depth's first for 3-d, as torch's), and
    its index in the flattened spatial block; torch's scan (ties: the first; NaN wins)."""
    spatial = len(kernel_size)
    sizes = self.shape[-spatial:]
    planes = self.reshape((-1,) + sizes)
    samples = random_samples.reshape(-1, spatial)[:planes.shape[0]]
    order = (1, 0) if spatial == 2 else (0, 1, 2)  # which sample each dim (H, W, ...) reads
    starts = [_fractional_starts(samples[:, k], n, o, p) for k, n, o, p in
              zip(order, sizes, output_size, kernel_size)]
    plane = np.arange(planes.shape[0]).reshape((-1,) + (1,) * spatial)
    # each dim's starts along its own output axis: (planes, 1, .., out_d, .., 1)
    along = [s.reshape((-1,) + (1,) * d + (s.shape[1],) + (1,) * (spatial - 1 - d))
             for d, s in enumerate(starts)]
    best = np.full((planes.shape[0],) + tuple(output_size), -np.inf, self.dtype)
    index = np.broadcast_to(_flat_index(along, sizes), best.shape)
    for offset in np.ndindex(*kernel_size):
        at = [a + k for a, k in zip(along, offset)]
        value = planes[(plane,) + tuple(at)]
        wins = (value > best) | np.isnan(value)
        best = np.where(wins, value, best)
        index = np.where(wins, _flat_index(at, sizes), index)
    lead = self.shape[:-spatial]
    return (best.reshape(lead + tuple(output_size)),
            index.astype(np.int64).reshape(lead + tuple(output_size)))


def affine_base_grid(size, align_corners, dtype):
    """ATen's base grid of affine_grid for size (N, C, *spatial): each output position's
    normalised coordinates (x, y[, z]) and a 1, as a (positions, dims + 1) matrix; each dim
    from -1 to 1 (pixel centres without align_corners), 0 for a dim of one."""
    def steps(n):
        if n <= 1:
            return np.zeros(max(n, 1), dtype)
        line = np.linspace(-1, 1, n, dtype=dtype)
        return line if align_corners else line * dtype.type(n - 1) / dtype.type(n)
    axes = np.meshgrid(*[steps(n) for n in size[2:]], indexing="ij")  # (D,) H, W
    base = np.stack(list(axes[::-1]) + [np.ones_like(axes[0])], -1)  # x first: W's coordinate
    return base.reshape(-1, len(size) - 1)


def affine_grid_generator(theta, size, align_corners):
    """Each base grid position mapped by its batch's theta (N, dims, dims + 1)."""
    base = affine_base_grid(size, align_corners, theta.dtype)
    out = np.matmul(base, theta.swapaxes(1, 2))  # (N, positions, dims)
    return out.reshape((size[0],) + tuple(size[2:]) + (len(size) - 2,))


def _reflect(coord, twice_low, twice_high):
    """torch's reflect_coordinates_set_grad: coord reflected into [low, high], and the sign
    of its derivative."""
    if twice_low == twice_high:
        return np.zeros_like(coord), np.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = coord - low
    sign = np.where(coord < 0, -1.0, 1.0)
    coord = np.abs(coord)
    extra, flips = np.fmod(coord, span), np.floor(coord / span)
    even = flips % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _grid_sample_padded(source, size, padding_mode, align_corners):
    """torch's compute_coordinates_set_grad: a position along a dim of `size` with the
    padding mode applied (border: clipped, no gradient at or past the edges; reflection:
    reflected, then clipped), and the factor its derivative gets."""
    mult = np.ones_like(source)
    if padding_mode == 2:
        source, mult = (_reflect(source, 0, 2 * (size - 1)) if align_corners
                        else _reflect(source, -1, 2 * size - 1))
    if padding_mode in (1, 2):
        mult = np.where((source > 0) & (source < size - 1), mult, 0.0)
        source = np.clip(source, 0, size - 1)
    return source, mult


def grid_sample_source(coord, size, padding_mode, align_corners, pad=True):
    """torch's grid_sampler_compute_source_index_set_grad: a normalised coordinate in
    [-1, 1] as a position along a dim of `size` (padded unless pad=False: bicubic pads each
    tap instead), and its derivative in the coordinate."""
    if align_corners:
        source, mult = (coord + 1) / 2 * (size - 1), (size - 1) / 2
    else:
        source, mult = ((coord + 1) * size - 1) / 2, size / 2
    if not pad:
        return source, np.full_like(coord, mult)
    source, padded = _grid_sample_padded(source, size, padding_mode, align_corners)
    return source, padded * mult


def grid_sample_pad_tap(index, size, padding_mode, align_corners):
    """A bicubic tap's integer position with the padding mode applied (get_value_bounded)."""
    source, _ = _grid_sample_padded(index.astype(np.float64), size, padding_mode, align_corners)
    return source.astype(np.int64)


def max_unpool(self, indices, output_size, *stride_padding):
    """max pooling's partial inverse: each value written at its index into a zero block of
    output_size (the last len(output_size) dims); max_unpool3d's stride and padding, which its
    op takes, are not needed."""
    spatial = len(output_size)
    lead = self.shape[:-spatial]
    at = indices.reshape(lead + (-1,))
    block = math.prod(output_size)
    invalid = (at < 0) | (at >= block)
    if invalid.any():
        raise RuntimeError(f"Found an invalid max index: {at[invalid][0]} (output volumes are "
                           f"of size {'x'.join(map(str, output_size))})")
    out = np.zeros(lead + (block,), self.dtype)
    np.put_along_axis(out, at, self.reshape(lead + (-1,)), axis=-1)
    return out.reshape(lead + tuple(output_size))


def avg_pool(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """The mean of each window over the last len(kernel_size) dims (2 or 3)."""
    spatial = len(kernel_size)
    stride = stride or kernel_size
    out, pads = _pool_padding(self.shape[-spatial:], kernel_size, stride, padding,
                              (1,) * spatial, ceil_mode)
    view = windows(self, kernel_size, stride, pads, (1,) * spatial)
    return np.ascontiguousarray(view.sum(axis=tuple(range(-spatial, 0))) / _avg_divisor(
        self.shape[-spatial:], out, kernel_size, stride, padding, count_include_pad,
        divisor_override).astype(self.dtype))


def _avg_divisor(sizes, out, kernel, stride, padding, count_include_pad, divisor_override):
    """What each window's sum is divided by (torch's avg_pool2d/3d): the override, or the
    window's cells inside the padded input, or (without count_include_pad) inside the input."""
    if divisor_override:
        return np.full(out, float(divisor_override))
    counts = []
    for n, o, k, s, p in zip(sizes, out, kernel, stride, padding):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts.append(end - start)
    return functools.reduce(np.multiply.outer, counts).astype(np.float64)


def avg_pool_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                      count_include_pad, divisor_override):
    """Each output's gradient spread evenly (by its divisor) over its window."""
    spatial = len(kernel_size)
    stride = stride or kernel_size
    sizes = self.shape[-spatial:]
    out, pads = _pool_padding(sizes, kernel_size, stride, padding, (1,) * spatial, ceil_mode)
    share = grad_output / _avg_divisor(sizes, out, kernel_size, stride, padding,
                                       count_include_pad, divisor_override).astype(
        grad_output.dtype)
    lead = share.shape[:-spatial]
    values = np.broadcast_to(share.reshape(lead + (1,) * spatial + share.shape[-spatial:]),
                             lead + tuple(kernel_size) + share.shape[-spatial:])
    full = tuple(n + a + b for n, (a, b) in zip(sizes, pads))
    target = add_windows(np.zeros(self.shape[:-spatial] + full, grad_output.dtype), values,
                         stride, (1,) * spatial)
    return np.ascontiguousarray(target[(Ellipsis,) + tuple(
        slice(a, a + n) for n, (a, _) in zip(sizes, pads))])


# ---- resampling along each spatial dim: pads, upsampling, adaptive average pooling ----
# A plan per spatial dim, (index, weight): output position o along that dim is
# sum_k weight[k, o] * input[index[k, o]] (weight None: index[0] alone, weight 1).
def resample(x, plans):
    """x with each plan applied along its dim (the last len(plans) dims)."""
    for axis, (index, weight) in zip(range(-len(plans), 0), plans):
        if weight is None:
            x = np.take(x, index[0], axis=axis)
            continue
        shape = (-1,) + (1,) * (-axis - 1)
        total = np.take(x, index[0], axis=axis) * weight[0].reshape(shape).astype(x.dtype)
        for k in range(1, len(index)):
            total += np.take(x, index[k], axis=axis) * weight[k].reshape(shape).astype(x.dtype)
        x = total
    return x


def resample_backward(grad, sizes, plans):
    """The adjoint of resample: each output's gradient added back where it was read from
    (weighted), down to the input's `sizes` (its last len(plans) dims)."""
    for axis, size, (index, weight) in reversed(list(zip(range(-len(plans), 0), sizes, plans))):
        moved = np.moveaxis(grad, axis, -1)
        rows = moved.reshape(-1, moved.shape[-1])
        starts = (np.arange(rows.shape[0]) * size)[:, None]
        at = np.concatenate([(starts + i).ravel() for i in index])
        weights = rows.ravel() if weight is None else np.concatenate(
            [(rows * w).ravel() for w in weight])
        summed = np.bincount(at, weights=weights.real, minlength=rows.shape[0] * size)
        if np.iscomplexobj(weights):  # (bincount sums real weights: the parts one at a time)
            summed = summed + 1j * np.bincount(at, weights=weights.imag,
                                               minlength=rows.shape[0] * size)
        grad = np.moveaxis(summed.astype(grad.dtype, copy=False).reshape(
            moved.shape[:-1] + (size,)), -1, axis)
    return np.ascontiguousarray(grad)


def _pad_plans(sizes, padding, mode):
    """Plans of the padded positions' sources: (left, right) pads per dim, last dim first
    in `padding` (F.pad's order)."""
    plans = []
    for i, n in enumerate(sizes):
        left, right = padding[2 * (len(sizes) - 1 - i)], padding[2 * (len(sizes) - 1 - i) + 1]
        at = np.arange(-left, n + right)
        if mode == "reflect":  # mirrored about the edge cells, which are not repeated
            period = 2 * (n - 1)
            at = at % period if period else np.zeros_like(at)
            at = np.where(at >= n, period - at, at)
        else:  # replicate
            at = np.clip(at, 0, n - 1)
        plans.append(((at,), None))
    return plans


def _padding_kernels(mode):
    """The forward and backward kernels of a pad of this mode."""
    def pad(self, padding):
        return resample(self, _pad_plans(self.shape[-len(padding) // 2:], padding, mode))

    def pad_backward(grad_output, self, padding):
        sizes = self.shape[-len(padding) // 2:]
        return resample_backward(grad_output, sizes, _pad_plans(sizes, padding, mode))
    return pad, pad_backward


reflection_pad, reflection_pad_backward = _padding_kernels("reflect")
replication_pad, replication_pad_backward = _padding_kernels("replicate")


def _blocks(size, kernel, dilation, padding, stride):
    """How many sliding blocks fit along one dim."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _block_slices(kernel_size, dilation, stride, counts):
    """For each kernel offset (i, j), the slices of the padded plane its blocks read."""
    (kh, kw), (dh, dw), (sh, sw), (oh, ow) = kernel_size, dilation, stride, counts
    return [(slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
             slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)) for i in range(kh) for j in range(kw)]


def im2col(self, kernel_size, dilation, padding, stride):
    """(N, C, H, W) -> (N, C kh kw, L): each sliding block's values as a column, channel
    first then the kernel's offsets, blocks in row-major order (F.unfold); unbatched
    (C, H, W) -> (C kh kw, L), as torch's."""
    if self.ndim == 3:
        return im2col(self[None], kernel_size, dilation, padding, stride)[0]
    n, c, h, w = self.shape
    counts = [_blocks(size, k, d, p, s) for size, k, d, p, s in
              zip((h, w), kernel_size, dilation, padding, stride)]
    padded = np.pad(self, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    cols = np.stack([padded[:, :, rows, columns] for rows, columns in
                     _block_slices(kernel_size, dilation, stride, counts)], 2)
    return np.ascontiguousarray(cols.reshape(n, -1, counts[0] * counts[1]))


def col2im(self, output_size, kernel_size, dilation, padding, stride):
    """im2col's adjoint (F.fold): each column added back where its block lies."""
    if self.ndim == 2:
        return col2im(self[None], output_size, kernel_size, dilation, padding, stride)[0]
    n = self.shape[0]
    (h, w), (ph, pw) = output_size, padding
    counts = [_blocks(size, k, d, p, s) for size, k, d, p, s in
              zip((h, w), kernel_size, dilation, padding, stride)]
    kernels = kernel_size[0] * kernel_size[1]
    cols = self.reshape(n, -1, kernels, counts[0], counts[1])
    out = np.zeros((n, cols.shape[1], h + 2 * ph, w + 2 * pw), dtype=self.dtype)
    for k, (rows, columns) in enumerate(_block_slices(kernel_size, dilation, stride, counts)):
        out[:, :, rows, columns] += cols[:, :, k]
    return np.ascontiguousarray(out[:, :, ph:ph + h, pw:pw + w])


def pixel_shuffle(self, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel c r^2 + i r + j moves to row offset i and
    column offset j, as torch's."""
    r = upscale_factor
    *lead, c, h, w = self.shape
    out = self.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    out = out.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(out.reshape(*lead, c // (r * r), h * r, w * r))


def channel_shuffle(self, groups):
    """Channels (dim 1) as a (groups, C / groups) grid, transposed: channel g (C / groups) + i
    moves to i groups + g."""
    n, c = self.shape[:2]
    grid = self.reshape((n, groups, c // groups) + self.shape[2:])
    return np.ascontiguousarray(grid.swapaxes(1, 2)).reshape(self.shape)


def pixel_unshuffle(self, downscale_factor):
    """pixel_shuffle's inverse: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = self.shape
    out = self.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    out = out.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(out.reshape(*lead, c * r * r, h // r, w // r))


def constant_pad_nd(self, pad, value=0):
    """F.pad's constant mode: pads (negative ones crop) from the last dim backwards."""
    out = self
    for i in range(len(pad) // 2):
        axis, left, right = self.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        if left < 0 or right < 0:  # crop first
            index = [slice(None)] * out.ndim
            index[axis] = slice(max(-left, 0), out.shape[axis] - max(-right, 0))
            out = out[tuple(index)]
        widths = [(0, 0)] * out.ndim
        widths[axis] = (max(left, 0), max(right, 0))
        if max(left, 0) or max(right, 0):
            out = np.pad(out, widths, constant_values=value)
    return np.array(out) if out is self else np.ascontiguousarray(out)


def _opmath(dtype):
    return np.float64 if dtype == np.float64 else np.float32  # torch's opmath type


def _nearest_plan(size, out, scale, dtype):
    """torch's nearest_idx: floor(o * scale) in float, scale 1 / scale_factor if given."""
    if out == size:
        at = np.arange(out)
    elif out == 2 * size:
        at = np.arange(out) >> 1
    else:
        f = _opmath(dtype)
        step = f(1.0 / scale) if scale else f(size) / f(out)
        at = np.minimum(np.floor(np.arange(out, dtype=f) * step).astype(np.int64), size - 1)
    return ((at,), None)


def _linear_plan(size, out, align_corners, scale, dtype):
    """torch's linear interpolation indices and weights (area_pixel_compute_source_index)."""
    f = _opmath(dtype)
    if align_corners:
        step = f(size - 1) / f(out - 1) if out > 1 else f(0)
        source = np.arange(out, dtype=f) * step
    else:
        step = f(1.0 / scale) if scale else f(size) / f(out)
        source = np.maximum(step * (np.arange(out, dtype=f) + f(0.5)) - f(0.5), f(0))
    low = source.astype(np.int64)
    high = low + (low < size - 1)
    lam = np.clip(source - low, 0, 1)
    return ((low, high), (1 - lam, lam))


def _adaptive_plan(size, out):
    """Window o covers [floor(o size / out), ceil((o + 1) size / out)): torch's
    start_index/end_index; shorter windows repeat their last cell with weight 0."""
    o = np.arange(out)
    start, end = (o * size) // out, ((o + 1) * size + out - 1) // out
    width = int((end - start).max())
    index = np.minimum(start[None, :] + np.arange(width)[:, None], end[None, :] - 1)
    weight = (start[None, :] + np.arange(width)[:, None] < end[None, :]) / (end - start)
    return tuple(index), tuple(weight)


def _upsample_plans(self_sizes, output_size, mode, align_corners, scales, dtype):
    if mode == "nearest":
        return [_nearest_plan(n, o, s, dtype) for n, o, s in zip(self_sizes, output_size, scales)]
    return [_linear_plan(n, o, align_corners, s, dtype)
            for n, o, s in zip(self_sizes, output_size, scales)]


def upsample_nearest(self, output_size, *scales):
    return resample(self, _upsample_plans(self.shape[-len(output_size):], output_size,
                                          "nearest", None, scales, self.dtype))


def upsample_nearest_backward(grad_output, output_size, input_size, *scales):
    sizes = tuple(input_size[-len(output_size):])
    return resample_backward(grad_output, sizes, _upsample_plans(
        sizes, output_size, "nearest", None, scales, grad_output.dtype))


def upsample_linear(self, output_size, align_corners, *scales):
    return resample(self, _upsample_plans(self.shape[-len(output_size):], output_size,
                                          "linear", align_corners, scales, self.dtype))


def upsample_linear_backward(grad_output, output_size, input_size, align_corners, *scales):
    sizes = tuple(input_size[-len(output_size):])
    return resample_backward(grad_output, sizes, _upsample_plans(
        sizes, output_size, "linear", align_corners, scales, grad_output.dtype))


def adaptive_avg_pool(self, output_size):
    return resample(self, [_adaptive_plan(n, o) for n, o in
                           zip(self.shape[-len(output_size):], output_size)])


def _adaptive_avg_pool_backward(spatial):
    def adaptive_avg_pool_backward(grad_output, self):
        sizes = self.shape[-spatial:]
        return resample_backward(grad_output, sizes, [
            _adaptive_plan(n, o) for n, o in zip(sizes, grad_output.shape[-spatial:])])
    return adaptive_avg_pool_backward


adaptive_avg_pool2d_backward = _adaptive_avg_pool_backward(2)
adaptive_avg_pool3d_backward = _adaptive_avg_pool_backward(3)


def adaptive_max_pool(self, output_size):
    """The largest value of each adaptive window over the last len(output_size) dims and its
    index in that flattened block (the first of ties, the last NaN, as torch's kernel)."""
    spatial = len(output_size)
    plans = [np.stack(_adaptive_plan(n, o)[0]) for n, o in
             zip(self.shape[-spatial:], output_size)]  # (window, out) per dim
    # every window's cells picked: (..., out_1, .., out_n, win_1 * .. * win_n)
    index = tuple(p.T.reshape((1,) * i + (p.shape[1],) + (1,) * (spatial - 1 - i) + (1,) * i
                              + (p.shape[0],) + (1,) * (spatial - 1 - i))
                  for i, p in enumerate(plans))
    picked = self[(Ellipsis,) + index]
    flat = picked.reshape(picked.shape[:picked.ndim - spatial] + (-1,))
    local = np.argmax(flat, axis=-1)
    values = np.take_along_axis(flat, local[..., None], -1)[..., 0]
    if np.isnan(values).any():
        last = flat.shape[-1] - 1 - np.argmax(np.isnan(flat[..., ::-1]), axis=-1)
        local = np.where(np.isnan(values), last, local)
    offsets = np.unravel_index(local, tuple(p.shape[0] for p in plans))
    at = [p[off, o] for p, off, o in zip(plans, offsets, _along_axes(
        [np.arange(p.shape[1]) for p in plans]))]  # each chosen cell's coordinates
    return np.ascontiguousarray(values), _flat_index(at, self.shape[-spatial:]).astype(np.int64)


# ---- normalisation ----
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Per channel (dim 1): (x - mean) / sqrt(var + eps) * weight + bias, with the batch's
    statistics (biased variance) in training, the running ones otherwise. In training the
    running statistics move towards the batch's in place, unbiased variance, inside the op
    (as torch's kernel: no version bump). Also returns the batch mean and 1/std (empty in
    eval mode, as torch)."""
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        mean = input.mean(axis=dims)
        var = np.square(input - mean.reshape(shape)).mean(axis=dims)
        rstd = 1 / np.sqrt(var + eps)
        if running_mean is not None:
            n = input.size // input.shape[1]
            running_mean *= 1 - momentum
            running_mean += momentum * mean
            running_var *= 1 - momentum
            running_var += momentum * n / max(n - 1, 1) * var
        saved = mean, rstd
    else:
        mean, rstd = running_mean, 1 / np.sqrt(running_var + eps)
        saved = np.empty(0, input.dtype), np.empty(0, input.dtype)
    scale = rstd if weight is None else rstd * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    out = input * scale.astype(input.dtype).reshape(shape)
    out += shift.astype(input.dtype).reshape(shape)
    return out, saved[0].astype(input.dtype, copy=False), saved[1].astype(input.dtype, copy=False)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """Each sample's channels in `group` groups, each normalised by its own mean and biased
    variance, then scaled and shifted per channel; also the (N, group) means and 1/stds."""
    grouped = input.reshape(N, group, -1)
    mean = grouped.mean(axis=-1, keepdims=True)
    centered = grouped - mean
    rstd = 1 / np.sqrt(np.square(centered).mean(axis=-1, keepdims=True) + eps)
    out = (centered * rstd).reshape(input.shape)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean[..., 0], rstd[..., 0]


# ---- elementwise ----
@rounded_once
def addcmul(self, tensor1, tensor2, value):
    return self + value * tensor1 * tensor2


@rounded_once
def addcdiv(self, tensor1, tensor2, value):
    return self + value * tensor1 / tensor2


def normal_like(mean, std, generator):
    """Draws of N(mean, std) in the broadcast shape of the two (either may be a number)."""
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    dtype = next(x.dtype for x in (mean, std) if isinstance(x, np.ndarray))
    return (mean + std * generator.standard_normal(shape)).astype(dtype)


def normal_std_tensor(std, mean, generator):  # (the row's tensor input comes first)
    return normal_like(mean, std, generator)


def standard_gamma(self, generator):
    """Gamma(self, 1) draws, each at least the dtype's smallest normal number: torch's clamp,
    which is also its answer to a concentration that is not positive (or NaN)."""
    if self.dtype.kind in "biu":
        raise NotImplementedError(f"\"gamma_cpu\" not implemented for "
                                  f"'{LEGACY_TYPE_NAMES[self.dtype.name]}'")
    positive = self > 0
    draws = generator.standard_gamma(np.where(positive, self, 1.0)).astype(self.dtype)
    tiny = np.finfo(self.dtype).tiny
    return np.where(positive, np.maximum(draws, tiny), tiny).astype(self.dtype, copy=False)


def sample_dirichlet(self, generator):
    """Dirichlet(self) draws along the last dim: Gamma draws over their sum."""
    if self.dtype.kind in "biu":
        raise NotImplementedError(f"\"dirichlet\" not implemented for "
                                  f"'{LEGACY_TYPE_NAMES[self.dtype.name]}'")
    gammas = standard_gamma(self.astype(np.float64), generator)
    return (gammas / gammas.sum(-1, keepdims=True)).astype(self.dtype)


def diagonal_copy(self, offset, dim1, dim2):
    return np.diagonal(self, offset, dim1, dim2).copy()


def diag_embed(self, offset, dim1, dim2):
    """Each vector of the last dim laid on a diagonal of a new pair of dims (dim1, dim2)."""
    n = self.shape[-1] + abs(offset)
    ndim = self.ndim + 1
    dim1, dim2 = dim1 % ndim, dim2 % ndim
    sizes = list(self.shape[:-1])
    for d in sorted((dim1, dim2)):
        sizes.insert(d, n)
    return diagonal_backward(self, tuple(sizes), offset, dim1, dim2)


def floating_only(name, kernel):
    """A kernel torch has for floating types only: integers and bools refused in its words."""
    def checked(*operands):
        dtype = np.result_type(*operands)
        if dtype.kind in "biu":
            from ..dtypes import LEGACY_TYPE_NAMES
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{LEGACY_TYPE_NAMES[dtype.name]}'")
        return kernel(*operands)
    checked.__name__ = name
    return checked


def nan_to_num(self, nan, posinf, neginf):
    if self.dtype.kind not in "fcV":
        return self.copy()
    return np.nan_to_num(self, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


def ldexp(self, other):
    """self * 2^other in floating point (numpy's ldexp wants an integer exponent)."""
    return self * np.exp2(other)


def frexp(self):
    mantissa, exponent = np.frexp(self)
    return mantissa, exponent.astype(np.int32)


def heaviside(self, values):
    return np.heaviside(self, values).astype(np.result_type(self, values))


def trace(self):
    return np.asarray(np.trace(self), np.result_type(self, np.int64) if self.dtype.kind in "biu"
                      else self.dtype)  # (integers sum as int64, as torch's)


def block_diag(tensors):
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)),
                   np.result_type(*tensors))
    row = col = 0
    for b in blocks:
        out[row:row + b.shape[0], col:col + b.shape[1]] = b
        row, col = row + b.shape[0], col + b.shape[1]
    return out


def scatter_value(self, index, dim, value):
    return scatter(self, index, value, dim)


# ---- linear algebra (torch.linalg) ----
def lu_factor(A):
    """lu_factor_ex's LU and pivots of a batch of square matrices."""
    return lu_factor_ex(A, True)[:2]


def lu_factor_ex(A, pivot):
    """LAPACK's getrf, as torch's, on (..., m, n): partial pivoting (the first largest
    |pivot|, |Re| + |Im| for complex values as LAPACK's izamax), L's multipliers below the diagonal and U on and above it, packed in one matrix;
    the row swaps as 1-based pivots (int32); info the first zero pivot (1-based), 0 if none."""
    m, n = A.shape[-2:]
    k = min(m, n)
    LU = np.array(A, copy=True).reshape((-1, m, n))
    pivots = np.empty(LU.shape[:1] + (k,), dtype=np.int32)
    info = np.zeros(LU.shape[:1], dtype=np.int32)
    rows = np.arange(LU.shape[0])
    for j in range(k):
        column = LU[:, j:, j]
        size = np.abs(column.real) + np.abs(column.imag) if LU.dtype.kind == "c" else \
            np.abs(column)
        p = j + np.argmax(size, axis=1)
        pivots[:, j] = p + 1
        LU[rows, j], LU[rows, p] = LU[rows, p], LU[rows, j].copy()
        pivot = LU[:, j, j]
        info = np.where((info == 0) & (pivot == 0), j + 1, info).astype(np.int32)
        safe = np.where(pivot == 0, 1, pivot)  # a zero pivot leaves its column (LAPACK)
        LU[:, j + 1:, j] /= safe[:, None]
        LU[:, j + 1:, j + 1:] -= LU[:, j + 1:, j, None] * LU[:, j, None, j + 1:]
    return (lapack_layout(LU.reshape(A.shape)), pivots.reshape(A.shape[:-2] + (k,)),
            info.reshape(A.shape[:-2]))


def linalg_lu(A, pivot):
    """torch.linalg.lu's (P, L, U), A = P L U: getrf's packed factors unpacked (L unit lower
    m x k, U upper k x n, P the pivots' permutation), each row-major as torch's."""
    LU, pivots, _ = lu_factor_ex(A, pivot)
    m, n = A.shape[-2:]
    k = min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=A.dtype)
    U = np.triu(LU[..., :k, :])
    perm = _row_permutation(pivots, m)
    P = np.swapaxes(np.eye(m, dtype=A.dtype)[perm], -1, -2)
    return np.ascontiguousarray(P), np.ascontiguousarray(L), np.ascontiguousarray(U)


def _row_permutation(pivots, m=None):
    """perm with A[perm] = L U, from the pivots' sequence of row swaps (k of them; A has m
    rows, k unless told)."""
    k = pivots.shape[-1]
    m = k if m is None else m
    perm = np.broadcast_to(np.arange(m), pivots.shape[:-1] + (m,)).reshape(-1, m).copy()
    swaps = pivots.reshape(-1, k) - 1
    rows = np.arange(perm.shape[0])
    for j in range(k):
        p = swaps[:, j]
        perm[rows, j], perm[rows, p] = perm[rows, p], perm[rows, j].copy()
    return perm.reshape(pivots.shape[:-1] + (m,))


def lu_solve(LU, pivots, B, adjoint):
    """A X = B (or A^H X = B) for A = P L U given by lu_factor; B is (..., n, k)."""
    n = LU.shape[-1]
    L = np.tril(LU, -1) + np.eye(n, dtype=LU.dtype)
    U = np.triu(LU)
    perm = _row_permutation(pivots)[..., None]
    perm = np.broadcast_to(perm, np.broadcast_shapes(perm.shape[:-1], B.shape[:-1]) + (1,))
    if not adjoint:
        B = np.take_along_axis(np.broadcast_to(B, perm.shape[:-1] + B.shape[-1:]), perm, -2)
        return np.linalg.solve(U, np.linalg.solve(L, B))
    L, U = np.swapaxes(L, -1, -2), np.swapaxes(U, -1, -2)
    if LU.dtype.kind == "c":
        L, U = L.conj(), U.conj()
    Y = np.linalg.solve(L, np.linalg.solve(U, B))
    X = np.empty(np.broadcast_shapes(Y.shape, perm.shape[:-1] + Y.shape[-1:]), Y.dtype)
    np.put_along_axis(X, np.broadcast_to(perm, X.shape[:-1] + (1,)), Y, -2)
    return X


def _det_from_lu(LU, pivots):
    n = LU.shape[-1]
    swaps = np.sum(pivots != np.arange(1, n + 1), axis=-1) % 2
    return np.where(swaps, -1, 1) * np.prod(np.diagonal(LU, 0, -2, -1), axis=-1)


def lapack_layout(x):
    """x's values in LAPACK's memory order, as torch's linear algebra results: each matrix
    column-major (strides (n, 1, m) of an (n, m) batch), the batch row-major."""
    return np.swapaxes(np.swapaxes(x, -1, -2).copy(), -1, -2)  # (a fresh copy: canonical
    # strides even along size-1 dims, which numpy's contiguity tests ignore)


def _raise_singular(name, diagonals):
    """torch's LinAlgError for the first matrix with a zero on its factor's diagonal (1-based,
    the batch element named when A is a batch)."""
    zeros = diagonals.reshape(-1, diagonals.shape[-1]) == 0
    batch = int(np.argmax(zeros.any(-1)))
    where = f"(Batch element {batch}): " if diagonals.ndim > 1 else ""
    raise _LinAlgError(f"{name}: {where}The diagonal element {np.argmax(zeros[batch]) + 1} is "
                       f"zero, the inversion could not be completed because the input matrix "
                       f"is singular.")


def linalg_inv_ex(A):
    try:
        inverse = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        _raise_singular("linalg.inv", np.diagonal(lu_factor(A)[0], 0, -2, -1))
    return lapack_layout(inverse), np.zeros(A.shape[:-2], dtype=np.int32)


def linalg_solve_ex(A, B, left):
    """X with A X = B (left) or X A = B; B a vector (or a batch of them) where torch's
    linalg_solve_is_vector_rhs says so. Also the LU factors torch's node saves."""
    LU, pivots = lu_factor(A)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    matrix = B[..., None] if vector else B
    if np.any(np.diagonal(LU, 0, -2, -1) == 0):
        raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                           "singular.")
    if left:
        X = lu_solve(LU, pivots, matrix, False)
    else:  # X A = B: A^H X^H = B^H
        X = np.swapaxes(lu_solve(LU, pivots, np.swapaxes(matrix, -1, -2).conj(), True),
                        -1, -2).conj()
    X = X[..., 0] if vector else X
    return X, LU, pivots, np.zeros(A.shape[:-2], dtype=np.int32)


def det_factors(A):
    """The LU factors torch's det and slogdet keep: of A^T when A is C-contiguous (LAPACK's
    column-major view of its memory, no copy), else of A. det A^T = det A."""
    return lu_factor(np.swapaxes(A, -1, -2) if factors_transposed(A) else A)


def factors_transposed(A):
    return A.flags.c_contiguous


def linalg_det(A):
    LU, pivots = det_factors(A)
    return np.asarray(_det_from_lu(LU, pivots), dtype=A.dtype), LU, pivots


def linalg_slogdet(A):
    LU, pivots = det_factors(A)
    det = _det_from_lu(LU, pivots)
    logabsdet = np.sum(np.log(np.abs(np.diagonal(LU, 0, -2, -1))), axis=-1)
    return (np.asarray(np.sign(det), dtype=A.dtype), np.asarray(logabsdet, dtype=A.dtype),
            LU, pivots)


def linalg_cholesky_ex(A, upper):
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        order = next(k for k in range(1, A.shape[-1] + 1) if np.any(
            np.linalg.eigvalsh(A[..., :k, :k]) <= 0))
        raise _LinAlgError(f"linalg.cholesky: The factorization could not be completed because "
                           f"the input is not positive-definite (the leading minor of order "
                           f"{order} is not positive-definite).") from None
    return (np.swapaxes(L, -1, -2).copy() if upper else L), np.zeros(A.shape[:-2], np.int32)


def linalg_eig(A):
    """LAPACK's geev, as torch's: complex eigenvalues and unit eigenvectors (columns, in
    LAPACK's layout) even for a real A."""
    values, vectors = np.linalg.eig(A)
    complex_dtype = np.result_type(A.dtype, np.complex64)
    return values.astype(complex_dtype), lapack_layout(vectors.astype(complex_dtype))


def cholesky(A, upper):
    """torch.cholesky's (deprecated): linalg.cholesky's factor, its error under the old name."""
    try:
        return linalg_cholesky_ex(A, upper)[0]
    except _LinAlgError as e:
        raise _LinAlgError(str(e).removeprefix("linalg.")) from None


def solve_triangular(A, B, upper, left, unitriangular):
    """X with A X = B (left) or X A = B, A triangular: only its upper or lower triangle is
    read, its diagonal taken as ones when unitriangular; X has A's dtype, as torch's. Substitution row by row, as LAPACK's
    trsm: a zero on the diagonal gives inf / nan, not an error, as torch's."""
    if not left:  # X A = B is A^T X^T = B^T, A^T triangular on the other side
        return lapack_layout(np.swapaxes(solve_triangular(
            np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2), not upper, True, unitriangular),
            -1, -2))
    n = A.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    X = np.array(np.broadcast_to(B, batch + B.shape[-2:]), dtype=A.dtype)  # (A's: torch's)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            known = slice(i + 1, n) if upper else slice(0, i)
            X[..., i, :] -= np.einsum("...j,...jk->...k", A[..., i, known], X[..., known, :])
            if not unitriangular:
                X[..., i, :] /= A[..., i, i, None]
    return lapack_layout(X)


def linalg_lu_solve(LU, pivots, B, left, adjoint):
    """X with op(A) X = B (left) or X op(A) = B, op(A) A or A^H (adjoint), A = P L U from
    lu_factor's packed LU: LAPACK's getrs, a row permutation and two triangular solves (a zero
    on U's diagonal gives inf / nan, as torch's). Column-major when left, as torch's."""
    if not left:  # X op(A) = B is op(A)^H X^H = B^H
        Xh = linalg_lu_solve(LU, pivots, np.swapaxes(B, -1, -2).conj(), True, not adjoint)
        return np.ascontiguousarray(np.swapaxes(Xh, -1, -2).conj())
    batch = np.broadcast_shapes(LU.shape[:-2], B.shape[:-2], pivots.shape[:-1])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    perm = np.broadcast_to(_row_permutation(pivots), batch + pivots.shape[-1:])[..., None]
    if not adjoint:  # U^{-1} L^{-1} P^T B
        Y = solve_triangular(LU, np.take_along_axis(B, perm, -2), False, True, True)
        return solve_triangular(LU, Y, True, True, False)
    LUh = np.swapaxes(LU, -1, -2).conj()  # A^H = U^H L^H P^T: X = P L^{-H} U^{-H} B
    Y = solve_triangular(LUh, solve_triangular(LUh, B, False, True, False), True, True, True)
    X = np.empty_like(Y)
    np.put_along_axis(X, np.broadcast_to(perm, Y.shape[:-1] + (1,)), Y, -2)
    return lapack_layout(X)


def geqrf(A):
    """LAPACK's geqrf: for each column j < min(m, n) a Householder reflector
    H_j = I - tau_j v_j v_j^H (v_j: 1 at j, then its entries kept below the diagonal, as
    dlarfg / zlarfg make them: beta = -sign(Re alpha) |(alpha, x)|, real) zeroes the column
    below the diagonal, H_j^H applied to the columns beyond; R on and above the diagonal."""
    a = np.array(A, dtype=A.dtype, copy=True)
    m, n = A.shape[-2:]
    tau = np.zeros(A.shape[:-2] + (min(m, n),), A.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(min(m, n)):
            alpha, x = a[..., j, j].copy(), a[..., j + 1:, j]
            xnorm = np.linalg.norm(x, axis=-1)
            beta = -np.copysign(np.hypot(np.abs(alpha), xnorm), alpha.real)
            keep = (xnorm == 0) & (alpha.imag == 0)  # (H = I: tau 0, the column as it is)
            tau[..., j] = np.where(keep, 0, (beta - alpha.real) / beta - 1j * alpha.imag / beta
                                   if A.dtype.kind == "c" else (beta - alpha) / beta)
            a[..., j + 1:, j] = np.where(keep[..., None], x, x / (alpha - beta)[..., None])
            a[..., j, j] = np.where(keep, alpha, beta)
            v = np.concatenate([np.ones(A.shape[:-2] + (1,), A.dtype), a[..., j + 1:, j]], -1)
            a[..., j:, j + 1:] -= (tau[..., j, None, None].conj() * v[..., :, None]
                                   * (v[..., None, :].conj() @ a[..., j:, j + 1:]))
    return lapack_layout(a), tau


def householder_reflector(input, tau, i):
    """v_i (1 at i, input's column i below it, zeros above) and tau_i, each batched."""
    m = input.shape[-2]
    below = np.arange(m) > i
    v = np.where(below, input[..., :, i], 0) + (np.arange(m) == i)
    return v.astype(input.dtype, copy=False), tau[..., i]


def householder_product(input, tau):
    """The first n columns of H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^H (LAPACK's
    orgqr / ungqr): the reflectors applied to the identity's first n columns, the last first."""
    m, n = input.shape[-2:]
    E = np.broadcast_to(np.eye(m, n, dtype=input.dtype), input.shape).copy()
    for i in reversed(range(tau.shape[-1])):
        v, t = householder_reflector(input, tau, i)
        E -= t[..., None, None] * v[..., :, None] * (v[..., None, :].conj() @ E)
    return lapack_layout(E)


def ormqr(input, tau, other, left, transpose):
    """op(Q) C (left) or C op(Q) for Q = H_0 ... H_{k-1} kept as geqrf's reflectors (LAPACK's
    ormqr / unmqr), op(Q) Q or Q^H: the reflectors applied to C one by one, column-major."""
    if not left:  # C op(Q) = (op(Q)^H C^H)^H
        return lapack_layout(np.swapaxes(ormqr(input, tau, np.swapaxes(other, -1, -2).conj(),
                                               True, not transpose), -1, -2).conj())
    X = np.array(other, copy=True)
    k = tau.shape[-1]
    for i in (range(k) if transpose else reversed(range(k))):  # (the innermost first)
        v, t = householder_reflector(input, tau, i)
        t = t.conj() if transpose else t  # (H_i^H = I - conj(tau_i) v_i v_i^H)
        X -= t[..., None, None] * v[..., :, None] * (v[..., None, :].conj() @ X)
    return lapack_layout(X)


_BUNCH_KAUFMAN_ALPHA = (1 + math.sqrt(17)) / 8


def _cabs1(x):
    """LAPACK's measure of a complex entry's size, |Re| + |Im| (|x| for real values)."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _sytf2_lower(A, hermitian):
    """LAPACK's dsytf2 / zsytf2 (zhetf2 when hermitian: A = L D L^H, D's diagonal real) on one
    matrix (its lower triangle): Bunch-Kaufman's diagonal pivoting, 1x1 and 2x2 blocks of D,
    L's multipliers below them; pivots 1-based, negative for a 2x2 block; info the first zero
    pivot (1-based), 0 if none."""
    hermitian = hermitian and np.iscomplexobj(A)
    T = (lambda x: x.conj().T) if hermitian else (lambda x: x.T)
    diagonal_size = (lambda x: np.abs(x.real)) if hermitian else _cabs1
    a = np.tril(A) + T(np.tril(A, -1))  # (each step reads the lower triangle, mirrored)
    if hermitian:
        np.fill_diagonal(a, a.diagonal().real)
    n = a.shape[-1]
    pivots = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        step, absakk = 1, diagonal_size(a[k, k])
        imax = k + 1 + int(np.argmax(_cabs1(a[k + 1:, k]))) if k + 1 < n else k
        colmax = _cabs1(a[imax, k]) if k + 1 < n else 0.0
        zero_column = max(absakk, colmax) == 0 or np.isnan(absakk)
        if zero_column:  # (no interchange, no update)
            info = info or k + 1
            kp = k
        elif absakk >= _BUNCH_KAUFMAN_ALPHA * colmax:
            kp = k
        else:
            row = _cabs1(a[imax, k:imax])  # (the largest off-diagonal of row / column imax)
            rowmax = row.max()
            if imax + 1 < n:
                rowmax = max(rowmax, _cabs1(a[imax + 1:, imax]).max())
            if absakk >= _BUNCH_KAUFMAN_ALPHA * colmax * (colmax / rowmax):
                kp = k
            elif diagonal_size(a[imax, imax]) >= _BUNCH_KAUFMAN_ALPHA * rowmax:
                kp = imax
            else:
                kp, step = imax, 2
        kk = k + step - 1
        if kp != kk:  # rows and columns kk and kp swapped in the trailing block only (L's
            order = np.arange(k, n)  # columns so far stay: the pivots record each swap)
            order[[kk - k, kp - k]] = [kp, kk]
            a[k:, k:] = a[k:, k:][order - k][:, order - k]
        if step == 1 and not zero_column and k + 1 < n:
            x = a[k + 1:, k].copy()
            d11 = 1 / (a[k, k].real if hermitian else a[k, k])
            a[k + 1:, k + 1:] += np.outer(x, -d11 * (x.conj() if hermitian else x))
            a[k + 1:, k] = d11 * x
        elif step == 2 and k + 2 < n and hermitian:  # (zhetf2's formulas)
            d = abs(a[k + 1, k])
            d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
            d21 = a[k + 1, k] / d
            d = 1 / (d11 * d22 - 1) / d
            wk = d * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
            wkp1 = d * (d22 * a[k + 2:, k + 1] - d21.conj() * a[k + 2:, k])
            a[k + 2:, k + 2:] -= (np.outer(a[k + 2:, k], wk.conj())
                                  + np.outer(a[k + 2:, k + 1], wkp1.conj()))
            a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
        elif step == 2 and k + 2 < n:
            d21 = a[k + 1, k]
            d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
            t = 1 / (d11 * d22 - 1)
            d21 = t / d21
            wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
            wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
            a[k + 2:, k + 2:] -= (np.outer(a[k + 2:, k], wk) + np.outer(a[k + 2:, k + 1], wkp1))
            a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
        a = np.tril(a) + T(np.tril(a, -1))
        if hermitian:
            np.fill_diagonal(a, a.diagonal().real)
        pivots[k:k + step] = kp + 1 if step == 1 else -(kp + 1)
        k += step
    return np.tril(a), pivots, info


def linalg_ldl_factor_ex(A, hermitian):
    """(LD, pivots, info) of each matrix of the batch (?sytrf's lower form, ?hetrf's when
    hermitian, as torch's: D and L in LD's lower triangle, zeros above), LD column-major."""
    batch = A.reshape((-1,) + A.shape[-2:])
    parts = [_sytf2_lower(a, hermitian) for a in batch]
    LD = np.array([p[0] for p in parts], A.dtype).reshape(A.shape)
    pivots = np.array([p[1] for p in parts], np.int32).reshape(A.shape[:-1])
    info = np.array([p[2] for p in parts], np.int32).reshape(A.shape[:-2])
    return lapack_layout(LD), pivots, info


def _sytrs_lower(LD, pivots, B, hermitian):
    """LAPACK's dsytrs / zsytrs (zhetrs when hermitian): A X = B from ?sytrf's lower LD and
    pivots (L D L^T, or L D L^H, with the pivots' row swaps), one matrix."""
    hermitian = hermitian and np.iscomplexobj(LD)
    conj = np.conj if hermitian else (lambda x: x)
    b = np.array(B, copy=True)
    n = LD.shape[-1]
    k = 0
    while k < n:  # L D Y = B
        if pivots[k] > 0:
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(LD[k + 1:, k], b[k])
            b[k] /= LD[k, k].real if hermitian else LD[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(LD[k + 2:, k], b[k]) + np.outer(LD[k + 2:, k + 1], b[k + 1])
            akm1k = LD[k + 1, k]
            akm1, ak = LD[k, k] / conj(akm1k), LD[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / conj(akm1k), b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H X = Y)
        if pivots[k] > 0:
            b[k] -= conj(LD[k + 1:, k]) @ b[k + 1:]
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(LD[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(LD[k + 1:, k - 1]) @ b[k + 1:]
            kp = -pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def linalg_ldl_solve(LD, pivots, B, hermitian):
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    LDs = np.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1,) + LD.shape[-2:])
    pivs = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape(-1, pivots.shape[-1])
    Bs = np.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    X = np.array([_sytrs_lower(*parts, hermitian) for parts in zip(LDs, pivs, Bs)], B.dtype)
    return lapack_layout(X.reshape(batch + B.shape[-2:]))


def triangular_solve(b, A, upper, transpose, unitriangular):
    """torch.triangular_solve: op(A) X = b (op: the transpose when asked), and a copy of A."""
    A_op = np.swapaxes(A, -1, -2) if transpose else A
    return (solve_triangular(A_op, b, upper != transpose, True, unitriangular),
            lapack_layout(A))


def cholesky_solve(B, L, upper):
    """X with L L^T X = B (U^T U X = B when upper): two triangular solves with the factor's
    triangle, as LAPACK's potrs."""
    lower = np.swapaxes(L, -1, -2) if upper else L  # the factor with A = lower lower^T
    Y = solve_triangular(lower, B, False, True, False)
    return solve_triangular(np.swapaxes(lower, -1, -2), Y, True, True, False)


def cholesky_inverse(L, upper):
    """(L L^T)^{-1} (or (U^T U)^{-1}) from the factor's triangle; a zero on its diagonal is
    torch's LinAlgError."""
    diagonals = np.diagonal(L, 0, -2, -1)
    if np.any(diagonals == 0):
        _raise_singular("cholesky_inverse", diagonals)
    eye = np.broadcast_to(np.eye(L.shape[-1], dtype=L.dtype), L.shape)
    return cholesky_solve(eye, L, upper)


def _pseudo_inverse(A, atol, rtol, hermitian):
    """A^+ from the SVD (the eigendecomposition when hermitian), the singular values at or
    below max(atol, rtol * the largest) dropped; also those values, descending."""
    if hermitian:
        values, U = np.linalg.eigh(A)
        S = np.abs(values)
        V = U * np.sign(values)[..., None, :]  # A = U diag(values) U^T = U diag(S) V^T
    else:
        U, S, Vh = np.linalg.svd(A, full_matrices=False)
        V = np.swapaxes(Vh, -1, -2)
    largest = S.max(-1, keepdims=True, initial=0.0)
    kept = S > np.maximum(atol, rtol * largest)
    inverse = np.where(kept, 1 / np.where(kept, S, 1), 0)
    pinv = (V * inverse[..., None, :]) @ np.swapaxes(U, -1, -2)
    return pinv.astype(A.dtype, copy=False), S


def linalg_pinv(A, atol, rtol, hermitian):
    """torch's tolerances: none given, rtol = eps * max(m, n); an atol alone, rtol = 0."""
    if rtol is None:
        rtol = 0.0 if atol else np.finfo(A.dtype).eps * max(A.shape[-2:])
    return _pseudo_inverse(A, atol or 0.0, rtol, hermitian)[0]


def linalg_lstsq(A, B, rcond, driver):
    """The least-squares (minimum-norm) solution through the pseudo-inverse, with what
    torch's CPU drivers fill: the rank (all but gels), the singular values (gelsd, gelss),
    the squared residuals of each column (m > n, every matrix of full rank; not gelsy)."""
    m, n = A.shape[-2:]
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    matrix = B[..., None] if vector else B
    rtol = np.finfo(A.dtype).eps * max(m, n) if rcond is None else rcond
    pinv, S = _pseudo_inverse(A, 0.0, 0 if driver == "gels" else rtol, False)
    X = pinv @ matrix
    largest = S.max(-1, keepdims=True, initial=0.0)
    rank = np.sum(S > rtol * largest, -1).astype(np.int64)
    empty = np.zeros((0,), A.dtype)
    residuals = empty
    if driver != "gelsy" and m > n and np.all(rank == n):
        residuals = np.sum((A @ X - matrix) ** 2, -2).astype(A.dtype)
    values = S.astype(A.dtype) if driver in ("gelsd", "gelss") else empty
    # LAPACK writes X over B's column-major buffer of max(m, n) rows: torch's X is its view
    buffer = np.zeros(X.shape[:-2] + (X.shape[-1], max(m, n)), X.dtype)
    buffer[..., :n] = np.swapaxes(X, -1, -2)
    X = np.swapaxes(buffer, -1, -2)[..., :n, :]
    return (X[..., 0] if vector else X, residuals[..., 0] if vector and residuals.size else
            residuals, rank if driver != "gels" else np.zeros((0,), np.int64), values)


_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)


def linalg_matrix_exp(A):
    """e^A by scaling and squaring with the [13/13] Pade approximant (Higham 2005): A halved
    until its 1-norm is below 5.37, the approximant, squared back."""
    b = _PADE13
    dtype = A.dtype
    A = A.astype(np.complex128 if A.dtype.kind == "c" else np.float64)  # (rounded once at the
    # end)
    norm = np.abs(A).sum(-2).max(initial=0.0)
    s = max(0, int(np.ceil(np.log2(norm / 5.371920351148152)))) if norm > 0 else 0
    A = A / 2.0 ** s
    eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape)
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2
             + b[1] * eye)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 \
        + b[0] * eye
    R = np.linalg.solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R.astype(dtype, copy=False)


def linalg_qr(A, mode):
    if mode == "r":  # Q is not computed: an empty tensor, as torch's
        return np.empty((0,), dtype=A.dtype), np.linalg.qr(A, "r")
    return np.linalg.qr(A, mode)



# ---- selecting and writing by index, windows, modes (the census's Tensor ops) ----
def masked_select(self, mask):
    """The elements where mask (broadcast with self) is true, as one dim."""
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    shape = np.broadcast_shapes(self.shape, mask.shape)
    return np.broadcast_to(self, shape)[np.broadcast_to(mask, shape)]


def index_copy(self, index, source, dim):
    out = self.copy()
    out[(slice(None),) * dim + (np.reshape(index, -1),)] = source  # (a 0-d index: one slice)
    return out


def index_fill(self, index, dim, value):
    out = self.copy()
    out[(slice(None),) * dim + (index,)] = value
    return out


def put(self, index, source, accumulate):
    """self's elements at the flat indices `index` (negative from the end) set to source
    (accumulate: added to)."""
    out = self.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, index.reshape(-1), source.reshape(-1))
    else:
        flat[index.reshape(-1)] = source.reshape(-1)
    return out


def take(self, index):
    return self.reshape(-1)[index]


def unfold(self, dimension, size, step):
    """The windows of `size` elements every `step` along `dimension`, as a new last dim: a
    view of the same memory, as torch's."""
    windows = np.lib.stride_tricks.sliding_window_view(self, size, axis=dimension,
                                                       writeable=self.flags.writeable)
    return windows[(slice(None),) * dimension + (slice(None, None, step),)]


def unfold_backward(grad_in, input_sizes, dim, size, step):
    """Each window's gradient added back to the elements it covers."""
    out = np.zeros(input_sizes, grad_in.dtype)
    for i in range(grad_in.shape[dim]):
        window = np.moveaxis(np.take(grad_in, i, axis=dim), -1, dim)
        out[(slice(None),) * dim + (slice(i * step, i * step + size),)] += window
    return out


def mode(self, dim, keepdim):
    """The most frequent value along dim (the smallest of equally frequent ones) and the last
    index it is at, as torch's CPU kernel."""
    moved = np.moveaxis(self, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.ndim else moved.reshape(1, 1)
    values = np.empty(rows.shape[0], self.dtype)
    indices = np.empty(rows.shape[0], np.int64)
    for r, row in enumerate(rows):
        distinct, counts = np.unique(row, return_counts=True)  # (sorted: ties go to the least)
        values[r] = distinct[np.argmax(counts)]
        indices[r] = np.flatnonzero(row == values[r])[-1]
    shape = moved.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim and self.ndim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices


def kthvalue(self, k, dim, keepdim):
    """The k-th smallest value along dim (NaN the largest) and its index: torch's
    quickselect, so that among equal values the index is the one torch's CPU kernel gives."""
    moved = np.moveaxis(self, dim, -1) if self.ndim else self.reshape(1)
    rows = moved.reshape(-1, moved.shape[-1])
    values = np.empty(rows.shape[0], self.dtype)
    indices = np.empty(rows.shape[0], np.int64)
    for r, row in enumerate(rows):
        values[r], indices[r] = _quick_select(row.tolist(), k - 1)
    shape = moved.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim and self.ndim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices


def _greater_or_nan(x, y):
    return (x != x and y == y) or x > y


def _quick_select(values, k):
    """torch's quick_select_template (median of three, Hoare partition) on a list: the k-th
    (from 0) value and the index it came from."""
    index = list(range(len(values)))

    def swap(a, b):
        values[a], values[b] = values[b], values[a]
        index[a], index[b] = index[b], index[a]
    low, high = 0, len(values) - 1
    while high > low:
        if high == low + 1:
            if _greater_or_nan(values[low], values[high]):
                swap(low, high)
            break
        swap(low + (high - low) // 2, low + 1)
        if _greater_or_nan(values[low + 1], values[high]):
            swap(low + 1, high)
        if _greater_or_nan(values[low], values[high]):
            swap(low, high)
        if _greater_or_nan(values[low + 1], values[low]):
            swap(low + 1, low)
        i, j, pivot = low + 1, high, values[low]
        while True:
            i += 1
            while _greater_or_nan(pivot, values[i]):
                i += 1
            j -= 1
            while _greater_or_nan(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
    return values[k], index[k]


@rounded_once
def logit(self, eps):
    x = self if eps is None else np.clip(self, eps, 1 - eps)
    return np.log(x / (1 - x))


def nansum(self, dim, keepdim):
    return np.nansum(self, axis=dim, keepdims=keepdim).astype(self.dtype, copy=False)


def rot90(self, k, dims):
    return np.rot90(self, k, dims).copy()  # (a new tensor, contiguous, as torch's)


def linalg_cross(self, other, dim):
    shape = np.broadcast_shapes(self.shape, other.shape)
    return np.cross(np.broadcast_to(self, shape), np.broadcast_to(other, shape), axis=dim)


def p_norm(diff, p):
    """The p-norm of each row of diff (last dim): torch's dist and cdist."""
    a = np.abs(diff)
    if p == 0:
        return (a != 0).sum(-1).astype(diff.dtype)
    if p == np.inf:
        return a.max(-1) if a.shape[-1] else np.zeros(a.shape[:-1], diff.dtype)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return np.sqrt((a * a).sum(-1))
    return ((a ** p).sum(-1) ** (1 / p)).astype(diff.dtype, copy=False)


def dist(self, other, p):
    return np.asarray(p_norm((self - other).reshape(-1), p))


def cdist(x1, x2, p, compute_mode):
    return p_norm(x1[..., :, None, :] - x2[..., None, :, :], p)


def pdist_pairs(n):
    """The rows (i, j), i < j, of pdist's pairs in its order."""
    return np.triu_indices(n, 1)


def pdist(self, p):
    i, j = pdist_pairs(self.shape[0])
    return p_norm(self[i] - self[j], p).astype(self.dtype, copy=False)


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim):
    product = (np.expand_dims(i1, tuple(expand1)) * np.expand_dims(i2, tuple(expand2))
               * np.expand_dims(i3, tuple(expand3)))
    return product.sum(axis=tuple(sumdim)) if sumdim else product
