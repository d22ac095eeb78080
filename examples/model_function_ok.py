"""The MLP of broken_model_function.py with Softsign's backward fixed: gradtool gradcheck passes."""
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
        return grad_output / (1 + x.abs()) ** 2


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
