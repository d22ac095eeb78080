"""nn.utils.init: skip_init, a module made without running its initialisation."""
import inspect

from ..module import Module


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with uninitialised parameters and buffers (torch builds
    it on the meta device, then allocates; the engine builds it, then empties it)."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs).to_empty(device=final_device)
