"""gradtool.nn: torch.nn's modules, layers and losses on the gradtool engine."""
from . import functional, init
from .container import ModuleList, Sequential
from .layers import Dropout, Embedding, Identity, Linear, ReLU, Sigmoid, Tanh
from .loss import CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, LayerNorm
from .parameter import Parameter

__all__ = ["functional", "init", "Module", "Parameter", "Sequential", "ModuleList", "Identity",
           "Linear", "ReLU", "Tanh", "Sigmoid", "Dropout", "Embedding", "BatchNorm1d",
           "LayerNorm", "MSELoss", "NLLLoss", "CrossEntropyLoss"]


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
