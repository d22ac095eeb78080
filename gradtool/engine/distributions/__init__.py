"""gradtool.distributions: torch.distributions' Categorical and Normal, with torch's formulas
(so the same nodes are recorded), argument validation and kl_divergence between Normals.
Samples draw from gradtool.manual_seed's generator."""
import math

import numpy as np

from ..autograd import creation
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Size, Tensor
from ..legacy import finfo
from ..nn.functional import binary_cross_entropy_with_logits, one_hot

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


class Bernoulli(Distribution):
    """0 or 1, 1 with probability `probs` (or sigmoid(`logits`)); one of the two."""

    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,), self._repr_params = _broadcast_all(probs), ("probs",)
        else:
            (self.logits,), self._repr_params = _broadcast_all(logits), ("logits",)
        param = probs if probs is not None else logits
        super().__init__(param.shape if isinstance(param, Tensor) else Size(),
                         validate_args=validate_args)
        if probs is not None:
            self._check("parameter probs", self.probs,
                        (self.probs._data >= 0) & (self.probs._data <= 1),
                        "Interval(lower_bound=0.0, upper_bound=1.0)")

    def __getattr__(self, name):  # the parameter not given, computed on first use (torch's)
        if name == "probs":
            self.probs = self.logits.sigmoid()
            return self.probs
        if name == "logits":
            eps = finfo(self.probs.dtype).eps
            p = self.probs.clamp(min=eps, max=1 - eps)
            self.logits = p.log() - (-p).log1p()
            return self.logits
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def param_shape(self):
        return (self.probs if "probs" in vars(self) else self.logits).shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, float("nan"))  # (no single mode there)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.probs.expand(self._extended_shape(sample_shape)).bernoulli()

    def log_prob(self, value):
        self._check_support(value, lambda d: (d == 0) | (d == 1), "Boolean()")
        logits, value = _broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = creation.arange(2, dtype=self.probs.dtype).view(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    def _check_support(self, value, ok, constraint):
        if self._validate_args and not bool(np.all(ok(value._data))):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({constraint}) of "
                             f"the distribution {self!r}, but found invalid values:\n{value}")


class OneHotCategorical(Distribution):
    """Categorical's classes as one-hot vectors (the event: the last dim)."""

    has_enumerate_support = True
    _repr_params = ()

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    param_shape = property(lambda self: self._categorical.param_shape)

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            data = value._data
            if not bool(np.all(((data == 0) | (data == 1)) & (data.sum(-1) == 1)[..., None])):
                raise ValueError(
                    f"Expected value argument ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) to be within the support (OneHot()) of the "
                    f"distribution {self!r}, but found invalid values:\n{value}")
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = creation.eye(n, dtype=self.probs.dtype).view(
            (n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values


class MultivariateNormal(Distribution):
    """N(loc, covariance) over the last dim, the covariance given as covariance_matrix,
    precision_matrix or scale_tril (its Cholesky factor L, which every formula reads)."""

    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given
        if matrix.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading "
                             f"batch dimensions")
        batch_shape = np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self._repr_params = ("loc", name)
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, loc.shape[-1:], validate_args=validate_args)
        if self._validate_args:
            if name == "scale_tril":
                data = matrix._data
                ok = np.all(np.triu(data, 1) == 0) and np.all(np.diagonal(data, 0, -2, -1) > 0)
                self._check("parameter scale_tril", matrix, ok, "LowerCholesky()")
            else:
                self._check(f"parameter {name}", matrix, _positive_definite(matrix._data),
                            "PositiveDefinite()")
        self._unbroadcasted_scale_tril = self._scale_tril_of(name, matrix)

    @staticmethod
    def _scale_tril_of(name, matrix):
        from .. import linalg
        if name == "scale_tril":
            return matrix
        if name == "covariance_matrix":
            return linalg.cholesky(matrix)
        return linalg.cholesky(linalg.inv(matrix))  # (the covariance is the precision's inverse)

    def __getattr__(self, name):  # the forms of the covariance not given, on first use
        if name in ("scale_tril", "covariance_matrix", "precision_matrix"):
            L = self._unbroadcasted_scale_tril
            value = {"scale_tril": lambda: L,
                     "covariance_matrix": lambda: L @ L.mT,
                     "precision_matrix": lambda: _inverse(L @ L.mT)}[name]()
            shape = tuple(self._batch_shape) + tuple(self._event_shape) * 2
            return value.expand(shape)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        """loc + L eps with eps ~ N(0, I): differentiable in loc and the covariance."""
        shape = self._extended_shape(sample_shape)
        eps = creation.randn(shape, dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        from .. import linalg
        diff = value - self.loc
        L = self._unbroadcasted_scale_tril
        shape = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(diff.shape[:-1]))
        whitened = linalg.solve(L.expand(shape + tuple(L.shape[-2:])),
                                diff.expand(shape + tuple(diff.shape[-1:])).unsqueeze(-1))
        mahalanobis = whitened.squeeze(-1).pow(2).sum(-1)
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) \
            - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if not len(self._batch_shape) else h.expand(self._batch_shape)


class Independent(Distribution):
    """A distribution whose rightmost `reinterpreted_batch_ndims` batch dims are read as
    event dims: log_prob and entropy sum over them."""

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        base, n = base_distribution, reinterpreted_batch_ndims
        if n > len(base.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape), actual {n} vs "
                             f"{len(base.batch_shape)}")
        shape = tuple(base.batch_shape) + tuple(base.event_shape)
        split = len(shape) - (n + len(base.event_shape))
        self.base_dist, self.reinterpreted_batch_ndims = base, n
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    has_enumerate_support = property(lambda self: False if self.reinterpreted_batch_ndims
                                     else getattr(self.base_dist, "has_enumerate_support", False))
    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


def _positive_definite(matrices):
    """Symmetric, with a Cholesky factor (torch's PositiveDefinite constraint)."""
    if not np.allclose(matrices, np.swapaxes(matrices, -1, -2)):
        return False
    try:
        np.linalg.cholesky(matrices)
    except np.linalg.LinAlgError:
        return False
    return True


def _sum_rightmost(value, dims):
    return value.reshape(tuple(value.shape[:-dims]) + (-1,)).sum(-1) if dims else value


def _inverse(matrix):
    from .. import linalg
    return linalg.inv(matrix)


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


__all__ = ["Distribution", "Bernoulli", "Categorical", "Independent", "MultivariateNormal",
           "Normal", "OneHotCategorical", "kl_divergence"]


from ..errors import missing_attribute, namespace_module  # noqa: E402

# torch's files for these names, for code that spells the path (torch.distributions.normal.Normal)
WHERE = {"distribution": {"Distribution": Distribution}, "normal": {"Normal": Normal},
         "categorical": {"Categorical": Categorical}, "kl": {"kl_divergence": kl_divergence},
         "bernoulli": {"Bernoulli": Bernoulli}, "independent": {"Independent": Independent},
         "one_hot_categorical": {"OneHotCategorical": OneHotCategorical},
         "multivariate_normal": {"MultivariateNormal": MultivariateNormal}}
for _file, _names in WHERE.items():
    globals()[_file] = namespace_module(f"{__name__}.{_file}", _names)

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
