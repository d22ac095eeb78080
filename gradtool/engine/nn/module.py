"""nn.Module: parameters, buffers and submodules registered by attribute assignment, train and
eval modes, state_dict, forward hooks; and the link from graph nodes back to the module whose
forward created them (`node.metadata["module"]`), which lets the CLI group a graph by module."""
import collections
import collections.abc
import functools
import itertools
import threading
import typing
import warnings
import weakref

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.node import AccumulateGrad, RemovableHandle
from ..autograd.tensor import Tensor
from .parameter import Buffer, Parameter, is_lazy


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys",
                                               ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# torch.nn.Module's public names that gradtool's Module lacks (tests/parity/test_torch_names.py
# keeps the list current): named as torch's when asked for, where any other missing attribute
# is the user's own (a misspelled layer) and torch's plain AttributeError.
# share_memory: the engine's tensors are copied into another process, never shared.
TORCH_METHODS_NOT_HERE = frozenset()  # (none since share_memory, ipu, xpu and mtia)

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"  # get_extra_state's key in the state_dict, as torch's


class Module:
    """Base class of every layer and model: subclasses set parameters and submodules as
    attributes in `__init__` and compute in `forward`; call the module, not `forward`, so
    that hooks run and the graph nodes get tagged with the module."""

    dump_patches = False
    _version = 1  # saved in state_dict's _metadata: _load_from_state_dict may read it
    call_super_init = False  # True: __init__ passes its arguments on (cooperative mixins)
    T_destination = typing.TypeVar("T_destination", bound=dict)

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__  # set directly: __setattr__ needs these stores to exist first
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = []
        d["_forward_hooks"] = []
        d["_backward_pre_hooks"] = []
        d["_backward_hooks"] = []
        d["_is_full_backward_hook"] = None  # which kind _backward_hooks holds (never both)
        d["_state_dict_pre_hooks"] = []
        d["_state_dict_hooks"] = []
        d["_load_state_dict_pre_hooks"] = []
        d["_load_state_dict_post_hooks"] = []
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        calls = _calls
        frame = calls.top = _Frame(self, calls.top)
        try:
            # the inputs' history ends the walk that tags this call's nodes (see _tag_graph);
            # taken before forward, which may modify an input in place
            boundary = _grad_fns(args, kwargs)
            if not (_global_forward_pre_hooks or _global_forward_hooks
                    or _global_backward_pre_hooks or _global_backward_hooks
                    or d.get("_forward_pre_hooks", True) or d.get("_forward_hooks", True)
                    or d.get("_backward_pre_hooks", True) or d.get("_backward_hooks", True)):
                result = self.forward(*args, **kwargs)  # no hook anywhere: the common case
                _tag_graph(frame, result, boundary)
                return result
            full_hooks, old_hooks = self._get_backward_hooks()
            pre_hooks = _global_backward_pre_hooks + d.get("_backward_pre_hooks", [])
            for hook, with_kwargs in _global_forward_pre_hooks + self._forward_pre_hooks:
                if with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        args, kwargs = out
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            full = None
            if full_hooks or pre_hooks:
                full = _FullBackwardHook(self, full_hooks, pre_hooks)
                args = full.wrap_inputs(args)
            result = self.forward(*args, **kwargs)
            for hook, with_kwargs in _global_forward_hooks + self._forward_hooks:
                out = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
                if out is not None:
                    result = out
            if full is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(f"For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}",
                                  stacklevel=2)
                result = full.wrap_outputs(result)
            if old_hooks:
                _hook_output_node(self, args, result, old_hooks)
            _tag_graph(frame, result, boundary)
            return result
        finally:
            calls.top = frame.parent

    # ---------------- registration ----------------
    def __getattr__(self, name):  # only reached when normal lookup fails
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            values = d.get(store)
            if values is not None and name in values:
                return values[name]
        if name in TORCH_METHODS_NOT_HERE:  # torch's, gradtool's engine lacks it: say so
            from ..errors import NotInEngineAttributeError
            raise NotInEngineAttributeError(f"torch.nn.Module.{name}", name=name, obj=self)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params, buffers, modules = d.get("_parameters"), d.get("_buffers"), d.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=params)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(gradtool.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Buffer):  # nn.Buffer(t): registered as a buffer
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, keep=buffers)
            self.register_buffer(name, value, persistent=value.persistent)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=modules)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                f"(gradtool.nn.Module or None expected)")
            modules[name] = None
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                f"(gradtool.Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def _forget(self, name, keep):
        """Drop `name` from every store but `keep`, the one it is registered in next (where a
        replaced entry keeps its place, as torch's)."""
        self.__dict__.pop(name, None)
        for store in (self._parameters, self._buffers, self._modules):
            if store is not keep:
                store.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def _check_name(self, kind, name, store):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if name not in store and _has_attribute(self, name):
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        """Add a parameter (a Parameter, or None for an absent one such as `bias=False`)."""
        self._check_name("parameter", name, self.__dict__.get("_parameters", {}))
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            f"(gradtool.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is state but not a parameter (BatchNorm's running_mean): saved in
        state_dict unless persistent=False, converted by .double()/.to(), never optimised."""
        self._check_name("buffer", name, self.__dict__.get("_buffers", {}))
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(gradtool.Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module (or None) under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self.__dict__.get("_modules", {}))
        self._modules[name] = module

    register_module = add_module

    def set_submodule(self, target, module, strict=False):
        """Put `module` at a dotted path whose parent exists (strict: replace only)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The Parameter at a dotted path such as "encoder.fc1.weight"."""
        return self._get_member(target, "nn.Parameter",
                                lambda module, name, value: isinstance(value, Parameter))

    def get_buffer(self, target):
        """The buffer at a dotted path such as "bn.running_mean"."""
        return self._get_member(target, "buffer",
                                lambda module, name, value: name in module._buffers)

    def _get_member(self, target, kind, is_kind):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        value = getattr(module, name)
        if not is_kind(module, name, value):
            raise AttributeError(f"`{name}` is not {'an' if kind[0] in 'n' else 'a'} {kind}")
        return value

    def get_submodule(self, target):
        """The submodule at a dotted path such as "encoder.fc1" ("" is self)."""
        module = self
        for item in target.split(".") if target else ():
            if item not in module._modules:
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = module._modules[item]
        return module

    # ---------------- iteration ----------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(qualified name, module) for self and every submodule, depth first; a module
        registered twice appears once unless remove_duplicate=False."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        seen = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(qualified name, Parameter) pairs, each shared parameter once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """The parameters themselves (not copies): what an optimizer updates in place."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---------------- modes and gradients ----------------
    def compile(self, *args, **kwargs):
        """Compile the module's calls in place: here they run eagerly, as every compiled call
        on the engine (gradtool/engine/compiler.py); the settings are checked as torch's."""
        from .compiled import check_settings
        check_settings(kwargs.get("backend", "inductor"), kwargs.get("mode"),
                       kwargs.get("options"))

    def train(self, mode=True):
        """Set training mode here and in every submodule (Dropout drops, BatchNorm uses batch
        statistics). Independent of grad mode: it changes what forward computes, not
        whether it is recorded."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """train(False): Dropout is the identity, BatchNorm uses its running statistics.
        Gradients are still recorded: use no_grad() as well to stop that."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Switch requires_grad on every parameter (e.g. to freeze part of a model)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the parameters' .grad: to None (the default, as torch), or to zeros in place."""
        for p in self.parameters():
            _reset_grad(p, set_to_none)

    # ---------------- conversion ----------------
    def apply(self, fn):
        """Call fn on every submodule, then on self (e.g. a custom initialisation)."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Convert parameters (keeping the Parameter objects, as torch does by default) and
        buffers with fn."""
        for module in self.children() if recurse else ():
            module._apply(fn)
        if not (self._parameters or self._buffers):
            return self  # (most modules of a deep model hold only submodules)
        with no_grad():
            for p in self._parameters.values():
                if p is not None:
                    p.data = fn(p)
                    if p._grad is not None:
                        p._grad = fn(p._grad)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """to(dtype), to(device, dtype), to(tensor): converts floating point parameters and
        buffers; the device must be the CPU (the only one gradtool has)."""
        from ..autograd.device import parse_to
        kwargs = dict(kwargs)
        fmt = kwargs.pop("memory_format", None)  # (for the 4-d and 5-d ones, as torch's)
        dtype, _ = parse_to(args, kwargs)
        if dtype is None and fmt is None:
            return self

        def convert(t):
            if fmt is not None and t.dim() in (4, 5):
                t = t.to(memory_format=fmt)
            return t.to(dtype) if dtype is not None and t.is_floating_point() else t
        return self._apply(convert)

    def type(self, dst_type):
        """Every parameter and buffer cast to dst_type, integer ones too (unlike .to(dtype),
        which casts the floating ones only)."""
        return self._apply(lambda t: t.type(dst_type))

    def double(self):
        from ..autograd.dtypes import float64
        return self.to(float64)

    def float(self):
        from ..autograd.dtypes import float32
        return self.to(float32)

    def half(self):
        from ..autograd.dtypes import float16
        return self.to(float16)

    def bfloat16(self):
        """The floating point tensors in bfloat16, which the engine names but cannot compute
        in: a module with any raises the engine's clear error (--engine torch has them)."""
        from ..autograd.dtypes import bfloat16
        return self.to(bfloat16)

    def to_empty(self, *, device, recurse=True):
        """Every parameter and buffer replaced by an uninitialised one of its shape and dtype
        (the Parameter objects kept, as _apply keeps them); device is checked, as .to's."""
        from ..autograd.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        return self

    def cuda(self, device=None):
        from ..autograd.device import check
        check("cuda" if device is None else device)
        return self

    # torch's CPU build refuses these moves for any parameter or buffer (Tensor.ipu, ...)
    def ipu(self, device=None):
        return self._apply(lambda t: t.ipu(device))

    def xpu(self, device=None):
        return self._apply(lambda t: t.xpu(device))

    def mtia(self, device=None):
        return self._apply(lambda t: t.mtia(device))

    def share_memory(self):
        """Every parameter, gradient and buffer moved into shared memory (Tensor.share_memory_)."""
        return self._apply(lambda t: t.share_memory_())

    # ---------------- state_dict ----------------
    def get_extra_state(self):
        """Override it (with set_extra_state) to save any picklable value in the state_dict,
        under "<prefix>_extra_state"."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called. Please file an issue at https://github.com/pytorch/"
                           "pytorch/issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        """Override it to take back what get_extra_state saved."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called. Please file an issue at https://github.com/pytorch/"
                           "pytorch/issues/new?template=bug-report.yml to report this bug.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries (not its children's): state_dict calls it on every module,
        and subclasses override it to save differently."""
        for name, p in self._parameters.items():  # (a lazy module's uninitialized ones as
            if p is not None:                      # they are: they cannot be detached)
                destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
        if _overrides(self, "get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """{qualified name: tensor} for parameters and persistent buffers. The tensors share
        memory with the module's (detached unless keep_vars): copy them to keep a snapshot.
        Its `_metadata` holds each module's `_version` for _load_from_state_dict."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in tuple(self._state_dict_pre_hooks):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in tuple(self._state_dict_hooks):
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:  # the private hook may replace the dict
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries (not its children's) from state_dict and record
        what is missing, unexpected or wrong; load_state_dict calls it on every module, and
        subclasses override it (e.g. to convert an older `version` in local_metadata)."""
        for hook in tuple(self._load_state_dict_pre_hooks):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {k: v for k, v in itertools.chain(
            self._parameters.items(),
            ((k, b) for k, b in self._buffers.items() if k not in self._non_persistent_buffers_set))
            if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                continue
            if is_lazy(param) and not is_lazy(value):
                param.materialize(value.shape)  # a lazy module takes the shape loaded
            if param.dim() == 0 and value.shape == (1,):
                value = value[0]
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        elif isinstance(param, Parameter):
                            value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f'in the model are {param.size()} and whose dimensions in '
                                  f'the checkpoint are {value.size()}, an exception occurred : '
                                  f'{ex.args}.')
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if _overrides(self, "set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    if (head[0] not in self._modules if len(head) > 1
                            else head[0] not in local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values into the existing parameters and buffers, in place under no_grad (so
        optimizers keep pointing at them; assign=True puts the given tensors in instead).
        Returns (missing_keys, unexpected_keys); with strict, any of those or a shape mismatch
        raises, as in torch."""
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)  # hooks may edit the lists in place
            for hook in tuple(module._load_state_dict_post_hooks):
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")
        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              f"{', '.join(_quoted(k) for k in unexpected)}. ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              f"{', '.join(_quoted(k) for k in missing)}. ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs before state_dict saves this module."""
        return _add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) runs after state_dict saved this
        module and its children; it may edit the dict in place, and must return None."""
        hook._from_public_api = True
        return _add_hook(self._state_dict_hooks, hook, False)

    def _register_state_dict_hook(self, hook):
        """The older post-hook: as register_state_dict_post_hook's, but what it returns
        replaces the dict (respected at the module state_dict was called on)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return _add_hook(self._state_dict_hooks, hook, False)

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) runs before this module's entries are loaded."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """As register_load_state_dict_pre_hook, the module left out unless with_module."""
        return _add_hook(self._load_state_dict_pre_hooks,
                         _WrappedHook(hook, self if with_module else None), False)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after load_state_dict loaded this module; it
        may edit incompatible_keys' lists in place (which strict then sees)."""
        return _add_hook(self._load_state_dict_post_hooks, hook, False)

    # ---------------- hooks ----------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) runs before forward and may return new args (a tuple, or one
        value); with_kwargs: hook(module, args, kwargs) returning (args, kwargs) or None."""
        return _add_hook(self._forward_pre_hooks, (hook, with_kwargs), prepend)

    def register_backward_hook(self, hook):
        """Deprecated (torch's words, warned at the call where they apply): hook(module,
        grad_input, grad_output) runs when the gradient reaches the node that made the
        module's first output tensor, with that node's gradients: the module's own only when
        the forward is one node."""
        self._set_backward_hook_kind(False)
        return _add_hook(self._backward_hooks, hook, False)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) runs once the gradients w.r.t. the module's
        tensor inputs are computed (None for a non-tensor input); it may return replacements
        for grad_input. With no input requiring grad it runs at the outputs, grad_input all
        None. The call records a BackwardHookFunctionBackward node on the inputs and one on
        the outputs, as torch's."""
        self._set_backward_hook_kind(True)
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) runs when the gradients w.r.t. the module's outputs are
        computed, before the module's backward; it may return replacements for grad_output."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def _set_backward_hook_kind(self, full):
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = full

    def _get_backward_hooks(self):
        """(full hooks, old-style hooks) for a call: the module-global ones first."""
        own = self.__dict__.get("_backward_hooks", [])
        kind = self.__dict__.get("_is_full_backward_hook")
        full = ((_global_backward_hooks if _global_is_full_backward_hook is True else [])
                + (own if kind is True else []))
        old = ((_global_backward_hooks if _global_is_full_backward_hook is False else [])
               + (own if kind is False else []))
        return full, old

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args, output) runs after forward and may return a new output;
        with_kwargs: hook(module, args, kwargs, output)."""
        return _add_hook(self._forward_hooks, (hook, with_kwargs), prepend)

    # ---------------- printing ----------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside the parentheses of this module's repr line (override it)."""
        return ""

    def __repr__(self):  # torch's layout: one line per child, indented by two spaces
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + repr(module).replace("\n", "\n  ")
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _quoted(key):
    return f'"{key}"'


def _typename(value):
    if isinstance(value, Tensor):
        return f"gradtool.{type(value).__name__}"
    return f"{type(value).__module__}.{type(value).__name__}"


def _hook_output_node(module, inputs, result, hooks):
    """register_backward_hook's hooks on the node of the module's first output tensor, and
    torch's warnings where that node's gradients are not the module's."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(
            var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(lambda grad_input, grad_output, hook=hook:
                              hook(module, grad_input, grad_output))
    results = (result,) if isinstance(result, Tensor) else result
    message = None
    if not (isinstance(results, tuple) and all(isinstance(r, Tensor) for r in results)):
        message = ("Using non-full backward hooks on a Module that does not return a single "
                   "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                   "versions. This hook will be missing some of the grad_output. Please use "
                   "register_full_backward_hook to get the documented behavior.")
    elif not all(isinstance(i, Tensor) for i in inputs):
        message = ("Using non-full backward hooks on a Module that does not take as input a "
                   "single Tensor or a tuple of Tensors is deprecated and will be removed in "
                   "future versions. This hook will be missing some of the grad_input. Please "
                   "use register_full_backward_hook to get the documented behavior.")
    else:
        output_nodes = {r.grad_fn for r in results if r.grad_fn is not None}
        if len(output_nodes) > 1:
            message = ("Using a non-full backward hook when outputs are generated by different "
                       "autograd Nodes is deprecated and will be removed in future versions. "
                       "This hook will be missing some grad_output. Please use "
                       "register_full_backward_hook to get the documented behavior.")
        elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {
                n[0] for n in grad_fn.next_functions}:
            message = ("Using a non-full backward hook when the forward contains multiple "
                       "autograd Nodes is deprecated and will be removed in future versions. "
                       "This hook will be missing some grad_input. Please use "
                       "register_full_backward_hook to get the documented behavior.")
    if message:
        warnings.warn(message, FutureWarning, stacklevel=3)


# ---------------- full backward hooks ----------------
class BackwardHookFunction(Function):
    """Returns its tensors as they are: its nodes (BackwardHookFunctionBackward, as torch's)
    give the full backward hooks the gradients w.r.t. a module's inputs and outputs."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class _FullBackwardHook:
    """One module call's full backward hooks (torch's BackwardHook): the outputs' node keeps
    grad_output (after the pre-hooks) until the inputs' node calls the hooks with both."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_index = self.output_index = None

    def wrap_inputs(self, args):
        args, self.input_index = self._through_function(args, self._on_inputs)
        self.n_inputs = len(args)
        return args

    def wrap_outputs(self, result):
        single = not isinstance(result, tuple)
        outputs, self.output_index = self._through_function(
            (result,) if single else result, self._on_outputs)
        self.n_outputs = 1 if single else len(outputs)
        return outputs[0] if single else outputs

    def _through_function(self, args, register):
        """args with its tensors passed through one BackwardHookFunction, whose node gets
        `register`ed; unchanged (index None) when none requires grad."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (any(args[i].requires_grad for i in index) and is_grad_enabled()):
            return args, None
        wrapped = BackwardHookFunction.apply(*(args[i] for i in index))
        node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
        register(node)
        out = list(args)
        for i, t in zip(index, wrapped):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), index

    @staticmethod
    def _pack(index, values, size):
        packed = [None] * size
        for i, value in zip(index, values):
            packed[i] = value
        return tuple(packed)

    def _on_inputs(self, node):
        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None
            grads = self._pack(self.input_index, grad_input, self.n_inputs)
            for user_hook in self.hooks:
                out = user_hook(self.module, grads, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(grads):
                    raise RuntimeError(f"Backward hook returned an invalid number of "
                                       f"grad_input, got {len(out)}, but expected {len(grads)}")
                grads = out
            self.grad_outputs = None
            return tuple(grads[i] for i in self.input_index)
        node.register_hook(hook)

    def _on_outputs(self, node):
        def prehook(grad_output):
            self.grad_outputs = self._pack(self.output_index, grad_output, self.n_outputs)
            for pre_hook in self.pre_hooks:
                out = pre_hook(self.module, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(self.grad_outputs):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(out)}, but expected "
                                       f"{len(self.grad_outputs)}")
                self.grad_outputs = out
            grad_outputs = self.grad_outputs
            if self.input_index is None:  # no input requires grad: the hooks run here
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. "
                              "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                              "Module.html#torch.nn.Module.register_full_backward_hook for "
                              "more details.", stacklevel=5)
                grad_inputs = (None,) * self.n_inputs
                for user_hook in self.hooks:
                    out = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if out is not None and not (isinstance(out, tuple)
                                                and all(g is None for g in out)):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for "
                                           "all gradients.")
                self.grad_outputs = None
            return tuple(grad_outputs[i] for i in self.output_index)
        node.register_prehook(prehook)


class _WrappedHook:
    """A hook called with its module first (torch's, for the load_state_dict pre-hooks)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.module = None if module is None else weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.module is None:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)


# ---------------- hooks on every module (torch.nn.modules.module's) ----------------
_global_forward_pre_hooks = []
_global_forward_hooks = []
_global_backward_pre_hooks = []
_global_backward_hooks = []
_global_is_full_backward_hook = None  # which kind _global_backward_hooks holds


def register_module_forward_pre_hook(hook):
    """hook(module, args) before every module's forward, before the module's own."""
    return _add_hook(_global_forward_pre_hooks, (hook, False), False)


def register_module_forward_hook(hook, *, with_kwargs=False):
    """hook(module, args, output) after every module's forward, before the module's own.
    (torch's always_call, a hook also run when forward raises, is not here: passing it is
    Python's TypeError, where ignoring it would change what runs.)"""
    return _add_hook(_global_forward_hooks, (hook, with_kwargs), False)


def register_module_full_backward_pre_hook(hook):
    """A full backward pre-hook on every module, run before the module's own."""
    return _add_hook(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook):
    """A full backward hook on every module, run before the module's own."""
    _set_global_backward_hook_kind(True)
    return _add_hook(_global_backward_hooks, hook, False)


def register_module_backward_hook(hook):
    """The deprecated backward hook on every module."""
    _set_global_backward_hook_kind(False)
    return _add_hook(_global_backward_hooks, hook, False)


def _set_global_backward_hook_kind(full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def _overrides(module, method):
    """Whether module's class defines its own `method` (get_extra_state, set_extra_state)."""
    return getattr(type(module), method, None) is not getattr(Module, method)


def _add_hook(hooks, entry, prepend):
    hooks.insert(0, entry) if prepend else hooks.append(entry)
    return RemovableHandle(hooks, entry)


def _has_attribute(module, name):
    """hasattr(module, name) without its usual miss (a new name being registered) raising
    and catching __getattr__'s AttributeError, which costs more than the registration."""
    d = module.__dict__
    if name in d or hasattr(type(module), name):
        return hasattr(module, name)  # (a property may still raise AttributeError)
    return (name in (d.get("_parameters") or ()) or name in (d.get("_buffers") or ())
            or name in (d.get("_modules") or ()))


def _reset_grad(p, set_to_none):
    """torch's zero_grad for one tensor: drop .grad, or zero it in place, detached."""
    grad = p._grad
    if grad is None:
        return
    if set_to_none:
        p.grad = None
        return
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    grad.zero_()


def _tensors(obj):
    """The tensors in a forward's arguments or result (nested tuples, lists, dicts)."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for item in obj for t in _tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _tensors(item)]
    return []


def _grad_fns(args, kwargs):
    """The grad_fns of a call's input tensors (None for a leaf)."""
    if not kwargs and len(args) == 1 and isinstance(args[0], Tensor):  # most calls: one tensor
        return {args[0].grad_fn}
    return {t.grad_fn for t in _tensors((args, kwargs))}


# ---------------- which module made which graph node ----------------
class _Frame:
    """One module call in progress. Its qualified name is the module's name in the outermost
    module being called (the model), worked out only when a node needs tagging."""

    __slots__ = ("module", "parent", "call_id", "jumps", "_root_names", "_child_names", "_tag")

    def __init__(self, module, parent):
        self.module, self.parent = module, parent
        self.call_id = next(_call_ids)  # tells two calls of one module apart; increases with time
        self.jumps = None  # {inner call's output node: where that call's walk stopped}
        self._root_names = None  # only the root frame's: {id(module): qualified name}
        self._child_names = None  # {id(child module): its key}, made when a child is called
        self._tag = None

    def tag(self):
        """The metadata entries for nodes this call creates (built once per call)."""
        if self._tag is None:
            outer = self.parent.tag() if self.parent is not None else {}
            name = self._name()
            self._tag = {"module": name, "module_type": type(self.module).__name__,
                         "nn_module_stack": outer.get("nn_module_stack", ())
                         + ((name, self.module),),
                         "module_calls": outer.get("module_calls", ()) + (self.call_id,)}
        return self._tag

    def _name(self):
        parent = self.parent
        if parent is None:
            return ""
        prefix = parent.tag()["module"]
        prefix += "." if prefix else ""
        # mostly, a caller's own child: looked up, not searched (a Sequential of 1,500
        # blocks would scan its children once per block)
        if parent._child_names is None:
            parent._child_names = {}
            for key, module in parent.module._modules.items():
                parent._child_names.setdefault(id(module), key)  # the first key, as a scan
        key = parent._child_names.get(id(self.module))
        if key is None or parent.module._modules.get(key) is not self.module:
            # (its children changed since: a child registered during forward)
            key = next((k for k, m in parent.module._modules.items() if m is self.module), None)
        if key is not None:
            return prefix + key
        root = parent
        while root.parent is not None:
            root = root.parent
        if root._root_names is None:
            root._root_names = {id(m): n for n, m in root.module.named_modules()}
        name = root._root_names.get(id(self.module))
        # else it was called from a forward without being registered in the model
        return name if name is not None else prefix + type(self.module).__name__


_call_ids = itertools.count()


class _CallStack(threading.local):
    def __init__(self):
        self.top = None  # the innermost module call in progress (a _Frame)


_calls = _CallStack()
_NO_JUMPS = {}


def _tag_graph(frame, result, boundary):
    """Tag the nodes this module call created: those reachable from the result's grad_fn
    without passing the inputs' grad_fns (the boundary). Inner modules return first and tag
    their own nodes (the innermost module wins); each reports to its caller's frame, under
    its output nodes, the nodes where its walk stopped, so the caller jumps over the inner
    region instead of walking it again. AccumulateGrad nodes are tagged only for the
    module's own parameters (a user's input leaf belongs to no module).
    Cost: each node is visited by the one call that created it, plus one visit per inner
    call's output node; nothing outside the call is walked."""
    if isinstance(result, Tensor):  # most calls: one tensor
        root = result.grad_fn
        roots = (root,) if root is not None and root not in boundary else ()
    else:
        roots = tuple(n for n in (t.grad_fn for t in _tensors(result))
                      if n is not None and n not in boundary)
    if not roots:
        return  # no graph (no_grad), or the module returned its input as it is
    jumps = frame.jumps or _NO_JUMPS  # (only read: most calls have no inner call)
    seen = set()
    stops = []  # where this walk ended: the caller continues from here
    own = None
    tag = None
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node in boundary:
            stops.append(node)
            continue
        if node in jumps:  # an inner call's output: its region is tagged already
            stack.extend(jumps[node])
            continue
        if type(node) is AccumulateGrad:
            if own is None:
                own = {id(p) for p in frame.module._parameters.values()}
            if id(node.variable) not in own:
                stops.append(node)  # perhaps a parameter of an enclosing module
                continue
        meta = node._metadata  # (Node.metadata's store, read without making one)
        if meta is None or "module" not in meta:
            if tag is None:
                tag = frame.tag()
            if meta is None:
                node._metadata = dict(tag)  # each node its own dict, as torch's metadata
            else:
                meta.update(tag)
        for child, _ in node.next_functions:
            if child is not None:
                stack.append(child)
    if frame.parent is not None:
        if frame.parent.jumps is None:
            frame.parent.jumps = {}
        for root in roots:
            frame.parent.jumps[root] = stops
