"""A forward that keeps its tensors on ctx instead of ctx.save_for_backward.

The gradient is right, so gradcheck passes, but the saved values escape autograd's checks:
an in-place change before backward goes unnoticed (save_for_backward would raise torch's
"modified by an inplace operation" error), they are not freed after backward, and storing
an output this way keeps the graph alive. gradtool: warning `ctx_stored_tensor`."""
import gradtool as gt


class Exp(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.result = result  # should be ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.result
