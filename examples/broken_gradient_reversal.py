"""A gradient reversal layer (domain-adversarial training), undeclared: the forward is the
identity (`x.view_as(x)`), the backward multiplies the gradient by -alpha. gradtool gradcheck:
fails, diagnosis `surrogate_gradient` ("backward = -0.5 x the true gradient");
gradient_reversal_ok.py declares it with @gradtool.surrogate("scaled", -0.5)."""
import gradtool
import gradtool as torch


@gradtool.example((4,), 0.5)
class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.alpha * grad_output, None
