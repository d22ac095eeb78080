"""Derivative formulas that need local variables, named after torch's (FunctionsManual.cpp).
Each is written once with the ops of `generic`, which take Tensors (recording: gradients of
gradients) or numpy arrays (the engine's first-order path)."""
import itertools
import math

import numpy as np

from .. import grad_mode
from .rows import row_function, table
from . import kernels
from .generic import (abs, addmm, any_true, cat, clamp, conj, constant, contiguous, cumprod,
                      cumsum, detach, diagonal, erf, exp, expand, flip, gather, imag, index_add,
                      index_select, is_complex, isnan, log, log1p, masked_fill, matmul, mean, mm,
                      numel, ones_like, permute, prod, real, reshape, scatter, scatter_add,
                      select, sigmoid, sign, slice, squeeze, stack, sum, sum_to, t, tanh,
                      transpose, tril, triu,
                      unsqueeze, var, where, zeros, zeros_like)
from .generic import index, index_put, scatter_add, to
from .kernels import expanded, is_column_major


def scale(grad, alpha):
    return grad if alpha == 1 else grad * alpha


def restore_reduced_dims(t, dim, keepdim):
    """Re-insert the reduced dims (size 1) so `t` broadcasts against the input."""
    if keepdim:
        return t
    for d in sorted(dim):
        t = unsqueeze(t, d)
    return t


def sum_backward(grad, sizes, dim, keepdim):
    return expand(restore_reduced_dims(grad, dim, keepdim), sizes)


def mean_backward(grad, sizes, dim, keepdim):
    count = int(np.prod([sizes[d] for d in dim]))
    return sum_backward(grad, sizes, dim, keepdim) / count


def var_backward(grad, self, dim, correction, keepdim):
    # d var / dx = 2 (x - mean) / (N - correction)
    n = int(np.prod([self.shape[d] for d in dim]))
    grad = restore_reduced_dims(grad, dim, keepdim)
    factor = 2.0 / (n - correction) if n != correction else float("inf")  # (nan, as torch)
    return factor * grad * (self - mean(self, dim, keepdim=True))


def std_backward(grad, self, dim, correction, keepdim, result):
    # d std = d var / (2 std); zero where std == 0, as torch
    grad_var = masked_fill(grad / (2 * result), result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def prod_backward(grad, self, result, dim, keepdim):
    """d prod / dx_i = product of the others; exact when some x are zero (no 0/0)."""
    if len(self.shape) == 0:
        return grad  # as torch: no term in self, so no second-order gradient
    if dim is None:
        dim, keepdim = tuple(range(len(self.shape))), False
    elif isinstance(dim, int):
        dim = (dim,)
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    is_zero = self == 0
    if all(self.shape[d] == 1 for d in dim) and any_true(is_zero):
        return grad  # torch's prod_safe_zeros_backward: a slice of one element, as is
    safe_self = where(is_zero, 1, self)
    zeros_in_slice = sum(is_zero, dim, keepdim=True)
    # where x_i is the only zero, the product of the others is the product of the nonzeros
    if grad_mode.state.grad_enabled and any_true(zeros_in_slice > 1):
        # building a double-backward graph: with several zeros in a slice, the product of
        # the others is 0 but its derivative is not, so form it exactly (as torch does)
        return grad * _prod_of_others(self, dim)
    prod_nonzero = table.PROD_DIM(safe_self, dim, True) if any_true(is_zero) else result
    others = where(is_zero, where(zeros_in_slice == 1, prod_nonzero, 0), result / safe_self)
    return grad * others


def _prod_of_others(self, dim):
    """For each element, the product of the other elements of its slice along `dim`: the
    slice's dims moved last and flattened, for _prod_of_the_others."""
    keep = tuple(d for d in range(len(self.shape)) if d not in dim)
    perm = keep + tuple(dim)
    moved = permute(self, perm)
    n = int(np.prod(moved.shape[len(keep):]))
    others = _prod_of_the_others(reshape(moved, tuple(moved.shape[:len(keep)]) + (n,)))
    return permute(reshape(others, tuple(moved.shape)), tuple(np.argsort(perm)))


def evenly_distribute_backward(grad, self, result):
    mask = self == result
    return expand(where(mask, grad / sum(mask), 0), tuple(self.shape))


def amax_backward(grad, self, result, dim, keepdim):
    grad = restore_reduced_dims(grad, dim, keepdim)
    mask = self == restore_reduced_dims(result, dim, keepdim)
    return grad / sum(mask, dim, keepdim=True) * mask  # (a product: nan reaches all, as torch)


def value_selecting_backward(grad, dim, indices, sizes, keepdim):
    if not keepdim:
        grad, indices = unsqueeze(grad, dim), unsqueeze(indices, dim)
    return scatter(zeros(sizes, grad), dim, indices, grad)


def _renorm_parts(self, p, dim, maxnorm):
    """renorm's slices' norms (kept dims), the dims they reduce, and maxnorm / (norm + eps)."""
    dims = tuple(d for d in range(len(self.shape)) if d != dim)
    norms = table.NORM(self, p, dims, True)
    inverse = 1 / (norms + 1e-7)
    return norms, dims, inverse, inverse * maxnorm


def renorm_backward(grad, self, p, dim, maxnorm):
    """torch's renorm_backward: the slices renorm scaled get the derivative of
    x * maxnorm / (|x|_p + eps), the others the gradient itself."""
    norms, dims, inverse, factor = _renorm_parts(self, p, dim, maxnorm)
    along_norm = norm_backward(sum(self * grad, dims, True), self, norms, p, dims, True)
    return where(norms > maxnorm, factor * grad - (factor * inverse) * along_norm, grad)


def renorm_jvp(self_t, self, p, dim, maxnorm):
    norms, dims, inverse, factor = _renorm_parts(self, p, dim, maxnorm)
    norm_t = norm_jvp(self_t, self, norms, p, dims, True)
    return where(norms > maxnorm, factor * (self_t - self * inverse * norm_t), self_t)


def logsumexp_backward(grad, self, result, dim, keepdim):
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    return grad * exp(self - result)


def norm_backward(grad, self, result, ord, dim, keepdim):
    """torch's norm_backward, with its subgradients: 0 where x = 0 (and where the norm is 0),
    ties of the inf norms share the gradient evenly. ord 0 has none (None, as torch)."""
    if ord == 0:
        return None
    dim = tuple(range(len(self.shape))) if dim is None else tuple(dim)
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    if ord == 1:
        return sign(self) * grad
    if math.isinf(ord):
        at_max = (abs(self) == result) | isnan(self)
        return sign(self) * (grad / sum(at_max, dim, True)) * at_max
    # (the masked entries divide by 1, so gradients of gradients stay finite there)
    zero_norm = result == 0
    if ord < 1:
        zero = self == 0
        scaled = sign(self) * where(zero, 0, where(zero, 1, abs(self)) ** (ord - 1))
        return scaled * grad * result ** (1 - ord)
    if ord == 2:
        return where(zero_norm, 0, grad * self / where(zero_norm, 1, result))
    scaled = sign(self) * abs(self) ** (ord - 1) if ord < 2 else self * abs(self) ** (ord - 2)
    return scaled * where(zero_norm, 0, grad / where(zero_norm, 1, result) ** (ord - 1))


def norm_jvp(self_t, self, result, ord, dim, keepdim):
    """J.t: each output reads its slice, so backward's J^T.1 times t, summed (0 for ord 0)."""
    if ord == 0:
        return zeros_like(result)
    dims = tuple(range(len(self.shape))) if dim is None else tuple(dim)
    return sum(norm_backward(ones_like(result), self, result, ord, dim, keepdim) * self_t,
               dims, keepdim)


def clamp_backward(grad, self, min, max):
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        mask = (self <= max) if mask is None else mask & (self <= max)
    return grad if mask is None else where(mask, grad, 0)


def clamp_backward_min(grad, self, min, max):
    below = self < min
    return where(below if max is None else below & (min < max), grad, 0)


def clamp_backward_max(grad, self, min, max):
    above = self > max
    return where(above if min is None else above | (max < min), grad, 0)


def tie_split(grad, self, other, loses):
    """maximum/minimum: the full gradient to the winner, half to each at a tie."""
    return masked_fill(where(self == other, grad / 2, grad), loses, 0)


def pow_backward(grad, self, exponent):
    if exponent == 0:
        return zeros_like(self) * grad
    return grad * conj(exponent * self ** (exponent - 1))


def pow_backward_self(grad, self, exponent):
    return where(exponent == 0, 0, grad * conj(exponent * self ** (exponent - 1)))


def pow_backward_exponent(grad, self, exponent, result):
    # d/de b^e = b^e log b; defined as 0 where b == 0 and e >= 0 (torch's convention)
    if isinstance(self, (int, float, np.generic)):  # a Python number as the base
        return grad * conj(result * np.log(self)) if self != 0 else zeros_like(grad)
    at_or_above_zero = ((imag(exponent) == 0) & (real(exponent) >= 0) if is_complex(exponent)
                        else exponent >= 0)  # (a complex exponent: real and >= 0, as torch)
    at_zero = (self == 0) & at_or_above_zero
    return where(at_zero, 0, grad * conj(result * log(where(at_zero, 1, self))))


def mm_mat1_backward(grad, mat2, sizes, strides):
    """grad @ mat2^T, computed transposed when the input was column-major (a transposed
    weight), so its gradient comes back in the same layout, as torch's."""
    if is_column_major(sizes, strides):
        return t(mm(conj(mat2), t(grad)))
    return mm(grad, conj(t(mat2)))


def mm_mat2_backward(grad, mat1, sizes, strides):
    """mat1^T @ grad, computed transposed when the input was column-major (x @ w.t(): w's
    gradient is then contiguous in w's own layout, with no copy), as torch's."""
    if is_column_major(sizes, strides):
        return t(mm(t(grad), conj(mat1)))
    return mm(conj(t(mat1)), grad)


# rows a formula runs as they are, taking the row's tensor inputs, then its arguments
select_backward = row_function("SELECT_BACKWARD")  # (grad, sizes, dim, index)
diagonal_backward = row_function("DIAGONAL_BACKWARD")  # (grad, sizes, offset, dim1, dim2)
slice_backward = row_function("SLICE_BACKWARD")  # (grad, sizes, dim, start, end, step)
index_backward = row_function("INDEX_BACKWARD")  # (grad, sizes, indices)
# (grad, self, negative_slope, self_is_result)
leaky_relu_backward = row_function("LEAKY_RELU_BACKWARD")
# (grad, indices, num_weights, padding_idx, scale_grad_by_freq)
embedding_dense_backward = row_function("EMBEDDING_DENSE_BACKWARD")


def threshold_backward(grad, self, threshold):  # (a def: a row's formula, read by parameter names)
    return table.THRESHOLD_BACKWARD(grad, self, threshold)


def _array(x):
    return x._data if hasattr(x, "_data") else x


def embedding_dense_double_backward(grad, indices, padding_idx):
    """The rows of grad the indices pick, the padding_idx ones zero (torch's; it leaves
    scale_grad_by_freq out, as gradtool refuses that option)."""
    picked = table.EMBEDDING(grad, indices, -1, False, False)
    return picked if padding_idx < 0 else where(unsqueeze(indices != padding_idx, -1),
                                                 picked, 0)


def cat_backward(grad, sizes, dim):
    grads, start = [], 0
    for shape in sizes:
        grads.append(slice(grad, dim, start, start + shape[dim], 1))
        start += shape[dim]
    return grads


def copysign_self_backward(grad, self, result):
    """grad * result / self, 0 where self is 0 (torch's copysign_tensor_self_backward)."""
    zero = self == 0
    return where(zero, 0, grad * result / where(zero, 1, self))


def power_of_two(exponent, like):
    """2^exponent (exact: ldexp of 1) in like's dtype, a constant of the kind of `like`."""
    data = exponent._data if hasattr(exponent, "_data") else np.asarray(exponent)
    dtype = like._data.dtype if hasattr(like, "_data") else like.dtype
    return constant(np.ldexp(np.ones((), dtype), data.astype(np.int64)), like)


def not_implemented(op_name):
    """The formula of an op torch does not differentiate: its error, at backward."""
    def no_derivative(grad):
        raise RuntimeError(f"derivative for aten::{op_name} is not implemented")
    return no_derivative


def derivative_not_implemented(op_name):
    """The formula derivatives.yaml marks not_implemented(op_name): torch's error, at backward."""
    def no_derivative(grad):
        raise NotImplementedError(f"the derivative for '{op_name}' is not implemented.")
    return no_derivative


_logcumsumexp_row = row_function("LOGCUMSUMEXP")


def _reverse_logcumsumexp(x, dim):
    return flip(_logcumsumexp_row(flip(x, (dim,)), dim), (dim,))


def _log_parts(t):
    """log|t| where t > 0 and where t < 0, the dtype's lowest number elsewhere (not -inf, so
    that gradients of what is built from them stay finite)."""
    with np.errstate(divide="ignore"):
        log_abs = log(abs(t))
    lowest = float(np.finfo(t._data.dtype if hasattr(t, "_data") else t.dtype).min)
    return where(t > 0, log_abs, lowest), where(t < 0, log_abs, lowest)


def logcumsumexp_backward(grad, self, result, dim):
    """sum over j >= i of grad_j exp(self_i - result_j), positive and negative gradients
    apart, each summed in log space (torch's logcumsumexp_backward)."""
    positive, negative = _log_parts(grad)
    return (exp(_reverse_logcumsumexp(positive - result, dim) + self)
            - exp(_reverse_logcumsumexp(negative - result, dim) + self))


def logcumsumexp_jvp(self_t, self, result, dim):
    """sum over i <= j of t_i exp(self_i - result_j), in log space as the backward."""
    positive, negative = _log_parts(self_t)
    return (exp(_logcumsumexp_row(self + positive, dim) - result)
            - exp(_logcumsumexp_row(self + negative, dim) - result))


def cummaxmin_backward(grad, self, dim, indices):
    """Each running extreme's gradient added at the index it came from."""
    if len(self.shape) == 0:  # (a 0-d input is its own extreme)
        return grad
    return scatter_add(zeros_like(self), dim, indices, grad)


_scatter_reduce_row = row_function("SCATTER_REDUCE")


def scatter_reduce_backward(grad, self, index, src, dim, reduce, include_self, result):
    """(self's gradient, src's), as torch's scatter_reduce_backward: sum and mean pass the
    gradient (mean divided by each target's count), amax and amin spread it evenly over the
    values equal to the result, prod divides the result by each factor (a lone zero factor
    gets the product of the others); the forward's old names max and min refused, as torch."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    if reduce == "sum":
        grad_self, grad_src = grad, gather(grad, dim, index)
    elif reduce == "mean":
        count = ones_like(grad) if include_self else zeros_like(grad)
        count = scatter_add(count, dim, index, ones_like(src))
        count = masked_fill(count, count == 0, 1)
        grad_self = grad / count
        grad_src = gather(grad_self, dim, index)
    elif reduce in ("amax", "amin"):
        value = gather(result, dim, index)
        self_is_result = to(self == result, _dtype_of(grad))
        src_is_result = to(src == value, _dtype_of(grad))
        share = grad / scatter_add(self_is_result, dim, index, src_is_result)
        grad_self = self_is_result * share
        grad_src = src_is_result * gather(share, dim, index)
    else:  # prod
        masked_self = masked_fill(self, self == 0, 1)
        masked_self_result = _scatter_reduce_row(masked_self, index, src, dim, reduce,
                                                 include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = src == 0
        zeros_at_target = gather(scatter_add(zeros_like(self), dim, index,
                                             to(src_zero, _dtype_of(grad))), dim, index)
        single_zero = src_zero & (zeros_at_target == 1)
        masked_src_result = _scatter_reduce_row(self, index, masked_fill(src, single_zero, 1),
                                                dim, reduce, include_self)
        grad_src = where(single_zero, gather(grad * masked_src_result, dim, index),
                         gather(grad * result, dim, index) / masked_fill(src, src_zero, 1))
    if not include_self:  # the targets' own values took no part
        grad_self = scatter(grad_self, dim, index, 0)
    return grad_self, grad_src


def index_reduce_backward(grad, self, index, source, dim, reduce, include_self, result):
    """(self's gradient, source's): scatter_reduce's, the index spread over source's slices."""
    if hasattr(index, "_data"):  # (an index is never differentiated: a constant)
        index = index._data
    spread = constant(np.ascontiguousarray(kernels.index_along(index, tuple(source.shape),
                                                               dim)), grad)
    return scatter_reduce_backward(grad, self, spread, source, dim, reduce, include_self,
                                   result)


def _dtype_of(x):
    return x._data.dtype if hasattr(x, "_data") else x.dtype


def scatter_reduce_jvp(self_t, src_t, self, index, src, dim, reduce, include_self, result):
    """scatter_reduce's jvp: sum and mean reduce the tangents as the values; amax and amin
    average the tangents of the values equal to the result; prod's is the result times the
    sum of each factor's relative tangent (torch's CPU gives prod no tangent)."""
    if reduce in ("sum", "mean"):
        return _scatter_reduce_row(self_t, index, src_t, dim, reduce, include_self)
    if reduce == "prod":  # d(prod) = prod * sum(dx / x) (nonzero factors)
        return result * _scatter_reduce_row(self_t / self, index, src_t / src, dim, "sum",
                                            include_self)
    value = gather(result, dim, index)
    self_is_result = to(self == result, _dtype_of(self_t))
    src_is_result = to(src == value, _dtype_of(self_t))
    if not include_self:
        self_is_result = scatter(self_is_result, dim, index, 0)
    count = scatter_add(self_is_result, dim, index, src_is_result)
    return scatter_add(self_t * self_is_result, dim, index, src_t * src_is_result) / count


def _aminmax_dims(self, dim):
    return tuple(range(self.ndim if hasattr(self, "ndim") else self.dim())) if dim is None \
        else (dim,)


def aminmax_backward(grads, self, dim, keepdim, min, max):
    """Each defined output's gradient spread over the elements equal to it (amax's)."""
    dims = _aminmax_dims(self, dim)
    total = None
    for grad, result in zip(grads, (min, max)):
        if grad is not None:
            part = amax_backward(grad, self, result, dims, keepdim)
            total = part if total is None else total + part
    return total


def aminmax_jvp(self_t, self, dim, keepdim, min, max):
    dims = _aminmax_dims(self, dim)
    out = []
    for result in (min, max):
        mask = self == restore_reduced_dims(result, dims, keepdim)
        picked = sum(self_t * mask, dims, keepdim) / sum(mask, dims, keepdim)
        out.append(picked)
    return out


def block_diag_backward(grad, sizes):
    """Each input's block of the gradient, in the input's own shape (0-d and 1-d ones were
    laid as a row)."""
    grads, row, col = [], 0, 0
    for shape in sizes:
        rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, int(np.prod(shape)))
        block = slice(slice(grad, 0, row, row + rows, 1), 1, col, col + cols, 1)
        grads.append(reshape(block, shape) if len(shape) < 2 else block)
        row, col = row + rows, col + cols
    return grads


def trace_backward(grad, sizes):
    return diagonal_backward(expand(grad, (min(sizes),)), sizes, 0, 0, 1)


# ---- activations ----
def erf_backward(grad, self):
    return grad * (2 / np.sqrt(np.pi)) * exp(-self * self)


def gelu_backward(grad, self, approximate):
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        t = tanh(k * (self + 0.044715 * self ** 3))
        slope = k * (1 + 3 * 0.044715 * self * self)  # d(inner)/dx
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * slope)
    cdf = 0.5 * (1 + erf(self * (1 / np.sqrt(2))))
    pdf = exp(-0.5 * self * self) * (1 / np.sqrt(2 * np.pi))
    return grad * (cdf + self * pdf)


def silu_backward(grad, self):
    s = sigmoid(self)
    return grad * s * (1 + self * (1 - s))


def softplus_backward(grad, self, beta, threshold):
    return where(self * beta > threshold, grad, grad * sigmoid(self * beta))


def rrelu_with_noise_backward(grad, self, noise, lower, upper, training, self_is_result=False):
    """The drawn slopes in training (torch's: when upper and lower differ), else leaky_relu's
    gradient at the mean slope."""
    if training and upper - lower > 1e-6:
        return grad * noise
    return leaky_relu_backward(grad, self, (lower + upper) / 2, self_is_result)


def elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result):
    """From the input (EluBackward0) or, in place, from the output (EluBackward1)."""
    # The first derivative takes the exponential side at 0 (x <= 0), the second derivative
    # is 0 there (torch's elu_double_backward masks x < 0): the where() below keeps x = 0
    # out of what the second derivative sees.
    if is_result:  # exp(x s) alpha scale = result + alpha scale where x <= 0
        result = self_or_result
        negative_part = where(result < 0, result, 0)
        return where(result > 0, grad * scale,
                     grad * input_scale * (negative_part + alpha * scale))
    self = self_or_result
    negative_part = where(self < 0, self, 0)
    negative = grad * (input_scale * alpha * scale) * exp(negative_part * input_scale)
    return where(self > 0, grad * scale, negative)


# ---- losses (reduction: 0 none, 1 mean, 2 sum) ----
def per_element(grad, reduction, count):
    """The gradient of each element's loss: grad itself (none), or the reduced loss's grad
    spread over the elements (divided by their number for the mean)."""
    return grad / count if reduction == 1 else grad


def mse_loss_backward(grad, self, target, reduction):
    diff = self - target
    return 2 * diff * per_element(grad, reduction, numel(diff))


def smooth_l1_loss_backward(grad, self, target, reduction, beta):
    diff = self - target
    slope = sign(diff) if beta == 0 else where(abs(diff) < beta, diff / beta, sign(diff))
    return slope * per_element(grad, reduction, numel(diff))


def huber_loss_backward(grad, self, target, reduction, delta):
    diff = self - target
    slope = where(abs(diff) <= delta, diff, sign(diff) * delta)
    return slope * per_element(grad, reduction, numel(diff))


def _bce_per_element(g, weight, reduction, self, target):
    """A binary cross entropy's gradient g (grad times the slope), times the weight, per
    element of the broadcast self and target."""
    g = g if weight is None else g * weight
    count = int(np.prod(np.broadcast_shapes(tuple(self.shape), tuple(target.shape))))
    return per_element(g, reduction, count)


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    # (x - t) / (x (1 - x)), the denominator kept off 0 as torch (EPSILON = 1e-12)
    g = grad * (self - target) / clamp((1 - self) * self, 1e-12)
    return _bce_per_element(g, weight, reduction, self, target)


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    g = grad * (log1p(-self) - log(self))
    return _bce_per_element(g, weight, reduction, self, target)


def bce_with_logits_backward(grad, self, target, weight, pos_weight, reduction):
    s = sigmoid(self)
    slope = s - target if pos_weight is None else s - target - (pos_weight - 1) * target * (1 - s)
    return _bce_per_element(grad * slope, weight, reduction, self, target)


def bce_with_logits_target_backward(grad, self, target, weight, pos_weight, reduction):
    # (softplus(-x) = log(1 + e^-x), torch's default beta 1 and threshold 20)
    slope = -self if pos_weight is None else -self + (pos_weight - 1) * table.SOFTPLUS(-self, 1, 20)
    return _bce_per_element(grad * slope, weight, reduction, self, target)


def soft_margin_loss_backward(grad, self, target, reduction):
    z = exp(-target * self)
    return -target * z / (1 + z) * per_element(grad, reduction, numel(self))


def _labels(target):
    return np.asarray(target._data if hasattr(target, "_data") else target)


def _per_sample(grad, reduction, n):
    """The gradient of each sample's loss, as a column: the reduced loss's spread."""
    if reduction == 0:
        return reshape(grad, (n, 1))
    return grad / n if reduction == 1 else grad


def multi_margin_loss_backward(grad, self, target, weight, p, margin, reduction):
    x = reshape(self, (-1, self.shape[-1]) if len(self.shape) else (1, 1))
    n, c = x.shape
    y = _labels(target).reshape(-1)
    chosen = constant(np.eye(c, dtype=bool)[y], x)
    z = margin - sum(where(chosen, x, 0), 1, keepdim=True) + x
    slope = where((z > 0) & ~chosen, z * 2 if p == 2 else 1, 0) / c
    if weight is not None:
        slope = slope * reshape(weight[y], (n, 1))
    g = slope - chosen * sum(slope, 1, keepdim=True)
    return reshape(g * _per_sample(grad, reduction, n), self.shape)


def multilabel_margin_loss_backward(grad, self, target, reduction, is_target):
    x = reshape(self, (-1, self.shape[-1]) if len(self.shape) else (1, 1))
    n, c = x.shape
    count, listed = kernels.multilabel_targets(_labels(target), (n, c))
    d = 1 - unsqueeze(x, 2) + unsqueeze(x, 1)  # d[i, a, j] = 1 - (x[a] - x[j])
    pairs = constant(count[:, :, None] * (1 - listed)[:, None, :] / c, x) * (d > 0)
    g = sum(pairs, 1) - sum(pairs, 2)  # + for the unlisted j, - for the listed a
    return reshape(g * _per_sample(grad, reduction, n), self.shape)


def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """torch's nll_loss_backward, an op of its own (differentiable in self, with derivative
    zero, as torch's)."""
    spec = table.NLL_LOSS2D_BACKWARD if len(self.shape) > 2 else table.NLL_LOSS_BACKWARD
    return spec(grad, self, target, weight, total_weight, reduction, ignore_index)


def nll_loss(input, target, weight, reduction, ignore_index):
    spec = table.NLL_LOSS2D if len(input.shape) > 2 else table.NLL_LOSS
    return spec(input, target, weight, reduction, ignore_index)[0]


def _layer_norm_xhat(input, normalized_shape, result1, result2):
    """x_hat and 1/std over the normalized dims. Building a double-backward graph, mean and
    1/std are functions of input (so their derivatives are in it): 1/std from the saved one,
    as (var(x) - var(x0) + rstd0^-2)^(-1/2), since eps is not saved (as torch)."""
    average, rstd = result1, result2
    if grad_mode.state.grad_enabled:
        dims = tuple(range(-len(normalized_shape), 0))
        variance = var(input, dims, 0, keepdim=True)
        rstd = (variance - detach(variance) + result2 ** -2) ** -0.5
        average = mean(input, dims, keepdim=True)
    return (input - average) * rstd, rstd


def normalized_backward(g, xhat, rstd, dims):
    """Through x_hat = (x - mean) * rstd over `dims`: the projection that removes the
    mean and the x_hat component (symmetric, so also x_hat's tangent from x's)."""
    return rstd * (g - mean(g, dims, keepdim=True) - xhat * mean(g * xhat, dims, keepdim=True))


def layer_norm_backward_input(grad, input, weight, normalized_shape, result1, result2):
    xhat, rstd = _layer_norm_xhat(input, normalized_shape, result1, result2)
    g = grad if weight is None else grad * weight
    return normalized_backward(g, xhat, rstd, tuple(range(-len(normalized_shape), 0)))


def layer_norm_backward_weight(grad, input, normalized_shape, result1, result2):
    xhat, _ = _layer_norm_xhat(input, normalized_shape, result1, result2)
    return sum_to(grad * xhat, normalized_shape)


def reduce_loss(loss, reduction):
    """Each element's loss reduced as the loss was (the jvp of a loss from its elements')."""
    if reduction == 0:
        return loss
    return sum(loss) / numel(loss) if reduction == 1 else sum(loss)


def layer_norm_jvp(input_t, weight_t, bias_t, input, weight, normalized_shape, result1,
                   result2):
    """x_hat's tangent (the projection its backward applies, which is symmetric), then the
    affine part: d(x_hat w + b) = dx_hat w + x_hat dw + db."""
    dims = tuple(range(-len(normalized_shape), 0))
    xhat = (input - result1) * result2
    xhat_t = normalized_backward(input_t, xhat, result2, dims)
    out = xhat_t if weight is None else xhat_t * weight + xhat * weight_t
    return out + bias_t  # (0 without a bias)


# ---- reductions and scans ----
def var_mean_backward(grads, self, dim, correction, keepdim):
    """The terms of the outputs that have a gradient only (as torch's: the mean's alone does
    not depend on self)."""
    grad_var, grad_mean = grads
    terms = ([] if grad_var is None else [var_backward(grad_var, self, dim, correction, keepdim)]
             ) + ([] if grad_mean is None else [mean_backward(grad_mean, self.shape, dim, keepdim)])
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def std_mean_backward(grads, self, dim, correction, keepdim, result0):
    grad_std, grad_mean = grads
    terms = ([] if grad_std is None else
             [std_backward(grad_std, self, dim, correction, keepdim, result0)]) + (
        [] if grad_mean is None else [mean_backward(grad_mean, self.shape, dim, keepdim)])
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def var_mean_jvp(self_t, self, dim, correction, keepdim, result0, std=False):
    """[tangent of var (or std), tangent of mean]: each reads one slice along `dim`."""
    ones = ones_like(result0)
    d = (std_backward(ones, self, dim, correction, keepdim, result0) if std else
         var_backward(ones, self, dim, correction, keepdim))
    return [sum(d * self_t, dim, keepdim=keepdim), mean(self_t, dim, keepdim=keepdim)]


def reverse_cumsum(grad, dim):
    return flip(cumsum(flip(grad, (dim,)), dim), (dim,))


def _products_of_others(self, dim):
    """[.., i, k] = prod_{j <= k, j != i} x_j along `dim` (moved last), and the mask k >= i:
    the products formed directly, for slices with a zero (O(n^2), as prod's backward)."""
    n = self.shape[dim]
    moved = transpose(self, dim, -1)
    rows = expand(unsqueeze(moved, -2), tuple(moved.shape[:-1]) + (n, n))  # row i: x_i -> 1
    partial = cumprod(where(constant(np.eye(n, dtype=bool), self), 1, rows), -1)
    return partial, constant(np.triu(np.ones((n, n), dtype=bool)), self)


def cumprod_backward(grad, self, dim, result):
    """sum over k >= i of grad_k * result_k / x_i; with a zero in the slice, the products of
    the others are formed directly."""
    if numel(self) <= 1 or self.shape[dim] == 1:  # each output is its input: grad, as torch
        return grad
    if not any_true(self == 0):
        return reverse_cumsum(grad * result, dim) / self
    partial, upper = _products_of_others(self, dim)
    g = unsqueeze(transpose(grad, dim, -1), -2)
    return transpose(sum(where(upper, partial * g, 0), -1), -1, dim)


def cumprod_jvp(self_t, self, dim, result):
    """sum over i <= k of t_i * prod_{j <= k, j != i} x_j: result * cumsum(t / x) without a
    zero in x, else the products of the others formed directly (as cumprod_backward)."""
    if not any_true(self == 0):
        return result * cumsum(self_t / self, dim)
    partial, upper = _products_of_others(self, dim)
    t = unsqueeze(transpose(self_t, dim, -1), -1)
    return transpose(sum(where(upper, partial * t, 0), -2), -1, dim)


def repeat_backward(grad, repeats, sizes):
    """Each copy's gradient summed back: grad viewed as (r0, s0, r1, s1, ...)."""
    padded = (1,) * (len(repeats) - len(sizes)) + tuple(sizes)
    split = [n for pair in zip(repeats, padded) for n in pair]
    return reshape(sum(reshape(grad, split), tuple(range(0, len(split), 2))), sizes)


def index_select_backward(grad, sizes, dim, index):
    return index_add(zeros(sizes, grad), dim, index, grad)


def index_add_source_backward(grad, dim, index, source, source_dim, alpha):
    g = scale(index_select(grad, dim, index), alpha)
    return reshape(g, source.shape) if source_dim == 0 else g  # a 0-d source: one element


# ---- a batch of tangents at once (forward-mode Jacobians) through the shape ops: the rows'
# batched_jvp(t, result, args), t with a leading dim of B tangents ----
def batched_reshape(t, result, args):
    return t.reshape((t.shape[0],) + result.shape)


def batched_reduction(method):
    """sum / mean over all dims, or over `dim`, counted from the end (after the batch dim)."""
    def batched(t, result, args):
        ndim = t.ndim - 1
        if not ndim:  # a 0-d input's tangents: nothing to reduce (no dims would mean all)
            return t
        dims = (args[0] if args else None) or range(ndim)  # an empty dim list: all, as torch
        return getattr(t, method)(tuple(d % ndim - ndim for d in dims),
                                  keepdim=bool(args and args[1]))
    return batched


def batched_expand(t, result, args):
    """The input's dims right-aligned, after the batch dim, then expanded."""
    shape = (t.shape[0],) + result.shape
    return t.reshape((shape[0],) + (1,) * (len(shape) - t.ndim) + t.shape[1:]).expand(shape)


def batched_permute(dims_of):
    """The op's permutation of the input's dims (dims_of(ndim, args)) after the batch dim."""
    def batched(t, result, args):
        ndim = t.ndim - 1
        return t.permute((0,) + tuple(d % ndim + 1 for d in dims_of(ndim, args)))
    return batched


def transposed(ndim, args):
    dims = list(range(ndim))
    dim0, dim1 = args
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return dims


def reversed_dims(ndim, args):  # t(): 2-d swapped, 0-d and 1-d unchanged
    return tuple(reversed(range(ndim)))


def permuted(ndim, args):
    return args[0]


# ---- convolutions ----
# (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
convolution = row_function("CONVOLUTION")


def _narrowed(t, sizes):
    """t's spatial dims (after the first two) cut to `sizes`."""
    for d, n in enumerate(sizes, 2):
        if t.shape[d] != n:
            t = slice(t, d, 0, n, 1)
    return t


def convolution_backward_input(grad, input, weight, stride, padding, dilation, transposed,
                               output_padding, groups):
    """The adjoint in the input: a transposed convolution of the gradient (a plain one for a
    transposed convolution), sized back to the input."""
    spatial = len(weight.shape) - 2
    stride, padding, dilation = (expanded(v, spatial) for v in (stride, padding, dilation))
    if transposed:
        g = convolution(grad, weight, None, stride, padding, dilation, False, (0,) * spatial,
                        groups)
    else:  # the input rows the stride stepped past come back as output_padding
        extra = tuple(n - ((o - 1) * s - 2 * p + d * (k - 1) + 1) for n, o, s, p, d, k in zip(
            input.shape[2:], grad.shape[2:], stride, padding, dilation, weight.shape[2:]))
        g = convolution(grad, weight, None, stride, padding, dilation, True, extra, groups)
    return _narrowed(g, tuple(input.shape[2:]))


def convolution_backward_weight(grad, input, weight, stride, padding, dilation, transposed,
                                groups):
    """The gradient in the weight: the input convolved with the gradient as the kernel, the
    batch summed as the channels (stride and dilation swap roles); for a transposed
    convolution the gradient and the input swap roles (as torch's double backward)."""
    spatial = len(weight.shape) - 2
    stride, padding, dilation = (expanded(v, spatial) for v in (stride, padding, dilation))
    x, g = (grad, input) if transposed else (input, grad)
    n, c, o = x.shape[0], x.shape[1], g.shape[1]
    x_rest, g_rest = tuple(x.shape[2:]), tuple(g.shape[2:])
    moved = tuple(range(3, 3 + spatial))
    # each group's channels as the batch, (group, sample) as the channels
    x = reshape(permute(reshape(x, (n, groups, c // groups) + x_rest), (2, 1, 0) + moved),
                (c // groups, groups * n) + x_rest)
    g = reshape(permute(reshape(g, (n, groups, o // groups) + g_rest), (1, 2, 0) + moved),
                (o, n) + g_rest)
    w = convolution(x, g, None, dilation, padding, stride, False, (0,) * spatial, groups)
    return contiguous(transpose(_narrowed(w, tuple(weight.shape[2:])), 0, 1))


def channel_sum(grad):
    """The gradient of a per-channel bias: summed over all dims but dim 1."""
    return sum(grad, (0,) + tuple(range(2, len(grad.shape))))


def convolution_jvp(input_t, weight_t, bias_t, input, weight, stride, padding, dilation,
                    transposed, output_padding, groups):
    """Bilinear in input and weight, plus the bias: conv(x_t, w, b_t) + conv(x, w_t)."""
    args = (stride, padding, dilation, transposed, output_padding, groups)
    return (convolution(input_t, weight, None if _no_tangent(bias_t) else bias_t, *args)
            + convolution(input, weight_t, None, *args))


def _no_tangent(t):
    return isinstance(t, (int, float))  # (the jvp machinery's 0 for an input without one)


# ---- pooling, pads, resampling: each backward an op of its own, as torch's ----
def max_pool_double_backward(grad, indices, spatial=2):
    """Each output's value read at the index its max came from: max pooling's jvp, and the
    gradient of its backward (over the last `spatial` dims)."""
    flat = reshape(grad, tuple(grad.shape[:-spatial]) + (-1,))
    at = reshape(indices, tuple(indices.shape[:-spatial]) + (-1,))
    return reshape(gather(flat, len(at.shape) - 1, at), tuple(indices.shape))


def max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    return table.MAX_POOL2D_WITH_INDICES_BACKWARD(grad, self, indices, kernel_size, stride,
                                                  padding, dilation, ceil_mode)


adaptive_max_pool2d_backward = row_function("ADAPTIVE_MAX_POOL2D_BACKWARD")  # (grad, self, indices)
avg_pool2d = row_function("AVG_POOL2D")  # (self, kernel_size, stride, padding, ...)
avg_pool2d_backward = row_function("AVG_POOL2D_BACKWARD")  # (grad, self, kernel_size, ...)


def max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    return table.MAX_POOL3D_WITH_INDICES_BACKWARD(grad, self, indices, kernel_size, stride,
                                                  padding, dilation, ceil_mode)


adaptive_max_pool3d_backward = row_function("ADAPTIVE_MAX_POOL3D_BACKWARD")  # (grad, self, indices)


def fractional_max_pool2d_backward(grad, self, kernel_size, output_size, indices):
    return table.FRACTIONAL_MAX_POOL2D_BACKWARD(grad, self, indices, kernel_size, output_size)


def fractional_max_pool3d_backward(grad, self, kernel_size, output_size, indices):
    return table.FRACTIONAL_MAX_POOL3D_BACKWARD(grad, self, indices, kernel_size, output_size)
avg_pool3d = row_function("AVG_POOL3D")
avg_pool3d_backward = row_function("AVG_POOL3D_BACKWARD")


def adaptive_avg_pool3d(self, output_size):
    return table.ADAPTIVE_AVG_POOL3D(self, tuple(output_size))


def adaptive_avg_pool3d_backward(grad, self):
    return table.ADAPTIVE_AVG_POOL3D_BACKWARD(grad, self)


def adaptive_avg_pool2d(self, output_size):
    return table.ADAPTIVE_AVG_POOL2D(self, tuple(output_size))


def adaptive_avg_pool2d_backward(grad, self):  # (a def: a row's formula, read by parameter names)
    return table.ADAPTIVE_AVG_POOL2D_BACKWARD(grad, self)


def im2col(self, kernel_size, dilation, padding, stride):
    return table.IM2COL(self, kernel_size, dilation, padding, stride)


def col2im(self, output_size, kernel_size, dilation, padding, stride):
    return table.COL2IM(self, output_size, kernel_size, dilation, padding, stride)


def affine_grid_generator_backward(grad, size, align_corners):
    """theta's gradient: the base grid's transpose times the grid's gradient, per batch."""
    array = getattr(grad, "_data", grad)  # (a Tensor's array, or the array itself)
    base = kernels.affine_base_grid(size, align_corners, array.dtype)
    flat = reshape(grad, (size[0], base.shape[0], len(size) - 2))
    return transpose(matmul(constant(np.ascontiguousarray(base.T), grad), flat), -1, -2)


# ---- F.grid_sample: each output a weighted sum of taps of the input (2 per dim, bilinear;
# 1, nearest; 4, bicubic), the weights functions of the grid. Written with generic ops, the
# same code is the forward (on arrays), both gradients and their own gradients (on Tensors).
_CUBIC_A = -0.75  # torch's cubic convolution coefficient


def _cubic(t):
    """torch's get_cubic_upsample_coefficients at t in [0, 1), and their derivatives."""
    a, u, v, w = _CUBIC_A, t + 1, 1 - t, 2 - t
    far = (lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a)
    near = (lambda x: ((a + 2) * x - (a + 3)) * x * x + 1)
    far_slope = (lambda x: (3 * a * x - 10 * a) * x + 8 * a)
    near_slope = (lambda x: (3 * (a + 2) * x - 2 * (a + 3)) * x)
    return ([far(u), near(t), near(v), far(w)],
            [far_slope(u), near_slope(t), -near_slope(v), -far_slope(w)])


def _grid_sample_taps(input_sizes, grid, mode, padding_mode, align_corners):
    """[(flat index into the input's spatial block (N, P), valid (N, P) as 0/1, weight,
    [d weight / d grid coordinate d, for each d])]: every tap of every output position. Grid
    coordinate d (x, y[, z]) reads along the input's dim -1 - d."""
    array = getattr(grid, "_data", grid)  # (the positions, never differentiated)
    n, coords = array.shape[0], array.shape[-1]
    per_dim = []  # per grid coordinate: [(positions, weight, slope)]
    for d in range(coords):
        size = input_sizes[-1 - d]
        g = array[..., d].reshape(n, -1)
        source, mult = kernels.grid_sample_source(g, size, padding_mode, align_corners,
                                                  pad=mode != 2)
        if mode == 1:  # nearest (half to even, as nearbyint)
            per_dim.append([(np.rint(source).astype(np.int64), 1.0, 0.0)])
            continue
        base = np.floor(source)
        # t = source - base as a function of the grid (exact: the map is linear there)
        t = (reshape(select(grid, -1, d), (n, -1)) * constant(mult, grid)
             + constant(source - base - g * mult, grid))
        base = base.astype(np.int64)
        if mode == 0:
            per_dim.append([(base, 1 - t, constant(-mult, grid)), (base + 1, t,
                                                                  constant(mult, grid))])
        else:
            coeffs, slopes = _cubic(t)
            per_dim.append([(kernels.grid_sample_pad_tap(base - 1 + i, size, padding_mode,
                                                         align_corners),
                             coeffs[i], slopes[i] * constant(mult, grid)) for i in range(4)])
    taps = []
    for combo in itertools.product(*per_dim):
        positions = [p for p, _, _ in combo]
        valid = np.ones(positions[0].shape, bool)
        for p, d in zip(positions, range(coords)):
            valid &= (p >= 0) & (p < input_sizes[-1 - d])
        flat = kernels._flat_index([np.where(valid, p, 0) for p in positions[::-1]],
                                   input_sizes[-coords:])
        weight, slopes = 1.0, []
        for _, w, _ in combo:
            weight = weight * w
        for d in range(coords):
            slope = combo[d][2]
            for e in range(coords):
                slope = slope if e == d else slope * combo[e][1]
            slopes.append(slope)
        taps.append((flat, constant(valid.astype(array.dtype), grid), weight, slopes))
    return taps


def _tap_index(flat, like, channels):
    return constant(np.ascontiguousarray(np.broadcast_to(
        flat[:, None, :], (flat.shape[0], channels, flat.shape[1]))), like)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """The input sampled at the grid's positions: (N, C, *grid's spatial)."""
    n, c = input.shape[:2]
    values = reshape(input, (n, c, -1))
    out = 0
    for flat, valid, weight, _ in _grid_sample_taps(tuple(input.shape[2:]), grid,
                                                    interpolation_mode, padding_mode,
                                                    align_corners):
        out = out + gather(values, 2, _tap_index(flat, input, c)) * unsqueeze(weight * valid, 1)
    return reshape(out, (n, c) + tuple(grid.shape[1:-1]))


def grid_sampler_input_backward(grad, input, grid, interpolation_mode, padding_mode,
                                align_corners):
    """Each output's gradient added back into its taps, by their weights."""
    n, c = input.shape[:2]
    grads = reshape(grad, (n, c, -1))
    total = zeros((n, c, numel(input) // (n * c)), grad)
    for flat, valid, weight, _ in _grid_sample_taps(tuple(input.shape[2:]), grid,
                                                    interpolation_mode, padding_mode,
                                                    align_corners):
        total = scatter_add(total, 2, _tap_index(flat, input, c),
                            grads * unsqueeze(weight * valid, 1))
    return reshape(total, tuple(input.shape))


def grid_sampler_grid_backward(grad, input, grid, interpolation_mode, padding_mode,
                               align_corners):
    """Per grid coordinate: the taps' values times their weights' slopes, summed over the
    channels (nearest: none)."""
    if interpolation_mode == 1:
        return zeros_like(grid)
    n, c = input.shape[:2]
    grads, values = reshape(grad, (n, c, -1)), reshape(input, (n, c, -1))
    coords = grid.shape[-1]
    totals = [0] * coords
    for flat, valid, _, slopes in _grid_sample_taps(tuple(input.shape[2:]), grid,
                                                    interpolation_mode, padding_mode,
                                                    align_corners):
        read = sum(grads * gather(values, 2, _tap_index(flat, input, c)), 1) * valid
        totals = [total + read * slope for total, slope in zip(totals, slopes)]
    return reshape(stack(totals, -1), tuple(grid.shape))


def grid_sampler_jvp(input_t, grid_t, input, grid, interpolation_mode, padding_mode,
                     align_corners):
    """The input's tangent sampled, plus the grid's moving each output along its slopes."""
    args = (interpolation_mode, padding_mode, align_corners)
    out = 0 if _no_tangent(input_t) else grid_sampler(input_t, grid, *args)
    if _no_tangent(grid_t) or interpolation_mode == 1:
        return out
    n, c = input.shape[:2]
    values = reshape(input, (n, c, -1))
    for flat, valid, _, slopes in _grid_sample_taps(tuple(input.shape[2:]), grid, *args):
        moved = 0
        for d, slope in enumerate(slopes):
            moved = moved + slope * reshape(select(grid_t, -1, d), (n, -1))
        out = out + reshape(gather(values, 2, _tap_index(flat, input, c))
                            * unsqueeze(moved * valid, 1), (n, c) + tuple(grid.shape[1:-1]))
    return out


def channel_shuffle(self, groups):
    return table.CHANNEL_SHUFFLE(self, groups)


def pixel_shuffle(self, upscale_factor):
    return table.PIXEL_SHUFFLE(self, upscale_factor)


def conv_tbc_backward(grad, self, weight, bias, pad):
    """conv_tbc's adjoints as conv_tbcs: the input's is grad convolved with the flipped,
    transposed weight (padded to give back the input's frames); the weight's, the input
    (batch as channels) convolved with grad; the bias's, grad summed over time and batch."""
    kernel = weight.shape[0]
    flipped = transpose(flip(weight, (0,)), 1, 2)
    grad_self = table.CONV_TBC(grad, flipped, zeros((self.shape[2],), grad), kernel - 1 - pad)
    grad_weight = table.CONV_TBC(transpose(self, 1, 2), grad, zeros((weight.shape[2],), grad),
                                 pad)
    return [grad_self, grad_weight, sum(grad, (0, 1))]


def pixel_unshuffle(self, downscale_factor):
    return table.PIXEL_UNSHUFFLE(self, downscale_factor)


def constant_pad_nd(self, pad, value=0):
    return table.CONSTANT_PAD_ND(self, tuple(pad), value)


def _by_dims(rows, padding):
    return rows[len(padding) // 2 - 1]  # the 1-d row for 2 pads, the 2-d one for 4, ...


def reflection_pad(self, padding):
    rows = (table.REFLECTION_PAD1D, table.REFLECTION_PAD2D, table.REFLECTION_PAD3D)
    return _by_dims(rows, padding)(self, padding)


def reflection_pad_backward(grad, self, padding):
    rows = (table.REFLECTION_PAD1D_BACKWARD, table.REFLECTION_PAD2D_BACKWARD,
            table.REFLECTION_PAD3D_BACKWARD)
    return _by_dims(rows, padding)(grad, self, padding)


def replication_pad(self, padding):
    return _by_dims((table.REPLICATION_PAD1D, table.REPLICATION_PAD2D,
                     table.REPLICATION_PAD3D), padding)(self, padding)


def replication_pad_backward(grad, self, padding):
    rows = (table.REPLICATION_PAD1D_BACKWARD, table.REPLICATION_PAD2D_BACKWARD,
            table.REPLICATION_PAD3D_BACKWARD)
    return _by_dims(rows, padding)(grad, self, padding)


def upsample_nearest(self, output_size, scales):
    row = (table.UPSAMPLE_NEAREST1D, table.UPSAMPLE_NEAREST2D)[len(output_size) - 1]
    return row(self, tuple(output_size), *scales)


def upsample_nearest_backward(grad, output_size, input_size, scales):
    row = (table.UPSAMPLE_NEAREST1D_BACKWARD,
           table.UPSAMPLE_NEAREST2D_BACKWARD)[len(output_size) - 1]
    return row(grad, tuple(output_size), tuple(input_size), *scales)


def upsample_bilinear2d(self, output_size, align_corners, scales):
    return table.UPSAMPLE_BILINEAR2D(self, tuple(output_size), align_corners, *scales)


def upsample_bilinear2d_backward(grad, output_size, input_size, align_corners, scales):
    return table.UPSAMPLE_BILINEAR2D_BACKWARD(grad, tuple(output_size), tuple(input_size),
                                              align_corners, *scales)


# ---- batch norm and group norm ----
def _channel(t, ndim):
    """A per-channel (C,) value shaped to broadcast over (N, C, *spatial)."""
    return reshape(t, (1, -1) + (1,) * (ndim - 2))


def _channel_dims(ndim):
    return (0,) + tuple(range(2, ndim))


def _batch_norm_xhat(input, running_mean, running_var, result1, result2, training, eps):
    """x_hat and 1/std per channel (shaped to broadcast) from the running mean and variance in
    eval mode; the batch's in training, recomputed from input when building a double-backward
    graph (so their derivatives are in it)."""
    ndim = len(input.shape)
    if not training:
        average, rstd = _channel(running_mean, ndim), _channel((running_var + eps) ** -0.5, ndim)
    elif grad_mode.state.grad_enabled:
        dims = _channel_dims(ndim)
        average = mean(input, dims, keepdim=True)
        rstd = (var(input, dims, 0, keepdim=True) + eps) ** -0.5
    else:
        average, rstd = _channel(result1, ndim), _channel(result2, ndim)
    return (input - average) * rstd, rstd


def batch_norm_backward_input(grad, input, weight, running_mean, running_var, result1, result2,
                              training, eps):
    ndim = len(input.shape)
    xhat, rstd = _batch_norm_xhat(input, running_mean, running_var, result1, result2, training,
                                  eps)
    g = grad if weight is None else grad * _channel(weight, ndim)
    if not training:  # constant statistics: a per-channel scale
        return g * rstd
    return normalized_backward(g, xhat, rstd, _channel_dims(ndim))


def batch_norm_backward_weight(grad, input, running_mean, running_var, result1, result2,
                               training, eps):
    xhat, _ = _batch_norm_xhat(input, running_mean, running_var, result1, result2, training, eps)
    return sum(grad * xhat, _channel_dims(len(input.shape)))


def batch_norm_jvp(input_t, weight_t, bias_t, input, weight, running_mean, running_var,
                   result1, result2, training, eps):
    ndim = len(input.shape)
    xhat, rstd = _batch_norm_xhat(input, running_mean, running_var, result1, result2, training,
                                  eps)
    xhat_t = (normalized_backward(input_t, xhat, rstd, _channel_dims(ndim)) if training
              else input_t * rstd)
    out = xhat_t if weight is None else (
        xhat_t * _channel(weight, ndim) + xhat * _channel(weight_t, ndim))
    return out if _no_tangent(bias_t) else out + _channel(bias_t, ndim)


def _group_norm_xhat(input, N, group, eps, result1, result2):
    """x_hat per (sample, group), shaped (N, group, rest), and its 1/std (see
    _batch_norm_xhat: recomputed from input when building a double-backward graph)."""
    grouped = reshape(input, (N, group, -1))
    if grad_mode.state.grad_enabled:
        average = mean(grouped, (2,), keepdim=True)
        rstd = (var(grouped, (2,), 0, keepdim=True) + eps) ** -0.5
    else:
        average, rstd = reshape(result1, (N, group, 1)), reshape(result2, (N, group, 1))
    return (grouped - average) * rstd, rstd


def group_norm_backward_input(grad, input, weight, N, C, HxW, group, eps, result1, result2):
    xhat, rstd = _group_norm_xhat(input, N, group, eps, result1, result2)
    g = grad if weight is None else grad * _channel(weight, len(input.shape))
    return reshape(normalized_backward(reshape(g, (N, group, -1)), xhat, rstd, (2,)),
                   tuple(input.shape))


def group_norm_backward_weight(grad, input, N, group, eps, result1, result2):
    xhat, _ = _group_norm_xhat(input, N, group, eps, result1, result2)
    return sum(grad * reshape(xhat, tuple(input.shape)), _channel_dims(len(input.shape)))


def group_norm_jvp(input_t, weight_t, bias_t, input, weight, N, group, eps, result1, result2):
    ndim = len(input.shape)
    xhat, rstd = _group_norm_xhat(input, N, group, eps, result1, result2)
    xhat_t = reshape(normalized_backward(reshape(input_t, (N, group, -1)), xhat, rstd, (2,)),
                     tuple(input.shape))
    xhat = reshape(xhat, tuple(input.shape))
    out = xhat_t if weight is None else (
        xhat_t * _channel(weight, ndim) + xhat * _channel(weight_t, ndim))
    return out if _no_tangent(bias_t) else out + _channel(bias_t, ndim)


# ---- linear algebra (torch's FunctionsManual.cpp, real matrices) ----
def mT(x):
    return transpose(x, -1, -2)


def mH(x):
    """The conjugate transpose (mT for real values)."""
    return conj(transpose(x, -1, -2))


def _eye_like(x):
    """The identity, batched as the square matrix x, in its dtype."""
    return zeros_like(x) + constant(np.eye(x.shape[-1], dtype=bool), x)


def _diag_embed(v):
    return table.DIAG_EMBED(v, 0, -2, -1)


def solve(A, B):
    """A^{-1} B (B a batch of matrices): the recorded linalg.solve on Tensors."""
    return table.LINALG_SOLVE_EX(A, B, True)[0]


def _solve_saved(A, LU, pivots, B, adjoint):
    """A^{-1} B, or A^{-H} B: from the saved LU factors on arrays (torch's lu_solve, first
    order), by a recorded solve with A on Tensors (so gradients of gradients reach A)."""
    if type(B) is np.ndarray and type(A) is np.ndarray:
        return kernels.lu_solve(LU, pivots, B, adjoint)
    return solve(mH(A) if adjoint else A, B)


def _is_vector_rhs(A, B):
    return len(B.shape) == 1 or (len(B.shape) == len(A.shape) - 1
                                 and tuple(B.shape) == tuple(A.shape[:-1]))


def linalg_inv_backward(grad, inverse):
    return -matmul(mT(inverse), matmul(grad, mT(inverse)))


def _solve_grad_B(grad, A, LU, pivots, left):
    """gB = A^{-H} gX (left) or gX A^{-H} (right), as a batch of matrices."""
    g = unsqueeze(grad, -1) if _is_vector_rhs(A, grad) else grad
    if left:
        return _solve_saved(A, LU, pivots, g, True)
    return mH(_solve_saved(A, LU, pivots, mH(g), False))


def linalg_solve_backward_B(grad, A, LU, pivots, left):
    gB = _solve_grad_B(grad, A, LU, pivots, left)
    return squeeze(gB, -1) if _is_vector_rhs(A, grad) else gB


def linalg_solve_backward_A(grad, A, LU, pivots, result, left):
    """gA = -gB X^H (left) or -X^H gB (right), summed over B's batch by the engine."""
    gB = _solve_grad_B(grad, A, LU, pivots, left)
    X = unsqueeze(result, -1) if _is_vector_rhs(A, result) else result
    return -matmul(gB, mH(X)) if left else -matmul(mH(X), gB)


def linalg_solve_jvp(A_t, B_t, A, result, left):
    """dX = A^{-1} (dB - dA X) (left), or (dB - X dA) A^{-1} (right)."""
    vector = _is_vector_rhs(A, result)
    X = unsqueeze(result, -1) if vector else result
    dB = unsqueeze(B_t, -1) if vector and len(B_t.shape) == len(result.shape) else B_t
    if left:
        dX = solve(A, dB - matmul(A_t, X))
    else:
        dX = mT(solve(mT(A), mT(dB - matmul(X, A_t))))
    return squeeze(dX, -1) if vector else dX


def linalg_det_backward(grad, det, A, LU, pivots):
    """grad det A^{-T} (the cofactors); where some matrix is singular, or nearly (|det| below
    sqrt(eps) of Hadamard's bound, the product of its rows' norms: A^{-1} is then too
    inexact), the cofactors through the SVD, det U det Vh U diag(prod of the other singular
    values) Vh, as torch's."""
    scale = unsqueeze(unsqueeze(grad * det, -1), -1)
    rows = detach(A)
    bound = prod(sum(rows * rows, -1), -1) ** 0.5
    eps = np.finfo(LU.dtype if type(LU) is np.ndarray else detach(LU).numpy().dtype).eps
    if not any_true(abs(detach(det)) <= eps ** 0.5 * bound):
        return scale * _inverse_transposed(A, LU, pivots)
    U, S, Vh = table.LINALG_SVD(A, False)
    alpha = table.LINALG_DET(U)[0] * table.LINALG_DET(Vh)[0] * grad
    return matmul(U * unsqueeze(unsqueeze(alpha, -1) * _prod_of_the_others(S), -2), Vh)


def _prod_of_the_others(x):
    """prod_{j != i} x_j along the last dim, with no division (so exact, and differentiable,
    at and near zeros): exclusive cumulative products from both ends (torch's
    prod_safe_zeros_backward)."""
    last, n = len(x.shape) - 1, x.shape[-1]
    ones = ones_like(slice(x, last, 0, 1, 1))
    before = cumprod(cat([ones, slice(x, last, 0, n - 1, 1)], -1), -1)
    after = flip(cumprod(cat([ones, flip(slice(x, last, 1, n, 1), (-1,))], -1), -1), (-1,))
    return before * after


def linalg_slogdet_backward(grads, A, LU, pivots):
    """d log|det A| = A^{-T} (real matrices: the sign has no gradient)."""
    g = unsqueeze(unsqueeze(grads[1], -1), -1)
    return g * _inverse_transposed(A, LU, pivots)


def _inverse_transposed(A, LU, pivots):
    """A^{-T}, from det's LU factors (of A^T or of A, see kernels.det_factors)."""
    factors_transposed = type(A) is np.ndarray and kernels.factors_transposed(A)
    return _solve_saved(A, LU, pivots, _eye_like(A), adjoint=not factors_transposed)


def _pivots_matrix(pivots, m, like):
    """P (m x m, a constant) with A = P L U from getrf's row swaps."""
    swaps = np.asarray(_array(pivots)).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), swaps.shape[:-1] + (m,)).copy()
    for j in range(swaps.shape[-1]):
        index = np.indices(swaps.shape[:-1])
        p = swaps[..., j]
        perm[(*index, j)], perm[(*index, p)] = perm[(*index, p)], perm[(*index, j)].copy()
    eye = np.eye(m, dtype=np.dtype(_array(detach(like)).dtype))
    return constant(np.swapaxes(eye[perm], -1, -2), like)


def _lu_parts(LU, pivots):
    """P, L (m x k, unit lower) and U (k x n) of a packed LU of A (m x n), k = min(m, n)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    last = len(LU.shape) - 1
    L = tril(slice(LU, last, 0, k, 1), -1) + constant(
        np.eye(m, k, dtype=np.dtype(_array(detach(LU)).dtype)), LU)
    U = triu(slice(LU, last - 1, 0, k, 1), 0)
    return _pivots_matrix(pivots, m, LU), L, U


def _triangular(A, B, upper, left=True, unitriangular=False):
    return table.LINALG_SOLVE_TRIANGULAR(A, B, upper, left, unitriangular)


def linalg_lu_factor_ex_backward(grad, LU, pivots, pivot):
    """linalg_lu_backward with L's and U's gradients read from LU's (its strict lower
    triangle and its upper one)."""
    P, L, U = _lu_parts(LU, pivots)
    k = min(LU.shape[-2:])
    last = len(LU.shape) - 1
    return linalg_lu_backward(slice(grad, last, 0, k, 1), slice(grad, last - 1, 0, k, 1), P, L, U)


def linalg_lu_backward(gL, gU, P, L, U):
    """torch's linalg_lu_backward for A = P L U (L m x k unit lower, U k x n, gradients None
    where undefined): square, gA = P L^{-H} phi U^{-H}, phi = tril(L^H gL, -1) + triu(gU U^H);
    wide, U = [U1 U2] and the columns beyond gain P L^{-H} gU2 (phi less gU2 U2^H below the
    diagonal); tall, L = [L1; L2] and the rows beyond gain P gL2 U^{-H} (phi less L2^H gL2 on
    and above it)."""
    m, n = L.shape[-2], U.shape[-1]
    last = len(L.shape) - 1
    gL = zeros_like(L) if gL is None else tril(gL, -1)
    gU = zeros_like(U) if gU is None else triu(gU, 0)
    if m < n:  # (..., m, m) and (..., m, n - m)
        U, U2 = slice(U, last, 0, m, 1), slice(U, last, m, n, 1)
        gU, gU2 = slice(gU, last, 0, m, 1), slice(gU, last, m, n, 1)
        gL = gL - _triangular(mH(L), matmul(gU2, mH(U2)), True, unitriangular=True)
    if m > n:
        L, L2 = slice(L, last - 1, 0, n, 1), slice(L, last - 1, n, m, 1)
        gL, gL2 = slice(gL, last - 1, 0, n, 1), slice(gL, last - 1, n, m, 1)
        gU = gU - _triangular(mH(U), matmul(mH(L2), gL2), False, left=False)
    phi = tril(matmul(mH(L), gL), -1) + triu(matmul(gU, mH(U)), 0)
    gA = _triangular(mH(U), _triangular(mH(L), phi, True, unitriangular=True), False,
                     left=False)
    if m < n:
        gA = cat([gA, _triangular(mH(L), gU2, True, unitriangular=True)], -1)
    if m > n:
        gA = cat([gA, _triangular(mH(U), gL2, False, left=False)], -2)
    return matmul(P, gA)


def linalg_lu_factor_ex_jvp(A_t, LU, pivots, pivot):
    """dLU = dL + dU, the two tangents of linalg_lu_jvp packed as LU packs L and U."""
    m, n = LU.shape[-2:]
    _, dL, dU = linalg_lu_jvp(A_t, *_lu_parts(LU, pivots), pivot)
    if m < n:  # (dL: m x m beside dU's m x n)
        dL = cat([dL, zeros_like(slice(dU, len(dU.shape) - 1, m, n, 1))], -1)
    if m > n:  # (dU: n x n above dL's m x n)
        dU = cat([dU, zeros_like(slice(dL, len(dL.shape) - 2, n, m, 1))], -2)
    return [dL + dU, None, None]


def linalg_lu_jvp(A_t, P, L, U, pivot):
    """dL, dU: with X = L^{-1} P^T dA U^{-1} (A's square part), dL = L tril(X, -1),
    dU = triu(X) U; a wide A's last columns dU2 = L^{-1} (P^T dA2 - dL U2), a tall A's last
    rows dL2 = (P^T dA2 - L2 dU) U^{-1}. P has no tangent."""
    m, n = L.shape[-2], U.shape[-1]
    last = len(L.shape) - 1
    dA = matmul(mT(P), A_t)
    if m < n:
        U, U2 = slice(U, last, 0, m, 1), slice(U, last, m, n, 1)
        dA, dA2 = slice(dA, last, 0, m, 1), slice(dA, last, m, n, 1)
    if m > n:
        L, L2 = slice(L, last - 1, 0, n, 1), slice(L, last - 1, n, m, 1)
        dA, dA2 = slice(dA, last - 1, 0, n, 1), slice(dA, last - 1, n, m, 1)
    X = _triangular(U, _triangular(L, dA, False, unitriangular=True), True, left=False)
    dL, dU = matmul(L, tril(X, -1)), matmul(triu(X, 0), U)
    if m < n:
        dU = cat([dU, _triangular(L, dA2 - matmul(dL, U2), False, unitriangular=True)], -1)
    if m > n:
        dL = cat([dL, _triangular(U, dA2 - matmul(L2, dU), True, left=False)], -2)
    return [None, dL, dU]


def linalg_lu_solve_LU(grad, LU, pivots, result, left, adjoint):
    """torch's linalg_lu_solve_LU, with op(A) X = B or X op(A) = B for A = P L U: where op
    takes the system to A X' = B' (left != adjoint, X' = X or X^H), gR = -U^{-H} gX' X'^H,
    gU = triu(gR), gL = tril(L^{-H} gR U^H, -1); else gR = -P^T X' gX'^H P L^{-H},
    gL = tril(gR, -1), gU = triu(L^H gR U^{-H})."""
    P, L, U = _lu_parts(LU, pivots)
    X, gX = (result, grad) if left else (mH(result), mH(grad))
    if left != adjoint:
        gR = _triangular(mH(U), -matmul(gX, mH(X)), False)
        gL = _triangular(mH(L), matmul(gR, mH(U)), True, unitriangular=True)
        return tril(gL, -1) + triu(gR, 0)
    gR = -matmul(matmul(mT(P), matmul(X, mH(gX))), P)
    gR = _triangular(mH(L), gR, True, left=False, unitriangular=True)
    gU = _triangular(mH(U), matmul(mH(L), gR), False, left=False)
    return tril(gR, -1) + triu(gU, 0)


def linalg_lu_solve_jvp(LU_t, B_t, LU, pivots, result, left, adjoint):
    """dX = lu_solve(dB - op(dA) X) (left) or lu_solve(dB - X op(dA)), where
    dA = P (dL U + L dU) for dL, dU the tangent's strict lower and upper triangles."""
    rhs = 0 * result if _no_tangent(B_t) else B_t
    if not _no_tangent(LU_t):
        P, L, U = _lu_parts(LU, pivots)
        dA = matmul(P, matmul(tril(LU_t, -1), U) + matmul(L, triu(LU_t, 0)))
        dA = mH(dA) if adjoint else dA
        rhs = rhs - (matmul(dA, result) if left else matmul(result, dA))
    return table.LINALG_LU_SOLVE(LU, pivots, rhs, left, adjoint)


def geqrf_backward(grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def _below(x, i):
    """Column i of x below the diagonal (zeros on and above it), as a column (..., m, 1)."""
    m = x.shape[-2]
    return unsqueeze(select(x, len(x.shape) - 1, i) * constant(np.arange(m) > i, x), -1)


def _reflector(input, tau, i):
    """v_i = (0, ..., 0, 1, input[i+1:, i]) as a column (..., m, 1), and tau_i as (..., 1, 1)."""
    e_i = np.eye(input.shape[-2], 1, -i, dtype=np.dtype(_array(detach(input)).dtype))
    t = select(tau, len(tau.shape) - 1, i)
    return _below(input, i) + constant(e_i, input), unsqueeze(unsqueeze(t, -1), -1)


def _reflected(E, v, t):
    """H E = E - tau v (v^H E)."""
    return E - t * matmul(v, matmul(mH(v), E))


def _reflector_chain_backward(grad, input, tau, order, start, result):
    """result = H_{o_0} H_{o_1} ... H_{o_{k-1}} start (o: `order`), H_i = I - tau_i v_i v_i^H:
    walking down the chain with g (result's gradient, then each partial product's: H_i^H g),
    H_i gives tau_i's -sum(v^H g o conj(v^H E)) and v_i's -(conj(tau) g E^H v + tau E g^H v)
    (conjugate Wirtinger, as torch's), E the product below it, kept below the diagonal; what
    reaches the bottom is start's gradient."""
    m = input.shape[-2]
    Es = [start]  # Es[j]: the product of the last k - j reflectors with start
    for i in reversed(order[1:]):
        Es.insert(0, _reflected(Es[0], *_reflector(input, tau, i)))
    Es.insert(0, result)
    g, g_columns, g_taus = grad, {}, {}
    for j, i in enumerate(order):
        v, t = _reflector(input, tau, i)
        w, u = matmul(mH(v), Es[j + 1]), matmul(mH(v), g)  # v^H E, v^H g: (..., 1, n)
        g_taus[i] = -sum(u * conj(w), (-2, -1))
        g_v = -(conj(t) * matmul(g, mH(w)) + t * matmul(Es[j + 1], mH(u)))
        g_columns[i] = g_v * constant((np.arange(m) > i)[:, None], input)
        g = _reflected(g, v, conj(t))
    k, n = len(order), input.shape[-1]
    columns = [g_columns[i] for i in range(k)]
    if n > k:
        columns.append(zeros_like(slice(input, len(input.shape) - 1, k, n, 1)))
    return cat(columns, -1), stack([g_taus[i] for i in range(k)], -1), g


def householder_product_backward(grad, input, tau, result):
    """Q = H_0 ... H_{k-1} I[:, :n]: the chain's gradients for the reflectors and tau."""
    m, n = input.shape[-2:]
    identity = zeros_like(input) + constant(np.eye(m, n, dtype=bool), input)
    return list(_reflector_chain_backward(grad, input, tau, range(tau.shape[-1]), identity,
                                          result)[:2])


def ormqr_backward(grad, self, input2, input3, left, transpose, result):
    """op(Q) C (left) or C op(Q), Q = H_0 ... H_{k-1}: a chain of reflectors applied to C
    (Q^H's chain in the other order, with conj(tau); C op(Q) as (op(Q)^H C^H)^H); C's gradient
    is what reaches the chain's bottom."""
    order = range(input2.shape[-1])
    adjoint = left == transpose  # Q^H's chain: H_{k-1}^H first, H_i^H = I - conj(tau_i) v v^H
    tau = conj(input2) if adjoint else input2
    order = order[::-1] if adjoint else order
    if left:
        g_self, g_tau, g_other = _reflector_chain_backward(grad, self, tau, order, input3,
                                                           result)
    else:
        g_self, g_tau, g_other = _reflector_chain_backward(mH(grad), self, tau, order,
                                                           mH(input3), mH(result))
        g_other = mH(g_other)
    return [g_self, conj(g_tau) if adjoint else g_tau, g_other]


def householder_product_jvp(input_t, tau_t, input, tau):
    """dE_i = dH_i E_{i+1} + H_i dE_{i+1}, dH_i = -(dtau v v^H + tau (dv v^H + v dv^H))."""
    m, n = input.shape[-2:]
    E = zeros_like(input) + constant(np.eye(m, n, dtype=bool), input)
    dE = 0 * E
    for i in reversed(range(tau.shape[-1])):
        v, t = _reflector(input, tau, i)
        vE = matmul(mH(v), E)
        dE = _reflected(dE, v, t)
        if not _no_tangent(input_t):
            dv = _below(input_t, i)
            dE = dE - t * (matmul(dv, vE) + matmul(v, matmul(mH(dv), E)))
        if not _no_tangent(tau_t):
            dt = unsqueeze(unsqueeze(select(tau_t, len(tau_t.shape) - 1, i), -1), -1)
            dE = dE - dt * matmul(v, vE)
        E = _reflected(E, v, t)
    return dE


def trace(x):
    return sum(diagonal(x, 0, -2, -1), -1)


def cholesky_backward(grad, upper, L):
    """gA = L^{-T} Phi(tril(L^T gL)) L^{-1}, Phi symmetrising with the diagonal halved
    (Murray 2016), as torch's."""
    if upper:
        L, grad = mT(L), mT(grad)
    P = tril(matmul(mT(L), grad), 0)
    phi = 0.5 * (P + mT(tril(P, -1)))
    left = solve(mT(L), phi)
    return mT(solve(mT(L), mT(left)))  # left L^{-1}


def cholesky_jvp(A_t, L, upper):
    """dL = L Phi(L^{-1} dA L^{-T}), Phi the lower triangle with the diagonal halved."""
    if upper:
        L = mT(L)
    L_inverse = solve(L, _eye_like(L))
    X = matmul(matmul(L_inverse, A_t), mT(L_inverse))
    dL = matmul(L, tril(X, -1) + 0.5 * X * _eye_like(X))
    return mT(dL) if upper else dL


def _qr_square_backward(gQ, gR, Q, R):
    """m >= n: gA = (gQ + Q copyltu(M)) R^{-T}, M = gR R^T - Q^T gQ (copyltu(M): its upper
    triangle mirrored, the diagonal kept)."""
    M = matmul(gR, mT(R)) - matmul(mT(Q), gQ)
    b = gQ + matmul(Q, triu(M, 0) + mT(triu(M, 1)))
    return mT(solve(R, mT(b)))


def linalg_qr_backward(grads, Q, R, mode):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gQ, gR = grads
    if m >= n:
        return _qr_square_backward(gQ, gR, Q, R)
    # wide: A = [X Y] with X = Q R1 square, Y = Q R2; Y's gradient reaches Q through R2
    R1, R2 = slice(R, len(R.shape) - 1, 0, m, 1), slice(R, len(R.shape) - 1, m, n, 1)
    gR1, gR2 = slice(gR, len(gR.shape) - 1, 0, m, 1), slice(gR, len(gR.shape) - 1, m, n, 1)
    Y = matmul(Q, R2)
    gX = _qr_square_backward(gQ + matmul(Y, mT(gR2)), gR1, Q, R1)
    return cat([gX, matmul(Q, gR2)], -1)


def linalg_qr_jvp(A_t, Q, R, mode):
    """dA = dQ R + Q dR with Q^T dQ skew and dR R^{-1} upper triangular: C = Q^T dA R^{-1},
    Q^T dQ = tril(C, -1) - tril(C, -1)^T; a wide A's last columns follow from dQ."""
    m, n = Q.shape[-2], R.shape[-1]
    if m < n:
        R1, R2 = slice(R, len(R.shape) - 1, 0, m, 1), slice(R, len(R.shape) - 1, m, n, 1)
        dX = slice(A_t, len(A_t.shape) - 1, 0, m, 1)
        dY = slice(A_t, len(A_t.shape) - 1, m, n, 1)
        dQ, dR1 = linalg_qr_jvp(dX, Q, R1, mode)
        return [dQ, cat([dR1, matmul(mT(Q), dY - matmul(dQ, R2))], -1)]
    dA_Rinv = mT(solve(mT(R), mT(A_t)))  # dA R^{-1}
    C = matmul(mT(Q), dA_Rinv)
    omega = tril(C, -1) - mT(tril(C, -1))
    dR = matmul(C - omega, R)
    return [dA_Rinv - matmul(Q, C - omega), dR]


def linalg_eigh_backward(grads, eigenvalues, eigenvectors):
    """gA = V (diag(gL) + skew(V^T gV) / E) V^T, E_ij = L_j - L_i: repeated eigenvalues give
    inf / nan when the eigenvectors get a gradient, as torch's."""
    gL, gV = grads
    V = eigenvectors
    if gV is None:
        return matmul(V * unsqueeze(gL, -2), mT(V))
    VhgV = matmul(mT(V), gV)
    VhgV = 0.5 * (VhgV - mT(VhgV))
    E = unsqueeze(eigenvalues, -2) - unsqueeze(eigenvalues, -1) + _eye_like(VhgV)
    gA = VhgV / E
    if gL is not None:
        gA = gA + _diag_embed(gL)
    return matmul(V, matmul(gA, mT(V)))


def linalg_eigh_jvp(A_t, eigenvalues, eigenvectors):
    """dL = diag(V^T dA V); dV = V (V^T dA V / E), zero on the diagonal."""
    V = eigenvectors
    tmp = matmul(mT(V), matmul(A_t, V))
    E = unsqueeze(eigenvalues, -2) - unsqueeze(eigenvalues, -1)
    off = 1 - _eye_like(tmp)
    return [diagonal(tmp, 0, -2, -1), matmul(V, off * tmp / (E + _eye_like(tmp)))]


def linalg_eig_backward(grads, eigenvalues, eigenvectors):
    """torch's linalg_eig_backward, for A V = V diag(L) with V's columns of norm 1:
    gA = V^{-H} (diag(gL) + P / conj(E)) V^H, E_ij = L_j - L_i, P = V^H gV less what only
    changes the columns' norms. Each column's phase is arbitrary: a loss that depends on it
    (Im diag(V^H gV) not near zero) is torch's error."""
    gL, gV = grads
    V, Vh = eigenvectors, mH(eigenvectors)
    gA = zeros_like(V) if gL is None else _diag_embed(gL)
    if gV is not None:
        VhgV = matmul(Vh, gV)
        diag = diagonal(VhgV, 0, -2, -1)
        if not np.allclose(np.imag(_array(detach(diag))), 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up "
                "to multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined.")
        VhgV = VhgV - matmul(Vh, V * unsqueeze(real(diag), -2))
        L = conj(eigenvalues)
        off = VhgV / (unsqueeze(L, -2) - unsqueeze(L, -1) + _eye_like(VhgV))
        gA = gA + off - _diag_embed(diagonal(off, 0, -2, -1))
    return solve(Vh, matmul(gA, Vh))


def linalg_eig_jvp(self_t, eigenvalues, eigenvectors):
    """dL = diag(V^{-1} dA V); dV = V (V^{-1} dA V / E, zero on the diagonal), less its part
    along V's columns that would change their norms."""
    V = eigenvectors
    dP = solve(V, matmul(self_t, V))
    E = unsqueeze(eigenvalues, -2) - unsqueeze(eigenvalues, -1) + _eye_like(dP)
    C = dP / E
    dV = matmul(V, C - _diag_embed(diagonal(C, 0, -2, -1)))
    dV = dV - V * unsqueeze(real(diagonal(matmul(mH(V), dV), 0, -2, -1)), -2)
    return [diagonal(dP, 0, -2, -1), dV]


def _first(x, dim, k):
    return x if x is None or x.shape[dim] == k else slice(x, dim % len(x.shape), 0, k, 1)


def linalg_svd_backward(grads, U, S, Vh, full_matrices):
    """torch's svd_backward (distinct singular values; repeated ones give inf / nan when U or
    Vh get a gradient): with full_matrices, the first k columns of U and rows of Vh."""
    gU, gS, gVh = grads
    k = S.shape[-1]
    if full_matrices:
        U, gU, Vh, gVh = (_first(U, -1, k), _first(gU, -1, k), _first(Vh, -2, k),
                          _first(gVh, -2, k))
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:  # svdvals: U diag(gS) Vh
        return (matmul(U, unsqueeze(gS, -1) * Vh) if m >= n
                else matmul(U * unsqueeze(gS, -2), Vh))
    UhgU = None if gU is None else matmul(mT(U), gU)
    VhgV = None if gVh is None else matmul(Vh, mT(gVh))
    UhgU = None if UhgU is None else UhgU - mT(UhgU)
    VhgV = None if VhgV is None else VhgV - mT(VhgV)
    S2 = S * S
    E = unsqueeze(S2, -2) - unsqueeze(S2, -1) + _eye_like(matmul(unsqueeze(S, -1),
                                                                  unsqueeze(S, -2)))
    if gU is not None and gVh is not None:
        inner = (UhgU * unsqueeze(S, -2) + unsqueeze(S, -1) * VhgV) / E
    elif gU is None:
        inner = unsqueeze(S, -1) * (VhgV / E)
    else:
        inner = (UhgU / E) * unsqueeze(S, -2)
    if gS is not None:
        inner = inner + _diag_embed(gS)
    if m > n and gU is not None:
        gUSinv = gU / unsqueeze(S, -2)
        gA = matmul(U, inner) + gUSinv - matmul(U, matmul(mT(U), gUSinv))
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        SinvgVh = gVh / unsqueeze(S, -1)
        gA = matmul(inner, Vh) + SinvgVh - matmul(matmul(SinvgVh, mT(Vh)), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(inner, Vh)) if m >= n else matmul(matmul(U, inner), Vh)


def linalg_svd_jvp(A_t, U, S, Vh, full_matrices):
    """dP = U^T dA V: dS = diag(dP); dU = U (F o (dP S + S dP^T)) (+ the part of dA V S^-1
    outside U's span when tall), dV likewise, F_ij = 1 / (s_j^2 - s_i^2)."""
    m, n = U.shape[-2], Vh.shape[-1]
    if full_matrices and m != n:
        raise NotImplementedError("linalg_svd_jvp: full_matrices=True is not supported for "
                                  "rectangular matrices (as torch); use full_matrices=False")
    V = mT(Vh)
    dP = matmul(mT(U), matmul(A_t, V))
    dS = diagonal(dP, 0, -2, -1)
    S_row, S_col = unsqueeze(S, -2), unsqueeze(S, -1)
    eye = _eye_like(dP)
    F = (1 - eye) / (S_row * S_row - S_col * S_col + eye)
    dU = matmul(U, F * (dP * S_row + S_col * mT(dP)))
    dV = matmul(V, F * (S_col * dP + mT(dP) * S_row))
    if m > n:
        dU = dU + matmul(matmul(A_t, V) - matmul(U, dP), _diag_embed(1 / S))
    if m < n:
        dV = dV + matmul(matmul(mT(A_t), U) - matmul(V, mT(dP)), _diag_embed(1 / S))
    return [dU, dS, mT(dV)]


def _triangle(x, upper, unitriangular):
    """The triangle a triangular solve reads (its diagonal too, unless unitriangular)."""
    return triu(x, int(unitriangular)) if upper else tril(x, -int(unitriangular))


def solve_triangular(A, B, upper, left=True, unitriangular=False):
    return table.LINALG_SOLVE_TRIANGULAR(A, B, upper, left, unitriangular)


def linalg_solve_triangular_backward(grad, self, result, upper, left, unitriangular):
    """gB = A^{-H} gX (left) or gX A^{-H}; gA = -gB X^H (or -X^H gB) on A's triangle."""
    gB = solve_triangular(mH(self), grad, not upper, left, unitriangular)
    gA = -matmul(gB, mH(result)) if left else -matmul(mH(result), gB)
    return [_triangle(gA, upper, unitriangular), gB]


def linalg_solve_triangular_jvp(self_t, B_t, self, result, upper, left, unitriangular):
    """dX = A^{-1} (dB - dA X) (left) or (dB - X dA) A^{-1}, dA on A's triangle."""
    dA = _triangle(self_t, upper, unitriangular)
    dB = B_t - (matmul(dA, result) if left else matmul(result, dA))
    return solve_triangular(self, dB, upper, left, unitriangular)


def triangular_solve_backward(grads, self, A, solution, upper, transpose, unitriangular):
    """op(A) X = b: gb = op(A)^{-T} gX; gA = -gb X^T (or -X gb^T when transposed) on A's
    triangle, plus the copy of A's gradient (all of it, as torch's)."""
    gX, gM = grads
    gb = gA = None
    if gX is not None:
        gb = solve_triangular(A if transpose else mT(A), gX, upper == transpose,
                              unitriangular=unitriangular)
        gA = _triangle(-matmul(solution, mT(gb)) if transpose else -matmul(gb, mT(solution)),
                       upper, unitriangular)
    if gA is None:
        gA, gb = zeros_like(A), zeros_like(self)
    return [gb, gA if gM is None else gA + gM]


def triangular_solve_jvp(self_t, A_t, A, solution, upper, transpose, unitriangular):
    dA = _triangle(A_t, upper, unitriangular)
    op_A, op_dA = (mT(A), mT(dA)) if transpose else (A, dA)
    return [solve_triangular(op_A, self_t - matmul(op_dA, solution), upper != transpose,
                             unitriangular=unitriangular), A_t + 0]


def cholesky_solve(B, L, upper):
    return table.CHOLESKY_SOLVE(B, L, upper)


def cholesky_solve_backward(grad, self, input2, result, upper):
    """A = L L^T (or U^T U): gB = A^{-1} gX; gL = -(C + C^T) L (or -U (C + C^T)), C = gB X^T
    (all of L, not its triangle: torch's formula)."""
    gB = cholesky_solve(grad, input2, upper)
    C = matmul(gB, mT(result))
    C = C + mT(C)
    return [gB, -matmul(input2, C) if upper else -matmul(C, input2)]


def cholesky_solve_jvp(self_t, input2_t, input2, result, upper):
    """dX = A^{-1} (dB - dA X), dA = dL L^T + L dL^T (dU^T U + U^T dU)."""
    dK = matmul(mT(input2_t), input2) if upper else matmul(input2_t, mT(input2))
    return cholesky_solve(self_t - matmul(dK + mT(dK), result), input2, upper)


def cholesky_inverse_backward(grad, self, upper, result):
    """gL = -(A^{-1} (G + G^T) A^{-1}) L (or -U (...)), A^{-1} the result."""
    C = matmul(result, matmul(grad + mT(grad), result))
    return -matmul(self, C) if upper else -matmul(C, self)


def cholesky_inverse_jvp(self_t, self, upper, result):
    """d(A^{-1}) = -A^{-1} dA A^{-1}, dA = dL L^T + L dL^T (dU^T U + U^T dU)."""
    dK = matmul(mT(self_t), self) if upper else matmul(self_t, mT(self))
    return -matmul(result, matmul(dK + mT(dK), result))


def pinv_backward(grad, result, self):
    """torch's pinv_backward (A of constant rank near the point), in the smaller size."""
    m, n = self.shape[-2], self.shape[-1]
    pinvA, A = result, self
    pinvAh, gradh = mT(pinvA), mT(grad)
    if m <= n:
        K = matmul(gradh, pinvA)
        KpinvAh = matmul(K, pinvAh)
        return (-mT(matmul(pinvA, K)) + KpinvAh - matmul(matmul(A, pinvA), KpinvAh)
                + matmul(matmul(pinvAh, pinvA), gradh - matmul(K, A)))
    K = matmul(pinvA, gradh)
    pinvAhK = matmul(pinvAh, K)
    return (-mT(matmul(K, pinvA)) + matmul(matmul(gradh - matmul(A, K), pinvA), pinvAh)
            + pinvAhK - matmul(matmul(pinvAhK, pinvA), A))


def pinv_jvp(self_t, self, result):
    """torch's pinv_jvp, in the smaller size."""
    m, n = self.shape[-2], self.shape[-1]
    A, pinvA, dA = self, result, self_t
    dAh, pinvAh = mT(dA), mT(pinvA)
    if m <= n:
        K = matmul(pinvAh, dAh)
        return (matmul(pinvA, K - mT(K) - matmul(K, matmul(A, pinvA)))
                + matmul(dAh - matmul(pinvA, matmul(A, dAh)), matmul(pinvAh, pinvA)))
    K = matmul(pinvA, dA)
    Kh = mT(K)
    return (matmul(Kh - K - matmul(matmul(pinvA, A), Kh), pinvA)
            + matmul(matmul(pinvA, pinvAh), dAh - matmul(matmul(dAh, A), pinvA)))


def linalg_lstsq_backward(grads, self, b, solution):
    """X = A^+ B: gA through pinv's backward with g(A^+) = gX B^T, gB = A^{+T} gX; the squared
    residuals r = |A X - B|^2 (X optimal) add 2 (A X - B) X^T and -2 (A X - B)."""
    gX, gR = grads[0], grads[1]
    vector = _is_vector_rhs(self, b)
    B = unsqueeze(b, -1) if vector else b
    X = unsqueeze(solution, -1) if vector else solution
    pinvA = table.LINALG_PINV(self, 0.0, None, False)
    gA = gB = None
    if gX is not None:
        g = unsqueeze(gX, -1) if vector else gX
        gA = pinv_backward(matmul(g, mT(B)), pinvA, self)
        gB = matmul(mT(pinvA), g)
    if gR is not None and gR.shape[-1:] != (0,):
        residual = matmul(self, X) - B
        r = unsqueeze(gR, -1) if vector else unsqueeze(gR, -2)
        gA = (0 if gA is None else gA) + 2 * matmul(residual * r, mT(X))
        gB = (0 if gB is None else gB) - 2 * residual * r
    if gA is None:
        return [zeros_like(self), zeros_like(b)]
    return [gA, squeeze(gB, -1) if vector else gB]


def linalg_lstsq_jvp(self_t, b_t, self, b, solution, residuals):
    """dX from X = A^+ B: pinv's jvp applied to B, plus A^+ dB; where the squared residuals
    are computed, 2 sum((A X - B) (dA X + A dX - dB)) over each column."""
    vector = _is_vector_rhs(self, b)
    B = unsqueeze(b, -1) if vector else b
    dB = unsqueeze(b_t, -1) if vector else b_t
    pinvA = table.LINALG_PINV(self, 0.0, None, False)
    dX = matmul(pinv_jvp(self_t, self, pinvA), B) + matmul(pinvA, dB)
    dR = zeros_like(residuals)
    if residuals.shape[-1:] != (0,):
        X = unsqueeze(solution, -1) if vector else solution
        residual = matmul(self, X) - B
        dR = 2 * sum(residual * (matmul(self_t, X) + matmul(self, dX) - dB), -2)
        dR = squeeze(dR, -1) if vector else dR
    return [squeeze(dX, -1) if vector else dX, dR, None, None]


def _matrix_exp_differential(A, E, adjoint):
    """The derivative of e^A in the direction E (its adjoint: in A^H), the top right block of
    the exponential of [[A, E], [0, A]] (Mathias 1996), as torch's."""
    A = mH(A) if adjoint else A
    n = A.shape[-1]
    last = len(A.shape) - 1
    top = cat([A, E], -1)
    bottom = cat([zeros_like(A), A], -1)
    block = table.LINALG_MATRIX_EXP(cat([top, bottom], -2))
    return slice(slice(block, last - 1, 0, n, 1), last, n, 2 * n, 1)


def linalg_matrix_exp_backward(grad, self):
    return _matrix_exp_differential(self, grad, True)


def linalg_matrix_exp_jvp(self_t, self):
    return _matrix_exp_differential(self, self_t, False)


def sgn_backward(grad, self, result):
    """z / |z|: (grad - sgn * Re(grad * conj(sgn))) / |z|, 0 where z is 0; of a real x,
    zeros (torch's: no graph, as sign's)."""
    if not is_complex(self):
        return zeros_like(grad)
    magnitude = abs(self)
    at_zero = magnitude == 0
    return where(at_zero, 0, (grad - result * real(grad * conj(result)))
                 / where(at_zero, 1, magnitude))


def angle_backward(grad, self):
    """arg z: grad * i z / |z|^2 (0 at z = 0); of a real x, zeros (flat but at 0)."""
    if not is_complex(self):
        return zeros_like(grad)
    magnitude2 = real(self * conj(self))
    at_zero = magnitude2 == 0
    return where(at_zero, 0, grad * self * 1j / where(at_zero, 1, magnitude2))


# ---- the LSTM layer of torch's CPU float32 path (oneDNN's mkldnn_rnn_layer) ----
def lstm_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes, mode,
               hidden_size, num_layers, has_biases, bidirectional, batch_first, train):
    """The op's forward (arrays): the output (T, B, H), the last h and c, and the workspace
    the first-order backward reads (each step's activated gates, then its cell state)."""
    bias = weight2 + weight3 if has_biases else 0  # (without biases, torch passes zeros)
    gates, cells, outputs = lstm_layer_steps(input, weight0, weight1, bias, hx_, cx_, reverse)
    last = 0 if reverse else -1
    workspace = np.empty(len(gates) * (gates[0].size + cells[0].size), input.dtype)
    split = len(gates) * gates[0].size
    np.stack(gates, out=workspace[:split].reshape((len(gates),) + gates[0].shape))
    np.stack(cells, out=workspace[split:].reshape((len(cells),) + cells[0].shape))
    return np.stack(outputs), outputs[last], cells[last], workspace


def lstm_layer_steps(input, weight_ih, weight_hh, bias, hx, cx, reverse):
    """One LSTM layer over a (T, B, in) sequence, reversed or not: each step's gates after
    their activations (i, f, g, o side by side), its cell state and its output, indexed by
    time. The op's forward on arrays; on Tensors, the backward's recomputation (second order:
    gradients of the gradients through the gates)."""
    steps, batch, hidden = input.shape[0], hx.shape[0], hx.shape[-1]
    projected = reshape(  # every step's input projection at once: one 2-d product
        mm(reshape(input, (steps * batch, input.shape[-1])), t(weight_ih)) + bias,
        (steps, batch, 4 * hidden))
    gates, cells, outputs = [None] * steps, [None] * steps, [None] * steps
    h, c = hx, cx
    for step in (reversed(range(steps)) if reverse else range(steps)):
        z = addmm(projected[step], h, t(weight_hh))
        activated = cat([sigmoid(z[:, :2 * hidden]), tanh(z[:, 2 * hidden:3 * hidden]),
                         sigmoid(z[:, 3 * hidden:])], 1)
        c = activated[:, hidden:2 * hidden] * c + (
            activated[:, :hidden] * activated[:, 2 * hidden:3 * hidden])
        h = activated[:, 3 * hidden:] * tanh(c)
        gates[step], cells[step], outputs[step] = activated, c, h
    return gates, cells, outputs


def lstm_layer_backward(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, result0,
                        result3, reverse, has_biases):
    """Every input's gradient at once (torch's mkldnn_rnn_layer_backward): input, the four
    weights (both biases get the same), hx_ and cx_. First order reads the workspace;
    gradients of gradients recompute the steps from the inputs, as torch's differentiable
    backward does, so that they depend on the weights through the gates."""
    grad_output, grad_hy, grad_cy = grads[:3]
    steps, batch, hidden = input.shape[0], hx_.shape[0], hx_.shape[-1]
    if isinstance(input, np.ndarray):
        split = steps * batch * 4 * hidden
        gates = reshape(result3[:split], (steps, batch, 4 * hidden))
        cells = reshape(result3[split:], (steps, batch, hidden))
        outputs = result0
    else:
        bias = weight2 + weight3 if has_biases else 0
        gates, cells, outputs = lstm_layer_steps(input, weight0, weight1, bias, hx_, cx_,
                                                 reverse)
    before = 1 if reverse else -1  # the step processed before a step

    def state_before(states, initial, step):
        return states[step + before] if 0 <= step + before < steps else initial
    dh, dc = grad_hy, grad_cy
    d_gates = [None] * steps
    for step in (range(steps) if reverse else reversed(range(steps))):
        activated = gates[step]
        i, f = activated[:, :hidden], activated[:, hidden:2 * hidden]
        g, o = activated[:, 2 * hidden:3 * hidden], activated[:, 3 * hidden:]
        tanh_c = tanh(cells[step])
        dh = grad_output[step] + dh
        dc = dc + dh * o * (1 - tanh_c * tanh_c)
        d = cat([dc * g * i * (1 - i), dc * state_before(cells, cx_, step) * f * (1 - f),
                 dc * i * (1 - g * g), dh * tanh_c * o * (1 - o)], 1)
        d_gates[step] = d
        dh, dc = mm(d, weight1), dc * f
    d_gates = reshape(stack(d_gates, 0), (steps * batch, 4 * hidden))
    h_before = stack([state_before(outputs, hx_, step) for step in range(steps)], 0)
    return [reshape(mm(d_gates, weight0), input.shape),
            mm(t(d_gates), reshape(input, (steps * batch, input.shape[-1]))),
            mm(t(d_gates), reshape(h_before, (steps * batch, hidden))),
            sum(d_gates, 0), sum(d_gates, 0), dh, dc]  # (two biases: two arrays)


# ---- selecting and writing by index, windows (the census's Tensor ops) ----
def _array_of(x):
    return x._data if hasattr(x, "_data") else x


def masked_select_backward(grad, self, mask):
    """The selected elements' gradients put back where the mask (broadcast with self) is
    true, summed to self's shape."""
    mask = _array_of(mask)
    shape = np.broadcast_shapes(tuple(self.shape), mask.shape)
    where_true = np.nonzero(np.broadcast_to(mask, shape))
    return sum_to(index_put(zeros(shape, grad), where_true, grad), tuple(self.shape))


def masked_scatter_backward(grad, mask, source_sizes):
    """source's gradient: grad where the mask is true, in order, then zeros for the elements
    of source the mask did not reach, in source's shape."""
    where_true = np.nonzero(np.broadcast_to(_array_of(mask), tuple(grad.shape)))
    selected = index(grad, where_true)
    missing = int(np.prod(source_sizes)) - numel(selected)
    if missing:
        selected = cat([selected, zeros((missing,), grad)], 0)
    return reshape(selected, source_sizes)


select_scatter = row_function("SELECT_SCATTER")  # (self, src, dim, index)
slice_scatter = row_function("SLICE_SCATTER")  # (self, src, dim, start, end, step)
diagonal_scatter = row_function("DIAGONAL_SCATTER")  # (self, src, offset, dim1, dim2)


def index_fill(x, dim, index, value):
    return table.INDEX_FILL(x, index, dim, value)


def put(x, index, source, accumulate):
    return table.PUT(x, index, source, accumulate)


def take(x, index):
    return table.TAKE(x, index)


def rot90(x, k, dims):
    return table.ROT90(x, k, dims)


def linalg_cross(x, y, dim):
    return table.LINALG_CROSS(x, y, dim)


def unfold(x, dimension, size, step):
    return table.UNFOLD(x, dimension, size, step)


def unfold_backward(grad, input_sizes, dim, size, step):
    return table.UNFOLD_BACKWARD(grad, input_sizes, dim, size, step)


def logit_backward(grad, self, eps):
    """grad / (x (1 - x)); outside [eps, 1 - eps] (clamped) zero, outside [0, 1] NaN."""
    out = grad / (self * (1 - self))
    if eps is None:
        return where((self < 0) | (self > 1), float("nan"), out)
    return where((self < eps) | (self > 1 - eps), 0 * grad, out)


def nansum_backward(grad, self, dim, keepdim):
    dim = tuple(range(len(self.shape))) if dim is None else dim
    return where(isnan(self), 0 * grad, sum_backward(grad, tuple(self.shape), dim, keepdim))


def p_norm_backward(grad, diff, result, p):
    """The gradient of the p-norms of diff's rows (its last dim) with respect to diff."""
    return norm_backward(grad, diff, result, p, (len(diff.shape) - 1,), False)


def dist_backward(grad, self, other, p, result):
    diff = self - other
    shape = tuple(diff.shape)
    return reshape(p_norm_backward(grad, reshape(diff, (-1,)), result, p), shape)


def cdist_backward(grad, x1, x2, p, result, wrt):
    """The pairwise differences' gradients summed over the other set's points."""
    diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    g = p_norm_backward(grad, diff, result, p)
    return sum_to(sum(g, -2), tuple(x1.shape)) if wrt == "x1" else \
        sum_to(-sum(g, -3), tuple(x2.shape))


def _pdist_differences(x):
    i, j = (constant(k, x) for k in kernels.pdist_pairs(x.shape[0]))
    return i, j, index_select(x, 0, i) - index_select(x, 0, j)


def pdist_backward(grad, self, p, result):
    """Each pair's p-norm gradient, added to its first row and taken from its second."""
    i, j, diff = _pdist_differences(self)
    g = p_norm_backward(grad, diff, result, p)
    return index_add(index_add(zeros_like(self), 0, i, g), 0, j, -g)


def pdist_jvp(self_t, self, p, result):
    _, _, diff = _pdist_differences(self)
    _, _, diff_t = _pdist_differences(self_t)
    return norm_jvp(diff_t, diff, result, p, (1,), False)


def _unsqueezed(x, dims):
    for d in sorted(dims):
        x = unsqueeze(x, d)
    return x


def trilinear_backward(grad, expand_self, other, another, sumdim):
    product = _unsqueezed(grad, sumdim) * _unsqueezed(other[0], other[1]) * _unsqueezed(
        another[0], another[1])
    return sum(product, tuple(expand_self)) if expand_self else product


def cdist_jvp(x1_t, x2_t, x1, x2, p, result):
    diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    diff_t = unsqueeze(x1_t, -2) - unsqueeze(x2_t, -3)
    return norm_jvp(diff_t, diff, result, p, (len(diff.shape) - 1,), False)
