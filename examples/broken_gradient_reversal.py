"""A gradient reversal layer (domain-adversarial training), undeclared: the forward is the
identity, the backward multiplies the gradient by -lambda. gradtool gradcheck: fails, diagnosis
`surrogate_gradient` ("the backward is -0.5 x the true gradient"); gradient_reversal_ok.py
declares it with @gradtool.surrogate("scaled", -0.5)."""
import gradtool as torch


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return -0.5 * grad_output
