"""A fused LayerNorm as a kernel author writes one (forward and backward by hand, one pass
each), declared against the plain code it replaces with `@gradtool.reference`: `gradtool
gradcheck` checks its gradients in float64 as usual, then runs it in float32 (or `--dtypes
float32,float16`) against the reference in float64, allowing twice the error the reference
itself makes in that dtype. Runs on gradtool's engine and, unchanged, with --engine torch
(add bfloat16 there)."""
import torch

import gradtool


def layer_norm_reference(x, weight, bias):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / (var + 1e-5).sqrt() * weight + bias


@gradtool.reference(layer_norm_reference)
@gradtool.example((4, 16), (16,), (16,))
class FusedLayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        centred = x - x.mean(-1, keepdim=True)
        rstd = 1 / ((centred * centred).mean(-1, keepdim=True) + 1e-5).sqrt()
        normed = centred * rstd
        ctx.save_for_backward(normed, rstd, weight)
        return normed * weight + bias

    @staticmethod
    def backward(ctx, grad):
        normed, rstd, weight = ctx.saved_tensors
        g = grad * weight
        grad_x = rstd * (g - g.mean(-1, keepdim=True)
                         - normed * (g * normed).mean(-1, keepdim=True))
        return grad_x, (grad * normed).sum(0), grad.sum(0)
