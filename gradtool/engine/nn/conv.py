"""Conv1d/2d/3d, ConvTranspose1d/2d/3d: torch's parameters (weight
(out, in / groups, *kernel), transposed (in, out / groups, *kernel)), initialisation and
padding modes."""
import math

from ..autograd import creation
from ..autograd.device import check as check_device
from . import functional as F
from . import init
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter, UninitializedParameter

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _per_dim(value, n):
    return (value,) * n if isinstance(value, int) else tuple(value)


class _ConvNd(Module):
    _spatial = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        check_device(device)  # the CPU, the only device
        n = self._spatial
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _per_dim(kernel_size, n), _per_dim(stride, n)
        self.dilation, self.output_padding = _per_dim(dilation, n), _per_dim(output_padding, n)
        self.transposed, self.padding_mode = transposed, padding_mode
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
            # F.pad's pads for the other padding modes: 'same' splits d (k - 1) as torch
            pads = [0, 0] * n
            if padding == "same":
                for i, (d, k) in enumerate(zip(self.dilation, self.kernel_size)):
                    total = d * (k - 1)
                    pads[2 * (n - 1 - i)], pads[2 * (n - 1 - i) + 1] = total // 2, total - total // 2
        else:
            self.padding = _per_dim(padding, n)
            pads = [p for p in reversed(self.padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = pads
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(creation.empty(shape, dtype=dtype))
        self.register_parameter(
            "bias", Parameter(creation.empty(out_channels, dtype=dtype)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        """weight ~ kaiming_uniform_(a=sqrt(5)), bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        n = self._spatial
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        for name, default in (("padding", (0,) * n), ("dilation", (1,) * n),
                              ("output_padding", (0,) * n), ("groups", 1)):
            if getattr(self, name) != default:  # only what differs from the default
                s += f", {name}={getattr(self, name)}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _function = staticmethod(F.conv2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":  # padded first, then a convolution without padding
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._function(input, weight, bias, self.stride, 0, self.dilation,
                                  self.groups)
        return self._function(input, weight, bias, self.stride, self.padding, self.dilation,
                              self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """A 1-d convolution of (N, C_in, L) or (C_in, L) inputs."""
    _spatial = 1
    _function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """A 2-d convolution of (N, C_in, H, W) or (C_in, H, W) inputs: stride, padding (ints,
    'valid', 'same'), dilation, groups, bias, padding_mode zeros/reflect/replicate/circular."""
    _function = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """A 3-d convolution of (N, C_in, D, H, W) or (C_in, D, H, W) inputs."""
    _spatial = 3
    _function = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    _function = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """output_padding, or what makes the output `output_size` (torch's rule)."""
        if output_size is None:
            return self.output_padding
        n = self._spatial
        output_size = tuple(output_size)
        lead = 2 if input.dim() == n + 2 else 1
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {lead + n} elements (got {len(output_size)})")
        smallest = [(input.shape[lead + d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        largest = [m + s - 1 for m, s in zip(smallest, self.stride)]
        if any(not lo <= size <= hi for size, lo, hi in zip(output_size, smallest, largest)):
            raise ValueError(f"requested an output size of {list(output_size)}, but valid sizes "
                             f"range from {smallest} to {largest} (for an input of "
                             f"{input.shape[lead:]})")
        return tuple(size - lo for size, lo in zip(output_size, smallest))

    def forward(self, input, output_size=None):
        return self._function(input, self.weight, self.bias, self.stride, self.padding,
                              self._output_padding(input, output_size), self.groups,
                              self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """The transpose (adjoint in the input) of Conv1d."""
    _spatial = 1
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """The transpose (adjoint in the input) of Conv2d; forward(input, output_size=None)."""
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """The transpose (adjoint in the input) of Conv3d."""
    _spatial = 3
    _function = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels from the first input: its dim 1 (dim 0 unbatched)."""

    def __init__(self, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, device, dtype, **transposed):
        super().__init__(0, 0, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=False, padding_mode=padding_mode, **transposed)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            per_group = ((self.in_channels, self.out_channels // self.groups) if self.transposed
                         else (self.out_channels, self.in_channels // self.groups))
            self.weight.materialize(per_group + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._spatial + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


def _lazy_conv(base):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                     groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                             padding_mode, device, dtype)
    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    LazyConv.__doc__ = f"A {base.__name__} whose in_channels is its first input's."
    return LazyConv


def _lazy_conv_transpose(base):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                             padding_mode, device, dtype, output_padding=output_padding)
    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = "Lazy" + base.__name__
    LazyConvTranspose.__doc__ = f"A {base.__name__} whose in_channels is its first input's."
    return LazyConvTranspose


LazyConv1d, LazyConv2d, LazyConv3d = map(_lazy_conv, (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = map(
    _lazy_conv_transpose, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
