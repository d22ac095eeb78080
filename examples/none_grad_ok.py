"""The counterpart of broken_none_grad.py: a gradient for every input that needs one
(None only where ctx.needs_input_grad says it is not wanted)."""
import gradtool as gt


class Mul(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return (grad * y if ctx.needs_input_grad[0] else None,
                grad * x if ctx.needs_input_grad[1] else None)
