"""autograd Functions behind nn modules, where torch keeps its own (torch.nn.modules._functions):
their nodes are named after them (CrossMapLRN2dBackward)."""
import numpy as np

from ..autograd import creation
from ..autograd.function import Function


class CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             f"instead.")
        x = input.detach().numpy()
        channels, pre_pad = x.shape[1], int((size - 1) / 2 + 1)
        square = x * x
        # torch's running sum over channels: the first window, then each next one adds the
        # channel entering and (only past pre_pad) drops the one leaving
        scale = np.empty_like(x)
        scale[:, 0] = square[:, :min(pre_pad, channels)].sum(1)
        for c in range(1, channels):
            scale[:, c] = scale[:, c - 1]
            if c < channels - pre_pad + 1:
                scale[:, c] += square[:, c + pre_pad - 1]
            if c > pre_pad:
                scale[:, c] -= square[:, c - pre_pad]
        scale = scale * (alpha / size) + k
        output = creation.tensor(scale ** -beta * x, dtype=input.dtype)
        ctx.size, ctx.alpha, ctx.beta, ctx.scale = size, alpha, beta, scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        """torch's: grad scale^-beta, less 2 alpha beta / size x times the window's sum of
        grad * output / scale (a window of `size` channels, offset as torch's). It is not the
        forward's exact derivative (torch's gradcheck fails it too): kept, being torch's."""
        input, output = ctx.saved_tensors
        x, y, g = input.numpy(), output.numpy(), grad_output.detach().numpy()
        size, scale = ctx.size, ctx.scale
        channels = x.shape[1]
        before = int(size - (size - 1) / 2)
        if before + channels > channels + size - 1:  # (size 1: torch's narrow refuses)
            raise RuntimeError(f"start ({before}) + length ({channels}) exceeds dimension size "
                               f"({channels + size - 1}).")
        padded = np.zeros((x.shape[0], channels + size - 1) + x.shape[2:], x.dtype)
        padded[:, before:before + channels] = g * y / scale
        window = np.cumsum(np.concatenate([np.zeros_like(padded[:, :1]), padded], 1), 1)
        sums = window[:, size:size + channels] - window[:, :channels]
        grad = scale ** -ctx.beta * g - 2 * ctx.alpha * ctx.beta / size * x * sums
        return creation.tensor(grad, dtype=input.dtype), None, None, None, None
