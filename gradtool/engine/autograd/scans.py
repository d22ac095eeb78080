"""torch's scans and reductions beyond sums: cummax, cummin, logcumsumexp, aminmax, nanmedian
(rows of the op table), as Tensor methods returning torch's named tuples; and the ops with
integer results, outside the graph: bincount, unique_consecutive, searchsorted, bucketize.
torch.<name> for each method is the method (namespace.py)."""
import collections
import warnings

import numpy as np

from . import dtypes
from .dispatch import call
from .inplace import call_inplace
from .ops import derivatives as table
from .indexing import check_scatter_gather
from .out_argument import rules_of, written_to
from .tensor import Tensor, _dim

CummaxResult = collections.namedtuple("cummax", ["values", "indices"])
CumminResult = collections.namedtuple("cummin", ["values", "indices"])
AminmaxResult = collections.namedtuple("aminmax", ["min", "max"])
NanmedianResult = collections.namedtuple("nanmedian", ["values", "indices"])


class ScanTensorMethods:
    def cummax(self, dim):
        return CummaxResult(*call(table.CUMMAX, (self,), (_dim(dim, self.dim()),)))

    def cummin(self, dim):
        return CumminResult(*call(table.CUMMIN, (self,), (_dim(dim, self.dim()),)))

    def logcumsumexp(self, dim):
        return call(table.LOGCUMSUMEXP, (self,), (_dim(dim, self.dim()),))

    def aminmax(self, *, dim=None, keepdim=False):
        if dim is not None:
            dim = _dim(dim, self.dim())
            if self.dim() and self.shape[dim] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
        elif self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        return AminmaxResult(*call(table.AMINMAX, (self,), (dim, keepdim)))

    def nanmedian(self, dim=None, keepdim=False):
        if dim is None:
            return call(table.NANMEDIAN, (self,))
        return NanmedianResult(*call(table.NANMEDIAN_DIM, (self,),
                                     (_dim(dim, self.dim()), keepdim)))

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        return call(table.SCATTER_REDUCE, *_scatter_reduce_operands(self, dim, index, src,
                                                                    reduce, include_self))

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return call_inplace(table.SCATTER_REDUCE, *_scatter_reduce_operands(
            self, dim, index, src, reduce, include_self))

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        return call(table.INDEX_REDUCE, *_index_reduce_operands(self, dim, index, source,
                                                                reduce, include_self))

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        return call_inplace(table.INDEX_REDUCE, *_index_reduce_operands(
            self, dim, index, source, reduce, include_self))

    def bincount(self, weights=None, minlength=0):
        """How often each of 0, 1, ..., max is in a 1-d tensor of non-negative integers (the
        sum of their weights: float64, float32 weights kept)."""
        data = self._data
        if data.dtype.kind not in "iub" or data.dtype == np.bool_:
            raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                      f"'{dtypes.LEGACY_TYPE_NAMES[data.dtype.name]}'")
        if minlength < 0:
            raise RuntimeError("minlength should be >= 0")
        if data.ndim != 1 or (data.size and data.min() < 0):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if weights is None:
            return Tensor._wrap(np.bincount(data, minlength=minlength).astype(np.int64))
        w = weights._data
        if w.ndim != 1 or w.shape[0] != data.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        dtype = np.float32 if w.dtype == np.float32 else np.float64
        return Tensor._wrap(np.bincount(data, w.astype(np.float64),
                                        minlength=minlength).astype(dtype))

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """The tensor with each run of equal elements (of equal slices along dim) kept once;
        with return_inverse each element's run, with return_counts each run's length."""
        data = self._data
        if dim is None:
            flat = data.reshape(-1)
            starts = np.flatnonzero(np.concatenate([[True], flat[1:] != flat[:-1]])) \
                if flat.size else np.zeros(0, np.int64)
            values = flat[starts]
            inverse_shape = data.shape
        else:
            d = _dim(dim, data.ndim)
            moved = np.moveaxis(data, d, 0).reshape(data.shape[d], -1)
            changed = (moved[1:] != moved[:-1]).any(axis=1)
            starts = np.flatnonzero(np.concatenate([[True], changed])) if len(moved) else \
                np.zeros(0, np.int64)
            values = np.take(data, starts, axis=d)
            inverse_shape = (data.shape[d],)
        length = int(np.prod(inverse_shape))
        out = [Tensor._wrap(np.ascontiguousarray(values))]
        if return_inverse:
            run = np.zeros(length, np.int64)
            run[starts[1:]] = 1
            out.append(Tensor._wrap(np.cumsum(run).reshape(inverse_shape)))
        if return_counts:
            out.append(Tensor._wrap(np.diff(np.append(starts, length)).astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)


def _scatter_reduce_operands(self, dim, index, src, reduce, include_self):
    if reduce not in ("sum", "prod", "mean", "amax", "amin", "max", "min"):  # (max, min: see
        # kernels.scatter_reduce)
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    dim = check_scatter_gather("scatter", self, dim, index, src)
    index = index.to(dtypes.int64) if index._data.dtype != np.int64 else index
    return (self, index, src), (dim, reduce, bool(include_self))


def _index_reduce_operands(self, dim, index, source, reduce, include_self):
    warnings.warn("index_reduce() is in beta and the API may change at any time.",
                  UserWarning, stacklevel=3)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = _dim(dim, self.dim())
    if index.numel() != source.shape[dim]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be "
                           f"equal to source.size(dim): ({source.shape[dim]}), for dim: {dim}")
    return (self, index.to(dtypes.int64), source), (dim, reduce, bool(include_self))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None,
                 sorter=None):
    """Where each value of input would go in the sorted last dim of sorted_sequence (after
    equal values with right=True or side='right'); sorter orders an unsorted sequence."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    boundaries = sorted_sequence._data
    values = input._data if isinstance(input, Tensor) else np.asarray(input)
    if sorter is not None:
        if sorter._data.shape != boundaries.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(boundaries.shape)}and got "
                               f"sorter tensor {list(sorter._data.shape)}")
        boundaries = np.take_along_axis(boundaries, sorter._data, axis=-1)
    if boundaries.ndim > 1 and boundaries.shape[:-1] != values.shape[:-1]:
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(boundaries.shape)} and input value tensor "
            f"{list(values.shape)}")
    where = "right" if right else "left"
    if boundaries.ndim <= 1:
        found = np.searchsorted(boundaries, values, where)
    else:  # one search per leading index
        rows, found = boundaries.reshape(-1, boundaries.shape[-1]), np.empty(values.shape,
                                                                             np.int64)
        flat = found.reshape(len(rows), -1)
        for r, (row, vals) in enumerate(zip(rows, values.reshape(len(rows), -1))):
            flat[r] = np.searchsorted(row, vals, where)
    return written_to(out, Tensor._wrap(np.asarray(found, np.int32 if out_int32 else np.int64)),
                      "searchsorted", rules_of("searchsorted"))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each value of input among 1-d boundaries: searchsorted's index (right
    counts a value equal to a boundary in the bucket above it)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


NAMES = ("cummax", "cummin", "logcumsumexp", "aminmax", "nanmedian", "bincount",
         "unique_consecutive", "scatter_reduce")
