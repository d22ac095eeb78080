"""torch.distributions.negative_binomial.NegativeBinomial."""
from ..autograd import creation
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Size
from ..nn.functional import logsigmoid
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Successes before total_count failures, each trial a success with `probs`."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new.__dict__.pop("_gamma", None)  # (recomputed from the expanded parameters)
        return new

    mean = property(lambda self: self.total_count * self.logits.exp())
    mode = property(lambda self: ((self.total_count - 1) * self.logits.exp()).floor().clamp(
        min=0.0))
    variance = property(lambda self: self.mean / (-self.logits).sigmoid())
    param_shape = property(lambda self: self._param.size())

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=Size()):
        """Poisson counts of Gamma rates (the Gamma-Poisson mixture it is)."""
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return creation.tensor(creation.generator().poisson(rate.numpy()), dtype=rate.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) \
            + value * logsigmoid(self.logits)
        log_normalization = -(self.total_count + value).lgamma() + (1.0 + value).lgamma() \
            + self.total_count.lgamma()
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
