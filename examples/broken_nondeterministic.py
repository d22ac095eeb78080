"""A backward that gives a slightly different answer each time it runs.

Backward results that depend on scheduling (atomic adds, reductions in a varying order) or
on uninitialised workspace differ in the last bits from run to run; here a 1e-12 relative
jitter stands for that. gradcheck runs backward twice and requires equal results up to
nondet_tol (0 by default). gradtool gradcheck: fails ("Backward is not reentrant"),
diagnosis `nondeterministic_backward` naming the Function; passes with nondet_tol=1e-9."""
import gradtool as gt


class JitteryCube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        jitter = 1 + 1e-12 * gt.randn(*x.shape, dtype=x.dtype)
        return grad * 3 * x ** 2 * jitter
