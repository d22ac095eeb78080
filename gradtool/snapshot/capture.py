"""Run one target the way `gradtool inspect` and `render` need it: forward under the trace,
a snapshot of the graph before backward frees it, then backward, then diagnostics."""
import dataclasses
import inspect
import warnings
from typing import Optional

import numpy as np

from .. import loader
from ..autograd import engine
from ..autograd.tensor import Tensor
from . import diagnostics
from .graph import GraphSnapshot, take_snapshot
from .trace import ForwardTrace


@dataclasses.dataclass
class Capture:
    target: "loader.Target"
    inputs: list              # (name, Tensor or value)
    outputs: list             # Tensors
    snapshot: GraphSnapshot
    trace: ForwardTrace
    warnings: list            # warnings.WarningMessage raised by the user's code
    backward_error: Optional[str] = None
    backward_location: Optional[tuple] = None
    diagnostics: list = dataclasses.field(default_factory=list)


def flatten_outputs(result):
    """The tensors a target returned: a tensor, or tensors in tuples, lists and dicts."""
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in flatten_outputs(item)]
    return []


def target_code(target):
    fn = target.obj.forward if target.kind == "Function" else target.obj
    fn = inspect.unwrap(fn)
    return getattr(fn, "__code__", None)


def run_forward(target, seed, shape, trace=None):
    """Call the target on its seeded inputs; errors in the user's code become
    UserCodeError. Returns (inputs as (name, value) pairs, output tensors)."""
    import gradtool as gt
    gt.manual_seed(seed)
    args, kwargs = loader.make_inputs(target, seed, shape)
    try:
        result = target.call(*args, **kwargs)
    except (Exception, SystemExit) as e:  # whatever the user's code raises, sys.exit() too
        raise loader.user_error(e, f"target {target.name}") from None
    outputs = flatten_outputs(result)
    if not outputs:
        raise loader.UserCodeError(
            f"target {target.name} ({target.filename}:{target.lineno}) returned "
            f"{type(result).__name__}, not a tensor: gradtool needs a tensor (or tensors) to "
            f"differentiate.", location=(target.filename, target.lineno))
    names = list(target.param_names) + [f"arg{i}" for i in range(len(target.param_names),
                                                                    len(args))]
    inputs = list(zip(names, args)) + list(kwargs.items())
    return inputs, outputs


def capture(target, seed=0, shape=(3,)):
    trace = ForwardTrace(target_code(target))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with trace:
            inputs, outputs = run_forward(target, seed, shape)
    modules = _global_modules(target)
    named = _module_parameters(modules)
    named.update({name: value for name, value in inputs if isinstance(value, Tensor)})
    named.update({name: t for t, name in _names_from_trace(trace)})
    snapshot = take_snapshot(outputs, named, trace.site_of_node,
                             {id(m): var for var, m in reversed(modules.items())})
    result = Capture(target, inputs, outputs, snapshot, trace, list(caught))
    _backward(result)
    result.diagnostics = diagnostics.diagnose(result)
    return result


def _global_modules(target):
    """The nn.Modules of the target's file and their submodules by the names the user knows
    (model, model.3.attn, blocks[2] for a list of modules), the first name of each first."""
    from ..nn import Module
    fn = target.obj.forward if target.kind == "Function" else inspect.unwrap(target.obj)
    found = {}
    for var, value in getattr(fn, "__globals__", {}).items():
        if var.startswith("_"):
            continue
        tops = [(var, value)] if isinstance(value, Module) else [
            (f"{var}[{i}]", v) for i, v in enumerate(value) if isinstance(v, Module)] \
            if isinstance(value, (list, tuple)) else []
        for top, module in tops:
            for sub, m in module.named_modules():
                found.setdefault(f"{top}.{sub}" if sub else top, m)
    return found


def _module_parameters(modules):
    """Parameters of those modules by their qualified names (model.0.weight), so leaves are
    labelled as the user knows them."""
    names = {}
    for var, module in modules.items():
        for pname, p in module.named_parameters(recurse=False):
            names.setdefault(f"{var}.{pname}", p)
    return names


def _names_from_trace(trace):
    frame_locals = trace._target_frame.f_locals if trace._target_frame is not None else {}
    return [(v, k) for k, v in frame_locals.items()
            if isinstance(v, Tensor) and not k.startswith("_")]


def _backward(result):
    """Backward from every output that requires grad (gradient of ones), then record each
    leaf's gradient. An error is recorded for the diagnostics, not raised."""
    import gradtool as gt
    differentiable = [t for t in result.outputs if t.requires_grad]
    leaves = result.snapshot.leaf_tensors
    for v in leaves:
        v.grad = None
    if differentiable:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                engine.backward(differentiable, [gt.ones_like(t) for t in differentiable])
            except Exception as e:  # noqa: BLE001 - a version error, a user hook, ...
                err = loader.user_error(e, "backward")
                result.backward_error = f"{type(e).__name__}: {e}"
                result.backward_location = err.location
        result.warnings.extend(caught)
    for info, tensor in zip(result.snapshot.leaves, leaves):
        if tensor.grad is not None:
            data = tensor.grad._data.astype(np.float64)
            info.leaf.grad_finite = bool(np.all(np.isfinite(data)))
            info.leaf.grad_norm = float(np.sqrt(np.nansum(data * data)))
