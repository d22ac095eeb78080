"""Two MLPs alike but for their activation: a custom Function in one, torch.tanh in the
other. Their drawings must group alike (test_render.py)."""
import gradtool
import gradtool as torch
from gradtool.engine import nn


class MyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (1 - y * y)


class MLP(nn.Module):
    def __init__(self, custom):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)
        self.custom = custom

    def forward(self, x):
        h = self.fc1(x)
        h = MyTanh.apply(h) if self.custom else torch.tanh(h)
        return self.fc2(h)


torch.manual_seed(0)
custom = MLP(True).double()
plain = MLP(False).double()


@gradtool.example((3, 4))
def with_custom(x):
    return custom(x).sum()


@gradtool.example((3, 4))
def with_tanh(x):
    return plain(x).sum()
