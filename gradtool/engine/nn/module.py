"""nn.Module: parameters, buffers and submodules registered by attribute assignment, train and
eval modes, state_dict, forward hooks; and the link from graph nodes back to the module whose
forward created them (`node.metadata["module"]`), which lets the CLI group a graph by module."""
import collections
import itertools
import threading
import warnings

from ..autograd.grad_mode import no_grad
from ..autograd.node import AccumulateGrad, RemovableHandle
from ..autograd.tensor import Tensor
from .parameter import Parameter


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
TORCH_METHODS_NOT_HERE = frozenset("""
    T_destination bfloat16 call_super_init dump_patches get_buffer get_extra_state
    get_parameter ipu mtia register_full_backward_hook
    register_full_backward_pre_hook register_load_state_dict_post_hook
    register_load_state_dict_pre_hook register_state_dict_post_hook
    register_state_dict_pre_hook set_extra_state set_submodule share_memory to_empty xpu""".split())


class Module:
    """Base class of every layer and model: subclasses set parameters and submodules as
    attributes in `__init__` and compute in `forward`; call the module, not `forward`, so
    that hooks run and the graph nodes get tagged with the module."""

    def __init__(self):
        d = self.__dict__  # set directly: __setattr__ needs these stores to exist first
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = []
        d["_forward_hooks"] = []

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        frame = _calls.push(self)
        try:
            # the inputs' history ends the walk that tags this call's nodes (see _tag_graph);
            # taken before forward, which may modify an input in place
            boundary = {t.grad_fn for t in _tensors((args, kwargs))}
            for hook, with_kwargs in tuple(self._forward_pre_hooks):
                if with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        args, kwargs = out
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            result = self.forward(*args, **kwargs)
            for hook, with_kwargs in tuple(self._forward_hooks):
                out = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
                if out is not None:
                    result = out
            if self.__dict__.get("_backward_hooks"):
                _hook_output_node(self, args, result)
            _tag_graph(frame, result, boundary)
            return result
        finally:
            _calls.pop()

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
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(gradtool.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
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
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def _forget(self, name):
        """Drop `name` from every store, before it is registered in one of them."""
        self.__dict__.pop(name, None)
        for store in (self._parameters, self._buffers, self._modules):
            store.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def _check_name(self, kind, name, store):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in store:
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
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name, module):
        """Add a child module (or None) under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name("module", name, self.__dict__.get("_modules", {}))
        self._modules[name] = module

    register_module = add_module

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

    def _apply(self, fn):
        """Convert parameters (keeping the Parameter objects, as torch does by default) and
        buffers with fn."""
        for module in self.children():
            module._apply(fn)
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

    def cpu(self):
        return self

    def cuda(self, device=None):
        from ..autograd.device import check
        check("cuda" if device is None else device)
        return self

    # ---------------- state_dict ----------------
    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """{qualified name: tensor} for parameters and persistent buffers. The tensors share
        memory with the module's (detached unless keep_vars): copy them to keep a snapshot."""
        if destination is None:
            destination = collections.OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Copy values into the existing parameters and buffers, in place under no_grad (so
        optimizers keep pointing at them). Returns (missing_keys, unexpected_keys); with
        strict, any of those or a shape mismatch raises, as in torch."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        with no_grad():
            for key, target in own.items():
                if key not in state_dict:
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected '
                                  f'gradtool.Tensor from checkpoint but received '
                                  f'{type(value).__name__}')
                elif value.shape != target.shape:
                    errors.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {target.shape}.")
                else:
                    target.copy_(value)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              f"{', '.join(_quoted(k) for k in unexpected)}. ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              f"{', '.join(_quoted(k) for k in missing)}. ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

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
        hooks = self.__dict__.setdefault("_backward_hooks", [])
        return _add_hook(hooks, hook, False)

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


def _hook_output_node(module, inputs, result):
    """register_backward_hook's hooks on the node of the module's first output tensor, and
    torch's warnings where that node's gradients are not the module's."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(
            var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in tuple(module._backward_hooks):
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


def _add_hook(hooks, entry, prepend):
    hooks.insert(0, entry) if prepend else hooks.append(entry)
    return RemovableHandle(hooks, entry)


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
        self.top = None

    def push(self, module):
        self.top = _Frame(module, self.top)
        return self.top

    def pop(self):
        self.top = self.top.parent


_calls = _CallStack()


def _tag_graph(frame, result, boundary):
    """Tag the nodes this module call created: those reachable from the result's grad_fn
    without passing the inputs' grad_fns (the boundary). Inner modules return first and tag
    their own nodes (the innermost module wins); each reports to its caller's frame, under
    its output nodes, the nodes where its walk stopped, so the caller jumps over the inner
    region instead of walking it again. AccumulateGrad nodes are tagged only for the
    module's own parameters (a user's input leaf belongs to no module).
    Cost: each node is visited by the one call that created it, plus one visit per inner
    call's output node; nothing outside the call is walked."""
    roots = [n for n in (t.grad_fn for t in _tensors(result))
             if n is not None and n not in boundary]
    if not roots:
        return  # no graph (no_grad), or the module returned its input as it is
    jumps = frame.jumps or {}
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
        meta = node.metadata
        if "module" not in meta:
            if tag is None:
                tag = frame.tag()
            meta.update(tag)
        for child, _ in node.next_functions:
            if child is not None:
                stack.append(child)
    if frame.parent is not None:
        if frame.parent.jumps is None:
            frame.parent.jumps = {}
        for root in roots:
            frame.parent.jumps[root] = stops
