"""Derivative formulas that need local variables, named after torch's (FunctionsManual.cpp).
All are written with gradtool ops on Tensors, so they are themselves differentiable."""
import math

import numpy as np

from .. import tensor as T  # bound late: tensor.py imports the table that imports this module
from . import kernels as K


def where(condition, x, y):
    return T.where(condition, x, y)


def zeros_like(t):
    return T.Tensor._wrap(np.zeros_like(t._data))


def zeros(shape, like):
    return T.Tensor._wrap(np.zeros(shape, dtype=like._data.dtype))


def cat(tensors, dim):
    return T.cat(tensors, dim)


def stack(tensors, dim):
    return T.stack(tensors, dim)


def slice(t, dim, start, end, step):
    return T.call(T.D.SLICE, (t,), (dim, start, end, step))


def index(t, indices):
    return T.call(T.D.INDEX, (t,), (indices,))


def index_put(t, indices, values):
    return T.call(T.D.INDEX_PUT, (t, values), (indices, False))


def scatter_add(t, dim, index, src):
    return T.call(T.D.SCATTER_ADD, (t, index, src), (dim,))


def scale(grad, alpha):
    return grad if alpha == 1 else grad * alpha


def materialize(grads, output_meta, keep_undefined=False):
    """Zeros for the outputs that received no gradient (multi-output ops), or None."""
    grads = list(grads) + [None] * (len(output_meta) - len(grads))
    if keep_undefined:
        return grads
    return [g if g is not None or meta is None else T.Tensor._wrap(np.zeros(*meta))
            for g, meta in zip(grads, output_meta)]


def sum_to(grad, shape):
    """Sum a broadcast gradient back down to `shape`: the one place broadcasting is undone."""
    shape = tuple(shape)
    gshape = grad._data.shape
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape) if lead else grad


def restore_reduced_dims(t, dim, keepdim):
    """Re-insert the reduced dims (size 1) so `t` broadcasts against the input."""
    if keepdim:
        return t
    for d in sorted(dim):
        t = t.unsqueeze(d)
    return t


def sum_backward(grad, sizes, dim, keepdim):
    return restore_reduced_dims(grad, dim, keepdim).expand(sizes)


def mean_backward(grad, sizes, dim, keepdim):
    count = int(np.prod([sizes[d] for d in dim]))
    return sum_backward(grad, sizes, dim, keepdim) / count


def var_backward(grad, self, dim, correction, keepdim):
    # d var / dx = 2 (x - mean) / (N - correction)
    n = int(np.prod([self.shape[d] for d in dim]))
    grad = restore_reduced_dims(grad, dim, keepdim)
    scale = 2.0 / (n - correction) if n != correction else float("inf")  # (nan, as torch)
    return scale * grad * (self - self.mean(dim, keepdim=True))


def std_backward(grad, self, dim, correction, keepdim, result):
    # d std = d var / (2 std); zero where std == 0, as torch
    grad_var = (grad / (2 * result)).masked_fill(result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def prod_backward(grad, self, result, dim, keepdim):
    """d prod / dx_i = product of the others; exact when some x are zero (no 0/0)."""
    if self.dim() == 0:
        return grad  # as torch: no term in self, so no second-order gradient
    if dim is None:
        dim, keepdim = tuple(range(self.dim())), False
    elif isinstance(dim, int):
        dim = (dim,)
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    is_zero = self == 0
    if all(self.shape[d] == 1 for d in dim) and is_zero.any().item():
        return grad  # torch's prod_safe_zeros_backward: a slice of one element, as is
    safe_self = where(is_zero, 1, self)
    zeros_in_slice = is_zero.sum(dim, keepdim=True)
    # where x_i is the only zero, the product of the others is the product of the nonzeros
    if T.grad_mode.state.grad_enabled and (zeros_in_slice > 1).any().item():
        # building a double-backward graph: with several zeros in a slice, the product of
        # the others is 0 but its derivative is not, so form it exactly (as torch does)
        return grad * _prod_of_others(self, dim)
    prod_nonzero = (T.call(T.D.PROD_DIM, (safe_self,), (dim, True)) if is_zero.any().item()
                    else result)
    others = where(is_zero, where(zeros_in_slice == 1, prod_nonzero, 0), result / safe_self)
    return grad * others


def _prod_of_others(self, dim):
    """For each element, the product of the other elements of its slice along `dim`:
    the slice laid out n times with a 1 on the diagonal, then multiplied out. O(n^2)."""
    keep = tuple(d for d in range(self.dim()) if d not in dim)
    perm = keep + tuple(dim)
    moved = self.permute(perm)
    kept_shape = moved.shape[:len(keep)]
    n = int(np.prod(moved.shape[len(keep):]))
    flat = moved.reshape(kept_shape + (n,))
    rows = flat.unsqueeze(-2).expand(kept_shape + (n, n))
    diagonal = T.Tensor._wrap(np.eye(n, dtype=bool))
    others = where(diagonal, 1, rows).prod(-1)
    return others.reshape(moved.shape).permute(tuple(np.argsort(perm)))


def evenly_distribute_backward(grad, self, result):
    mask = self == result
    return where(mask, grad / mask.sum(), 0).expand(self.shape)


def amax_backward(grad, self, result, dim, keepdim):
    grad = restore_reduced_dims(grad, dim, keepdim)
    mask = self == restore_reduced_dims(result, dim, keepdim)
    return grad / mask.sum(dim, keepdim=True) * mask  # (a product: nan reaches all, as torch)


def value_selecting_backward(grad, dim, indices, sizes, keepdim):
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return zeros(sizes, grad).scatter(dim, indices, grad)


def logsumexp_backward(grad, self, result, dim, keepdim):
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    return grad * (self - result).exp()


def norm_backward(grad, self, result, ord, dim, keepdim):
    """torch's norm_backward, with its subgradients: 0 where x = 0 (and where the norm is 0),
    ties of the inf norms share the gradient evenly. ord 0 has none (None, as torch)."""
    if ord == 0:
        return None
    dim = range(self.dim()) if dim is None else dim
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    if ord == 1:
        return self.sign() * grad
    if math.isinf(ord):
        at_max = (self.abs() == result) | self.isnan()
        return self.sign() * (grad / at_max.sum(tuple(dim), True)) * at_max
    # (the masked entries divide by 1, so gradients of gradients stay finite there)
    zero_norm = result == 0
    if ord < 1:
        zero = self == 0
        scaled = self.sign() * where(zero, 0, where(zero, 1, self.abs()) ** (ord - 1))
        return scaled * grad * result ** (1 - ord)
    if ord == 2:
        return where(zero_norm, 0, grad * self / where(zero_norm, 1, result))
    scaled = self.sign() * self.abs() ** (ord - 1) if ord < 2 else self * self.abs() ** (ord - 2)
    return scaled * where(zero_norm, 0, grad / where(zero_norm, 1, result) ** (ord - 1))


def norm_jvp(self_t, self, result, ord, dim, keepdim):
    """J.t: each output reads its slice, so backward's J^T.1 times t, summed (0 for ord 0)."""
    if ord == 0:
        return zeros_like(result)
    dims = tuple(range(self.dim())) if dim is None else tuple(dim)
    return (norm_backward(ones_like(result), self, result, ord, dim, keepdim)
            * self_t).sum(dims, keepdim)


def clamp_backward(grad, self, min, max):
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        mask = (self <= max) if mask is None else mask & (self <= max)
    return grad if mask is None else where(mask, grad, 0)


def tie_split(grad, self, other, loses):
    """maximum/minimum: the full gradient to the winner, half to each at a tie."""
    return where(self == other, grad / 2, grad).masked_fill(loses, 0)


def pow_backward(grad, self, exponent):
    if exponent == 0:
        return zeros_like(self) * grad
    return grad * exponent * self ** (exponent - 1)


def pow_backward_self(grad, self, exponent):
    return where(exponent == 0, 0, grad * exponent * self ** (exponent - 1))


def pow_backward_exponent(grad, self, exponent, result):
    # d/de b^e = b^e log b; defined as 0 where b == 0 and e >= 0 (torch's convention)
    if not isinstance(self, T.Tensor):  # a Python number as the base
        return grad * result * float(np.log(self)) if self != 0 else zeros_like(grad)
    at_zero = (self == 0) & (exponent >= 0)
    return where(at_zero, 0, grad * result * where(at_zero, 1, self).log())


def mm_mat1_backward(grad, mat2, sizes, strides):
    """grad @ mat2^T, computed transposed when the input was column-major (a transposed
    weight), so its gradient comes back in the same layout, as torch's."""
    if K.is_column_major(sizes, strides):
        return mat2.mm(grad.t()).t()
    return grad.mm(mat2.t())


def mm_mat2_backward(grad, mat1, sizes, strides):
    """mat1^T @ grad, computed transposed when the input was column-major (x @ w.t(): w's
    gradient is then contiguous in w's own layout, with no copy), as torch's."""
    if K.is_column_major(sizes, strides):
        return grad.t().mm(mat1).t()
    return mat1.t().mm(grad)


def select_backward(grad, sizes, dim, index):
    return T.call(T.D.SELECT_BACKWARD, (grad,), (sizes, dim, index))


def diagonal_backward(grad, sizes, offset, dim1, dim2):
    return T.call(T.D.DIAGONAL_BACKWARD, (grad,), (sizes, offset, dim1, dim2))


def slice_backward(grad, sizes, dim, start, end, step):
    return T.call(T.D.SLICE_BACKWARD, (grad,), (sizes, dim, start, end, step))


def leaky_relu_backward(grad, self, negative_slope, self_is_result):
    return T.call(T.D.LEAKY_RELU_BACKWARD, (grad, self), (negative_slope, self_is_result))


def threshold_backward(grad, self, threshold):
    return T.call(T.D.THRESHOLD_BACKWARD, (grad, self), (threshold,))


def index_backward(grad, sizes, indices):
    return T.call(T.D.INDEX_BACKWARD, (grad,), (sizes, indices))


def cat_backward(grad, sizes, dim):
    grads, start = [], 0
    for shape in sizes:
        grads.append(slice(grad, dim, start, start + shape[dim], 1))
        start += shape[dim]
    return grads


def ones_like(t):
    return T.Tensor._wrap(np.ones_like(t._data))
# ---- activations ----
def softplus(t, beta=1, threshold=20):
    return T.call(T.D.SOFTPLUS, (t,), (beta, threshold))


def erf_backward(grad, self):
    return grad * (2 / np.sqrt(np.pi)) * (-self * self).exp()


def gelu_backward(grad, self, approximate):
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        t = (k * (self + 0.044715 * self ** 3)).tanh()
        slope = k * (1 + 3 * 0.044715 * self * self)  # d(inner)/dx
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * slope)
    cdf = 0.5 * (1 + (self * (1 / np.sqrt(2))).erf())
    pdf = (-0.5 * self * self).exp() * (1 / np.sqrt(2 * np.pi))
    return grad * (cdf + self * pdf)


def silu_backward(grad, self):
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


def softplus_backward(grad, self, beta, threshold):
    return where(self * beta > threshold, grad, grad * (self * beta).sigmoid())


def elu_backward(grad, alpha, scale, input_scale, self=None, result=None):
    """From the input (EluBackward0) or, in place, from the output (EluBackward1)."""
    # The first derivative takes the exponential side at 0 (x <= 0), the second derivative
    # is 0 there (torch's elu_double_backward masks x < 0): the where() below keeps x = 0
    # out of what the second derivative sees.
    if result is not None:  # exp(x s) alpha scale = result + alpha scale where x <= 0
        negative_part = where(result < 0, result, 0)
        return where(result > 0, grad * scale,
                     grad * input_scale * (negative_part + alpha * scale))
    negative_part = where(self < 0, self, 0)
    negative = grad * (input_scale * alpha * scale) * (negative_part * input_scale).exp()
    return where(self > 0, grad * scale, negative)


# ---- losses (reduction: 0 none, 1 mean, 2 sum) ----
def per_element(grad, reduction, numel):
    """The gradient of each element's loss: grad itself (none), or the reduced loss's grad
    spread over the elements (divided by their number for the mean)."""
    return grad / numel if reduction == 1 else grad


def mse_loss_backward(grad, self, target, reduction):
    diff = self - target
    return 2 * diff * per_element(grad, reduction, diff.numel())


def smooth_l1_loss_backward(grad, self, target, reduction, beta):
    diff = self - target
    slope = diff.sign() if beta == 0 else where(diff.abs() < beta, diff / beta, diff.sign())
    return slope * per_element(grad, reduction, diff.numel())


def huber_loss_backward(grad, self, target, reduction, delta):
    diff = self - target
    slope = where(diff.abs() <= delta, diff, diff.sign() * delta)
    return slope * per_element(grad, reduction, diff.numel())


def _numel(*shapes):
    return int(np.prod(np.broadcast_shapes(*shapes)))


def binary_cross_entropy_backward(grad, self, target, weight, reduction):
    # (x - t) / (x (1 - x)), the denominator kept off 0 as torch (EPSILON = 1e-12)
    g = grad * (self - target) / ((1 - self) * self).clamp(min=1e-12)
    g = g if weight is None else g * weight
    return per_element(g, reduction, _numel(self.shape, target.shape))


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    g = grad * ((-self).log1p() - self.log())
    g = g if weight is None else g * weight
    return per_element(g, reduction, _numel(self.shape, target.shape))


def bce_with_logits_backward(grad, self, target, weight, pos_weight, reduction):
    s = self.sigmoid()
    g = s - target if pos_weight is None else s - target - (pos_weight - 1) * target * (1 - s)
    g = grad * g if weight is None else grad * g * weight
    return per_element(g, reduction, _numel(self.shape, target.shape))


def bce_with_logits_target_backward(grad, self, target, weight, pos_weight, reduction):
    g = -self if pos_weight is None else (
        -self + (pos_weight - 1) * softplus(-self))
    g = grad * g if weight is None else grad * g * weight
    return per_element(g, reduction, _numel(self.shape, target.shape))


def nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """torch's nll_loss_backward, an op of its own (differentiable in self, with derivative
    zero, as torch's)."""
    spec = T.D.NLL_LOSS2D_BACKWARD if self.dim() > 2 else T.D.NLL_LOSS_BACKWARD
    return T.call(spec, (grad, self, target, weight, total_weight), (reduction, ignore_index))


def nll_loss(input, target, weight, reduction, ignore_index):
    spec = T.D.NLL_LOSS2D if input.dim() > 2 else T.D.NLL_LOSS
    return T.call(spec, (input, target, weight), (reduction, ignore_index))[0]


def layer_norm_stats(input, normalized_shape, result1, result2):
    """mean and 1/std over the normalized dims. Building a double-backward graph, they are
    functions of input (so their derivatives are in it): 1/std from the saved one, as
    (var(x) - var(x0) + rstd0^-2)^(-1/2), since eps is not saved (as torch)."""
    if not T.grad_mode.state.grad_enabled:
        return result1, result2
    dims = tuple(range(-len(normalized_shape), 0))
    var = input.var(dims, correction=0, keepdim=True)
    rstd = (var - var.detach() + result2 ** -2) ** -0.5
    return input.mean(dims, keepdim=True), rstd


def layer_norm_backward_input(grad, input, weight, normalized_shape, result1, result2):
    mean, rstd = layer_norm_stats(input, normalized_shape, result1, result2)
    dims = tuple(range(-len(normalized_shape), 0))
    xhat = (input - mean) * rstd
    g = grad if weight is None else grad * weight
    return rstd * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))


def reduce_loss(loss, reduction):
    """Each element's loss reduced as the loss was (the jvp of a loss from its elements')."""
    return loss if reduction == 0 else (loss.mean() if reduction == 1 else loss.sum())


def layer_norm_jvp(input_t, weight_t, bias_t, input, weight, normalized_shape, result1,
                   result2):
    """x_hat's tangent (the projection its backward applies, which is symmetric), then the
    affine part: d(x_hat w + b) = dx_hat w + x_hat dw + db."""
    dims = tuple(range(-len(normalized_shape), 0))
    xhat = (input - result1) * result2
    xhat_t = result2 * (input_t - input_t.mean(dims, keepdim=True)
                        - xhat * (input_t * xhat).mean(dims, keepdim=True))
    out = xhat_t if weight is None else xhat_t * weight + xhat * weight_t
    return out + bias_t  # (0 without a bias)


def layer_norm_backward_weight(grad, input, normalized_shape, result1, result2):
    mean, rstd = layer_norm_stats(input, normalized_shape, result1, result2)
    return sum_to(grad * ((input - mean) * rstd), normalized_shape)


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
    return [(d * self_t).sum(dim, keepdim=keepdim), self_t.mean(dim, keepdim=keepdim)]


def reverse_cumsum(grad, dim):
    return grad.flip(dim).cumsum(dim).flip(dim)


def cumprod_backward(grad, self, dim, result):
    """sum over k >= i of grad_k * result_k / x_i; with a zero in the slice, the products of
    the others are formed directly (O(n^2), as prod's backward does)."""
    if self.numel() <= 1 or self.shape[dim] == 1:  # each output is its input: grad, as torch
        return grad
    if not (self == 0).any().item():
        return reverse_cumsum(grad * result, dim) / self
    n = self.shape[dim]
    moved = self.transpose(dim, -1)
    rows = moved.unsqueeze(-2).expand(tuple(moved.shape[:-1]) + (n, n))  # row i: x, x_i -> 1
    eye = T.Tensor._wrap(np.eye(n, dtype=bool))
    upper = T.Tensor._wrap(np.triu(np.ones((n, n), dtype=bool)))  # k >= i
    partial = where(eye, 1, rows).cumprod(-1)  # [.., i, k]: prod_{j <= k, j != i} x_j
    g = grad.transpose(dim, -1).unsqueeze(-2)
    return where(upper, partial * g, 0).sum(-1).transpose(-1, dim)


def cumprod_jvp(self_t, self, dim, result):
    """sum over i <= k of t_i * prod_{j <= k, j != i} x_j: result * cumsum(t / x) without a
    zero in x, else the products of the others formed directly (as cumprod_backward)."""
    if not (self == 0).any().item():
        return result * (self_t / self).cumsum(dim)
    n = self.shape[dim]
    moved = self.transpose(dim, -1)
    rows = moved.unsqueeze(-2).expand(tuple(moved.shape[:-1]) + (n, n))  # row i: x, x_i -> 1
    eye = T.Tensor._wrap(np.eye(n, dtype=bool))
    upper = T.Tensor._wrap(np.triu(np.ones((n, n), dtype=bool)))  # k >= i
    partial = where(eye, 1, rows).cumprod(-1)  # [.., i, k]: prod_{j <= k, j != i} x_j
    t = self_t.transpose(dim, -1).unsqueeze(-1)
    return where(upper, partial * t, 0).sum(-2).transpose(-1, dim)


def repeat_backward(grad, repeats, sizes):
    """Each copy's gradient summed back: grad viewed as (r0, s0, r1, s1, ...)."""
    padded = (1,) * (len(repeats) - len(sizes)) + tuple(sizes)
    split = [n for pair in zip(repeats, padded) for n in pair]
    return grad.reshape(split).sum(tuple(range(0, len(split), 2))).reshape(sizes)


def index_add(t, dim, index, source, alpha=1):
    return T.call(T.D.INDEX_ADD, (t, index, source), (dim, alpha))


def index_select_backward(grad, sizes, dim, index):
    return index_add(zeros(sizes, grad), dim, index, grad)


def index_add_source_backward(grad, dim, index, source, source_dim, alpha):
    g = scale(grad.index_select(dim, index), alpha)
    return g.reshape(source.shape) if source_dim == 0 else g  # a 0-d source: one element
