"""A custom Function on complex tensors whose backward forgets the conjugate.

torch's convention makes a complex gradient dL/dRe z + i dL/dIm z, so the backward of
z -> z^2 is grad_output * conj(2 z); this one returns grad_output * 2 z, right for real z only.
`gradtool gradcheck`: fails, diagnosis `wrong_gradient`, naming the parts that disagree
("the analytical gradient of imaginary part of output 0 with respect to real part of z").
complex_conj_ok.py has the right backward."""
import gradtool
import gradtool as torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, grad_output):
        z, = ctx.saved_tensors
        return grad_output * 2 * z  # wrong: grad_output * (2 * z).conj()


Z = torch.tensor([1.0 + 2.0j, 0.5 - 0.7j], dtype=torch.cdouble, requires_grad=True)
gradtool.example(Z)(Square)
