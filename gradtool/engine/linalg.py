"""torch.linalg, under torch's module name; the functions are the autograd layer's ops
(gradtool/engine/autograd/linalg.py), which the Tensor's methods (det, inverse, ...) share."""
from .autograd.linalg import (__all__, cholesky, cholesky_ex, det, eigh,  # noqa: F401
                              eigvalsh, inv, inv_ex, matrix_norm, norm, qr, slogdet, solve, svd,
                              svdvals, vector_norm)
from .autograd.linalg import lu, lu_factor, lu_factor_ex, lu_solve  # noqa: F401
from .autograd.linalg import (LinAlgError, matrix_power, multi_dot,  # noqa: F401
                              solve_triangular)
from .autograd.linalg import eig, eigvals  # noqa: F401
from .autograd.linalg import householder_product  # noqa: F401
from .autograd.linalg import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: F401
from .autograd.linalg import (cond, diagonal, lstsq, matrix_exp, matrix_rank,  # noqa: F401
                              pinv, solve_ex, tensorinv, tensorsolve, vander)
from .autograd.tensor_methods_extra import linalg_cross as cross  # noqa: F401
from .autograd.matmul import matmul  # noqa: F401  (torch.linalg.matmul is torch.matmul)
from .autograd.out_argument import given_out
from .errors import missing_attribute


def vecdot(x, y, *, dim=-1):
    """The dot products of x's and y's vectors along dim (x conjugated), as torch's: a
    product and a sum."""
    return (x.conj() * y).sum(dim)

given_out(globals(), "torch.linalg")  # out= for those torch takes it in
__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
