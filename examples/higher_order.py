"""Gradients of gradients: a function whose result is itself a gradient, built with
create_graph=True, checked to second order.

    gradtool gradcheck examples/higher_order.py --order 2
"""
import gradtool
import gradtool as torch


@gradtool.example((3,))
def gradient_norm(x):
    """|d/dx sum(sin(x) * x^2)|^2: a penalty on the gradient, as in WGAN-GP."""
    y = (x.sin() * x ** 2).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    return (g * g).sum()


@gradtool.example((4,))
def hessian_vector_product(x):
    v = torch.ones(4, dtype=torch.float64)
    y = (x ** 3).sum() + (x[0] * x[1]).exp()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (hv,) = torch.autograd.grad(g, x, grad_outputs=v, create_graph=True)
    return hv
