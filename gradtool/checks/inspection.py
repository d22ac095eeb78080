"""Run one target the way `gradtool inspect` and `render` need it: forward under the trace,
a snapshot of the graph before backward frees it, then backward, then diagnostics."""
import dataclasses
import inspect
import math
import warnings
from typing import Optional

import numpy as np

import gradtool.adapters as engines

from ..capture import loader
from . import findings as diagnostics
from ..capture.graph import GraphSnapshot, take_snapshot


@dataclasses.dataclass
class Capture:
    target: "loader.Target"
    inputs: list              # (name, Tensor or value)
    outputs: list             # Tensors
    snapshot: GraphSnapshot
    trace: object             # the forward trace (ForwardTrace, or TorchTrace on torch)
    warnings: list            # warnings.WarningMessage raised by the user's code
    backward_error: Optional[str] = None
    backward_location: Optional[tuple] = None
    backward_details: str = ""  # the user's frames of the backward error's traceback
    diagnostics: list = dataclasses.field(default_factory=list)
    run: Optional["loader.Run"] = None
    # (keyed by the trace's keys, which its records use: trace.key(leaf))
    leaf_names: dict = dataclasses.field(default_factory=dict)  # leaf's key -> user's name
    leaf_grads: dict = dataclasses.field(default_factory=dict)  # leaf's key -> grad after backward
    parameters: list = dataclasses.field(default_factory=list)  # (name, Parameter) reached
    causes: list = dataclasses.field(default_factory=list)  # Diagnoses gradcheck can cite
    custom_nodes: list = dataclasses.field(default_factory=list)  # custom Functions' nodes

    def let_run_go(self):
        """Keep what a drawing reads (the target, the snapshot's records, the diagnoses) and
        drop the live run: its graph, tensors and trace are then freed, and a drawing made
        after reuses their memory (30 MB of a 20,000-node model's peak). The gradients its
        backward left on the leaves go too (the model's parameters outlive the run: 7 MB of
        a 20,000-node model's); each capture's backward sets its leaves' own anew."""
        for leaf in self.snapshot.leaf_tensors:
            leaf.grad = None
        self.trace = self.run = None
        self.inputs, self.outputs, self.parameters, self.custom_nodes = [], [], [], []
        self.leaf_grads, self.leaf_names, self.causes = {}, {}, []
        self.snapshot.leaf_tensors, self.snapshot.node_ids = [], {}


def target_code(target):
    fn = target.obj.forward if target.kind == "Function" else target.obj
    fn = inspect.unwrap(fn)
    return getattr(fn, "__code__", None)


def capture(target, seed=0, shape=(3,), device=None, localize=False, record_ops=False):
    """Run the target (loader.run_target) under the forward trace, picture its graph, run
    backward and read the diagnostics. The user's errors raise UserCodeError. With
    `localize`, each custom Function call is also checked on its own (fast mode), and the
    first wrong one is a diagnostic and marked in the snapshot."""
    E = engines.current()
    trace = E.trace(target_code(target), record_ops)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = loader.run_target(target, seed, shape, observe=trace, device=device)
    modules = loader.file_modules(E, target)
    parameters = loader.module_parameters(modules)
    named = dict(parameters)
    named.update({name: value for name, value in run.inputs if E.is_tensor(value)})
    named.update({name: t for t, name in _names_from_trace(E, trace)})
    snapshot = take_snapshot(run.outputs, named, trace.site_of_node,
                             {id(m): var for var, m in reversed(modules.items())}, E)
    result = Capture(target, run.inputs, run.outputs, snapshot, trace, list(caught), run=run)
    result.leaf_names = {trace.key(t): name for name, t in named.items()
                         if t.is_leaf and t.requires_grad}
    reached = {id(v) for v in snapshot.leaf_tensors} - {id(v) for _, v in run.inputs}
    result.parameters = [(name, t) for name, t in parameters.items() if id(t) in reached]
    custom = result.custom_nodes = E.custom_nodes(
        [t.grad_fn for t in run.outputs if t.grad_fn is not None])
    saved = diagnostics.saved_detached(E, trace, custom)
    _backward(E, result, custom)
    result.leaf_grads = {trace.key(t): t.grad for name, t in named.items()
                         if t.is_leaf and t.requires_grad}
    result.causes = diagnostics.gradient_cuts(result) + saved
    result.diagnostics = diagnostics.diagnose(result)
    result.causes += [d for d in result.diagnostics if d.kind == "non_finite_output"]
    if localize and all(E.has_values(t) for _, t in run.inputs if E.is_tensor(t)):
        # (central differences need values: not on the meta device)
        from .localize import localize as check_calls
        located = check_calls(result, fast_mode=True)
        if located is not None and located.node is not None:
            result.diagnostics.insert(0, located.as_diagnosis())
    return result


def _names_from_trace(E, trace):
    frame_locals = trace.target_frame.f_locals if trace.target_frame is not None else {}
    # read once, then let the frame go: it holds the frames that called it, this one too,
    # and so the whole run, in a cycle only the cyclic GC could free
    trace.target_frame = None
    return [(v, k) for k, v in frame_locals.items()
            if E.is_tensor(v) and not k.startswith("_")]


def _backward(E, result, custom_nodes=()):
    """Backward from every output that requires grad (gradient of ones), then record each
    leaf's gradient. An error is recorded for the diagnostics, not raised; one the engine
    raises about a custom Function's result points at that Function's backward."""
    differentiable = [t for t in result.outputs if t.requires_grad]
    leaves = result.snapshot.leaf_tensors
    for v in leaves:
        v.grad = None
    if differentiable:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                E.backward(differentiable, [E.ones_like(t) for t in differentiable])
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # noqa: BLE001 - a version error, a user hook, ...
                err = loader.user_error(e, "backward")
                result.backward_error = loader.describe_exception(e)
                result.backward_location = err.location or backward_named_in(
                    result.backward_error, custom_nodes)
                result.backward_details = err.details
        result.warnings.extend(caught)
    for info, tensor in zip(result.snapshot.leaves, leaves):
        if tensor.grad is not None and E.has_values(tensor.grad):
            data = E.array(tensor.grad)
            data = np.abs(data) if data.dtype.kind == "c" else data.astype(np.float64)
            squares = data * data
            total = float(np.add.reduce(squares, axis=None))  # (nansum copies the array)
            finite = math.isfinite(total)  # then so is every element
            if not finite:
                finite = bool(np.all(np.isfinite(data)))
                if math.isnan(total):  # NaNs inside: the norm of the rest
                    total = float(np.nansum(squares))
            info.leaf.grad_finite, info.leaf.grad_norm = finite, math.sqrt(total)


def backward_named_in(message, custom_nodes):
    """(file, line) of the backward of the custom Function the engine's message names."""
    for node in custom_nodes:
        if f"{node.name()} " in message + " ":
            code = getattr(inspect.unwrap(node._forward_cls.backward), "__code__", None)
            if code is not None:
                return (code.co_filename, _def_line(code))
    return None


def _def_line(code):
    """The `def` line of a function (co_firstlineno is its first decorator's)."""
    import linecache
    line = code.co_firstlineno
    while linecache.getline(code.co_filename, line).strip().startswith("@"):
        line += 1
    return line
