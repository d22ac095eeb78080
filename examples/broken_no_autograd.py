"""A custom op with no autograd formula: its inputs require grad, its output is
differentiable, and nothing was registered with register_autograd, so torch raises at
backward ("no autograd formula was registered").

gradtool gradcheck: fails, diagnosis `no_autograd` (opcheck's test_aot_dispatch_dynamic);
the gradients cannot be checked until a backward is registered."""
import torch
from torch import Tensor


@torch.library.custom_op("examples::cube_no_autograd", mutates_args=())
def cube(x: Tensor) -> Tensor:
    return x ** 3


@cube.register_fake
def _(x):
    return torch.empty_like(x)
