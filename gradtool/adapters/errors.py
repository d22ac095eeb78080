"""What an engine adapter raises when the engine cannot do what was asked."""
from ..engine.errors import GradtoolError


class EngineUnavailable(GradtoolError):
    """--engine torch without PyTorch installed."""


class NoDevice(GradtoolError):
    """--device names a device this engine cannot place tensors on."""


class NoDtype(GradtoolError):
    """A dtype this engine does not have (bfloat16 on gradtool's)."""


class NoValues(GradtoolError):
    """A tensor holds no values to read (torch's meta device)."""
