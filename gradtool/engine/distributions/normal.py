"""torch.distributions.normal, the module real files import Normal from."""
from . import Normal  # noqa: F401
