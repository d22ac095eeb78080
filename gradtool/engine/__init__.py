"""gradtool's engine: what `import torch` becomes in a file gradtool runs (autograd, nn, optim,
utils, distributions, linalg and torch's other namespaces) on numpy. It imports nothing of the
tool that stands on it, and never prints.

The namespace (gradtool/engine/namespace.py) loads on first use, so the tool can import the
engine's light modules (errors, frames) without numpy and the whole engine."""
import importlib
import os

from .errors import install_missing_modules, missing_attribute

install_missing_modules()  # `import gradtool.fft`: torch's name in the error, as for gradtool.fft

# Names of torch's that the tool provides (torch.autograd.gradcheck is gradtool's checker), lent
# by the tool as {module name: {name: loader}}, so that the engine imports nothing of it.
LENT = {}


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _is_submodule(os.path.dirname(__file__), name):  # `from gradtool.engine import frames`
        return importlib.import_module(f"{__name__}.{name}")
    namespace = importlib.import_module(f"{__name__}.namespace")
    try:
        value = getattr(namespace, name)
    except AttributeError:
        missing_attribute("torch")(name)  # raises, naming torch.<name>
    globals()[name] = value
    return value


def __dir__():
    namespace = importlib.import_module(f"{__name__}.namespace")
    return sorted(set(globals()) | {n for n in dir(namespace) if not n.startswith("_")})


def _is_submodule(folder, name):
    """Whether `name` is a module or package in `folder` (so importing it is all it takes)."""
    return (os.path.isfile(os.path.join(folder, name + ".py")) or
            os.path.isfile(os.path.join(folder, name, "__init__.py")))
