"""torch.special, under torch's module name; the functions are the autograd layer's
(gradtool/engine/autograd/special.py). A name of torch's family the engine lacks (the
incomplete gamma functions: docs/limits.md says why) is a clear missing-name error, never a
wrong value."""
from .autograd.special import *  # noqa: F401,F403 (every name of its __all__)
from .autograd.special import __all__  # noqa: F401
from .errors import missing_attribute

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
