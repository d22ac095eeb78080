"""torch.distributions.gumbel.Gumbel."""
import math

from ..autograd import creation
from ..autograd.tensor import Tensor
from ..legacy import finfo
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """loc - scale * log(-log(U)) for U uniform in (0, 1)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if not isinstance(loc, Tensor) and not isinstance(scale, Tensor):
            base_dist = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(creation.full_like(self.loc, info.tiny),
                                creation.full_like(self.loc, 1 - info.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv,
                      AffineTransform(loc=0, scale=-creation.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    mean = property(lambda self: self.loc + self.scale * euler_constant)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: math.pi / math.sqrt(6) * self.scale)
    variance = property(lambda self: self.stddev.pow(2))

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
