"""`import torch` in a user's file resolves to gradtool while gradtool runs that file's code.

`torch_is_gradtool()` maps `torch` and the torch modules gradtool mirrors (torch.nn,
torch.autograd.functional, torch.testing, ...) to gradtool's own modules in sys.modules, and a
finder turns any other `torch.*` import into NotInEngineImportError. On exit sys.modules and
sys.meta_path are as they were, real torch's entries included: nothing leaks out."""
import contextlib
import importlib
import importlib.machinery
import re
import sys

from .errors import NotInEngineError, NotInEngineImportError, torch_name

# torch's module names that gradtool mirrors; those gradtool lacks (yet) are left out at run time
MIRRORED = (
    "torch", "torch.autograd", "torch.autograd.function", "torch.autograd.functional",
    "torch.autograd.graph", "torch.autograd.grad_mode", "torch.autograd.profiler",
    "torch.autograd.forward_ad", "torch.nn", "torch.nn.functional", "torch.nn.init",
    "torch.nn.parameter", "torch.optim", "torch.optim.optimizer", "torch.testing", "torch.cuda",
    "torch.linalg",
)


def _is_torch(name):
    return name == "torch" or name.startswith("torch.")


def _gradtool_modules():
    """{torch name: gradtool module} for every mirrored module gradtool has."""
    modules = {}
    for name in MIRRORED:
        try:
            modules[name] = importlib.import_module("gradtool" + name[len("torch"):])
        except ModuleNotFoundError:
            continue
    return modules


class _RefuseOtherTorchModules:
    """A meta-path finder: a torch module gradtool does not mirror is a clear error, never
    real torch's module mixed into gradtool's."""

    def find_spec(self, name, path=None, target=None):
        if _is_torch(name):
            raise NotInEngineImportError(name)
        return None


@contextlib.contextmanager
def torch_is_gradtool():
    """While active, `import torch` (and torch.nn, `from torch.autograd import Function`, ...)
    gives gradtool, whether or not PyTorch is installed. Re-entrant."""
    saved = {name: module for name, module in sys.modules.items() if _is_torch(name)}
    finder = _RefuseOtherTorchModules()
    for name in saved:
        del sys.modules[name]
    sys.modules.update(_gradtool_modules())
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if _is_torch(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '(gradtool(?:\.\w+)*)'")


def missing_torch_name(exc):
    """The torch name behind an error, when it is a name gradtool's engine lacks: `torch.fft`,
    `import torch.fft`, `x.stft()`, or `from torch.nn.functional import conv2d` (which Python
    reports as a plain ImportError that names gradtool's module). None for any other error."""
    if isinstance(exc, NotInEngineError):
        return exc.torch_name
    if isinstance(exc, AttributeError) and not (exc.name or "_").startswith("_"):
        from .autograd.tensor import Tensor
        if isinstance(exc.obj, Tensor):  # x.stft(...): a Tensor method gradtool lacks
            return f"torch.Tensor.{exc.name}"
    if isinstance(exc, ImportError):
        found = _CANNOT_IMPORT.search(str(exc))
        if found:
            return f"{torch_name(found.group(2))}.{found.group(1)}"
    return None


def lacks_message(name):
    """What the CLI says about a torch name gradtool's engine lacks: run the file on PyTorch
    itself (--engine torch) when PyTorch is installed."""
    from .engines import torch_installed
    if torch_installed():
        return (f"gradtool's engine does not provide {name}; run the file on PyTorch itself "
                f"with --engine torch")
    return (f"gradtool's engine does not provide {name}; this file needs PyTorch itself "
            f"(--engine torch), which is not installed here")
