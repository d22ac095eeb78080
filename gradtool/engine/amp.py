"""gradtool.amp: mixed precision is for accelerators, and gradtool has none. The decorators
of custom Functions are no-ops, autocast for a missing accelerator changes nothing (torch
warns and disables it too), and GradScaler is torch's disabled scaler."""
import contextlib
import warnings

from .errors import NotInEngineError


def custom_fwd(fwd=None, *, device_type=None, cast_inputs=None):
    """@custom_fwd and @custom_fwd(device_type=..., cast_inputs=...): forward as it is."""
    return fwd if fwd is not None else (lambda fn: fn)


def custom_bwd(bwd=None, *, device_type=None):
    """@custom_bwd and @custom_bwd(device_type=...): backward as it is."""
    return bwd if bwd is not None else (lambda fn: fn)


class autocast(contextlib.ContextDecorator):
    """Nothing to cast on a device gradtool lacks. On the CPU torch casts per op (matmul,
    linear, conv to bfloat16; losses, norms and linalg to float32): the engine has bfloat16
    tensors but not those lists, so a clear error instead of float32 results."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        if enabled and device_type == "cpu":
            raise NotInEngineError("torch.autocast on the CPU (its per-op casts; a model cast "
                                   "with .bfloat16() runs)")
        if enabled:
            warnings.warn(f"User provided device_type of '{device_type}', but CUDA is not "
                          f"available. Disabling", UserWarning, stacklevel=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class GradScaler:
    """torch's GradScaler with no CUDA: disabled, so scale() returns the loss as it is and
    step() is optimizer.step()."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._enabled = False

    def is_enabled(self):
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        pass

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass


def is_autocast_available(device_type):
    return False


# ---- the autocast state's queries: never enabled (on the CPU the engine refuses it, and
# there is no other device), the dtypes torch's defaults
def is_autocast_enabled(device_type=None):
    return False


def get_autocast_dtype(device_type):
    from .autograd import dtypes
    return dtypes.bfloat16 if device_type == "cpu" else dtypes.float16


def get_autocast_gpu_dtype():
    warnings.warn("torch.get_autocast_gpu_dtype() is deprecated. Please use "
                  "torch.get_autocast_dtype('cuda') instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    warnings.warn("torch.get_autocast_cpu_dtype() is deprecated. Please use "
                  "torch.get_autocast_dtype('cpu') instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cpu")


from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
