"""Old spellings real PyTorch files still use: the typed tensor classes (torch.FloatTensor,
torch.LongTensor, ...), torch.range, and the numeric limits of a dtype (torch.finfo/iinfo)."""
import warnings

import numpy as np

from .autograd import creation, dtypes
from .autograd.tensor import Tensor


class _TypedTensorMeta(type):
    """isinstance(x, torch.FloatTensor) asks for x's dtype, as torch's legacy classes do."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype


def _typed_tensor(name, dtype):
    def __new__(cls, *args, device=None):
        """FloatTensor(2, 3) is uninitialised; FloatTensor([1, 2]) holds the data."""
        return creation.legacy(dtype.numpy, args, device)
    return _TypedTensorMeta(name, (), {"__new__": __new__, "dtype": dtype,
                                       "__doc__": f"The legacy constructor of {dtype} tensors."})


FloatTensor = _typed_tensor("FloatTensor", dtypes.float32)
DoubleTensor = _typed_tensor("DoubleTensor", dtypes.float64)
HalfTensor = _typed_tensor("HalfTensor", dtypes.float16)
LongTensor = _typed_tensor("LongTensor", dtypes.int64)
IntTensor = _typed_tensor("IntTensor", dtypes.int32)
ShortTensor = _typed_tensor("ShortTensor", dtypes.int16)
CharTensor = _typed_tensor("CharTensor", dtypes.int8)
ByteTensor = _typed_tensor("ByteTensor", dtypes.uint8)
BoolTensor = _typed_tensor("BoolTensor", dtypes.bool_)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """torch.range: like arange but the end included, float32 by default (deprecated in torch,
    with this warning)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    count = int(np.floor((end - start) / step)) + 1
    values = start + step * np.arange(max(count, 0))
    np_dtype = creation.kernel_dtype("range_cpu", dtype, refused="bc")
    return creation._finish(values.astype(np_dtype), requires_grad, device)


class finfo:
    """The limits of a floating dtype (default: float32), as torch.finfo (a complex dtype's:
    those of its real and imaginary parts)."""

    _BFLOAT16 = dict(bits=16, eps=0.0078125, max=3.3895313892515355e38,
                     tiny=1.1754943508222875e-38, resolution=0.01)

    def __init__(self, type=None):
        type = dtypes.float32 if type is None else type
        if not isinstance(type, dtypes.dtype) or not (type.is_floating_point or
                                                      type.is_complex):
            raise TypeError(f"torch.finfo() requires a floating point input type. Use "
                            f"torch.iinfo to handle '{type}'")
        if type is dtypes.bfloat16:
            values = self._BFLOAT16
        else:
            info = np.finfo(type.numpy)
            values = dict(bits=info.bits, eps=float(info.eps), max=float(info.max),
                          tiny=float(info.tiny), resolution=10.0 ** -info.precision)
        self.bits, self.eps = values["bits"], values["eps"]
        self.max, self.tiny = values["max"], values["tiny"]
        self.min, self.smallest_normal, self.resolution = -self.max, self.tiny, values["resolution"]
        self.dtype = type.name if not type.is_complex else np.finfo(type.numpy).dtype.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype, as torch.iinfo."""

    def __init__(self, type):
        if not isinstance(type, dtypes.dtype) or type.is_floating_point:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to "
                            f"handle '{type}'")
        info = np.iinfo(np.int8 if type is dtypes.bool_ else type.numpy)
        self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)
        self.dtype = type.name if not type.is_complex else np.finfo(type.numpy).dtype.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
