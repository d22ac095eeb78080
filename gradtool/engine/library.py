"""torch.library on the engine: custom operators defined in Python (custom_op, triton_op,
Library.define/impl), their registrations (autograd, fake kernel, device kernels), the
torch.ops.<namespace>.<name> lookup, the schema inferred from type hints, and opcheck.

As in torch, a custom op is opaque to autograd: its kernel runs without recording a graph,
and a call whose inputs require grad records ONE node, that of the autograd.Function torch
generates for the op (GeneratedBackwardFor_<ns>_<name>_defaultBackward), whose ctx is what
the user's setup_context saves on. The engine has no dispatcher, no FakeTensor mode and no
compiler, so opcheck's tests are the engine's versions of torch's (see opcheck)."""
import collections.abc
import copy
import enum
import inspect
import numbers
import typing
import warnings

import numpy as np

from .autograd import forward_ad, grad_mode
from .autograd.dtypes import dtype as _dtype
from .autograd.device import device as _device
from .autograd.function import Function
from .autograd.tensor import Tensor
from .errors import NotInEngineError
from .func import batched as batching, function as func_function, rules, tree

__all__ = ["Library", "Tag", "custom_op", "triton_op", "wrap_triton", "register_autograd",
           "register_fake", "register_kernel", "register_torch_dispatch", "define", "impl",
           "infer_schema", "opcheck", "get_ctx", "CustomOpDef", "OpCheckError"]

_OPS = {}  # "ns::name" -> the OpDef of every op defined so far

# torch.Tag: what an operator declares about itself (torch's members, values and order)
Tag = enum.Enum("Tag", [(name, value) for value, name in enumerate((
    "core", "cudagraph_unsafe", "data_dependent_output", "dynamic_output_shape",
    "flexible_layout", "generated", "inplace", "inplace_view", "maybe_aliasing_or_mutating",
    "needs_contiguous_strides", "needs_exact_strides", "needs_fixed_stride_order",
    "nondeterministic_bitwise", "nondeterministic_seeded", "out", "out_variant", "pointwise",
    "pt2_compliant_tag", "reduction", "view_copy"))], module=__name__)


def _tag_tuple(tags, where):
    """tags as torch takes them: one Tag or a sequence of Tags (None: none)."""
    if tags is None:
        return ()
    if isinstance(tags, Tag):
        return (tags,)
    tags = tuple(tags)
    for tag in tags:
        if not isinstance(tag, Tag):
            raise TypeError(f"{where}: tags must be torch.Tag values (e.g. "
                            f"torch.Tag.pointwise), got {tag!r}")
    return tags


# ------------------------------------------------------------------ schemas
class Argument:
    """One argument of a schema: its type as written (Tensor, Tensor(a0!), float?, ...)."""

    def __init__(self, name, type_, default=inspect.Parameter.empty, kwarg_only=False):
        self.name, self.type, self.default, self.kwarg_only = name, type_, default, kwarg_only

    @property
    def is_mutable(self):
        return "!" in self.type

    @property
    def is_tensor(self):
        return self.type.startswith("Tensor")


class FunctionSchema:
    """A parsed operator schema, `name(Tensor x, float k=1.0) -> Tensor`."""

    def __init__(self, text, name=""):
        head, arrow, returns = text.partition("->")
        if not arrow or "(" not in head or not head.rstrip().endswith(")"):
            raise RuntimeError(f"Expected a schema like `name(Tensor x) -> Tensor`, got "
                               f"{text!r}")
        own_name, _, arguments = head.strip().partition("(")
        self.name = own_name.strip() or name
        self.arguments = []
        kwarg_only = False
        for part in _split_top_level(arguments[:-1]):
            if part == "*":
                kwarg_only = True
                continue
            declaration, eq, default = part.partition("=")
            type_, _, arg_name = declaration.strip().rpartition(" ")
            if not type_ or not arg_name.isidentifier():
                raise RuntimeError(f"Expected `TYPE NAME` for each argument of the schema "
                                   f"{text!r}, got {part!r}")
            self.arguments.append(Argument(arg_name, type_.strip(), default.strip() if eq
                                           else inspect.Parameter.empty, kwarg_only))
        self.returns = returns.strip()

    def __str__(self):
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            default = "" if a.default is inspect.Parameter.empty else f"={a.default}"
            args.append(f"{a.type} {a.name}{default}")
        return f"{self.name}({', '.join(args)}) -> {self.returns}"

    __repr__ = __str__

    @property
    def returns_nothing(self):
        return self.returns.replace(" ", "") == "()"

    def mutable_names(self):
        return [a.name for a in self.arguments if a.is_mutable]


def _split_top_level(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _param_types():
    """Python type hint -> schema type, as torch's infer_schema reads them."""
    base = [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
            (float, "float", True, False, True), (bool, "bool", True, False, True),
            (str, "str", False, False, False), (numbers.Number, "Scalar", True, False, False),
            (_dtype, "ScalarType", False, False, False), (_device, "Device", False, False, False)]
    types = {}
    for py, name, listed, optional_items, optional_list in base:
        types[py] = name
        types[typing.Optional[py]] = f"{name}?"
        sequences = (typing.Sequence, typing.List, collections.abc.Sequence, list)
        if listed:
            for seq in sequences:
                types[seq[py]] = f"{name}[]"
        if optional_items:
            for seq in sequences:
                types[seq[typing.Optional[py]]] = f"{name}?[]"
        if optional_list:
            for seq in sequences:
                types[typing.Optional[seq[py]]] = f"{name}[]?"
    return types


_PARAM_TYPES = _param_types()
_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",
                 int: "SymInt", float: "float", bool: "bool", numbers.Number: "Scalar"}


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=None):
    """The schema of a function from its type hints, as torch.library.infer_schema gives it
    (mutated Tensor arguments marked `Tensor(a<i>!)`), with torch's errors."""
    sig = inspect.signature(prototype_function)
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(annotation):
        if isinstance(annotation, str):
            try:
                return eval(annotation, prototype_function.__globals__)  # noqa: S307 - as torch
            except Exception as e:  # noqa: BLE001 - whatever the string names
                error_fn(f"Unsupported type annotation {annotation}. It is not a type. "
                         f"({type(e).__name__}: {e})")
        return annotation

    params, seen, star = [], set(), False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation = resolve(param.annotation)
        schema_type = _PARAM_TYPES.get(annotation)
        if schema_type is None:
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
                     f"The valid types are: {_PARAM_TYPES.keys()}.")
        if type(mutates_args) is str:
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the "
                                 "arguments that are mutated or the string 'unknown'. ")
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections "
                         f"of Tensors can be mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
            continue
        default = param.default
        if default is None or isinstance(default, (int, float, bool)):
            text = str(default)
        elif isinstance(default, (str, _device)):
            text = f'"{default}"'
        elif isinstance(default, _dtype):
            text = str(default).rpartition(".")[2]
        else:
            error_fn(f"Parameter {name} has an unsupported default value type "
                     f"{type(default)}. Please file an issue on GitHub so we can prioritize "
                     f"this.")
        params.append(f"{schema_type} {name}={text}")
    if mutates_args != "unknown":
        unseen = set(mutates_args) - seen
        if unseen:
            error_fn(f"{unseen} in mutates_args were not found in the custom op's signature. "
                     f"mutates_args should contain the names of all args that the custom op "
                     f"mutates, or just the string 'unknown' if you don't know.")
    returns = _return_schema(resolve(sig.return_annotation), error_fn)
    head = op_name or ""
    return f"{head}({', '.join(params)}) -> {returns}"


def _return_schema(annotation, error_fn):
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in _RETURN_TYPES:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: "
                     f"{_RETURN_TYPES}.")
        return _RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    if any(a not in _RETURN_TYPES for a in args):
        error_fn(f"Return has unsupported type {annotation}. The valid types are: "
                 f"{_RETURN_TYPES}.")
    listed = ", ".join(_RETURN_TYPES[a] for a in args)
    return f"(({listed}))" if len(args) == 1 else f"({listed})"


# ------------------------------------------------------------------ operators
class OpDef:
    """One operator, however it was defined: its schema and its kernels by dispatch key
    ("CPU", "CUDA", "CompositeExplicitAutograd", "CompositeImplicitAutograd", "Autograd",
    "Meta"), its fake kernel and autograd formula."""

    def __init__(self, namespace, name, schema):
        self.namespace, self.name = namespace, name
        self.qualname = f"{namespace}::{name}"
        self.schema = schema if isinstance(schema, FunctionSchema) else \
            FunctionSchema(schema, self.qualname)
        self.schema.name = self.qualname
        self.kernels = {}
        self.fake = None
        self.custom = None  # the CustomOpDef, for an op made by custom_op
        self.tags = []  # torch.Tags, as defined
        self.default = OpOverload(self)
        self.packet = OpOverloadPacket(self)

    def bind(self, args, kwargs):
        """(args, kwargs) as torch's dispatcher passes them on: every argument before `*`
        positional, defaults filled in, the keyword-only ones by name."""
        positional = [a for a in self.schema.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            raise TypeError(f"{self.qualname}() expected at most {len(positional)} positional "
                            f"argument(s) but received {len(args)}")
        args = list(args)
        for a in positional[len(args):]:
            if a.name in kwargs:
                args.append(kwargs.pop(a.name))
            elif a.default is not inspect.Parameter.empty:
                args.append(_default_value(a))
            else:
                raise TypeError(f"{self.qualname}() is missing value for argument '{a.name}'. "
                                f"Declaration: {self.schema}")
        keywords = {}
        for a in self.schema.arguments:
            if a.kwarg_only:
                if a.name in kwargs:
                    keywords[a.name] = kwargs.pop(a.name)
                elif a.default is not inspect.Parameter.empty:
                    keywords[a.name] = _default_value(a)
        if kwargs:
            raise TypeError(f"{self.qualname}() got unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        return args, keywords

    def __call__(self, *args, **kwargs):
        args, kwargs = self.bind(args, dict(kwargs))
        if self.custom is not None:
            return self.custom._dispatch(args, kwargs)
        return self._dispatch_library(args, kwargs)

    def _dispatch_library(self, args, kwargs):
        """An op of Library.define: composite kernels record the graph of the ops they run;
        an Autograd kernel handles autograd itself; a backend kernel with an input requiring
        grad runs as torch's autograd fallback does (recorded, with its warning at
        backward)."""
        for key in ("CompositeImplicitAutograd", "Autograd", "AutogradCPU"):
            if key in self.kernels:
                return self.kernels[key](*args, **kwargs)
        kernel = self.backend_kernel(args)
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self.qualname}' with arguments from the "
                f"'{_backend_key(args)}' backend. '{self.qualname}' is only available for "
                f"these backends: [{', '.join(sorted(self.kernels))}].")
        needs_grad = grad_mode.state.grad_enabled and any(
            t.requires_grad for t in _tensors(args, kwargs))
        if not needs_grad:
            with grad_mode.no_grad():
                return kernel(*args, **kwargs)
        result = kernel(*args, **kwargs)
        message = (f"{self.qualname}: an autograd kernel was not registered to the Autograd "
                   f"key(s) but we are trying to backprop through it. This may lead to "
                   f"silently incorrect behavior. This behavior is deprecated and will be "
                   f"removed in a future version of PyTorch. If your operator is "
                   f"differentiable, please ensure you have registered an autograd kernel to "
                   f"the correct Autograd key (e.g. DispatchKey::Autograd, "
                   f"DispatchKey::CompositeImplicitAutograd). If your operator is not "
                   f"differentiable, or to squash this warning and use the previous behavior, "
                   f"please register torch::CppFunction::makeFallthrough() to "
                   f"DispatchKey::Autograd.")
        for out in _tensors(result):
            if out.requires_grad and out.grad_fn is not None:
                out.register_hook(lambda grad: warnings.warn(message, UserWarning,
                                                             stacklevel=2))
        return result

    def backend_kernel(self, args):
        key = _backend_key(args)
        return (self.kernels.get(key) or self.kernels.get("CompositeExplicitAutograd") or
                self.kernels.get("Default"))

    def has_autograd(self):
        return self.custom is not None or any(
            k in self.kernels for k in ("Autograd", "AutogradCPU", "AutogradCUDA",
                                        "CompositeImplicitAutograd"))

    def fake_kernel(self):
        """The fake (meta) kernel, or None."""
        if self.custom is not None:
            return self.custom._abstract_fn
        return self.fake or self.kernels.get("Meta")


def _default_value(argument):
    text = argument.default
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith('"') or text.startswith("'"):
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _backend_key(args):
    tensors = _tensors(args)
    kind = tensors[0].device.type if tensors else "cpu"
    return {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}.get(kind, kind.upper())


def _tensors(*values):
    """The tensors among values, in lists, tuples and dicts too."""
    found = []
    for v in values:
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found += _tensors(*v)
        elif isinstance(v, dict):
            found += _tensors(*v.values())
    return found


class OpOverload:
    """torch.ops.<ns>.<name>.default."""

    def __init__(self, op):
        self._op = op
        self._overloadname = "default"

    @property
    def _schema(self):
        return self._op.schema

    @property
    def _namespace(self):
        return self._op.namespace

    @property
    def _opname(self):
        return self._op.name

    def name(self):
        return self._op.qualname

    @property
    def tags(self):
        return list(self._op.tags)

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __str__(self):
        return f"{self._op.namespace}.{self._op.name}.default"

    def __repr__(self):
        return f"<OpOverload(op='{self._op.namespace}.{self._op.name}', overload='default')>"


class OpOverloadPacket:
    """torch.ops.<ns>.<name>: the op, with its overloads (`.default`)."""

    def __init__(self, op):
        self._op = op

    @property
    def default(self):
        return self._op.default

    @property
    def _schema(self):
        return self._op.schema

    def overloads(self):
        return ["default"]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"The underlying op of '{self._op.namespace}.{self._op.name}' "
                             f"has no overload name '{name}'")

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def __str__(self):
        return f"{self._op.namespace}.{self._op.name}"

    __repr__ = __str__


class AtenOverload:
    """torch.ops.aten.<name>.<overload> for an op of the engine's table: what selective
    checkpointing's policy receives and compares with (one object per overload, so `is`,
    `==` and `in [...]` all work). Calling it runs the engine's Tensor.<name>."""

    _made = {}

    def __new__(cls, name, overload):
        made = cls._made.get((name, overload))
        if made is None:
            made = cls._made[(name, overload)] = super().__new__(cls)
            made._opname, made._overloadname = name, overload
        return made

    def name(self):
        return f"aten::{self._opname}" + ("" if self._overloadname == "default"
                                          else f".{self._overloadname}")

    def __call__(self, *args, **kwargs):
        method = getattr(args[0], self._opname, None) if args else None
        if method is None:  # (torch's schemas are the engine's Tensor methods' where it has one)
            raise NotInEngineError(f"calling torch.ops.aten.{self._opname} (the engine runs it "
                                   f"as a Tensor method only)")
        return method(*args[1:], **kwargs)

    def __str__(self):
        return f"aten.{self._opname}.{self._overloadname}"

    def __repr__(self):
        return f"<OpOverload(op='aten.{self._opname}', overload='{self._overloadname}')>"


# the overloads torch dispatches, where not `default`: binary arithmetic takes a Tensor
# (torch wraps a Python number), comparisons a Tensor or a Scalar
_ARITHMETIC = {"add", "sub", "mul", "div", "remainder", "fmod"}
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}

_OVER_DIMS = {"sum": "dim_IntList", "mean": "dim"}  # a reduction given its dims
_OVERLOADS = {**{name: ("Tensor", "Scalar") for name in _ARITHMETIC | _COMPARISONS},
              **{name: ("default", dim) for name, dim in _OVER_DIMS.items()},
              "pow": ("Tensor_Tensor", "Tensor_Scalar", "Scalar")}


def aten_overload(name, inputs, args=()):
    """The torch.ops.aten overload a run of the engine's op `name` on `inputs` (and its other
    arguments `args`) stands for."""
    base = name[:-1] if name.endswith("_") and not name.startswith("_") else name
    if base in _OVER_DIMS and args:
        overload = _OVER_DIMS[base]
    elif base in _ARITHMETIC:
        overload = "Tensor"
    elif base in _COMPARISONS or base == "pow":
        other_tensor = len(inputs) > 1 and hasattr(inputs[1], "_data")
        if base == "pow":
            overload = "Tensor_Tensor" if other_tensor else "Tensor_Scalar"
        else:
            overload = "Tensor" if other_tensor else "Scalar"
    else:
        overload = "default"
    return AtenOverload(name, overload)


class AtenPacket:
    """torch.ops.aten.<name>: the engine's op, with its overloads as attributes."""

    def __init__(self, name):
        self._opname = name

    def __getattr__(self, overload):
        if overload.startswith("__"):
            raise AttributeError(overload)
        if overload not in _OVERLOADS.get(self._opname, ("default",)):
            raise AttributeError(f"The underlying op of 'aten.{self._opname}' has no overload "
                                 f"name '{overload}'")
        return AtenOverload(self._opname, overload)

    def __str__(self):
        return f"aten.{self._opname}"

    __repr__ = __str__


def _engine_row_names():
    from .autograd.ops.registry import OpSpec
    from .autograd.ops.rows import table
    return {s.name for s in vars(table).values() if isinstance(s, OpSpec)}


class _Namespace:
    """torch.ops.<ns>: its ops by name (and in `aten`, the engine's own ops)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        op = _OPS.get(f"{self._name}::{name}")
        if op is None and self._name == "aten" and name in _engine_row_names():
            return AtenPacket(name)
        if op is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute "
                                 f"'{name}'")
        return op.packet


class _Ops:
    """torch.ops: the namespaces of the ops defined in Python."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Namespace(name)


ops = _Ops()


def _split_name(qualname):
    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace or not name or "::" in name:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator "
                         f"name should look something like ns::foo")
    return namespace, name


def _lookup(op):
    """The OpDef a name ("ns::name"), a CustomOpDef or an OpOverload(Packet) stands for."""
    if isinstance(op, CustomOpDef):
        return op._op
    if isinstance(op, (OpOverload, OpOverloadPacket)):
        return op._op
    if isinstance(op, str):
        _split_name(op)
        if op not in _OPS:
            raise ValueError(f"Operator {op} does not exist; define it with "
                             f"torch.library.custom_op or Library.define first")
        return _OPS[op]
    raise ValueError(f"Expected an operator name 'ns::name', a CustomOpDef or an "
                     f"OpOverload, got {type(op).__name__}")


# ------------------------------------------------------------------ custom_op
class CustomOpDef:
    """What torch.library.custom_op returns: the op, callable, with its registrations. The
    private attributes are torch's names (gradtool's checks read either engine's)."""

    def __init__(self, namespace, name, schema, fn, tags=()):
        self._namespace, self._name = namespace, name
        self._tags = tags
        self._qualname = f"{namespace}::{name}"
        self._schema = schema
        self._init_fn = fn
        self._backend_fns = {}
        self._abstract_fn = None
        self._backward_fn = None
        self._setup_context_fn = None
        self._vmap_fn = None
        self._op = OpDef(namespace, name, schema)
        self._op.custom = self
        # torch declares every custom op pt2-compliant, first
        self._op.tags = [Tag.pt2_compliant_tag] + [t for t in tags
                                                   if t is not Tag.pt2_compliant_tag]
        self._opoverload = self._op.default
        _OPS[self._qualname] = self._op
        self._autograd_function = _generated_function(self)

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._op(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        def inner(fn):
            kinds = [device_types] if device_types is None or isinstance(device_types, str) \
                else list(device_types)
            for kind in kinds:
                self._backend_fns[kind] = fn
            return fn
        return inner if fn is None else inner(fn)

    def register_fake(self, fn, /):
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        if self._op.schema.mutable_names():
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                               f"{self} with schema {self._op.schema}. Please create a "
                               f"functional operator and register an autograd formula for "
                               f"that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError("gradtool's engine has no __torch_dispatch__ (no tensor "
                                  "subclasses or dispatch modes): register_torch_dispatch "
                                  "needs PyTorch itself (--engine torch)")

    def register_vmap(self, func=None, /):
        """The op's rule under vmap: func(info, in_dims, *args, **kwargs) -> (outputs,
        out_dims), given the physical arguments (batch at dim 0 where in_dims says 0)."""
        def register(func):
            self._vmap_fn = func
            return func
        return register if func is None else register(func)

    def register_autocast(self, device_type, cast_inputs):
        raise NotImplementedError("gradtool's engine does not support register_autocast for "
                                  "custom ops; it needs PyTorch itself (--engine torch)")

    def _kernel(self, args):
        """The kernel for the inputs' device type (register_kernel), else the default."""
        tensors = _tensors(args)
        kind = tensors[0].device.type if tensors else None
        fn = self._backend_fns.get(kind) or self._backend_fns.get(None)
        if fn is None:
            raise NotImplementedError(f"{self._qualname} has no kernel for device type "
                                      f"{kind!r} (registered: {sorted(map(str, self._backend_fns))})")
        return fn

    def _run_kernel(self, args, kwargs):
        """The kernel, below autograd (it records nothing), its result checked for aliasing
        and the arguments it declares mutated one version on (as torch's ADInplaceOrView)."""
        kernel = self._kernel(args)
        with grad_mode.no_grad():  # (forward AD is autograd too: no tangent, as in torch)
            result = forward_ad._untracked(lambda: kernel(*args, **kwargs))
        _check_aliasing(self._name, kernel, args, kwargs, result)
        mutable = set(self._op.schema.mutable_names())
        for a, value in zip(self._op.schema.arguments, list(args) + list(kwargs.values())):
            if a.name in mutable:
                for t in _tensors(value):
                    t._version_counter[0] += 1
        return result

    def _dispatch(self, args, kwargs):
        index = batching.top_level(args)
        if index:  # under vmap: torch's FuncTorchBatched key comes before autograd
            return self._batched(index, args, kwargs)
        positional = _tensors(args)
        if grad_mode.state.grad_enabled and any(t.requires_grad for t in positional) \
                and not self._op.schema.mutable_names():
            return self._autograd_function.apply(*args, _KeywordOnly(kwargs))
        return self._run_kernel(args, kwargs)

    def _batched(self, index, args, kwargs):
        """The op on arguments batched at vmap level `index`: the registered vmap rule on
        the physical arguments (whose calls of ops, this one included, run a level down),
        else torch's fallback, the op on one example at a time."""
        level = batching.level_of(index)
        if self._vmap_fn is None:
            return self._one_example_at_a_time(level, args, kwargs)
        flat, spec = tree.flatten(list(args))
        pairs = [batching.physical(a, index) if isinstance(a, Tensor) else (a, False)
                 for a in flat]
        values = tree.unflatten([v for v, _ in pairs], spec)
        in_dims = tree.unflatten([0 if flag else None for _, flag in pairs], spec)
        info = func_function.VmapInfo(level.size, level.randomness)
        result = self._vmap_fn(info, tuple(in_dims), *values, **kwargs)
        return func_function.rule_outputs_batched(result, index, pairs, flat)

    def _one_example_at_a_time(self, level, args, kwargs):
        """torch's vmap fallback: the op on each example, the results stacked."""
        index = level.index
        rules.note_fallback(self._qualname, stacklevel=7)

        def example(v, b):
            if type(v) is batching.BatchedTensor and v._level == index:
                return v._value.select(0, b)
            if isinstance(v, list):
                return [example(w, b) for w in v]
            return v
        outs = []
        with rules.looping(level):
            for b in range(level.size):
                outs.append(self._op(*(example(a, b) for a in args), **kwargs))
        if outs[0] is None:
            return None
        if isinstance(outs[0], list):
            return list(rules.rewrap_examples([tuple(o) for o in outs], index))
        return rules.rewrap_examples(outs, index)


class _KeywordOnly:
    """The keyword-only arguments, passed to the generated Function as its last positional
    argument (as torch passes its Metadata): apply() takes no keywords."""

    def __init__(self, values):
        self.values = values


def _generated_function(custom):
    """torch's generated autograd.Function of a custom op (torch/_library/autograd.py): its
    forward runs the kernel and the user's setup_context; its backward the user's backward,
    or torch's error when none was registered."""
    overload = custom._opoverload

    def forward(ctx, *args):
        *args, keyword_only = args
        keyword_only = keyword_only.values
        result = custom._run_kernel(args, keyword_only)
        if custom._setup_context_fn is not None:
            if keyword_only:
                custom._setup_context_fn(ctx=ctx, inputs=tuple(args),
                                         keyword_only_inputs=keyword_only, output=result)
            else:
                custom._setup_context_fn(ctx=ctx, inputs=tuple(args), output=result)
        return result

    def backward(ctx, *grads):
        if custom._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {overload} but no autograd "
                               f"formula was registered. Please use register_autograd to add "
                               f"one.")
        needs = ctx.needs_input_grad
        ctx.needs_input_grad = needs[:-1]  # the user's arguments, not the keyword-only holder
        try:
            result = custom._backward_fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = needs
        return (*result, None) if isinstance(result, tuple) else (result, None)

    name = f"GeneratedBackwardFor_{custom._namespace}_{custom._name}_default"
    generated = type(name, (Function,), {"forward": staticmethod(forward),
                                         "backward": staticmethod(backward),
                                         "_custom_op": custom, "__module__": __name__})
    schema = custom._op.schema
    if any(_is_tensorlist(t) for t in [a.type for a in schema.arguments] + [schema.returns]):
        _supports_tensorlist(generated)
    return generated


def _is_tensorlist(type_):
    """Tensor[], Tensor?[], Tensor[]?, Tensor?[]? (mutable ones too): what torch flattens."""
    bare = type_.replace(" ", "")
    while "(" in bare and "!)" in bare:  # Tensor(a0!)[] -> Tensor[]
        bare = bare[:bare.index("(")] + bare[bare.index("!)") + 2:]
    return any(t in bare for t in ("Tensor[]", "Tensor?[]"))


class _TensorListMetadata:
    def __init__(self, input_spec):
        self.input_spec, self.output_spec, self.result_is_tuple = input_spec, None, None


def _not_list_of_tensor(tree):
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(not isinstance(x, Tensor) for x in tree)
    return True


def _not_list_of_optional_tensor(tree):
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(x is not None and not isinstance(x, Tensor) for x in tree)
    return True


def _supports_tensorlist(cls):
    """torch's supports_tensorlist: the Function sees each tensor of a List[Tensor] argument
    (or result) as an input (output) of its own, so each gets its gradient; backward returns
    a list of gradients (None entries allowed) for a list argument."""
    forward, backward, apply = cls.forward, cls.backward, cls.apply

    def new_forward(ctx, *args):
        metadata, args = args[-1], args[:-1]
        args = tree.unflatten(list(args), metadata.input_spec)
        result = forward(ctx, *args)
        metadata.result_is_tuple = isinstance(result, tuple)
        flat, metadata.output_spec = tree.flatten(
            result if metadata.result_is_tuple else (result,), _not_list_of_tensor)
        ctx._pt_metadata = metadata
        return tuple(flat)

    def new_backward(ctx, *grads):
        metadata = ctx._pt_metadata
        grads = tree.unflatten(list(grads), metadata.output_spec)
        needs = ctx.needs_input_grad
        try:
            ctx.needs_input_grad = tree.unflatten(list(needs[:-1]), metadata.input_spec)
            grad_inputs = backward(ctx, *grads)
        finally:
            ctx.needs_input_grad = needs
        if not isinstance(grad_inputs, tuple):
            grad_inputs = (grad_inputs,)
        flat, spec = tree.flatten(grad_inputs, _not_list_of_optional_tensor)
        if spec != metadata.input_spec:
            raise RuntimeError(f"Expected the return from backward to be of the same "
                               f"structure as the inputs. Got: {tree.describe(spec)} (return "
                               f"from backward), {tree.describe(metadata.input_spec)} (inputs)")
        return tuple(flat + [None])

    def new_apply(*args):
        flat, spec = tree.flatten(args, _not_list_of_tensor)
        metadata = _TensorListMetadata(spec)
        result = apply(*flat, metadata)
        if not isinstance(result, tuple):
            result = (result,)
        result = tree.unflatten(list(result), metadata.output_spec)
        return result if metadata.result_is_tuple else result[0]

    cls.forward, cls.backward = staticmethod(new_forward), staticmethod(new_backward)
    cls.apply = staticmethod(new_apply)


_ALIAS_MESSAGE = (
    "The output of this custom operator (1) must not also be an input to this custom operator "
    "and (2) may not alias any inputs to this custom operator or other returns. The most "
    "common way to trigger this error is if we have y = custom_op(x) and y and x are the same "
    "Tensor. Please instead return a clone of the offending output tensor(s) (e.g. return "
    "x.clone()) or refactor the custom operator to not return y.")


def _check_aliasing(name, kernel, args, kwargs, result):
    """torch's check of a custom op's result: no output is, or shares memory with, an input
    or another output."""
    inputs = _tensors(args, kwargs)
    outputs = _tensors(result)
    for i, out in enumerate(outputs):
        others = inputs + outputs[:i]
        if any(out is t or _same_storage(out, t) for t in others):
            raise RuntimeError(f"{name} (with implementation in {inspect.getmodule(kernel)}): "
                               f"{_ALIAS_MESSAGE}")


def _same_storage(a, b):
    """Whether two tensors are views of one memory, as torch compares storages (two
    disjoint slices of one tensor alias too)."""
    def root(array):
        while array.base is not None:
            array = array.base
        return array
    return root(a._data) is root(b._data)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """torch.library.custom_op: wrap a Python function into an operator (a CustomOpDef),
    used as a decorator or called with the function."""
    def inner(fn):
        namespace, opname = _split_name(name)
        normalized = tuple(dict.fromkeys(_tag_tuple(tags, "custom_op()")))
        schema_text = infer_schema(fn, mutates_args=mutates_args) if schema is None \
            else schema
        result = CustomOpDef(namespace, opname, schema_text, fn, normalized)
        if schema is not None:
            expected = set(result._op.schema.mutable_names())
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}"
                    f"which is different from what was provided to us in `mutates_args`. "
                    f"Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result
    return inner if fn is None else inner(fn)


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    """torch.library.triton_op. The engine has no triton: the op is a custom_op of the Python
    function, whose wrap_triton kernels cannot run here (they raise when called)."""
    return custom_op(name, fn, mutates_args=mutates_args, schema=schema)


class _TritonKernel:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        return self

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"gradtool's engine cannot run the triton kernel "
                           f"{getattr(self.kernel, '__name__', self.kernel)!r}: there is no "
                           f"triton here. Run the file on PyTorch with --engine torch, or "
                           f"register a Python kernel (op.register_kernel('cpu'))")


def wrap_triton(triton_kernel, /):
    """torch.library.wrap_triton: the kernel, which the engine cannot run (no triton)."""
    return _TritonKernel(triton_kernel)


# ------------------------------------------------------------------ registration by name
def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    custom = _custom(op, "register_autograd")
    custom.register_autograd(backward, setup_context=setup_context)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    def register(func):
        target = _lookup(op)
        if target.custom is not None:
            target.custom.register_fake(func)
        else:
            target.fake = func
        return func
    return register if func is None else register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    custom = _custom(op, "register_kernel")
    return custom.register_kernel(device_types, func)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    return _custom(op, "register_torch_dispatch").register_torch_dispatch(torch_dispatch_class,
                                                                          func)


def _custom(op, what):
    target = _lookup(op)
    if target.custom is None:
        raise NotImplementedError(f"{what}(op): gradtool's engine supports it for ops made by "
                                  f"torch.library.custom_op; {target.qualname} was made by "
                                  f"Library.define (use lib.impl)")
    return target.custom


class Library:
    """torch.library.Library(ns, kind): "DEF" defines ops in ns, "IMPL" and "FRAGMENT"
    register kernels (FRAGMENT may define too)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on a Library of kind IMPL; use DEF "
                               "or FRAGMENT")
        parsed = FunctionSchema(schema)
        name = parsed.name.split("::")[-1].split(".")[0]
        qualname = f"{self.ns}::{name}"
        if qualname in _OPS:
            raise RuntimeError(f"Tried to register an operator ({qualname}) with the same name "
                               f"and overload name multiple times.")
        _OPS[qualname] = OpDef(self.ns, name, parsed)
        _OPS[qualname].tags = list(_tag_tuple(tags, "define()"))
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        name = op_name if isinstance(op_name, str) else _lookup(op_name).qualname
        qualname = name if "::" in name else f"{self.ns}::{name.split('.')[0]}"
        target = _lookup(qualname)
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if with_keyset:  # torch passes the dispatch keys first; the engine has none
            kernel = fn
            fn = lambda *args, **kwargs: kernel(None, *args, **kwargs)  # noqa: E731
        target.kernels[key] = fn
        if target.custom is not None and key in ("CPU", "CUDA", "CompositeExplicitAutograd"):
            target.custom.register_kernel(None if key == "CompositeExplicitAutograd"
                                          else key.lower())(fn)

    def _destroy(self):
        pass


def define(qualname, schema, *, lib=None, tags=()):
    """torch.library.define("ns::name", "(Tensor x) -> Tensor")."""
    namespace, name = _split_name(qualname)
    (lib or Library(namespace, "FRAGMENT")).define(name + schema, tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """torch.library.impl("ns::name", "cpu" | ["cpu", ...] | dispatch key)."""
    def register(func):
        target = _lookup(qualname)
        kinds = [types] if isinstance(types, str) else list(types)
        for kind in kinds:
            key = {"cpu": "CPU", "cuda": "CUDA", "default": "CompositeExplicitAutograd",
                   "meta": "Meta"}.get(kind, kind)
            Library(target.namespace, "FRAGMENT").impl(target.name, func, key)
        return func
    return register if func is None else register(func)


def get_ctx():
    raise RuntimeError("torch.library.get_ctx() is for fake kernels with data-dependent "
                       "output shapes under FakeTensor mode, which gradtool's engine does not "
                       "have")


# ------------------------------------------------------------------ opcheck
class OpCheckError(Exception):
    pass


class MetadataMismatchError(RuntimeError):
    """The fake kernel's output differs from the real kernel's (torch's error)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason

    def __repr__(self):
        return f"MetadataMismatchError(reason={self.reason!r})"


class UnsupportedOperatorException(RuntimeError):
    def __init__(self, func):
        super().__init__(func)
        self.func = func

    def __repr__(self):
        return f"UnsupportedOperatorException(func={self.func!r})"


DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
                      "test_aot_dispatch_dynamic")


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True,
            rtol=None, atol=None):
    """torch.library.opcheck on the engine: {test name: "SUCCESS" or the exception}, or
    OpCheckError at the first failure (raise_exception). Each test runs on copies of the
    inputs. The engine's versions of torch's tests:
      test_schema: the arguments an op changes (values or version) are those its schema marks
        mutable, and no output aliases an input (torch's SchemaCheckMode);
      test_autograd_registration: with an input requiring grad, an output requires grad only
        if the op has an autograd kernel (always so for custom_op);
      test_faketensor: the fake kernel, run on the inputs themselves (there is no FakeTensor
        mode), gives outputs of the real kernel's shapes, dtypes and strides;
      test_aot_dispatch_dynamic / _static: there is no compiler, so the op is run and, where
        an output requires grad, differentiated once: an error of either fails it (as in
        torch); the gradient's values are for gradcheck to judge."""
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify "
                         "both")
    target = op._op if isinstance(op, (CustomOpDef, OpOverload, OpOverloadPacket)) else None
    if target is None:
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, "
                         f"e.g. torch.ops.aten.sin.default, got {type(op)}")
    kwargs = {} if kwargs is None else kwargs
    if test_utils == "ALL":
        test_utils = tuple(_TESTS)
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(_TESTS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to "
                         f"be subset of {tuple(_TESTS)} but it was not")
    results = {}
    for name in test_utils:
        try:
            _TESTS[name](target, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as ex:  # noqa: BLE001 - the user's kernels may raise anything
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {ex} (scroll up "
                                   f"for stack trace)") from ex
            results[name] = ex
    return results


def _copied(value):
    """Tensors copied (requires_grad kept), everything else as is."""
    if isinstance(value, Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return copy.copy(value)


def _named_tensors(target, args, kwargs):
    """(argument name, tensor) for every tensor the op receives."""
    bound, keywords = target.bind(list(args), dict(kwargs))
    values = list(bound) + [keywords.get(a.name) for a in target.schema.arguments
                            if a.kwarg_only]
    names = [a.name for a in target.schema.arguments if not a.kwarg_only] + \
        [a.name for a in target.schema.arguments if a.kwarg_only]
    return [(n, t) for n, v in zip(names, values) for t in _tensors(v)]


def _test_schema(target, args, kwargs):
    args, kwargs = _copied(args), _copied(kwargs)
    named = _named_tensors(target, args, kwargs)
    before = [(t._data.copy(), t._version) for _, t in named]
    with grad_mode.no_grad():
        result = target(*args, **kwargs)
    mutable = set(target.schema.mutable_names())
    for (name, t), (data, version) in zip(named, before):
        # (a custom op's own bump of its declared arguments is no evidence: values are)
        changed = (t._version != version and target.custom is None) or \
            not _same(data, t._data)
        if changed and name not in mutable:
            raise RuntimeError(f"Argument {name} is not defined as mutable but was mutated")
    for out in _tensors(result):
        for name, t in named:
            if out is t or _same_storage(out, t):
                raise RuntimeError(f"Argument {name} is not defined to alias output but was "
                                   f"aliasing")


def _same(a, b):
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))
                                              if a.dtype.kind in "fc" else a == b))


def _test_autograd_registration(target, args, kwargs):
    args, kwargs = _copied(args), _copied(kwargs)
    inputs = _tensors(args, kwargs)
    if not any(t.requires_grad for t in inputs) or target.has_autograd():
        return
    result = target(*args, **kwargs)
    if any(t.requires_grad and not any(t is i for i in inputs) for t in _tensors(result)):
        raise AssertionError(
            f"{target.qualname}: at least one output of this operator has requires_grad=True "
            f"but the operator does not have an autograd kernel defined at an autograd key "
            f"(e.g. DispatchKey::Autograd). This could mean that you have incorrectly "
            f"registered an autograd kernel to a non-Autograd DispatchKey, which may lead to "
            f"silently incorrect results. If your operator consists of regular PyTorch "
            f"operations, consider not using an operator at all or registering your operator "
            f"as CompositeImplicitAutograd. If you have an autograd.Function registered to a "
            f"backend (CPU/CUDA/XPU) key, the correct location for it is the Autograd key.")


def _test_faketensor(target, args, kwargs):
    fake = target.fake_kernel()
    if fake is None:
        if target.schema.returns_nothing and target.custom is not None:
            return  # torch makes the trivial fake kernel of an op that returns nothing
        if target.custom is not None:
            custom = target.custom
            raise RuntimeError(f"There was no fake impl registered for {custom}. This is "
                               f"necessary for torch.compile/export/fx tracing to work. Please "
                               f"use `{custom._init_fn.__name__}.register_fake` to add an fake "
                               f"impl.")
        raise UnsupportedOperatorException(target.default)
    with grad_mode.no_grad():
        real = target(*_copied(args), **_copied(kwargs))
        fake_args, fake_kwargs = target.bind(list(_copied(args)), dict(_copied(kwargs)))
        faked = fake(*fake_args, **fake_kwargs)
    where = f"When comparing the output of {target.default} on FakeTensor and concrete Tensors"
    reals = list(real) if isinstance(real, (tuple, list)) else [real]
    fakes = list(faked) if isinstance(faked, (tuple, list)) else [faked]
    if len(reals) != len(fakes):
        raise MetadataMismatchError(f"{where}, found {len(fakes)} fake output(s) and "
                                    f"{len(reals)} real one(s)")
    for r, f in zip(reals, fakes):
        if not isinstance(r, Tensor):
            continue
        if not isinstance(f, Tensor):
            raise MetadataMismatchError(f"{where}, found a fake output of type "
                                        f"{type(f).__name__} for a real Tensor")
        reason = _metadata_mismatch(r, f)
        if reason:
            raise MetadataMismatchError(f"{where}, found mismatched tensor metadata: {reason}")


def _metadata_mismatch(real, fake):
    """torch's wording of the first difference of shape, dtype or (significant) strides."""
    if tuple(real.shape) != tuple(fake.shape):
        return f"Shapes {real.shape} and {fake.shape} are not equal!"
    if real.dtype != fake.dtype:
        return f"Dtypes {real.dtype} and {fake.dtype} are not equal!"
    a, b = real.stride(), fake.stride()
    for i, n in enumerate(real.shape):
        if n > 1 and a[i] != b[i]:  # a dim of size 1 has no stride that matters (as torch)
            return f"Stride mismatch! Strides are {a} and {b} (mismatched at {i})!"
    return ""


def _test_aot_dispatch(target, args, kwargs):
    if target.custom is None and target.fake_kernel() is None:
        raise UnsupportedOperatorException(target.default)  # torch traces with fake tensors
    args, kwargs = _copied(args), _copied(kwargs)
    result = target(*args, **kwargs)
    outputs = [t for t in _tensors(result) if t.requires_grad]
    inputs = [t for t in _tensors(args, kwargs) if t.requires_grad]
    if not (outputs and inputs and grad_mode.state.grad_enabled):
        return
    # torch traces the program with fake tensors: its gradients have the fake kernel's
    # shapes and dtypes, so a wrong fake kernel breaks the backward here as there
    described = outputs
    fake = target.fake_kernel()
    if fake is not None:
        with grad_mode.no_grad():
            fake_args, fake_kwargs = target.bind(list(_copied(args)), dict(_copied(kwargs)))
            fakes = _tensors(fake(*fake_args, **fake_kwargs))
        if len(fakes) == len(_tensors(result)):
            described = [f for f, t in zip(fakes, _tensors(result)) if t.requires_grad]
    from .autograd import grad
    from .autograd.creation import ones
    grad(outputs, inputs, [ones(tuple(t.shape), dtype=t.dtype) for t in described],
         allow_unused=True)


_TESTS = {"test_schema": _test_schema,
          "test_autograd_registration": _test_autograd_registration,
          "test_faketensor": _test_faketensor,
          "test_aot_dispatch_static": _test_aot_dispatch,
          "test_aot_dispatch_dynamic": _test_aot_dispatch}


from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
