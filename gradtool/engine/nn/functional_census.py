"""nn.functional's functions the census of real files found missing (docs/census.md):
3-d convolutions (the N-d convolution row), 1-d max pooling (the 2-d ops on a height of 1,
as torch's), pixel (un)shuffle (rows of their own), and compositions of the engine's ops
written as torch writes them (rms_norm, kl_div, cosine_similarity, gumbel_softmax), so that
their nodes and gradients are torch's. functional.py exports them all."""
import warnings

from ..autograd import creation
from ..autograd.free_functions import vector_norm, where
from ..autograd.grad_mode import no_grad
from ..autograd.ops import derivatives as table
from ..autograd.dispatch import call
from .functional import (_convolution, _convolution_transpose, _reduction, _single,
                         adaptive_max_pool2d, max_pool2d, softmax)


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


__all__ = ["conv3d", "conv_transpose3d", "max_pool1d", "max_pool1d_with_indices",
           "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "pixel_shuffle",
           "pixel_unshuffle", "unfold", "fold", "rms_norm", "kl_div", "cosine_similarity",
           "gumbel_softmax"]
