"""nn.functional's scaled and grouped matrix products: kernels for float8 (and grouped
layouts) that the engine has no dtype or kernel for. The engine's tensors are never float8,
so scaled_mm gives torch's answer to them: its shape error, else its "Invalid scaling
configuration"; torch's CPU build has no scaled_grouped_mm kernel at all, and says so.
grouped_mm, which torch's CPU build computes, is the op table's _grouped_mm row behind
torch's checks."""
import enum

from ..autograd.dtypes import LEGACY_TYPE_NAMES


class ScalingType(enum.Enum):
    """How a scale applies to its matrix: one scale, one per row, or one per block."""
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.Enum):
    """The layout of blocked scales."""
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


# torch's classes are pybind enums named with an underscore, as their repr shows
ScalingType.__name__ = ScalingType.__qualname__ = "_ScalingType"
SwizzleType.__name__ = SwizzleType.__qualname__ = "_SwizzleType"


def _first(v):
    return v[0] if isinstance(v, list) else v


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=None, contraction_dim=(),
              use_fast_accum=False):
    """torch's checks for inputs that are not float8, which the engine's never are."""
    (m, k), (k_b, n) = mat_a.shape, mat_b.shape
    if k != k_b:
        raise ValueError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k_b}x{n})")
    scale_a, scale_b = _first(scale_a), _first(scale_b)

    def name(t):
        return LEGACY_TYPE_NAMES[t.dtype.name]
    raise ValueError(
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and "
        "singletons.\n"
        f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a "
        f"should be ({m}, 1) and scale_b should be (1, {n}), and both should be contiguous.\n"
        f"Got mat_a.dtype()={name(mat_a)}, scale_a.dtype()={name(scale_a)}, "
        f"scale_a.size()={list(scale_a.shape)}, scale_a.stride()={list(scale_a.stride())}, "
        f"mat_b.dtype()={name(mat_b)}, scale_b.dtype()={name(scale_b)}, "
        f"scale_b.size()={list(scale_b.shape)} and scale_b.stride()={list(scale_b.stride())}")


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None, output_dtype=None,
                      contraction_dim=(), use_fast_accum=False):
    """torch's CPU build has no kernel for it: its dispatcher's error (without the list of
    the backends that build registers, which is the build's)."""
    raise NotImplementedError(
        "Could not run 'aten::_scaled_grouped_mm_v2' with arguments from the 'CPU' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted "
        "during the selective/custom build process (if using custom build).")


_GROUPED_MM_DTYPES = ("float32", "bfloat16", "float16")  # what torch's CPU kernel takes


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """A matrix product per group (mixture-of-experts layers): see kernels.grouped_mm for the
    four layouts; torch's checks, in torch's order and words."""
    if offs is not None and offs.requires_grad:
        raise RuntimeError("The function '_grouped_mm' is not differentiable with respect to "
                           "argument 'offs'. This input cannot have requires_grad True.")
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dtype.name not in _GROUPED_MM_DTYPES:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, "
                               f"got {LEGACY_TYPE_NAMES[mat.dtype.name]}")
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    a_is_2d, b_is_2d = mat_a.dim() == 2, mat_b.dim() == 2
    if not (a_is_2d and b_is_2d) and mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    for mat in (mat_a, mat_b):
        _check_grouped_mm_strides(mat)
    if (offs is not None) != (a_is_2d or b_is_2d):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype.name != "int32":
            raise RuntimeError("Offsets have to be int32")
    if not a_is_2d and not b_is_2d:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError("batched dimension has to match")
    elif not (a_is_2d and b_is_2d) and len(offs) != (mat_b if a_is_2d else mat_a).shape[0]:
        raise RuntimeError("matrix batch sizes have to match")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if mat_a.dtype != mat_b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C10_NAMES[mat_a.dtype.name]} != {_C10_NAMES[mat_b.dtype.name]}")
    from ..autograd.ops.rows import table
    return table.GROUPED_MM(mat_a, mat_b, None if offs is None else tuple(offs.tolist()))


_C10_NAMES = {"float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _check_grouped_mm_strides(mat):
    """torch's kernel reads each matrix row- or column-major, its leading stride a multiple
    of 16 bytes, its data 16-byte aligned."""
    data = mat._data
    strides, sizes = [s // data.itemsize for s in data.strides], list(data.shape)
    if data.__array_interface__["data"][0] % 16:
        raise RuntimeError("expected data_ptr to be aligned to 16 bytes\n")
    alignment = 16 // data.itemsize
    if strides[-2] == 1 and strides[-1] >= max(1, sizes[-2]):
        leading = strides[-1]  # column-major
    elif strides[-1] == 1 and strides[-2] >= max(1, sizes[-1]):
        leading = strides[-2]  # row-major
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {strides} for strides and {sizes} "
                           f"for sizes")
    if leading % alignment:
        raise RuntimeError("strides should be multiple of 16 bytes")
