"""torch.linalg, under torch's module name; the functions are the autograd layer's ops
(gradtool/engine/autograd/linalg.py), which the Tensor's methods (det, inverse, ...) share."""
from .autograd.linalg import (__all__, cholesky, cholesky_ex, det, eigh,  # noqa: F401
                              eigvalsh, inv, inv_ex, matrix_norm, norm, qr, slogdet, solve, svd,
                              svdvals, vector_norm)
from .errors import missing_attribute

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
