"""Per-sample gradients with torch.func: `vmap` over `grad` of a `functional_call`, one
gradient per example of the batch in one call (torch.func's recipe for differential privacy
and per-example clipping).

gradtool gradcheck: passes; the target differentiates each example's gradient norm with
respect to the inputs, so the check runs backward through vmap and grad (second order).
Run it on PyTorch itself with --engine torch: the same verdict."""
import torch
from torch.func import functional_call, grad, vmap

import gradtool

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                            torch.nn.Linear(8, 3)).double()
params = {name: p.detach() for name, p in model.named_parameters()}


def _per_example_loss(params, x, y):  # (private: a helper, not a target of its own)
    out = functional_call(model, params, (x.unsqueeze(0),))
    return torch.nn.functional.cross_entropy(out, y.unsqueeze(0))


@gradtool.example((5, 4))
def per_sample_grad_norms(x):
    """The norm of each example's gradient of the first layer's weight."""
    y = torch.arange(5) % 3
    grads = vmap(grad(_per_example_loss), in_dims=(None, 0, 0))(params, x, y)
    return grads["0.weight"].flatten(1).norm(dim=1)
