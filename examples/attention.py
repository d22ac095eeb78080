"""Code written for torch, as real code is written: device-agnostic set-up, a tiny attention
block (LayerNorm, einsum, softmax, a GELU MLP in a ModuleDict) and a BCE-with-logits loss.
Each op records torch's node (NativeLayerNormBackward0, GeluBackward0,
BinaryCrossEntropyWithLogitsBackward0, ...).

    gradtool inspect examples/attention.py
    gradtool gradcheck examples/attention.py --order 2
    gradtool render examples/attention.py -o attention.svg
"""
import gradtool
import gradtool as torch
from gradtool.engine import nn
from gradtool.engine.nn import functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.mlp = nn.ModuleDict({"up": nn.Linear(dim, 2 * dim), "act": nn.GELU(),
                                  "down": nn.Linear(2 * dim, dim)})

    def forward(self, x):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        weights = torch.einsum("id,jd->ij", q, k).div(q.shape[-1] ** 0.5).softmax(-1)
        x = x + weights @ v
        return x + self.mlp["down"](self.mlp["act"](self.mlp["up"](x)))


block = Block(4).to(device, torch.float64)
labels = torch.tensor([[1.0, 0.0, 1.0, 0.0]], dtype=torch.float64, device=device).expand(3, 4)


@gradtool.example((3, 4))
def attention_loss(x):
    """BCE with logits of the block's output: checked with respect to the tokens x."""
    return F.binary_cross_entropy_with_logits(block(x), labels)
