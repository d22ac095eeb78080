"""A forward that modifies its input in place without telling autograd (ctx.mark_dirty).

The caller's tensor changes under it, and every evaluation of the function starts from a
different point, so gradcheck's finite differences are meaningless and it fails. (With
mark_dirty, torch and gradtool refuse an in-place change to a leaf that requires grad.)
gradtool: diagnosis `input_modified_in_forward`, from the input's version counter."""
import gradtool as gt


class AddOne(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1.0)  # in place, and no ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad
