"""The correct counterpart of broken_undeclared_mutation.py: an op that adds into a buffer
in place declares it (mutates_args=("buffer",)) and returns nothing, so there is no gradient
to check, only its opcheck; a scaled copy that writes into no input."""
import torch
from torch import Tensor


@torch.library.custom_op("examples::accumulate", mutates_args=("buffer",))
def accumulate(buffer: Tensor, x: Tensor) -> None:
    buffer.add_(x)


@torch.library.custom_op("examples::scaled", mutates_args=())
def scaled(x: Tensor) -> Tensor:
    y = x.clone()
    y.mul_(3.0)  # into its own output: no input changes
    return y


@scaled.register_fake
def _(x):
    return torch.empty_like(x)


def backward(ctx, grad):
    return grad * 3.0


scaled.register_autograd(backward)
