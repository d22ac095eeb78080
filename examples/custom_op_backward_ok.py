"""A right custom op, as PyTorch recommends writing a kernel: torch.library.custom_op with a
fake kernel (register_fake) and a backward (register_autograd with setup_context).

gradtool gradcheck: passes, opcheck's tests and the gradients alike. Its twin
broken_custom_op_backward.py has the backward wrong."""
import torch
from torch import Tensor


@torch.library.custom_op("examples::scaled_sin", mutates_args=())
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
    return grad * torch.cos(x) * ctx.k, None


scaled_sin.register_autograd(backward, setup_context=setup_context)
