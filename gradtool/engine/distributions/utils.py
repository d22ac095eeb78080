"""torch.distributions.utils: broadcasting parameters, probabilities and logits, and the lazy
properties that compute whichever of two parametrisations was not given."""
import functools

import numpy as np

from ..autograd import creation
from ..autograd.grad_mode import enable_grad
from ..autograd.tensor import Tensor
from ..legacy import finfo

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values):
    """Tensors broadcast to one shape (expanded only where they differ, as torch's
    broadcast_tensors records); numbers become tensors of the first tensor's dtype."""
    if not all(isinstance(v, (Tensor, int, float)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else None
    values = [v if isinstance(v, Tensor) else creation.tensor(float(v), dtype=dtype)
              for v in values]
    shape = np.broadcast_shapes(*(tuple(v.shape) for v in values))
    return tuple(_expanded(v, shape) for v in values)


def _expanded(t, shape):
    return t if tuple(t.shape) == tuple(shape) else t.expand(shape)


def _standard_normal(shape, dtype):
    return creation.randn(tuple(shape), dtype=dtype)


def _sum_rightmost(value, dim):
    """value summed over its `dim` rightmost dims."""
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1) if dim else value


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def clamp_probs(probs):
    """probs inside (0, 1), by the dtype's eps (so that their logarithms are finite)."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


class lazy_property:
    """Computed on first access, then an attribute of the instance (probs from logits...).
    Validation skips an argument that is still such a property."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (below diagonal `diag`) of (batched) square matrices, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, diag)
    return mat[..., creation.tensor(rows), creation.tensor(cols)]


def vec_to_tril_matrix(vec, diag=0):
    """tril_matrix_to_vec's inverse: the vector's entries into a lower triangle, zeros above."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag)
                            * (diag + 1)) ** 0.5) / 2
    eps = finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         f"expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    rows, cols = np.tril_indices(n, diag)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., creation.tensor(rows), creation.tensor(cols)] = vec
    return mat



from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
