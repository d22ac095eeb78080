"""Errors the library raises. Only the CLI prints; everything below it raises these."""
import sys


class GradtoolError(Exception):
    """Base class for gradtool's own errors."""


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError, the name it prints): a matrix the
    factorisation or inversion cannot go through (singular, not positive-definite). A
    RuntimeError, so code catching torch's RuntimeError catches it."""


class NotInEngineError(GradtoolError):
    """A torch name that gradtool's engine does not provide (torch.fft, nn.Conv2d, ...).
    `torch_name` is the name as torch spells it."""

    def __init__(self, torch_name):
        super().__init__(not_provided(torch_name))
        self.torch_name = torch_name


def not_provided(torch_name, advice="run the code on PyTorch itself for it (the gradtool "
                                    "command's --engine torch)"):
    """The one sentence said of a torch feature gradtool's engine lacks, however it is
    reached: the exception's own words under `import gradtool as torch`; in the gradtool
    command, with the advice that fits the run (capture/loader.py's lacks_message), after
    the user's file and line."""
    return f"gradtool's engine does not provide {torch_name} (yet); {advice}"


class NotInEngineAttributeError(NotInEngineError, AttributeError):
    """`torch.fft`: an AttributeError still, so hasattr() and getattr(..., default) work."""

    def __init__(self, torch_name, name=None, obj=None):
        super().__init__(torch_name)
        self.name, self.obj = name, obj


class NotInEngineImportError(NotInEngineError, ModuleNotFoundError):
    """`import torch.fft`: a ModuleNotFoundError still, so `except ImportError` works.
    `name`: the module Python looked for, as ModuleNotFoundError's."""

    def __init__(self, torch_name, name=None):
        super().__init__(torch_name)
        self.name = name


def torch_name(module_name):
    """'gradtool.engine.nn.functional' (or 'gradtool.nn.functional', its old path) ->
    'torch.nn.functional': the engine's modules mirror torch's."""
    for prefix in ("gradtool.engine", "gradtool"):
        if module_name == prefix or module_name.startswith(prefix + "."):
            return "torch" + module_name[len(prefix):]
    return module_name


def missing_attribute(module_name):
    """A module-level __getattr__ for a gradtool module that mirrors a torch module: a public
    name it lacks raises NotInEngineAttributeError naming torch's spelling of it, or, asked
    for by `from module import name`, NotInEngineImportError (Python would replace an
    AttributeError there by its own ImportError naming gradtool's module path)."""
    def __getattr__(name):
        if name.startswith("__"):  # dunders: Python's own lookups probe them
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        missing = f"{torch_name(module_name)}.{name}"
        if _asked_by_from_import():
            raise NotInEngineImportError(missing, name=f"{module_name}.{name}")
        raise NotInEngineAttributeError(missing, name=name)
    return __getattr__


def _asked_by_from_import():
    """Whether the attribute lookup under way is a `from module import name` statement's:
    the frame that asked (past the modules' own __getattr__ chain: gradtool's package asks
    the engine's) is running IMPORT_FROM. Only on the missing-name path, never per op."""
    import dis
    from .frames import is_gradtool
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name == "__getattr__" and \
            is_gradtool(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None or frame.f_lasti < 0:
        return False
    return frame.f_code.co_code[frame.f_lasti] == dis.opmap["IMPORT_FROM"]


class MissingModules:
    """A meta-path finder, last on sys.meta_path: a module under gradtool's engine (or
    gradtool.X, gradtool's top level being torch's) that does not exist is a torch module
    the engine lacks (`import gradtool.fft`, `from gradtool.utils.checkpoint import ...`):
    NotInEngineImportError naming torch's module, a ModuleNotFoundError still, named as
    Python names it (so `from gradtool import fft` reaches the name's own message)."""

    def find_spec(self, name, path=None, target=None):
        parent, _, _ = name.rpartition(".")
        if name.startswith("gradtool.engine.") or parent == "gradtool":
            raise NotInEngineImportError(torch_name(name), name=name)
        return None


def install_missing_modules():
    if not any(isinstance(finder, MissingModules) for finder in sys.meta_path):
        sys.meta_path.append(MissingModules())


def namespace_module(name, values):
    """A module of torch's layout that holds some of gradtool's names (torch.nn.modules.loss,
    torch.distributions.normal): importable by its name, a name it lacks a clear error."""
    import types
    module = types.ModuleType(name)
    vars(module).update(values)
    module.__getattr__ = missing_attribute(name)
    sys.modules[name] = module
    return module
