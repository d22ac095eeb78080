"""The correct counterpart of broken_jvp.py: the tangent of x^3 is 3x^2 v, in forward mode
as in backward. `gradtool gradcheck` checks both (a Function with a jvp); `--mode forward`
only the jvp."""
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
        (x,) = ctx.saved_tensors
        return x_t * 3 * x ** 2


@gt.example((3,))
def directional_derivative(x):
    """x^3 along v = 1, in forward mode: `gradtool inspect` shows the output's tangent."""
    fwAD = gt.autograd.forward_ad
    with fwAD.dual_level():
        y = Cube.apply(fwAD.make_dual(x, gt.ones_like(x)))
    return y
