"""A small GPT-style model as people write it: causal self-attention with masked_fill and
softmax, LayerNorm, GELU MLPs, residuals and cross-entropy; and functions of statistics and
einsum. --against torch compares it node by node (tests/adapters/test_engines.py)."""
import math
import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, d=8, heads=2):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), 1)
        att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        return self.out(y)


class Block(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 16), nn.GELU(), nn.Linear(16, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


torch.manual_seed(0)
model = nn.Sequential(Block(), Block()).double()
head = nn.Linear(8, 5).double()
labels = torch.tensor([[1, 4, 0], [2, 2, 3]])


def loss(x):
    logits = head(model(x))
    return F.cross_entropy(logits.view(-1, 5), labels.view(-1))


def stats(x):
    return (x.norm(dim=-1) + x.std(dim=-1) + x.logsumexp(dim=-1) + x.cumsum(-1).max(-1).values).sum()


def conv_like(x):
    w = torch.einsum("bti,bsi->bts", x, x)
    return F.normalize(w, p=1, dim=-1).pow(2).sum() + F.smooth_l1_loss(x, torch.zeros_like(x))
