"""torch.distributions.kl, the module real files import kl_divergence from."""
from . import kl_divergence  # noqa: F401
