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
