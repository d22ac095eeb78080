"""gradtool.distributions: torch.distributions' Categorical and Normal, with torch's formulas
(so the same nodes are recorded), argument validation and kl_divergence between Normals.
Samples draw from gradtool.manual_seed's generator."""
import math

import numpy as np

from ..autograd import creation
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Size, Tensor
from ..legacy import finfo

_validate_default = True


class Distribution:
    """batch_shape and event_shape; sample() draws without a graph, rsample() through one."""

    has_rsample = False

    @staticmethod
    def set_default_validate_args(value):
        global _validate_default
        _validate_default = bool(value)

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        self._validate_args = _validate_default if validate_args is None else validate_args

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=Size()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError(f"{type(self).__name__} has no rsample")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def perplexity(self):
        return self.entropy().exp()

    def _check(self, name, value, ok, constraint):
        """torch's ValueError for a parameter or value outside its constraint."""
        if self._validate_args and not bool(np.all(ok)):
            raise ValueError(f"Expected {name} ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                             f"constraint {constraint}, but found invalid values:\n{value}")

    def __repr__(self):
        shown = (getattr(self, name) for name in self._repr_params)
        params = ", ".join(f"{name}: {t.shape if t.numel() > 1 else t}"
                           for name, t in zip(self._repr_params, shown))
        return f"{type(self).__name__}({params})"


class Categorical(Distribution):
    """Classes 0..K-1 with probabilities `probs` (normalised over the last dim) or
    unnormalised log-probabilities `logits`; one of the two."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._repr_params = ("probs",)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._repr_params = ("logits",)
        param = probs if probs is not None else logits
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)
        if probs is not None:
            data = self.probs._data  # checked once normalised, as torch
            self._check("probs", self.probs, (data >= 0) & np.isclose(data.sum(-1), 1)[..., None],
                        "Simplex()")

    # probs and logits: whichever was not given is computed on first use, as torch does
    def __getattr__(self, name):
        if name == "probs":
            self.probs = self.logits.softmax(-1)
            return self.probs
        if name == "logits":
            eps = finfo(self.probs.dtype).eps
            self.logits = self.probs.clamp(min=eps, max=1 - eps).log()
            return self.logits
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def param_shape(self):
        return (self.probs if "probs" in vars(self) else self.logits).shape

    @property
    def mean(self):
        return creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return creation.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()):
        """Class indices (int64) of shape sample_shape + batch_shape: torch's multinomial draws
        with replacement, one column per sample."""
        sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = probs_2d.multinomial(sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        data = value._data
        if self._validate_args and not np.all((data == np.floor(data)) & (data >= 0)
                                              & (data < self._num_events)):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support (IntegerInterval("
                             f"lower_bound=0, upper_bound={self._num_events - 1})) of the "
                             f"distribution {self!r}, but found invalid values:\n{value}")
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


class Normal(Distribution):
    """The normal distribution N(loc, scale**2), loc and scale broadcast together."""

    has_rsample = True
    _repr_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)
        self._check("scale", self.scale, self.scale._data > 0, "GreaterThan(lower_bound=0.0)")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            noise = creation.generator().standard_normal(tuple(shape))
            return self.loc.expand(shape) + creation.from_numpy(
                noise.astype(self.loc._data.dtype)) * self.scale.expand(shape)

    def rsample(self, sample_shape=Size()):
        """loc + eps * scale with eps ~ N(0, 1): differentiable in loc and scale."""
        shape = self._extended_shape(sample_shape)
        eps = creation.randn(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() \
            - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


def kl_divergence(p, q):
    """KL(p || q) for two Normals, torch's formula."""
    if not (isinstance(p, Normal) and isinstance(q, Normal)):
        from ..errors import NotInEngineError
        raise NotInEngineError(f"torch.distributions.kl_divergence({type(p).__name__}, "
                               f"{type(q).__name__})")
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


def _expanded(t, shape):
    return t if tuple(t.shape) == tuple(shape) else t.expand(shape)


def _broadcast_all(*values):
    """Tensors broadcast to one shape (expanded only where they differ, as torch's
    broadcast_tensors records); numbers become tensors of the tensors' dtype."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else None
    values = [v if isinstance(v, Tensor) else creation.tensor(float(v), dtype=dtype)
              for v in values]
    shape = np.broadcast_shapes(*(tuple(v.shape) for v in values))
    return [_expanded(v, shape) for v in values]


__all__ = ["Distribution", "Categorical", "Normal", "kl_divergence"]


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error

from . import categorical, kl, normal  # noqa: E402 (torch's submodules, as attributes too)
