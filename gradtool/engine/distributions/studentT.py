"""torch.distributions.studentT.StudentT."""
import math

from ..autograd.free_functions import where
from ..autograd.tensor import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """loc + scale * T, T a Student's t with df degrees of freedom."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):  # (none for df <= 1)
        return where(self.df <= 1, math.nan, self.loc)

    mode = property(lambda self: self.loc)

    @property
    def variance(self):  # (infinite for 1 < df <= 2, none for df <= 1)
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        return where(self.df > 2, finite, where(self.df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=Size()):
        x = _standard_normal(self._extended_shape(sample_shape), self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) \
            + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma()
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self):
        lbeta = (0.5 * self.df).lgamma() + math.lgamma(0.5) - (0.5 * (self.df + 1)).lgamma()
        return self.scale.log() + 0.5 * (self.df + 1) * (
            (0.5 * (self.df + 1)).digamma() - (0.5 * self.df).digamma()) \
            + 0.5 * self.df.log() + lbeta


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
