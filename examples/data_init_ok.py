"""The ActNorm of broken_data_init.py initialised once, from a first batch, before the
checked function runs: the check sees a layer with fixed parameters, and passes."""
import gradtool
import gradtool as torch
from gradtool import nn


class ActNorm(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, channels, dtype=torch.float64))
        self.scale = nn.Parameter(torch.ones(1, channels, dtype=torch.float64))
        self.initialized = False

    def initialize(self, x):
        with torch.no_grad():
            self.loc.data.copy_(-x.mean(0, keepdim=True))
            self.scale.data.copy_(1 / (x.std(0, keepdim=True) + 1e-6))
        self.initialized = True

    def forward(self, x):
        if not self.initialized:
            self.initialize(x)
        return self.scale * (x + self.loc)


torch.manual_seed(0)
layer = ActNorm(3)
layer(torch.randn(16, 3, dtype=torch.float64))  # the first batch initialises it


@gradtool.example((4, 3))
def normalised(x):
    return layer(x).sum(0)
