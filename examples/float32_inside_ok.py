"""The fused softplus of broken_float32_inside.py, upcasting only what is less precise than
float32: checked in float64 it computes in float64, and `@gradtool.reference` judges its
float32 arithmetic against the plain code in float64 (`--dtypes float32`)."""
import gradtool
import gradtool as torch


def softplus_reference(x):
    return torch.log1p(torch.exp(x))


def _wide(x):
    return x if x.dtype == torch.float64 else x.float()


@gradtool.reference(softplus_reference)
@gradtool.example((5,))
class FusedSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(_wide(x))).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return (_wide(grad) * torch.sigmoid(_wide(x))).to(x.dtype)
