"""gradtool.nn: torch.nn's modules, layers and losses on the gradtool engine."""
from . import attention, functional, init, modules, parallel, utils  # (modules: torch's files)
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .layers import (ELU, GELU, Dropout, Dropout2d, Embedding, Flatten, Identity, LeakyReLU,
                     Linear, LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Softplus, Tanh)
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss,
                   NLLLoss, SmoothL1Loss)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .parameter import Parameter
from .pooling import (AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool2d, CircularPad1d,
                      CircularPad2d, ConstantPad1d, ConstantPad2d, MaxPool2d, ReflectionPad1d,
                      ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, Upsample,
                      UpsamplingBilinear2d, UpsamplingNearest2d, ZeroPad1d, ZeroPad2d)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (MultiheadAttention, Transformer, TransformerEncoder,
                          TransformerEncoderLayer)
from ..errors import missing_attribute

__all__ = ["functional", "init", "Module", "Parameter", "Sequential", "ModuleList", "ModuleDict",
           "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "LeakyReLU", "ELU",
           "Softplus", "Softmax", "LogSoftmax", "Flatten", "Dropout", "Embedding",
           "BatchNorm1d", "LayerNorm", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss",
           "BCELoss", "BCEWithLogitsLoss", "NLLLoss", "CrossEntropyLoss", "RNNBase", "RNN",
           "GRU", "LSTM", "RNNCellBase", "RNNCell", "GRUCell", "LSTMCell", "MultiheadAttention",
           "Transformer", "TransformerEncoder", "TransformerEncoderLayer", "Conv1d", "Conv2d",
           "ConvTranspose1d", "ConvTranspose2d", "Dropout2d", "BatchNorm2d", "GroupNorm",
           "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Upsample",
           "UpsamplingNearest2d", "UpsamplingBilinear2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d", "ZeroPad1d",
           "ZeroPad2d", "ConstantPad1d", "ConstantPad2d"]

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
from .extra import *  # noqa: E402,F401,F403 (activations, ParameterList/Dict, DataParallel, ...)

# the rest of torch.nn's activations and layers, its lazy modules and its decoder
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402,F401
from .container import Container  # noqa: E402,F401
from .layers import Bilinear, EmbeddingBag, LazyLinear  # noqa: E402,F401
from .conv import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,  # noqa: E402,F401
                   LazyConvTranspose2d, LazyConvTranspose3d)
from .normalization import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: E402,F401
from .instance_norm import (LazyInstanceNorm1d, LazyInstanceNorm2d,  # noqa: E402,F401
                            LazyInstanceNorm3d)
from .parameter import Buffer, UninitializedBuffer, UninitializedParameter  # noqa: E402,F401
from .transformer import TransformerDecoder, TransformerDecoderLayer  # noqa: E402,F401
__all__ += ["Bilinear", "TransformerDecoder", "TransformerDecoderLayer", "LazyLinear",
            "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
            "Buffer",
            "UninitializedBuffer", "UninitializedParameter", "Container", "EmbeddingBag",
            "AdaptiveLogSoftmaxWithLoss"]
# the embedding, margin and likelihood losses
from .loss import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss,  # noqa: E402
                   MarginRankingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                   MultiMarginLoss, NLLLoss2d, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss,
                   TripletMarginWithDistanceLoss)
__all__ += ["CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
            "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss2d",
            "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss"]
# the sequence losses, and cross entropy of a linear layer's logits
from .loss import CTCLoss, LinearCrossEntropyLoss  # noqa: E402
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: E402
__all__ += ["CTCLoss", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
