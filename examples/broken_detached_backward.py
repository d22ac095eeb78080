"""A backward that detaches its saved tensor, checked to second order.

The first derivative is right, but the gradient's graph no longer reaches x, so its own
derivative with respect to x comes out as zero: gradgradcheck fails with an all-zero
analytical Jacobian. gradtool: diagnosis `backward_detaches`, naming the saved tensor."""
import gradtool as gt


class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        x = x.detach()  # cuts the second derivative
        return grad * 3 * x ** 2
