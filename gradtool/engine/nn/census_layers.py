"""The nn layers the census of real files found missing (docs/census.md), beyond the
convolutions (conv.py): 3-d batch norm and its process-group form, pixel (un)shuffle, 1-d max
pooling, RMSNorm, Unflatten, KLDivLoss, CosineSimilarity. Each as torch's: arguments,
parameters, repr and forward (nn.functional's functions)."""
import numbers

from ..autograd import creation
from .. import distributed
from . import functional as F
from . import init
from .loss import _Loss
from .module import Module
from .normalization import _BatchNorm
from .parameter import Parameter


class BatchNorm3d(_BatchNorm):
    """Batch norm of an (N, C, D, H, W) input."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose batch statistics are taken over every process of the group: in one
    process they are the process's own, so it is the batch norm of any input of at least 2
    dims. As torch's, training with an initialised process group wants a GPU input."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        batch_statistics = self.training or self.running_mean is None
        if batch_statistics and self.training and distributed.is_initialized():
            raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or "
                             "privateuseone")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """The module with each BatchNorm*d replaced by a SyncBatchNorm sharing its
        parameters and running statistics."""
        output = module
        if isinstance(module, _BatchNorm):
            output = cls(module.num_features, module.eps, module.momentum, module.affine,
                         module.track_running_stats, process_group,
                         bias=module.bias is not None)
            if module.affine:
                output.weight, output.bias = module.weight, module.bias
            output.running_mean, output.running_var = module.running_mean, module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output


class PixelShuffle(Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class MaxPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AdaptiveMaxPool1d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2 over normalized_shape) + eps) * weight (weight = 1 at first)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.empty(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class Unflatten(Module):
    """Splits dim `dim` into unflattened_size."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("gradtool's tensors have no named dims: dim must be an int")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        dim = self.dim % input.dim()
        shape = tuple(input.shape[:dim]) + tuple(self.unflattened_size) + tuple(
            input.shape[dim + 1:])
        return input.view(shape)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class KLDivLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        legacy = size_average is not None or reduce is not None
        super().__init__(size_average, reduce, reduction if legacy else "mean")
        self.reduction = self.reduction if legacy else reduction  # ('batchmean' too)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


__all__ = ["BatchNorm3d", "SyncBatchNorm", "PixelShuffle", "PixelUnshuffle", "MaxPool1d",
           "AdaptiveMaxPool1d", "Unfold", "Fold", "RMSNorm", "Unflatten", "KLDivLoss",
           "CosineSimilarity"]
