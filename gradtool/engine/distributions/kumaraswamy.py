"""torch.distributions.kumaraswamy.Kumaraswamy."""
import math

from ..autograd import creation
from ..autograd.free_functions import where
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b B(1 + n/a, b)."""
    arg1 = 1 + n / a
    return b * (arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """(1 - U^(1/c0))^(1/c1) for U uniform in (0, 1)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(creation.full_like(self.concentration0, 0),
                            creation.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    mean = property(lambda self: _moments(self.concentration1, self.concentration0, 1))

    @property
    def mode(self):  # (none where either concentration is below 1)
        log_mode = self.concentration0.reciprocal() * (-self.concentration0).log1p() \
            - (-self.concentration0 * self.concentration1).log1p()
        no_mode = (self.concentration0 < 1) | (self.concentration1 < 1)
        return where(no_mode, math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = (self.concentration0 + 1).digamma() + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
