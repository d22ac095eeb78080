"""torch.nn.modules.*: where torch keeps each layer class, for files that import them from
there (`from torch.nn.modules.loss import _Loss`). Each submodule is a namespace of gradtool's
classes; a name gradtool lacks is a clear error, as everywhere."""
import collections.abc
import itertools

from ..errors import missing_attribute, namespace_module
from . import (activation_extra, adaptive, container, conv, instance_norm, lazy, layers, loss,
               module, normalization, pooling, rearranging, rnn, transformer)


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    parse.__name__ = name
    return parse


_HELPERS = {"_ntuple": _ntuple, "_single": _ntuple(1, "_single"),
            "_pair": _ntuple(2, "_pair"), "_triple": _ntuple(3, "_triple"),
            "_quadruple": _ntuple(4, "_quadruple")}

# torch's file for each of gradtool's nn classes
WHERE = {
    "module": "Module", "linear": "Identity Linear Bilinear LazyLinear",
    "activation": "ReLU Tanh Sigmoid GELU SiLU LeakyReLU ELU Softplus Softmax LogSoftmax "
                  "MultiheadAttention " + " ".join(activation_extra.__all__),
    "loss": "_Loss MSELoss L1Loss SmoothL1Loss HuberLoss BCELoss BCEWithLogitsLoss NLLLoss "
            "CrossEntropyLoss KLDivLoss NLLLoss2d PoissonNLLLoss GaussianNLLLoss HingeEmbeddingLoss "
            "MultiLabelSoftMarginLoss CosineEmbeddingLoss MarginRankingLoss TripletMarginLoss "
            "TripletMarginWithDistanceLoss SoftMarginLoss MultiLabelMarginLoss MultiMarginLoss",
    "container": "Sequential ModuleList ModuleDict Container",
    "normalization": "LayerNorm GroupNorm",
    "batchnorm": "BatchNorm1d BatchNorm2d LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d",
    "lazy": "LazyModuleMixin", "adaptive": "AdaptiveLogSoftmaxWithLoss",
    "sparse": "Embedding EmbeddingBag", "dropout": "Dropout Dropout2d",
    "conv": "Conv1d Conv2d ConvTranspose1d ConvTranspose2d LazyConv1d LazyConv2d LazyConv3d "
            "LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d",
    "pooling": "MaxPool2d AvgPool2d AdaptiveAvgPool2d AdaptiveMaxPool2d",
    "upsampling": "Upsample UpsamplingNearest2d UpsamplingBilinear2d",
    "padding": "ReflectionPad1d ReflectionPad2d ReplicationPad1d ReplicationPad2d CircularPad1d "
               "CircularPad2d ZeroPad1d ZeroPad2d ConstantPad1d ConstantPad2d",
    "flatten": "Flatten", "rnn": "RNNBase RNN GRU LSTM RNNCellBase RNNCell GRUCell LSTMCell",
    "transformer": "Transformer TransformerEncoder TransformerEncoderLayer TransformerDecoder "
                   "TransformerDecoderLayer", "utils": "",
}


def _namespace(name, values):
    return namespace_module(f"{__name__}.{name}", values)


def _class(name):
    # (looked up in the files' own names: a name a file lacks would build its clear error)
    return next(vars(source)[name] for source in _SOURCES if name in vars(source))


_SOURCES = (module, container, conv, layers, loss, normalization, pooling, rnn, transformer,
            activation_extra, lazy, adaptive)

# the pooling, padding, dropout and sampling families' long tail, in torch's files
_LONG_TAIL = {
    "pooling": "MaxPool3d AvgPool3d AdaptiveAvgPool3d AdaptiveMaxPool3d MaxUnpool1d "
               "MaxUnpool2d MaxUnpool3d LPPool1d LPPool2d LPPool3d FractionalMaxPool2d "
               "FractionalMaxPool3d",
    "padding": "ReflectionPad3d ReplicationPad3d CircularPad3d ZeroPad3d ConstantPad3d",
    "dropout": "Dropout1d Dropout3d AlphaDropout FeatureAlphaDropout",
    "normalization": "LocalResponseNorm CrossMapLRN2d",
    "instancenorm": "InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyInstanceNorm1d "
                    "LazyInstanceNorm2d LazyInstanceNorm3d",
    "channelshuffle": "ChannelShuffle", "activation": "Softmax2d",
}
for _file, _names in _LONG_TAIL.items():
    WHERE[_file] = f"{WHERE.get(_file, '')} {_names}".strip()
_SOURCES += (instance_norm, rearranging)


# torch.nn.modules.module's functions: hooks on every module
_MODULE_FUNCTIONS = {n: getattr(module, n) for n in (
    "register_module_forward_pre_hook", "register_module_forward_hook",
    "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
    "register_module_backward_hook")}

for _file, _names in WHERE.items():
    globals()[_file] = _namespace(_file, _HELPERS if _file == "utils" else
                                  {n: _class(n) for n in _names.split()}
                                  | (_MODULE_FUNCTIONS if _file == "module" else {}))
globals().update({n: _class(n) for names in WHERE.values() for n in names.split()
                  if not n.startswith("_")})

__path__ = []  # a package to the import system: its namespaces import by name (their files')
__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
