"""torch's composite shape ops: each written in terms of the engine's own ops, as torch writes
them (its CompositeImplicitAutograd functions), so their gradients and nodes are torch's
(ravel is a reshape, tensor_split slices, tensordot a permute, reshape and mm, diff a
subtraction of two slices). Tensor methods in ShapeTensorMethods; the torch-level functions
without a Tensor method at the end."""
import itertools
import numbers

import numpy as np

from . import creation, dtypes
from .dispatch import broadcast_mismatch, call
from .free_functions import cat, meshgrid, stack
from .ops import derivatives as table
from .tensor import Size, Tensor, _dim


class ShapeTensorMethods:
    def ravel(self):
        return self.contiguous().view(-1)

    def unflatten(self, dim, sizes):
        dim = _dim(dim, self.dim())
        sizes = list(sizes)
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        known = int(np.prod([s for s in sizes if s != -1]))
        size = self.shape[dim]
        if (-1 not in sizes and known != size) or (-1 in sizes and (
                known == 0 or size % known)):
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the "
                               f"size of dim {dim} ({size}) in the input tensor")
        return self.view(*self.shape[:dim], *sizes, *self.shape[dim + 1:])

    def tensor_split(self, indices_or_sections, dim=0):
        if self.dim() == 0:
            raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but "
                               f"got a tensor with {self.dim()} dims")
        dim = _dim(dim, self.dim())
        size = self.shape[dim]
        if isinstance(indices_or_sections, Tensor):  # 0-d: sections; 1-d: indices
            split = indices_or_sections
            if split._data.dtype != np.int64:
                raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have "
                                   f"dtype of long, but got "
                                   f"{dtypes.LEGACY_TYPE_NAMES[split._data.dtype.name]}")
            if split.dim() > 1:
                raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                                   f"zero-dimensional or one-dimensional tensor, but got a "
                                   f"tensor with {split.dim()} dims")
            indices_or_sections = split._data.tolist()
        if isinstance(indices_or_sections, numbers.Integral):
            sections = int(indices_or_sections)
            if sections <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
            small, extra = divmod(size, sections)  # the first `extra` get one more
            bounds = list(itertools.accumulate(
                [0] + [small + 1] * extra + [small] * (sections - extra)))
        else:
            bounds = [0] + [int(i) for i in indices_or_sections] + [size]
        pieces = []
        for start, stop in zip(bounds, bounds[1:]):  # (negative indices count from the end)
            pieces.append(self[(slice(None),) * dim + (slice(start, stop),)])
        return tuple(pieces)

    def kron(self, other):
        return kron(self, other)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        return diff(self, n, dim, prepend, append)

    def trace(self):
        if self.dim() != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
        return call(table.TRACE, (self,))


def broadcast_shapes(*shapes):
    """The shape every one of `shapes` broadcasts to, with torch's words when they do not."""
    result = ()
    for shape in shapes:
        shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
        mismatch = broadcast_mismatch(result, shape)
        if mismatch:
            raise RuntimeError(mismatch)
        result = np.broadcast_shapes(result, shape)
    return Size(result)


def broadcast_tensors(*tensors):
    """Each tensor expanded to the shape they broadcast to together (ExpandBackward0 each)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def tensordot(a, b, dims=2):
    """Sum over the dims `dims` names of a and of b (an int: a's last and b's first that many):
    a permuted to (kept, summed) and b to (summed, kept), an mm between them."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, numbers.Integral) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    for da, db in zip(dims_a, dims_b):  # (torch names the dims as given)
        if a.shape[da] != b.shape[db] and a.shape[da] != 1 and b.shape[db] != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} "
                               f"in dim {db}")
    dims_a = [_dim(d, a.dim()) for d in dims_a]
    dims_b = [_dim(d, b.dim()) for d in dims_b]
    kept_a = [d for d in range(a.dim()) if d not in dims_a]
    kept_b = [d for d in range(b.dim()) if d not in dims_b]
    summed = int(np.prod([a.shape[d] for d in dims_a]))
    left = a.permute(*kept_a, *dims_a).reshape(-1, summed)
    right = b.permute(*dims_b, *kept_b).reshape(summed, -1)
    return left.mm(right).reshape(*[a.shape[d] for d in kept_a], *[b.shape[d] for d in kept_b])


def kron(a, b):
    """Every product a[i] * b[j] at i * b.shape + j: a and b given interleaved size-1 dims,
    multiplied, the pairs of dims merged."""
    ndim = max(a.dim(), b.dim())
    a_shape = (1,) * (ndim - a.dim()) + tuple(a.shape)
    b_shape = (1,) * (ndim - b.dim()) + tuple(b.shape)
    a_spread = _unsafe_view(a, tuple(itertools.chain.from_iterable((n, 1) for n in a_shape)))
    b_spread = _unsafe_view(b, tuple(itertools.chain.from_iterable((1, n) for n in b_shape)))
    return _unsafe_view(a_spread * b_spread, tuple(m * n for m, n in zip(a_shape, b_shape)))


def _unsafe_view(t, shape):
    """A reshape recorded as torch's C++ composites record theirs (_unsafe_view)."""
    return call(table.UNSAFE_VIEW, (t.contiguous(),), (shape,))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (prepend and append joined first); bool tensors
    differ by xor, as torch's."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _dim(dim, input.dim())
    parts = []
    for extra in (prepend, append):
        if extra is None:
            continue
        if not isinstance(extra, Tensor):  # a number: a slice of width 1
            shape = list(input.shape)
            shape[dim] = 1
            extra = creation.full(shape, extra, dtype=input.dtype)
        if extra.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        for d in range(input.dim()):
            if d != dim and extra.shape[d] != input.shape[d]:
                raise RuntimeError(
                    f"diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({d}) = "
                    f"{input.shape[d]}, but got tensor.size({d}) = {extra.shape[d]}")
        parts.append(extra)
    if parts:
        input = cat(([parts[0]] if prepend is not None else []) + [input]
                    + ([parts[-1]] if append is not None else []), dim)
    for _ in range(n):
        length = input.shape[dim]
        if length == 0:
            break
        later, earlier = input.narrow(dim, 1, length - 1), input.narrow(dim, 0, length - 1)
        input = later.logical_xor(earlier) if input.dtype == dtypes.bool_ else later - earlier
    return input


def block_diag(*tensors):
    """The tensors (0-d as 1x1, 1-d as one row) along the diagonal of a matrix of zeros."""
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
    if not tensors:
        return creation.empty(1, 0)
    return call(table.BLOCK_DIAG, (list(tensors),))


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-d tensor, one per row."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([grid.flatten() for grid in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-d tensor's elements, one per row, in order; picked
    from r grids by a mask, as torch's."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return creation.empty(0, dtype=input.dtype)
    grids = meshgrid(*[input] * r, indexing="ij")
    positions = np.indices((input.shape[0],) * r)
    keep = np.ones(positions.shape[1:], bool)
    for earlier, later in zip(positions, positions[1:]):
        keep &= earlier <= later if with_replacement else earlier < later
    mask = Tensor._wrap(keep)
    return stack([grid.masked_select(mask) for grid in grids], 1)


def _check_indices_sizes(row, col):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of a row x col matrix's lower triangle, as a 2 x N tensor."""
    _check_indices_sizes(row, col)
    return creation.tensor(np.array(np.tril_indices(row, offset, col)).reshape(2, -1),
                           dtype=dtype or dtypes.int64, device=device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of a row x col matrix's upper triangle, as a 2 x N tensor."""
    _check_indices_sizes(row, col)
    return creation.tensor(np.array(np.triu_indices(row, offset, col)).reshape(2, -1),
                           dtype=dtype or dtypes.int64, device=device)


def vander(x, N=None, increasing=False):
    """The powers x^0 .. x^(N-1) of a 1-d x, one row per element (highest power first unless
    increasing): cumulative products of [1, x, x, ...], as torch's; integers as int64."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "biu":
        x = x.to(dtypes.int64)
    if N == 0:
        return creation.empty(x.shape[0], 0, dtype=x.dtype)
    columns = [creation.ones(x.shape[0], 1, dtype=x.dtype)]
    if N > 1:
        columns.append(x.unsqueeze(1).expand(x.shape[0], N - 1))
    powers = cat(columns, 1).cumprod(1)
    return powers if increasing else powers.flip(1)


def trace(input):
    return input.trace()


__all__ = ["broadcast_shapes", "broadcast_tensors", "tensordot", "kron", "diff", "block_diag",
           "cartesian_prod", "combinations", "tril_indices", "triu_indices", "vander", "trace"]
