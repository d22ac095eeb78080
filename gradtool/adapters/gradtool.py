"""The adapter for gradtool's bundled engine: its tensors hold a numpy array (`_data`), its
nodes keep their saved values in `_for_backward` and their forward inputs' metadata in `_input_meta`."""

import functools
import numpy as np

from ..engine.autograd import creation, dtypes, forward_ad, grad_mode
from ..engine.autograd import engine as _engine
from ..engine.autograd.creation import generator
from ..engine.autograd.function import BackwardCFunction, Function, once_differentiable
from ..engine.autograd.function import Error as _OnceDifferentiableError
from ..engine.autograd.node import AccumulateGrad, SavedTensor
from ..engine.autograd.tensor import Tensor
from ..engine.autograd.inplace import CopySlices
from ..engine.autograd.walk import topological_order
from .records import SavedInfo, set_stats, short_repr

_CTX_OWN_ATTRIBUTES = frozenset(vars(BackwardCFunction()))  # what gradtool keeps on ctx
_dtype_names = {}  # numpy dtype -> its name: str(dtype) runs numpy's Python code (~5 µs)


def _dtype_name(numpy_dtype):
    name = _dtype_names.get(numpy_dtype)
    if name is None:
        name = _dtype_names[numpy_dtype] = str(numpy_dtype)
    return name


# ---- the Engine's names (adapters/__init__.py): this module is gradtool's Engine (Tensor,
# Function: imported above)
name = "gradtool"
once_differentiable_code = once_differentiable(lambda ctx: None).__code__
# where the engine's own code is (an error raised there is the engine's, not the user's)
own_dirs = ()  # folders besides gradtool's whose frames are the engine's, not the user's


# ---- tensors
def is_tensor(x):
    return isinstance(x, Tensor)


def array(t):
    """t's values as a numpy array sharing its memory: writing to it changes t without
    moving its version counter (how gradcheck perturbs inputs, as torch does via .data)."""
    return t._data


def numpy_dtype(t):
    return t._data.dtype


writable = array  # the CPU is the only device: the array is where the values live


def wrap(array, like=None):
    """A tensor that does not require grad, on this array (shared when possible)."""
    return Tensor._wrap(np.asarray(array))


def leaf(array, requires_grad, device=None, dtype=None):
    """A fresh leaf tensor holding a copy of array (in the dtype named `dtype`)."""
    array = np.array(array)
    if dtype is not None:
        if dtype not in ("float16", "bfloat16", "float32", "float64"):
            from .errors import NoDtype
            raise NoDtype(f"gradtool's engine has no {dtype} (its floats are float16, "
                          f"bfloat16, float32 and float64): --engine torch checks {dtype}")
        array = array.astype(dtypes.to_numpy_dtype(dtypes._by_name(dtype)))
    return creation.tensor(array, requires_grad=requires_grad)


def ones_like(t):
    return Tensor._wrap(np.ones_like(t._data))


def has_values(t):
    return True


def device_name(t):
    return "cpu"


def check_device(name):
    """The CPU, or NoDevice: gradtool's engine has no other device."""
    from ..engine.autograd.device import device
    from .errors import NoDevice
    try:
        found = device(name)
    except RuntimeError as e:
        raise NoDevice(f"--device {name}: {e}") from None
    if found.type != "cpu":
        raise NoDevice(f"--device {name}: gradtool's engine runs on the CPU only; "
                       f"--engine torch runs on {found.type} when torch has it")
    return found


def dtype_name(t):
    return _dtype_name(t._data.dtype)  # numpy's name


def version(t):
    return t._version_counter[0]


def inplace_site(t):
    """(file, line, function) of the last in-place op on t's memory, if one ran."""
    return t._version_counter[1]


def manual_seed(seed):
    creation.manual_seed(seed)


def uniform_like(t, low, high):
    """Values drawn from the engine's seeded generator (torch.manual_seed's)."""
    dtype = t._data.dtype if t._data.dtype.kind in "fV" else np.dtype(np.float64)  # (V: bfloat16)
    return Tensor._wrap(generator().uniform(low, high, t.shape).astype(dtype))


# ---- autograd
no_grad = grad_mode.no_grad
enable_grad = grad_mode.enable_grad


def grad(outputs, inputs, grad_outputs, *, retain_graph=None, create_graph=False,
         allow_unused=False, is_grads_batched=False):
    return _engine.grad(list(outputs), list(inputs), grad_outputs,
                        retain_graph=retain_graph, create_graph=create_graph,
                        allow_unused=allow_unused, is_grads_batched=is_grads_batched)


def backward(tensors, grad_tensors):
    _engine.backward(list(tensors), list(grad_tensors))


def jvp(call, inputs, position, tangent):
    """The outputs' tangents (arrays, None where an output has none) when inputs[position]
    carries `tangent` (an array): one forward-mode evaluation of call(*inputs)."""
    x = inputs[position]
    with forward_ad.dual_level():
        # the input itself carries the tangent (not a detached dual, as torch's): a
        # module reads its parameters in place, and a function that differentiates its
        # input (autograd.grad inside) still can
        with forward_ad.tangent_on(x, Tensor._wrap(tangent.reshape(x._data.shape))):
            outs = call(list(inputs))
        outs = outs if isinstance(outs, tuple) else (outs,)
        tangents = [forward_ad.tangent_of(o) if isinstance(o, Tensor) else None
                    for o in outs]
    return [None if t is None else t._data for t in tangents]


def batched_jvp(call, inputs, position, tangents):
    from ..engine.autograd.functional import batched_jvp
    return batched_jvp(call, inputs, position, tangents)


def last_tangent(t):
    tangent = forward_ad.last_tangent(t)
    return None if tangent is None else tangent._data


# ---- the graph
gradient_edge = _engine.gradient_edge


def node_name(node):
    return node.name()


def node_kind(node):
    kind = _kinds.get(type(node))
    if kind is None:
        kind = _kinds[type(node)] = (
            "leaf" if isinstance(node, AccumulateGrad) else
            "custom" if isinstance(node, BackwardCFunction) else
            "copy_slices" if isinstance(node, CopySlices) else
            "op" if hasattr(type(node), "spec") else "other")
    return kind


_kinds = {}  # a node's class -> its kind: a graph has thousands of nodes of a few classes


def edge_meta(node):
    """(shape, dtype name) of the tensor behind each next_functions edge (None where the
    forward input did not require grad)."""
    return [None if meta is None else _meta(tuple(meta[0]), meta[1]) for meta in node._input_meta]


@functools.lru_cache(maxsize=4096)
def _meta(shape, dtype):  # the same few for thousands of edges: one tuple each
    return shape, _dtype_name(dtype)


def saved_values(node):
    """{label: the saved object} as the user reads them: `_saved_self`, or
    `saved_tensors[i]` for a custom Function."""
    if isinstance(node, BackwardCFunction):
        return {_label("saved_tensors[{}]", k): v for k, v in node.saved_values().items()}
    exposed = getattr(type(node), "_exposed", None)
    if exposed is None:
        return {_label("_saved_{}", k): v for k, v in node.saved_values().items()}
    # every `_saved_*` the node has, as torch lists them: kept for backward, else an
    # argument torch saves always (alpha), else unset (None, as torch's)
    kept, arg_index = node._for_backward or {}, type(node)._arg_index
    return {_label("_saved_{}", name): kept[name] if name in kept else
            default if arg_index.get(name) is None else node._args[arg_index[name]]
            for name, default in exposed.items()}


@functools.lru_cache(maxsize=4096)
def _label(pattern, key):  # the same few names for thousands of nodes: each text made once
    return pattern.format(key)


def saved_info(name, value, pending=None):
    """SavedInfo of one saved value (a SavedTensor, or a plain value); its statistics at once,
    or, given `pending`, when records.fill_stats(pending) computes them."""
    if value is None:
        return _plain_saved(name, "None")
    if not isinstance(value, SavedTensor):
        return _plain_saved(name, short_repr(value))
    info = SavedInfo(name, True, is_output=value.is_output,
                     version_saved=value.saved_version, version_now=value.version_now)
    if info.modified:
        info.modified_at = value._version_counter[1]
    if value._freed:
        info.state = "freed"
        return info
    if value._unpack_hook is not None:
        info.state = "packed"  # reading it would run the user's unpack hook: we do not
        return info
    array = value._array()
    info.shape, info.dtype, info.nbytes = _shape(array.shape), _dtype_name(array.dtype), \
        array.nbytes
    info.array_id = id(array.base if array.base is not None else array)
    set_stats(info, array, pending)
    return info


@functools.lru_cache(maxsize=4096)
def _shape(shape):  # the same few for thousands of saved tensors: one tuple each
    return shape


@functools.lru_cache(maxsize=4096)
def _plain_saved(name, text):
    """A saved value that is no tensor (a dim, an exponent): the same few for thousands of
    nodes, one record each (nothing changes such a record once made)."""
    return SavedInfo(name, False, value=text)


def metadata(node):
    return node._metadata or {}


# ---- custom Functions (ctx objects), for the hazard probes
def custom_nodes(roots):
    return [n for n in topological_order(roots) if isinstance(n, BackwardCFunction)]


def ctx_attributes(node):
    """The attributes the user's forward set on ctx."""
    return {k: v for k, v in vars(node).items() if k not in _CTX_OWN_ATTRIBUTES}


def call_backward(node, grads):
    """The Function's backward called directly with these grads (Tensors or None)."""
    return list(node.apply(grads))


def grad_output_meta(node):
    """(shape, numpy dtype, like) per forward output (None for a non-tensor output); like
    is what wrap(array, like) places a gradient by (None: the CPU is the only device)."""
    return [None if m is None else (*m, None) for m in node._output_meta]


def edge_positions(node):
    """The forward argument behind each next_functions edge."""
    return node._arg_positions


def dirty(node):
    return node._dirty


def materializes_grads(node):
    return node._materialize_grads


def cut_once_differentiable(grads):
    """torch hangs a once_differentiable backward's results on an error node whose inputs
    are detached copies: autograd.grad finds no path to the real inputs (zero gradients;
    only .backward() reaching the copies raises). gradtool's error node is wired to the
    incoming gradients instead, so autograd.grad raises; cut those edges to get torch's
    verdict (a Jacobian mismatch, all zero) for gradgradcheck."""
    roots = [g.grad_fn for g in grads if g.grad_fn is not None]
    for node in topological_order(roots):
        if isinstance(node, _OnceDifferentiableError):
            node.next_functions = tuple((None, 0) for _ in node.next_functions)


# ---- running a user's file
def importing():
    """While the user's file is imported: its `import torch` gives gradtool."""
    from .torch_alias import as_torch
    return as_torch()


def trace(target_code, record_ops=False):
    from .trace import ForwardTrace
    trace = ForwardTrace(target_code)
    trace.record_ops = record_ops
    return trace


def module_class():
    from ..engine.nn import Module
    return Module


def opcheck(op, args, kwargs):
    """torch.library.opcheck(op, args, kwargs, raise_exception=False): the engine's."""
    from ..engine.library import opcheck
    return opcheck(op, args, kwargs, raise_exception=False)

