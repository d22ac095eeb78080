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
from .library import ops  # noqa: E402  (torch.ops.<namespace>.<op>)


def __getattr__(name):
    """torch.vmap is torch.func.vmap (loaded on first use, as torch.func is)."""
    if name == "vmap":
        from .func import vmap
        return vmap
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
