"""A straight-through estimator, undeclared: forward binarises with sign(), backward passes
grad_output through (BinaryConnect).

The forward is flat almost everywhere (its true gradient is 0), the backward gives 1: on
purpose. gradtool gradcheck: fails (the gradient is not the true one), diagnosis
`surrogate_gradient` saying it is a straight-through estimator and how to declare it;
straight_through_ok.py declares it with @gradtool.surrogate("straight_through")."""
import gradtool as torch


class BinarySTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.sign(x)               # binarise (BinaryConnect)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output                 # straight through
