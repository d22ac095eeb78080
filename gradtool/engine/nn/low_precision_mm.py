"""nn.functional's scaled and grouped matrix products: kernels for float8 (and grouped
layouts) that the engine has no dtype or kernel for. The engine's tensors are never float8,
so scaled_mm gives torch's answer to them: its shape error, else its "Invalid scaling
configuration"; torch's CPU build has no scaled_grouped_mm kernel at all, and says so;
grouped_mm torch computes on the CPU, the engine does not (yet)."""
import enum

from ..autograd.dtypes import LEGACY_TYPE_NAMES
from ..errors import NotInEngineError


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


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    raise NotInEngineError("torch.nn.functional.grouped_mm")
