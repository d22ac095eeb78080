"""A custom op whose backward forgets the factor k: d(k sin x)/dx written as cos x.

gradtool gradcheck: fails, diagnosis `wrong_gradient` (opcheck passes: it does not compare
gradients with central differences, gradcheck does)."""
import torch
from torch import Tensor


@torch.library.custom_op("examples::scaled_sin_wrong", mutates_args=())
def scaled_sin(x: Tensor, k: float = 2.0) -> Tensor:
    return torch.sin(x) * k


@scaled_sin.register_fake
def _(x, k=2.0):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, k = inputs
    ctx.save_for_backward(x)
    ctx.k = k


def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * torch.cos(x), None  # the derivative of k sin(x) is k cos(x)


scaled_sin.register_autograd(backward, setup_context=setup_context)
