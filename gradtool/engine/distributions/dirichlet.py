"""torch.distributions.dirichlet.Dirichlet."""
from ..autograd.tensor import Size
from ..nn.functional import one_hot
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import _standard_gamma

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """On the simplex, density proportional to prod x_i^(c_i - 1)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        """Normalised Gamma draws (without a reparameterised gradient on the engine)."""
        gammas = _standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)))
        return gammas / gammas.sum(-1, True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration - 1.0).xlogy(value).sum(-1) \
            + self.concentration.sum(-1).lgamma() - self.concentration.lgamma().sum(-1)

    mean = property(lambda self: self.concentration / self.concentration.sum(-1, True))

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # where every concentration is below 1 the density peaks at a vertex: the largest's
        below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1]).to(mode.dtype)
        return mode.where(~below_one, vertex)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k, a0 = self.concentration.size(-1), self.concentration.sum(-1)
        return self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() \
            - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
