"""torch.distributions.categorical, the module real files import Categorical from."""
from . import Categorical  # noqa: F401
