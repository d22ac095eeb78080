"""The torch namespace the engine gives (`import torch` in a file gradtool runs): tensors,
factories, dtypes, grad modes, free functions, autograd, nn, optim. gradtool/engine/__init__.py
serves it lazily."""
from . import autograd
from .autograd.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full,
                                full_like, linspace, manual_seed, ones, ones_like, rand, rand_like,
                                randint, randn, randn_like, randperm, tensor, zeros, zeros_like)
from .autograd.device import device, get_default_device, set_default_device
from .autograd.dtypes import (bfloat16, bool_ as bool, complex64, complex128, dtype, float16,
                              float32, float64, int8, int16, int32, int64, uint8)
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd.einsum import einsum
from .autograd.complex_numbers import complex, is_complex, polar, view_as_complex, view_as_real
from .autograd.ops import api as _api
from .autograd.free_functions import (cat, concat, concatenate, is_inference, maximum, meshgrid,
                                      minimum, normal, stack, std_mean, var_mean, where)
from .autograd.matmul import matmul
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


# ---- typed storages (torch.ByteStorage, ...: the legacy tensor constructors view them)
from .autograd.creation import STORAGES as _STORAGES, TypedStorage  # noqa: E402

globals().update({cls.__name__: cls for cls in _STORAGES.values()})


# ---- the LU factorisation's older names
from .autograd.linalg import lu_unpack  # noqa: E402


def lu(A, pivot=True, get_infos=False, out=None):
    """Deprecated (torch warns the same): linalg.lu_factor(_ex)'s results."""
    _warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
        "should be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)", UserWarning, stacklevel=2)
    return A.lu(pivot, get_infos)


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
