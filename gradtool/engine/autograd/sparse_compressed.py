"""Sparse compressed tensors (torch's layouts sparse_csr, sparse_csc, sparse_bsr, sparse_bsc) on
dense storage, as the COO tensors of sparse.py: a compressed tensor is a Tensor whose memory
holds its dense values, beside the compressed indices, plain indices and values it was built
from. Its dense values are its values put at their positions (one node, torch's
SparseCompressedTensorBackward0), so gradients reach the values; the ops torch runs on
these layouts (products with a dense matrix, sums, zero-preserving elementwise ops, sums and
products of two compressed tensors, transposes, conversions) give torch's numbers, and those
whose result torch keeps compressed keep the result compressed here too.

A row-compressed layout (CSR, BSR) lists, per row (or row of blocks), the columns of its
specified elements: crow_indices[i]:crow_indices[i + 1] slices col_indices and values for row
i. A column-compressed one (CSC, BSC) is the same with rows and columns swapped. Leading dims
of the indices are batch dims; values may carry blocks (BSR, BSC) and trailing dense dims."""
import numbers
import weakref

import numpy as np

from . import creation, dtypes, printing
from .dispatch import call
from .memory import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .ops import derivatives as table
from .tensor import Tensor

# per layout: its name in torch's messages, the names of its compressed and plain indices,
# whether it compresses rows, whether its values are blocks
_KINDS = {sparse_csr: ("SparseCsr", "crow_indices", "col_indices", True, False),
          sparse_csc: ("SparseCsc", "ccol_indices", "row_indices", False, False),
          sparse_bsr: ("SparseBsr", "crow_indices", "col_indices", True, True),
          sparse_bsc: ("SparseBsc", "ccol_indices", "row_indices", False, True)}
_TRANSPOSED = {sparse_csr: sparse_csc, sparse_csc: sparse_csr,
               sparse_bsr: sparse_bsc, sparse_bsc: sparse_bsr}


def layout_name(lay):
    """A layout as torch's messages spell it (Strided, Sparse, SparseCsr, ...)."""
    return {strided: "Strided", sparse_coo: "Sparse"}.get(lay) or _KINDS[lay][0]


def not_on_backend(op, t):
    """torch's refusal of an op its dispatcher has no kernel for at t's layout (the first
    sentence of torch's message)."""
    backend = {strided: "CPU", sparse_coo: "SparseCPU"}.get(t.layout, "SparseCsrCPU")
    return NotImplementedError(f"Could not run 'aten::{op}' with arguments from the "
                               f"'{backend}' backend.")


# each compressed tensor's (compressed indices, plain indices, layout, blocksize), by the
# tensor's id while it lives (a Tensor has no room for more attributes); its values are read
# from its dense storage, so that an op in place on the tensor changes them too
_PARTS = {}


class SparseCompressedTensor(Tensor):
    """A sparse tensor in a compressed layout held densely."""

    __slots__ = ()  # (the same layout as Tensor's: a dense result becomes one in place)

    @property
    def _compressed(self):
        return _PARTS[id(self)]

    @property
    def layout(self):
        return self._compressed[2]

    @property
    def is_sparse(self):  # (torch's is_sparse is for the COO layout alone)
        return False

    @property
    def is_sparse_csr(self):
        return self.layout is sparse_csr

    def _indices_of(self, which, rows):
        """crow_indices and friends: the indices, where the layout compresses `rows`."""
        name = (("crow_indices", "col_indices"), ("ccol_indices", "row_indices"))[not rows]
        if _KINDS[self.layout][3] != rows:
            kind = "row" if rows else "column"
            raise RuntimeError(f"{name[which]} expected sparse {kind} compressed tensor "
                               f"layout but got {layout_name(self.layout)}")
        return self._compressed[which]

    def crow_indices(self):
        return self._indices_of(0, True)

    def col_indices(self):
        return self._indices_of(1, True)

    def ccol_indices(self):
        return self._indices_of(0, False)

    def row_indices(self):
        return self._indices_of(1, False)

    def values(self):
        """The specified values, picked from the dense storage (differentiable)."""
        return call(table.VALUES, (self,), (_coordinates(*_index_arrays(self)),))

    def _nnz(self):
        return self._compressed[1].shape[-1]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return self.dim() - 2 - self._batch_dim()

    def _batch_dim(self):
        return self._compressed[0].dim() - 1

    def to_dense(self, dtype=None, *, masked_grad=None):
        """Its values put into zeros: a dense Tensor whose gradient reaches only the
        specified elements, as torch's."""
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
        return call(table.TO_DENSE, (self,), (_element_mask(self, _pattern(self),
                                                            self._block()),))

    def _block(self):
        return self._compressed[3]

    # ---- the ops torch runs on compressed layouts, whose result stays compressed
    def _same_pattern(self, dense):
        """dense, the result of an op that keeps self's zeros, as a tensor of self's pattern
        (the op's node is the result's, as torch's)."""
        return _as_compressed(dense, self._compressed)

    def __mul__(self, other):
        if isinstance(other, SparseCompressedTensor):
            if tuple(self.shape) != tuple(other.shape):
                raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs "
                                   "with equal dimensionality, number of sparse dimensions, "
                                   "and shape of sparse dimensions")
            return _tagged(Tensor.__mul__(self, other), _pattern(self) & _pattern(other),
                           self.layout, self._block())
        if isinstance(other, Tensor) and other.dim() and other.shape != self.shape:
            raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has "
                               f"size {list(other.shape)} but mask has size "
                               f"{list(self.shape)}")
        return self._same_pattern(Tensor.__mul__(self, other))

    __rmul__ = __mul__

    def mul(self, other):
        return self * other

    def __add__(self, other):
        if isinstance(other, SparseCompressedTensor):
            if other.layout is not self.layout:
                other._indices_of(0, _KINDS[self.layout][3])  # (torch's refusal)
            if tuple(self.shape) != tuple(other.shape):
                raise RuntimeError(f"torch.add: Expected input tensors to have the same shape, "
                                   f"but got tensor `self` with shape {list(self.shape)} and "
                                   f"tensor `other` with shape {list(other.shape)}")
            return _tagged(Tensor.__add__(self, other), _pattern(self) | _pattern(other),
                           self.layout, self._block())
        return Tensor.__add__(self, other)

    def add(self, other, *, alpha=1):
        return self + (other if alpha == 1 else other * alpha)

    def __neg__(self):
        return self._same_pattern(Tensor.__neg__(self))

    def _product(self, other, dense_product):
        """self @ other: dense_product's (torch's) with a dense other; with a compressed one, a
        CSR tensor specified where the patterns' product is (torch's structural product)."""
        if getattr(other, "layout", None) is sparse_coo:
            raise RuntimeError(f"addmm: computation on CPU is not implemented for "
                               f"{layout_name(self.layout)} + {layout_name(self.layout)} @ "
                               f"Sparse")
        if not isinstance(other, SparseCompressedTensor):
            return dense_product(self, other)
        for t in (self, other):
            if t._block() is not None:
                raise RuntimeError(f"zeros_sparse_compressed expected sparse compressed "
                                   f"(non-block) tensor layout but got {layout_name(t.layout)}")
        structural = _pattern(self).astype(np.int64) @ _pattern(other).astype(np.int64) > 0
        return _tagged(dense_product(self, other), structural, sparse_csr, None)

    def __matmul__(self, other):
        return self._product(other, Tensor.__matmul__)

    def matmul(self, other):
        return self._product(other, Tensor.matmul)

    def mm(self, mat2):
        return self._product(mat2, Tensor.mm)

    def t(self):
        if self.dim() != 2 + self.dense_dim():
            raise RuntimeError("t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.dim()}D")
        return self.transpose(0, 1)

    def transpose(self, dim0, dim1):
        """Swapping the two sparse dims flips the layout (CSR <-> CSC), as torch's."""
        dims = sorted(d % self.dim() for d in (dim0, dim1))
        batch = self._batch_dim()
        kinds = ["Batch" if d < batch else "Sparse" if d < batch + 2 else "Dense" for d in dims]
        if kinds[0] != kinds[1]:
            given = [d % self.dim() for d in (dim0, dim1)]
            kinds = kinds if given == dims else kinds[::-1]
            raise RuntimeError(f"transpose(): can only transpose dimensions of the same type "
                               f"(Batch, Sparse, Dense), got {given[0]}({kinds[0]}) and "
                               f"{given[1]}({kinds[1]})")
        if kinds[0] != "Sparse":
            return Tensor.transpose(self, dim0, dim1)
        dense = Tensor.transpose(self, dim0, dim1)
        block = None if self._block() is None else self._block()[::-1]
        return _tagged(dense, np.swapaxes(_pattern(self), -1, -2), _TRANSPOSED[self.layout],
                       block)

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        """All of it: a dense number. Along dims of a CSR matrix, with keepdim: a CSR
        tensor specified wherever a summed row or column had a specified element."""
        total = Tensor.sum(self, dim, keepdim, dtype=dtype)
        if dim is None:
            return total
        if self.layout is not sparse_csr:
            raise RuntimeError(f"Currently the only compressed sparse format supported for "
                               f"sum.dim_IntList is CSR, but got layout "
                               f"{layout_name(self.layout)}")
        if not keepdim:
            raise RuntimeError("reduction operations on CSR tensors with keepdim=False is "
                               "unsupported")
        dims = tuple(d % self.dim() for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
        return _tagged(total, _pattern(self).any(dims, keepdims=True), sparse_csr, None)

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        return to_sparse(self, *args, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def clone(self, *, memory_format=None):
        return self._same_pattern(Tensor.clone(self))

    def zero_(self):
        """Zeros in place, and no specified element left (as torch's)."""
        Tensor.zero_(self)
        empty = np.zeros_like(_pattern(self))
        _PARTS[id(self)] = _parts_from_mask(empty, self.layout, self._block())
        return self

    def detach(self):
        return _as_compressed(Tensor.detach(self), self._compressed)

    def to(self, *args, **kwargs):
        dense = Tensor.to(self, *args, **kwargs)
        return self if dense is self else self._same_pattern(dense)

    def double(self):
        return self.to(dtypes.float64)

    def float(self):
        return self.to(dtypes.float32)

    def half(self):
        return self.to(dtypes.float16)

    def stride(self, dim=None):
        raise RuntimeError(f"Sparse {self._short_name()} tensors do not have strides")

    def is_contiguous(self, memory_format=None):
        raise RuntimeError(f"Sparse {self._short_name()} tensors do not have is_contiguous")

    def _short_name(self):
        return layout_name(self.layout)[len("Sparse"):].upper()

    def contiguous(self, memory_format=None):
        return self.is_contiguous()

    def __deepcopy__(self, memo):  # (torch's copies no storage of a compressed tensor either)
        raise NotImplementedError(f"Cannot access storage of {layout_name(sparse_csr)}TensorImpl")

    def __reduce__(self):  # pickling keeps the layout, as torch's
        compressed, plain, lay, _ = self._compressed
        return (_unpickled, (compressed, plain, self.values().detach(), tuple(self.shape),
                             lay.name, self.requires_grad))

    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {layout_name(self.layout)} layout tensor to numpy. "
                        f"Use Tensor.to_dense() first.")

    def __repr__(self):
        return _repr(self)


# The zero-preserving elementwise ops torch runs on every compressed layout: their result keeps
# the operand's pattern. (torch refuses the others, exp or cos, whose f(0) is not 0.)
_ZERO_PRESERVING = ("abs", "neg", "negative", "sin", "sinh", "tan", "tanh", "asin", "asinh",
                    "atan", "atanh", "sqrt", "erf", "erfinv", "expm1", "log1p", "relu", "sign",
                    "sgn", "signbit", "floor", "ceil", "trunc", "fix", "round", "frac",
                    "deg2rad", "rad2deg", "conj_physical", "angle", "isnan", "isinf",
                    "isposinf", "isneginf")


def _keeps_pattern(name):
    def op(self, *args, **kwargs):
        return self._same_pattern(getattr(Tensor, name)(self, *args, **kwargs))
    op.__name__ = name
    return op


# torch refuses these on compressed layouts (their result would be dense everywhere)
_REFUSED = ("exp", "exp2", "cos", "cosh", "sigmoid", "sinc", "log", "log2", "square",
            "__sub__", "sub", "__truediv__", "div", "__pow__", "pow", "__eq__", "eq",
            "reciprocal", "rsqrt", "bitwise_not", "clamp")
# and these torch's dispatcher has no compressed kernel for (the aten op it names)
_NO_KERNEL = {"mean": "mean.out", "softmax": "_softmax.out", "log_softmax": "_log_softmax.out",
              "nan_to_num": "nan_to_num.out", "logit": "logit", "view": "view", "max": "max",
              "amax": "amax.out", "prod": "prod", "std": "std.correction", "norm": "norm.out",
              "argmax": "argmax.out"}


def _raise(error):
    raise error


def _refused(name):
    def op(self, *args, **kwargs):
        raise RuntimeError(f"unsupported tensor layout: {layout_name(self.layout)}")
    op.__name__ = name
    return op


for _name in _ZERO_PRESERVING:
    if hasattr(Tensor, _name):
        setattr(SparseCompressedTensor, _name, _keeps_pattern(_name))
for _name in _REFUSED:
    setattr(SparseCompressedTensor, _name, _refused(_name))
for _name, _op in _NO_KERNEL.items():
    setattr(SparseCompressedTensor, _name,
            lambda self, *args, _op=_op, **kwargs: _raise(not_on_backend(_op, self)))
for _name in ("reshape", "flatten"):  # (torch asks for a contiguity they have not)
    setattr(SparseCompressedTensor, _name, lambda self, *args, **kwargs: self.is_contiguous())
SparseCompressedTensor.unsqueeze = lambda self, dim: self.stride()
SparseCompressedTensor.__hash__ = Tensor.__hash__  # (defining __eq__ would drop it)


# ---- building one: coordinates of the specified elements, and the dense storage
def _rows_of(compressed, nnz):
    """For each specified element k, the compressed row (or column) it lies in: the i with
    compressed[i] <= k < compressed[i + 1], per batch."""
    flat = compressed.reshape(-1, compressed.shape[-1])
    rows = [np.searchsorted(c, np.arange(nnz), side="right") - 1 for c in flat]
    return np.array(rows, np.int64).reshape(compressed.shape[:-1] + (nnz,))


def _coordinates(compressed, plain, lay, block):
    """Index arrays (batch..., row, column) of every stored scalar, shaped as the values'
    leading dims (batch..., nnz[, block rows, block columns])."""
    major = _rows_of(compressed, plain.shape[-1])
    rows, cols = (major, plain) if _KINDS[lay][3] else (plain, major)
    batch = np.indices(plain.shape[:-1], sparse=True) if plain.ndim > 1 else ()
    batch = [b[..., None] for b in batch]
    if block is not None:
        rows = rows[..., None, None] * block[0] + np.arange(block[0])[:, None]
        cols = cols[..., None, None] * block[1] + np.arange(block[1])
        batch = [b[..., None, None] for b in batch]
    return tuple(np.broadcast_arrays(*batch, rows, cols))


def _build(parts, values, size):
    """The compressed tensor of these (compressed, plain, layout, blocksize) whose dense
    storage is the values put at their coordinates (differentiable in the values)."""
    compressed, plain, lay, block = parts
    coordinates = _coordinates(compressed._data, plain._data.astype(np.int64), lay, block)
    dense = call(table.SPARSE_COMPRESSED_TENSOR, (values,), (coordinates, tuple(size)))
    return _as_compressed(dense, parts)


def _as_compressed(dense, parts):
    dense.__class__ = SparseCompressedTensor
    _PARTS[id(dense)] = parts
    weakref.finalize(dense, _PARTS.pop, id(dense), None)
    return dense


def _pattern(t):
    """Where a compressed tensor has specified elements (a bool array over its batch and
    sparse dims, per block for blocked layouts)."""
    compressed, plain, lay, block = t._compressed
    shape = tuple(t.shape[:t._batch_dim() + 2])
    if block is not None:
        shape = shape[:-2] + (shape[-2] // block[0], shape[-1] // block[1])
    mask = np.zeros(shape, bool)
    mask[_coordinates(compressed._data, plain._data.astype(np.int64), lay, None)] = True
    return mask


def _index_arrays(t):
    """_coordinates' arguments for a compressed tensor: (compressed, plain, layout, block)."""
    compressed, plain, lay, block = t._compressed
    return compressed._data, plain._data.astype(np.int64), lay, block


def _element_mask(t, mask, block):
    """mask (over batch and sparse dims, per block) over each of t's elements."""
    if block is not None:
        mask = np.repeat(np.repeat(mask, block[0], -2), block[1], -1)
    return np.broadcast_to(mask.reshape(mask.shape + (1,) * (t.dim() - mask.ndim)), t.shape)


def _tagged(dense, mask, lay, block):
    """dense, zero outside mask, as the compressed tensor specified where mask holds (no node
    of its own: the op's that made dense, as torch's)."""
    return _as_compressed(dense, _parts_from_mask(mask, lay, block))


def _parts_from_mask(mask, lay, block):
    """(compressed, plain, layout, block) of the compressed tensor specified where mask (over
    batch and sparse dims, per block) holds, in torch's order."""
    batch_dim = mask.ndim - 2
    rows_first = _KINDS[lay][3]
    ordered = mask if rows_first else np.swapaxes(mask, -1, -2)
    flat = ordered.reshape((int(np.prod(ordered.shape[:-2])),) + ordered.shape[-2:])
    counts = {int(m.sum()) for m in flat}
    if len(counts) > 1:
        raise RuntimeError("Expect the same number of specified elements per batch.")
    nnz = counts.pop() if counts else 0
    compressed = np.zeros((len(flat), ordered.shape[-2] + 1), np.int64)
    plain = np.zeros((len(flat), nnz), np.int64)
    for b, m in enumerate(flat):
        major, minor = np.nonzero(m)  # (row-major order: torch's)
        compressed[b, 1:] = np.cumsum(np.bincount(major, minlength=m.shape[0]))
        plain[b] = minor
    batch_shape = mask.shape[:batch_dim]
    compressed = compressed.reshape(batch_shape + compressed.shape[1:])
    plain = plain.reshape(batch_shape + (nnz,))
    return (Tensor._wrap(compressed), Tensor._wrap(plain), lay,
            None if block is None else tuple(block))


def _compressed_from_mask(dense, mask, lay, block):
    """The compressed tensor of `dense`'s elements where mask (over batch and sparse dims,
    per block) holds: its values picked from dense (differentiable), its gradient reaching
    dense at the specified elements only."""
    parts = _parts_from_mask(mask, lay, block)
    values = dense[tuple(Tensor._wrap(i) for i in _coordinates(
        parts[0]._data, parts[1]._data, lay, parts[3]))]
    return _build(parts, values, dense.shape)


# ---- torch.sparse_compressed_tensor and its four spellings
def _as_tensor(x, dtype=None):
    if isinstance(x, Tensor):
        return x if dtype is None else x.to(dtype)
    return creation.tensor(x, dtype=dtype)


def _validate(compressed, plain, values, size, lay, check_invariants):
    """torch's checks of the arguments (_validate_sparse_compressed_tensor_args), with its
    messages; the index checks torch makes only with check_invariants run always here, since
    the dense storage is built from the indices."""
    _, cname, pname, rows_first, blocked = _KINDS[lay]
    if compressed.dim() < 1:
        raise RuntimeError(f"{cname} must have dimensionality >= 1 but got {compressed.dim()}")
    if compressed.dim() != plain.dim():
        raise RuntimeError(f"{cname} and {pname} dimensionalities must be equal but got "
                           f"{compressed.dim()} and {plain.dim()}, respectively")
    kinds = {dtypes.int32: "Int", dtypes.int64: "Long"}
    if compressed.dtype is not plain.dtype:
        raise RuntimeError(f"{cname} and {pname} must have the same dtype, bot got "
                           f"{_scalar_name(compressed.dtype)} and "
                           f"{_scalar_name(plain.dtype)}, respectively")
    if compressed.dtype not in kinds:
        raise RuntimeError(f"{cname} and {pname} dtype must be Int or Long, but got "
                           f"{_scalar_name(compressed.dtype)}")
    batch = compressed.dim() - 1
    block_dims = 2 if blocked else 0
    if values.dim() <= batch + block_dims if blocked else values.dim() < batch + 1:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block "
                           f"dimensionalities (={batch} + {block_dims}) but got "
                           f"{values.dim()}")
    dense_dim = values.dim() - batch - 1 - block_dims
    if len(size) != batch + 2 + dense_dim:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense "
                           f"dimensionalities (={batch} + 2 + {dense_dim}) but got {len(size)}")
    block = tuple(values.shape[batch + 1:batch + 3]) if blocked else (1, 1)
    for d, (n, b) in enumerate(zip(size[batch:batch + 2], block)):
        if n % b:
            raise RuntimeError(f"tensor shape[{batch + d}] (={n}) must be divisible with "
                               f"blocksize[{d}] (={b}) as defined by values shape")
    ncompressed = size[batch] // block[0] if rows_first else size[batch + 1] // block[1]
    nplain = size[batch + 1] // block[1] if rows_first else size[batch] // block[0]
    if compressed.shape[-1] != ncompressed + 1:
        what = "rows" if rows_first else "columns"
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {what} + 1 "
                           f"(={ncompressed + 1}), but got {compressed.shape[-1]}")
    nnz = values.shape[batch] if values.dim() > batch else 0
    if plain.shape[-1] != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by "
                           f"values.shape[{batch}], but got {plain.shape[-1]}")
    c, p = compressed._data.astype(np.int64), plain._data.astype(np.int64)
    if (c[..., 0] != 0).any():
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if (c[..., -1] != nnz).any():
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    steps = np.diff(c, axis=-1)
    sorted_message = (f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, ..., "
                      f"n{'rows' if rows_first else 'cols'} are sorted and distinct along the "
                      f"last dimension values` is not satisfied.")
    if (steps < 0).any():
        raise RuntimeError(sorted_message)
    if p.size and (p.min() < 0 or p.max() >= nplain):
        raise RuntimeError(f"`0 <= {pname} < n{'cols' if rows_first else 'rows'}` is not "
                           f"satisfied.")
    if check_invariants:
        majors = _rows_of(c, nnz)
        later = (majors[..., 1:] == majors[..., :-1]) & (p[..., 1:] <= p[..., :-1])
        if later.any():
            raise RuntimeError(sorted_message)
    return None if not blocked else block


def _scalar_name(dtype):
    return dtypes.LEGACY_TYPE_NAMES.get(dtype.name, dtype.name)


def _inferred_size(compressed, plain, values, lay):
    """The smallest size that holds every specified element (torch's rule)."""
    _, _, _, rows_first, blocked = _KINDS[lay]
    batch = compressed.dim() - 1
    block = tuple(values.shape[batch + 1:batch + 3]) if blocked and values.dim() > batch + 2 \
        else (1, 1)
    ncompressed = compressed.shape[-1] - 1
    nplain = int(plain._data.max()) + 1 if plain.numel() else 0
    sparse = (ncompressed, nplain) if rows_first else (nplain, ncompressed)
    dense = values.shape[batch + 1 + (2 if blocked else 0):]
    return tuple(compressed.shape[:-1]) + (sparse[0] * block[0], sparse[1] * block[1]) + \
        tuple(dense)


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """A sparse tensor in a compressed layout (CSR, CSC, BSR or BSC: `layout` says which)."""
    if layout not in _KINDS:
        shown = "none" if layout is None else layout_name(layout)
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor "
                           f"layout but got {shown}")
    compressed, plain = _as_tensor(compressed_indices), _as_tensor(plain_indices)
    values = _as_tensor(values, dtype)
    if requires_grad and not (values.dtype.is_floating_point or values.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    if compressed.dim() < 1:
        raise RuntimeError(f"{_KINDS[layout][1]} must have dimensionality >= 1 but got "
                           f"{compressed.dim()}")
    size = _inferred_size(compressed, plain, values, layout) if size is None else \
        tuple(int(n) for n in size)
    block = _validate(compressed, plain, values, size, layout, check_invariants)
    t = _build((compressed, plain, layout, block), values, size)
    if requires_grad and not values.requires_grad:  # a leaf of its own, as torch's
        t = _as_compressed(Tensor._wrap(t._data), t._compressed)
        t.requires_grad_()
    return t


def _unpickled(compressed, plain, values, size, layout_name, requires_grad):
    lay = next(lay for lay in _KINDS if lay.name == layout_name)
    return sparse_compressed_tensor(compressed, plain, values, size, layout=lay,
                                    requires_grad=requires_grad)


def _spelling(lay):
    def constructor(compressed_indices, plain_indices, values, size=None, *, dtype=None,
                    layout=None, device=None, pin_memory=False, requires_grad=False,
                    check_invariants=None):
        return sparse_compressed_tensor(compressed_indices, plain_indices, values, size,
                                        dtype=dtype, layout=lay, device=device,
                                        requires_grad=requires_grad,
                                        check_invariants=check_invariants)
    names = _KINDS[lay]
    constructor.__name__ = f"{lay.name}_tensor"
    constructor.__doc__ = (f"A sparse tensor in the {lay.name} layout: {names[1]}, "
                           f"{names[2]} and values.")
    return constructor


sparse_csr_tensor, sparse_csc_tensor, sparse_bsr_tensor, sparse_bsc_tensor = map(
    _spelling, (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc))


# ---- conversions: Tensor.to_sparse_csr and friends
def _blocksize(blocksize):
    if blocksize is None:
        return None
    return (int(blocksize),) * 2 if isinstance(blocksize, numbers.Integral) else \
        tuple(int(b) for b in blocksize)


def to_compressed(t, lay, blocksize=None, dense_dim=None):
    """t (dense, COO or compressed) in a compressed layout, with torch's refusals."""
    if t.layout is sparse_coo and t.sparse_dim() != 2:
        raise RuntimeError(f"coo_to_sparse_csr: conversion from Sparse to {layout_name(lay)} "
                           f"for input tensors with sparse_dim()!=2 is not supported")
    if isinstance(t, SparseCompressedTensor):
        _check_recompression(t, lay, _blocksize(blocksize), dense_dim)
    dense_dim = (t.dense_dim() if t.layout is not strided else 0) if dense_dim is None \
        else dense_dim
    if t.dim() - dense_dim < 2:
        raise IndexError(f"select(): index 1 out of range for tensor of size "
                         f"[{max(t.dim(), 1)}, {1 if t.dim() else 0}] at dimension 1")
    block = _blocksize(blocksize) if _KINDS[lay][4] else None
    if _KINDS[lay][4] and block is None:
        raise RuntimeError(f"dense_to_sparse: conversion from {layout_name(t.layout)} to "
                           f"{layout_name(lay)} without blocksize argument given is not "
                           f"supported")
    sparse_end = t.dim() - dense_dim
    shape = tuple(t.shape[:sparse_end])
    if block is not None and (shape[-2] % block[0] or shape[-1] % block[1]):
        raise RuntimeError(f"dense_to_sparse_{lay.name[len('sparse_'):]}: tensor sparse size "
                           f"({shape[-2]},{shape[-1]}) must be divisible by given blocksize "
                           f"({block[0]},{block[1]})")
    if isinstance(t, SparseCompressedTensor):
        mask = _pattern(t) if t._block() is None else np.repeat(np.repeat(
            _pattern(t), t._block()[0], -2), t._block()[1], -1)
    elif t.layout is sparse_coo:
        mask = np.zeros(shape, bool)
        mask[tuple(t._indices()._data)] = True
    else:
        mask = (t._data != 0).reshape(shape + (-1,)).any(-1)
    if block is not None:  # a block is specified when any of its elements is
        mask = mask.reshape(shape[:-2] + (shape[-2] // block[0], block[0],
                                          shape[-1] // block[1], block[1])).any((-3, -1))
    # one node, torch's ToSparse<Layout>Backward0: the whole gradient passes, as torch's
    converted = call(table.TO_SPARSE[lay.name[len("sparse_"):]], (t,),
                     (_element_mask(t, mask, block),))
    return _tagged(converted, mask, lay, block)


def _check_recompression(t, lay, block, dense_dim):
    """torch's refusals of a compressed tensor's conversion to another compressed layout:
    blocks do not unblock, nor change size, and dense dims stay as they are."""
    op = f"to_{lay.name}"
    if dense_dim is not None:
        raise RuntimeError(f"{op}: conversion from {layout_name(t.layout)} to "
                           f"{layout_name(lay)} with dense_dim argument given is not supported")
    if t._block() is not None and not _KINDS[lay][4]:
        raise RuntimeError(f"sparse_compressed_{op}: expected SparseCsr or SparseCsc layout "
                           f"but got {layout_name(t.layout)}")
    if t._block() is not None and block is not None and tuple(block) != t._block():
        raise RuntimeError(f"{op}: conversion from {layout_name(t.layout)} to "
                           f"{layout_name(lay)} with blocksize changed from "
                           f"{list(t._block())} to {list(block)} is not supported")


def to_sparse(t, *args, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse: COO (sparse_dim positional) or the layout named."""
    if args and layout is not None:
        raise TypeError(f"to_sparse() takes 0 positional arguments but {len(args)} was given")
    if layout in _KINDS:
        return to_compressed(t, layout, blocksize, dense_dim)
    from . import sparse
    if isinstance(t, SparseCompressedTensor) and layout in (None, sparse_coo):
        # its specified elements, zeros too
        points = np.stack([c.reshape(-1) for c in _coordinates(
            t._compressed[0]._data, t._compressed[1]._data.astype(np.int64), t.layout,
            t._block())])
        values = Tensor.__getitem__(t, tuple(Tensor._wrap(i) for i in points))
        # (in the layout's order: sorted, as torch's coalesced indices, for CSR alone)
        return sparse._sparse(points, values, tuple(t.shape),
                              coalesced=t.layout is sparse_csr)
    return sparse.to_sparse(t, *args)


# ---- torch.sparse's products on compressed tensors
def sparse_mm(mat1, mat2):
    """torch.sparse.mm: a compressed mat1's gradient reaches only its specified elements (as
    torch's, whose gradient keeps mat1's layout); mat1 @ mat2 otherwise."""
    if isinstance(mat1, SparseCompressedTensor) and not isinstance(
            mat2, SparseCompressedTensor):
        return mat1.to_dense() @ mat2
    return mat1 @ mat2


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """beta * input + alpha * (mat1 @ mat2) at input's specified elements only (a CSR
    result with input's pattern)."""
    if not isinstance(input, SparseCompressedTensor):
        raise not_on_backend("sparse_sampled_addmm", input)
    if input.layout is not sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected result to have sparse csr layout, but got "
                           f"{layout_name(input.layout)}")
    if mat1.shape[-1] != mat2.shape[-2]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1.shape[-2]}x{mat1.shape[-1]} and {mat2.shape[-2]}x"
                           f"{mat2.shape[-1]})")
    product = mat1 @ mat2
    dense = input.to_dense() * beta + product * alpha
    return _compressed_from_mask(dense, _pattern(input), input.layout, input._block())


# ---- how torch prints one
def _repr(t):
    compressed, plain, lay, _ = t._compressed
    cname, pname = _KINDS[lay][1:3]
    indent = len("tensor(")
    parts = []
    for name, index in ((cname, compressed), (pname, plain), ("values", t.values().detach())):
        prefix = f"{name}=tensor("
        shown = printing.array_str(index._data, indent + len(prefix)) if index.numel() \
            else "[]"
        if index.numel() == 0:
            shown += f", size={tuple(index.shape)}"
        parts.append(prefix + shown + ")")
    suffixes = [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    if t.dtype.name not in ("float32", "int64", "bool"):
        suffixes.append(f"dtype={t.dtype}")
    suffixes.append(f"layout={lay!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text = "tensor(" + (",\n" + " " * indent).join(parts)
    return printing._with_suffixes(text, suffixes, indent)
