"""Pooling, padding and upsampling modules: thin wrappers of nn.functional's, as torch's."""
from . import functional as F
from .layers import _fields_repr
from .module import Module


class _MaxPoolNd(Module):
    """The arguments and repr every MaxPool*d shares, as torch's _MaxPoolNd."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    extra_repr = _fields_repr("kernel_size", "stride", "padding", "dilation", "ceil_mode")


class MaxPool2d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    """AvgPool2d's and AvgPool3d's arguments and repr."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    extra_repr = _fields_repr("kernel_size", "stride", "padding")


class AvgPool2d(_AvgPoolNd):
    _pool = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    _pool = staticmethod(F.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._pool(input, self.output_size)

    extra_repr = _fields_repr("output_size")


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _pool = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _pool = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return self._pool(input, self.output_size, self.return_indices)

    extra_repr = _fields_repr("output_size")


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _pool = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _pool = staticmethod(F.adaptive_max_pool3d)


class _MaxUnpoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        spread = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * self._dims)
        self.kernel_size = spread(kernel_size)
        self.stride = spread(stride if stride is not None else kernel_size)
        self.padding = spread(padding)

    def forward(self, input, indices, output_size=None):
        return self._unpool(input, indices, self.kernel_size, self.stride, self.padding,
                            output_size)

    extra_repr = _fields_repr("kernel_size", "stride", "padding")


class MaxUnpool1d(_MaxUnpoolNd):
    _dims, _unpool = 1, staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    _dims, _unpool = 2, staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    _dims, _unpool = 3, staticmethod(F.max_unpool3d)


class _FractionalMaxPoolNd(Module):
    """FractionalMaxPool2d's and 3d's arguments, checked as torch's; _random_samples (a
    buffer, as torch's) fixes the windows' starts."""

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        name, n = type(self).__name__, self._dims
        spread = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * n)
        if n == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = spread(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = spread(output_size) if output_size is not None else None
        self.output_ratio = spread(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.output_size, self.output_ratio,
                          self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _dims, _pool = 2, staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _dims, _pool = 3, staticmethod(F.fractional_max_pool3d)


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return self._pool(input, float(self.norm_type), self.kernel_size, self.stride,
                          self.ceil_mode)

    extra_repr = _fields_repr("norm_type", "kernel_size", "stride", "ceil_mode")


class LPPool1d(_LPPoolNd):
    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    _pool = staticmethod(F.lp_pool3d)


class Upsample(Module):
    """F.interpolate as a module (modes 'nearest', 'bilinear', 'area')."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = (tuple(float(f) for f in scale_factor) if isinstance(
            scale_factor, tuple) else float(scale_factor) if scale_factor else None)
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _PadNd(Module):
    _mode, _dims = "constant", 2

    def __init__(self, padding, value=None):
        super().__init__()
        self.padding = (padding,) * (2 * self._dims) if isinstance(padding, int) else tuple(
            padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, self._mode, self.value)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _mode, _dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    _mode, _dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    _mode = "replicate"


class CircularPad1d(_PadNd):
    _mode, _dims = "circular", 1


class CircularPad2d(_PadNd):
    _mode = "circular"


class ReflectionPad3d(_PadNd):
    _mode, _dims = "reflect", 3


class ReplicationPad3d(_PadNd):
    _mode, _dims = "replicate", 3


class CircularPad3d(_PadNd):
    _mode, _dims = "circular", 3


class ZeroPad1d(_PadNd):
    _dims = 1

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad2d(_PadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ConstantPad1d(_PadNd):
    _dims = 1
    extra_repr = _fields_repr("padding", "value")


class ConstantPad2d(ConstantPad1d):
    _dims = 2


class ZeroPad3d(_PadNd):
    _dims = 3

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ConstantPad3d(ConstantPad1d):
    _dims = 3
