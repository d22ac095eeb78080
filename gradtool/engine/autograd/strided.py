"""torch.as_strided and its kin over a tensor's storage: the array that owns its memory, read
in C order (memory.owning_array), where the tensor starts at its storage_offset. A strided view
shares that memory (and the base's version counter); its gradient goes back to the input's
elements on the memory it read (AsStridedBackward0, overlapping windows summed)."""
import numpy as np

from . import memory
from ..errors import NotInEngineError
from .dispatch import call
from .grad_mode import no_grad
from .ops import derivatives as table
from .tensor import _shape


def _storage_indices(input, size, stride, storage_offset):
    """For each element of the view, the flat (C order) index of the input's element on the
    same memory; torch's refusal of a view past the end of the storage."""
    size, stride = tuple(_shape((size,))), tuple(_shape((stride,)))
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = input.storage_offset() if storage_offset is None else storage_offset
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    storage = memory.owning_array(input._data)
    needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if needed > storage.size:
        itemsize = storage.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed * itemsize} are out of bounds for storage of size "
                           f"{storage.size * itemsize}")
    if not storage.flags.c_contiguous:
        raise NotInEngineError("torch.as_strided of a tensor whose memory is not laid out in "
                               "order")
    # memory slot -> the input element on it (-1: none of the input's)
    owner = np.full(storage.size, -1, np.int64)
    owner[_slots(input._data, storage)] = np.arange(input._data.size)
    slots = offset + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - d - 1)) * s
                         for d, (n, s) in enumerate(zip(size, stride)))
    flat = owner[np.broadcast_to(slots, size)] if size else owner[[offset]].reshape(())
    if input.requires_grad and (flat < 0).any():
        raise NotInEngineError("the gradient of torch.as_strided reading memory outside its "
                               "input's elements")
    return size, stride, offset, flat


def _slots(array, storage):
    """The memory slot of each element of `array` (a view of `storage`), C order."""
    start = (array.__array_interface__["data"][0] -
             storage.__array_interface__["data"][0]) // storage.itemsize
    steps = [s // storage.itemsize for s in array.strides]
    return (start + sum(np.arange(n).reshape((-1,) + (1,) * (array.ndim - d - 1)) * s
                        for d, (n, s) in enumerate(zip(array.shape, steps)))).reshape(-1) \
        if array.ndim else np.array([start])


def as_strided(input, size, stride, storage_offset=None):
    """A view of input's storage: element i at storage_offset + sum(i_d * stride_d)."""
    return call(table.AS_STRIDED_VIEW, (input,),
                _storage_indices(input, size, stride, storage_offset))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with src written where as_strided(size, stride, storage_offset) of
    it would read (through a view of the copy: the gradients follow)."""
    out = input.clone(memory_format=memory.contiguous_format)
    as_strided(out, size, stride, storage_offset).copy_(src)
    return out


class StridedTensorMethods:
    def as_strided(self, size, stride, storage_offset=None):
        return as_strided(self, size, stride, storage_offset)

    def as_strided_(self, size, stride, storage_offset=None):
        """self made the strided view of its own storage (not recorded: refused when self
        requires grad, where torch records AsStridedBackward1)."""
        if self.requires_grad:
            raise NotInEngineError("Tensor.as_strided_ of a tensor that requires grad")
        with no_grad():
            view = as_strided(self, size, stride, storage_offset)
        self._data = view._data
        return self

    def as_strided_scatter(self, src, size, stride, storage_offset=None):
        return as_strided_scatter(self, src, size, stride, storage_offset)


FUNCTIONS = {"as_strided": as_strided, "as_strided_scatter": as_strided_scatter,
             "as_strided_": StridedTensorMethods.as_strided_}
