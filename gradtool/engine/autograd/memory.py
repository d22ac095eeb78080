"""How a tensor lies in memory, as torch says it: strides (counted in elements), memory formats
(torch.contiguous_format, channels_last, ...), the layout (strided: every engine tensor is
dense), resizing and re-pointing a tensor's storage (resize_, set_), and pinned memory (which
needs an accelerator torch's CPU build does not have), shared memory, and the moves to the
other accelerators torch's CPU build refuses (ipu, xpu, mtia).

numpy arrays have strides too (in bytes), and the engine's views are numpy views of the same
memory, so a transpose, an expand or a slice reports torch's strides; a channels_last tensor
is an array whose channel dim is the innermost in memory, as torch's."""
import mmap
import warnings

import numpy as np

from .tensor import Tensor, _dim, _shape


class memory_format:
    """A memory format (torch.memory_format): compared by identity, printed as torch's."""

    __slots__ = ("name", "rank")

    def __init__(self, name, rank=None):
        self.name, self.rank = name, rank  # rank: the dims a tensor needs for the format

    def __repr__(self):
        return f"gradtool.{self.name}"

    def __reduce__(self):
        return self.name


class layout:
    """A tensor layout (torch.layout): strided for every engine tensor."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"gradtool.{self.name}"

    def __reduce__(self):
        return self.name


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)
strided, sparse_coo = layout("strided"), layout("sparse_coo")
# the compressed layouts (autograd/sparse_compressed.py holds their tensors)
sparse_csr, sparse_csc = layout("sparse_csr"), layout("sparse_csc")
sparse_bsr, sparse_bsc = layout("sparse_bsr"), layout("sparse_bsc")


def owning_array(array):
    """The array that owns the memory `array` views (itself if it owns its own)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def contiguous_strides(shape):
    """The strides (in elements) of a contiguous tensor of this shape: torch's (a dim of size
    0 or 1 counts as 1, so an empty tensor still has strides as if it held one element)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def torch_strides(array):
    """numpy's strides in elements (of a tensor with elements), where a dim of size 1 that
    numpy left without one (0, after a reshape) gets torch's for an unsqueeze: the extent of
    the dim inside it, size times stride (1 for the last)."""
    steps = [s // array.itemsize for s in array.strides]
    inner = 1
    for d in reversed(range(array.ndim)):
        if array.shape[d] == 1 and steps[d] == 0:
            steps[d] = inner
        inner = steps[d] * array.shape[d]
    return tuple(steps)


def _channels_last_order(ndim):
    """The dims of an (N, C, *spatial) tensor from outermost to innermost in channels_last."""
    return (0,) + tuple(range(2, ndim)) + (1,)


def has_format(array, fmt):
    """Whether the array lies in memory as `fmt` says."""
    if fmt is contiguous_format or fmt is preserve_format:
        return array.flags.c_contiguous
    if array.ndim != fmt.rank:
        return False
    return np.transpose(array, _channels_last_order(array.ndim)).flags.c_contiguous


def laid_out(array, fmt):
    """A copy of the array in format `fmt` (preserve_format: the array's own dim order)."""
    if fmt is preserve_format:
        return array.copy(order="K")
    if fmt is contiguous_format:
        return np.ascontiguousarray(array)
    order = _channels_last_order(array.ndim)
    return np.ascontiguousarray(np.transpose(array, order)).transpose(np.argsort(order))


def check_format(fmt, ndim, op="contiguous"):
    """torch's refusals: a format that is not one, the wrong rank for channels_last."""
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    if fmt.rank is not None and ndim != fmt.rank:
        raise RuntimeError(f"required rank {fmt.rank} tensor to use {fmt.name} format")


class MemoryTensorMethods:
    def data_ptr(self):
        """The address of the first element: a view's is its base's plus its offset times the
        element size, as torch's (0 for a tensor without elements, as torch's)."""
        return self._data.__array_interface__["data"][0] if self._data.size else 0

    def stride(self, dim=None):
        """The step (in elements) between neighbours along each dim: numpy's, which a
        transpose, a slice or an expand gives as torch's, a size-1 dim's included (computed
        when asked: torch_strides)."""
        array = self._data
        if not array.size:  # (an empty tensor: numpy leaves its strides as they happen to be)
            strides = contiguous_strides(array.shape)
        else:
            strides = torch_strides(array)
        return strides if dim is None else strides[_dim(dim, array.ndim)]

    def is_contiguous(self, memory_format=contiguous_format):
        check_format(memory_format, self._data.ndim, "is_contiguous")
        if memory_format is preserve_format:
            raise RuntimeError("Unsupported memory format. Supports only ChannelsLast, "
                               "ChannelsLast3d, Contiguous")
        return has_format(self._data, memory_format)

    @property
    def layout(self):
        return strided

    @property
    def is_xpu(self):  # torch's CPU build has no XPU device either
        return False

    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def share_memory_(self):
        """This tensor's memory moved into shared memory (an anonymous shared mapping, which a
        process forked afterwards reads and writes too), as torch's CPU tensors; already
        shared, nothing moves. The whole storage moves, as torch's; views taken before keep
        the memory they had (numpy cannot re-point an array)."""
        if not self.is_shared():
            self._data = _in_shared_memory(self._data)
        return self

    def is_shared(self):
        return isinstance(owning_array(self._data).base, mmap.mmap)

    def ipu(self, device=None, non_blocking=False, memory_format=preserve_format):
        _no_accelerator("ipu", device)

    def xpu(self, device=None, non_blocking=False, memory_format=preserve_format):
        _no_accelerator("xpu", device)

    def mtia(self, device=None, non_blocking=False, memory_format=preserve_format):
        _no_accelerator("mtia", device)

    def resize(self, *sizes):
        """A reshape to as many elements, deprecated (torch's autograd Function, its
        ResizeBackward node)."""
        warnings.warn("non-inplace resize is deprecated", stacklevel=2)
        return _Resize().apply(self, _shape(sizes))

    def resize_as(self, tensor):
        warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
        return _Resize().apply(self, tuple(tensor.shape))

    def resize_(self, *sizes, memory_format=None):
        """This tensor given the shape `sizes`: its elements kept in order, as many as fit;
        new ones (torch leaves them uninitialised) are zeros. Refused on a tensor that
        requires grad, as torch's."""
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        shape = _shape(sizes)
        if any(n < 0 for n in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(shape)}: {list(shape)}")
        numel = int(np.prod(shape))
        flat = self._data.reshape(-1)
        if numel <= flat.size:
            data = flat[:numel].reshape(shape)
        else:
            data = np.concatenate([flat, np.zeros(numel - flat.size, flat.dtype)]).reshape(shape)
        if memory_format is not None:
            check_format(memory_format, len(shape), "resize_")
            data = laid_out(data, memory_format)
        self._data = data
        self._version_counter[0] += 1
        return self

    def resize_as_(self, the_template, memory_format=None):
        return self.resize_(tuple(the_template.shape), memory_format=memory_format)

    def set_(self, source=None, storage_offset=0, size=None, stride=None):
        """This tensor made to share `source`'s memory (its shape too); no source: empty.
        Recorded as torch's: a node whose backward raises (set_ has no derivative)."""
        from .inplace import check_inplace
        from .out_argument import recorded_not_implemented
        check_inplace(self)
        if source is None:
            self._data = np.empty((0,), self._data.dtype)
        elif isinstance(source, Tensor):
            if source._data.dtype != self._data.dtype:
                raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor "
                                   f"of type {self.dtype}")
            self._data = source._data
            if size is not None:
                self._data = np.lib.stride_tricks.as_strided(
                    source._data.reshape(-1)[storage_offset:], _shape((size,)),
                    tuple(s * source._data.itemsize for s in (stride or contiguous_strides(
                        _shape((size,))))))
        else:
            raise TypeError(f"set_(): argument 'source' must be Tensor, not "
                            f"{type(source).__name__}")
        self._version_counter[0] += 1
        return recorded_not_implemented(self, (self,) if source is None else (self, source),
                                        "set_")


def _in_shared_memory(array):
    """`array` viewed in a shared mapping holding a copy of the memory it views (all of its
    owner's, laid out the same, so its offset and strides still hold)."""
    owner = owning_array(array)
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):  # (a copy of array alone)
        owner = array = np.array(array, order="K")
    buffer = mmap.mmap(-1, max(owner.nbytes, 1))
    shared = np.ndarray(owner.shape, owner.dtype, buffer,
                        order="C" if owner.flags.c_contiguous else "F")
    shared[...] = owner
    offset = (array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
              if array.size else 0)
    return np.ndarray(array.shape, array.dtype, buffer, offset, array.strides)


# torch's CPU build on a move to the accelerators it was not built for: (error, message)
_NOT_BUILT = {
    "ipu": (RuntimeError, "PyTorch is not linked with support for ipu devices"),
    "xpu": (AssertionError, "Torch not compiled with XPU enabled"),
    "mtia": (AssertionError, "Torch not compiled with MTIA enabled. Ensure you have `import "
                             "mtia.host_runtime.torch_mtia.dynamic_library` in your python src "
                             "file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as "
                             "your target dependency!"),
}


def _no_accelerator(kind, device):
    """Tensor.ipu / xpu / mtia: torch's refusals (a device index asks the accelerator API;
    a device of another type is refused first)."""
    from .device import device as Device
    if isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if device is not None and Device(device).type != kind:
        raise RuntimeError(f"Invalid device, must be {'MTIA' if kind == 'mtia' else kind} "
                           f"device")
    error, message = _NOT_BUILT[kind]
    raise error(message)


def _resize_function():
    from .function import Function

    class Resize(Function):
        """torch.autograd._functions.Resize: a view to the same number of elements."""

        @staticmethod
        def forward(ctx, tensor, sizes):
            numel = int(np.prod(sizes))
            if tensor.numel() != numel:
                raise RuntimeError(
                    f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in "
                    f"total), but the given tensor has a size of "
                    f"{'x'.join(map(str, tensor.shape))} ({tensor.numel()} elements). "
                    f"autograd's resize can only change the shape of a given tensor, while "
                    f"preserving the number of elements. ")
            ctx.input_sizes = tensor.shape
            return tensor.contiguous().clone().view(*sizes)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.contiguous().view(ctx.input_sizes), None
    return Resize


def _Resize():
    global _RESIZE
    if _RESIZE is None:
        _RESIZE = _resize_function()
    return _RESIZE


_RESIZE = None
