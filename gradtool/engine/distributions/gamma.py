"""torch.distributions.gamma.Gamma."""
from .. import special
from ..autograd import creation
from ..autograd.draws import _standard_gamma
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Size, Tensor
from ..legacy import finfo
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Density rate^c x^(c-1) e^(-rate x) / G(c), c the concentration."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalars = not isinstance(concentration, Tensor) and not isinstance(rate, Tensor)
        super().__init__(Size() if scalars else self.concentration.size(),
                         validate_args=validate_args)

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ((self.concentration - 1) / self.rate).clamp(min=0))
    variance = property(lambda self: self.concentration / self.rate.pow(2))

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        with no_grad():  # (a draw that rounds to 0 is the dtype's smallest number instead)
            value.clamp_(min=finfo(value.dtype).tiny)
        return value

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value):
        value = creation.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return special.xlogy(self.concentration, self.rate) \
            + special.xlogy(self.concentration - 1, value) - self.rate * value \
            - self.concentration.lgamma()

    def entropy(self):
        return self.concentration - self.rate.log() + self.concentration.lgamma() \
            + (1.0 - self.concentration) * self.concentration.digamma()

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return special.gammainc(self.concentration, self.rate * value)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
