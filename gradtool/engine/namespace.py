"""The torch namespace the engine gives (`import torch` in a file gradtool runs): tensors,
factories, dtypes, grad modes, free functions, autograd, nn, optim. gradtool/engine/__init__.py
serves it lazily."""
from . import autograd
from .autograd.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,
                                full_like, linspace, logspace, manual_seed, ones, ones_like, rand, rand_like,
                                randint, randn, randn_like, randperm, tensor, zeros, zeros_like)
from .autograd.device import device, get_default_device, set_default_device
from .autograd.dtypes import (bfloat16, bool_ as bool, complex64, complex128, dtype, float16,
                              float32, float64, int8, int16, int32, int64, uint8)
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd.einsum import einsum
from .autograd.complex_numbers import complex, is_complex, polar, view_as_complex, view_as_real
from .autograd.ops import api as _api
from .autograd.ops import derivatives as _table
from .autograd.dispatch import call as _call
from .autograd.tensor import _dim
from .autograd.free_functions import (cat, concat, concatenate, is_inference, maximum, meshgrid,
                                      minimum, normal, stack, std_mean, var_mean, where)
from .autograd.draws import (_dirichlet_grad, _sample_dirichlet, _standard_gamma,
                             _standard_gamma_grad)
from .autograd.matmul import matmul
from .autograd.out_argument import rules_of as _rules_of, written_to as _written_to
from .autograd.tensor import Size, Tensor
from .legacy import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
                     IntTensor, LongTensor, ShortTensor, finfo, iinfo, range)
from . import serialization
from .serialization import load, save

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

globals().update(_api.FUNCTIONS)

from . import (accelerator, amp, backends, cuda, distributions, jit, linalg, nn,  # noqa: E402
               optim, testing, utils)  # (they build on the engine above)
from .amp import autocast  # noqa: E402
from .nn.torch_level import *  # noqa: E402,F401,F403  (torch.conv2d, torch.batch_norm, ...)
from . import library  # noqa: E402
from .library import Tag, ops  # noqa: E402  (torch.ops.<namespace>.<op>)
from . import fft, special  # noqa: E402  (torch.fft, torch.special)
from .autograd.spectral import (bartlett_window, blackman_window, hamming_window,  # noqa: E402
                                hann_window, istft, kaiser_window, stft)
from .special import xlogy  # noqa: E402
from .special import gammainc as igamma, gammaincc as igammac  # noqa: E402
from .special import multigammaln as mvlgamma, polygamma  # noqa: E402  (torch.polygamma(n, x))
from .compiler import compile  # noqa: E402,F401 (eager: gradtool/engine/compiler.py)
from . import version  # noqa: E402,F401
from .amp import (get_autocast_cpu_dtype, get_autocast_dtype,  # noqa: E402,F401
                  get_autocast_gpu_dtype, is_autocast_enabled)


def __getattr__(name):
    """torch.vmap is torch.func.vmap (loaded on first use, as torch.func is)."""
    if name == "vmap":
        from .func import vmap
        return vmap
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# ---- names the census of real files found missing (docs/census.md)
import builtins as _builtins  # noqa: E402 (int, float: the dtypes' names here)
import math as _math  # noqa: E402
import warnings as _warnings  # noqa: E402

pi, e, inf, nan = _math.pi, _math.e, _math.inf, _math.nan


def _method_as_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(input, ...) is input.{name}(...)."
    return fn


for _name in ("square", "multiply", "subtract", "true_divide", "absolute", "less",
              "less_equal", "greater", "greater_equal", "not_equal", "repeat_interleave",
              "unique", "lerp", "isclose", "median"):
    globals().setdefault(_name, _method_as_function(_name))


def vstack(tensors):
    """The tensors (made at least 2-d) concatenated along dim 0."""
    return cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)


def hstack(tensors):
    """The tensors concatenated along dim 1 (along dim 0 when they are 1-d)."""
    return cat(list(tensors), 0 if tensors[0].dim() == 1 else 1)


def qr(input, some=True):
    """Deprecated: linalg.qr, with `some` for its mode (torch warns the same)."""
    _warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in "
                   "a future PyTorch release.", UserWarning, stacklevel=2)
    return linalg.qr(input, "reduced" if some else "complete")


def get_num_threads():
    return 1  # the engine's arithmetic is numpy's; it sets no thread count of its own


def set_num_threads(num):
    """Accepted and left alone: how many threads numpy's kernels use is numpy's affair."""
    if not isinstance(num, _builtins.int) or num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")


# ---- dtypes, memory formats, layouts, generators (the census's torch-level names)
from .autograd.creation import (Generator, default_generator, get_rng_state,  # noqa: E402
                                initial_seed, randint_like, seed, set_rng_state)
from .autograd.memory import (channels_last, channels_last_3d, contiguous_format,  # noqa: E402
                              layout, memory_format, preserve_format, sparse_coo, strided)
from .autograd.printing import set_printoptions  # noqa: E402
from .autograd import dtypes as _dtypes  # noqa: E402

for _name in ("clamp_min", "clamp_max", "is_floating_point"):
    globals().setdefault(_name, _method_as_function(_name))


def get_default_dtype():
    """The dtype of floating point tensors made from Python numbers (float32 until set)."""
    return _dtypes.from_numpy_dtype(_dtypes.DEFAULT_FLOAT)


def set_default_dtype(d):
    """Makes `d` (a floating point dtype) the default float dtype: of factories, of tensors
    made from Python floats, of integer inputs to true division; complex follows it."""
    if not isinstance(d, _dtypes.dtype) or not d.is_floating_point or d.numpy is None:
        raise TypeError("only floating-point types are supported as the default type")
    _dtypes.DEFAULT_FLOAT = d.numpy


def set_default_tensor_type(t):
    """Deprecated (as torch warns): the default dtype of a legacy tensor type, its class or
    its name ('torch.DoubleTensor'); CUDA types are not available, as in torch's CPU build."""
    _warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                   "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                   UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else f"torch.{getattr(t, '__name__', t)}"
    if name.startswith("torch.cuda."):
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
    legacy = globals().get(name.rpartition(".")[2])
    if legacy is None or not hasattr(legacy, "dtype"):
        raise TypeError(f"invalid type: '{name}'")
    set_default_dtype(legacy.dtype)


def promote_types(type1, type2):
    """The smallest dtype both convert to (a float type absorbs any integer), as torch's."""
    return _dtypes.from_numpy_dtype(_dtypes.promote_types(_dtypes.to_numpy_dtype(type1),
                                                          _dtypes.to_numpy_dtype(type2)))


def typename(obj):
    """A tensor's legacy type name ('torch.FloatTensor'); otherwise module.qualname."""
    if isinstance(obj, Tensor):
        return "torch." + _dtypes.LEGACY_TYPE_NAMES[obj._data.dtype.name] + "Tensor"
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from torch: its message says what replaces it."""
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. The default "
        "behavior has changed from using the upper triangular portion of the matrix by default "
        "to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be "
        "replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V "
        "= torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
        "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


# ---- selecting, writing by index, windows, modes, histograms (Tensor methods as functions)
for _name in ("masked_select", "index_copy", "index_fill", "put", "take", "mode", "logit",
              "nansum", "nanmean", "movedim", "moveaxis", "logical_or", "logical_and",
              "logical_xor", "histc", "histogram"):
    globals().setdefault(_name, _method_as_function(_name))
for _name in ("index_put", "index_put_"):
    globals().setdefault(_name, _method_as_function(_name))


_warned = set()


def _warn_once(message):
    """torch's TORCH_WARN_ONCE: the first call in the process warns, later ones do not."""
    if message not in _warned:
        _warned.add(message)
        _warnings.warn(message, UserWarning, stacklevel=3)


def frobenius_norm(input, dim, keepdim=False):
    """Deprecated in torch (with its warning): the 2-norm over at most 2 dims (NormBackward1)."""
    _warn_once("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
               "It will be removed in a future PyTorch release. Please use "
               "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dims = [dim] if isinstance(dim, _builtins.int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           f"instead.")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtypes.LEGACY_TYPE_NAMES[input._data.dtype.name]} instead.")
    dims = tuple(_dim(d, input.dim()) for d in dims)
    return _call(_table.NORM_SCALAROPT_DIM, (input,), (2.0, dims, keepdim))


def nuclear_norm(input, dim=None, keepdim=False):
    """Deprecated in torch (with its warning): linalg.matrix_norm(input, 'nuc', dim, keepdim),
    whose nodes it records (SumBackward1 over LinalgSvdBackward0)."""
    _warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
               "It will be removed in a future PyTorch release. Please use "
               "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, _builtins.bool):  # nuclear_norm(input, keepdim): torch's first form
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def split_with_sizes(input, split_sizes, dim=0):
    if not isinstance(split_sizes, (list, tuple)):  # (torch counts input here: position 2)
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                        f"of ints, not {type(split_sizes).__name__}")
    return input.split_with_sizes(split_sizes, dim)


def rsub(input, other, alpha=1):
    """other - alpha * input: RsubBackward1 for a number other, RsubBackward0 for a tensor."""
    _check_subtraction(input, other, alpha)
    if isinstance(other, Tensor):
        return _call(_table.RSUB_TENSOR, (input, other), (alpha,))
    return _call(_table.RSUB, (input,), (other, alpha))


def _is_bool(value):
    return value.dtype == bool if isinstance(value, Tensor) else isinstance(value, _builtins.bool)


def _check_subtraction(a, b, alpha):
    """torch's refusals of a subtraction of bools."""
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if isinstance(alpha, _builtins.bool):
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


# ---- turns, products, distances, statistics
import numpy as _np  # noqa: E402

for _name in ("rot90", "cross", "dist", "cov", "quantile", "nanquantile", "floor_divide"):
    globals().setdefault(_name, _method_as_function(_name))


def fill(input, value):
    """A tensor of input's shape and dtype holding `value` (fill_'s out-of-place form)."""
    from .autograd.dispatch import call as _call
    from .autograd.ops import derivatives as _table
    return _call(_table.FILL_OUT, (input,), (value,))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between every row of x1 and every row of x2 (batched)."""
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    from .autograd.dispatch import call as _call
    from .autograd.ops import derivatives as _table
    return _call(_table.CDIST, (x1, x2), (_builtins.float(p), None))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1 and x2 each divided by its norm along dim (at least eps), their products summed,
    as torch's."""
    shape = tuple(_np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    x1 = x1 if tuple(x1.shape) == shape else x1.expand(shape)
    x2 = x2 if tuple(x2.shape) == shape else x2.expand(shape)
    norm1 = x1.norm(2, dim, keepdim=True).clone()
    norm2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():  # (torch clamps copies of the norms in place, outside the graph)
        norm1.clamp_min_(eps)
        norm2.clamp_min_(eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: spacing dx (1 by default) or the sample points x."""
    n = y.shape[dim]
    if x is None:
        spacing = 1 if dx is None else dx
        if n == 0:
            return y.sum(dim) * spacing
        return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * spacing
    x_dim = dim if x.dim() > 1 else 0
    steps = x.narrow(x_dim, 1, x.shape[x_dim] - 1) - x.narrow(x_dim, 0, x.shape[x_dim] - 1)
    middle = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if steps.dim() == 1 and y.dim() > 1:
        steps = steps.view([-1 if d == dim % y.dim() else 1 for d in _builtins.range(y.dim())])
    return (steps * middle).sum(dim) / 2


trapz = trapezoid


def cartesian_prod(*tensors):
    """Every combination of one element of each 1-D tensor, one per row (one tensor: itself)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element is among test_elements (a bool tensor; no gradient)."""
    a = elements._data if isinstance(elements, Tensor) else _np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else _np.asarray(test_elements)
    return Tensor._wrap(_np.asarray(_np.isin(a, b, invert=invert)))


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of weight picked by input (nn.functional.embedding's op, its argument
    order)."""
    from .nn import functional as _F
    return _F.embedding(input, weight, None if padding_idx < 0 else padding_idx,
                        scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# ---- sparse COO tensors, held densely (gradtool/engine/autograd/sparse.py)
from .autograd.sparse import sparse_coo_tensor  # noqa: E402


def spmm(input, mat2):
    """A sparse matrix times a dense one (torch.sparse.mm)."""
    return input @ mat2


# ---- sparse compressed tensors (CSR, CSC, BSR, BSC), held densely
# (gradtool/engine/autograd/sparse_compressed.py)
from .autograd.memory import sparse_bsc, sparse_bsr, sparse_csc, sparse_csr  # noqa: E402
from .autograd.sparse_compressed import (sparse_bsc_tensor, sparse_bsr_tensor,  # noqa: E402
                                         sparse_compressed_tensor, sparse_csc_tensor,
                                         sparse_csr_tensor)


# ---- typed storages (torch.ByteStorage, ...: the legacy tensor constructors view them)
from .autograd.creation import STORAGES as _STORAGES, TypedStorage  # noqa: E402

globals().update({cls.__name__: cls for cls in _STORAGES.values()})


# ---- powers, chains of products, triangular and Cholesky solves (older names: linalg's)
from .autograd.linalg import (cholesky_inverse, cholesky_solve, matrix_power,  # noqa: E402
                              triangular_solve)
from .autograd.linalg import matrix_exp, pinverse  # noqa: E402
from .autograd.linalg import lu_solve_deprecated as lu_solve  # noqa: E402
from .autograd.linalg import geqrf, orgqr, ormqr  # noqa: E402
from .autograd.linalg import cholesky_deprecated as cholesky  # noqa: E402
from .autograd.linalg import pca_lowrank, svd_lowrank  # noqa: E402
from .autograd.lobpcg import lobpcg  # noqa: E402


def chain_matmul(*matrices, out=None):
    """Deprecated (torch warns the same): linalg.multi_dot of matrices given one by one."""
    _warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                   "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                   "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return _written_to(out, matrices[0].clone(), "chain_matmul")
    return _written_to(out, linalg.multi_dot(matrices), "chain_matmul",
                       _rules_of("chain_matmul"))  # (multi_dot's out: the same dtype)


# ---- the LU factorisation's older names
from .autograd.linalg import lu_unpack  # noqa: E402


def lu(A, pivot=True, get_infos=False):
    """Deprecated (torch warns the same): linalg.lu_factor(_ex)'s results."""
    _warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
        "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)", UserWarning, stacklevel=2)
    return A.lu(pivot, get_infos)


# ---- torch-level spellings of Tensor methods, stacking and splitting, dtype questions
for _name in ("swapaxes", "swapdims", "narrow", "select", "broadcast_to", "msort",
              "take_along_dim", "is_conj", "resolve_conj", "is_neg", "resolve_neg", "is_nonzero",
              "is_signed", "is_same_size", "count_nonzero", "isposinf", "isneginf", "isreal",
              "inner", "diagflat", "divide", "get_device", "bitwise_and", "bitwise_or",
              "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
              "vdot", "rad2deg", "deg2rad", "kthvalue"):
    globals().setdefault(_name, _method_as_function(_name))

# torch.exp_(x) is x.exp_(): torch's in-place functions, for those the engine's Tensor has
for _name in ("abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
              "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
              "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_",
              "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_",
              "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
              "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
              "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_",
              "tan_", "tanh_", "trunc_", "xlogy_", "zero_"):
    if hasattr(Tensor, _name):
        globals().setdefault(_name, _method_as_function(_name))


def _at_least(dims, tensors):
    """atleast_Nd's rule: one tensor in, one out; several (or a sequence), a tuple. A 1-d
    tensor grows to (1, n) and (1, n, 1), a 2-d one to (m, n, 1), as torch's."""
    def grown(t):
        if t.dim() >= dims:
            return t
        if t.dim() == 0:
            return t.reshape((1,) * dims)
        if t.dim() == 1:
            t = t.unsqueeze(0)
        return t.unsqueeze(-1) if dims == 3 else t
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        return tuple(grown(t) for t in tensors[0])
    return grown(tensors[0]) if len(tensors) == 1 else tuple(grown(t) for t in tensors)


def atleast_1d(*tensors):
    return _at_least(1, tensors)


def atleast_2d(*tensors):
    return _at_least(2, tensors)


def atleast_3d(*tensors):
    return _at_least(3, tensors)


def column_stack(tensors):
    """The tensors side by side as columns: 0-d and 1-d ones become one column each."""
    return hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


row_stack = vstack


def dstack(tensors):
    return cat(atleast_3d(*tensors), 2)


from .autograd.tensor_methods_extra import (corrcoef, dsplit, empty_strided,  # noqa: E402
                                            hsplit, vsplit)


def result_type(tensor1, tensor2):
    """The dtype an op on these two (tensors or numbers) gives, by torch's promotion."""
    return _dtypes.from_numpy_dtype(_dtypes.result_type(tensor1, tensor2))


def can_cast(from_, to):
    """Whether torch's casting rule allows from_ -> to (dtypes.can_cast)."""
    return _dtypes.can_cast(from_.numpy, to.numpy)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule's running sums along dim (one fewer than y's samples)."""
    n = y.shape[dim]
    middle = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    if x is None:
        return (middle * ((1 if dx is None else dx) / 2)).cumsum(dim)
    x_dim = dim if x.dim() > 1 else 0
    steps = x.narrow(x_dim, 1, x.shape[x_dim] - 1) - x.narrow(x_dim, 0, x.shape[x_dim] - 1)
    if steps.dim() == 1 and y.dim() > 1:
        steps = steps.view([-1 if d == dim % y.dim() else 1 for d in _builtins.range(y.dim())])
    return (steps * middle / 2).cumsum(dim)


# ---- settings that the engine's numpy arithmetic keeps as torch's CPU build reports them
_settings = {"deterministic": 0, "warn_always": False, "interop_threads": 1}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """The engine's ops are deterministic already; the setting is kept and reported."""
    if not isinstance(mode, _builtins.bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    _settings["deterministic"] = (1 if warn_only else 2) if mode else 0


def are_deterministic_algorithms_enabled():
    return _settings["deterministic"] > 0


def is_deterministic_algorithms_warn_only_enabled():
    return _settings["deterministic"] == 1


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        names = ("default", "warn", "error")
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = names.index(debug_mode)
    elif debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _settings["deterministic"] = debug_mode


def get_deterministic_debug_mode():
    return _settings["deterministic"]


def set_warn_always(b):
    _settings["warn_always"] = _builtins.bool(b)


def is_warn_always_enabled():
    return _settings["warn_always"]


def get_num_interop_threads():
    return _settings["interop_threads"]


def set_num_interop_threads(num):
    if not isinstance(num, _builtins.int) or num <= 0:
        raise RuntimeError("Number of inter-op threads must be positive")
    _settings["interop_threads"] = num


def init_num_threads():
    """torch's thread pools start here; numpy's need nothing."""


def set_flush_denormal(mode):
    """False: numpy's arithmetic cannot flush denormals to zero (torch answers False where it
    cannot either), so nothing changes."""
    return False


from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402


def set_anomaly_enabled(enabled, check_nan=True):
    autograd.set_detect_anomaly(enabled, check_nan)


# ---- factories over memory that exists already
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """A tensor of obj that shares its memory where it can (a tensor, a numpy array of a
    dtype the engine has), copying only when asked (copy=True) or when it must (a dtype
    change, Python lists); copy=False refuses to copy, as torch's."""
    target = None if dtype is None else _dtypes.to_numpy_dtype(dtype)
    if isinstance(obj, Tensor):
        data = obj._data
    elif isinstance(obj, _np.ndarray):
        data = obj
    else:
        data = tensor(obj, dtype=dtype)._data
        copy = False if copy is None else copy
    needs_copy = target is not None and data.dtype != target
    if copy is False and needs_copy:
        names = _dtypes.LEGACY_TYPE_NAMES
        raise ValueError(f"can't alias tensor with dtype '{names[data.dtype.name]}' into dtype "
                         f"'{names[target.name]}'.")
    if copy or needs_copy:
        data = data.astype(target if target is not None else data.dtype, copy=True)
    out = obj if isinstance(obj, Tensor) and data is obj._data and not requires_grad \
        else Tensor._wrap(data)
    if requires_grad:
        out.requires_grad_()
    return out


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over a Python buffer's bytes (shared, not copied), as torch's."""
    view = memoryview(buffer)
    if view.readonly:
        _warnings.warn("The given buffer is not writable, and PyTorch does not support "
                       "non-writable tensors. This means you can write to the underlying "
                       "(supposedly non-writable) buffer using the tensor. You may want to copy "
                       "the buffer to protect its data or make it writable before converting "
                       "it to a tensor. This type of warning will be suppressed for the rest "
                       "of this program.", UserWarning, stacklevel=2)
    data = _np.frombuffer(buffer, dtype=_dtypes.to_numpy_dtype(dtype), count=count,
                          offset=offset)
    out = Tensor._wrap(data if data.flags.writeable else data.copy())
    return out.requires_grad_() if requires_grad else out


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, **kwargs):
    """A 0-d tensor of the number s, of the default float dtype unless dtype says."""
    return tensor(s, dtype=dtype or get_default_dtype(), requires_grad=requires_grad)


def is_storage(obj):
    return isinstance(obj, TypedStorage)


# ---- torch's composite shape ops (autograd/composites.py)
from .autograd.composites import (block_diag, broadcast_shapes, broadcast_tensors,  # noqa: E402
                                  cartesian_prod, combinations, diff, kron, tensordot, trace,
                                  tril_indices, triu_indices, vander)

for _name in ("ravel", "unflatten", "tensor_split"):
    globals().setdefault(_name, _method_as_function(_name))

# ---- torch's elementwise functions beyond arithmetic (autograd/elementwise.py)
from .autograd import elementwise as _elementwise  # noqa: E402

for _name in _elementwise.NAMES:
    globals().setdefault(_name, _method_as_function(_name))

# ---- torch's scans and reductions beyond sums (autograd/scans.py)
from .autograd import scans as _scans  # noqa: E402

for _name in _scans.NAMES:
    globals().setdefault(_name, _method_as_function(_name))
searchsorted, bucketize = _scans.searchsorted, _scans.bucketize

# ---- torch.random, and the float32 matmul precision setting
from . import random  # noqa: E402

_float32_matmul_precision = "highest"


def get_float32_matmul_precision():
    return _float32_matmul_precision


def set_float32_matmul_precision(precision):
    """Stored and returned as torch's; the engine's float32 matmul is numpy's, which has one
    precision: the setting changes no number (as on torch's CPU, docs/limits.md)."""
    global _float32_matmul_precision
    if precision not in ("highest", "high", "medium"):
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                       f"setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _float32_matmul_precision = precision

# ---- the *_copy ops: a view's result in memory of its own (autograd/copies.py)
from .autograd.copies import FUNCTIONS as _COPIES  # noqa: E402
from .autograd.strided import FUNCTIONS as _STRIDED  # noqa: E402 (as_strided over storage)

globals().update(_COPIES)
globals().update(_STRIDED)

# ---- out=: every function torch calls with out= takes it (after the last name above is made)
from .autograd.out_argument import given_out as _given_out  # noqa: E402

_given_out(globals(), "torch")
