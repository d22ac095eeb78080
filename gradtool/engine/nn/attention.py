"""torch.nn.attention: which kernels scaled_dot_product_attention may use. The engine's is
always the math one, so a choice that leaves out both the math kernel and the CPU's fused
one (flash attention) gets torch's error at the call, and any other choice computes what it
would (the kernels agree to rounding)."""
import contextlib
import enum


class SDPBackend(enum.IntEnum):
    ERROR, MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, OVERRIDEABLE = range(
        -1, 5)

    def __str__(self):
        return f"SDPBackend.{self.name}"

    __repr__ = enum.Enum.__repr__


_ALL = frozenset(SDPBackend) - {SDPBackend.ERROR}
_enabled = set(_ALL)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only `backends`."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    chosen = {backends} if isinstance(backends, SDPBackend) else set(backends)
    previous = set(_enabled)
    _enabled.clear()
    _enabled.update(chosen)
    try:
        yield {}
    finally:
        _enabled.clear()
        _enabled.update(previous)


def check_cpu_kernel():
    """What torch's CPU dispatch says when no kernel it has is allowed."""
    if not _enabled & {SDPBackend.MATH, SDPBackend.FLASH_ATTENTION}:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")


__all__ = ["SDPBackend", "sdpa_kernel"]


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
