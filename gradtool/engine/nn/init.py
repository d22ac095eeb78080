"""nn.init: fill a tensor in place, under no_grad, so that parameters (leaves that require
grad, on which in-place ops are otherwise refused) can be (re)initialised without the fill
being recorded. Random fills draw from gradtool.manual_seed's generator. As torch.nn.init."""
import math
import warnings

import numpy as np

from ..autograd import anomaly, creation, forward_level, inplace, observers
from ..autograd.dispatch import run_forward
from ..autograd.grad_mode import no_grad
from ..autograd.ops import derivatives as table
from ..autograd.tensor import Tensor
from .parameter import Parameter


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (1 for linear/sigmoid, 5/3 for tanh, sqrt(2)
    for relu, sqrt(2 / (1 + slope**2)) for leaky_relu, 3/4 for selu)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    shape = tensor.shape  # (read once: every Linear's initialisation asks twice)
    receptive_field = 1
    for s in shape[2:]:
        receptive_field *= s
    return shape[1] * receptive_field, shape[0] * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with values drawn from U(a, b)."""
    if _plain(tensor):
        return _draw_into(tensor, table.UNIFORM, (a, b, creation.generator(None)))
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with values drawn from N(mean, std**2)."""
    if _plain(tensor):
        return _draw_into(tensor, table.NORMAL, (mean, std, creation.generator(None)))
    with no_grad():
        return tensor.normal_(mean, std)


# A model's construction fills each new parameter once (6,000 fills for 3,000 Linear layers):
# where none of the in-place dispatch's cases can apply, the fill is written directly, as
# that dispatch would under no_grad (the same draw, written in place, the version bumped).
_FILLED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _plain(tensor):
    """Whether a fill of `tensor` is its draw written in place and nothing else: a tensor or
    parameter of its own writable memory, float32/64, not an inference tensor, with nothing
    watching or transforming ops (observers, vmap, forward-mode AD)."""
    if type(tensor) is not Tensor and type(tensor) is not Parameter:
        return False
    data = tensor._data
    return (tensor._base is None and not tensor._is_inference and data.dtype in _FILLED_DTYPES
            and data.flags.c_contiguous and data.flags.writeable and not observers.subscribers
            and inplace.batching_hook is None and forward_level.active is None)


def _draw_into(tensor, spec, args):
    np.copyto(tensor._data, run_forward(spec, (tensor._data,), args), casting="same_kind")
    counter = tensor._version_counter
    counter[0] += 1
    counter[1] = anomaly.user_site()  # (as every in-place write: named if it breaks a backward)
    return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(creation.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """The identity of a convolution (3-5 dims): 1 at each kernel's centre from input channel
    d to output channel d (of each group), 0 elsewhere."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = tensor.shape[0] // groups
    centre = tuple(n // 2 for n in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_per_group, tensor.shape[1])):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015). Linear's default
    weight initialisation is kaiming_uniform_(w, a=sqrt(5)): bound = 1 / sqrt(fan_in)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """N(0, std**2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """N(mean, std**2) restricted to [a, b] (redrawn where it falls outside)."""
    rng = creation.generator()
    values = rng.normal(mean, std, tuple(tensor.shape))
    outside = (values < a) | (values > b)
    while outside.any():
        values[outside] = rng.normal(mean, std, int(outside.sum()))
        outside = (values < a) | (values > b)
    with no_grad():
        return tensor.copy_(creation.from_numpy(values))


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (Saxe et al., 2013) from the QR decomposition of a normal
    draw, signs fixed by R's diagonal, scaled by gain; dims after the first are flattened."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = creation.generator().standard_normal((rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.view_as(creation.from_numpy(q)).copy_(creation.from_numpy(q * gain))
    return tensor


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error


# torch's older spellings, without the trailing underscore: they fill in place all the same,
# and warn as torch's do
def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of "
                      f"`nn.init.{new.__name__}`.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = old.__qualname__ = new.__name__[:-1]
    old.__doc__ = f"Deprecated: {new.__name__}."
    return old


uniform, normal, constant = map(_deprecated, (uniform_, normal_, constant_))
xavier_uniform, xavier_normal = map(_deprecated, (xavier_uniform_, xavier_normal_))
kaiming_uniform, kaiming_normal = map(_deprecated, (kaiming_uniform_, kaiming_normal_))
orthogonal = _deprecated(orthogonal_)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-d tensor drawn from N(0, std**2), then in each column ceil(sparsity * rows)
    entries, at random rows, set to 0 (Martens, 2010)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[creation.randperm(rows)[:num_zeros], col] = 0
    return tensor


eye, dirac, sparse = map(_deprecated, (eye_, dirac_, sparse_))
