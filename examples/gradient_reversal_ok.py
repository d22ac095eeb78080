"""The gradient reversal layer of broken_gradient_reversal.py, declared: gradtool checks that
the backward is -0.5 x the true gradient, and passes."""
import gradtool
import gradtool as torch


@gradtool.surrogate("scaled", -0.5)
class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return -0.5 * grad_output
