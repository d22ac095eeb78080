"""A residual model with repeated blocks and a small recurrent loop: the graph `gradtool render`
groups by module call, nested as the modules are (model.blocks.3.mlp), parameters inside their
module's box, one box per call (the cell called at each step is a box per step).

    gradtool render examples/resnet_like.py -o model.svg            # grouped, readable
    gradtool render examples/resnet_like.py -o model.svg --depth 1  # each block one box
    gradtool render examples/resnet_like.py -o model.html           # explore it in a browser
"""
import gradtool
import gradtool as torch
from gradtool.engine import nn


class Block(nn.Module):
    """x + mlp(norm(x)): a pre-norm residual block."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, width))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Cell(nn.Module):
    """h' = tanh(W [x, h]): one step of a small recurrent layer."""

    def __init__(self, width):
        super().__init__()
        self.step = nn.Linear(2 * width, width)

    def forward(self, x, h):
        return torch.tanh(self.step(torch.cat([x, h], dim=-1)))


class ResNetLike(nn.Module):
    def __init__(self, width=8, depth=4, steps=3):
        super().__init__()
        self.embed = nn.Linear(4, width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
        self.cell = Cell(width)
        self.head = nn.Linear(width, 1)
        self.steps = steps

    def forward(self, x):
        x = self.blocks(self.embed(x))
        h = torch.zeros_like(x)
        for _ in range(self.steps):      # the same cell called each step: one box per call
            h = self.cell(x, h)
        return self.head(h).sum()


torch.manual_seed(0)
model = ResNetLike().double()


@gradtool.example((2, 4))
def resnet_like(x):
    """The model's scalar output, for an input batch of two."""
    return model(x)
