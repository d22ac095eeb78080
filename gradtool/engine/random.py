"""torch.random: the engine's generator's seeding and state (the torch-level functions), and
fork_rng, which restores the generator's state when its block ends."""
import contextlib

from .autograd.creation import get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .errors import missing_attribute

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """The engine's generator as it was before the block, after it (enabled=False: left
    alone). As on torch's CPU build there are no CUDA devices: None or [] fork the CPU's
    generator only, and naming a device is torch's refusal."""
    if device_type == "meta" or not enabled:
        yield
        return
    if devices is not None and list(devices):
        raise AssertionError("Torch not compiled with CUDA enabled")
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


__getattr__ = missing_attribute(__name__)  # a torch.random name gradtool lacks: a clear error
