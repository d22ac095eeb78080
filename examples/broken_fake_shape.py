"""A custom op whose fake kernel gives the wrong shape: a sum to a scalar, shape (),
described as shape (1,).

gradtool gradcheck: fails, diagnosis `fake_kernel_mismatch` at the fake kernel (opcheck's
test_faketensor; the gradients are right)."""
import torch
from torch import Tensor


@torch.library.custom_op("examples::total_wrong_fake", mutates_args=())
def total(x: Tensor) -> Tensor:
    return x.sum()


@total.register_fake
def _(x):
    return x.new_empty((1,))  # the kernel's output is a scalar: shape ()


def setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.shape = x.shape


def backward(ctx, grad):
    return grad.expand(ctx.shape).clone()


total.register_autograd(backward, setup_context=setup_context)
