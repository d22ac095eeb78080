"""A backward marked @once_differentiable, checked to second order.

once_differentiable runs backward without recording a graph, so the gradient cannot be
differentiated again: gradgradcheck (gradtool gradcheck --order 2) raises torch's "trying to
differentiate twice a function that was marked with @once_differentiable". gradtool names
the Function: diagnosis `once_differentiable`."""
import gradtool as gt


class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @gt.autograd.once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2
