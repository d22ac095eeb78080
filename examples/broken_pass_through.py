"""A masked pass-through, as a ClampWithGrad: the forward clamps to [lo, hi], the backward lets
the gradient through where x is in range, or where it points back into range (a descent step
would bring x back), and blocks it elsewhere.

Outside the range the forward is flat (its true gradient is 0), and the backward passes some
of those gradients, on purpose. gradtool gradcheck: fails, diagnosis `surrogate_gradient` ("a
pass-through surrogate"), not a wrong formula, on the Function and, through localisation, on
the function that uses it. A backward that depends on grad_output's sign is the gradient of
no function, so it cannot be declared; pass_through_ok.py is the other way out, the true
gradient of the clamp."""
import gradtool
import gradtool as torch


@gradtool.example(gradtool.uniform((6,), -2, 2), -1.0, 1.0)
class ClampWithGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        inside = (x >= ctx.lo) & (x <= ctx.hi)
        back_into_range = ((x < ctx.lo) & (grad < 0)) | ((x > ctx.hi) & (grad > 0))
        return grad * (inside | back_into_range), None, None


@gradtool.example(gradtool.uniform((6,), -2, 2), (6,))
def bounded(x, w):
    return (ClampWithGrad.apply(x, -1.0, 1.0) * w.exp()).sum()
