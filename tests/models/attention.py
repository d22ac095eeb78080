"""Two layers of nn.MultiheadAttention, whose forward uses its out_proj's weight and bias
without calling out_proj: they must sit in their attention's box and count in its
parameters, 1,088 of them (test_drawings.py)."""
import gradtool
import gradtool as torch
from gradtool.engine import nn


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        return self.norm(x + a)


torch.manual_seed(0)
model = nn.Sequential(Layer(16, 2), Layer(16, 2)).double()


@gradtool.example((2, 5, 16))
def attention(x):
    return model(x).sum()
