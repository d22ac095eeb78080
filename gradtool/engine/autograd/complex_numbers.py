"""torch's free functions that make and take apart complex tensors, with torch's checks; each
dispatches to its row of the op table (derivatives.py, "complex numbers")."""
from .dispatch import call
from .dtypes import LEGACY_TYPE_NAMES
from .ops import derivatives as table
from .tensor import Tensor

_FLOAT_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}


def view_as_real(input):
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return call(table.VIEW_AS_REAL, (input,))


def view_as_complex(input):
    data = input._data
    if data.dtype.name not in _FLOAT_NAMES:
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {_legacy(input)}")
    if not data.ndim or data.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if data.strides[-1] != data.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * data.itemsize) for s in data.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    return call(table.VIEW_AS_COMPLEX, (input,))


def complex(real, imag):
    """real + i imag (torch.complex: two float tensors of one dtype)."""
    _check_pair(real, imag)
    return call(table.COMPLEX, (real, imag))


def polar(abs, angle):
    """abs * (cos(angle) + i sin(angle))."""
    _check_pair(abs, angle)
    return call(table.POLAR, (abs, angle))


def _check_pair(a, b):
    if not (a._data.dtype.name in _FLOAT_NAMES and b._data.dtype.name in _FLOAT_NAMES):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_legacy(a)} and {_legacy(b)}")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"Expected object of scalar type {_legacy(a)} but got scalar type "
                           f"{_legacy(b)} for second argument")


def _legacy(t):
    return LEGACY_TYPE_NAMES[t._data.dtype.name]


def is_complex(input):
    return isinstance(input, Tensor) and input.is_complex()
