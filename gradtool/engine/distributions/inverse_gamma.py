"""torch.distributions.inverse_gamma.InverseGamma."""
import math

from ..autograd.free_functions import where
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    concentration = property(lambda self: self.base_dist.concentration)
    rate = property(lambda self: self.base_dist.rate)
    mode = property(lambda self: self.rate / (self.concentration + 1))

    @property
    def mean(self):  # (infinite for concentration <= 1)
        return where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def variance(self):  # (infinite for concentration <= 2)
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return where(self.concentration > 2, result, math.inf)

    def entropy(self):
        return self.concentration + self.rate.log() + self.concentration.lgamma() \
            - (1 + self.concentration) * self.concentration.digamma()


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
