"""A two-layer MLP with a wrong custom Function among right ones.

The model uses a custom LeakyTanh (right) and a custom Softsign whose backward forgets a square.
`gradtool gradcheck` of `loss` fails on every parameter; localisation checks each custom
Function call on its own, at the inputs it received, and names Softsign, its line and the module
call it sits in (`model.3`): diagnosis `wrong_node`. model_function_ok.py has the fixed Softsign."""
import gradtool
import gradtool as torch
from gradtool.engine import nn


class LeakyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.tanh(x) + 0.1 * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (1 - torch.tanh(x) ** 2 + 0.1)


class Softsign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x / (1 + x.abs())

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output / (1 + x.abs())     # wrong: the derivative is 1 / (1 + |x|)^2


class Act(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn.apply(x)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), Act(LeakyTanh), nn.Linear(4, 2), Act(Softsign)).double()


@gradtool.example((2, 3))
def loss(x):
    return model(x).pow(2).sum()
