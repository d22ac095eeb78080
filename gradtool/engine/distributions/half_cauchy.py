"""torch.distributions.half_cauchy.HalfCauchy."""
import math

from ..autograd import creation
from . import constraints
from .cauchy import Cauchy
from .half_normal import _Folded
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    arg_constraints = {"scale": constraints.positive}

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    variance = property(lambda self: self.base_dist.variance)

    @property
    def mean(self):
        return creation.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
