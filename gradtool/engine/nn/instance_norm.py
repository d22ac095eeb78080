"""nn.InstanceNorm1d, 2d and 3d: each sample's channels normalised by their own
statistics (F.instance_norm); affine weight and bias and running statistics are off by
default, as torch's."""
from ..autograd import creation
from . import functional as F
from .lazy import _LazyNormBase
from .module import Module
from .parameter import Parameter


class _InstanceNorm(Module):
    dims = None  # the input's dims without the batch: (C, L), (C, H, W) or (C, D, H, W)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, bias=True, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(creation.ones(num_features, dtype=dtype, device=device))
            self.bias = (Parameter(creation.zeros(num_features, dtype=dtype, device=device))
                         if bias else None)
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            # (registered, as torch's, but never counted: instance_norm does not)
            self.register_buffer("num_batches_tracked", creation.tensor(0))
        else:
            self.running_mean = self.running_var = None

    def forward(self, input):
        if input.dim() not in (self.dims, self.dims + 1):
            raise ValueError(f"expected {self.dims}D or {self.dims + 1}D input (got "
                             f"{input.dim()}D input)")
        unbatched = input.dim() == self.dims
        if unbatched:
            input = input.unsqueeze(0)
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, use_input_stats, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    dims = 2


class InstanceNorm2d(_InstanceNorm):
    dims = 3


class InstanceNorm3d(_InstanceNorm):
    dims = 4


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
