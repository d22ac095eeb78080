"""A fused kernel that computes in float32 inside: softplus upcasts to float32 (`x.float()`),
computes and casts back (`.to(x.dtype)`), the usual kernel pattern for half-precision inputs.

Checked in float64 the inputs and outputs are float64, but the step of 1e-6 meets float32
rounding inside: central differences measure the rounding, and the formula, which is right,
looks wrong (and its mismatches like kinks). gradtool gradcheck: fails, diagnosis `precision`
naming the `x.float()` line (with a step suited to float32 the Jacobians agree), and the
reference check as the tool for such kernels; float32_inside_ok.py computes in the input's
dtype when it is float64 and declares its float64 reference."""
import gradtool
import gradtool as torch


@gradtool.example((5,))
class FusedSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xf = x.float()                     # float32 arithmetic, whatever the input
        return torch.log1p(torch.exp(xf)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return (grad.float() * torch.sigmoid(x.float())).to(x.dtype)
