"""Import a user's file and find what gradtool should run in it: its targets.

The file is executed as Python code, the way pytest executes test files. Targets, reported in
source order:
  1. functions decorated @gradtool.example(*args): one target per example;
  2. autograd.Function subclasses defined in the file, applied to generated inputs, and
     custom ops (torch.library.custom_op), named by their Python name or their "ns::op" (the
     functions registered to an op, its setup_context, backward and fake kernel, are the
     op's, not targets of their own);
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
import typing

import gradtool.adapters as engines
from ..engine.errors import GradtoolError, not_provided
from ..engine.frames import (is_gradtool, is_library, location, raised_in_recording,
                             user_frames)
from ..adapters.torch_alias import missing_torch_name, refused_arguments

class UserCodeError(GradtoolError):
    """The user's file or target failed; `str()` is a short paragraph, `details` the user's
    frames of the traceback."""

    details_title = "Traceback (your code only)"  # what `details` is, as printed above it

    def __init__(self, message, details="", location=None):
        super().__init__(message)
        self.details = details
        self.location = location  # (filename, lineno) in the user's code, if known


class NoTargets(UserCodeError):
    """The file ran and defines nothing gradtool can check (in a folder searched for
    targets, such a file is skipped)."""


# What gradtool says wherever its own code failed (here, and the CLI's last resort)
BUG_PLEA = ("This is a bug in gradtool, not in your code; please report it with the file, the "
            "command you ran and gradtool's traceback")


class GradtoolBug(UserCodeError):
    """gradtool's own recording failed while the user's code ran: reported in the target's
    place as gradtool's bug, with a plea to report it, never as the user's error."""

    details_title = "gradtool's traceback, to report"

    def __init__(self, target, exc):
        where = next((f for f in reversed(traceback.extract_tb(exc.__traceback__))
                      if is_gradtool(f.filename)), None)
        at = f" at {location(where.filename, where.lineno, relative=False)}" if where else ""
        super().__init__(
            f"target {target.name} ({location(target.filename, target.lineno)}): gradtool's "
            f"recording of the run failed{at}: {describe_exception(exc)}. {BUG_PLEA}.",
            "".join(traceback.format_exception(exc)), (target.filename, target.lineno))


def example(*args, **kwargs):
    """Mark a function as a gradtool target, called with these arguments. Each argument is a
    Tensor, a number, or a shape tuple (which becomes a seeded float64 randn that requires
    grad). Stack several to check several cases; they run in source order."""
    _check_example_args(args, kwargs)

    def decorate(fn):
        # decorators apply bottom-up: prepend so the topmost example comes first; a class's
        # own list (a subclass does not inherit its base's examples)
        if "__gradtool_examples__" not in vars(fn):
            setattr(fn, "__gradtool_examples__", [])
        fn.__gradtool_examples__.insert(0, (args, kwargs))
        return fn
    return decorate


def _check_example_args(args, kwargs):
    """A shape tuple must hold sizes >= 0: say so where @example is written."""
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, tuple) and value and all(isinstance(n, int) for n in value) \
                and any(n < 0 for n in value):
            raise ValueError(f"@gradtool.example: the shape {value} has a negative size; a "
                             f"shape tuple holds sizes >= 0, like (2, 3)")


@dataclasses.dataclass
class Target:
    """One thing to run: a function with its arguments, or a custom Function."""

    name: str                 # as shown: "f", "f[1]", "MyFunction"
    kind: str                 # "example" | "function" | "Function" | "custom_op"
    obj: object
    arg_specs: tuple          # Tensors, numbers, or shape tuples (GENERATED: from --shape)
    kwarg_specs: dict
    param_names: list
    filename: str
    lineno: int
    aliases: tuple = ()       # other names it answers to in FILE::NAME (a custom op's ns::op)

    def call(self, *args, **kwargs):
        fn = self.obj.apply if self.kind == "Function" else self.obj
        return fn(*args, **kwargs)

    def argument_names(self, n):
        """The names of its first n positional arguments: its parameters', then arg<i>."""
        return list(self.param_names) + [f"arg{i}" for i in range(len(self.param_names), n)]


GENERATED = object()  # an argument gradtool generates from --shape
MUTATED = object()    # generated as GENERATED is, without requires_grad: a custom op that mutates


MAX_GENERATED_ELEMENTS = 10_000_000  # 80 MB of float64 per generated input


@dataclasses.dataclass(frozen=True)
class Shapes:
    """--shape: the shape of generated inputs, by default and per parameter name. Iterates as
    the default shape (what one --shape gave before names were allowed)."""
    default: tuple = (3,)
    named: tuple = ()         # ((parameter name, shape), ...)

    def of(self, name):
        return dict(self.named).get(name, self.default)

    def __iter__(self):
        return iter(self.default)

    def __len__(self):
        return len(self.default)

    def option(self):
        """The --shape options that give these shapes, as a user types them (the default
        shape goes without saying: the CLI cannot tell it from a `--shape 3` typed)."""
        return " ".join([f"--shape {_sizes(self.default)}"] * (self.default != (3,)) +
                        [f"--shape {n}={_sizes(s)}" for n, s in self.named])

    def origin(self):
        """Where the shapes came from, as a message says it."""
        implied = "the default shape 3" if self.default == (3,) else ""
        return " and ".join(part for part in (self.option(), implied) if part)


def _sizes(shape):
    return ",".join(map(str, shape))


def check_shapes(targets, shapes, path):
    """A --shape NAME=SIZES must name a parameter of a target: a name that none has (a typo)
    would leave every input at the default shape without a word."""
    params = {name for t in targets for name in t.param_names}
    unknown = [name for name, _ in getattr(shapes, "named", ()) if name not in params]
    if unknown:
        listing = "; ".join(f"{t.name}({', '.join(t.param_names)})" for t in targets)
        whose = "the target" if len(targets) == 1 else "any target"
        raise GradtoolError(f"--shape {unknown[0]}=... names no parameter of {whose} in "
                            f"{os.path.basename(path)}: {listing}")


def parse_shape(texts):
    """--shape values ('3', '2,3', 'x=2,3'; one string or several) -> Shapes. Parsed, never
    evaluated: positive sizes and commas, optionally after a parameter name and `=`."""
    texts = [texts] if isinstance(texts, str) else list(texts) or ["3"]
    default, named = None, {}
    for text in texts:
        name, sep, sizes = text.rpartition("=")
        if sep and not name.isidentifier():
            raise GradtoolError(f"--shape NAME=SIZES needs a parameter name before `=` "
                                f"(got {text!r})")
        shape = _parse_sizes(sizes, text)
        if sep:
            named[name] = shape
        else:
            default = shape
    return Shapes(default or (3,), tuple(named.items()))


def _parse_sizes(text, option):
    parts = text.split(",")
    if not all(p.isascii() and p.isdigit() and int(p) > 0 for p in parts):
        raise GradtoolError(f"--shape must be positive sizes separated by commas, like 3, "
                            f"2,3 or x=2,3 (got {option!r})")
    shape = tuple(int(p) for p in parts)
    if _numel(shape) > MAX_GENERATED_ELEMENTS:
        raise GradtoolError(f"--shape {option} asks for {_numel(shape):,} elements per input; "
                            f"gradtool generates at most {MAX_GENERATED_ELEMENTS:,}")
    return shape


def _numel(shape):
    n = 1
    for size in shape:
        n *= size
    return n


def split_spec(spec):
    """'path/file.py::name' -> (path, name or None). The name follows the last `::` (a
    folder's name may hold one); a spec that is an existing file has no name."""
    if os.path.isfile(spec):
        return spec, None
    path, sep, name = spec.rpartition("::")
    at = spec.rfind(".py::")
    if sep and not os.path.isfile(path) and at >= 0:  # file.py::mylib::op, a custom op's name
        path, name = spec[:at + 3], spec[at + 5:]
    return (path, name or None) if sep else (spec, None)


def load(spec, shapes=None):
    """Import the file named by `spec` (FILE or FILE::NAME) and return its targets (whose
    parameters must include those `shapes`, --shape, names)."""
    path, wanted = split_spec(spec)
    full_path = os.path.abspath(path)  # before the file runs: it may chdir
    module = import_user_file(path)
    targets = find_targets(module, full_path, wanted)
    if not targets:
        raise NoTargets(
            f"No targets found in {path}: define a function decorated with "
            f"@gradtool.example(...), an autograd.Function subclass, or a public function "
            f"whose parameters are tensors.")
    if wanted is not None:
        chosen = [t for t in targets if t.name == wanted or t.name.split("[")[0] == wanted
                  or wanted in t.aliases]
        if not chosen:
            names = ", ".join(t.name for t in targets)
            raise UserCodeError(f"No target named {wanted!r} in {path}. Targets: {names}.")
        check_shapes(chosen, shapes, path)
        return chosen
    # a function named in @gradtool.reference(...) is another target's oracle: checked only
    # when asked for by name
    oracles = {id(vars(t.obj).get("__gradtool_reference__")) for t in targets}
    targets = [t for t in targets if not (t.kind == "function" and id(t.obj) in oracles)]
    check_shapes(targets, shapes, path)
    return targets


def import_user_file(path):
    if not os.path.exists(path):
        raise UserCodeError(f"No such file: {path}")
    if not path.endswith(".py"):
        raise UserCodeError(f"Not a Python file: {path}")
    if not os.path.isfile(path):  # reading a FIFO would hang
        raise UserCodeError(f"{path} is not a regular file (a folder, a FIFO or a device)")
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "gradtool_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with engines.current().importing():  # gradtool's: the file's `import torch` is gradtool
            spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        if e.lineno is None:  # null bytes: Python gives no line
            raise UserCodeError(f"{path} cannot be compiled: {describe_exception(e)}",
                                location=(path, 1)) from None
        where = location(e.filename, e.lineno, relative=False)
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


def describe_exception(exc):
    """`Type: message`, even for an exception whose __str__ itself raises."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - the user's __str__ may raise anything
        text = f"<{type(exc).__name__}.__str__ raised>"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def lacks_message(name, line=""):
    """What the CLI says about a torch name gradtool's engine lacks, named as the user wrote
    it (`gradtool.fft` in a file that says `import gradtool`; `line` is the user's source
    line), advising --engine torch only where it would run the file: on gradtool's engine,
    for a name reached through `import torch`."""
    if "gradtool" in line and "torch" not in line and name.startswith("torch"):
        return not_provided(f"gradtool{name[len('torch'):]} (PyTorch's {name})",
                            "this file imports gradtool itself, so --engine torch would not "
                            "change it")
    if engines.current().name != "gradtool":
        return not_provided(name, "this file uses gradtool itself, which --engine torch does "
                                  "not change")
    if engines.torch_installed():
        return not_provided(name, "run the file on PyTorch itself with --engine torch")
    return not_provided(name, "this file needs PyTorch itself (--engine torch), which is not "
                              "installed here")


def user_error(exc, doing):
    """A UserCodeError for an exception raised while `doing` something with user code."""
    frames = user_frames(exc.__traceback__)
    at = (frames[-1].filename, frames[-1].lineno) if frames else None
    where = f" at {location(*at, relative=False)}" if at else ""
    name, _, text = describe_exception(exc).partition(": ")
    message = f"{doing} raised {name}{where}" + (f": {text}" if text else "")
    missing = missing_torch_name(exc)
    if missing is not None:  # a torch feature gradtool lacks: say so, not "AttributeError"
        line = frames[-1].line or "" if frames else ""
        message = f"{doing} failed{where}: {lacks_message(missing, line)}"
    refused = refused_arguments(exc)
    if refused is not None:
        message = f"{doing} failed{where}: {refused}"
    details = "".join(traceback.format_list(frames)) if frames else ""
    return UserCodeError(message, details, at)


def find_targets(module, path, wanted=None):
    targets, seen = [], set()
    registered = {id(fn) for obj in vars(module).values() if engines.is_custom_op(obj)
                  for fn in engines.op_functions(obj)}
    for name, obj in vars(module).items():
        if name.startswith("_") or id(obj) in seen:  # one object bound twice is one target
            continue
        seen.add(id(obj))
        if engines.is_custom_op(obj):
            found = _custom_op_target(name, obj, path)
            targets += found if isinstance(found, list) else [found] if found else []
            continue
        if id(obj) in registered and name != wanted:  # an op's backward, fake kernel, ...
            continue
        lineno = _defined_here(obj, path)
        if lineno is None:
            continue
        examples = vars(obj).get("__gradtool_examples__") if callable(obj) else None
        is_function_class = inspect.isclass(obj) and _is_function_class(obj)
        kind = "Function" if is_function_class else "example"
        if examples is not None:
            for i, (args, kwargs) in enumerate(examples):
                label = f"{name}[{i}]" if len(examples) > 1 else name
                targets.append(Target(label, kind, obj, tuple(args), dict(kwargs),
                                      parameter_names(obj), path, lineno))
        elif is_function_class:
            params = _forward_params(obj)
            targets.append(Target(name, "Function", obj, tuple(_generated(p) for p in params),
                                  {}, [p.name for p in params], path, lineno))
        elif inspect.isfunction(obj):
            params = [p.name for p in inspect.signature(obj).parameters.values()
                      if p.default is inspect.Parameter.empty
                      and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if not params and name != wanted:  # main(), helpers: a target when named
                continue
            if name.startswith("test"):  # pytest's test function: its parameters are fixtures
                continue
            targets.append(Target(name, "function", obj, tuple(GENERATED for _ in params), {},
                                  params, path, lineno))
    targets.sort(key=lambda t: t.lineno)  # source order (a function's examples keep theirs)
    return targets


def _custom_op_target(name, op, path):
    """The target (or targets: one per @gradtool.example) of a custom op defined in this file
    (its kernel's file), or None. Its tensor parameters are generated; without requires_grad
    for an op that mutates."""
    fn = engines.op_kernel(op)
    lineno = _defined_here(fn, path)
    if lineno is None:
        return None
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)]
    mutated = engines.mutated_arguments(op)
    examples = vars(op).get("__gradtool_examples__")
    aliases = (op._qualname,)
    if examples is not None:
        return [Target(f"{name}[{i}]" if len(examples) > 1 else name, "custom_op", op,
                       tuple(args), dict(kwargs), [p.name for p in params], path, lineno,
                       aliases) for i, (args, kwargs) in enumerate(examples)]
    # an op that mutates cannot have autograd (register_autograd refuses it): none of its
    # tensors is generated requiring grad
    specs = tuple(MUTATED if mutated and _generated(p) is GENERATED else _generated(p)
                  for p in params)
    return Target(name, "custom_op", op, specs, {}, [p.name for p in params], path, lineno,
                  aliases)


def _defined_here(obj, path):
    """The line where obj is defined if it is a function or class of this very file. A name
    bound twice (a class redefined) is the definition the module finally binds."""
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return None
    try:
        # a function decorated by a library (@torch.enable_grad(), @torch.no_grad(), any
        # functools.wraps) is the library's wrapper: its own code is where the user wrote it
        source_file = inspect.getsourcefile(inspect.unwrap(obj) if inspect.isfunction(obj)
                                            else obj)
    except TypeError:
        return None
    if source_file is None or os.path.abspath(source_file) != path:
        return None
    if inspect.isfunction(obj):
        return inspect.unwrap(obj).__code__.co_firstlineno
    return _class_line(obj, path)


def _class_line(cls, path):
    """The line of the `class` statement that made cls: among the file's classes of that
    name, the one whose body holds cls's own methods (inspect finds the first of them)."""
    import ast
    methods = [inspect.unwrap(f.__func__ if isinstance(f, (staticmethod, classmethod)) else f)
               for f in vars(cls).values()
               if isinstance(f, (staticmethod, classmethod)) or inspect.isfunction(f)]
    lines = {f.__code__.co_firstlineno for f in methods if hasattr(f, "__code__")}
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return 1
    found = [n for n in ast.walk(tree)
             if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    for node in found:
        if any(node.lineno <= line <= node.end_lineno for line in lines):
            return (node.decorator_list[0].lineno if node.decorator_list else node.lineno)
    return found[-1].lineno if found else 1


def _is_function_class(cls):
    return engines.function_base(cls) is engines.current().Function


def _forward_params(cls):
    """forward's parameters after ctx (all of them when setup_context is separate), without
    *args/**kwargs."""
    Function = engines.function_base(cls)
    params = list(inspect.signature(cls.forward).parameters.values())
    if cls.setup_context is Function.setup_context:
        params = params[1:]  # forward(ctx, ...)
    return [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _generated(param):
    """What a Function's forward gets for this parameter: its default if it has one, a number
    if it is annotated as one, else a generated tensor."""
    if param.default is not inspect.Parameter.empty:
        return param.default
    annotation = param.annotation
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    if name in ("Sequence", "List", "list") and [getattr(a, "__name__", "") for a in
                                                 typing.get_args(annotation)] == ["Tensor"]:
        return [GENERATED, GENERATED]  # a List[Tensor] (a custom op's Tensor[]): two tensors
    if name in ("float", "complex"):
        return NUMBER
    if name in ("int", "bool"):
        return Unknown(param.name, name)
    return GENERATED


class Unknown:
    """A parameter gradtool cannot make up (an int, a bool): the user must give it."""

    def __init__(self, name, annotation):
        self.name, self.annotation = name, annotation


NUMBER = object()  # a float parameter: gradtool draws a seeded number


def parameter_names(fn):
    """The names of fn's inputs: for a custom Function (the class, or its .apply) its
    forward's parameters after ctx, else fn's own parameters."""
    cls = fn if isinstance(fn, type) else getattr(fn, "__self__", None)
    if engines.function_base(cls) is not None:
        return [p.name for p in _forward_params(cls)]
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def make_inputs(target, seed, shape, device=None):
    """The target's arguments: tensors copied fresh, shapes and generated ones drawn from a
    generator seeded by `seed` (same seed, same inputs), placed on `device` (--device; when
    None, models_device's answer or the engine's default)."""
    import numpy as np
    from .specs import InputSpec
    E = engines.current()
    device = device or models_device(E, target)
    rng = np.random.default_rng(seed)
    shapes = shape if isinstance(shape, Shapes) else Shapes(tuple(shape))

    def build(name, spec):
        if spec is MUTATED:
            shape = shapes.of(name)
            return _leaf(E, target, shape, lambda: rng.standard_normal(shape), False, device)
        if spec is GENERATED:
            spec = shapes.of(name)
        if isinstance(spec, InputSpec):
            value = spec.draw(rng)
            if spec.kind == "constant":
                return value
            return _leaf(E, target, spec.shape, lambda: value,
                         spec.requires_grad and value.dtype.kind == "f", device)
        if spec is NUMBER:
            return round(float(rng.uniform(0.5, 2.0)), 4)
        if isinstance(spec, Unknown):
            raise UserCodeError(
                f"{target.name}{'' if target.kind == 'custom_op' else '.forward'}'s parameter "
                f"`{name}` is annotated {spec.annotation}: "
                f"gradtool cannot make one up. Give it with @gradtool.example(...) on "
                f"{target.name}, e.g. {example_hint(target)}.",
                location=(target.filename, target.lineno))
        if E.is_tensor(spec):
            return spec.detach().clone().requires_grad_(spec.requires_grad)
        if isinstance(spec, tuple) and all(isinstance(n, int) for n in spec):
            return _leaf(E, target, spec, lambda: rng.standard_normal(spec), True, device)
        if isinstance(spec, list) and spec and all(s is GENERATED or E.is_tensor(s)
                                                   for s in spec):
            return [build(name, s) for s in spec]  # a list of tensors, each made or copied
        return spec
    args = [build(n, a) for n, a in zip(target.argument_names(len(target.arg_specs)),
                                        target.arg_specs)]
    kwargs = {k: build(k, v) for k, v in target.kwarg_specs.items()}
    return args, kwargs


def models_device(E, target):
    """Where the models of the target's file live when they all live on one device other
    than the CPU (a model moved with .to("cuda") gets its generated inputs there), else None."""
    devices = {E.device_name(p) for p in module_parameters(file_modules(E, target)).values()}
    return devices.pop() if len(devices) == 1 and devices != {"cpu"} else None


def _leaf(E, target, shape, draw, requires_grad, device):
    try:
        return E.leaf(draw(), requires_grad=requires_grad, device=device)
    except (MemoryError, ValueError) as e:
        where = location(target.filename, target.lineno)
        raise UserCodeError(f"target {target.name} ({where}): cannot make an input of shape "
                            f"{shape}: {e}",
                            location=(target.filename, target.lineno)) from None


def file_namespace(target):
    """The target's file's global variables (and its closure's: a function made inside
    another)."""
    fn = target.obj.forward if target.kind == "Function" else \
        engines.op_kernel(target.obj) if target.kind == "custom_op" else \
        inspect.unwrap(target.obj)
    namespace = dict(getattr(fn, "__globals__", {}))
    if getattr(fn, "__closure__", None):
        namespace.update(inspect.getclosurevars(fn).nonlocals)
    return namespace


def file_modules(E, target):
    """The nn.Modules of the target's file (and of its closure) and their submodules by the
    names the user knows."""
    return modules_in(E, file_namespace(target))


def modules_in(E, namespace):
    """The nn.Modules of a namespace (a file's globals, a notebook's) and their submodules
    by the names the user knows (model, model.3.attn, blocks[2] for a list of modules), the
    first name of each first."""
    Module = E.module_class()
    found = {}
    for var, value in namespace.items():
        if var.startswith("_"):
            continue
        tops = [(var, value)] if isinstance(value, Module) else [
            (f"{var}[{i}]", v) for i, v in enumerate(value) if isinstance(v, Module)] \
            if isinstance(value, (list, tuple)) else []
        for top, module in tops:
            for sub, m in module.named_modules():
                found.setdefault(f"{top}.{sub}" if sub else top, m)
    return found


def module_parameters(modules):
    """Parameters of those modules by their qualified names (model.0.weight), so leaves are
    labelled as the user knows them."""
    names = {}
    for var, module in modules.items():
        for pname, p in module.named_parameters(recurse=False):
            names.setdefault(f"{var}.{pname}", p)
    return names


def example_hint(target, number=None):
    """How to write an example for this target, e.g. `@gradtool.example((3,), 2.0)`: a
    shape for each tensor parameter, a number for `number` and the numeric ones; parameters
    with defaults left out."""
    hints = []
    for name, spec in zip(target.param_names, target.arg_specs):
        if (spec is GENERATED or spec is MUTATED) and name != number:
            hints.append("(3,)")
        elif spec is NUMBER or isinstance(spec, Unknown) or name == number:
            hints.append("2.0")
    return "@gradtool.example(" + ", ".join(hints) + ")"


# ------------------------------------------------------------------ running a target

def flatten_outputs(result):
    """The tensors a target returned: a tensor, or tensors in tuples, lists and dicts."""
    if engines.current().is_tensor(result):
        return [result]
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in flatten_outputs(item)]
    return []


@dataclasses.dataclass
class Run:
    """A target called once on its seeded inputs: what every command starts from."""
    target: Target
    inputs: list      # (name, value) per argument, as the target received it
    outputs: list     # the tensors it returned
    args: list
    kwargs: dict

    @property
    def tensor_inputs(self):
        """(name, tensor) of the arguments that are tensors, and of the tensors in an argument
        that is a list of them (`xs[0]`, a custom op's List[Tensor]): what gradcheck varies."""
        found = []
        for name, value in self.inputs:
            found += [(name if i is None else f"{name}[{i}]", t) for i, t in _tensors_of(value)]
        return found

    def function(self):
        """The target as a function of its tensor arguments (in tensor_inputs' order), the
        other arguments fixed: the function gradcheck checks."""
        _, arguments = tensor_slots(engines.current().is_tensor, self.args, self.kwargs,
                                    lists=True)
        call = self.target.call

        def target_function(*tensors):
            args, kwargs = arguments(tensors)
            return call(*args, **kwargs)
        return target_function


def _tensors_of(value, is_tensor=None, lists=True):
    """(None, value) for a tensor, (i, tensor) for each of a list of tensors (when `lists`),
    else nothing."""
    is_tensor = is_tensor or engines.current().is_tensor
    if is_tensor(value):
        return [(None, value)]
    if lists and isinstance(value, list) and value and all(is_tensor(v) for v in value):
        return list(enumerate(value))
    return []


def tensor_slots(is_tensor, args, kwargs, lists=False):
    """Where the tensors among a call's arguments are: ("arg", index, i) or ("kw", name, i)
    each, in that order, i the place in a list of tensors (with `lists`: a custom op's
    List[Tensor]) or None; and `arguments(tensors)`, the call's (args, kwargs) with those in
    their place."""
    slots = [("arg", k, i) for k, a in enumerate(args)
             for i, _ in _tensors_of(a, is_tensor, lists)] + \
        [("kw", k, i) for k, v in kwargs.items() for i, _ in _tensors_of(v, is_tensor, lists)]

    def arguments(tensors):
        new_args = [list(a) if isinstance(a, list) else a for a in args]
        new_kwargs = {k: list(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        for (where, key, i), t in zip(slots, tensors):
            place = new_args if where == "arg" else new_kwargs
            if i is None:
                place[key] = t
            else:
                place[key][i] = t
        return new_args, new_kwargs
    return slots, arguments


def run_target(target, seed, shape, observe=None, device=None):
    """Build the target's inputs (seeded) and call it once, inside the context manager
    `observe` if given (the forward trace). Whatever the user's code raises becomes a
    UserCodeError naming their line."""
    import contextlib
    engines.current().manual_seed(seed)
    args, kwargs = make_inputs(target, seed, shape, device)
    try:
        with observe if observe is not None else contextlib.nullcontext():
            result = target.call(*args, **kwargs)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - whatever the user's code raises, exit() too
        raise forward_error(target, e, shape, args) from None
    outputs = flatten_outputs(result)
    if not outputs and target.kind != "custom_op":  # (an op that only mutates returns None)
        raise UserCodeError(
            f"target {target.name} ({location(target.filename, target.lineno)}) returned "
            f"{type(result).__name__}, not a tensor: gradtool needs a tensor (or tensors) to "
            f"differentiate.", location=(target.filename, target.lineno))
    inputs = list(zip(target.argument_names(len(args)), args)) + list(kwargs.items())
    return Run(target, inputs, outputs, args, kwargs)


_SHAPE_ERROR_WORDS = ("size", "shape", "broadcast", "must match", "mat1 and mat2", "dim",
                      "1d", "2d", "3d", "matri", "square", "element")


def forward_error(target, exc, shape=(3,), args=()):
    """The user's forward raised: their line, and when gradtool made up the inputs, what it
    made and how to give others (for a shape error, per parameter with --shape NAME=...).
    An error of gradtool's own recording is named as gradtool's bug."""
    if raised_in_recording(exc) and not isinstance(exc, GradtoolError):  # (not on purpose)
        return GradtoolBug(target, exc)
    error = user_error(exc, f"target {target.name}")
    at_call = error.location is None
    if at_call:  # raised where gradtool called it: wrong arguments, ...
        error.location = (target.filename, target.lineno)
        error.args = (error.args[0].replace(
            f"target {target.name} raised",
            f"target {target.name} ({location(*error.location, relative=False)}) raised", 1),)
    generated = [n for n, spec in zip(target.param_names, target.arg_specs)
                 if spec is GENERATED or spec is NUMBER or spec is MUTATED]
    shaped = [(n, tuple(a.shape)) for n, spec, a in zip(target.param_names, target.arg_specs,
                                                       args)
              if (spec is GENERATED or spec is MUTATED) and hasattr(a, "shape")]
    text = describe_exception(exc).lower()
    if isinstance(exc, _NOT_THE_INPUTS) or missing_torch_name(exc) or refused_arguments(exc):
        return error
    if shaped and any(word in text for word in _SHAPE_ERROR_WORDS):
        shapes = shape if isinstance(shape, Shapes) else Shapes(tuple(shape))
        made = ", ".join(f"{n} {list(s)}" for n, s in shaped)
        per_name = " ".join(f"--shape {n}=SIZES" for n, _ in shaped)
        error.args = (f"{error.args[0]} (a shape error: gradtool generated {made} from "
                      f"{shapes.origin()}; give each parameter its shape with {per_name}, or "
                      f"{example_hint(target)} on {target.name})",)
    elif generated and (any(word in text for word in _DTYPE_ERROR_WORDS) or
                        isinstance(exc, _INPUT_CHECKS) and (at_call or _raised_by_user(exc))):
        error.args = (f"{error.args[0]} (gradtool called it with generated inputs for "
                      f"{', '.join(generated)}; if it needs others, give them with "
                      f"{example_hint(target)} on {target.name})",)
    return error


# Errors no input causes (a name the code lacks); and those a user's own code raises when it
# checks its inputs (an assert, a ValueError), or the call raises for the arguments' sake.
_NOT_THE_INPUTS = (AttributeError, NameError, ImportError)
_INPUT_CHECKS = (TypeError, ValueError, AssertionError)
_DTYPE_ERROR_WORDS = ("dtype", "scalar type", "result type", "floating point")


def _raised_by_user(exc):
    """Whether the innermost frame of exc's traceback is the user's own code (not gradtool's
    or a library's: torch's, numpy's)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and not is_library(frames[-1].filename)
