"""Import a user's file and find what gradtool should run in it (contract §3).

The file is executed as Python code, the way pytest executes test files. Targets, reported in
source order:
  1. functions decorated @gradtool.example(*args): one target per example;
  2. autograd.Function subclasses defined in the file, applied to generated inputs;
  3. other public functions defined in the file that take positional parameters without
     defaults, each such parameter a generated tensor (not pytest's test* functions).
Generated inputs are float64 `randn` tensors that require grad, seeded, shaped by --shape.
Everything that goes wrong in the user's code becomes a UserCodeError naming its file and line.
"""
import dataclasses
import importlib.util
import inspect
import os
import sys
import traceback

from .errors import GradtoolError
from .torch_alias import lacks_message, missing_torch_name, torch_is_gradtool

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class UserCodeError(GradtoolError):
    """The user's file or target failed; `str()` is a short paragraph, `details` the user's
    frames of the traceback."""

    def __init__(self, message, details="", location=None):
        super().__init__(message)
        self.details = details
        self.location = location  # (filename, lineno) in the user's code, if known


def example(*args, **kwargs):
    """Mark a function as a gradtool target, called with these arguments. Each argument is a
    Tensor, a number, or a shape tuple (which becomes a seeded float64 randn that requires
    grad). Stack several to check several cases; they run in source order."""
    def decorate(fn):
        # decorators apply bottom-up: prepend so the topmost example comes first
        fn.__dict__.setdefault("__gradtool_examples__", []).insert(0, (args, kwargs))
        return fn
    return decorate


@dataclasses.dataclass
class Target:
    """One thing to run: a function with its arguments, or a custom Function."""

    name: str                 # as shown: "f", "f[1]", "MyFunction"
    kind: str                 # "example" | "function" | "Function"
    obj: object
    arg_specs: tuple          # Tensors, numbers, or shape tuples (GENERATED: from --shape)
    kwarg_specs: dict
    param_names: list
    filename: str
    lineno: int

    def call(self, *args, **kwargs):
        fn = self.obj.apply if self.kind == "Function" else self.obj
        return fn(*args, **kwargs)


GENERATED = object()  # an argument gradtool generates from --shape


def parse_shape(text):
    """'3', '2,3' or '2x3' -> a shape tuple. Parsed, never evaluated."""
    parts = [p for p in text.replace("x", ",").replace(" ", "").split(",") if p != ""]
    if not parts or not all(p.isdigit() for p in parts):
        raise GradtoolError(f"--shape must be sizes separated by commas, like 3 or 2,3 "
                            f"(got {text!r})")
    return tuple(int(p) for p in parts)


def split_spec(spec):
    """'path/file.py::name' -> (path, name or None)."""
    path, sep, name = spec.partition("::")
    return path, (name or None) if sep else None


def load(spec):
    """Import the file named by `spec` (FILE or FILE::NAME) and return its targets."""
    path, wanted = split_spec(spec)
    module = import_user_file(path)
    targets = find_targets(module, os.path.abspath(path))
    if not targets:
        raise UserCodeError(
            f"No targets found in {path}: define a function decorated with "
            f"@gradtool.example(...), an autograd.Function subclass, or a public function "
            f"whose parameters are tensors.")
    if wanted is not None:
        chosen = [t for t in targets if t.name == wanted or t.name.split("[")[0] == wanted]
        if not chosen:
            names = ", ".join(t.name for t in targets)
            raise UserCodeError(f"No target named {wanted!r} in {path}. Targets: {names}.")
        targets = chosen
    return targets


def import_user_file(path):
    if not os.path.exists(path):
        raise UserCodeError(f"No such file: {path}")
    if not path.endswith(".py") or os.path.isdir(path):
        raise UserCodeError(f"Not a Python file: {path}")
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "gradtool_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with torch_is_gradtool():  # the file's `import torch` gives gradtool
            spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        where = f"{e.filename}:{e.lineno}"
        pointer = ""
        if e.text:
            pointer = "\n    " + e.text.rstrip("\n") + "\n    " + " " * max((e.offset or 1) - 1, 0) + "^"
        raise UserCodeError(f"{os.path.basename(e.filename or path)} has a syntax error at "
                            f"{where}: {e.msg}{pointer}",
                            location=(e.filename, e.lineno)) from None
    except BaseException as e:  # noqa: BLE001 - anything the user's module does on import
        sys.modules.pop(name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise user_error(e, f"importing {os.path.basename(path)}") from None
    return module


def user_frames(tb):
    """The traceback's frames that belong to the user's code (not gradtool, not importlib)."""
    frames = []
    for frame in traceback.extract_tb(tb):
        filename = os.path.abspath(frame.filename) if not frame.filename.startswith("<") else ""
        if not filename or filename.startswith(_PACKAGE_DIR + os.sep):
            continue
        frames.append(frame)
    return frames


def user_error(exc, doing):
    """A UserCodeError for an exception raised while `doing` something with user code."""
    frames = user_frames(exc.__traceback__)
    location = (frames[-1].filename, frames[-1].lineno) if frames else None
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    message = f"{doing} raised {type(exc).__name__}{where}: {exc}"
    missing = missing_torch_name(exc)
    if missing is not None:  # a torch feature gradtool lacks: say so, not "AttributeError"
        message = f"{doing} failed{where}: {lacks_message(missing)}"
    details = "".join(traceback.format_list(frames)) if frames else ""
    return UserCodeError(message, details, location)


def find_targets(module, path):
    targets = []
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        source = _defined_here(obj, path)
        if source is None:
            continue
        lineno = source
        examples = getattr(obj, "__gradtool_examples__", None) if callable(obj) else None
        if examples is not None:
            params = _param_names(obj)
            for i, (args, kwargs) in enumerate(examples):
                label = f"{name}[{i}]" if len(examples) > 1 else name
                targets.append(Target(label, "example", obj, tuple(args), dict(kwargs), params,
                                      path, lineno))
        elif inspect.isclass(obj) and _is_function_class(obj):
            params = _forward_params(obj)
            targets.append(Target(name, "Function", obj, tuple(GENERATED for _ in params), {},
                                  params, path, lineno))
        elif inspect.isfunction(obj):
            params = [p.name for p in inspect.signature(obj).parameters.values()
                      if p.default is inspect.Parameter.empty
                      and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if not params:  # nothing to generate inputs for (main(), helpers, ...)
                continue
            if name.startswith("test"):  # pytest's test function: its parameters are fixtures
                continue
            targets.append(Target(name, "function", obj, tuple(GENERATED for _ in params), {},
                                  params, path, lineno))
    targets.sort(key=lambda t: t.lineno)  # source order (a function's examples keep theirs)
    return targets


def _defined_here(obj, path):
    """The line where obj is defined if it is a function or class of this very file."""
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return None
    try:
        source_file = inspect.getsourcefile(obj)
        lines = inspect.getsourcelines(obj)
    except (TypeError, OSError):
        return None
    if source_file is None or os.path.abspath(source_file) != path:
        return None
    return lines[1]


def _is_function_class(cls):
    from .autograd.function import Function
    return issubclass(cls, Function) and cls is not Function


def _forward_params(cls):
    from .autograd.function import Function
    params = list(inspect.signature(cls.forward).parameters.values())
    if cls.setup_context is Function.setup_context:
        params = params[1:]  # forward(ctx, ...)
    return [p.name for p in params
            if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                   p.POSITIONAL_OR_KEYWORD)]


def _param_names(fn):
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def make_inputs(target, seed, shape):
    """The target's arguments: tensors copied fresh, shapes and generated ones drawn from a
    generator seeded by `seed` (same seed, same inputs)."""
    import numpy as np

    import gradtool as gt
    rng = np.random.default_rng(seed)

    def build(spec):
        if spec is GENERATED:
            spec = shape
        if isinstance(spec, gt.Tensor):
            return spec.detach().clone().requires_grad_(spec.requires_grad)
        if isinstance(spec, tuple) and all(isinstance(n, int) for n in spec):
            return gt.tensor(rng.standard_normal(spec), dtype=gt.float64, requires_grad=True)
        return spec
    args = [build(a) for a in target.arg_specs]
    kwargs = {k: build(v) for k, v in target.kwarg_specs.items()}
    return args, kwargs
