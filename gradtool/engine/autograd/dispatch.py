"""`call`, the one dispatch every op goes through: the row's forward under numpy's quiet
error state, torch's dtype promotion, the graph node with what its formulas save, views'
shared bases (and their history, regenerated when the base's changed), forward-mode tangents
and the observers (profiler, forward trace). Its in-place twin, `call_inplace`, is
inplace.py's, built on the same parts (run_forward, make_node, save_for_backward)."""
import functools
import types

import numpy as np

from . import forward_level
from . import anomaly, dtypes, forward_ad, grad_mode, observers
from ..errors import NotInEngineError
from .errstate import ERRSTATE, QUIET, quiet_context
from .node import SavedTensor, accumulator_of, saved_output
from .observers import subscribers as _subscribers  # dispatch's one check: anyone watching?
from .ops.rows import table
from .tensor import Tensor, _new_tensor

_state = grad_mode.state
_FLOAT64 = np.dtype(np.float64)
_ndarray = np.ndarray
_FLOAT32 = np.dtype(np.float32)
_BFLOAT16 = dtypes.BFLOAT16
_DOUBLES = (_FLOAT64, np.dtype(np.complex128))  # (abs of a complex128 tensor is float64)
_NO_EDGE = (None, 0)
NO_NODE = (None, None)  # make_node's answer when no input requires grad
_new_object = object.__new__

# vmap's rules (engine/func/rules.py), set while a vmap runs: None costs call one check
batching_hook = None
NOT_BATCHED = object()  # the hook's answer when no input is batched

# A Context is entered by one thread at a time, and not twice: call() runs forwards in this
# shared one, and in run_forward when it is busy (another thread's forward runs in it, or a
# forward came back to call).
_QUIET = quiet_context()


def call(spec, inputs, args=(), _observed=False):
    """Run op `spec` on `inputs` (tensors or numbers) and record it in the graph when grad
    mode is on and an input requires grad. The engine's hot path: keep it lean.
    (_observed: this thread's observers were told already; observers.op runs it so.)"""
    if _subscribers and not _observed and observers.watching():
        # (a partial, not a lambda: a closure would turn call's locals into cells, on every op)
        return observers.op(spec.name, inputs, functools.partial(call, spec, inputs, args, True))
    if batching_hook is not None:
        out = batching_hook(spec, inputs, args)
        if out is not NOT_BATCHED:
            return out
    if spec.variadic:
        arrays = ([t._data for t in inputs[0]],)
    else:
        arrays = []
        for x in inputs:  # (a plain loop: a list comprehension is a function call in 3.11)
            arrays.append(x._data if isinstance(x, Tensor) else x)
    # as torch, inf and nan are results, not warnings (log(0), 0/0, ...): forwards run QUIET
    forward = spec.forward
    # (the first input's dtype: one look, for three cases; None if it is no array)
    first_dtype = arrays[0].dtype if type(arrays[0]) is _ndarray else None
    if first_dtype is _FLOAT64 and spec.as_is is not None:
        forward = spec.as_is  # (float64 needs no rounding: the kernel without its wrapper)
    elif first_dtype is _BFLOAT16:
        forward = functools.partial(bfloat16_forward, spec, len(arrays))
    try:
        # (positional calls for one or two inputs: f(*a) builds an argument list and a tuple)
        if args:
            out = _QUIET.run(forward, *arrays, *args)
        elif len(arrays) == 1:
            out = _QUIET.run(forward, arrays[0])
        elif len(arrays) == 2:
            out = _QUIET.run(forward, arrays[0], arrays[1])
        else:
            out = _QUIET.run(forward, *arrays)
    except ValueError as e:
        raise RuntimeError(_shape_error(spec, arrays, e)) from None
    except TypeError:  # (a kernel of Python's math module, given complex values)
        for a in arrays if not spec.complex else ():
            if getattr(a, "dtype", _FLOAT32).kind == "c":
                refuse_complex(spec, a.dtype)
        raise
    except RuntimeError as e:  # (raised by Context.run, before the forward, if _QUIET is busy)
        if not str(e).startswith("cannot enter context"):
            raise
        out = run_forward(spec, arrays, args)
    if spec.multi_output:
        return _multi_output(spec, inputs, args, arrays, out)
    if type(out) is not _ndarray:
        out = as_result(out, arrays, spec, args)
    dtype = out.dtype
    check = spec.dtype_check
    if check:
        # numpy's dtype is torch's when every tensor operand has it (scalars never upcast)
        if check == 3 or first_dtype is not dtype or (
                check == 2 and type(arrays[1]) is _ndarray and arrays[1].dtype is not dtype):
            out = _promoted(out, arrays, spec, args)
            dtype = out.dtype
    elif dtype is _FLOAT64:
        out = as_result(out, arrays, spec, args)
        dtype = out.dtype
    if dtype is not _FLOAT32 and dtype.kind == "c" and not spec.complex:
        refuse_complex(spec, dtype)
    result = _new_tensor(Tensor, out)
    if spec.view:
        _share_base(inputs[0], (result,))
    # integer and bool results (and declared non-differentiable ones) never require grad,
    # so their op records nothing
    if (not grad_mode.threads_off_default or _state.grad_enabled) and \
            spec.result_differentiable and (
            dtype is _FLOAT32 or dtype.kind in "fcV"):
        node, plan = spec.make_node(spec, inputs, args)
        if node is not None:
            result._requires_grad = True
            result._grad_fn = node
            node._for_backward = (save_for_backward(plan, inputs, args, arrays, (result,))
                                  if plan else {})
    if forward_level.active is not None:
        forward_ad.propagate(spec, inputs, args, arrays, (result,))
    return result


def _multi_output(spec, inputs, args, arrays, outs):
    """call's ending for ops with several outputs (max(dim), split, ...)."""
    for o in outs if not spec.complex else ():
        if o.dtype.kind == "c":
            refuse_complex(spec, o.dtype)
    node, plan = spec.make_node(spec, inputs, args) if _state.grad_enabled else NO_NODE
    results = tuple(_wrap_output(spec, as_result(o, arrays, spec), node, i)
                    for i, o in enumerate(outs))
    if spec.view:
        _share_base(inputs[0], results)
    if node is not None:
        node._output_meta = [(r._data.shape, r._data.dtype) if r._grad_fn is node else None
                             for r in results]
        if any(node._output_meta):  # (linalg.lu's first output, P, has no gradient)
            node._for_backward = save_for_backward(plan, inputs, args, arrays, results)
    if forward_level.active is not None:
        forward_ad.propagate(spec, inputs, args, arrays, results)
    return results


def run_forward(spec, arrays, args):
    """spec.forward on the input arrays in numpy's QUIET error state (as torch, inf and nan are
    results, not warnings: log(0), 0/0, exp(1000)), set around it unless it is already
    (backward runs quiet, and so does a forward inside a forward)."""
    token = None if ERRSTATE.get() is QUIET else ERRSTATE.set(QUIET)
    try:
        if getattr(arrays[0], "dtype", None) is _BFLOAT16:  # (in-place ops come this way)
            return bfloat16_forward(spec, len(arrays), *arrays, *args)
        return spec.forward(*arrays, *args)
    except ValueError as e:
        raise RuntimeError(_shape_error(spec, arrays, e)) from None
    finally:
        if token is not None:
            ERRSTATE.reset(token)


def make_node(spec, inputs, args=()):
    """(the op's backward node, with one edge per differentiable input, and what it saves: the
    row's save plan for the inputs that require grad), or NO_NODE when none does. The
    caller fills the node's `_for_backward` by the plan."""
    variadic = spec.variadic
    if variadic:
        tensors = inputs[0]
    elif spec.all_differentiable:
        tensors = inputs
    else:
        tensors = [inputs[p] for p in spec.diff_positions]
    mask = 0
    bit = 1
    edges = []
    metas = []
    for x in tensors:
        if isinstance(x, Tensor):
            if x._base is not None and x._base_grad_fn is not x._base._grad_fn:
                regenerate_view(x)
            if x._requires_grad:
                mask |= bit
                fn = x._grad_fn
                edges.append((fn, x._output_nr) if fn is not None else (accumulator_of(x), 0))
                data = x._data
                dtype = data.dtype
                if dtype is not _FLOAT32 and dtype.kind == "c" and not spec.complex:
                    refuse_complex(spec, dtype)  # (norm, var: real results)
                shape = data.shape
                meta = _METAS.get(shape)
                if meta is None or meta[1] is not dtype:
                    meta = _shared_meta(shape, dtype)
                metas.append(meta)
                bit <<= 1
                continue
        edges.append(_NO_EDGE)
        metas.append(None)
        bit <<= 1
    if not mask:
        return NO_NODE
    # Node.__init__'s fields, set here: no __init__ frame on the hot path
    node = _new_object(spec.node_class)
    node.next_functions = tuple(edges)
    node._input_meta = tuple(metas)
    node._for_backward = None
    node._hooks = node._metadata = None
    node._args = args  # its non-tensor arguments: torch exposes each as _saved_<name>
    node._anomaly_trace = anomaly.user_site() if anomaly.enabled else None
    # (variadic: one formula gives the gradients of the whole list)
    return node, spec.save_plans[1 if variadic else mask]


def own_code(function):
    """A copy of `function` with a code object of its own. CPython 3.11 specializes a
    function's attribute loads and stores per code object, for one class at a time: every
    op has its own node class (torch's names), so one make_node shared by all ops misses
    its caches on each store into a node; each row runs its own copy (spec.make_node)."""
    return types.FunctionType(function.__code__.replace(), function.__globals__,
                              function.__name__, function.__defaults__, function.__closure__)


# The (shape, dtype) pairs of the nodes' _input_meta, one per shape (with the last dtype
# seen): a pair (and its shape tuple) per recorded input would be two more GC-tracked
# allocations per op, which long graphs pay for in every collection that scans them.
_METAS = {}


def _shared_meta(shape, dtype):
    if len(_METAS) >= 4096:  # bounded: shapes that keep changing must not pile up
        _METAS.clear()
    meta = _METAS[shape] = (shape, dtype)
    return meta


def _wrap_output(spec, array, node, i):
    r = Tensor._wrap(array)
    # integer and bool results (and declared non-differentiable outputs) never require grad
    if node is not None and array.dtype.kind in "fcV" and (
            spec.outputs == "many" or spec.outputs[i] not in spec.nondiff_outputs):
        r._requires_grad, r._grad_fn, r._output_nr = True, node, i
    return r


def save_for_backward(plan, inputs, args, arrays, results):
    """What the node's formulas read, by name (torch's `_saved_<name>`); `plan` is the
    spec's (name, kind, where) list for the inputs that require grad."""
    saved = {}
    for name, kind, where in plan:
        if kind == "input":
            v = inputs[where]
            saved[name] = SavedTensor(v) if isinstance(v, Tensor) else v
        elif kind == "output":
            saved[name] = saved_output(results[where])
        elif kind == "arg":
            saved[name] = args[where]
        else:
            index, suffix = where
            saved[name] = derived(arrays[index], suffix)
    return saved


def derived(value, suffix):
    """A fact about an input recorded at forward time (value is the input's array(s))."""
    if suffix == "_sym_sizes":
        return value.shape
    if suffix == "_sym_sizes_opt":  # an optional input's sizes; torch shows (0,) for None
        return (0,) if value is None else value.shape
    if suffix == "_sym_numel":
        return value.size
    if suffix == "_sym_strides":  # in elements, as torch's
        return tuple(s // value.itemsize for s in value.strides)
    if suffix == "_scalar_type":
        return value.dtype
    if suffix == "_dim":
        return value.ndim
    if suffix.startswith("_sym_argsize_"):  # one size (F.unfold's H and W: minus_2, minus_1)
        dim = suffix[len("_sym_argsize_"):]
        return value.shape[-int(dim[6:]) if dim.startswith("minus_") else int(dim)]
    return [a.shape for a in value]  # _args_sizes of a list input


def _share_base(source, views):
    """Results of view ops share memory and the version counter with the root base."""
    base = source._base if source._base is not None else source
    for v in views:
        v._base = base
        v._base_grad_fn = base._grad_fn
        v._version_counter = base._version_counter
        v._is_inference = base._is_inference


def view_indices(base, view):
    """For each element of `view` (a numpy view into `base`'s memory), the flat C-order index
    of the base element it aliases. (Views made by gradtool's ops never have negative
    strides.)"""
    itemsize = base.itemsize
    span = sum(s * (n - 1) for s, n in zip(base.strides, base.shape)) // itemsize + 1
    memory = np.empty(max(span, 1), dtype=np.int64)  # memory slot -> flat index stored there

    def slot_strides(strides):
        return tuple(s // itemsize * memory.itemsize for s in strides)
    as_strided = np.lib.stride_tricks.as_strided
    as_strided(memory, base.shape, slot_strides(base.strides))[...] = \
        np.arange(base.size).reshape(base.shape)
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // itemsize
    return as_strided(memory[start:], view.shape, slot_strides(view.strides)).copy()


def regenerate_view(view):
    """An in-place op changed the base's history since this view was made: the view gets the
    history `base -> view` over the base's current one (torch replays the view the same way)."""
    base = view._base
    view._base_grad_fn = base._grad_fn
    if not base._requires_grad:
        view._requires_grad, view._grad_fn, view._output_nr = False, None, 0
        return
    with grad_mode.enable_grad():
        alias = call(table.AS_STRIDED, (base,),
                     (view._data.shape, view_indices(base._data, view._data)))
    view._requires_grad, view._grad_fn, view._output_nr = True, alias._grad_fn, 0


def sync_view(t):
    """Bring a view's history up to date before anyone reads it."""
    if t._base is not None and t._base_grad_fn is not t._base._grad_fn:
        regenerate_view(t)


def as_result(out, arrays, spec, args=()):
    """numpy gives scalars for 0-d results and float64 where torch keeps float32 (int inputs,
    NumPy scalars): make it an array of torch's dtype."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if spec.promotion is not None:
        return _promoted(out, arrays, spec, args)
    if out.dtype is _FLOAT64 and spec.promotes_dtype and not any(
            isinstance(a, np.ndarray) and a.dtype in _DOUBLES for a in _flat(arrays)):
        out = out.astype(_FLOAT32)
    return out


def bfloat16_forward(spec, n, *values):
    """spec.forward as torch's CPU kernels run it on bfloat16 tensors (values: the n inputs'
    arrays, then the arguments): in float32 inside (sums and matmul accumulate in float32),
    the floating results rounded to bfloat16 once where the op's dtype is bfloat16 (not where
    an argument names another dtype: x.float()). Views share the input's memory: they run on
    it as it is."""
    if spec.view:
        return spec.forward(*values)
    explicit_dtype = any(isinstance(v, (np.dtype, dtypes.dtype)) for v in values[n:])
    operands = list(values[:n]) + [values[n + i] for i in spec.promoted_args]
    to_bfloat16 = not explicit_dtype and dtypes.result_type(*operands) is _BFLOAT16
    # a Python float operand is a bfloat16 wrapped number to torch (x + 0.1 adds 0.10009765625),
    # except in mul and div, whose CPU kernels take it in float32
    round_scalars = to_bfloat16 and spec.name not in _SCALARS_IN_FLOAT32
    inputs = list(values)
    for i, v in enumerate(values):
        if type(v) is _ndarray and v.dtype is _BFLOAT16:
            inputs[i] = v.astype(_FLOAT32)
        elif round_scalars and isinstance(v, float) and (  # (numpy float64 too)
                i < n or i - n in spec.promoted_args or spec.args[i - n] == "other"):
            inputs[i] = float(_FLOAT32.type(v).astype(_BFLOAT16))
    # (a kernel whose bfloat16 arithmetic is not its float32 one names it: gelu)
    out = getattr(spec.forward, "in_bfloat16", spec.forward)(*inputs)
    if not to_bfloat16:
        return out

    def rounded(o):
        o = np.asarray(o)
        return o.astype(_BFLOAT16) if o.dtype.kind == "f" else o
    return tuple(map(rounded, out)) if spec.multi_output else rounded(out)


_SCALARS_IN_FLOAT32 = frozenset(("mul", "div"))


def _promoted(out, arrays, spec, args):
    """The op's result in torch's dtype (dtypes.result_type of its operands): where numpy's
    promotion differs (0-d arrays and NumPy scalars count fully in numpy, integer true
    division gives float64, ...), computed again on operands cast to that dtype."""
    operands = list(arrays[0]) if spec.variadic else [arrays[p] for p in spec.diff_positions]
    operands += [args[i] for i in spec.promoted_args]
    want = dtypes.result_type(*operands)
    if spec.promotion == "float" and want.kind not in "fcV":
        want = dtypes.DEFAULT_FLOAT
    if out.dtype == want:
        return out
    compute = _FLOAT32 if want is _BFLOAT16 else want  # (bfloat16: in float32, rounded once)
    if spec.variadic:
        cast = ([a.astype(compute, copy=False) for a in arrays[0]],)
    else:
        cast = list(arrays)
        for p in spec.diff_positions:
            if isinstance(cast[p], (np.ndarray, np.generic)):
                cast[p] = cast[p].astype(compute, copy=False)
    args = tuple(compute.type(a) if i in spec.promoted_args and isinstance(a, np.generic)
                 else a for i, a in enumerate(args))
    out = np.asarray(run_forward(spec, cast, args))
    return out if out.dtype == want else out.astype(want)


# torch's own words where it refuses complex tensors too, by node ({}: the dtype's name)
_CLAMP = (NotImplementedError, "clamp is not supported for complex types")
_COMPLEX_REFUSALS = {
    "ReluBackward0": _CLAMP, "ClampBackward1": _CLAMP, "ClampMinBackward0": _CLAMP,
    "SignBackward0": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to "
                      "support complex numbers. Please use torch.sgn instead."),
    "MaximumBackward0": (RuntimeError, "maximum not implemented for complex tensors."),
    "MinimumBackward0": (RuntimeError, "minimum not implemented for complex tensors."),
    "MaxBackward1": (NotImplementedError, "\"max_all\" not implemented for '{}'"),
    "MinBackward1": (NotImplementedError, "\"min_all\" not implemented for '{}'"),
    "MaxBackward0": (RuntimeError, "max(): does not support complex input"),
    "MinBackward0": (RuntimeError, "min(): does not support complex input"),
    "SortBackward0": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "TopkBackward0": (RuntimeError, " topk does not support complex dtypes on CPU"),
}


def refuse_complex(spec, dtype):
    """An op whose formulas are real-only meets a complex value: refused, not computed."""
    refusal = _COMPLEX_REFUSALS.get(spec.node_class.__name__)
    if refusal is not None:
        error, message = refusal
        raise error(message.format(dtypes.LEGACY_TYPE_NAMES[dtype.name]))
    raise NotInEngineError(f"torch.{spec.name} on complex tensors")


def _flat(arrays):
    for a in arrays:
        if isinstance(a, list):
            yield from a
        else:
            yield a


def broadcast_mismatch(a, b):
    """torch's words for shapes a and b that do not broadcast together (None if they do)."""
    for i in range(1, max(len(a), len(b)) + 1):
        sa = a[-i] if i <= len(a) else 1
        sb = b[-i] if i <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) "
                    f"at non-singleton dimension {max(len(a), len(b)) - i}")
    return None


def _shape_error(spec, arrays, error):
    shapes = [np.shape(a) for a in _flat(arrays) if isinstance(a, np.ndarray)]
    mismatch = len(shapes) == 2 and spec.broadcasts and broadcast_mismatch(*shapes)
    return mismatch or f"{spec.name}: {error} (shapes {', '.join(str(list(s)) for s in shapes)})"

