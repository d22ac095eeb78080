"""torch.special, under torch's module name; the functions are the autograd layer's
(gradtool/engine/autograd/special.py), the whole of torch 2.13's family."""
from .autograd.special import *  # noqa: F401,F403 (every name of its __all__)
from .autograd.special import __all__  # noqa: F401
from .errors import missing_attribute

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
