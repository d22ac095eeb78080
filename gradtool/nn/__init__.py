"""gradtool.nn: torch.nn's modules, layers and losses on the gradtool engine."""
from . import functional, init, utils
from .container import ModuleDict, ModuleList, Sequential
from .layers import (ELU, GELU, Dropout, Embedding, Flatten, Identity, LeakyReLU, Linear,
                     LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Softplus, Tanh)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .module import Module
from .normalization import BatchNorm1d, LayerNorm
from .parameter import Parameter
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (MultiheadAttention, Transformer, TransformerEncoder,
                          TransformerEncoderLayer)

__all__ = ["functional", "init", "Module", "Parameter", "Sequential", "ModuleList", "ModuleDict",
           "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "LeakyReLU", "ELU",
           "Softplus", "Softmax", "LogSoftmax", "Flatten", "Dropout", "Embedding",
           "BatchNorm1d", "LayerNorm", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "BCELoss", "BCEWithLogitsLoss", "NLLLoss", "CrossEntropyLoss", "RNNBase", "RNN",
           "GRU", "LSTM", "RNNCellBase", "RNNCell", "GRUCell", "LSTMCell", "MultiheadAttention",
           "Transformer", "TransformerEncoder", "TransformerEncoderLayer"]


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)
from . import modules  # noqa: E402  (torch.nn.modules.*: the classes above, by torch's file)  # a torch name gradtool lacks: a clear error
