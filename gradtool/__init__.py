"""gradtool: a gradient checker and autograd-graph inspector, on a bundled numpy autograd
engine with torch.autograd's names and semantics (`import gradtool as torch` works for the
features gradtool has)."""
import importlib

__version__ = "0.1.0"


def __getattr__(name):
    # The engine (and numpy) load on first use of the namespace, so `gradtool --help` and
    # the CLI's start stay fast; gradtool/api.py holds the names.
    if name.startswith("__") or name == "api":
        raise AttributeError(f"module 'gradtool' has no attribute {name!r}")
    api = importlib.import_module("gradtool.api")
    try:
        value = getattr(api, name)
    except AttributeError:
        from .errors import missing_attribute
        missing_attribute(__name__)(name)  # raises, naming torch.<name>
    globals()[name] = value
    return value


def __dir__():
    api = importlib.import_module("gradtool.api")
    return sorted(set(globals()) | {n for n in dir(api) if not n.startswith("_")})
