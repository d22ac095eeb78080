"""nn.functional: layers and losses as functions. Where torch records one node (the losses,
gelu, layer_norm, ...), so does gradtool, with the op table's row for it; the others are
compositions of the engine's ops, as in torch. Either way gradients of any order come from
the op table."""
import math
import warnings

import numpy as np

from ..autograd import creation, dtypes
from ..autograd.ops import derivatives as table
from ..autograd.ops import kernels
from ..autograd.dispatch import broadcast_mismatch, call  # (the dispatch every op runs through)
from ..autograd.free_functions import vector_norm, where
from ..autograd.grad_mode import no_grad
from ..autograd.inplace import call_inplace
from ..errors import NotInEngineError

_REDUCTIONS = ("mean", "sum", "none")


# ---------------- layers ----------------
def linear(input, weight, bias=None):
    """input @ weight.T + bias, with weight of shape (out_features, in_features): with a
    bias, one AddmmBackward0 node on the input's rows (viewed as a matrix), as torch; a
    non-contiguous input of more than 2 dims goes through matmul and an add, as torch."""
    if bias is None:
        return input.matmul(weight.t())
    if input.dim() == 2:
        return bias.addmm(input, weight.t())
    if not input.is_contiguous():
        return input.matmul(weight.t()) + bias
    rows = input.reshape(-1, input.shape[-1]) if input.dim() else input
    out = bias.addmm(rows, weight.t())
    return out.view(*input.shape[:-1], weight.shape[0])


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def gelu(input, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; approximate="tanh": torch's tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return call(table.GELU, (input,), (approximate,))


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return (call_inplace if inplace else call)(table.SILU, (input,))


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    return call(table.SOFTPLUS, (input,), (beta, threshold))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    if inplace:
        return call_inplace(table.LEAKY_RELU.in_place, (input,), (negative_slope,))
    return call(table.LEAKY_RELU, (input,), (negative_slope,))


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    if inplace:
        return call_inplace(table.ELU.in_place, (input,), (alpha, 1, 1))
    return call(table.ELU, (input,), (alpha, 1, 1))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps), as torch composes it."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return input.softmax(_softmax_dim("softmax", input, dim))


def log_softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return input.log_softmax(_softmax_dim("log_softmax", input, dim))


def _softmax_dim(name, input, dim):
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  f"to include dim=X as an argument.", stacklevel=3)
    return 0 if input.dim() in (0, 1, 3) else 1


def dropout(input, p=0.5, training=True, inplace=False):
    """In training, zero each element with probability p and scale the rest by 1 / (1 - p)
    (so the expected value is unchanged); otherwise return the input itself.
    The mask is drawn from gradtool.manual_seed's generator."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if type(input._data) is not np.ndarray:  # under vmap: a mask per example (randomness=)
        mask = input.detach().clone().bernoulli_(1.0 - p) / (1.0 - p) if p < 1 else 0.0
        return input.mul_(mask) if inplace else input * mask
    if p == 1.0:
        scale = np.zeros(tuple(input.shape), input._data.dtype)
    else:
        keep = creation.generator().random(tuple(input.shape)) >= p
        scale = (keep / (1.0 - p)).astype(input._data.dtype)
    mask = creation.from_numpy(scale)
    return input.mul_(mask) if inplace else input * mask


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last len(normalized_shape) dims (biased variance), then scale and
    shift elementwise: one NativeLayerNormBackward0 node, as torch."""
    shape = _as_shape(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape or input.dim() < len(shape):
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    return call(table.NATIVE_LAYER_NORM, (input, weight, bias), (shape, eps))[0]


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) of an (N, C, *) input, then scale by weight and shift
    by bias per channel. In training, with the batch's statistics (biased variance), and
    running_mean/running_var, when given, move towards them in place: new = (1 - momentum)
    * old + momentum * batch statistic, the variance unbiased. Otherwise with running_mean and
    running_var. One NativeBatchNormBackward0 node, as torch."""
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    elif running_mean is None or running_var is None:
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be "
                           f"defined in evaluation mode")
    return call(table.NATIVE_BATCH_NORM, (input, weight, bias, running_mean, running_var),
                  (bool(training), momentum, eps))[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Each sample's channels in num_groups groups, each normalised by its own mean and
    (biased) variance, then scaled and shifted per channel: one NativeGroupNormBackward0."""
    if input.dim() < 2 or input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    n, c = input.shape[:2]
    return call(table.NATIVE_GROUP_NORM, (input, weight, bias),
                  (n, c, input.numel() // max(n * c, 1), num_groups, eps))[0]


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (dim 1) with probability p, scaling the others by 1 / (1 - p):
    one mask per (sample, channel), multiplied in (MulBackward0, as torch)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that "
                      "dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout(input, p, training, inplace, feature=True)


# ---------------- convolutions, pooling, padding, resampling ----------------
_TORCH_DTYPE_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half"}


def _per_dim(value, n, name):
    """An int or a sequence of n ints (or one, repeated), as torch's _pair/_single."""
    values = (value,) * n if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) == 1:
        values *= n
    if len(values) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got {name}="
                           f"{list(values)}")
    return tuple(int(v) for v in values)


def _batched(input, spatial, name):
    """(input with a batch dim, whether it had one): torch's unbatched (C, *spatial) form."""
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                           f"input to {name}, but got input of size: {list(input.shape)}")
    return (input, True) if input.dim() == spatial + 2 else (input.unsqueeze(0), False)


def _check_convolution(input, weight, bias, stride, padding, groups, transposed):
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_DTYPE_NAMES.get(input.dtype.name)} "
                           f"but found {_TORCH_DTYPE_NAMES.get(weight.dtype.name)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({input.dtype.name.replace('float64', 'double')}) and "
                           f"bias type ({bias.dtype.name.replace('float32', 'float')}) should "
                           f"be the same")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if not transposed and weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           f"instead")  # (torch's message nests the list)
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != channels:
        given = "transposed=1" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {given}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {channels} channels, but got "
                           f"{input.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")


def _convolution(input, weight, bias, stride, padding, dilation, groups, spatial, name):
    input, batched = _batched(input, spatial, name)
    stride, dilation = _per_dim(stride, spatial, "stride"), _per_dim(dilation, spatial, "dilation")
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, padding, stride, dilation)
    else:
        padding = _per_dim(padding, spatial, "padding")
    _check_convolution(input, weight, bias, stride, padding, groups, False)
    kernel = tuple(d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation))
    padded = tuple(n + 2 * p for n, p in zip(input.shape[2:], padding))
    if any(k > n for k, n in zip(kernel, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
                           f"actual input size")
    out = call(table.CONVOLUTION, (input, weight, bias),
                 (stride, padding, dilation, False, (0,) * len(padding), groups))
    return out if batched else out.squeeze(0)


def _string_padding(input, weight, padding, stride, dilation):
    """'valid' (none) or 'same' (the output the input's size): an odd total is padded one
    more on the right first, with F.pad (ConstantPadNdBackward0), as torch."""
    if padding == "valid":
        return input, (0,)  # (torch saves the one 0)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    extra = [t % 2 for t in totals]
    if any(extra):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", stacklevel=4)
        input = pad(input, [p for e in reversed(extra) for p in (0, e)])
    return input, tuple(t // 2 for t in totals)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 1-d convolution (cross-correlation) of (N, C_in, L) or (C_in, L) inputs with weight
    (C_out, C_in / groups, k): one ConvolutionBackward0 node, as torch."""
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 2-d convolution (cross-correlation) of (N, C_in, H, W) or (C_in, H, W) inputs with
    weight (C_out, C_in / groups, kH, kW); padding an int, a pair, 'valid' or 'same'. One
    ConvolutionBackward0 node, as torch."""
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _convolution_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, spatial, name):
    input, batched = _batched(input, spatial, name)
    stride, padding, output_padding, dilation = (
        _per_dim(v, spatial, n) for v, n in ((stride, "stride"), (padding, "padding"),
                                            (output_padding, "output_padding"),
                                            (dilation, "dilation")))
    _check_convolution(input, weight, bias, stride, padding, groups, True)
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width")[-spatial:]
        parts = [f"{what}_{n}: {v}" for what, values in (
            ("output_padding", output_padding), ("stride", stride), ("dilation", dilation))
            for n, v in zip(names, values)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))
    out = call(table.CONVOLUTION, (input, weight, bias),
                 (stride, padding, dilation, True, output_padding, groups))
    return out if batched else out.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transpose (adjoint in the input) of conv1d, weight (C_in, C_out / groups, k)."""
    return _convolution_transpose(input, weight, bias, stride, padding, output_padding, groups,
                                  dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transpose (adjoint in the input) of conv2d, weight (C_in, C_out / groups, kH, kW):
    one ConvolutionBackward0 node (transposed=True), as torch."""
    return _convolution_transpose(input, weight, bias, stride, padding, output_padding, groups,
                                  dilation, 2, "conv_transpose2d")


def _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, name, spatial=2):
    """kernel_size, stride (() when not given: the kernel's, saved as torch saves it), padding,
    dilation per spatial dim (2 or 3), checked as torch's pooling checks them."""
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: Expected 3D or 4D tensor, but got {list(input.shape)}"
                           if spatial == 2 else
                           "non-empty 4D or 5D (batch mode) tensor expected for input")
    kernel_size = _per_dim(kernel_size, spatial, "kernel_size")
    stride = () if stride is None or stride == [] or stride == () else _per_dim(
        stride, spatial, "stride")
    padding = _per_dim(padding, spatial, "padding")
    dilation = _per_dim(dilation, spatial, "dilation")
    for p, k, d in zip(padding, kernel_size, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    sizes = tuple(input.shape[-spatial:])
    if name == "avg_pool3d" and any(n < k for n, k in zip(sizes, kernel_size)):
        raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} "
                           "kH: {} kW: {})".format(*sizes, *kernel_size))
    out = tuple(kernels.pooling_output_size(n, k, p, s, d, ceil_mode) for n, k, p, s, d in zip(
        sizes, kernel_size, padding, stride or kernel_size, dilation))
    if min(out) < 1:
        planes = input.shape[-spatial - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (planes,) + sizes))}). "
                           f"Calculated output size: ({'x'.join(map(str, (planes,) + out))}). "
                           f"Output size is too small")
    return kernel_size, stride, padding, dilation


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each window (ties: the first; NaN wins), and with return_indices
    its index in the flattened (H, W) plane: one MaxPool2DWithIndicesBackward0 node."""
    args = _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    out, indices = call(table.MAX_POOL2D_WITH_INDICES, (input,), args + (bool(ceil_mode),))
    return (out, indices) if return_indices else out


max_pool2d_with_indices = max_pool2d


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window (divided by divisor_override if given; without
    count_include_pad, padding cells are not counted): one AvgPool2DBackward0 node."""
    kernel_size, stride, padding, _ = _pool_args(input, kernel_size, stride, padding, 1,
                                                 ceil_mode, "avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return call(table.AVG_POOL2D, (input,), (kernel_size, stride, padding, bool(ceil_mode),
                                          bool(count_include_pad), divisor_override))


def _adaptive_size(input, output_size, name, spatial=2):
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got"
                           f"{':' if name == 'adaptive_max_pool3d' else ''} {list(input.shape)}")
    sizes = (output_size,) * spatial if isinstance(output_size, (int, np.integer)) or (
        output_size is None) else tuple(output_size)
    if len(sizes) != spatial:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be 3"
                           if name == "adaptive_max_pool3d" else
                           f"{name}: output_size must be {spatial}")
    return tuple(int(n if s is None else s) for s, n in zip(sizes, input.shape[-spatial:]))


def adaptive_avg_pool2d(input, output_size):
    """Means over windows that split (H, W) into output_size as evenly as torch's do;
    output_size 1 is a mean over the last two dims (as torch)."""
    size = _adaptive_size(input, output_size, "adaptive_avg_pool2d")
    if size == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    return call(table.ADAPTIVE_AVG_POOL2D, (input,), (size,))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    size = _adaptive_size(input, output_size, "adaptive_max_pool2d")
    out, indices = call(table.ADAPTIVE_MAX_POOL2D, (input,), (size,))
    return (out, indices) if return_indices else out


adaptive_max_pool2d_with_indices = adaptive_max_pool2d


def pad(input, pad, mode="constant", value=None):
    """Pads (pad: (left, right) pairs from the last dim backwards) with a constant (negative
    pads crop), or by reflecting, replicating or wrapping around the edges, as torch."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.dim()}")
    if mode == "constant":
        return call(table.CONSTANT_PAD_ND, (input,), (tuple(pad), 0 if value is None else value))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    dims = len(pad) // 2
    if dims not in (1, 2, 3) or input.dim() not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    for i in range(dims):
        left, right, size = pad[2 * i], pad[2 * i + 1], input.shape[-1 - i]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({left}, "
                               f"{right}) at dimension {input.dim() - 1 - i} of input "
                               f"{list(input.shape)}")
    rows = {("reflect", 1): table.REFLECTION_PAD1D, ("reflect", 2): table.REFLECTION_PAD2D,
            ("reflect", 3): table.REFLECTION_PAD3D,
            ("replicate", 1): table.REPLICATION_PAD1D, ("replicate", 2): table.REPLICATION_PAD2D,
            ("replicate", 3): table.REPLICATION_PAD3D}
    return call(rows[mode, dims], (input,), (tuple(pad),))


def _pad_circular(input, pad):
    """Wrapped around: torch's composition (the input copied into a new tensor, then each
    dim's wrapped edges copied from it: CopySlices nodes, as torch's graph)."""
    dims = len(pad) // 2
    lead = input.dim() - dims
    shape = list(input.shape[:lead])
    for i in range(dims):
        left, right = pad[2 * (dims - i - 1)], pad[2 * (dims - i - 1) + 1]
        size = input.shape[lead + i]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape.append(size + left + right)
    out = input.new_empty(shape)
    out_slice, in_slice = out, input
    for i in range(dims):
        dim, left, right = input.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        out_slice = out_slice.narrow(dim, max(left, 0), shape[dim] - max(left, 0) - max(right, 0))
        in_slice = in_slice.narrow(dim, max(-left, 0),
                                   input.shape[dim] - max(-left, 0) - max(-right, 0))
    out_slice.copy_(in_slice)
    for i in range(dims):
        dim, left, right = input.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]
        if left > 0:
            out.narrow(dim, 0, left).copy_(
                out.narrow(dim, shape[dim] - left - max(right, 0), left))
        if right > 0:
            out.narrow(dim, shape[dim] - right, right).copy_(
                out.narrow(dim, max(left, 0), right))
    return out


_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resized to `size` or by `scale_factor`: modes 'nearest' (3-D and 4-D inputs),
    'bilinear' (4-D, align_corners) and 'area' (adaptive average pooling), with torch's
    source positions and nodes (UpsampleNearest2DBackward0, ...)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    spatial = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if mode not in ("nearest", "bilinear", "area") or antialias or spatial not in (1, 2) or (
            mode != "nearest" and spatial != 2):
        if mode == "bilinear" and spatial != 2:
            raise NotImplementedError(f"Got {input.dim()}D input, but bilinear mode needs 4D "
                                      f"input")
        raise NotInEngineError(f"torch.nn.functional.interpolate(mode='{mode}'"
                               + (", antialias=True" if antialias else "")
                               + f") of a {input.dim()}-D input")
    if size is not None:
        output_size, scales = _per_dim(size, spatial, "size"), (None,) * spatial
    else:
        factors = (tuple(float(f) for f in scale_factor) if isinstance(scale_factor, (
            tuple, list)) else (float(scale_factor),) * spatial)
        output_size = tuple(int(math.floor(n * f)) for n, f in zip(input.shape[2:], factors))
        scales = (None,) * spatial if recompute_scale_factor else factors
    if min(output_size) <= 0 or min(input.shape[2:]) <= 0:
        names = "HW" if spatial == 2 else "W"
        sizes = "".join(f"{n}: {v}, " for n, v in zip(names, input.shape[2:]))
        outs = "".join(f"{n}: {v}, " for n, v in zip(names, output_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({sizes[:-2]}) output ({outs[:-2]})")
    if mode == "area":
        return adaptive_avg_pool2d(input, output_size)
    if mode == "nearest":
        row = table.UPSAMPLE_NEAREST1D if spatial == 1 else table.UPSAMPLE_NEAREST2D
        return call(row, (input,), (output_size,) + scales)
    return call(table.UPSAMPLE_BILINEAR2D, (input,), (output_size, bool(align_corners)) + scales)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of weight picked by the integer tensor input (torch's EmbeddingBackward0). The
    padding_idx row gets no gradient, as in torch."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not "
                                  "supported")
    if input._data.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.dtype} instead "
                           f"(while checking arguments for embedding)")
    indices = input._data
    indices = getattr(indices, "examples", indices)  # (under vmap: every example's indices)
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return call(table.EMBEDDING, (weight, input),
                (-1 if padding_idx is None else padding_idx, scale_grad_by_freq, sparse))


def one_hot(tensor, num_classes=-1):
    """int64 (..., num_classes) with a 1 at each index (not differentiable)."""
    indices = tensor._data
    if indices.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if indices.size and indices.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(indices.max()) + 1 if indices.size else 0
    elif indices.size and indices.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return creation.from_numpy((indices[..., None] == np.arange(num_classes)).astype(np.int64))


# ---------------- attention ----------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v over the last two dims, scale 1/sqrt(E) by default;
    a boolean mask keeps where True, a float mask is added. Composed as torch's math backend
    (q and k each scaled by sqrt(scale)), with its _safe_softmax (a row that masks every key
    gives zeros, and zero gradients); torch's CPU kernel records one fused node
    (ScaledDotProductFlashAttentionForCpuBackward0), which the engine does not have."""
    from .attention import check_cpu_kernel
    check_cpu_kernel()  # (nn.attention.sdpa_kernel may have left out every CPU kernel)
    if enable_gqa:
        raise NotInEngineError("torch.nn.functional.scaled_dot_product_attention(enable_gqa=...)")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    target, source = query.size(-2), key.size(-2)
    scaling = math.sqrt(1.0 / math.sqrt(query.size(-1)) if scale is None else abs(scale))
    q = query * (-scaling if scale is not None and scale < 0 else scaling)
    if is_causal:
        attn_mask = creation.ones(target, source, dtype=dtypes.bool_).tril()
    attn = q.matmul(key.transpose(-2, -1) * scaling)
    if attn_mask is not None:
        attn = attn + _additive_mask(attn_mask, attn.dtype)
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p)
    return attn.matmul(value)


def _safe_softmax(scores):
    """softmax over the last dim, zeros for a row of -inf only (torch's _safe_softmax): the
    row is filled before the softmax too, so no NaN reaches the gradient."""
    masked = (scores == float("-inf")).all(-1, keepdim=True)
    if not masked.any():
        return scores.softmax(-1)
    return scores.masked_fill(masked, 0.0).softmax(-1).masked_fill(masked, 0.0)


def _additive_mask(mask, dtype):
    """A boolean mask (True: attend) as 0 / -inf to add; a float mask as it is."""
    if mask.dtype is not dtypes.bool_:
        return mask
    return creation.zeros(mask.shape, dtype=dtype).masked_fill(mask.logical_not(), float("-inf"))


def _padding_mask(mask, dtype):
    """A boolean key_padding_mask or attn_mask of MultiheadAttention (True: do not attend) as
    -inf / 0 to add (torch's _canonical_mask)."""
    if mask is None or mask.dtype is not dtypes.bool_:
        return mask
    return creation.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))


def _in_projection_packed(q, k, v, w, b):
    """q, k, v projected by one packed (3E, E) weight: one linear for self-attention (q is
    k is v), two for encoder-decoder attention (k is v), three otherwise, as torch."""
    e = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.view(*proj.shape[:-1], 3, e).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        q_proj, kv_proj = linear(q, w_q, b_q), linear(k, w_kv, b_kv)
        kv_proj = kv_proj.view(*kv_proj.shape[:-1], 2, e).unsqueeze(0).transpose(0, -2)
        kv_proj = kv_proj.squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """nn.MultiheadAttention's computation on (L, N, E) inputs (or unbatched (L, E)), with
    torch's steps: in-projection, heads folded into the batch, with need_weights explicit
    bmm/softmax/bmm (the weights returned, averaged over heads by default; a mask added by
    baddbmm), else scaled_dot_product_attention; then the out-projection."""
    for name, given in (("bias_k", bias_k), ("bias_v", bias_v), ("static_k", static_k),
                        ("static_v", static_v)):
        if given is not None:
            raise NotInEngineError(f"torch.nn.functional.multi_head_attention_forward({name}=...)")
    if add_zero_attn:
        raise NotInEngineError("torch.nn.MultiheadAttention(add_zero_attn=True)")
    batched = query.dim() == 3
    if not batched:
        query, key, value = (x.unsqueeze(1) for x in (query, key, value)) if not (
            key is value) else (query.unsqueeze(1),) + (key.unsqueeze(1),) * 2
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
                   linear(value, v_proj_weight, b_v))
    else:
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the sdpa kernel makes the causal mask itself
    else:
        is_causal = False
    attn_mask = _padding_mask(attn_mask, q.dtype)
    if attn_mask is not None and attn_mask.dim() == 2:
        attn_mask = attn_mask.unsqueeze(0)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    key_padding_mask = _padding_mask(key_padding_mask, q.dtype)
    if key_padding_mask is not None:
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = attn_mask.baddbmm(q_scaled, k.transpose(-2, -1))
        else:
            weights = q_scaled.bmm(k.transpose(-2, -1))
        weights = weights.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return (out, weights) if batched else (out.squeeze(1), weights.squeeze(0))
    if attn_mask is not None:
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 and attn_mask.dim() == 3
                     else attn_mask.view(bsz, num_heads, -1, src_len))
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    return (out, None) if batched else (out.squeeze(1), None)


# ---------------- losses ----------------
_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}  # what torch's loss nodes save


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduction(size_average, reduce, reduction):
    """torch's legacy size_average/reduce flags, when given, decide the reduction."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduction = ("mean" if size_average else "sum") if reduce in (None, True) else "none"
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", stacklevel=3)
    _check_reduction(reduction)
    return reduction


def _warn_if_broadcast(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      f"broadcasting. Please ensure they have the same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """(input - target) ** 2, averaged (or summed, or not reduced): one MseLossBackward0."""
    reduction = _reduction(size_average, reduce, reduction)
    _warn_if_broadcast(input, target)
    return call(table.MSE_LOSS, (input, target), (_REDUCTION_ENUM[reduction],))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target|, reduced; composed of sub, abs and the reduction, as torch."""
    reduction = _reduction(size_average, reduce, reduction)
    _warn_if_broadcast(input, target)
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _warn_if_broadcast(input, target)
    return call(table.SMOOTH_L1_LOSS, (input, target), (_REDUCTION_ENUM[reduction], beta))


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta) (d = input - target)."""
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _warn_if_broadcast(input, target)
    return call(table.HUBER_LOSS, (input, target), (_REDUCTION_ENUM[reduction], delta))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)) for probabilities x, each log clamped at -100."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         f"the same size.")
    # torch checks each element's input, then its target (NaN is outside [0, 1] too)
    values = [getattr(t._data, "examples", t._data) for t in (input, target)]  # (vmap: all)
    outside = [~((v >= 0) & (v <= 1)).ravel() for v in values]
    if outside[0].size != outside[1].size:  # (under vmap, one batched: which one, not where)
        outside = [o.any(keepdims=True) for o in outside]
    first = np.flatnonzero(outside[0] | outside[1])
    if first.size:
        which = "input" if outside[0][first[0]] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")
    if weight is not None:
        weight = weight.expand(target.shape)
    return call(table.BINARY_CROSS_ENTROPY, (input, target, weight), (_REDUCTION_ENUM[reduction],))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target), computed stably from the logits;
    pos_weight weighs the positive term."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    return call(table.BINARY_CROSS_ENTROPY_WITH_LOGITS, (input, target, weight, pos_weight),
                (_REDUCTION_ENUM[reduction],))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """-input[n, target[n]] (input holds log-probabilities, classes on dim 1), weighted by
    weight[target[n]]; the mean divides by the sum of the weights of the targets that are
    not ignore_index. One NllLossBackward0 node (NllLoss2DBackward0 for more than 2 dims)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    class_dim = 0 if input.dim() == 1 else 1
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    labels = target._data
    expected = tuple(s for d, s in enumerate(input.shape) if d != class_dim)
    if labels.shape != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(labels.shape)}")
    n_classes = input.shape[class_dim]
    if weight is not None and tuple(weight.shape) != (n_classes,):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    labels = getattr(labels, "examples", labels)  # (under vmap: every example's targets)
    valid = labels[labels != ignore_index]
    if valid.size and (valid.min() < 0 or valid.max() >= n_classes):
        bad = valid[(valid < 0) | (valid >= n_classes)][0]
        raise IndexError(f"Target {bad} is out of bounds.")
    args = (_REDUCTION_ENUM[reduction], ignore_index)
    if input.dim() <= 2:
        return call(table.NLL_LOSS, (input, target, weight), args)[0]
    if input.dim() == 4:
        return call(table.NLL_LOSS2D, (input, target, weight), args)[0]
    # other dims: viewed as (N, C, 1, rest), as torch does
    n = input.shape[0]
    out = call(table.NLL_LOSS2D, (input.reshape(n, n_classes, 1, -1), target.reshape(n, 1, -1),
                              weight), args)[0]
    return out.reshape(target.shape) if reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy between softmax(input) over the classes (dim 1, or 0 for one sample)
    and the target: class indices (an integer tensor, see nll_loss) or class probabilities
    (a float tensor shaped like input). label_smoothing mixes the target with the uniform
    distribution, with torch's formulas. For class indices: log_softmax then nll_loss (a
    NllLossBackward0 over a LogSoftmaxBackward0, as torch)."""
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = input.log_softmax(class_dim)
    w = None if weight is None else weight.detach().reshape(
        tuple(n_classes if d == class_dim else 1 for d in range(input.dim())))
    if target.is_floating_point():
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target if w is None else logp * target * w
        if reduction == "none":
            return -terms.sum(class_dim)
        total = -terms.sum()
        return total / (input.numel() / n_classes) if reduction == "mean" else total
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return nll
    # the uniform part, op for op as torch's cross_entropy_loss_label_smoothing (its graph):
    # -sum_c w_c log p_c per sample, ignored targets zeroed, reduced as nll_loss reduces
    smooth = -(logp if w is None else logp * w).sum(class_dim)
    ignored = target == ignore_index
    smooth.masked_fill_(ignored, 0.0)
    if reduction == "mean":
        kept = ~ignored
        smooth = smooth.sum() / (kept.sum() if weight is None else
                                 weight.detach()[target[kept]].sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return (call(table.MUL_SCALAR, (nll,), (1 - label_smoothing,))
            + call(table.MUL_SCALAR, (smooth,), (label_smoothing / n_classes,)))


def _as_shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


__all__ = ["linear", "relu", "tanh", "sigmoid", "gelu", "silu", "softplus", "leaky_relu", "elu",
           "softmax", "log_softmax", "dropout", "dropout2d", "layer_norm", "batch_norm",
           "group_norm", "normalize", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
           "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "pad",
           "interpolate", "upsample",
           "embedding", "one_hot", "scaled_dot_product_attention",
           "multi_head_attention_forward", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
           "cross_entropy"]


from .low_precision_mm import (  # noqa: E402,F401  (float8 and grouped products)
    ScalingType, SwizzleType, grouped_mm, scaled_grouped_mm, scaled_mm)
from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error


# ---- more activations: the op table's rows (HARDTANH, HARDSIGMOID, HARDSWISH, MISH,
# LOG_SIGMOID, PRELU, GLU, and ELU for selu) where torch has a node of its own, composites
# where torch composes (softsign, tanhshrink, softmin)
def _activation(spec, input, args=(), inplace=False):
    return (call_inplace if inplace else call)(spec, (input,), args)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]; the gradient passes strictly inside only."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _activation(table.HARDTANH, input, (min_val, max_val), inplace)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): hardtanh on [0, 6], as torch computes it."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return _activation(table.HARDSIGMOID, input, (), inplace)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    return _activation(table.HARDSWISH, input, (), inplace)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _activation(table.MISH, input, (), inplace)


def logsigmoid(input):
    """log(sigmoid(x)), computed as -softplus(-x) so that it does not overflow."""
    return call(table.LOG_SIGMOID, (input,))[0]


def prelu(input, weight):
    """x where x > 0, else weight * x, a weight of one value or one per channel (dim 1)."""
    if weight.dim() == 1 and weight.numel() > 1 and input.dim() >= 2:
        if input.shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{input.shape[1]}.")
        weight = weight.reshape((1, -1) + (1,) * (input.dim() - 2))  # (torch's shape)
    return call(table.PRELU, (input, weight))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """scale * elu(x, alpha) with torch's constants (an EluBackward0 node, as torch's)."""
    if inplace:
        return call_inplace(table.ELU.in_place, (input,), (_SELU_ALPHA, _SELU_SCALE, 1))
    return call(table.ELU, (input,), (_SELU_ALPHA, _SELU_SCALE, 1))


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def softmin(input, dim=None, dtype=None):
    """softmax(-x)."""
    return softmax(-input, dim, dtype=dtype)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the halves of the input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} "
                           f"is size {input.shape[dim]}")
    return call(table.GLU, (input,), (dim,))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Each sample's channels normalised by their own statistics: batch_norm over the input
    viewed as one sample of N * C channels, weight and bias repeated N times, as torch
    composes it (ViewBackward0 over NativeBatchNormBackward0, RepeatBackward0 beneath); the
    running statistics, when given, move by the mean over the samples."""
    n, c = input.shape[:2]
    shape = tuple(input.shape)
    flat = input.reshape((1, n * c) + shape[2:])
    repeat = (lambda t: None if t is None else t.repeat(n))
    mean, var = repeat(running_mean), repeat(running_var)
    out = batch_norm(flat, mean, var, repeat(weight), repeat(bias), use_input_stats, momentum,
                     eps)
    if use_input_stats and running_mean is not None:
        with no_grad():
            running_mean.copy_(mean.reshape(n, c).mean(0))
            running_var.copy_(var.reshape(n, c).mean(0))
    return out.reshape(shape)


# ---- 1-d average pooling: the 2-d op on the input given a height of 1, as torch composes it
# (UnsqueezeBackward0, the 2-d node, SqueezeBackward1)
def _single(value):
    return value[0] if isinstance(value, (tuple, list)) else value


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    kernel = _single(kernel_size)
    step = kernel if stride is None or stride == () or stride == [] else _single(stride)
    return avg_pool2d(input.unsqueeze(-2), (1, kernel), (1, step), (0, _single(padding)),
                      ceil_mode, count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _single(output_size))).squeeze(-2)


# ---- 3-d convolutions (the N-d convolution row), 1-d max pools (the 2-d ops on a height of
# 1, as torch's), pixel (un)shuffle and unfold/fold (rows of their own), and compositions
# written as torch writes them (rms_norm, kl_div, cosine_similarity, gumbel_softmax), so that
# their nodes and gradients are torch's
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """A 3-d convolution of (N, C_in, D, H, W) or (C_in, D, H, W) inputs with weight
    (C_out, C_in / groups, kD, kH, kW): one ConvolutionBackward0 node, as torch."""
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transpose (adjoint in the input) of conv3d, weight (C_in, C_out / groups, kD, kH,
    kW)."""
    return _convolution_transpose(input, weight, bias, stride, padding, output_padding, groups,
                                  dilation, 3, "conv_transpose3d")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each window along the last dim (indices along it)."""
    step = _single(kernel_size) if stride is None or stride in ((), []) else _single(stride)
    out = max_pool2d(input.unsqueeze(-2), (1, _single(kernel_size)), (1, step),
                     (0, _single(padding)), (1, _single(dilation)), ceil_mode, True)
    out, indices = out[0].squeeze(-2), out[1].squeeze(-2)
    return (out, indices) if return_indices else out


max_pool1d_with_indices = max_pool1d


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got "
                           f"{list(input.shape)}")
    out, indices = adaptive_max_pool2d(input.unsqueeze(-2), (1, _single(output_size)), True)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


adaptive_max_pool1d_with_indices = adaptive_max_pool1d


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): one PixelShuffleBackward0 node."""
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if upscale_factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got "
                           f"{upscale_factor}")
    if input.shape[-3] % (upscale_factor * upscale_factor):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)="
                           f"{input.shape[-3]} is not divisible by "
                           f"{upscale_factor * upscale_factor}")
    return call(table.PIXEL_SHUFFLE, (input,), (int(upscale_factor),))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W): one PixelUnshuffleBackward0 node."""
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if downscale_factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got "
                           f"{downscale_factor}")
    for dim, name in ((-2, "height"), (-1, "width")):
        if input.shape[dim] % downscale_factor:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {downscale_factor}")
    return call(table.PIXEL_UNSHUFFLE, (input,), (int(downscale_factor),))


def _pairs(*values):
    return [tuple(v) if isinstance(v, (tuple, list)) else (v, v) for v in values]


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of a (N, C, H, W) or (C, H, W) input as columns, (N, C kh kw, L)
    or (C kh kw, L): one Im2ColBackward0 node."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    return call(table.IM2COL, (input,), tuple(_pairs(kernel_size, dilation, padding, stride)))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """unfold's adjoint: columns (N, C kh kw, L) or (C kh kw, L) summed back into an
    output_size plane: one Col2ImBackward0 node."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    size, kernel, dilation, padding, stride = _pairs(output_size, kernel_size, dilation,
                                                     padding, stride)
    columns = input if input.dim() == 3 else input.unsqueeze(0)  # (for the checks)
    if columns.shape[1] % (kernel[0] * kernel[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={columns.shape[1]} "
                           f"and kernel_size={kernel}.")
    blocks = [(n + 2 * p - d * (k - 1) - 1) // s + 1
              for n, k, d, p, s in zip(size, kernel, dilation, padding, stride)]
    if columns.shape[2] != blocks[0] * blocks[1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation="
                           f"{dilation}, padding={padding}, stride={stride}, expected size of "
                           f"input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but "
                           f"got input.size(2)={columns.shape[2]}.")
    return call(table.COL2IM, (input,), (size, kernel, dilation, padding, stride))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input^2 over the last len(normalized_shape) dims) + eps), times
    weight; eps defaults to the dtype's machine epsilon. torch's composition."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if eps is None:
        from ..legacy import finfo
        eps = finfo(input.dtype).eps
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    result = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    return result if weight is None else result * weight


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || exp(input)) pointwise, target * (log target - input) (or, log_target,
    exp(target) * (target - input)), reduced: 'batchmean' divides the sum by the batch size;
    'mean', by every element (torch warns of it)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        pointwise = target.exp() * (target - input)
    else:  # xlogy(target, target): 0 where target is 0
        positive = target > 0
        pointwise = target * where(positive, target, 1.0).log() - target * input
    if reduction == "batchmean":
        return pointwise.sum() / input.shape[0] if input.dim() else pointwise.sum()
    if reduction == "mean":
        return pointwise.mean()
    if reduction == "sum":
        return pointwise.sum()
    if reduction == "none":
        return pointwise
    raise ValueError(f"{reduction} is not a valid value for reduction")


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / |x1| * x2 / |x2|) along dim, each norm at least eps: torch's order of
    operations (each normalised first, which keeps the result in [-1, 1])."""
    x1, x2 = _broadcast(x1, x2)
    norm1 = vector_norm(x1, 2, dim, keepdim=True).clone()
    norm2 = vector_norm(x2, 2, dim, keepdim=True).clone()
    with no_grad():
        norm1.clamp_(min=eps)
        norm2.clamp_(min=eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def _broadcast(x1, x2):
    """Both expanded to their broadcast shape (ExpandBackward0, as torch's expand_outplace)."""
    shape = tuple((x1 + x2).shape) if tuple(x1.shape) != tuple(x2.shape) else None
    return (x1, x2) if shape is None else (x1.expand(shape), x2.expand(shape))


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau); hard: the one-hot of its argmax, with the
    soft sample's gradient (straight through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    exponential = -(1 - creation.rand_like(logits)).log()  # Exp(1), as exponential_()
    gumbels = -exponential.log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---- the shrinks, threshold, celu and rrelu (rows of their own, as torch's nodes) and the
# in-place twins torch names with a trailing underscore
def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return call(table.HARDSHRINK, (input,), (lambd,))


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        maximum = np.finfo(input._data.dtype).max if input.is_floating_point() else math.inf
        raise RuntimeError(f"lambda must be in range [0, {maximum:g}] for input dtype "
                           f"{dtypes.LEGACY_TYPE_NAMES[input._data.dtype.name]}, but found "
                           f"{lambd:g}")
    return call(table.SOFTSHRINK, (input,), (lambd,))


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    if inplace:
        return call_inplace(table.THRESHOLD_, (input,), (threshold, value))
    return call(table.THRESHOLD, (input,), (threshold, value))


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _activation(table.CELU.in_place if inplace else table.CELU, input, (alpha,), inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each x <= 0 is scaled by a slope drawn from
    U(lower, upper) (torch's noise, saved for backward); otherwise by their mean."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    data = input._data
    noise = np.ones(data.shape, data.dtype)
    if training:
        negative = data <= 0
        noise[negative] = creation.generator().uniform(lower, upper, int(negative.sum()))
    inputs, args = (input, creation.from_numpy(noise)), (lower, upper, training)
    if inplace:
        return call_inplace(table.RRELU_WITH_NOISE.in_place, inputs, args)
    return call(table.RRELU_WITH_NOISE, inputs, args)


def relu_(input):
    return relu(input, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, inplace=True)


_threshold = threshold  # (threshold_'s argument `threshold` hides the function, as in torch)


# ---- bilinear (torch's _trilinear node between reshapes), pairwise_distance (composed as
# torch's C++: sub, add.Scalar, norm) and pdist (a node of its own)
def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    for k, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    rows1 = input1.reshape(-1, input1.shape[-1])
    rows2 = input2.reshape(-1, input2.shape[-1])
    out = call(table.TRILINEAR, (rows1, weight, rows2), ((1, 3), (0,), (1, 2), (2, 3), 1))
    out = out.reshape(*input1.shape[:-1], weight.shape[0])
    return out if bias is None else out + bias


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps over the last dim (of the larger input)."""
    innermost = max(x1.dim(), x2.dim()) - 1
    shifted = call(table.ADD_SCALAR, (x1 - x2,), (eps, 1))
    return call(table.NORM_SCALAROPT_DIM, (shifted,), (p, (innermost,), keepdim))


def pdist(input, p=2):
    """The p-norm distance of every pair of rows i < j of a matrix, as a vector."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return call(table.PDIST, (input,), (float(p),))


# ---- embedding_bag: torch's Python checks and layout (2-d input: one bag a row), then its
# _embedding_bag node
_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of rows of weight: a 2-d input's rows are the bags, a 1-d
    one is cut at `offsets`."""
    if weight.dtype == dtypes.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        offsets = creation.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None or sparse or scale_grad_by_freq:
        raise NotInEngineError("torch.nn.functional.embedding_bag(max_norm=..., sparse=True, "
                               "scale_grad_by_freq=True)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return call(table.EMBEDDING_BAG, (weight, input, offsets, per_sample_weights),
                (scale_grad_by_freq, _BAG_MODES[mode], sparse, include_last_offset,
                 -1 if padding_idx is None else padding_idx))[0]
# ---- the embedding, margin and likelihood losses: compositions of the engine's ops in the
# order of torch's ATen functions (aten/src/ATen/native/Loss.cpp), so the graphs match ----
_EPSILON = 1e-12  # cosine_embedding_loss's guard on the squared norms, torch's


def _legacy_reduction(size_average, reduce, reduction):
    return (_reduction(size_average, reduce, reduction)
            if size_average is not None or reduce is not None else reduction)


# C++'s arithmetic with a number: add.Scalar and sub.Scalar nodes, and a number minus a
# tensor as a filled tensor minus it in place (SubBackward0), as in torch's graphs
def _plus(tensor, number):
    return call(table.ADD_SCALAR, (tensor,), (number, 1))


def _minus(tensor, number):
    return call(table.SUB_SCALAR, (tensor,), (number, 1))


def _number_minus(number, tensor):
    return creation.full_like(tensor, number).sub_(tensor)


def _apply_loss_reduction(loss, reduction):
    """torch's apply_loss_reduction: an unknown reduction string is its ValueError."""
    _check_reduction(reduction)
    return _reduce(loss, reduction)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.pairwise_distance's formula, which the triplet losses call: the p-norm of
    x1 - x2 + eps over the last dimension."""
    dim = max(x1.dim(), x2.dim()) - 1
    if dim < 0:  # two scalars: the norm of a 0-d difference
        return (x1 - x2 + eps).norm(p)
    return call(table.NORM_SCALAROPT_DIM, (_plus(x1 - x2, eps),), (p, (dim,), keepdim))


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = _plus((input1 * input1).sum(dim), _EPSILON)
    mag_square2 = _plus((input2 * input2).sum(dim), _EPSILON)
    cos = prod_sum / (mag_square1 * mag_square2).sqrt_()
    zeros = creation.zeros_like(cos)
    pos = _number_minus(1, cos)
    neg = _minus(cos, margin).clamp_min_(0)
    output = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _apply_loss_reduction(output, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target is 1, max(0, margin - x) where it is -1 (both where it is neither)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zeros = creation.zeros_like(input)
    margin_clamp = _number_minus(margin, input).clamp_min_(0)
    output = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _apply_loss_reduction(output, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (x1 - x2) + margin): target 1 asks x1 to rank higher."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    output = _plus(-target * (input1 - input2), margin).clamp_min_(0)
    return _apply_loss_reduction(output, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise p-norm distance; swap: d(a, n) is
    min(d(a, n), d(p, n))."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = _pairwise_distance(anchor, positive, p, eps)
    dist_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = dist_neg.minimum(_pairwise_distance(positive, negative, p, eps))
    return _apply_loss_reduction((_plus(dist_pos, margin) - dist_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any distance (the pairwise one by default); torch's Python."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = _pairwise_distance if distance_function is None else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(distance(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def _check_triplet_dims(anchor, positive, negative):
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(x) - t x for log-rates (log_input), else x - t log(x + eps); full adds Stirling's
    approximation of log(t!) where t > 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * _plus(input, eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (x - t)^2 / var) (+ 0.5 log 2 pi with full), var clamped at eps
    without gradient through the clamp; var may omit or broadcast one dimension."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * creation.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(t log sigmoid(x) + (1 - t) log sigmoid(-x)), weighted, averaged over the classes."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


# ---- the margin losses torch computes in one op, each with its own node ----
def _class_targets(input, target, name):
    """multi_margin_loss's checks on the class indices."""
    n = input.shape[0] if input.dim() == 2 else 1
    if input.dim() == 2 and (target.dim() != 1 or target.shape[0] != n):
        raise RuntimeError(f"{name}: target tensor should be 1-D with size equal to the number "
                           f"of input samples (batch size). Expected target size [{n}], but got "
                           f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    labels = target._data
    if labels.size and (labels.min() < 0 or labels.max() >= input.shape[-1]):
        raise RuntimeError("target out of range")


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-y x)) for labels y of +-1: one SoftMarginLossBackward0."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    mismatch = broadcast_mismatch(tuple(input.shape), tuple(target.shape))
    if mismatch:
        raise RuntimeError(mismatch)
    shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    if shape != tuple(input.shape):  # (torch's loss is written into input's shape)
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    return call(table.SOFT_MARGIN_LOSS, (input, target), (_REDUCTION_ENUM[reduction],))


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: sum over j != y of max(0, margin - x[y] + x[j]) ** p
    (times weight[y]), / C; one MultiMarginLossBackward0."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None:
        if weight.dim() != 1:
            raise ValueError("weight must be one-dimensional")
        if weight.shape[0] != input.shape[-1]:
            raise RuntimeError(f"inconsistent weight size, expected {input.shape[-1]} but got "
                               f"{list(weight.shape)}")
    _class_targets(input, target, "multi_margin_loss")
    return call(table.MULTI_MARGIN_LOSS, (input, target, weight),
                (p, margin, _REDUCTION_ENUM[reduction]))


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: each row of target lists classes (ended by -1); sum over
    listed a and unlisted j of max(0, 1 - (x[a] - x[j])), / C; one
    MultilabelMarginLossBackward0."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    labels = target._data
    if labels.size and (labels.min() < -1 or labels.max() >= input.shape[-1]):
        raise RuntimeError("argument #2 'target' is out of range")
    return call(table.MULTILABEL_MARGIN_LOSS, (input, target), (_REDUCTION_ENUM[reduction],))[0]


# ---- CTC: torch's ctc_loss (aten's composite): _ctc_loss per sample (CtcLossBackward0), then
# zero_infinity's where, and the mean over the batch of each loss / its target length
_CTC_SIGNATURES = (
    " * (Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints "
    "target_lengths, int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = "
    "False)\n * (Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
    "int blank = 0, int reduction = at::Reduction::Mean, bool zero_infinity = False)")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The Connectionist Temporal Classification loss: -log of the probability of `targets`
    summed over its alignments with the (T, N, C) log_probs (or (T, C) for one sample);
    targets padded (N, S) or concatenated (sum of target_lengths)."""
    _check_reduction(reduction)
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                     _REDUCTION_ENUM[reduction], zero_infinity)


def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
              zero_infinity):
    """torch.ctc_loss, whose reduction is aten's integer."""
    lengths = _ctc_lengths(input_lengths, target_lengths)
    if lengths is None or type(blank) is not int or type(zero_infinity) is not bool:
        kinds = ", ".join(type(v).__name__ for v in (
            log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity))
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got "
                        f"({kinds}), but expected one of:\n{_CTC_SIGNATURES}")
    input_lengths, target_lengths = lengths
    if log_probs.dtype not in (dtypes.float32, dtypes.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{dtypes.LEGACY_TYPE_NAMES[log_probs._data.dtype.name]}'")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
    if targets.dtype is not dtypes.int64:
        targets = targets.to(dtypes.int64)
    _check_ctc_arguments(log_probs, targets, input_lengths, target_lengths, blank)
    loss = call(table.CTC_LOSS, (log_probs, targets),
                (input_lengths, target_lengths, blank, zero_infinity))[0]
    if zero_infinity:
        loss = where(loss == math.inf, creation.zeros((), dtype=loss.dtype), loss)
    if reduction == 1:
        lengths = creation.tensor(target_lengths, dtype=loss.dtype).clamp_min(1)
        return (loss / lengths).mean()
    if reduction == 2:
        return loss.sum()
    return loss if batched else loss.squeeze(0)


def _ctc_lengths(input_lengths, target_lengths):
    """Both lengths as tuples of ints, from tensors (of integers: torch's error otherwise) or
    from sequences of ints; None where torch's binding takes neither (both of one kind)."""
    from ..autograd.tensor import Tensor
    if isinstance(input_lengths, Tensor) and isinstance(target_lengths, Tensor):
        for name, lengths in (("input_lengths", input_lengths), ("target_lengths",
                                                                  target_lengths)):
            if lengths._data.dtype.kind not in "iu":
                raise RuntimeError(f"{name} must be integral")
        return (tuple(int(v) for v in input_lengths._data.reshape(-1)),
                tuple(int(v) for v in target_lengths._data.reshape(-1)))
    if all(isinstance(v, (tuple, list)) and all(type(x) is int for x in v)
           for v in (input_lengths, target_lengths)):
        return tuple(input_lengths), tuple(target_lengths)
    return None


def _check_ctc_arguments(log_probs, targets, input_lengths, target_lengths, blank):
    """torch's checks (ctc_loss_allocate_outputs), in its order and words."""
    where_from = " (while checking arguments for ctc_loss_allocate_outputs)"
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs'{where_from}")
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets'{where_from}")
    batch_size, num_labels = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < num_labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch_size:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch_size:
        raise RuntimeError("target_lengths must be of size batch_size")
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {length}{where_from}")
    size = sum(target_lengths) if targets.dim() == 1 else batch_size
    if targets.shape[0] != size:
        raise RuntimeError(f"Expected tensor to have size {size} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{where_from}")
    longest = max(target_lengths, default=0)
    if targets.dim() == 2 and targets.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                           f"but got size {targets.shape[1]} for argument #2 'targets'"
                           f"{where_from}")
    for length in input_lengths:
        if length < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                               f"value {length}{where_from}")
        if length > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most "
                               f"{log_probs.shape[0]}, but got value {length}{where_from}")
    labels = targets._data  # the labels read (padding past a target's length is not)
    used = (labels if labels.ndim == 1 else
            labels[np.arange(labels.shape[1]) < np.asarray(target_lengths)[:, None]])
    bad = used[(used < 0) | (used >= num_labels)]
    if bad.size:  # (torch's kernel reads out of bounds there: an error instead of its garbage)
        raise IndexError(f"ctc_loss: target label {int(bad[0])} is out of range for "
                         f"{num_labels} classes")


# ---- linear_cross_entropy: cross_entropy of linear's logits, composed as torch's reference
# path (its nodes); a (C, d1, ..., dK, in_features) weight gives K-dimensional logits
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), with
    ignore_index None meaning -100 for class indices (and refused for probabilities)."""
    if not 1 <= input.dim() <= 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                           f"respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:  # the chunked path, where it takes the call
        if (not out_features and reduction in ("mean", "sum", "none")
                and label_smoothing == 0.0 and target.dtype is dtypes.int64):
            from .linear_cross_entropy import chunked
            return chunked(input, linear_weight, target, linear_bias, weight, reduction,
                           ignore_index, options)
        _warn_not_chunked(out_features, reduction, label_smoothing, target, linear_bias)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _warn_not_chunked(out_features, reduction, label_smoothing, target, linear_bias):
    """torch's warning where its chunked path cannot take the call (the reference path runs)."""
    warnings.warn(f"linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                  f"{{'mean','sum','none'}}, label_smoothing == 0, target.dtype == int64, "
                  f"out_features == (). Got reduction={reduction!r}, label_smoothing="
                  f"{label_smoothing}, target.dtype={target.dtype}, out_features="
                  f"{out_features}, tracing=False, linear_bias.shape="
                  f"{None if linear_bias is None else tuple(linear_bias.shape)}.", stacklevel=3)

# ---- the pooling, padding, dropout and sampling families' long tail: 3-d pools (the 2-d
# kernels over (D, H, W), rows of their own as torch's), the dropouts as ATen's one
# _dropout_impl, max unpooling and fractional max pooling (rows of their own), and the layers
# torch composes in Python
# (lp pools, local response norm), composed the same way so that their nodes are torch's
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each (D, H, W) window, and with return_indices its index in the
    flattened (D, H, W) block: one MaxPool3DWithIndicesBackward0 node."""
    args = _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d", 3)
    out, indices = call(table.MAX_POOL3D_WITH_INDICES, (input,), args + (bool(ceil_mode),))
    return (out, indices) if return_indices else out


max_pool3d_with_indices = max_pool3d


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    kernel_size, stride, padding, _ = _pool_args(input, kernel_size, stride, padding, 1,
                                                 ceil_mode, "avg_pool3d", 3)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return call(table.AVG_POOL3D, (input,), (kernel_size, stride, padding, bool(ceil_mode),
                                          bool(count_include_pad), divisor_override))


def adaptive_avg_pool3d(input, output_size):
    """Means over windows splitting (D, H, W) into output_size; output_size 1 is a mean over
    the last three dims (as torch)."""
    size = _adaptive_size(input, output_size, "adaptive_avg_pool3d", 3)
    if size == (1, 1, 1):
        return input.mean((-1, -2, -3), keepdim=True)
    return call(table.ADAPTIVE_AVG_POOL3D, (input,), (size,))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    size = _adaptive_size(input, output_size, "adaptive_max_pool3d", 3)
    out, indices = call(table.ADAPTIVE_MAX_POOL3D, (input,), (size,))
    return (out, indices) if return_indices else out


adaptive_max_pool3d_with_indices = adaptive_max_pool3d


_SELU_SATURATION = 1.7580993408473766  # selu's scale * alpha: -selu's limit at -inf


def _dropout(input, p, training, inplace, feature=False, alpha=False):
    """ATen's _dropout_impl, for dropout2d/3d/1d and the alpha dropouts: one keep mask per
    element or (feature) per (sample, channel), kept with probability 1 - p. Plain: kept
    values scaled by 1 / (1 - p). Alpha (for SELU nets): dropped values set to selu's
    saturation -alpha', then an affine map a x + b that keeps mean 0 and variance 1."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        zero = creation.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = (tuple(input.shape[:2]) + (1,) * (input.dim() - 2) if feature
             else tuple(input.shape))
    keep = (creation.generator().random(shape) >= p).astype(input._data.dtype)
    if not alpha:
        noise = creation.from_numpy(keep / (1.0 - p))
        return input.mul_(noise) if inplace else input * noise
    a = 1.0 / math.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    shift = creation.from_numpy((keep - 1) * _SELU_SATURATION * a + _SELU_SATURATION * a * p)
    noise = creation.from_numpy(keep * a)
    return (input.mul_(noise) if inplace else input * noise).add_(shift)


def _channelwise_unbatched(input, batched, inplace, run):
    """torch's dropout1d/3d on an unbatched input: given a batch of one, then squeezed."""
    if batched:
        return run(input)
    out = run(input.unsqueeze_(0) if inplace else input.unsqueeze(0))
    return out.squeeze_(0) if inplace else out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Whole channels of (N, C, L) or (C, L) zeroed with probability p, the others scaled by
    1 / (1 - p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _channelwise_unbatched(input, input.dim() == 3, inplace, lambda x: _dropout(
        x, p, training, inplace, feature=True))


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Whole channels of (N, C, D, H, W) or (C, D, H, W) zeroed with probability p, the others
    scaled by 1 / (1 - p)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    ndim = input.dim()
    if ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that "
                      "dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channelwise_unbatched(input, ndim == 5, inplace, lambda x: _dropout(
        x, p, training, inplace, feature=True))


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped elements take selu's saturation value, then all are
    mapped affinely so that zero-mean unit-variance inputs keep their mean and variance."""
    return _dropout(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels (dim 1)."""
    return _dropout(input, p, training, inplace, feature=True, alpha=True)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, spatial):
    """torch's lp_pool1d/2d/3d: (sum of x^p over each window)^(1/p), as the window's mean of
    x^p times its size; p = +-inf is max pooling of |x| (of -|x|, negated)."""
    max_pool, avg_pool = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d),
                          3: (max_pool3d, avg_pool3d)}[spatial]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    window = math.prod(_per_dim(kernel_size, spatial, "kernel_size"))
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * relu(out.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each value divided by (k + alpha * mean of the squares of `size` neighbouring channels
    (zero-padded))^beta, as torch composes it (a pad and an average pool over channels)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def channel_shuffle(input, groups):
    """Channels (dim 1) split into `groups` groups and interleaved: channel g * (C / groups)
    + i moves to i * groups + g. One ChannelShuffleBackward0 node."""
    _check_channel_shuffle(input, groups)
    return call(table.CHANNEL_SHUFFLE, (input,), (int(groups),))


def native_channel_shuffle(input, groups):
    """channel_shuffle as torch's kernel-level op, which torch does not differentiate: its
    node (NotImplemented) refuses at backward."""
    _check_channel_shuffle(input, groups)
    return call(table.NATIVE_CHANNEL_SHUFFLE, (input,), (int(groups),))


def _check_channel_shuffle(input, groups):
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")


def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution over time of a (time, batch, in_channels) input by a (kernel_width,
    in_channels, out_channels) weight, `pad` zero frames at each end: one ConvTbcBackward0."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.dtype is not weight.dtype:  # (torch's product of each frame by the weight)
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{dtypes.LEGACY_TYPE_NAMES[input._data.dtype.name]} and "
                           f"{dtypes.LEGACY_TYPE_NAMES[weight._data.dtype.name]}")
    return call(table.CONV_TBC, (input, weight, bias), (int(pad),))


def upsample_nearest(input, size=None, scale_factor=None):
    """interpolate(mode='nearest'), under its deprecated name."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """interpolate(mode='bilinear', align_corners=True), under its deprecated name."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's: the size max pooling came from, or output_size (its last dims) when within
    a stride of it."""
    spatial = len(kernel_size)
    default = [(input.shape[-spatial + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(spatial)]
    if output_size is None:
        size = default
    else:
        given = output_size
        if len(output_size) == spatial + 2:
            output_size = output_size[2:]
        if len(output_size) != spatial:
            raise ValueError(f"output_size should be a sequence containing {spatial} or "
                             f"{spatial + 2} elements, but it has a length of "
                             f"'{len(output_size)}'")
        for d in range(spatial):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{given}" (dim {d} must be between {low} '
                                 f'and {high})')
        size = list(output_size)
    for d in range(spatial):
        if size[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={size[d]}")
    return [int(n) for n in size]


def _max_unpool(input, indices, output_size, spatial, stride=(), padding=()):
    """ATen's max_unpooling2d/3d checks, then the row."""
    if indices.dtype is not dtypes.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_TORCH_DTYPE_NAMES.get(indices.dtype.name, indices.dtype.name)}")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Input to max_unpooling{spatial}d should be a {spatial + 1}d or "
                           f"{spatial + 2}d Tensor, but got a tensor with {input.dim()} "
                           f"dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    if spatial == 2:
        return call(table.MAX_UNPOOL2D, (input, indices), (tuple(output_size),))
    return call(table.MAX_UNPOOL3D, (input, indices), (tuple(output_size), stride, padding))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool1d's partial inverse: the 2-d op on a width of 1, as torch's."""
    kernel_size = (_single(kernel_size),)
    stride = kernel_size if stride is None else (_single(stride),)
    size = _unpool_output_size(input, kernel_size, stride, (_single(padding),), output_size)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1], 2).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Each value of a max_pool2d output written back at its index, zeros elsewhere."""
    kernel_size = _per_dim(kernel_size, 2, "kernel_size")
    stride = kernel_size if stride is None else _per_dim(stride, 2, "stride")
    padding = _per_dim(padding, 2, "padding")
    return _max_unpool(input, indices, _unpool_output_size(input, kernel_size, stride, padding,
                                                           output_size), 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    kernel_size = _per_dim(kernel_size, 3, "kernel_size")
    stride = kernel_size if stride is None else _per_dim(stride, 3, "stride")
    padding = _per_dim(padding, 3, "padding")
    return _max_unpool(input, indices, _unpool_output_size(input, kernel_size, stride, padding,
                                                           output_size), 3, stride, padding)


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples,
                         spatial):
    """torch's fractional_max_pool2d/3d_with_indices: the output size (given, or the ratio of
    the input's), a sample per (sample, channel, dim) drawn when not given, and ATen's checks."""
    name = f"fractional_max_pool{spatial}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if spatial == 2 and len(output_ratio) > 2:  # (as torch's: a float ratio has no len)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             f"of Ints.")
        ratio = (output_ratio,) * spatial if isinstance(output_ratio, (int, float)) else tuple(
            output_ratio)
        output_size = [int(input.shape[d - spatial] * ratio[d]) for d in range(spatial)]
    if _random_samples is None:
        batch = 1 if input.dim() == spatial + 1 else input.shape[0]
        _random_samples = creation.rand(batch, input.shape[-spatial - 1], spatial,
                                        dtype=input.dtype)
    kernel_size = (kernel_size,) * spatial if isinstance(kernel_size, (int, np.integer)) else (
        tuple(kernel_size))
    output_size = (output_size,) * spatial if isinstance(output_size, (int, np.integer)) else (
        tuple(output_size))
    if len(kernel_size) != spatial:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of Ints")
    if len(output_size) != spatial:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of Ints")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}(): Expected {spatial + 1}D or {spatial + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    batch = 1 if input.dim() == spatial + 1 else input.shape[0]
    if _random_samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if _random_samples.shape[1] != input.shape[-spatial - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if _random_samples.shape[2] != spatial:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {spatial}; got "
                           f"{_random_samples.shape[2]}.")
    if _random_samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    words = (("height", "width") if spatial == 2 else ("time", "height", "width"))
    where = name + ("(): " if spatial == 2 else "_out(): ")
    for word, o, k, n in zip(words, output_size, kernel_size, input.shape[-spatial:]):
        if o + k - 1 > n:
            raise RuntimeError(f"{where}pool {word} {k} too large relative to input {word} {n}")
    row = table.FRACTIONAL_MAX_POOL2D if spatial == 2 else table.FRACTIONAL_MAX_POOL3D
    return call(row, (input, _random_samples), (kernel_size, output_size))


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max pooling over windows of kernel_size at pseudo-random starts, so that the output
    has output_size (or output_ratio of the input's size): one FractionalMaxPool2DBackward0."""
    out, indices = _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                        _random_samples, 2)
    return (out, indices) if return_indices else out


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out, indices = _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                        _random_samples, 3)
    return (out, indices) if return_indices else out


fractional_max_pool2d_with_indices = fractional_max_pool2d
fractional_max_pool3d_with_indices = fractional_max_pool3d


_ALIGN_CORNERS_DEFAULT = ("Default grid_sample and affine_grid behavior has changed to "
                          "align_corners=False since 1.3.0. Please specify align_corners=True "
                          "if the old behavior is desired. See the documentation of grid_sample "
                          "for details.")


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of F.grid_sample for a batch of
    affine maps theta (N, 2, 3) or (N, 3, 4), in normalised [-1, 1] coordinates: one
    AffineGridGeneratorBackward0 node, with torch's checks."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(list(size)[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. "
                      "This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return call(table.AFFINE_GRID_GENERATOR, (theta,), (tuple(int(n) for n in size),
                                                         bool(align_corners)))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """The input (N, C, H, W) or (N, C, D, H, W) read at the grid's normalised positions
    (N, H', W', 2) or (N, D', H', W', 3), x first, -1 to 1 across the input, by bilinear,
    nearest or (4-d) bicubic interpolation; positions outside read zeros, the border or the
    reflection. One GridSampler2DBackward0 (3D) node, gradients for input and grid."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_DEFAULT, stacklevel=2)
        align_corners = False
    interpolation = ("bilinear", "nearest", "bicubic").index(mode)
    padding = ("zeros", "border", "reflection").index(padding_mode)
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {_TORCH_DTYPE_NAMES.get(input.dtype.name)} but "
                           f"found {_TORCH_DTYPE_NAMES.get(grid.dtype.name)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    spatial = 2 if input.dim() == 4 else 3
    if input.dim() != spatial + 2 or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected {spatial + 2}D input and grid with same "
                           f"number of dimensions, but got input with sizes {list(input.shape)} "
                           f"and grid with sizes {list(grid.shape)}")
    if spatial == 3 and interpolation == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    row = table.GRID_SAMPLER_2D if spatial == 2 else table.GRID_SAMPLER_3D
    return call(row, (input, grid), (interpolation, padding, bool(align_corners)))
