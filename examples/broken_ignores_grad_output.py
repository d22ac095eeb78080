"""A backward that returns the local derivative but forgets to multiply by grad_output.

For a function with a scalar output the Jacobian check passes (the grad_output it uses is
1); torch catches it only with a zero grad_output. gradtool gradcheck: fails ("backward not
multiplied by grad_output"), diagnosis `ignores_grad_output` naming the Function, found with
a non-unit grad_output (backward(2g) == backward(g))."""
import gradtool as gt


class Square(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x  # should be grad * 2 * x


def sum_of_squares(x):
    return Square.apply(x).sum()
