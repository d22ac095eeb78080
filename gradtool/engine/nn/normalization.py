"""BatchNorm1d, 2d and 3d, SyncBatchNorm, GroupNorm, LayerNorm, RMSNorm, and the local
response norms (LocalResponseNorm, and torch's older CrossMapLRN2d)."""
import numbers

from ..autograd import creation, dtypes
from ..autograd.device import check as check_device
from .. import distributed
from . import _functions
from . import functional as F
from . import init
from .lazy import _LazyNormBase
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    """Normalise each of num_features channels (dim 1). Training mode: with the batch's mean and (biased) variance, and the running statistics
    move towards them: running = (1 - momentum) * running + momentum * batch (the variance
    unbiased); momentum=None gives the cumulative average. Eval mode: with the running
    statistics (batch statistics if track_running_stats=False). weight = 1, bias = 0."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        check_device(device)  # the CPU, the only device
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, affine, bias, num_features, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=dtypes.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / self.num_batches_tracked.item()
        use_batch_stats = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm of an (N, C) or (N, C, L) input."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm of an (N, C, H, W) input."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class GroupNorm(Module):
    """Each sample's num_channels channels in num_groups groups, each normalised by its own
    mean and (biased) variance, then weight (ones) and bias (zeros) per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        check_device(device)  # the CPU, the only device
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups, num_channels, eps, affine)
        _affine_parameters(self, affine, bias, num_channels, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LayerNorm(Module):
    """Normalise over the trailing normalized_shape dims of each sample (biased variance),
    then scale by weight (ones) and shift by bias (zeros), elementwise."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        check_device(device)  # the CPU, the only device
        self.normalized_shape = F._as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape, dtype)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


def _affine_parameters(module, affine, bias, shape, dtype):
    """The norms' weight (ones) and bias (zeros) of `shape`, as torch: None
    (registered as such) when not affine, or without a bias."""
    module.register_parameter(
        "weight", Parameter(creation.ones(shape, dtype=dtype)) if affine else None)
    module.register_parameter(
        "bias", Parameter(creation.zeros(shape, dtype=dtype)) if affine and bias else None)


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


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


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    cls_to_become = BatchNorm3d


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """torch's older local response norm of (N, C, H, W): a Function of its own
    (CrossMapLRN2dBackward), whose channel windows are torch's running sums."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        return _functions.CrossMapLRN2d.apply(input, self.size, self.alpha, self.beta, self.k)
