"""gradtool.distributions: torch.distributions on the engine, module by module as torch lays
it out (torch.distributions.normal.Normal...), with torch's formulas (so the same nodes are
recorded), its argument validation (in Distribution, against each class's arg_constraints and
support) and its kl_divergence dispatch. Samples draw from gradtool.manual_seed's generator."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Independent",
           "MultivariateNormal", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "constraints", "kl_divergence", "register_kl"]

from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
