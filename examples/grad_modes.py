"""Grad modes and where a graph gets cut: `gradtool inspect` says which output does not
require grad and why (no_grad, inference_mode, a detach), and which input gets no gradient.

    gradtool inspect examples/grad_modes.py
"""
import gradtool
import gradtool as torch


@gradtool.example((3,), (3,))
def scaled_under_no_grad(x, w):
    with torch.no_grad():
        scale = (w * 2).sum()      # recorded nowhere: w gets no gradient through here
    return x * scale               # still differentiable in x


@gradtool.example((3,))
def everything_under_no_grad(x):
    with torch.no_grad():
        y = x.exp()
    return y                       # does not require grad: made under no_grad()


@gradtool.example((3,))
def through_detach(x):
    y = x.sin().detach()
    return (y * 2).sum()           # does not require grad: a detach() cut it off


@gradtool.example((3,))
def inference(x):
    with torch.inference_mode():
        y = x * 3
    return y                       # an inference tensor


@gradtool.example((3,), (3,))
def unused_input(x, w):
    return (x ** 2).sum()          # w requires grad but is never used
