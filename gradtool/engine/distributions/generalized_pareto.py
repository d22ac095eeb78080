"""torch.distributions.generalized_pareto.GeneralizedPareto."""
import math

from ..autograd import creation
from ..autograd.free_functions import where
from ..autograd.tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Survival (1 + c z)^(-1/c) for z = (x - loc) / scale, c the concentration (exp(-z)
    at c = 0)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalars = not any(isinstance(v, Tensor) for v in (loc, scale, concentration))
        super().__init__(Size() if scalars else self.loc.size(), validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        u = creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype)
        return self.icdf(u)

    def _safe_concentration(self):
        """(c is 0, c with 1 where it is 0): the formulas divide by c, their limits do not."""
        eq_zero = self.concentration.isclose(creation.tensor(0.0))
        return eq_zero, where(eq_zero, creation.ones_like(self.concentration),
                              self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + creation.ones_like(z)
        where_nonzero = where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return where(eq_zero, -z, -(safe_conc * z).log1p() / safe_conc)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        return where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):  # (none for concentration >= 1)
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):  # (none for concentration >= 1/2)
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)),
                     math.nan)

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    mode = property(lambda self: self.loc)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(lower, upper)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
