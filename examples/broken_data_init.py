"""A data-dependent initialisation, as Glow's ActNorm: on its first batch the layer sets its
scale and shift from the batch's statistics, under no_grad, through `.data`.

Each call of the checked function starts a new layer, so its output depends on x through those
statistics too, a path the gradient does not see. gradtool gradcheck: fails, diagnosis
`gradient_cut` naming the statistic computed under no_grad (not a wrong formula);
data_init_ok.py initialises the layer once, outside the checked function."""
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


@gradtool.example((4, 3))
def normalised(x):
    return ActNorm(3)(x).sum(0)
