"""The seam between gradtool's checks and reports and the autograd engine they examine.

The checks (gradcheck, hazards), the snapshot of a graph and the loader reach the engine only
through an `Engine`: to numpy and from numpy, grad and backward, grad modes, forward mode, the
Function base class and the attributes of graph nodes. `adapters/gradtool.py` (the bundled
engine) and `adapters/torch.py` (real PyTorch, imported only when asked for) are its two
implementations, so nothing else knows which engine runs.

`current()` is the engine the CLI was asked for (`--engine`); `of(values)` is the engine of
some tensors (torch tensors given to gradtool.gradcheck are checked on torch)."""
import contextlib
import importlib.machinery
import inspect
import sys

from ..engine.errors import GradtoolError
from .errors import EngineUnavailable, NoDevice, NoDtype, NoValues  # noqa: F401  (raised here)
from ..engine.frames import is_gradtool

NAMES = ("gradtool", "torch")
_current = []  # a stack: use() nests


def torch_installed():
    """Whether real PyTorch can be imported (without importing it)."""
    if _imported_torch() is not None:
        return True
    # on sys.path itself: while a user's file runs, sys.modules["torch"] is gradtool
    return importlib.machinery.PathFinder.find_spec("torch") is not None


def _imported_torch():
    """Real torch if it is imported (not gradtool standing in for it while a file runs)."""
    module = sys.modules.get("torch")
    if module is None or is_gradtool(getattr(module, "__file__", None) or "<none>"):
        return None
    return module


def check_available(name):
    """Raise EngineUnavailable, saying what to install, when the engine `name` cannot run
    here (without importing it: a command checks before any work is done)."""
    if name == "torch" and not torch_installed():
        raise EngineUnavailable(
            "PyTorch is not installed here, and --engine torch and --against torch need "
            "it (pip install torch); gradtool's own engine runs without it")


def get(name):
    """The engine called `name` ("gradtool" or "torch")."""
    if name == "gradtool":
        from . import gradtool as engine
        return engine
    if name == "torch":
        check_available(name)
        from . import torch as engine
        return engine
    raise GradtoolError(f"no engine named {name!r}: choose one of {', '.join(NAMES)}")


def current():
    """The engine in use: the innermost use(...), else gradtool's."""
    return _current[-1] if _current else get("gradtool")


@contextlib.contextmanager
def use(engine):
    """Run the enclosed code (loading a file, checking its targets) on `engine`."""
    _current.append(get(engine) if isinstance(engine, str) else engine)
    try:
        yield _current[-1]
    finally:
        _current.pop()


def of(values):
    """The engine whose tensors these are: torch's if any is a torch tensor (torch is then
    already imported), else the current one."""
    torch = _imported_torch()
    if torch is not None:
        stack = list(values) if isinstance(values, (list, tuple)) else [values]
        while stack:
            value = stack.pop()
            if isinstance(value, (list, tuple)):
                stack.extend(value)
            elif isinstance(value, torch.Tensor):
                return get("torch")
    return current()


def dtype_name(tensor):
    """"float64" for a tensor of either engine (what reports print)."""
    return of(tensor).dtype_name(tensor)


def device_name(tensor):
    """"cuda:0", "cpu", ... for a tensor of either engine (what reports print)."""
    return of(tensor).device_name(tensor)


def function_base(cls):
    """The autograd.Function base class `cls` derives from (gradtool's or torch's), or None."""
    if not isinstance(cls, type):
        return None
    bases = [get("gradtool").Function]
    if _imported_torch() is not None:
        bases.append(get("torch").Function)
    return next((base for base in bases if issubclass(cls, base) and cls is not base), None)


# ---- custom ops (torch.library.custom_op): the engines' CustomOpDef keep the same private
# attributes (gradtool's copies torch's names), read here and nowhere else
def is_custom_op(obj):
    """Whether obj is what torch.library.custom_op (or triton_op) returns, on either engine."""
    return type(obj).__name__ == "CustomOpDef" and hasattr(obj, "_init_fn") and \
        hasattr(obj, "_qualname")


def op_kernel(op):
    """The user's function a custom op was made from: torch's triton_op hands custom_op a
    function of its own that calls the user's (held in its closure)."""
    fn = inspect.unwrap(op._init_fn)
    inner = [cell.cell_contents for cell in fn.__closure__ or ()
             if inspect.isfunction(cell.cell_contents)]
    return inner[0] if fn.__module__.startswith("torch.") and len(inner) == 1 else fn


def op_functions(op):
    """The functions a custom op was made of and registered with: its kernel(s), fake
    kernel, setup_context and backward."""
    fns = [op._init_fn, op_kernel(op), getattr(op, "_abstract_fn", None), getattr(op, "_backward_fn", None),
           getattr(op, "_setup_context_fn", None), *getattr(op, "_backend_fns", {}).values()]
    found = []
    for fn in fns:
        while fn is not None and fn not in found:  # torch wraps some of them
            found.append(fn)
            fn = getattr(fn, "__wrapped__", None)
    return [fn for fn in found if fn is not None]


def mutated_arguments(op):
    """The names of the arguments a custom op's schema marks mutable (Tensor(a!))."""
    schema = op._opoverload._schema
    return [a.name for a in schema.arguments
            if getattr(a, "is_mutable", None) or (getattr(a, "alias_info", None) is not None
                                                 and a.alias_info.is_write)]


def custom_op_of(cls):
    """The custom op whose generated autograd.Function `cls` is (both engines name it
    GeneratedBackwardFor_<ns>_<op>_default; gradtool's keeps the op, torch's registry
    OPDEFS has it), or None."""
    op = getattr(cls, "_custom_op", None)
    name = getattr(cls, "__name__", "")
    if op is not None or not name.startswith("GeneratedBackwardFor_"):
        return op
    registry = getattr(sys.modules.get("torch._library.custom_ops"), "OPDEFS", {})
    return next((op for op in list(registry.values())
                 if f"GeneratedBackwardFor_{op._namespace}_{op._name}_default" == name), None)
