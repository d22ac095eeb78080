"""gradtool: a gradient checker and autograd-graph inspector, on a bundled numpy autograd
engine with torch.autograd's names and semantics (`import gradtool as torch` works for the
features gradtool has).

Two products, dependencies pointing one way (tests/architecture checks it):
  frontends (cli, notebook, testing, pytest plugin) -> report -> checks -> capture (the user's
  file, its targets, the graph snapshot) -> adapters (one seam per engine) -> engine.
gradtool.engine is what `import torch` becomes, and imports nothing of the tool. This module
serves the tool's names and the engine's namespace lazily, so `gradtool --help` starts fast."""
import importlib
import importlib.util
import sys

from . import engine
from .engine import _is_submodule

__version__ = "0.1.0"


def _from_checks(name):
    return lambda: getattr(importlib.import_module(f"{__name__}.checks"), name)


# torch.autograd.gradcheck and gradgradcheck are the tool's checker, lent to the engine
engine.LENT[f"{__name__}.engine.autograd"] = {
    name: _from_checks(name) for name in ("gradcheck", "gradgradcheck", "GradcheckError")}

# The tool's names beside the engine's: name -> (module, attribute; None for the module itself)
_TOOL_NAMES = {
    "check": ("gradtool.frontends.notebook", "check"),
    "draw": ("gradtool.frontends.notebook", "draw"),
    "inspect": ("gradtool.frontends.notebook", "inspect"),
    "example": ("gradtool.capture.loader", "example"),
    "reference": ("gradtool.checks.reference", "declare"),
    "as_torch": ("gradtool.adapters.torch_alias", "as_torch"),
    "testing": ("gradtool.frontends.testing", None),
    # input specs; gradtool.no_grad is also torch's no_grad (a subclass of it)
    **{name: ("gradtool.capture.specs", name)
       for name in ("constant", "integers", "no_grad", "positive", "surrogate", "uniform")},
}

# Import paths from before the engine and the tool had packages of their own: scripts,
# notebooks, pytest configurations and saved files that name them import the very same modules.
_MOVED = {**{name: f"engine.{name}" for name in (
    "autograd", "nn", "optim", "utils", "distributions", "linalg", "cuda", "amp", "jit",
    "backends", "accelerator", "legacy", "serialization", "errors", "library", "fft",
    "special")},
    "testing": "frontends.testing", "pytest_plugin": "frontends.pytest_plugin",
    "cli": "frontends.cli", "torch_alias": "adapters.torch_alias"}


def _moved(name):
    """The module an old import path names now (gradtool.nn.functional ->
    gradtool.engine.nn.functional), or None."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != __name__ or parts[1] not in _MOVED:
        return None
    return ".".join([__name__, _MOVED[parts[1]], *parts[2:]])


class _MovedModules:
    """Imports an old path as the module it moved to (one module object under both names).
    A meta-path finder and loader by its methods alone: importlib.abc would import
    importlib.resources (pathlib, tempfile, shutil) into every start of the command."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if _moved(name) else None

    def create_module(self, spec):
        return importlib.import_module(_moved(spec.name))

    def exec_module(self, module):
        pass  # already executed under its own name


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModules())


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _TOOL_NAMES:
        module, attribute = _TOOL_NAMES[name]
        value = importlib.import_module(module)
        value = getattr(value, attribute) if attribute else value
    elif _is_submodule(__path__[0], name):  # `from gradtool import checks`
        return importlib.import_module(f"{__name__}.{name}")
    else:
        value = getattr(importlib.import_module(f"{__name__}.engine"), name)
    globals()[name] = value
    return value


def __dir__():
    engine = importlib.import_module(f"{__name__}.engine")
    return sorted(set(globals()) | set(_TOOL_NAMES) | set(dir(engine)))
