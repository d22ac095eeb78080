"""A backward that returns a float32 gradient for a float64 input.

The engine casts it back silently (torch does too), so the check may well pass while half
the digits are gone. gradtool gradcheck: passes, warning `grad_wrong_dtype` naming the
Function and the input."""
import gradtool as gt


class Square(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (grad * 2 * x).float()  # a float64 input wants a float64 gradient
