"""torch.distributions.multivariate_normal.MultivariateNormal."""
import math

import numpy as np

from .. import linalg
from ..autograd.tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


class MultivariateNormal(Distribution):
    """N(loc, covariance) over the last dim, the covariance given as covariance_matrix,
    precision_matrix or scale_tril (its Cholesky factor L, which every formula reads)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("scale_tril", scale_tril),
                                     ("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given
        if matrix.dim() < 2:
            spelled = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{spelled} must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        batch_shape = np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:  # (the covariance is the precision's inverse)
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(matrix))

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.loc = self.loc.expand(tuple(batch_shape) + tuple(self.event_shape))
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        return linalg.inv(L @ L.mT).expand(self._matrix_shape())

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        """loc + L eps with eps ~ N(0, I): differentiable in loc and the covariance."""
        eps = _standard_normal(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        mahalanobis = _mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) \
            - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if not len(self._batch_shape) else h.expand(self._batch_shape)


def _mahalanobis(L, x):
    """|L^-1 x|^2 over the last dim, L and x broadcast over their batch dims."""
    shape = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))
    whitened = linalg.solve(L.expand(shape + tuple(L.shape[-2:])),
                            x.expand(shape + tuple(x.shape[-1:])).unsqueeze(-1))
    return whitened.squeeze(-1).pow(2).sum(-1)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
