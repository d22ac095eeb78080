"""Backwards that return gradients of the wrong shape.

Square returns shape [1, n] for an input of shape [n]: the engine sums it back down (as
torch does), which would also hide a backward that broadcasts by mistake: gradcheck passes,
gradtool warns `grad_wrong_shape`. SumSquares returns a scalar for an input of shape [n]:
the engine refuses it and the check raises, with the same diagnosis attached."""
import gradtool as gt


class Square(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (grad * 2 * x).unsqueeze(0)


class SumSquares(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x * x).sum()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return (grad * 2 * x).sum()  # should be grad * 2 * x, of x's shape
