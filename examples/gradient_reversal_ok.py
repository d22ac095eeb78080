"""The gradient reversal layer of broken_gradient_reversal.py, declared: gradtool checks that
the backward is -0.5 x the true gradient, and passes."""
import gradtool
import gradtool as torch


@gradtool.surrogate("scaled", -0.5)
@gradtool.example((4,), 0.5)
class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.alpha * grad_output, None
