"""The nn modules added after the census of torch names (docs/census.md), each in the file
named for it; nn/__init__.py exports them all with one line."""
from .activation_extra import *  # noqa: F401,F403
from .activation_extra import __all__ as _activations
from .parallel import DataParallel  # noqa: F401
from .rearranging import *  # noqa: F401,F403
from .rearranging import __all__ as _rearranging
from .loss import KLDivLoss  # noqa: F401
from .normalization import BatchNorm3d, RMSNorm, SyncBatchNorm  # noqa: F401
from .conv import Conv3d, ConvTranspose3d  # noqa: F401
from .instance_norm import InstanceNorm1d, InstanceNorm2d  # noqa: F401
from .parameter_containers import ParameterDict, ParameterList  # noqa: F401
from .pooling_1d import (AdaptiveAvgPool1d, AdaptiveMaxPool1d, AvgPool1d,  # noqa: F401
                         MaxPool1d)

__all__ = _activations + ["ParameterList", "ParameterDict", "DataParallel", "InstanceNorm1d",
                          "InstanceNorm2d", "AvgPool1d", "AdaptiveAvgPool1d", "Conv3d",
                          "ConvTranspose3d", "KLDivLoss", "BatchNorm3d", "RMSNorm",
                          "SyncBatchNorm", "MaxPool1d", "AdaptiveMaxPool1d"] + _rearranging
# the pooling, padding, dropout and sampling families' long tail
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d,  # noqa: F401,E402
                      CircularPad3d, ConstantPad3d, FractionalMaxPool2d, FractionalMaxPool3d,
                      LPPool1d, LPPool2d, LPPool3d, MaxPool3d,
                      MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, ReflectionPad3d, ReplicationPad3d,
                      ZeroPad3d)
from .layers import (AlphaDropout, Dropout1d, Dropout3d,  # noqa: F401,E402
                     FeatureAlphaDropout, Softmax2d)
from .normalization import CrossMapLRN2d, LocalResponseNorm  # noqa: F401,E402
from .instance_norm import InstanceNorm3d  # noqa: F401,E402
from .rearranging import ChannelShuffle  # noqa: F401,E402

__all__ += ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "ReflectionPad3d",
            "ReplicationPad3d", "CircularPad3d", "ZeroPad3d", "ConstantPad3d", "LPPool1d",
            "LPPool2d", "LPPool3d", "Dropout1d", "Dropout3d", "AlphaDropout",
            "FeatureAlphaDropout", "Softmax2d", "LocalResponseNorm", "CrossMapLRN2d",
            "InstanceNorm3d", "ChannelShuffle", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
            "FractionalMaxPool2d", "FractionalMaxPool3d"]
