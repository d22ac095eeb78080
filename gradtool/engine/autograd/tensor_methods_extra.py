"""Tensor methods the census of real files found missing (docs/census.md): torch's aliases
(multiply, less, ...), the older casts (byte, char, short), square, repeat_interleave and
unique, each in terms of the engine's own ops, so their nodes are torch's (square is
PowBackward0, repeat_interleave's are torch's composite); unique records no node (torch's
Unique2Backward0 only refuses a backward)."""
import collections

import numpy as np

from . import creation, dtypes, memory
from .dispatch import broadcast_mismatch, call
from .indexing import check_scatter_gather, records
from .inplace import call_inplace
from .node import SavedIndices
from .ops import derivatives as table
from .tensor import Tensor, _dim


MedianResult = collections.namedtuple("median", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])


class MoreTensorMethods:
    def square(self):
        return self.pow(2)

    def square_(self):
        return self.pow_(2)

    def multiply(self, other):
        return self.mul(other)

    def multiply_(self, other):
        return self.mul_(other)

    def subtract(self, other, *, alpha=1):
        return self.sub(other, alpha=alpha)

    def true_divide(self, other):
        return self.div(other)

    def absolute(self):
        return self.abs()

    def less(self, other):
        return self.lt(other)

    def less_equal(self, other):
        return self.le(other)

    def greater(self, other):
        return self.gt(other)

    def greater_equal(self, other):
        return self.ge(other)

    def not_equal(self, other):
        return self.ne(other)

    # the in-place twins of rows (the row's node, as torch's)
    def scatter_add_(self, dim, index, src):
        return call_inplace(table.SCATTER_ADD, (self, index, src),
                            (check_scatter_gather("scatter", self, dim, index, src),))

    def triu_(self, diagonal=0):
        return call_inplace(table.TRIU, (self,), (diagonal,))

    def tril_(self, diagonal=0):
        return call_inplace(table.TRIL, (self,), (diagonal,))

    def lerp(self, end, weight):
        """self + weight * (end - self): weight a number or a tensor."""
        if isinstance(weight, Tensor):
            return call(table.LERP, (self, end, weight))
        return call(table.LERP_SCALAR, (self, end), (weight,))

    def lerp_(self, end, weight):
        if isinstance(weight, Tensor):
            return call_inplace(table.LERP, (self, end, weight))
        return call_inplace(table.LERP_SCALAR, (self, end), (weight,))

    def median(self, dim=None, keepdim=False):
        """The lower of the two middle values: of every element, or along dim as (values,
        indices)."""
        if dim is None:
            return call(table.MEDIAN, (self,))
        return MedianResult(*call(table.MEDIAN_DIM, (self,), (_dim(dim, self.dim()), keepdim)))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """|self - other| <= atol + rtol * |other|, elementwise; no gradient (a comparison)."""
        other = other.detach().numpy() if isinstance(other, Tensor) else other
        return creation.tensor(np.isclose(self.detach().numpy(), other, rtol, atol, equal_nan))

    def byte(self):
        return self.to(dtypes.uint8)

    def char(self):
        return self.to(dtypes.int8)

    def short(self):
        return self.to(dtypes.int16)

    def ndimension(self):
        return self.dim()

    def element_size(self):
        return self._data.dtype.itemsize

    @property
    def itemsize(self):
        return self._data.dtype.itemsize

    @property
    def is_sparse(self):  # the engine's tensors are all dense (strided)
        return False

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Each element (or slice along dim) repeated `repeats` times: a number repeats
        through an expand, as torch (unsqueeze, expand, clone, flatten); one count per
        element picks with index_select, as torch."""
        input = self.reshape(-1) if dim is None else self
        dim = 0 if dim is None else dim % input.dim()
        if not isinstance(repeats, Tensor):
            sizes = list(input.shape)
            sizes.insert(dim + 1, repeats)
            return input.unsqueeze(dim + 1).expand(*sizes).clone().flatten(dim, dim + 1)
        index = np.repeat(np.arange(input.shape[dim]), repeats.detach().numpy())
        return input.index_select(dim, creation.tensor(index, dtype=dtypes.int64))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct values, sorted (torch's CPU unique always sorts), with the inverse
        indices and counts on request; no gradient flows (torch's has none either)."""
        values, inverse, counts = np.unique(self.detach().numpy(), return_inverse=True,
                                            return_counts=True, axis=dim)
        out = [creation.tensor(values, dtype=self.dtype)]
        shape = tuple(self.shape) if dim is None else (self.shape[dim],)
        if return_inverse:
            out.append(creation.tensor(inverse.reshape(shape), dtype=dtypes.int64))
        if return_counts:
            out.append(creation.tensor(counts, dtype=dtypes.int64))
        return out[0] if len(out) == 1 else tuple(out)


class RemovedTensorMethods:
    """Tensor methods torch removed, answering with torch's message of what replaces them."""

    def reinforce(self, reward):
        raise RuntimeError(
            "reinforce() was removed.\nUse torch.distributions instead.\nSee "
            "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
            "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
            "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = "
            "policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
            "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\n"
            "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
            "loss.backward()\n")


ModeResult = collections.namedtuple("mode", ["values", "indices"])
HistogramResult = collections.namedtuple("histogram", ["hist", "bin_edges"])


def _long_index(index, name):
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        if name == "index_fill_":
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        got = (dtypes.LEGACY_TYPE_NAMES[index._data.dtype.name] if isinstance(index, Tensor)
               else type(index).__name__)
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {got}")
    return index


def _renorm_args(t, p, dim, maxnorm):
    """renorm's checks, in torch's order and words."""
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if t.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {t.dim()} "
                           f"dimensions")
    return p, _dim(dim, t.dim()), maxnorm


def _check_scatter_src(view, src):
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")


def _scatter_mask(t, mask, source):
    """masked_scatter's checks, in torch's order: source a tensor of t's dtype, a bool mask
    broadcasting with t, as many elements in source as the mask has ones."""
    if not isinstance(source, Tensor):
        raise TypeError(f"masked_scatter(): argument 'source' (position 2) must be Tensor, not "
                        f"{type(source).__name__}")
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {dtypes.LEGACY_TYPE_NAMES.get(mask._data.dtype.name)}")
    if source._data.dtype != t._data.dtype:
        names = dtypes.LEGACY_TYPE_NAMES
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{names.get(t._data.dtype.name)} and "
                           f"{names.get(source._data.dtype.name)}")
    mismatch = broadcast_mismatch(mask._data.shape, t._data.shape)  # torch: a is the mask
    if mismatch:
        raise RuntimeError(mismatch)
    shape = np.broadcast_shapes(mask._data.shape, t._data.shape)
    if np.count_nonzero(np.broadcast_to(mask._data, shape)) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return mask


def _put_index(t, indices, values):
    """index_put's tuple of index tensors as the numpy index the row takes, checked as torch
    checks it (every entry a long, int, byte or bool tensor, in bounds; values of t's dtype,
    broadcasting to what the index selects)."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    for position, item in enumerate(indices):
        if not isinstance(item, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument 0, but got "
                            f"{type(item).__name__}")
        if item._data.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    covered = sum(item.dim() if item._data.dtype.kind in "bu" else 1 for item in indices)
    if covered > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()} (got {covered})")
    index, dim = [], 0
    for item in indices:
        array = item._data.astype(bool) if item._data.dtype.kind in "bu" else item._data
        if array.dtype != np.bool_:
            size = t.shape[dim]
            outside = array[(array >= size) | (array < -size)]
            if outside.size:
                raise IndexError(f"index {outside.flat[0]} is out of bounds for dimension {dim} "
                                 f"with size {size}")
        index.append(array)
        dim += array.ndim if array.dtype == np.bool_ else 1
    index = tuple(index)
    if values._data.dtype != t._data.dtype:
        names = dtypes.LEGACY_TYPE_NAMES
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{names.get(t._data.dtype.name)} for the destination and "
                           f"{names.get(values._data.dtype.name)} for the source.")
    selected = np.empty(t._data.shape, np.bool_)[index].shape
    try:
        np.broadcast_shapes(values._data.shape, selected)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(selected)}") from None
    return SavedIndices(index, indices) if records(t, values) else index


class SelectingTensorMethods:
    """Selecting, writing by index, windows, modes and histograms (the census's Tensor
    ops): each a row of the table or made of the engine's ops."""

    def masked_select(self, mask):
        return call(table.MASKED_SELECT, (self, mask))

    def index_copy(self, dim, index, source):
        dim = _dim(dim, max(self.dim(), 1))
        _long_index(index, "index_copy_")
        if source.dim() and source.shape[dim if source.dim() > 1 else 0] != index.numel():
            raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be "
                             f"equal to source.size(dim) ({source.shape[dim]})")
        return call(table.INDEX_COPY, (self, index, source), (dim,))

    def index_copy_(self, dim, index, source):
        dim = _dim(dim, max(self.dim(), 1))
        _long_index(index, "index_copy_")
        return call_inplace(table.INDEX_COPY, (self, index, source), (dim,))

    def index_fill(self, dim, index, value):
        return call(table.INDEX_FILL, (self, _long_index(index, "index_fill_")),
                    (_dim(dim, max(self.dim(), 1)), _fill_value(value)))

    def index_fill_(self, dim, index, value):
        return call_inplace(table.INDEX_FILL, (self, _long_index(index, "index_fill_")),
                            (_dim(dim, max(self.dim(), 1)), _fill_value(value)))

    def put(self, index, source, accumulate=False):
        _check_put(self, index, source)
        return call(table.PUT, (self, index, source), (accumulate,))

    def put_(self, index, source, accumulate=False):
        _check_put(self, index, source)
        return call_inplace(table.PUT, (self, index, source), (accumulate,))

    def split_with_sizes(self, split_sizes, dim=0):
        """split by a list of sizes (SplitWithSizesBackward0), a number refused as torch's."""
        if not isinstance(split_sizes, (list, tuple)):
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 1) must be "
                            f"tuple of ints, not {type(split_sizes).__name__}")
        return self.split(list(split_sizes), dim)

    def renorm(self, p, dim, maxnorm):
        return call(table.RENORM, (self,), _renorm_args(self, p, dim, maxnorm))

    def renorm_(self, p, dim, maxnorm):
        return call_inplace(table.RENORM, (self,), _renorm_args(self, p, dim, maxnorm))

    def select_scatter(self, src, dim, index):
        dim = _dim(dim, self.dim())
        index = index + self.shape[dim] if index < 0 else index
        _check_scatter_src(self.detach().select(dim, index), src)
        return call(table.SELECT_SCATTER, (self, src), (dim, index))

    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        dim = _dim(dim, self.dim())
        _check_scatter_src(self.detach()[(slice(None),) * dim + (slice(start, end, step),)], src)
        return call(table.SLICE_SCATTER, (self, src), (dim, start, end, step))

    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        dim1, dim2 = _dim(dim1, self.dim()), _dim(dim2, self.dim())
        _check_scatter_src(self.detach().diagonal(offset, dim1, dim2), src)
        return call(table.DIAGONAL_SCATTER, (self, src), (offset, dim1, dim2))

    def masked_scatter(self, mask, source):
        return call(table.MASKED_SCATTER, (self, _scatter_mask(self, mask, source), source))

    def masked_scatter_(self, mask, source):
        if mask._data.dtype == np.bool_:  # in place, torch expands the mask to self first
            mask = mask.expand(self.shape)
        return call_inplace(table.MASKED_SCATTER, (self, _scatter_mask(self, mask, source),
                                                   source))

    def index_put(self, indices, values, accumulate=False):
        """self[indices] = values (or +=, accumulate) on a copy: IndexPutBackward0."""
        return call(table.INDEX_PUT, (self, values), (_put_index(self, indices, values),
                                                       accumulate))

    def index_put_(self, indices, values, accumulate=False):
        return call_inplace(table.INDEX_PUT, (self, values),
                            (_put_index(self, indices, values), accumulate))

    def take(self, index):
        _check_put(self, index, None)
        return call(table.TAKE, (self, index))

    def unfold(self, dimension, size, step):
        """The windows of `size` elements every `step` along dimension, as a last dim (a
        view)."""
        dimension = _dim(dimension, max(self.dim(), 1))
        length = self.shape[dimension] if self.dim() else 1
        if size > length:
            raise RuntimeError(f"maximum size for tensor at dimension {dimension} is {length} "
                               f"but size is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        if not self.dim():  # (a number's one window: itself, as one dim)
            return self.reshape(1)
        return call(table.UNFOLD, (self,), (dimension, size, step))

    def mode(self, dim=-1, keepdim=False):
        return ModeResult(*call(table.MODE, (self,), (_dim(dim, max(self.dim(), 1)), keepdim)))

    def logit(self, eps=None):
        return call(table.LOGIT, (self,), (eps,))

    def logit_(self, eps=None):
        return call_inplace(table.LOGIT, (self,), (eps,))

    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        t = self if dtype is None else self.to(dtype)
        dims = None if dim is None else tuple(_dim(d, max(self.dim(), 1)) for d in (
            dim if isinstance(dim, (tuple, list)) else (dim,)))
        return call(table.NANSUM, (t,), (dims, keepdim))

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        """The mean of the elements that are not NaN (torch's: nansum over their count)."""
        if self._data.dtype.kind not in "fcV":
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                               f"dtype but got {dtypes.LEGACY_TYPE_NAMES[self._data.dtype.name]}")
        count = self.isnan().logical_not().sum(dim, keepdim)
        return self.nansum(dim, keepdim, dtype=dtype) / count

    def movedim(self, source, destination):
        """The dims `source` moved to positions `destination`, the others in order (a
        permute)."""
        nd = self.dim()
        source = [_dim(d, max(nd, 1)) for d in (source if isinstance(source, (tuple, list))
                                                 else (source,))]
        destination = [_dim(d, max(nd, 1)) for d in (
            destination if isinstance(destination, (tuple, list)) else (destination,))]
        if len(source) != len(destination):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                               f"({source} dims) should contain the same number of dims as "
                               f"destination ({destination} dims)")
        order = [d for d in range(nd) if d not in source]
        for dst, src in sorted(zip(destination, source)):
            order.insert(dst, src)
        return self.permute(order) if nd else self.view(())

    moveaxis = movedim

    def logical_or(self, other):
        return _logical(np.logical_or, self, other)

    def logical_and(self, other):
        return _logical(np.logical_and, self, other)

    def logical_xor(self, other):
        return _logical(np.logical_xor, self, other)

    # in place: 0 or 1 in self's dtype, not recorded (self keeps its history, as torch's)
    def logical_or_(self, other):
        return _written(self, self.logical_or(other))

    def logical_and_(self, other):
        return _written(self, self.logical_and(other))

    def logical_xor_(self, other):
        return _written(self, self.logical_xor(other))

    def logical_not_(self):
        return _written(self, self.logical_not())

    def fill_diagonal_(self, fill_value, wrap=False):
        """The elements [i, i, ...] set to fill_value; with `wrap`, a matrix taller than wide
        starts its diagonal again every width + 1 rows (torch's layout: as_strided views of
        self, each filled: CopySlices)."""
        shape = self.shape
        if len(shape) < 2:
            raise RuntimeError("dimensions must larger than 1")
        if len(shape) > 2 and len(set(shape)) > 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        height, width = shape[0], shape[1]
        step = (sum(self.stride()),)
        self.as_strided((min(height, width),), step, self.storage_offset()).fill_(fill_value)
        if wrap and len(shape) == 2 and height > width + 1:
            rest = -(-self.numel() // (width + 1)) - width
            self.as_strided((rest,), step, self.storage_offset() + self.stride(0) * (width + 1)
                            ).fill_(fill_value)
        return self

    def histc(self, bins=100, min=0, max=0):
        """Counts of the elements in `bins` equal bins over [min, max] (the data's range when
        both are 0); elements outside are left out. No gradient, as torch's."""
        data = self._data
        if data.dtype.kind not in "fV":
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                               f"'{dtypes.LEGACY_TYPE_NAMES[data.dtype.name]}'")
        lo, hi = float(min), float(max)
        if lo == hi and data.size:
            lo, hi = float(data.min()), float(data.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo > hi:
            raise RuntimeError("torch.histc: max must be larger than min")
        counts, _ = np.histogram(data, bins, (lo, hi))
        return Tensor._wrap(counts.astype(data.dtype))

    def histogram(self, bins, *, range=None, weight=None, density=False):
        """(hist, bin_edges): bins a number of equal bins over `range` (the data's when not
        given) or a tensor of edges. No gradient."""
        data = self._data
        edges = bins._data if isinstance(bins, Tensor) else bins
        weights = None if weight is None else weight._data
        lo_hi = range if range is not None or isinstance(bins, Tensor) else (
            (float(data.min()), float(data.max())) if data.size else (0.0, 1.0))
        hist, edges = np.histogram(data, edges, lo_hi, weights=weights, density=density)
        return HistogramResult(Tensor._wrap(hist.astype(data.dtype)),
                               Tensor._wrap(edges.astype(data.dtype)))


def _logical(fn, a, b):
    b = b._data if isinstance(b, Tensor) else b
    return Tensor._wrap(np.asarray(fn(a._data, b)))


def _written(self, result):
    """result written into self, unrecorded (a value without a gradient: only the version)."""
    from .grad_mode import no_grad
    with no_grad():
        return self.copy_(result)


def _fill_value(value):
    if isinstance(value, Tensor):
        if value.dim():
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
        if value.requires_grad:  # (torch's IndexFillBackward1, not in the engine yet)
            from ..errors import NotInEngineError
            raise NotInEngineError("index_fill with a value tensor that requires grad")
        return value.item()
    return value


def _check_put(t, index, source):
    _long_index(index, "put_" if source is not None else "take")
    n = t.numel()
    flat = index._data.reshape(-1)
    if flat.size and (flat.min() < -n or flat.max() >= n):
        bad = int(flat[(flat < -n) | (flat >= n)][0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements.")
    if source is not None and source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")


class ComputingTensorMethods:
    """Turns, products, distances, statistics (the census's Tensor ops): rows of the table,
    or made of the engine's ops as torch makes them."""

    def rot90(self, k=1, dims=(0, 1)):
        dims = tuple(dims)
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self.dim() < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.dim()}")
        dims = tuple(_dim(d, self.dim()) for d in dims)
        if dims[0] == dims[1]:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = "
                               f"{dims[0]} and dim1 = {dims[1]}")
        return call(table.ROT90, (self,), (k, dims))

    def cross(self, other, dim=None):
        if dim is None:  # (torch: the first dim of size 3, with a deprecation warning)
            import warnings
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                          "Please either pass the dim explicitly or simply use "
                          "torch.linalg.cross.\nThe default value of dim will change to agree "
                          "with that of linalg.cross in a future release.", UserWarning,
                          stacklevel=2)
            shape = np.broadcast_shapes(tuple(self.shape), tuple(other.shape))
            dim = next((d for d, n in enumerate(shape) if n == 3), -1)
        return linalg_cross(self, other, dim)

    def dist(self, other, p=2):
        return call(table.DIST, (self, other), (p,))

    def clamp_min_(self, min):
        if isinstance(min, Tensor):
            return call_inplace(table.CLAMP_MIN_TENSOR, (self, min))  # (ClampMinBackward1)
        return call_inplace(table.CLAMP_MIN, (self,), (min, None))  # (ClampMinBackward0)

    def clamp_max_(self, max):
        if isinstance(max, Tensor):
            return call_inplace(table.CLAMP_MAX_TENSOR, (self, max))  # (ClampMaxBackward1)
        return call_inplace(table.CLAMP_MAX, (self,), (None, max))  # (ClampMaxBackward0)

    def qr(self, some=True):
        """Deprecated: linalg.qr, with `some` for its mode (torch warns the same)."""
        import warnings
        from . import linalg
        warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed "
                      "in a future PyTorch release.", UserWarning, stacklevel=2)
        return linalg.qr(self, "reduced" if some else "complete")

    def lu(self, pivot=True, get_infos=False):
        """(LU, pivots) of the matrix (and the infos on request): linalg.lu_factor_ex's."""
        from . import linalg
        LU, pivots, infos = linalg.lu_factor_ex(self, pivot=pivot)
        return (LU, pivots, infos) if get_infos else (LU, pivots)

    def cov(self, *, correction=1, fweights=None, aweights=None):
        """The covariance of the rows (variables) over the columns (observations), weighted
        by fweights (counts) and aweights (importances), as torch's."""
        if self.dim() > 2:
            raise ValueError(f"cov(): expected input to have two or fewer dimensions but got "
                             f"an input with {self.dim()} dimensions")
        x = self.view(1, -1) if self.dim() < 2 else self
        weights = None
        if fweights is not None:
            weights = fweights
        if aweights is not None:
            weights = aweights if weights is None else weights * aweights
        if weights is None:
            w_sum = x.shape[1]
            mean = x.sum(1) / w_sum
            norm = w_sum - correction
        else:
            w_sum = weights.sum()
            mean = (x * weights).sum(1) / w_sum
            norm = w_sum - (correction * (weights * aweights).sum() / w_sum
                            if aweights is not None else correction)
        centred = x - mean.unsqueeze(1)
        product = (centred * weights if weights is not None else centred) @ centred.mT.conj()
        return (product / (norm if not isinstance(norm, Tensor) else norm.clamp(min=0))
                ).squeeze()

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _quantile(self, q, dim, keepdim, interpolation, ignore_nan=False)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _quantile(self, q, dim, keepdim, interpolation, ignore_nan=True)


def linalg_cross(input, other, dim=-1):
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input.dim()
    dim = _dim(dim, nd)
    shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    if shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim - nd if dim - nd < 0 else dim} "
                           f"must have length 3. Got {input.shape[dim - nd]} and "
                           f"{other.shape[dim - nd]}")
    return call(table.LINALG_CROSS, (input, other), (dim,))


def _quantile(t, q, dim, keepdim, interpolation, ignore_nan):
    """torch's quantile: the sorted values at rank q (n - 1), between neighbours as
    `interpolation` says (a NaN in a row makes its quantiles NaN unless ignore_nan)."""
    from .composites import broadcast_tensors
    from .creation import tensor as _tensor
    name = "nanquantile" if ignore_nan else "quantile"
    if t._data.dtype.kind not in "fV":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    q = _tensor(q, dtype=t.dtype) if scalar_q else q
    if q.dim() > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if ((q._data < 0) | (q._data > 1)).any():
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q.item()}"
                           if scalar_q else f"{name}() q values must be in the range [0, 1]")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"{name}() interpolation must be one of linear, lower, higher, "
                         f"midpoint or nearest. Got {interpolation}")
    # op for op as torch's (so the graph holds its nodes): the output's shape (the reduced
    # input's), the sorted values viewed as its rows, the ranks in each row, two gathers and
    # a lerp_ between them; q's dim moved first
    if dim is not None and t.dim():
        wrapped = _dim(dim, t.dim())
        out_shape = list(t.shape)
        out_shape[wrapped:wrapped + 1] = [1] if keepdim else []
    else:
        wrapped, out_shape = 0, [1] * t.dim() if keepdim else []
    if dim is None:
        values = t.flatten().sort().values
    elif wrapped == t.dim() - 1:
        values = t.sort().values
    else:
        values = t.unsqueeze(-1).transpose(wrapped, -1).sort().values
    values = values.view(out_shape + [values.shape[-1]])
    if ignore_nan:  # (from the values that are not NaN; none: rank 0, a NaN)
        ranks = q * (values.isnan().logical_not_().sum(-1, True) - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:  # (a row with a NaN: its last, a NaN)
        last = values.shape[-1] - 1
        ranks, has_nan = broadcast_tensors(q * last, values.isnan().any(-1, True))
        ranks = ranks.masked_fill(has_nan, last)
    if interpolation == "lower":
        ranks.floor_()
    elif interpolation == "higher":
        ranks.ceil_()
    elif interpolation == "nearest":
        ranks.round_()
    ranks_below = ranks.long()
    out = values.gather(-1, ranks_below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks.new_full(ranks.shape, 0.5) if interpolation == "midpoint" else \
            ranks - ranks_below
        out.lerp_(values.gather(-1, ranks.ceil_().long()), weights)
    if q.dim() == 0:
        return out.squeeze_(-1)
    return out.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


class SparseTensorMethods:
    """A dense tensor's way to a sparse one (gradtool/engine/sparse.py holds them densely),
    and what it answers when asked for a sparse tensor's parts (torch's refusals)."""

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        from . import sparse_compressed
        return sparse_compressed.to_sparse(self, *args, layout=layout, blocksize=blocksize,
                                           dense_dim=dense_dim)

    def to_sparse_coo(self, sparse_dim=None):
        return self.to_sparse(*(() if sparse_dim is None else (sparse_dim,)))

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self if dtype is None else self.to(dtype)

    def to_sparse_csr(self, dense_dim=None):
        from . import sparse_compressed
        return sparse_compressed.to_compressed(self, memory.sparse_csr, None, dense_dim)

    def to_sparse_csc(self, dense_dim=None):
        from . import sparse_compressed
        return sparse_compressed.to_compressed(self, memory.sparse_csc, None, dense_dim)

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        from . import sparse_compressed
        return sparse_compressed.to_compressed(self, memory.sparse_bsr, blocksize, dense_dim)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        from . import sparse_compressed
        return sparse_compressed.to_compressed(self, memory.sparse_bsc, blocksize, dense_dim)

    def sparse_mask(self, mask):
        """self's elements where the sparse mask has specified ones, in mask's layout (the
        gradient reaches those elements only)."""
        from . import sparse, sparse_compressed
        if mask.layout is memory.strided:
            raise sparse_compressed.not_on_backend("sparse_mask", self)
        if tuple(self.shape) != tuple(mask.shape):
            raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has "
                               f"size {list(self.shape)} but mask has size {list(mask.shape)}")
        if mask.layout is memory.sparse_coo:  # (mask's indices as they are, duplicates too)
            indices = mask._indices()._data
            return sparse._sparse(indices, self[tuple(Tensor._wrap(i) for i in indices)],
                                  tuple(self.shape), coalesced=mask.is_coalesced())
        return sparse_compressed._compressed_from_mask(
            self, sparse_compressed._pattern(mask), mask.layout, mask._block())


def _needs_layout(name, kind):
    """A sparse tensor's accessor asked of a tensor without that layout: torch's refusal."""
    def accessor(self, *args):
        from .sparse_compressed import layout_name
        raise RuntimeError(f"{name} expected {kind} tensor layout but got "
                           f"{layout_name(self.layout)}")
    accessor.__name__ = name
    return accessor


for _name, _kind in (("indices", "sparse coordinate"), ("coalesce", "sparse coordinate"),
                     ("is_coalesced", "sparse coordinate"), ("values", "sparse"),
                     ("crow_indices", "sparse row compressed"),
                     ("col_indices", "sparse row compressed"),
                     ("ccol_indices", "sparse column compressed"),
                     ("row_indices", "sparse column compressed")):
    setattr(SparseTensorMethods, _name, _needs_layout(_name, _kind))


class AliasTensorMethods:
    """torch's other spellings of engine ops (swapdims, broadcast_to, msort), and the
    questions a tensor answers about itself, each in terms of the engine's own ops so the
    nodes are torch's."""

    def swapdims(self, dim0, dim1):
        return self.transpose(dim0, dim1)

    def broadcast_to(self, size):
        return self.expand(size)

    def msort(self):
        return self.sort(0).values

    def take_along_dim(self, indices, dim=None):
        """gather along dim after broadcasting self and indices over the other dims, as
        torch's (the whole tensor flattened when dim is None)."""
        if indices._data.dtype != np.int64:
            raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but "
                               f"got {dtypes.LEGACY_TYPE_NAMES[indices._data.dtype.name]}")
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        if self.dim() != indices.dim():
            raise RuntimeError(
                f"torch.take_along_dim(): input and indices should have the same number of "
                f"dimensions, but got {self.dim()} dimensions for input, and {indices.dim()} "
                f"dimensions for indices")
        dim = _dim(dim, self.dim())
        sizes = list(self.shape)
        sizes[dim] = indices.shape[dim]
        # (a copy, as torch's: its gather saves new memory, not the user's index)
        indices = indices.broadcast_to(
            np.broadcast_shapes(tuple(sizes), tuple(indices.shape))).clone()
        sizes = list(indices.shape)
        sizes[dim] = self.shape[dim]
        return self.broadcast_to(np.broadcast_shapes(tuple(sizes), tuple(self.shape))).gather(
            dim, indices)

    def inner(self, other):
        """The products of self's and other's last dims, summed (a product when either is a
        number)."""
        if self.dim() == 0 or other.dim() == 0:
            return self * other
        if self.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors "
                               f"but got shapes {list(self.shape)} and {list(other.shape)}")
        size = self.shape[-1]
        product = self.reshape(-1, size) @ other.reshape(-1, size).t()
        return product.reshape(tuple(self.shape[:-1]) + tuple(other.shape[:-1]))

    def vdot(self, other):
        """The dot product with self conjugated."""
        if self.dim() != 1 or other.dim() != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {other.dim()}D "
                               f"tensors")
        if self._data.dtype != other._data.dtype:
            names = dtypes.LEGACY_TYPE_NAMES
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{names[self._data.dtype.name]} and "
                               f"{names[other._data.dtype.name]}")
        if self.shape != other.shape:
            n, m = self.shape[0], other.shape[0]
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] "
                               f"to have the same number of elements, but got {n} and {m} "
                               f"elements respectively")
        return call(table.VDOT, (self, other))

    def rad2deg(self):
        return call(table.RAD2DEG, (_real_angles(self, "rad2deg"),))

    def rad2deg_(self):
        return call_inplace(table.RAD2DEG, (_real_angles(self, "rad2deg"),))

    def deg2rad(self):
        return call(table.DEG2RAD, (_real_angles(self, "deg2rad"),))

    def deg2rad_(self):
        return call_inplace(table.DEG2RAD, (_real_angles(self, "deg2rad"),))

    def kthvalue(self, k, dim=-1, keepdim=False):
        """(values, indices) of the k-th smallest element along dim."""
        dim = _dim(dim, max(self.dim(), 1))
        size = self.shape[dim] if self.dim() else 1
        if size == 0:
            raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
        return KthvalueResult(*call(table.KTHVALUE, (self,), (k, dim, keepdim)))

    def diagflat(self, offset=0):
        return self.contiguous().view(-1).diag_embed(offset)

    def count_nonzero(self, dim=None):
        return Tensor._wrap(np.asarray(np.count_nonzero(self._data, axis=dim), np.int64))

    def isposinf(self):
        return Tensor._wrap(np.isposinf(self._data) if self._data.dtype.kind in "fcV"
                            else np.zeros(self._data.shape, np.bool_))

    def isneginf(self):
        return Tensor._wrap(np.isneginf(self._data) if self._data.dtype.kind in "fcV"
                            else np.zeros(self._data.shape, np.bool_))

    def isreal(self):
        data = self._data
        return Tensor._wrap(data.imag == 0 if data.dtype.kind == "c"
                            else np.ones(data.shape, np.bool_))

    def is_neg(self):
        return False  # the engine keeps no negative bit: a neg is computed

    def resolve_neg(self):
        return self

    def is_signed(self):
        return self._data.dtype.kind not in "ub"

    def is_same_size(self, other):
        return self.shape == other.shape

    def is_nonzero(self):
        if self._data.size == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if self._data.size > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(-1)[0] != 0)

    def get_device(self):
        return -1  # torch's answer for a CPU tensor


def _real_angles(t, name):
    if t._data.dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    return t


class InPlaceTwinMethods:
    """The in-place forms torch has of ops the engine computes out of place: each writes its
    row's result into self (call_inplace: the version bump, torch's node and its checks)."""

    def cumsum_(self, dim, *, dtype=None):
        return call_inplace(table.CUMSUM, (self,), (_dim(dim, self._data.ndim),))

    def cumprod_(self, dim, *, dtype=None):
        return call_inplace(table.CUMPROD, (self,), (_dim(dim, self._data.ndim),))

    def remainder_(self, other):
        if isinstance(other, Tensor):
            return call_inplace(table.REMAINDER, (self, other))
        return call_inplace(table.REMAINDER_SCALAR, (self,), (other,))

    def fmod_(self, other):
        if isinstance(other, Tensor):
            return call_inplace(table.FMOD, (self, other))
        return call_inplace(table.FMOD_SCALAR, (self,), (other,))

    def subtract_(self, other, *, alpha=1):
        return self.sub_(other, alpha=alpha)

    def absolute_(self):
        return self.abs_()

    def true_divide_(self, other):
        return self.div_(other)

    def swapdims_(self, dim0, dim1):
        return self.transpose_(dim0, dim1)

    def mvlgamma_(self, p):
        if p < 1:
            raise RuntimeError("p has to be greater than or equal to 1")
        return call_inplace(table.MVLGAMMA, (self,), (int(p),))

    def igamma_(self, other):
        return call_inplace(table.IGAMMA, (self, other))

    def igammac_(self, other):
        return call_inplace(table.IGAMMAC, (self, other))


def _compared_in_place(name, ordered):
    """x.eq_(y), x.lt_(y), ...: the comparison written into x (its rows: ops/derivatives.py)."""
    number, tensor = (getattr(table, f"{name.upper()}_"), getattr(table, f"{name.upper()}_TENSOR_"))

    def method(self, other):
        if ordered:
            for data in (self._data, np.asarray(other._data if isinstance(other, Tensor)
                                                else other)):
                if data.dtype.kind == "c":
                    raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                              f"'{dtypes.LEGACY_TYPE_NAMES[data.dtype.name]}'")
        if isinstance(other, Tensor):
            return call_inplace(tensor, (self, other))
        return call_inplace(number, (self,), (other,))
    return method


class ComparedInPlaceMethods:
    eq_, ne_ = _compared_in_place("eq", False), _compared_in_place("ne", False)
    lt_, le_ = _compared_in_place("lt", True), _compared_in_place("le", True)
    gt_, ge_ = _compared_in_place("gt", True), _compared_in_place("ge", True)
    not_equal_, less_, less_equal_, greater_, greater_equal_ = ne_, lt_, le_, gt_, ge_


class LayoutQuestionMethods:
    """What a CPU tensor answers about where and how it is stored, as torch's CPU build."""

    is_meta = is_mps = is_xla = is_vulkan = is_ipu = is_mtia = is_maia = is_mkldnn = False
    is_nested = is_quantized = is_sparse_csr = False

    @property
    def nbytes(self):
        return self._data.nbytes

    def storage_offset(self):
        """Where the tensor starts in the array it views, in elements (0 for its own)."""
        base = memory.owning_array(self._data)
        start = self._data.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        return start // self._data.itemsize if start >= 0 else 0

    def positive(self):
        if self._data.dtype == np.bool_:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                          **kwargs):
        return empty_strided(size, stride, dtype=dtype or dtypes.from_numpy_dtype(
            self._data.dtype), requires_grad=requires_grad)

    def hsplit(self, indices_or_sections):
        return hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        return vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        return dsplit(self, indices_or_sections)

    def corrcoef(self):
        return corrcoef(self)


def _bitwise(numpy_fn, kernel):
    """A bitwise op of integer or bool tensors (and numbers): numpy's fn on operands promoted
    as torch promotes them; floating and complex operands are refused in torch's words. No
    gradient: its result is an integer."""
    def method(self, other=None):
        operands = (self,) if other is None else (self, other)
        dtype = dtypes.result_type(*operands)
        if dtype.kind not in "iub":
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for "
                                      f"'{dtypes.LEGACY_TYPE_NAMES[dtype.name]}'")
        arrays = [np.asarray(x._data if isinstance(x, Tensor) else x).astype(dtype, copy=False)
                  for x in operands]
        return Tensor._wrap(np.asarray(numpy_fn(*arrays)))

    def in_place(self, other=None):
        result = method(self, other)
        from .grad_mode import no_grad
        with no_grad():  # (an integer result: nothing to differentiate, only the version)
            return self.copy_(result)

    def reflected(self, other):
        return method(Tensor._wrap(np.asarray(other)) if not isinstance(other, Tensor)
                      else other, self)
    return method, in_place, reflected


class BitwiseTensorMethods:
    """&, |, ^, ~, << and >> on integer and bool tensors, with torch's names and in-place
    forms."""

    bitwise_and, bitwise_and_, __rand__ = _bitwise(np.bitwise_and, "bitwise_and")
    bitwise_or, bitwise_or_, __ror__ = _bitwise(np.bitwise_or, "bitwise_or")
    bitwise_xor, bitwise_xor_, __rxor__ = _bitwise(np.bitwise_xor, "bitwise_xor")
    bitwise_left_shift, bitwise_left_shift_, __rlshift__ = _bitwise(np.left_shift, "lshift")
    bitwise_right_shift, bitwise_right_shift_, __rrshift__ = _bitwise(np.right_shift, "rshift")
    bitwise_not, bitwise_not_, _ = _bitwise(np.invert, "bitwise_not")
    __and__, __iand__ = bitwise_and, bitwise_and_
    __or__, __ior__ = bitwise_or, bitwise_or_
    __xor__, __ixor__ = bitwise_xor, bitwise_xor_
    __lshift__, __ilshift__ = bitwise_left_shift, bitwise_left_shift_
    __rshift__, __irshift__ = bitwise_right_shift, bitwise_right_shift_
    del _

    def __invert__(self):
        if self._data.dtype.kind not in "iub":  # (the operator's own words, as torch's)
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return self.bitwise_not()


# ---- torch-level functions the methods above share (torch.hsplit, torch.corrcoef, ...)
def _split_by(name, dim, input, indices_or_sections):
    """hsplit/vsplit/dsplit: numpy's rule, equal parts of a dim (which must divide) or cuts
    at the given indices."""
    size = input.shape[dim]
    if isinstance(indices_or_sections, int):
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {indices_or_sections}!")
        step = size // indices_or_sections
        cuts = list(range(step, size, step))
    else:
        cuts = list(indices_or_sections)
    bounds = [0] + [min(max(c if c >= 0 else c + size, 0), size)
                    for c in cuts] + [size]
    return tuple(input.narrow(dim, start, max(stop - start, 0))
                 for start, stop in zip(bounds, bounds[1:]))


def hsplit(input, indices_or_sections):
    if input.dim() < 1:
        raise RuntimeError(f"torch.hsplit requires a tensor with at least 1 dimension, but "
                           f"got a tensor with {input.dim()} dimensions!")
    return _split_by("hsplit", 0 if input.dim() == 1 else 1, input, indices_or_sections)


def vsplit(input, indices_or_sections):
    if input.dim() < 2:
        raise RuntimeError(f"torch.vsplit requires a tensor with at least 2 dimension, but "
                           f"got a tensor with {input.dim()} dimensions!")
    return _split_by("vsplit", 0, input, indices_or_sections)


def dsplit(input, indices_or_sections):
    if input.dim() < 3:
        raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but "
                           f"got a tensor with {input.dim()} dimensions!")
    return _split_by("dsplit", 2, input, indices_or_sections)


def corrcoef(input):
    """Pearson's correlation coefficients of the rows (variables) of input: cov divided by
    the products of standard deviations, clipped to [-1, 1] as torch's."""
    c = input.cov()
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = d.real.sqrt() if d.is_complex() else d.sqrt()
    c = c / stddev.unsqueeze(1)
    c = c / stddev.unsqueeze(0)
    if c.is_complex():
        from .complex_numbers import complex as _complex
        return _complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs):
    """An uninitialised tensor laid out with the given strides (in elements)."""
    numpy_dtype = dtypes.to_numpy_dtype(dtype) if dtype is not None else dtypes.DEFAULT_FLOAT
    size, stride = tuple(size), tuple(stride)
    extent = (1 + sum((n - 1) * s for n, s in zip(size, stride))
              if all(size) else 0)
    base = np.zeros(extent, numpy_dtype)
    data = np.lib.stride_tricks.as_strided(base, size,
                                            [s * base.itemsize for s in stride])
    out = Tensor._wrap(data)
    return out.requires_grad_() if requires_grad else out
