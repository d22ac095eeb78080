"""torch.distributions.categorical.Categorical."""
import numpy as np

from ..autograd import creation
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Size
from ..legacy import finfo
from . import constraints
from .distribution import Distribution
from .utils import _expanded, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Classes 0..K-1 with probabilities `probs` (normalised over the last dim) or
    unnormalised log-probabilities `logits`; one of the two."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)  # (normalised)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    param_shape = property(lambda self: self._param.size())
    mean = property(lambda self: creation.full(self._extended_shape(), float("nan"),
                                               dtype=self.probs.dtype))
    mode = property(lambda self: self.probs.argmax(-1))
    variance = property(lambda self: creation.full(self._extended_shape(), float("nan"),
                                                   dtype=self.probs.dtype))

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def sample(self, sample_shape=Size()):
        """Class indices (int64) of shape sample_shape + batch_shape: torch's multinomial draws
        with replacement, one column per sample."""
        sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = probs_2d.multinomial(sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        log_pmf = self.logits
        shape = np.broadcast_shapes(tuple(value.shape), tuple(log_pmf.shape))
        value, log_pmf = _expanded(value, shape), _expanded(log_pmf, shape)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = creation.arange(self._num_events).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
