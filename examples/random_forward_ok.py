"""Perturbed top-k with its noise drawn once (a fixed seed, outside the function): the same
point gives the same output, so gradtool gradcheck checks the smoothed function and passes."""
import gradtool
import gradtool as torch

torch.manual_seed(0)
NOISE = torch.randn(4, 6, dtype=torch.float64)   # drawn once: the forward is a function


@gradtool.example((6,))
def perturbed_topk(x, k=2, sigma=0.5):
    scores = (x + sigma * NOISE) * 4.0
    return torch.softmax(scores, dim=-1).mean(0) * k
