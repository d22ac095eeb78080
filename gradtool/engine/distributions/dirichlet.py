"""torch.distributions.dirichlet.Dirichlet."""
from ..autograd.draws import _dirichlet_grad, _sample_dirichlet
from ..autograd.function import Function, once_differentiable
from ..autograd.tensor import Size
from ..nn.functional import one_hot
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    """The draws' gradient: each coordinate's as a Beta(c_i, total - c_i) draw's, less the
    part that keeps the draws on the simplex."""
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = _dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """Dirichlet draws with torch's reparameterised gradient (its node: _DirichletBackward)."""

    @staticmethod
    def forward(ctx, concentration):
        x = _sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


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
        return _Dirichlet.apply(self.concentration.expand(self._extended_shape(sample_shape)))

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
