"""torch.distributions.continuous_bernoulli.ContinuousBernoulli."""
import math

from ..autograd import creation
from ..autograd.free_functions import maximum, where
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Size, Tensor
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """On [0, 1], density proportional to p^x (1 - p)^(1 - x). Near p = 1/2 (inside `lims`)
    its normaliser and moments are 0 / 0: Taylor expansions there, as torch's."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and \
                    not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        given = probs if probs is not None else logits
        self._lims = lims
        super().__init__(self._param.size() if isinstance(given, Tensor) else Size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def _outside_unstable_region(self):
        return maximum(self.probs.le(self._lims[0]), self.probs.gt(self._lims[1]))

    def _cut_probs(self):
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * creation.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(p), C the normaliser 2 atanh(1 - 2p) / (1 - 2p)."""
        cut_probs = self._cut_probs()
        below_half = where(cut_probs.le(0.5), cut_probs, creation.zeros_like(cut_probs))
        above_half = where(cut_probs.ge(0.5), cut_probs, creation.ones_like(cut_probs))
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - where(
            cut_probs.le(0.5), (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) \
            + 1.0 / ((-cut_probs).log1p() - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    stddev = property(lambda self: self.variance.sqrt())

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2) \
            + 1.0 / ((-cut_probs).log1p() - cut_probs.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    param_shape = property(lambda self: self._param.size())

    def sample(self, sample_shape=Size()):
        u = creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        u = creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") \
            + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0) \
            / (2.0 * cut_probs - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value.le(0.0), creation.zeros_like(value),
                     where(value.ge(1.0), creation.ones_like(value), unbounded))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return where(self._outside_unstable_region(),
                     ((-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p()
                      - (-cut_probs).log1p()) / (cut_probs.log() - (-cut_probs).log1p()),
                     value)

    def entropy(self):
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        out_unst_reg = maximum(x.le(self._lims[0] - 0.5), x.gt(self._lims[1] - 0.5))
        cut_nat_params = where(out_unst_reg, x, (self._lims[0] - 0.5) * creation.ones_like(x))
        log_norm = cut_nat_params.expm1().abs().log() - cut_nat_params.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(out_unst_reg, log_norm, taylor)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
