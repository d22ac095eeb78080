"""Errors the library raises. Only the CLI prints; everything below it raises these."""


class GradtoolError(Exception):
    """Base class for gradtool's own errors."""


class NotInEngineError(GradtoolError):
    """A torch name that gradtool's engine does not provide (torch.fft, nn.Conv2d, ...).
    `torch_name` is the name as torch spells it."""

    def __init__(self, torch_name):
        super().__init__(f"gradtool's engine does not provide {torch_name}")
        self.torch_name = torch_name


class NotInEngineAttributeError(NotInEngineError, AttributeError):
    """`torch.fft`: an AttributeError still, so hasattr() and getattr(..., default) work."""


class NotInEngineImportError(NotInEngineError, ModuleNotFoundError):
    """`import torch.fft`: a ModuleNotFoundError still, so `except ImportError` works."""


def torch_name(module_name):
    """'gradtool.engine.nn.functional' (or 'gradtool.nn.functional', its old path) ->
    'torch.nn.functional': the engine's modules mirror torch's."""
    for prefix in ("gradtool.engine", "gradtool"):
        if module_name == prefix or module_name.startswith(prefix + "."):
            return "torch" + module_name[len(prefix):]
    return module_name


def missing_attribute(module_name):
    """A module-level __getattr__ for a gradtool module that mirrors a torch module: a public
    name it lacks raises NotInEngineAttributeError naming torch's spelling of it."""
    def __getattr__(name):
        if name.startswith("__"):  # dunders: Python's own lookups probe them
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise NotInEngineAttributeError(f"{torch_name(module_name)}.{name}")
    return __getattr__
