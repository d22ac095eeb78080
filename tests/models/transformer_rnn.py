"""A mixed model: twelve transformer blocks, then one recurrent cell called thirty times.
The default drawing must show the blocks and fold the loop (test_render.py)."""
import gradtool
import gradtool as torch
from gradtool.engine import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))

    def forward(self, x):
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        a = torch.softmax(q @ k.transpose(-1, -2) / 2.0, dim=-1) @ v
        x = x + self.proj(a)
        return x + self.mlp(self.norm2(x))


class TinyTransformer(nn.Module):
    def __init__(self, d=8, depth=12):
        super().__init__()
        self.embed = nn.Linear(4, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.embed(x))


class Cell(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.step = nn.Linear(2 * d, d)

    def forward(self, x, h):
        return torch.tanh(self.step(torch.cat([x, h], dim=-1)))


torch.manual_seed(0)
model = TinyTransformer().double()
cell = Cell(8).double()


@gradtool.example((5, 4))
def mixed(x):
    seq = model(x)
    h = torch.zeros(8, dtype=torch.float64)
    for t in range(30):
        h = cell(seq[t % 5], h)
    return h.sum()
