"""nn.AvgPool1d, nn.AdaptiveAvgPool1d, nn.MaxPool1d and nn.AdaptiveMaxPool1d, over the last
dim of (N, C, L) or (C, L) (nn.functional's 1-d pools: the 2-d ops on a height of 1, as
torch's)."""
from . import functional as F
from .module import Module
from .pooling import _MaxPoolNd


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


__all__ = ["AvgPool1d", "AdaptiveAvgPool1d", "MaxPool1d", "AdaptiveMaxPool1d"]


class MaxPool1d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AdaptiveMaxPool1d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"
