"""A custom Function whose backward formula is wrong: d(x^3)/dx written as 2x^2.

gradtool gradcheck: fails, diagnosis `wrong_gradient` (a mismatch where the function is
smooth, so the formula, not the point or the precision, is at fault)."""
import gradtool as gt


class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x ** 2  # the derivative of x^3 is 3x^2
