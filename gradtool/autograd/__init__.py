"""gradtool.autograd: torch.autograd's API on the numpy engine."""
from . import forward_ad, graph, profiler
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from .tensor import Tensor
from . import functional  # noqa: E402

__all__ = ["backward", "grad", "profiler", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "Function", "FunctionCtx",
           "once_differentiable", "graph", "forward_ad",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "Tensor"]


def __getattr__(name):
    # gradcheck lives in gradtool.checks, which stands on this package: bound on first use
    if name in ("gradcheck", "gradgradcheck", "GradcheckError"):
        from .. import checks
        return getattr(checks, name)
    raise AttributeError(f"module 'gradtool.autograd' has no attribute {name!r}")
