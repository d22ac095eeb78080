"""A record of the forward pass, so diagnostics can say *why* a tensor has no graph:
which op made it, in which grad mode, at which line of the user's code, and whether a
detach() or an input without requires_grad cut it off."""
import dataclasses
import functools
import itertools
import os
import sys

import numpy as np

from ..engine import frames
from ..engine.autograd import anomaly, grad_mode, observers
from ..engine.autograd import tensor as tensor_module
from ..engine.autograd.dispatch import call as dispatch_call
from ..engine.autograd.engine import current_task


@dataclasses.dataclass(slots=True)  # one per op: no __dict__ for the GC to scan
class OpEvent:
    op: str
    inputs: tuple         # keys (TraceRecords.key) of the tensor inputs
    outputs: tuple        # keys of the results
    grad_enabled: bool
    inference: bool
    any_input_requires_grad: bool
    site: tuple           # (filename, lineno, function) in the user's code, or None
    made_nonfinite: bool = False  # finite inputs, but NaN or Inf in the result
    cast: tuple = None    # (from, to) dtype names: a float result less precise than its inputs


_FUNCTION_PY = os.path.join(frames.AUTOGRAD_DIR, "function.py")


def called_by_user(function_py, is_library, is_engine):
    """Whether the op being recorded is the user's own doing, on either engine: reached from
    their code through the engine's own files only (`is_engine(filename)`), not from a library
    function (nn, optim, ...: `is_library`) that cuts on purpose, nor inside a custom
    Function's forward (`apply` in `function_py`; it runs under no_grad)."""
    frame, user_seen = sys._getframe(1), False
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == function_py and frame.f_code.co_name == "apply":
            return False
        if not user_seen:
            if is_library(filename):
                return False
            user_seen = not is_engine(filename)
        frame = frame.f_back
    return user_seen


def _called_by_user():
    # gradtool's files but the engine's dispatch (and this trace's methods) are its library
    return called_by_user(_FUNCTION_PY, lambda f: frames.is_gradtool(f) and not (
        f.startswith(frames.AUTOGRAD_DIR) or f == __file__), frames.is_gradtool)


@dataclasses.dataclass
class Cut:
    """A value taken out of the graph from a tensor that requires grad, with grad mode on:
    gradients do not flow back through it."""
    kind: str             # detach | data | item | tolist | numpy | no_grad
    op: str               # what the user called: "detach()", ".item()", "mul" (under no_grad)
    source: int           # key (TraceRecords.key) of the tensor that required grad
    result: object        # key of the tensor it made (None for a Python number or list)
    site: tuple


@dataclasses.dataclass
class FunctionCall:
    """One call of a custom autograd.Function in the forward, with what it received, so the
    Function can be checked on its own at exactly those inputs (checks/localize.py)."""
    cls: type
    args: tuple           # as received; tensors as detached copies taken at the call
    kwargs: dict
    node: object          # the graph node of its outputs (None when nothing was recorded)
    site: tuple           # (filename, lineno, function) of the user's call


@dataclasses.dataclass
class OpCall:
    """One built-in op of the forward, kept so that it can be checked on its own at exactly the
    inputs it received (`--localize all`): `replay(tensors)` runs the op again with `tensors`
    in place of its tensor inputs (`inputs`: copies taken at the call)."""
    name: str
    replay: object
    inputs: tuple
    node: object          # the graph node of its output
    site: tuple


def with_slots(value, is_tensor, found):
    """`value` (an op's arguments) with each tensor replaced by its index in `found`."""
    if is_tensor(value):
        found.append(value)
        return _Slot(len(found) - 1)
    if type(value) in (list, tuple):
        return type(value)(with_slots(v, is_tensor, found) for v in value)
    if type(value) is dict:
        return {k: with_slots(v, is_tensor, found) for k, v in value.items()}
    return value


def filled(template, tensors):
    """with_slots' template with the slots filled by `tensors`."""
    if type(template) is _Slot:
        return tensors[template.index]
    if type(template) in (list, tuple):
        return type(template)(filled(v, tensors) for v in template)
    if type(template) is dict:
        return {k: filled(v, tensors) for k, v in template.items()}
    return template


@dataclasses.dataclass(frozen=True)
class _Slot:
    index: int


def _raw_copy(t):
    """A copy of a gradtool tensor made without dispatch (the trace's observers see nothing)."""
    out = tensor_module.Tensor._wrap(t._data.copy())
    out._requires_grad = t._requires_grad
    return out


def detached_copy(t):
    """A copy of a tensor (either engine's) out of the graph that keeps its requires_grad."""
    return t.detach().clone().requires_grad_(t.requires_grad)


def _values(t):
    """A tensor's values; a BatchedTensor's (under vmap) are every example's, its physical
    array: reading its own would send vmap to run the function one example at a time."""
    data = t._data
    return getattr(data, "examples", data)


def _finite(t):
    # (counting is numpy's fast path: a reduction's `.all()` costs three times as much on the
    # small tensors most ops make, and this runs for every op's result)
    data = t._data
    if data.dtype.kind != "f":
        return True
    values = data if type(data) is np.ndarray else _values(t)
    return np.count_nonzero(np.isfinite(values)) == values.size


def narrowing(tensors, outputs, precision):
    """(from, to) dtype names when an op's float result is less precise than its most precise
    float input (x.float() on float64, a half()), else None. `precision(t)`: (bits of its
    significand's type, name), bits 0 for tensors that are not float or complex."""
    widest = max((precision(x) for x in tensors), default=(0, None), key=lambda p: p[0])
    if not widest[0]:
        return None
    for o in outputs:
        bits, name = precision(o)
        if 0 < bits < widest[0]:
            return widest[1], name
    return None


def _precision(t):
    d = t._data.dtype
    found = _precisions.get(d)
    if found is None:
        found = _precisions[d] = (d.itemsize * 8 if d.kind == "f" else
                                  d.itemsize * 4 if d.kind == "c" else 0, d.name)
    return found


_precisions = {}  # numpy dtype -> _precision's answer: dtype.name runs numpy's Python code


def _one_dtype(tensors, outputs):
    """Whether an op's tensors, in and out, all have one dtype (most ops): then it narrowed
    nothing, and `narrowing` need not weigh each one."""
    if not outputs:
        return True
    dtype = outputs[0]._data.dtype
    for t in tensors:
        if t._data.dtype is not dtype:
            return False
    for t in outputs:
        if t._data.dtype is not dtype:
            return False
    return True


@dataclasses.dataclass
class Transform:
    """A torch.func transform the forward ran: kind (vmap), the function's name and its
    parameters' names, how (for vmap: size, in_dims per argument) and the user's line."""
    kind: str
    function: str
    parameters: list
    details: dict
    site: tuple


class TraceRecords:
    """What a forward trace records, whichever engine it watches (ForwardTrace here,
    adapters/torch_trace.py on torch): the ops, the cuts, the site of each node and the target's
    frame. A tensor is known in them by its key (`key`), unique while the trace lives."""

    def __init__(self, target_code=None):
        self.events = []
        self.made_by = {}     # key(tensor) -> OpEvent that produced it
        self.detached = {}    # key(tensor) -> site of the detach() that made it
        self.site_of_node = {}  # grad_fn -> site of the forward call that created it
        self.cuts = []        # Cut, in the order they happened
        self.detached_from = {}  # key(tensor) -> the Cut that made it
        self.written_through = {}  # key(tensor) -> keys of its `.data` aliases (copy_ into them)
        self._keep = {}  # id -> tensor: torch's tensors the records name, kept alive
        self._target_code = target_code
        self.target_frame = None  # kept: a returned frame still holds its final locals
        self.function_calls = []  # FunctionCall per custom Function applied, in order
        self.op_calls = []  # OpCall per built-in op, in order (only when record_ops)
        self.transforms = []  # Transform per torch.func transform run (vmap), in order
        self.record_ops = False

    def key(self, tensor):
        """The tensor's key in the records: its id, the tensor kept alive so that no tensor
        made later takes that id (ForwardTrace keys gradtool's tensors without keeping them)."""
        self._keep[id(tensor)] = tensor  # (a dict: a tensor looked up again is not kept twice)
        return id(tensor)

    def _add_cut(self, kind, op, tensor, result, site):
        """A value taken out of the graph (result: the tensor made, or None for a number)."""
        source = self.detached_from.get(self.key(tensor))
        if kind == "numpy" and source is not None:  # x.detach().numpy(): one round-trip
            source.kind, source.op = "numpy", source.op + ".numpy()"
            return
        if not tensor.requires_grad:
            return
        cut = Cut(kind, op, self.key(tensor), self.key(result) if result is not None else None,
                  site)
        self.cuts.append(cut)
        if result is not None:
            self.detached_from[cut.result] = cut

    def _add_alias(self, tensor, alias):
        """`tensor.data`: what is written into the alias (data-dependent initialisation under
        no_grad) becomes tensor's value."""
        self.written_through.setdefault(self.key(tensor), []).append(self.key(alias))

    def _node_of(self, result):
        """The graph node of an op's outputs (None when nothing was recorded)."""
        outputs = result if isinstance(result, tuple) else (result,)
        return next((o.grad_fn for o in outputs if self._is_tensor(o) and o.grad_fn is not None),
                    None)

    def _add_function_call(self, cls, args, kwargs, result, site):
        """A custom Function applied to args: its inputs as they were (tensors as detached
        copies that keep their requires_grad), its node, the user's line."""
        def kept(value):
            return detached_copy(value) if self._is_tensor(value) else value
        self.function_calls.append(FunctionCall(
            cls, tuple(kept(a) for a in args), {k: kept(v) for k, v in kwargs.items()},
            self._node_of(result), site))

    def _add_op_call(self, name, run, arguments, result, copy, site):
        """A built-in op's call, when `record_ops`: `run(*arguments)` ran it (arguments holding
        its tensors anywhere); its inputs are kept as `copy` makes them."""
        node = self._node_of(result)
        found = []
        template = with_slots(arguments, self._is_tensor, found)
        if node is None or not found:
            return
        self.op_calls.append(OpCall(name, lambda tensors: run(*filled(template, tensors)),
                                    tuple(copy(t) for t in found), node, site))

    def _add_event(self, event, tensors, outputs, nodes, called_by_user):
        """An op the forward ran: its event, a no_grad cut if the user's code ran it with grad
        mode off on a tensor that requires grad, the target's frame once, the nodes' sites."""
        self.events.append(event)
        if not event.grad_enabled and not event.inference and event.any_input_requires_grad \
                and called_by_user():
            source = next(x for x in tensors if x.requires_grad)
            self.cuts.append(Cut("no_grad", event.op, self.key(source), event.outputs[0],
                                 event.site))
        if self.target_frame is None and self._target_code is not None:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code is not self._target_code:
                frame = frame.f_back
            self.target_frame = frame
        for k, node in zip(event.outputs, nodes):
            self.made_by[k] = event
            if node is not None:
                self.site_of_node.setdefault(node, event.site)


_trace_keys = itertools.count(1)  # ForwardTrace.key's: one count for every trace of a process


class ForwardTrace(TraceRecords, observers.Observer):
    """Context manager recording every op run inside it on gradtool's engine (by the thread
    that entered it)."""

    @staticmethod
    def _is_tensor(value):
        return isinstance(value, tensor_module.Tensor)

    @staticmethod
    def key(tensor):
        """A number written on the tensor the first time a trace sees it, never given twice:
        the records need not keep the tensors alive to keep their keys apart (what the run
        frees, backward's saved activations among it, is freed while the trace lives)."""
        # (getattr's default: an op's new result raised and caught AttributeError, 4 µs)
        key = getattr(tensor, "_trace_key", 0)
        if not key:
            key = tensor._trace_key = next(_trace_keys)
        return key

    def function_call(self, cls, args, kwargs, result):
        if current_task() is None:  # (a Function applied inside backward is no forward)
            self._add_function_call(cls, args, kwargs, result,
                                    frames.user_call_site(sys._getframe(1)))

    def transform(self, kind, func, details):
        import inspect
        try:
            parameters = list(inspect.signature(func).parameters)
        except (TypeError, ValueError):  # (a builtin without a signature)
            parameters = []
        self.transforms.append(Transform(kind, getattr(func, "__name__", repr(func)),
                                         parameters, details,
                                         frames.user_call_site(sys._getframe(1))))

    def cut(self, kind, name, tensor, result):
        if kind == "detach":
            self.detached[self.key(result)] = anomaly.user_site()
        elif kind == "data":
            self._add_alias(tensor, result)
        if current_task() is not None or not grad_mode.state.grad_enabled \
                or not _called_by_user():
            return
        taken = result if isinstance(result, tensor_module.Tensor) else None
        self._add_cut(kind, name, tensor, taken, anomaly.user_site())

    def op(self, name, inputs, run):
        result = run()
        if current_task() is not None:
            return result  # ops run by backward formulas are not the user's forward
        Tensor = tensor_module.Tensor
        if inputs and isinstance(inputs[0], list):  # a variadic op's tensors (cat, stack)
            inputs = inputs[0]
        tensors, requires_grad = [], False
        for x in inputs:  # (one plain loop: the op's per-op cost is this trace's)
            if isinstance(x, Tensor):
                tensors.append(x)
                requires_grad = requires_grad or x._requires_grad
        outputs = list(result) if isinstance(result, tuple) else [result]
        key = self.key
        event = OpEvent(name, tuple(map(key, tensors)), tuple(map(key, outputs)),
                        grad_mode.state.grad_enabled, grad_mode.state.inference,
                        requires_grad, anomaly.user_site(),
                        not all(map(_finite, outputs)) and all(map(_finite, tensors)),
                        None if _one_dtype(tensors, outputs) else
                        narrowing(tensors, outputs, _precision))
        self._add_event(event, tensors, outputs, [o._grad_fn for o in outputs], _called_by_user)
        if self.record_ops and isinstance(run, functools.partial) and not any(
                _values(x) is not x._data for x in tensors):  # (no replay after vmap)
            # run: dispatch's own call
            spec, op_inputs, op_args = run.args[:3]  # (in place: the same formulas, out of place)
            self._add_op_call(name, lambda i: dispatch_call(spec, i, op_args), (op_inputs,),
                              result, _raw_copy, event.site)
        return result
