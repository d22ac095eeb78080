"""torch-style dtype objects over numpy dtypes."""
import numpy as np


class dtype:
    """A tensor element type; compares by identity, prints as torch does."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize")

    def __init__(self, name, numpy_dtype):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.is_floating_point = self.numpy.kind == "f"
        self.itemsize = self.numpy.itemsize

    def __repr__(self):
        return f"gradtool.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool_ = dtype("bool", np.bool_)

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)
BY_NUMPY = {d.numpy: d for d in ALL}
# torch's aliases: torch.float is float32, torch.double float64, torch.long int64, ...
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16,
           "int": int32, "long": int64, "bool": bool_}
DEFAULT_FLOAT = np.dtype(np.float32)


def _by_name(name):
    return {d.name: d for d in ALL}[name]


def from_numpy_dtype(np_dtype):
    try:
        return BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(f"gradtool has no dtype for numpy's {np_dtype}") from None


def to_numpy_dtype(d):
    """Accept a gradtool dtype, a numpy dtype or a Python type."""
    if isinstance(d, dtype):
        return d.numpy
    if d is float:
        return DEFAULT_FLOAT
    if d is int:
        return np.dtype(np.int64)
    if d is bool:
        return np.dtype(np.bool_)
    return from_numpy_dtype(np.dtype(d)).numpy
