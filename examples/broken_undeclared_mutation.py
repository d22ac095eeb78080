"""A custom op that writes into its input without declaring it: mutates_args=() while the
kernel scales x in place (meant to work on a copy).

gradtool gradcheck: fails, diagnosis `undeclared_mutation` at the write (opcheck's
test_schema: "Argument x is not defined as mutable but was mutated")."""
import torch
from torch import Tensor


@torch.library.custom_op("examples::scaled_in_place", mutates_args=())
def scaled(x: Tensor) -> Tensor:
    x.mul_(3.0)  # writes into the caller's tensor: x.clone() first
    return x * 1.0


@scaled.register_fake
def _(x):
    return torch.empty_like(x)


def backward(ctx, grad):
    return grad * 3.0


scaled.register_autograd(backward)
