"""The counterpart of broken_grad_dtype.py: the gradient keeps the input's dtype."""
import gradtool as gt


class Square(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x
