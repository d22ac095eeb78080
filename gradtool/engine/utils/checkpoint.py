"""torch.utils.checkpoint: activation checkpointing trades memory for a second forward pass
in backward; the values and gradients are those of the plain call, which is what the engine
runs (it keeps every activation). The graph is the plain call's, as torch's non-reentrant
checkpoint shows it."""


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check=None,
               debug=None, preserve_rng_state=True, **kwargs):
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run the modules (or a Sequential's children) one after another on `input`."""
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    for function in functions:
        input = function(input)
    return input


def get_device_states(*args):
    """The devices of the accelerator tensors among args and their RNG states: the engine's
    tensors are all on the CPU, so none (as torch's for CPU tensors)."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    """Restore the RNG states get_device_states took: of no device, here."""
    if list(devices) or list(states):
        raise AssertionError("Torch not compiled with CUDA enabled")


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
