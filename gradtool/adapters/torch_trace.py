"""The forward trace on real PyTorch (`--engine torch`): what adapters/trace.py's ForwardTrace
records on gradtool's engine, recorded through torch's own extension points: a
TorchFunctionMode sees every op (and `.detach()`, `.item()`, `.data`, ...), global module
hooks see which nn.Module is running, and `Function.apply` is wrapped while the trace lasts
(torch does not route it through the mode). Nodes made inside a module call get gradtool's
module tags in their `metadata`, as gradtool's nn gives them, so graphs group by module."""
import itertools
import os
import sys

import torch
from torch.overrides import TorchFunctionMode

from ..engine import frames
from .trace import OpEvent, TraceRecords, called_by_user, narrowing

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_FUNCTION_PY = os.path.join(_TORCH_DIR, "autograd", "function.py")
_LIBRARY = (os.path.join(_TORCH_DIR, "nn", ""), os.path.join(_TORCH_DIR, "optim", ""))
_CUTTING = {"detach": ("detach", ".detach()"), "item": ("item", ".item()"),
            "tolist": ("tolist", ".tolist()"), "numpy": ("numpy", ".numpy()")}
_call_ids = itertools.count()


def user_site():
    """(filename, lineno, function) of the innermost frame outside torch and gradtool."""
    return frames.user_site(sys._getframe(1), also=(_TORCH_DIR,))


def _called_by_user():
    # torch's nn and optim are its library; gradtool's frames are the recording's
    return called_by_user(_FUNCTION_PY, lambda f: f.startswith(_LIBRARY),
                          lambda f: f.startswith(_TORCH_DIR) or frames.is_gradtool(f))


def _tensors(value, found):
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensors(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors(v, found)
    return found


def _precision(t):
    d = t.dtype
    return (d.itemsize * 8 if d.is_floating_point else d.itemsize * 4 if d.is_complex else 0,
            str(d).replace("torch.", ""))


def _finite(t):
    # a meta tensor has no values to be NaN
    return not t.is_floating_point() or t.is_meta or bool(torch.isfinite(t).all())


def run_users_op(func, args, kwargs):
    """The op the user's code called, run: what it raises (a shape error in torch's C code)
    is the user's, never the recording's (frames.RUNS_USERS_OP names this function)."""
    return func(*args, **kwargs)


assert run_users_op.__name__ == frames.RUNS_USERS_OP


def _inside_functorch():
    """Whether a torch.func transform (vmap, grad, jacrev, jvp, ...) is running: its tensors
    are wrappers whose values cannot be read (vmap refuses bool() of a batched tensor as
    data-dependent control flow), so the trace records the op without reading values."""
    return torch._C._functorch.peek_interpreter_stack() is not None


# What the trace reads of a tensor (requires_grad, grad_fn, its values) it reads as torch's
# own Tensor: a subclass's __torch_function__ (the user's code) never sees the trace's reads.
_UNSEEN_BY_SUBCLASSES = torch._C.DisableTorchFunctionSubclass


def _made_nonfinite(tensors, outputs):
    """Whether an op made NaN or Inf from finite inputs."""
    with torch.no_grad():
        return not all(_finite(o) for o in outputs) and all(_finite(x) for x in tensors)


def _own_parameters(module):
    """The parameters a module registered itself, read from torch's registry: never through
    parameters(), which a user's module may override (MAML's `def parameters(self)`). A
    tensor a torch.func transform swapped in (functional_call under grad or vmap) is no leaf
    of the run's graph."""
    registered = vars(module).get("_parameters") or {}
    return [p for p in registered.values() if isinstance(p, torch.Tensor)
            and not torch._C._functorch.is_functorch_wrapped_tensor(p)]


def _named_submodules(module, prefix=""):
    """(qualified name, module) for module and everything below it, from torch's registry
    (`_modules`), never through named_modules(), which a user's module may override."""
    yield prefix, module
    for key, child in (vars(module).get("_modules") or {}).items():
        if child is not None:
            yield from _named_submodules(child, f"{prefix}.{key}" if prefix else key)


class _ModuleCall:
    """One nn.Module call in progress, and the metadata tags of the nodes it makes."""

    def __init__(self, module, parent):
        self.module, self.parent, self.call_id = module, parent, next(_call_ids)
        name = ""
        if parent is not None:
            outer = parent.tag["module"]
            children = vars(parent.module).get("_modules") or {}
            key = next((k for k, m in children.items() if m is module), None)
            if key is None:  # called by an ancestor, not its parent: its name in the root
                root = parent
                while root.parent is not None:
                    root = root.parent
                key = next((n for n, m in _named_submodules(root.module) if m is module), "?")
                outer = ""
            name = f"{outer}.{key}" if outer else key
        outer_tag = parent.tag if parent is not None else {}
        self.tag = {"module": name, "module_type": type(module).__name__,
                    "nn_module_stack": outer_tag.get("nn_module_stack", ()) + ((name, module),),
                    "module_calls": outer_tag.get("module_calls", ()) + (self.call_id,)}


class TorchTrace(TraceRecords, TorchFunctionMode):
    """Context manager recording every torch op run inside it (ForwardTrace's records)."""

    def __init__(self, target_code=None):
        TraceRecords.__init__(self, target_code)
        TorchFunctionMode.__init__(self)
        self._modules = []        # module calls in progress, innermost last
        self._parameters = {}     # id(parameter) -> (parameter, tag of its module's call)

    @staticmethod
    def _is_tensor(value):
        return isinstance(value, torch.Tensor)

    # ---- entering and leaving
    def __enter__(self):
        hooks = torch.nn.modules.module
        self._handles = [hooks.register_module_forward_pre_hook(self._module_entered),
                         hooks.register_module_forward_hook(self._module_left)]
        self._apply = torch.autograd.Function.__dict__["apply"]
        trace, apply = self, self._apply.__func__

        def traced_apply(cls, *args, **kwargs):
            result = run_users_op(apply, (cls, *args), kwargs)
            with _UNSEEN_BY_SUBCLASSES():
                trace._record(cls.__name__, _tensors((args, kwargs), []), result)
                # (not inside a backward; nor inside a torch.func transform, whose wrapped
                # inputs die with it: there is no call to check again on its own later)
                if torch._C._current_graph_task_id() < 0 and not _inside_functorch():
                    trace._add_function_call(cls, args, kwargs, result,
                                             frames.user_call_site(sys._getframe(1)))
            return result
        torch.autograd.Function.apply = classmethod(traced_apply)
        return super().__enter__()

    def __exit__(self, *exc):
        torch.autograd.Function.apply = self._apply
        for handle in self._handles:
            handle.remove()
        with _UNSEEN_BY_SUBCLASSES():
            for parameter, tag in self._parameters.values():
                if parameter.requires_grad and parameter.is_leaf:
                    meta = torch.autograd.graph.get_gradient_edge(parameter).node.metadata
                    meta.update(tag)  # (a tag left by an earlier run is stale)
        return super().__exit__(*exc)

    def _module_entered(self, module, args):
        call = _ModuleCall(module, self._modules[-1] if self._modules else None)
        self._modules.append(call)
        for p in _own_parameters(module):
            self._parameters.setdefault(id(p), (p, call.tag))

    def _module_left(self, module, args, output):
        if self._modules and self._modules[-1].module is module:
            self._modules.pop()

    # ---- ops
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = run_users_op(func, args, kwargs)
        name = getattr(func, "__name__", "")
        with _UNSEEN_BY_SUBCLASSES():
            if name == "__get__":  # a property: only .data takes a value out of the graph
                if getattr(getattr(func, "__self__", None), "__name__", "") == "data":
                    self._add_alias(args[0], out)
                    self._cut("data", ".data", args[0], out)
            elif name in _CUTTING:
                kind, op = _CUTTING[name]
                self._cut(kind, op, args[0], out)
                if name == "detach":
                    self.detached[self.key(out)] = user_site()
            else:
                self._record(name.strip("_") or str(func), _tensors((args, kwargs), []), out)
        return out

    def _cut(self, kind, op, tensor, out):
        if torch.is_grad_enabled() and _called_by_user():
            self._add_cut(kind, op, tensor, out if isinstance(out, torch.Tensor) else None,
                          user_site())

    def _record(self, name, tensors, result):
        outputs = _tensors(result, [])
        if not outputs:
            return
        nonfinite = not _inside_functorch() and _made_nonfinite(tensors, outputs)
        event = OpEvent(name, [self.key(x) for x in tensors], [self.key(o) for o in outputs],
                        torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
                        any(x.requires_grad for x in tensors), user_site(), nonfinite,
                        narrowing(tensors, outputs, _precision))
        nodes = [o.grad_fn for o in outputs]
        self._add_event(event, tensors, outputs, nodes, _called_by_user)
        tag = self._modules[-1].tag if self._modules else None
        if tag is not None:
            for node in nodes:
                if node is not None and "module" not in node.metadata:
                    node.metadata.update(tag)
