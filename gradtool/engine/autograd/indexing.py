"""Tensor indexing as torch's: x[...] reads (basic indexing as views, advanced indexing as
IndexBackward0) and x[...] = v writes (index_put_), with torch's index checks."""
import numbers

import numpy as np

from . import dtypes, grad_mode
from .dispatch import broadcast_mismatch, call
from .inplace import call_inplace
from .node import SavedIndices
from .ops import derivatives as table
from .tensor import Tensor, _as_tensor, _dim

# Any sequence of ints indexes as the int64 tensor it spells (torch: range included).
_SEQUENCE_INDEX = (list, tuple, range, np.ndarray)


def _index_items(index):
    """The items of an index, read as torch reads it: a tuple, or a short list holding a
    slice, None, Ellipsis, a tensor or a sequence (numpy's heuristic), is several items."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            i is None or i is Ellipsis or isinstance(i, (slice, Tensor) + _SEQUENCE_INDEX)
            for i in index):
        return tuple(index)
    return (index,)


def _apply_basic(t, items, skip_full_slices):
    """torch's applySlicing: ints, slices, None, Ellipsis and bools become views of `t`
    (select, slice, unsqueeze), one dim at a time; the tensor indices are kept for a single
    advanced indexing after them, at the dims they address in that view: so an int next to
    a tensor index is a select (x[0, :, [1, 0]] of a (2, 3, 4) tensor is (3, 2), not
    numpy's (2, 3)). Returns (view, {dim: index array}, the index tensors read)."""
    ndim = t._data.ndim
    specified = 0
    for item in items:
        if isinstance(item, Tensor):
            specified += item._data.ndim if item._data.dtype == np.bool_ else 1
        elif not (item is None or item is Ellipsis or isinstance(item, (bool, np.bool_))):
            specified += 1
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    out, dim, advanced, tensors = t, 0, {}, []
    for item in items:
        if isinstance(item, Tensor) and item._data.ndim == 0:
            item = item._data.item()  # a 0-d tensor indexes as the number it holds
        if item is Ellipsis:
            dim += ndim - specified
        elif item is None or isinstance(item, (bool, np.bool_)):
            out = call(table.UNSQUEEZE, (out,), (dim,))
            if item is not None:  # True: the new dim, kept; False: emptied
                advanced[dim] = np.zeros(1 if item else 0, dtype=np.int64)
            dim += 1
        elif isinstance(item, numbers.Integral):
            size = out._data.shape[dim]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size "
                                 f"{size}")
            out = call(table.SELECT, (out,), (dim, int(item) % size))
        elif isinstance(item, slice):
            out = _slice(out, dim, item, skip_full_slices)
            dim += 1
        elif isinstance(item, (Tensor,) + _SEQUENCE_INDEX):
            array = _index_array(item)
            advanced[dim] = array
            if isinstance(item, Tensor):
                tensors.append(item)
            dim += array.ndim if array.dtype == np.bool_ else 1
        else:
            raise TypeError(f"only integers, slices (`:`), ellipsis (`...`), None and long or "
                            f"byte Variables are valid indices (got {type(item).__name__})")
    return out, advanced, tensors


def _slice(t, dim, item, skip_full):
    """t[..., start:stop:step] along dim; torch skips a slice from 0 to the end in steps of 1
    inside a tuple index (x[:, :] is an alias of x), never alone (x[:] is a SliceBackward0)."""
    step = 1 if item.step is None else _as_int(item.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    size = t._data.shape[dim]
    start, stop, _ = item.indices(size)
    if skip_full and item.start in (None, 0) and step == 1 and (
            item.stop is None or _as_int(item.stop) >= size):
        return t
    return call(table.SLICE, (t,), (dim, start, max(start, stop), step))


def _as_int(i):
    return int(i._data.item()) if isinstance(i, Tensor) else int(i)


def _index_array(item):
    """A tensor index as an int64 or bool array (an empty list is an empty int index)."""
    array = item._data if isinstance(item, Tensor) else np.asarray(
        [_index_array(i) if isinstance(i, Tensor) else i for i in item]
        if isinstance(item, (list, tuple)) else item)
    if array.dtype.kind not in "iub" and not (array.size == 0 and array.dtype.kind == "f"):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return array if array.dtype.kind in "ib" else array.astype(np.int64)


def _advanced_index(advanced, tensors, recorded):
    """The numpy index for the tensor indices found by _apply_basic: numpy's rules then
    agree with torch's (indexed dims stay in place when adjacent, else go first). A k-d bool
    mask covers k dims, so the dims after it are counted from its last. Where the op is
    `recorded` (an input requires grad), the index tensors are saved with it, as torch's."""
    index, dim, last = [], 0, max(advanced)
    while dim <= last:
        item = advanced.get(dim, slice(None))
        index.append(item)
        dim += item.ndim if isinstance(item, np.ndarray) and item.dtype == np.bool_ else 1
    return SavedIndices(index, tensors) if recorded and tensors else tuple(index)


def records(*inputs):
    """Whether an op on these inputs is recorded in the graph (grad mode, and one requires
    grad): only then are its index tensors saved."""
    return grad_mode.state.grad_enabled and any(
        isinstance(x, Tensor) and x._requires_grad for x in inputs)


batching_hook = None  # vmap's rule for an index tensor batched under vmap (func/rules.py)


def _getitem(t, index):
    """Indexing as torch does it: views for ints, slices and None, then IndexBackward0 for
    tensor and list indices."""
    if batching_hook is not None:
        out = batching_hook(t, index)
        if out is not NotImplemented:
            return out
    items = _index_items(index)
    if len(items) == 1 and isinstance(items[0], slice) and not isinstance(index, tuple):
        return _slice(t, 0, items[0], skip_full=False)
    out, advanced, tensors = _apply_basic(t, items, skip_full_slices=True)
    if advanced:
        return call(table.INDEX, (out,), (_advanced_index(advanced, tensors, records(out)),))
    if out is t:  # t[...] or t[:, :]: still a new tensor, as in torch
        out = call(table.ALIAS, (t,))
    return out


def _setitem(t, index, value):
    """torch's set_item: the view the basic items select is filled (fill_), copied into
    (copy_), or index_put_ where tensor indices follow."""
    items = _index_items(index)
    if index is False:
        return  # nothing selected
    if index is True:  # (alone, not in a tuple: a plain new dim)
        items = (None,)
    view, advanced, tensors = _apply_basic(t, items, skip_full_slices=True)
    if not isinstance(value, Tensor):  # a number is a 0-d tensor of t's dtype
        value = Tensor._wrap(np.asarray(value, dtype=t._data.dtype))
    if not advanced and value._data.shape == view._data.shape:
        view.copy_(value)
        return
    if not advanced and value._data.ndim == 0:
        view.fill_(value)
        return
    shape = value._data.shape  # as torch: its leading 1s are dropped (by a view, which can)
    lead = next((i for i, n in enumerate(shape) if n != 1), len(shape))
    if lead:
        value = call(table.VIEW, (value,), (shape[lead:],))
    if advanced:
        if value._data.dtype != t._data.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {dtypes.LEGACY_TYPE_NAMES.get(t._data.dtype.name)} for the "
                               f"destination and "
                               f"{dtypes.LEGACY_TYPE_NAMES.get(value._data.dtype.name)}"
                               f" for the source.")
        call_inplace(table.INDEX_PUT, (view, value),
                     (_advanced_index(advanced, tensors, records(view, value)), False))
    else:  # broadcast first, as torch (so a value on the view's own memory overlaps fully)
        view.copy_(value.expand(view._data.shape))


def _checked_mask(t, mask, in_place=False):
    """masked_fill's mask: bool, broadcasting with t (out of place, the result takes the
    broadcast shape, as torch's) and, in place, to t's own shape."""
    mask = _as_tensor(mask)
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dtypes.C_TYPE_NAMES.get(mask._data.dtype.name)}")
    mismatch = broadcast_mismatch(mask._data.shape, t._data.shape)  # torch: a is the mask
    if mismatch:
        raise RuntimeError(mismatch)
    shape = np.broadcast_shapes(mask._data.shape, t._data.shape)
    if in_place and shape != t._data.shape:
        raise RuntimeError(f"output with shape {list(t._data.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    return mask


def check_scatter_gather(name, t, dim, index, src=None):
    """torch's checks of the index of gather (name "gather") and of the scatters ("scatter";
    `src` a tensor or None): its dtype (and src's), as many dims as self (a 0-d tensor
    counting as 1-d) and src, sizes no larger than self's apart from dim (and than src's),
    every index inside dim (no wrapping of negatives). Returns dim made non-negative."""
    if index._data.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src._data.dtype != t._data.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    dim = _dim(dim, t._data.ndim)
    if isinstance(src, Tensor):
        _dim(dim, src._data.ndim)
    if not index._data.size:
        return dim
    self_shape, shape = t._data.shape, index._data.shape
    if max(len(self_shape), 1) != max(len(shape), 1):
        what = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           f"tensor")
    src_shape = src._data.shape if isinstance(src, Tensor) else None
    if src_shape is not None and max(len(src_shape), 1) != max(len(shape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for d, n in enumerate(shape):
        larger = d != dim and n > (self_shape[d] if self_shape else 1)
        if name == "gather" and larger:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(shape)} to be no larger than self {list(self_shape)} "
                               f"apart from dimension {dim}")
        if name != "gather" and (larger or src_shape and n > src_shape[d]):
            raise RuntimeError(f"Expected index {list(shape)} to be no larger than self "
                               f"{list(self_shape)} apart from dimension {dim}" + (
                                   f" and to be no larger size than src {list(src_shape)}"
                                   if src_shape is not None else ""))
    size = self_shape[dim] if self_shape else 1
    outside = index._data[(index._data < 0) | (index._data >= size)]
    if outside.size:
        raise RuntimeError(f"index {outside.flat[0]} is out of bounds for dimension {dim} with "
                           f"size {size}")
    return dim
