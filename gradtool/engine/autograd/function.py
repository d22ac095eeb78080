"""Custom autograd Functions: torch.autograd.Function's API on the engine's Node.

As in torch, the ctx a Function's forward receives *is* its backward node (`y.grad_fn`),
named `<ClassName>Backward`."""
import functools

import numpy as np

from . import forward_level
from . import anomaly, forward_ad, grad_mode, observers
from .engine import gradient_edge
from .free_functions import stack
from .node import Node, SavedTensor
from .dispatch import NOT_BATCHED
from .tensor import Tensor

# torch.func's check and vmap rule for a Function's apply, set while a transform runs
transform_hook = None


class FunctionCtx:
    """What forward (or setup_context) may call on ctx."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Tensors for jvp(), where ctx.saved_tensors returns them (as torch)."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; but "
                                f"got {type(t).__name__} at position {i}")
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ctx) of one custom Function call. Has a __dict__: users store
    non-tensor values on ctx (ctx.dim = dim). As torch's, it has one next_functions edge per
    tensor argument of forward, and exposes what it saved as `saved_tensors` (no _saved_*)."""

    _forward_cls = None

    def __init__(self):  # (instance attributes: adapters/gradtool.py reads these as ctx's own)
        super().__init__()
        self._to_save = ()
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self._output_meta = ()
        self._arg_positions = ()  # the forward argument behind each next_functions edge
        self.needs_input_grad = ()
        self._to_save_forward = ()
        self._in_jvp = False

    def __repr__(self):  # torch's form, gradtool's module: <torch.autograd.function.XBackward ...>
        return f"<gradtool.autograd.function.{self.name()} object at {id(self):#x}>"

    @property
    def saved_tensors(self):
        if self._in_jvp:
            return tuple(self._to_save_forward)
        saved = self._for_backward
        if saved is None:
            return tuple(self._to_save)  # never recorded (no input required grad)
        return tuple(None if v is None else v.unpack(self) for v in saved.values())

    saved_variables = saved_tensors

    @property
    def _raw_saved_tensors(self):
        return tuple((self._for_backward or {}).values())

    def saved_values(self):
        """{index: SavedTensor}: inspect shows them as saved_tensors[index]."""
        return dict(self._for_backward or {})

    def apply(self, grad_outputs):
        cls = self._forward_cls
        grads = list(grad_outputs) + [None] * (len(self._output_meta) - len(grad_outputs))
        if self._materialize_grads:
            grads = [Tensor._wrap(np.zeros(*meta)) if g is None and meta else g
                     for g, meta in zip(grads, self._output_meta)]
        result = cls.backward(self, *grads)
        result = list(result) if isinstance(result, tuple) else [result]
        expected = len(self.needs_input_grad)  # one per forward argument
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {expected}, got {len(result)})")
        positions = self._arg_positions
        for i, g in enumerate(result):
            if g is not None and i not in positions:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        # as torch: a gradient for a tensor that needs none is dropped, not checked
        return [result[p] if child is not None else None
                for p, (child, _) in zip(positions, self.next_functions)]


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads) (or forward(*args)
    plus setup_context(ctx, inputs, output)); call it with `.apply(*args)`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls})

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method.")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    generate_vmap_rule = False  # torch.func.vmap runs forward and backward on batched values

    @staticmethod
    def vmap(info, in_dims, *args):
        """The Function under torch.func.vmap: (outputs, out_dims) from the physical inputs
        (in_dims: each one's batch dim, or None)."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if transform_hook is not None:  # torch.func's rules for Functions (func/function.py)
            result = transform_hook(cls, args, kwargs)
            if result is not NOT_BATCHED:
                return result
        result = cls._apply(*args, **kwargs)
        if observers.subscribers:  # (the forward trace records each call and its inputs)
            observers.function_call(cls, args, kwargs, result)
        return result

    @classmethod
    def _apply(cls, *args, **kwargs):
        ctx = cls._backward_cls()
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        ctx._arg_positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        record = grad_mode.state.grad_enabled and any(needs)
        tangents = _tangents(args) if forward_level.active is not None and not (
            grad_mode.state.inference) else None
        with grad_mode.no_grad():  # (and, with dual inputs, no tangents: jvp gives them)
            if cls.setup_context is not Function.setup_context:
                outputs = forward_ad._untracked(cls.forward, *args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = forward_ad._untracked(cls.forward, ctx, *args, **kwargs)
        _bump_dirty_versions(ctx._dirty)
        if tangents is not None:
            _forward_tangents(cls, ctx, args, outputs, tangents)
        if not record:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = [outputs] if single else list(outputs)
        tensors = [args[i] for i in ctx._arg_positions]
        ctx.next_functions = tuple(gradient_edge(a) if a._requires_grad else (None, 0)
                                   for a in tensors)
        ctx._input_meta = tuple((a._data.shape, a._data.dtype) if a._requires_grad else None
                                for a in tensors)
        _wire_outputs(ctx, args, outs)
        ctx._for_backward = {str(i): None if t is None else
                             SavedTensor(t, is_output=any(t is o for o in outs))
                             for i, t in enumerate(ctx._to_save)}
        ctx._to_save = ()
        return outs[0] if single else tuple(outs)


def _bump_dirty_versions(dirty):
    """As torch's _mark_dirty: each tensor marked dirty is one version on, however forward
    changed it (in place through .numpy() bumps nothing), so a tensor saved before fails."""
    for t in dirty:
        counter = t._version_counter
        counter[0] += 1
        counter[1] = anomaly.user_site()


def _tangents(args):
    """The inputs' tangents (zeros for a tensor without one, None for a non-tensor), or None
    when no input has one."""
    tangents = [forward_ad.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return None
    batch = forward_level.active.batch
    return [t if t is not None or not isinstance(a, Tensor) else
            Tensor._wrap(np.zeros(a._data.shape if batch is None else (batch,) + a._data.shape,
                                  a._data.dtype)) for a, t in zip(args, tangents)]


def _forward_tangents(cls, ctx, args, outputs, tangents):
    """Function.jvp(ctx, *tangents): the outputs' tangents, attached to them."""
    batch = forward_level.active.batch
    ctx._in_jvp = True
    try:
        if batch is None:
            result = forward_ad._untracked(cls.jvp, ctx, *tangents)
        else:  # batched tangents: the user's jvp sees one tangent at a time, as under vmap
            result = _stacked([forward_ad._untracked(
                cls.jvp, ctx, *(t if t is None else t[b] for t in tangents))
                for b in range(batch)])
    finally:
        ctx._in_jvp = False
        ctx._to_save_forward = ()
    outs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(results) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(results)})")
    for i, (o, t) in enumerate(zip(outs, results)):
        if t is None or not isinstance(o, Tensor) or o._data.dtype.kind not in "fV":
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(t).__name__}) for grad "
                               f"output {i}.")
        if t._data.dtype.kind not in "fcV":  # (torch's words: an internal assert's)
            raise RuntimeError("Expected both tensor and its forward grad to be floating point "
                               "or complex")
        forward_ad.check_size(o, t)
        forward_ad._set(o, t)


def _stacked(results):
    """Per-element jvp results (a tangent or a tuple of them) stacked on a batch dim."""
    if isinstance(results[0], (tuple, list)):
        return tuple(None if r[0] is None else stack(list(r), 0)
                     for r in zip(*results))
    return None if results[0] is None else stack(results, 0)


def _wire_outputs(ctx, args, outs):
    """Make each float output a result of ctx (output_nr = its position)."""
    meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(None)
            continue
        is_dirty = any(o is d for d in ctx._dirty)
        if is_dirty and o._requires_grad and o._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")
        marked = any(o is n for n in ctx._non_differentiable)  # (before o is replaced)
        if not is_dirty and any(o is a for a in args):
            o = outs[i] = o.detach()  # an input returned as is: a new tensor, as in torch
        differentiable = o._data.dtype.kind in "fcV" and not marked
        if differentiable:
            o._requires_grad, o._grad_fn, o._output_nr = True, ctx, i
        meta.append((o._data.shape, o._data.dtype))
    ctx._output_meta = tuple(meta)


class Error(Node):
    """Stands in for a backward computed by a once_differentiable function: differentiating
    through it again raises (torch's torch::autograd::Error, made by DelayedError)."""

    __slots__ = ("message",)

    def __init__(self, message, edges, metas):
        super().__init__(tuple(edges), tuple(metas))
        self.message = message

    def apply(self, grad_outputs):
        raise RuntimeError(self.message)


def once_differentiable(backward):
    """Run backward without recording it; differentiating its result again raises."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            result = backward(ctx, *grads)
        recording = grad_mode.state.grad_enabled and any(
            isinstance(g, Tensor) and g._requires_grad for g in grads)
        if not recording:
            return result
        # As torch: the results hang off one error node, an input per result (None: no
        # edge), each a fresh leaf, so a double backward through them raises, and reaches
        # nothing else.
        single = not isinstance(result, tuple)
        results = [result] if single else list(result)
        stand_ins = []
        for r in results:
            leaf = None
            if isinstance(r, Tensor) and r._data.dtype.kind in "fcV":
                leaf = r.detach()
                leaf._requires_grad = True
            stand_ins.append(leaf)
        node = Error("trying to differentiate twice a function that was marked with "
                     "@once_differentiable",
                     [(None, 0) if leaf is None else gradient_edge(leaf) for leaf in stand_ins],
                     [None if leaf is None else (leaf._data.shape, leaf._data.dtype)
                      for leaf in stand_ins])
        wrapped = []
        for nr, (r, leaf) in enumerate(zip(results, stand_ins)):
            if leaf is not None:
                r = r.detach()
                r._requires_grad, r._grad_fn, r._output_nr = True, node, nr
            wrapped.append(r)
        return wrapped[0] if single else tuple(wrapped)
    return wrapper


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
