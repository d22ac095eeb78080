"""torch's memory-overlap rules for in-place writes: no write to a tensor whose elements
share memory (an expand; some ops may), nor from an input that overlaps the target partly
(or, for some ops, at all). The rows say which ops may (`writes_overlapping`) or may not
(`reads_no_overlap`)."""
import numpy as np

from . import dtypes
from .ops.rows import table
from .tensor import Tensor


def check_writable(spec, target, out, inputs, args):
    """torch's checks before writing `out` into `target` (shape, dtype, the overlap rules)."""
    data = target._data
    shape = data.shape
    if out.shape != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)}")
    if not np.can_cast(out.dtype, data.dtype, casting="same_kind"):
        raise RuntimeError(f"result type {dtypes.LEGACY_TYPE_NAMES.get(out.dtype.name)} "
                           f"can't be cast to the desired output type "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(data.dtype.name)}")
    if spec is table.COPY and isinstance(inputs[1], Tensor) and _same_data(data, inputs[1]._data):
        return  # a copy onto itself: torch writes nothing, so checks nothing
    if not data.flags.writeable or (not spec.writes_overlapping and internal_overlap(data)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor "
                           "before performing the operation.")
    counter = target._version_counter
    if spec is table.FILL_TENSOR or spec is table.INDEX_PUT and _is_masked_fill(inputs[1], args[0]):
        return  # torch fills with the value's number (index_put_ of one element through a
        # mask is its masked_fill_): nothing read overlaps
    for x in inputs[1:]:  # (tensors on the same memory share the version counter)
        if isinstance(x, Tensor) and x._version_counter is counter and (
                _overlap(data, x._data, full_allowed=not spec.reads_no_overlap)
                if x is not target else spec.reads_no_overlap):
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. Please "
                               "clone() the tensor before performing the operation.")


def _is_masked_fill(value, indices):
    masks = [i for i in indices if isinstance(i, np.ndarray)]
    return (isinstance(value, Tensor) and value._data.size == 1 and value._data.ndim == 0
            and len(masks) == 1 and masks[0].dtype == np.bool_)


def internal_overlap(a):
    return 0 in a.strides and a.size > 1 and any(
        s == 0 and n > 1 for s, n in zip(a.strides, a.shape))


def _dense(a):
    """torch's is_non_overlapping_and_dense: some order of the dims is C-contiguous."""
    expected = a.itemsize
    for stride, n in sorted(zip(a.strides, a.shape)):
        if n == 1:
            continue
        if stride != expected:
            return False
        expected *= n
    return True


def _same_data(a, b):
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)


def _overlap(a, b, full_allowed):
    """Whether a and b overlap in a way torch refuses: partly (or at all, unless
    full_allowed); decided, as torch, only when both are dense (otherwise too hard: allowed)."""
    if a.size == 0 or b.size == 0 or not (_dense(a) and _dense(b)):
        return False
    start_a, start_b = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    if start_a == start_b and a.shape == b.shape and a.strides == b.strides:
        return not full_allowed
    return start_a < start_b + b.size * b.itemsize and start_b < start_a + a.size * a.itemsize
