"""nn.AvgPool1d and nn.AdaptiveAvgPool1d, over the last dim of (N, C, L) or (C, L)
(F.avg_pool1d, F.adaptive_avg_pool1d: the 2-d ops on a height of 1, as torch's)."""
from . import functional as F
from .module import Module


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        single = (lambda v: (F._single(v),))
        self.kernel_size = single(kernel_size)
        self.stride = self.kernel_size if stride is None else single(stride)
        self.padding = single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


__all__ = ["AvgPool1d", "AdaptiveAvgPool1d"]
