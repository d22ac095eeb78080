"""Twelve residual blocks of one class in an nn.Sequential, called one by one from a loop
over it, then its final Linear. Every box must be named by the module call that owns its
nodes, never by the last child the loop ran (test_drawings.py)."""
import gradtool
import gradtool as torch
from gradtool.engine import nn


class Residual(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.net = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.net(self.norm(x))


torch.manual_seed(0)
model = nn.Sequential(*[Residual(16) for _ in range(12)], nn.Linear(16, 4)).double()


@gradtool.example((2, 4, 16))
def looped(x):
    h = x
    for layer in model:
        h = layer(h)
    return h.sum()
