"""`import torch` in a user's file resolves to gradtool's engine while gradtool runs that
file's code, and wherever a script, notebook or tool says `with gradtool.as_torch():`.

`as_torch()` maps `torch` and the torch modules the engine mirrors (torch.nn,
torch.autograd.functional, torch.testing, ...) to the engine's own modules in sys.modules, and
a finder turns any other `torch.*` import into NotInEngineImportError. On exit sys.modules and
sys.meta_path are as they were, real torch's entries included: nothing leaks out."""
import contextlib
import importlib
import importlib.machinery
import os
import re
import sys

from ..engine import frames
from ..engine.errors import NotInEngineError, NotInEngineImportError, torch_name

# torch's module names that gradtool mirrors; those gradtool lacks (yet) are left out at run time
MIRRORED = (
    "torch", "torch.autograd", "torch.autograd.function", "torch.autograd.functional",
    "torch.autograd.graph", "torch.autograd.grad_mode", "torch.autograd.profiler",
    "torch.autograd.forward_ad", "torch.nn", "torch.nn.functional", "torch.nn.init",
    "torch.nn.parameter", "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.modules",
    *(f"torch.nn.modules.{name}" for name in (
        "module", "linear", "activation", "loss", "container", "normalization", "batchnorm",
        "sparse", "dropout", "flatten", "rnn", "transformer", "utils")),
    "torch.optim", "torch.optim.optimizer", "torch.optim.lr_scheduler", "torch.testing",
    "torch.cuda", "torch.cuda.amp", "torch.amp", "torch.jit", "torch.accelerator",
    "torch.backends", "torch.backends.cudnn", "torch.backends.mkldnn", "torch.backends.mps",
    "torch.backends.cuda",
    "torch.linalg", "torch.func", "torch.library", "torch.fft", "torch.special",
    "torch.distributed", "torch.distributions", "torch.distributions.distribution",
    "torch.distributions.normal", "torch.distributions.categorical", "torch.distributions.kl",
    "torch.utils", "torch.utils.data", "torch.utils.data.dataloader",
    "torch.utils.data.dataset", "torch.utils.data.sampler", "torch.utils.checkpoint",
)
# training infrastructure: parallel wrappers, the distributed sampler, hub, multiprocessing
MIRRORED += (
    "torch.nn.parallel", "torch.nn.parallel.distributed", "torch.nn.parallel.data_parallel",
    "torch.utils.data.distributed", "torch.utils.tensorboard", "torch.hub",
    "torch.utils.model_zoo", "torch.multiprocessing", "torch.compiler", "torch.version",
    "torch.futures", "torch.utils.hooks", "torch.nn.attention", "torch.nn.utils.spectral_norm",
    "torch.nn.utils.stateless",
)
MIRRORED += ("torch.random",)  # (fork_rng and the generator's seeding)


# torch.func's old home, mirrored too (module name -> the engine's module)
OLD_NAMES = {"functorch": "gradtool.engine.func.functorch"}


def _is_torch(name):
    return (name == "torch" or name.startswith("torch.") or name == "functorch"
            or name.startswith("functorch."))


def _gradtool_modules():
    """{torch name: gradtool module} for every mirrored module gradtool has."""
    modules = {}
    for name in MIRRORED:
        mine = "gradtool.engine" + name[len("torch"):]
        try:
            modules[name] = importlib.import_module(mine)
        except ModuleNotFoundError:  # a namespace in its parent (torch.backends.cudnn)
            parent, _, attr = mine.rpartition(".")
            try:
                modules[name] = getattr(importlib.import_module(parent), attr)
            except (ModuleNotFoundError, AttributeError):
                continue
    for name, mine in OLD_NAMES.items():
        modules[name] = importlib.import_module(mine)
    return modules


class _RefuseOtherTorchModules:
    """A meta-path finder: a torch module gradtool does not mirror is a clear error, never
    real torch's module mixed into gradtool's."""

    def find_spec(self, name, path=None, target=None):
        if _is_torch(name):
            raise NotInEngineImportError(name, name=name)
        return None


@contextlib.contextmanager
def as_torch():
    """While active, `import torch` (and torch.nn, `from torch.autograd import Function`, ...)
    gives gradtool's engine, whether or not PyTorch is installed; a torch module the engine
    lacks raises an ImportError naming it. Re-entrant. For scripts, notebooks and tools:

        with gradtool.as_torch():
            import model          # its `import torch` is gradtool's engine
    """
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


torch_is_gradtool = as_torch  # its name before it was public


_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '(gradtool(?:\.\w+)*)'")


def missing_torch_name(exc):
    """The torch name behind an error, when it is a name gradtool's engine lacks: `torch.fft`,
    `import torch.fft` or `import torch.nn.functional.x` (which Python may report as "... is
    not a package"), `x.stft()`, or `from torch.nn.functional import conv2d` (a plain
    ImportError naming gradtool's module). None for any other error."""
    if isinstance(exc, NotInEngineError):
        return exc.torch_name
    if isinstance(exc, AttributeError) and not (exc.name or "__").startswith("__"):
        from ..engine.autograd.tensor import Tensor
        if isinstance(exc.obj, Tensor):  # x.stft(...): a Tensor method gradtool lacks
            return f"torch.Tensor.{exc.name}"
    if isinstance(exc, ModuleNotFoundError) and _is_torch(exc.name or "") and _aliased():
        return exc.name
    if isinstance(exc, ImportError):
        found = _CANNOT_IMPORT.search(str(exc))
        if found:
            return f"{torch_name(found.group(2))}.{found.group(1)}"
    return None


def _aliased():
    """Whether `import torch` gives gradtool now (the finder of torch_is_gradtool is in place)."""
    return any(isinstance(f, _RefuseOtherTorchModules) for f in sys.meta_path)


_BAD_ARGUMENTS = re.compile(r"\(\) (got an unexpected keyword argument '(?P<keyword>\w+)'|"
                            r"takes .* positional arguments? but \d+ (were|was) given|"
                            r"got multiple values for argument '\w+'|"
                            r"missing \d+ required positional arguments?: .*)")


def refused_arguments(exc):
    """For a TypeError raised where the user's code calls one of gradtool's functions with
    arguments it does not take (torch.empty(size=...) once): what to say, naming the call as
    the user wrote it and the argument; None for any other error. Reads the failing call's
    position in the user's frame (Python 3.11+)."""
    if not isinstance(exc, TypeError) or exc.__traceback__ is None:
        return None
    found = _BAD_ARGUMENTS.search(str(exc))
    tb, user = exc.__traceback__, None
    while tb is not None:  # the last frame of the user's (a class may pass **kwargs on)
        if not _is_gradtools(os.path.abspath(tb.tb_frame.f_code.co_filename)):
            user = tb
        tb = tb.tb_next
    if found is None or user is None or not hasattr(user.tb_frame.f_code, "co_positions"):
        return None
    call = _failing_call(user)
    if call is None:
        return None
    text, callee = call
    if not _is_engines(getattr(callee, "__module__", None) or ""):
        return None  # (a call into gradtool's recording, a hook torch calls, is no user's call)
    what = (f"the argument {found.group('keyword')}=" if found.group("keyword")
            else f"these arguments ({found.group(1)})")
    return f"{text}() on gradtool's engine does not take {what}"


def _is_gradtools(where):
    """Whether a module name or an absolute file name is gradtool's."""
    return where == "gradtool" or where.startswith("gradtool.") or (
        os.path.isabs(where) and frames.is_gradtool(where))


def _is_engines(module_name):
    """Whether a module is one the user's code calls through `import torch` (the engine, and
    the checker it lends: torch.autograd.gradcheck), not gradtool's recording (adapters/),
    whose hooks torch calls."""
    return _is_gradtools(module_name) and not module_name.startswith("gradtool.adapters")


def _failing_call(tb):
    """(source text, object) of the function a frame's failing instruction calls, when its
    expression is a name or a chain of attributes (`torch.empty`, `x.new`); attributes are
    read statically (no property or __getattr__ of the user's objects runs)."""
    import ast
    import inspect
    import linecache
    code, frame = tb.tb_frame.f_code, tb.tb_frame
    positions = list(code.co_positions())
    index = tb.tb_lasti // 2
    if index >= len(positions) or None in positions[index]:
        return None
    first, last, start, end = positions[index]
    lines = [linecache.getline(code.co_filename, n) for n in range(first, last + 1)]
    lines[-1] = lines[-1][:end]
    lines[0] = lines[0][start:]
    try:
        node = ast.parse("".join(lines).strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    chain, func = [], node.func
    while isinstance(func, ast.Attribute):
        chain.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    scopes = (frame.f_locals, frame.f_globals, frame.f_builtins)
    obj = next((scope[func.id] for scope in scopes if func.id in scope), None)
    try:
        for attr in reversed(chain):
            obj = (getattr(obj, attr) if inspect.ismodule(obj)
                   else inspect.getattr_static(obj, attr))
    except AttributeError:
        return None
    return ast.unparse(node.func), getattr(obj, "__func__", obj)
