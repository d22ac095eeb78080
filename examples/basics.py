"""A first look: a small function of two inputs, and a custom Function.

    gradtool inspect examples/basics.py
    gradtool gradcheck examples/basics.py
    gradtool render examples/basics.py::weighted_loss -o graph.svg --show-saved
"""
import gradtool
import gradtool as torch


@gradtool.example((3,), (3,))
def weighted_loss(x, w):
    h = (x * w).exp()
    loss = h.sum() + (x ** 2).sum()
    return loss


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with its derivative written by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)
