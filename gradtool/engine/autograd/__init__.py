"""gradtool.autograd: torch.autograd's API on the numpy engine."""
from . import tensor_methods  # (first: attaches the Tensor's op methods)
from . import creation, forward_ad, graph, profiler
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .tensor import Tensor
from .. import LENT
from ..errors import missing_attribute
from . import functional  # noqa: E402


class _VariableType(type):
    def __instancecheck__(cls, obj):  # isinstance(t, Variable) holds for every tensor
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableType):
    """The legacy wrapper, merged into Tensor (as in torch since 0.4): Variable(t) is a
    tensor sharing t's data, detached, with requires_grad as given."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        t = creation.tensor([]) if data is None else data.detach()
        return t.requires_grad_(requires_grad) if requires_grad else t

__all__ = ["backward", "grad", "profiler", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "Function", "FunctionCtx",
           "once_differentiable", "graph", "forward_ad",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "Tensor", "Variable"]


def __getattr__(name):
    lent = LENT.get(__name__, {}).get(name)  # gradcheck: the tool's checker
    if lent is not None:
        return lent()
    _missing_attribute(name)


_missing_attribute = missing_attribute(__name__)
