"""Twelve residual blocks of one class in an nn.Sequential, called one by one from a loop
over it, then a final Linear. Each block's drawing must be named by its own module
(test_drawings.py), never by the last child the loop ran."""
import gradtool
import gradtool as torch
from gradtool.engine import nn


class Residual(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self, d=8, depth=12):
        super().__init__()
        self.model = nn.Sequential(*[Residual(d) for _ in range(depth)], nn.Linear(d, 2))

    def forward(self, x):
        h = x
        for layer in self.model:
            h = layer(h)
        return h


torch.manual_seed(0)
net = Net().double()


@gradtool.example((5, 8))
def looped(x):
    return net(x).sum()
