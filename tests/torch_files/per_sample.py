"""Per-sample gradients with torch.func (and a functorch name): the file runs unchanged on
gradtool's engine and on torch."""
import functorch
import torch
from torch.func import functional_call, grad, vmap

model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()


def per_sample_norm(x):
    """The squared norm of the per-sample gradients, plus a gradient of functorch's: a
    function of x through two transforms."""
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xb):
        return functional_call(model, p, (xb,)).pow(2).sum()
    grads = vmap(grad(loss), in_dims=(None, 0))(params, x)
    norms = sum((g ** 2).sum() for g in grads.values())
    return norms + functorch.grad(lambda a: a.sin().sum())(x).sum() * x.sum()
