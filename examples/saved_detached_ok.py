"""The fix of broken_saved_detached.py: save the input itself, so backward's own graph
reaches it and second derivatives are right."""
import gradtool as gt


class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2
