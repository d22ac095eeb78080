"""nn.utils: gradient clipping and the parameters as one vector, as torch.nn.utils."""
import math

from ...autograd.grad_mode import no_grad
from ...autograd.free_functions import cat, stack, vector_norm
from ...autograd.tensor import Tensor
from ...autograd import creation
from . import rnn


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients in place so that their joint norm (the norm of the per-tensor
    norms) is at most max_norm; returns that norm before clipping. As torch: the scale is
    max_norm / (norm + 1e-6), capped at 1."""
    grads = _grads(parameters)
    if not grads:
        return creation.tensor(0.0)
    norm_type = float(norm_type)
    norms = [vector_norm(g, norm_type) for g in grads]
    total_norm = vector_norm(stack([n.to(norms[0].dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable this "
                           f"error and scale the gradients by the non-finite norm anyway, set "
                           f"`error_if_nonfinite=False`")
    clip_coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(clip_coef.to(g.dtype))
    return total_norm


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    for g in _grads(parameters):
        g.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of vec into the parameters' data."""
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error

from . import stateless  # noqa: E402,F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402,F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: E402,F401


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated: clip_grad_norm_ (torch warns the same)."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
