"""A backward that returns None for an input that requires grad.

None means "zero gradient" to the engine, which is right only when the output does not
depend on that input. Here it does: gradcheck fails for input 1, and gradtool's diagnosis
`grad_none_for_input` names the Function and the input."""
import gradtool as gt


class Mul(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * y, None  # y's gradient, grad * x, is missing
