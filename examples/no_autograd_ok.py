"""The correct counterpart of broken_no_autograd.py: the op registers its backward."""
import torch
from torch import Tensor


@torch.library.custom_op("examples::cube", mutates_args=())
def cube(x: Tensor) -> Tensor:
    return x ** 3


@cube.register_fake
def _(x):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * 3 * x ** 2


cube.register_autograd(backward, setup_context=setup_context)
