"""The ops derivative formulas are written with: each takes Tensors (and records, when grad
mode is on: gradients of gradients) or numpy arrays (the engine's first-order path, which
records nothing and makes no Tensors), so each formula is written once.

A batched backward (autograd.grad's is_grads_batched) runs the formulas of rows marked
`batches` on arrays with a leading batch dim: the gradients have it, and the saved arrays
are given one of size 1 (so all broadcast alike); `batch.lead` is 1 then, and the ops here
that read dims or sizes count them after it: a formula still names one element's dims and
sizes (such rows read sizes from `*_sym_sizes`, not from a saved array's .shape). Tensors
never carry a batch dim: on Tensors, `lead` is ignored.
"""
import threading

import numpy as np

from ..dispatch import call
from ..free_functions import cat as _cat, stack as _stack, where as _where
from ..matmul import matmul as _matmul
from ..tensor import Tensor, _as_tensor
from . import kernels as _kernels
from .rows import row_function, table as _table

_ndarray = np.ndarray


class _Batch(threading.local):
    lead = 0  # leading batch dims of the arrays a formula gets (0 or 1)


batch = _Batch()


def _tensor(x):
    return isinstance(x, Tensor)


def _shift(dims):
    """One element's dims, counted after the batch dim (negative dims need no shift)."""
    lead = batch.lead
    if not lead:
        return dims
    if isinstance(dims, int):
        return dims + lead if dims >= 0 else dims
    return tuple(d + lead if d >= 0 else d for d in dims)


def _sizes(x, sizes):
    """One element's sizes, after x's batch dim."""
    return x.shape[:batch.lead] + tuple(sizes) if batch.lead else tuple(sizes)


# ---- elementwise ----
def _array_or_method(array_fn, method):
    """array_fn on arrays, the Tensor method on Tensors, given the same arguments."""
    def on_array_or_tensor(x, *args):
        return array_fn(x, *args) if not isinstance(x, Tensor) else getattr(x, method)(*args)
    on_array_or_tensor.__name__ = method
    return on_array_or_tensor


def _along(array_fn, method):
    """An op along a dim (or dims): on arrays, counted after the batch dim."""
    def on_array_or_tensor(x, dim):
        return array_fn(x, _shift(dim)) if not isinstance(x, Tensor) else getattr(x, method)(dim)
    on_array_or_tensor.__name__ = method
    return on_array_or_tensor


abs = _array_or_method(np.abs, "abs")
sign = _array_or_method(np.sign, "sign")
exp = _array_or_method(_kernels.exp, "exp")
log = _array_or_method(_kernels.log, "log")
log1p = _array_or_method(_kernels.log1p, "log1p")
sin = _array_or_method(_kernels.sin, "sin")
cos = _array_or_method(_kernels.cos, "cos")
sinh = _array_or_method(_kernels.sinh, "sinh")
cosh = _array_or_method(_kernels.cosh, "cosh")
tanh = _array_or_method(_kernels.tanh, "tanh")
isnan = _array_or_method(np.isnan, "isnan")
isfinite = _array_or_method(np.isfinite, "isfinite")
exp2 = _array_or_method(np.exp2, "exp2")
sgn = _array_or_method(_kernels.sgn, "sgn")  # x / |x| (0 at 0); torch's sign for real x
sigmoid = _array_or_method(_kernels.sigmoid, "sigmoid")
rsqrt = _array_or_method(_kernels.rsqrt, "rsqrt")
erf = _array_or_method(_kernels.erf, "erf")
floor = _array_or_method(np.floor, "floor")
trunc = _array_or_method(np.trunc, "trunc")


def conj(x):
    """The complex conjugate. Real values are their own, returned as they are (no copy, no
    node, as torch's conj), so one formula serves real and complex inputs at no cost."""
    kind = type(x)
    if kind is _ndarray:  # (numpy's conj of a real array is the array itself)
        return x.conj()
    if kind is float or kind is int:  # (a number saved in a tensor's place: x * 0.9)
        return x
    return x.conj() if isinstance(x, Tensor) else x.conjugate()


def real(x):
    """The real part of a complex value (torch's handle_r_to_c); a real one as it is."""
    if isinstance(x, Tensor):
        return x.real
    return x.real if getattr(x, "dtype", None) is None or x.dtype.kind == "c" else x


def is_complex(x):
    return (x.is_complex() if isinstance(x, Tensor) else
            getattr(x, "dtype", np.dtype(type(x))).kind == "c")


def imag(x):
    return x.imag if isinstance(x, Tensor) else np.imag(x)


view_as_real = row_function("VIEW_AS_REAL")
view_as_complex = row_function("VIEW_AS_COMPLEX")


def where(condition, x, y):
    if _tensor(condition) or _tensor(x) or _tensor(y):
        return _where(_as_tensor(condition), x, y)
    return _kernels.where(condition, x, y)


def masked_fill(x, mask, value):
    if not isinstance(x, Tensor):
        return np.where(mask, np.asarray(value, dtype=x.dtype), x)
    return x.masked_fill(mask, value)


def clamp(x, min=None, max=None):
    return _kernels.clamp(x, min, max) if not isinstance(x, Tensor) else x.clamp(min, max)


def to(x, dtype):
    if isinstance(x, Tensor):
        return x.to(dtype)
    return x if x.dtype == dtype else _kernels.to_dtype(x, dtype)


def detach(x):
    return x if not isinstance(x, Tensor) else x.detach()


def any_true(x):
    return bool(np.any(x)) if not isinstance(x, Tensor) else bool(x.any().item())


def numel(x):
    return x.size if not isinstance(x, Tensor) else x.numel()


# ---- new values, like a given one ----
def zeros_like(x):
    return np.zeros_like(x) if not isinstance(x, Tensor) else Tensor._wrap(
        np.zeros_like(x._data))


def ones_like(x):
    return np.ones_like(x) if not isinstance(x, Tensor) else Tensor._wrap(
        np.ones_like(x._data))


def zeros(sizes, like):
    """Zeros of one element's `sizes` (a batch of them when `like` is batched)."""
    if not isinstance(like, Tensor):
        return np.zeros(_sizes(like, sizes), dtype=like.dtype)
    return Tensor._wrap(np.zeros(tuple(sizes), dtype=like._data.dtype))


def constant(array, like):
    """A constant array (a mask, ...) in the kind of `like`."""
    if not isinstance(like, Tensor):
        return array.reshape((1,) * batch.lead + array.shape) if batch.lead else array
    return Tensor._wrap(array)


# ---- reductions ----
def sum(x, dim=None, keepdim=False):
    """Over `dim` (None: every dim of one element)."""
    if not isinstance(x, Tensor):
        if dim is None:
            dim = tuple(range(batch.lead, x.ndim))
        return np.sum(x, axis=_shift(dim), keepdims=keepdim)
    return x.sum() if dim is None else x.sum(dim, keepdim=keepdim)


def mean(x, dim, keepdim=False):
    if not isinstance(x, Tensor):
        return np.mean(x, axis=_shift(dim), keepdims=keepdim)
    return x.mean(dim, keepdim=keepdim)


def prod(x, dim, keepdim=False):
    return (np.prod(x, axis=_shift(dim), keepdims=keepdim) if not isinstance(x, Tensor)
            else x.prod(dim, keepdim=keepdim))


def var(x, dim, correction, keepdim=False):
    if not isinstance(x, Tensor):
        return np.var(x, axis=_shift(dim), ddof=correction, keepdims=keepdim)
    return x.var(dim, correction=correction, keepdim=keepdim)


cumsum = _along(np.cumsum, "cumsum")
cumprod = _along(np.cumprod, "cumprod")


# ---- shapes ----
def expand(x, sizes):
    if not isinstance(x, Tensor):
        lead = batch.lead
        missing = len(sizes) - (x.ndim - lead)
        if lead and missing:  # each element's dims right-aligned after the batch dim
            x = x.reshape(x.shape[:lead] + (1,) * missing + x.shape[lead:])
        return np.broadcast_to(x, _sizes(x, sizes))
    return x.expand(sizes)


contiguous = _array_or_method(np.ascontiguousarray, "contiguous")


def reshape(x, sizes):
    return np.reshape(x, _sizes(x, sizes)) if not isinstance(x, Tensor) else x.reshape(sizes)


unsqueeze = _along(np.expand_dims, "unsqueeze")
squeeze = _along(np.squeeze, "squeeze")


def transpose(x, dim0, dim1):
    if not isinstance(x, Tensor):
        return np.swapaxes(x, *_shift((dim0, dim1)))
    return x.transpose(dim0, dim1)


def permute(x, dims):
    if not isinstance(x, Tensor):
        lead = batch.lead
        return np.transpose(x, tuple(range(lead)) + _shift(tuple(dims)))
    return x.permute(tuple(dims))


def t(x):
    """Transposed, for 2-d; 0-d and 1-d stay as they are (as torch's t)."""
    if not isinstance(x, Tensor):
        return x if x.ndim - batch.lead < 2 else np.swapaxes(x, -1, -2)
    return x.t()


flip = _along(np.flip, "flip")


def roll(x, shifts, dims):
    if isinstance(x, Tensor):
        return x.roll(shifts, dims)
    return _kernels.roll(x, shifts, _shift(tuple(dims)))


triu = _array_or_method(np.triu, "triu")
tril = _array_or_method(np.tril, "tril")


def select(x, dim, index):
    if not isinstance(x, Tensor):
        return np.take(x, index, axis=_shift(dim))
    return x.select(dim, index)


def diagonal(x, offset, dim1, dim2):
    if not isinstance(x, Tensor):
        return np.diagonal(x, offset, *_shift((dim1, dim2)))
    return x.diagonal(offset, dim1, dim2)


def unbind(x, dim):
    """The slices along `dim` (on Tensors, selected one by one: torch's stack backward)."""
    if not isinstance(x, Tensor):
        return list(np.moveaxis(x, _shift(dim), 0))
    return [x.select(dim, i) for i in range(x.shape[dim])]


def cat(xs, dim):
    if any(_tensor(x) for x in xs):
        return _cat(xs, dim)
    return np.concatenate(xs, axis=_shift(dim))


def stack(xs, dim):
    if any(_tensor(x) for x in xs):
        return _stack(xs, dim)
    return np.stack(xs, axis=_shift(dim))


def slice(x, dim, start, end, step):
    if not isinstance(x, Tensor):
        return _kernels.slice_(x, _shift(dim), start, end, step)
    return call(_table.SLICE, (x,), (dim, start, end, step))


def sum_to(grad, sizes):
    """A broadcast gradient summed back down to `sizes`: the one place broadcasting is
    undone (the engine's, for every node's gradients, and expand's formula)."""
    sizes = tuple(sizes)
    lead = batch.lead if not isinstance(grad, Tensor) else 0
    shape = tuple(grad.shape)
    if shape[lead:] == sizes:
        return grad
    extra = len(shape) - lead - len(sizes)
    dims = tuple(range(lead, lead + extra)) + tuple(
        lead + extra + i for i, n in enumerate(sizes) if n == 1 and shape[lead + extra + i] != 1)
    if not isinstance(grad, Tensor):
        if dims:
            grad = np.sum(grad, axis=dims, keepdims=True)
        return grad.reshape(shape[:lead] + sizes) if extra else grad
    if not sizes:  # to a scalar: one sum, as torch's sum_to
        return grad.sum()
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(sizes) if extra else grad


# ---- products ----
def mm(a, b):
    """A matrix product (matmul broadcasts over a batch of gradients)."""
    if _tensor(a) or _tensor(b):
        return _as_tensor(a).mm(b)
    return np.matmul(a, b)


def addmm(self, mat1, mat2):
    """self + mat1 @ mat2, in one pass on arrays (kernels.addmm: the faster way round)."""
    return _table.ADDMM(self, mat1, mat2, 1, 1)


def mv(a, v):
    if _tensor(a) or _tensor(v):
        return _as_tensor(a).mv(v)
    return np.matmul(a, v[..., None])[..., 0]


def matmul(a, b):
    """torch's matmul (batches broadcast): the linear algebra formulas' product."""
    if _tensor(a) or _tensor(b):
        return _matmul(_as_tensor(a), _as_tensor(b))
    return np.matmul(a, b)


def bmm(a, b):
    if _tensor(a) or _tensor(b):
        return _as_tensor(a).bmm(b)
    if a.shape[-1] == 1:  # outer products (per-example weight gradients): the same values,
        return a * b      # and numpy's broadcasting multiply is faster than its small matmuls
    return np.matmul(a, b)


def grouped_mm(a, b, offs):
    if _tensor(a) or _tensor(b):
        return _table.GROUPED_MM(_as_tensor(a), _as_tensor(b), offs)
    return _kernels.grouped_mm(a, b, offs)


# ---- indexing ----
def gather(x, dim, index):
    if not isinstance(x, Tensor):
        return np.take_along_axis(x, index, axis=dim)
    return x.gather(dim, index)


def scatter(x, dim, index, value):
    if not isinstance(x, Tensor):
        return _kernels.scatter(x, index, value, dim)
    return x.scatter(dim, index, value)


def scatter_add(x, dim, index, src):
    return _table.SCATTER_ADD(x, index, src, dim)


def index_select(x, dim, index):
    if not isinstance(x, Tensor):
        return _kernels.index_select(x, index, dim)
    return x.index_select(dim, index)


def index_add(x, dim, index, source, alpha=1):
    return _table.INDEX_ADD(x, index, source, dim, alpha)


index = row_function("INDEX")


def index_put(x, indices, values):
    return _table.INDEX_PUT(x, values, indices, False)

