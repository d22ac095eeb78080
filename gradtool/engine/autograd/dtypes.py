"""torch-style dtype objects over numpy dtypes."""
import ml_dtypes
import numpy as np

from ..errors import NotInEngineError

# ml_dtypes' bfloat16 is a numpy dtype of kind "V" (numpy knows no other floating kind for it):
# the engine's checks of a floating dtype use FLOATING_KINDS, "V" included (no other "V" arrays
# are ever made)
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOATING_KINDS = "fV"


class dtype:
    """A tensor element type; compares by identity, prints as torch does."""

    __slots__ = ("name", "numpy", "is_floating_point", "is_complex", "itemsize")

    def __init__(self, name, numpy_dtype, itemsize=None):
        self.name = name
        self.numpy = None if numpy_dtype is None else np.dtype(numpy_dtype)
        self.is_floating_point = self.numpy.kind in FLOATING_KINDS
        self.is_complex = self.numpy is not None and self.numpy.kind == "c"
        self.itemsize = itemsize or self.numpy.itemsize

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
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
# ops on bfloat16 compute in float32 and round once, as torch's CPU kernels (dispatch.py)
bfloat16 = dtype("bfloat16", BFLOAT16)

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_, complex64,
       complex128, bfloat16)
BY_NUMPY = {d.numpy: d for d in ALL}
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
        if d.numpy is None:
            raise NotInEngineError(f"torch.{d.name} tensors")
        return d.numpy
    if d is float:
        return DEFAULT_FLOAT
    if d is complex:
        return default_complex()
    return from_numpy_dtype(np.dtype(d)).numpy  # (int is int64, bool bool: numpy 2's)


# ---------------- type promotion: torch's rules, in one place ----------------
# Categories rank bool < integer < floating. Operands are dimensioned tensors, 0-d tensors and
# Python (or NumPy) scalars: the result is the promotion of the highest-priority group, a lower
# group counting only where it is of a higher category (so float32 tensor * 0-d float64 tensor
# is float32, an int tensor * 2.5 the default float dtype, an int32 tensor + 7 int32).
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
_BOOL, _INT64 = np.dtype(np.bool_), np.dtype(np.int64)


def can_cast(source, target):
    """torch's casting rule on numpy dtypes: never floating to integral, complex to real, or
    anything but bool to bool (out=, torch.can_cast)."""
    return (_CATEGORY[source.kind] <= _CATEGORY[target.kind]
            and not (target.kind == "b" and source.kind != "b"))


def promote_types(a, b):
    """torch.promote_types on numpy dtypes: the smallest dtype both convert to safely, except
    that a float type absorbs any integer (int64 + float16 is float16)."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca != cb and ca + cb != 5:  # (float and complex, 2 + 3: numpy's, below)
        return a if ca > cb else b
    if BFLOAT16 in (a, b):  # (torch's: float16 with bfloat16 is float32; complex64 stays)
        other = b if a == BFLOAT16 else a
        return other if other.itemsize > 2 else np.dtype(np.float32)
    return np.promote_types(a, b)  # (float64 + complex64 is complex128)


def default_complex():
    """torch's default complex dtype: the complex type of the default float dtype."""
    return np.dtype(np.complex128) if DEFAULT_FLOAT == np.float64 else np.dtype(np.complex64)


def _combine(higher, lower):
    """torch's combine_categories: `lower` counts only if of a higher category (a complex
    one keeps a float `higher`'s precision: float64 tensor * 1j is complex128)."""
    if higher is None:
        return lower
    if lower is None or higher.kind == "c":
        return higher
    if lower.kind == "c":
        return promote_types(higher, np.complex64) if higher.kind in FLOATING_KINDS else lower
    if higher.kind in FLOATING_KINDS:
        return higher
    if higher.kind == "b" or lower.kind in FLOATING_KINDS:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """The dtype torch gives an op on these operands (numpy arrays, tensors, Python or NumPy
    scalars; None is skipped)."""
    groups = [None, None, None]  # dimensioned, 0-d, scalars
    for x in operands:
        if x is None:
            continue
        data = getattr(x, "_data", x)
        if isinstance(data, np.ndarray):
            g, d = (0 if data.ndim else 1), data.dtype
        elif isinstance(data, (bool, np.bool_)):
            g, d = 2, _BOOL
        elif isinstance(data, (int, np.integer)):
            g, d = 2, _INT64
        elif isinstance(data, (float, np.floating)):
            g, d = 2, DEFAULT_FLOAT
        elif isinstance(data, (complex, np.complexfloating)):
            g, d = 2, default_complex()
        else:
            continue
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)
    return _combine(groups[0], _combine(groups[1], groups[2]))


# torch's names of dtypes in its messages (C++ and legacy tensor-type names)
C_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                 "int64": "long int", "int32": "int", "int16": "short int",
                 "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
                 "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
                 "bfloat16": "c10::BFloat16"}
LEGACY_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                      "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                      "complex128": "ComplexDouble", "bfloat16": "BFloat16"}
