"""Derivative formulas that need local variables, named after torch's (FunctionsManual.cpp).
All are written with gradtool ops on Tensors, so they are themselves differentiable."""
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


def materialize(grads, output_meta):
    """Zeros for the outputs that received no gradient (multi-output ops)."""
    grads = list(grads) + [None] * (len(output_meta) - len(grads))
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
    return (2.0 / (n - correction)) * grad * (self - self.mean(dim, keepdim=True))


def std_backward(grad, self, dim, correction, keepdim, result):
    # d std = d var / (2 std); zero where std == 0, as torch
    grad_var = (grad / (2 * result)).masked_fill(result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def prod_backward(grad, self, result, dim, keepdim):
    """d prod / dx_i = product of the others; exact when some x are zero (no 0/0)."""
    if dim is None:
        dim, keepdim = tuple(range(self.dim())), False
    elif isinstance(dim, int):
        dim = (dim,)
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    is_zero = self == 0
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
    return where(mask, grad / mask.sum(dim, keepdim=True), 0)


def value_selecting_backward(grad, dim, indices, sizes, keepdim):
    if not keepdim:
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return zeros(sizes, grad).scatter(dim, indices, grad)


def logsumexp_backward(grad, self, result, dim, keepdim):
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    return grad * (self - result).exp()


def norm_backward(grad, self, result, dim, keepdim):
    dim = range(self.dim()) if dim is None else dim
    grad = restore_reduced_dims(grad, dim, keepdim)
    result = restore_reduced_dims(result, dim, keepdim)
    # the subgradient at x = 0 is 0, as torch
    return where(result == 0, 0, grad * self / where(result == 0, 1, result))


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


def matmul_backward_self(grad, self, other):
    if other.dim() == 1:
        return grad.unsqueeze(-1) * other
    if self.dim() == 1:
        return grad.unsqueeze(-2).matmul(other.transpose(-1, -2))
    return grad.matmul(other.transpose(-1, -2))


def matmul_backward_other(grad, self, other):
    if self.dim() == 1:
        return self.unsqueeze(-1) * grad.unsqueeze(-2)
    if other.dim() == 1:
        return self * grad.unsqueeze(-1)
    return self.transpose(-1, -2).matmul(grad)


def select_backward(grad, sizes, dim, index):
    return T.call(T.D.SELECT_BACKWARD, (grad,), (sizes, dim, index))


def slice_backward(grad, sizes, dim, start, end, step):
    return T.call(T.D.SLICE_BACKWARD, (grad,), (sizes, dim, start, end, step))


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
