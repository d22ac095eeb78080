"""A clamp straight-through estimator, undeclared: the forward clamps activations to [-1, 1],
the backward passes the gradient through unchanged, clamped or not (a quantisation-aware
training trick).

Where the forward clamps it is flat, and its true gradient is 0 there; the backward gives 1,
on purpose. gradtool gradcheck: fails, and localisation names the Function with diagnosis
`surrogate_gradient` ("a clamp straight-through estimator", not a wrong formula);
clamp_straight_through_ok.py declares it with @gradtool.surrogate("straight_through")."""
import gradtool
import gradtool as torch


class ClampST(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad):
        return grad                        # straight through, clamped or not


@gradtool.example(gradtool.uniform((6,), -2, 2), (6,))
def quantised(x, w):
    return (ClampST.apply(x) * w).sum()
