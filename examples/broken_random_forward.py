"""Perturbed top-k: a forward that draws new noise on every call.

Each call averages a soft top-k over noise drawn afresh, so f(x + h) and f(x - h) see different
noise and central differences measure the noise, not the slope. gradtool gradcheck: fails,
diagnosis `random_forward` (two forwards at the same point differ) with the line that draws;
random_forward_ok.py draws the noise once, outside the function."""
import gradtool
import gradtool as torch


@gradtool.example((6,))
def perturbed_topk(x, k=2, samples=4, sigma=0.5):
    noise = torch.randn(samples, x.shape[0], dtype=x.dtype)   # new noise on every call
    scores = (x + sigma * noise) * 4.0
    return torch.softmax(scores, dim=-1).mean(0) * k
