"""A memory-saving Swish whose backward multiplies its saved derivative in place.

forward keeps swish'(x) on ctx; backward does `grad *= grad_output` on that very tensor, so the
first backward is right and every later one multiplies again. The formula is right; the
backward is not reentrant (gradcheck runs backward many times on one graph). gradtool
gradcheck: fails, diagnosis `backward_not_reentrant` naming `ctx.grad` and the in-place line;
fixed in not_reentrant_ok.py."""
import gradtool as torch


class MemorySwish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.grad = s * (1 + x * (1 - s))   # swish'(x), kept for backward
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        grad = ctx.grad
        grad *= grad_output                # in place: the saved derivative is gone after one call
        return grad
