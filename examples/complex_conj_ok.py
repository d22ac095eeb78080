"""Complex numbers: a custom Function on complex tensors with torch's conventions, and a
function mixing complex and real ops.

torch's convention: for a real loss L, the gradient of a complex z is dL/dRe z + i dL/dIm z
(twice the conjugate Wirtinger derivative), so a backward multiplies grad_output by the
CONJUGATE of the derivative: for z -> z^2, grad_output * conj(2 z).
`gradtool gradcheck` checks the real and imaginary parts of each complex input and output
separately, as torch's gradcheck does: passes. broken_complex_conj.py forgets the conj."""
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
        return grad_output * (2 * z).conj()


Z = torch.tensor([1.0 + 2.0j, 0.5 - 0.7j, -1.3 + 0.4j], dtype=torch.cdouble,
                 requires_grad=True)
gradtool.example(Z)(Square)


@gradtool.example(Z, (3,))
def phase_energy(z, x):
    """A real loss of a complex z and a real x: |z e^{ix}|^2 + angle(z) . x"""
    rotated = z * torch.polar(torch.ones_like(x), x)
    return (rotated * rotated.conj()).real.sum() + (z.angle() * x).sum()
