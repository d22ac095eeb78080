"""A custom Function whose backward is right but whose jvp (forward mode) is wrong: the
tangent of x^3 written as 2x^2 v.

gradtool gradcheck: a Function with a jvp is checked both ways by default; the backward
passes, the jvp fails, diagnosis `wrong_jvp` (the row of the report marked "jvp").
`--mode reverse` checks the backward only, and passes."""
import gradtool as gt


class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors  # in jvp: what save_for_forward saved
        return x_t * 2 * x ** 2  # the tangent of x^3 is 3x^2 v
