"""A custom Function that saves a detached tensor, checked to second order.

The first derivative is right, but backward computes it from `x.detach()`, which its own
graph cannot differentiate through: gradgradcheck fails with an all-zero analytical Jacobian.
gradtool: diagnosis `saved_detached`, naming the `ctx.save_for_backward(x.detach())` line."""
import gradtool as gt


class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x.detach())
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2
