"""Sparse COO tensors, on dense storage (torch.sparse is gradtool/engine/sparse.py): a sparse
tensor here is a Tensor whose memory holds its dense values (the duplicates of uncoalesced
indices summed), beside the indices and values it was built from. Everything torch computes
from a sparse tensor's values (to_dense, torch.sparse.mm, spmm, matmul, sums) gives torch's
numbers, and gradients reach the values; the graph's nodes are the dense ones
(IndexPutBackward0 where torch records SparseCooTensorWithDimsAndTensorsBackward0), and an op
on a sparse tensor returns a dense one where torch's would stay sparse."""
import weakref

import numpy as np

from . import creation, dtypes
from .dispatch import call
from .memory import sparse_coo
from .ops import derivatives as table
from .tensor import Size, Tensor

# each sparse tensor's indices (an int64 array, sparse dims by nnz), values and whether its
# indices are coalesced (sorted, no duplicates), by the tensor's id while it lives (a tensor's
# == is elementwise: no WeakKeyDictionary)
_COO = {}


class _Entries:
    def __getitem__(self, t):
        return _COO[id(t)]

    def __setitem__(self, t, entry):
        _COO[id(t)] = entry
        weakref.finalize(t, _COO.pop, id(t), None)


_ENTRIES = _Entries()


class SparseCooTensor(Tensor):
    """A sparse COO tensor (torch's layout sparse_coo) held densely."""

    __slots__ = ()  # (the same layout as Tensor's: a dense result becomes one in place)

    @property
    def is_sparse(self):
        return True

    @property
    def layout(self):
        return sparse_coo

    def _indices(self):
        return Tensor._wrap(_ENTRIES[self][0])

    def _values(self):
        return _ENTRIES[self][1]

    def indices(self):
        self._check_coalesced("indices")
        return self._indices()

    def values(self):
        self._check_coalesced("values")
        return self._values()

    def _check_coalesced(self, what):
        if not _ENTRIES[self][2]:
            raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call "
                               f".coalesce() first")

    def is_coalesced(self):
        return _ENTRIES[self][2]

    def _nnz(self):
        return _ENTRIES[self][0].shape[1]

    def sparse_dim(self):
        return _ENTRIES[self][0].shape[0]

    def dense_dim(self):
        return self._data.ndim - self.sparse_dim()

    def coalesce(self):
        """The same tensor with sorted, distinct indices (duplicates' values summed)."""
        if self.is_coalesced():
            return self
        indices = np.unique(_ENTRIES[self][0], axis=1)  # (lexicographic: torch's order)
        values = self[tuple(Tensor._wrap(i) for i in indices)]  # (a dense Tensor's index)
        return _sparse(indices, values, tuple(self.shape), coalesced=True)

    def to_dense(self, dtype=None, *, masked_grad=None):
        dense = self.clone()  # (a dense Tensor: ops' results are)
        return dense if dtype is None else dense.to(dtype)

    def to_sparse(self, *args, layout=None, **kwargs):
        if layout in (None, sparse_coo):
            return self
        return Tensor.to_sparse(self, layout=layout, **kwargs)  # (a compressed layout)

    def __repr__(self):
        indices, values, _ = _ENTRIES[self]
        pad = " " * len("tensor(indices=")
        shown = repr(Tensor._wrap(indices)).replace("\n", "\n" + pad)
        values_shown = repr(values.detach()).replace("\n", "\n" + " " * len("       values="))
        dtype = "" if self.dtype is dtypes.float32 else f", dtype={self.dtype}"
        grad_fn = (f",\n       grad_fn=<{self.grad_fn.name()}>" if self.grad_fn is not None
                   else ",\n       requires_grad=True" if self.requires_grad else "")
        return (f"tensor(indices={shown},\n       values={values_shown},\n       size="
                f"{tuple(self.shape)}, nnz={indices.shape[1]}{dtype}, "
                f"layout={sparse_coo!r}{grad_fn})")


def _sparse(indices, values, size, coalesced):
    """The sparse tensor of these indices (an array) and values (a Tensor): its dense values
    are the values added up at their indices (differentiable in values)."""
    zeros = creation.zeros(size, dtype=values.dtype)
    index = tuple(indices)
    dense = call(table.INDEX_PUT, (zeros, values), (index, True))
    dense.__class__ = SparseCooTensor
    _ENTRIES[dense] = (indices, values, coalesced)
    return dense


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor: values[k] at position indices[:, k] (duplicates add up)."""
    indices = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if not isinstance(values, Tensor):
        values = creation.tensor(values, dtype=dtype)
    elif dtype is not None:
        values = values.to(dtype)
    if requires_grad:
        values = values.detach().requires_grad_()
    sparse_dims = indices.shape[0]
    if indices.shape[1] != values.shape[0] if values.dim() else indices.shape[1] != 1:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{indices.shape[1]}, nnz from values: "
                           f"{values.shape[0] if values.dim() else 1}")
    if size is None:
        size = tuple(int(n) + 1 if indices.shape[1] else 0 for n in (
            indices.max(1) if indices.shape[1] else np.zeros(sparse_dims, int))) + tuple(
            values.shape[1:])
    size = tuple(size)
    for d in range(sparse_dims):
        if indices.shape[1] and (indices[d].max() >= size[d] or indices[d].min() < 0):
            bad = indices[d].max() if indices[d].max() >= size[d] else indices[d].min()
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {bad}")
    indices = indices.astype(np.int64)
    coalesced = bool(is_coalesced) if is_coalesced is not None else indices.shape[1] <= 1
    return _sparse(indices, values, size, coalesced)


def to_sparse(dense, sparse_dim=None):
    """The dense tensor's nonzero entries as a coalesced sparse tensor."""
    sparse_dim = dense.dim() if sparse_dim is None else sparse_dim
    data = dense._data
    keep = np.abs(data).reshape(data.shape[:sparse_dim] + (-1,)).sum(-1) != 0 \
        if sparse_dim < data.ndim else data != 0
    indices = np.stack(np.nonzero(keep)) if data.ndim else np.zeros((0, 1), np.int64)
    values = dense[tuple(Tensor._wrap(i) for i in indices)] if data.ndim else dense.reshape(1)
    return _sparse(indices.astype(np.int64), values, tuple(dense.shape), coalesced=True)


def _legacy(dtype):
    def constructor(*args, device=None):
        """The legacy sparse constructor: (indices, values, size), (indices, values) or a
        size (empty)."""
        if args and isinstance(args[0], Tensor):
            indices, values, *size = args
            return sparse_coo_tensor(indices, values, *size, dtype=dtype)
        size = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list, Size)) \
            else tuple(args)
        return sparse_coo_tensor(np.zeros((len(size), 0), np.int64),
                                 creation.zeros(0, dtype=dtype), size)
    constructor.__name__ = dtypes.LEGACY_TYPE_NAMES[dtype.name] + "Tensor"
    return constructor


FloatTensor, DoubleTensor, LongTensor = (_legacy(dtypes.float32), _legacy(dtypes.float64),
                                         _legacy(dtypes.int64))


# ---- torch.sparse's functions of COO tensors
def sparse_sum(input, dim=None, dtype=None):
    """torch.sparse.sum: over every dim a number; over some sparse dims a COO tensor of the
    rest, specified where a summed slice had a specified element."""
    input = input.coalesce()  # (torch's refusal of other layouts comes from here)
    total = Tensor.sum(input, dim, dtype=dtype) if dim is not None else \
        Tensor.sum(input, dtype=dtype)
    dims = () if dim is None else tuple(d % input.dim() for d in (
        dim if isinstance(dim, (tuple, list)) else (dim,)))
    kept = [d for d in range(input.sparse_dim()) if d not in dims]
    if not dims or not kept:
        return total
    indices = np.unique(_ENTRIES[input][0][kept], axis=1)
    values = total[tuple(Tensor._wrap(i) for i in indices)]
    return _sparse(indices, values, tuple(total.shape), coalesced=True)


def _softmax(input, dim, dtype, log):
    """softmax over the specified elements along dim (the others count as -inf), as a COO
    tensor of the same indices."""
    if not isinstance(input, SparseCooTensor):
        from .sparse_compressed import not_on_backend
        raise not_on_backend(f"_sparse_{'log_' if log else ''}softmax", input)
    input = input.coalesce()
    indices = _ENTRIES[input][0]
    specified = np.zeros(tuple(input.shape[:input.sparse_dim()]), bool)
    specified[tuple(indices)] = True
    specified = specified.reshape(specified.shape + (1,) * input.dense_dim())
    dense = Tensor.masked_fill(input, Tensor._wrap(~specified), float("-inf"))
    dense = dense if dtype is None else dense.to(dtype)
    out = dense.log_softmax(dim) if log else dense.softmax(dim)
    values = out[tuple(Tensor._wrap(i) for i in indices)]
    return _sparse(indices, values, tuple(input.shape), coalesced=True)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype, log=True)


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix of `shape` with diagonals[k, j] at (j - offsets[k], j): row k of
    diagonals on the offsets[k]-th diagonal (COO unless layout says CSR or CSC)."""
    from .memory import sparse_csc, sparse_csr
    if layout not in (None, sparse_coo, sparse_csr, sparse_csc):
        from .sparse_compressed import layout_name
        raise RuntimeError(f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, "
                           f"got {layout_name(layout)}")
    diagonals = diagonals.reshape(1, -1) if diagonals.dim() == 1 else diagonals
    offsets = offsets._data.reshape(-1) if isinstance(offsets, Tensor) else \
        np.asarray(offsets).reshape(-1)
    if diagonals.shape[0] != len(offsets):
        raise RuntimeError(f"Number of diagonals ({diagonals.shape[0]}) does not match the "
                           f"number of offsets ({len(offsets)})")
    if len(set(offsets.tolist())) != len(offsets):
        raise RuntimeError("Offset tensor contains duplicate values")
    rows, cols, picks = [], [], []
    for k, offset in enumerate(offsets.tolist()):
        j = np.arange(max(offset, 0), min(shape[1], diagonals.shape[1], shape[0] + offset))
        rows.append(j - offset), cols.append(j), picks.append(np.full(len(j), k))
    rows, cols, picks = (np.concatenate(a).astype(np.int64) for a in (rows, cols, picks))
    values = diagonals[Tensor._wrap(picks), Tensor._wrap(cols)]
    result = _sparse(np.stack([rows, cols]), values, tuple(shape), coalesced=len(rows) <= 1)
    return result if layout in (None, sparse_coo) else result.to_sparse(layout=layout)
