"""The adapter for real PyTorch (`--engine torch`). Imported only when asked for: torch is
never a dependency of gradtool.

torch's graph is read through its public Python attributes: `grad_fn`, `next_functions`,
`_saved_*`, `metadata`, `_input_metadata` (each forward output's shape and dtype), and the
ctx of a custom Function (`saved_tensors`, `needs_input_grad`, `_forward_cls`)."""
import contextlib
import functools
import os
import re

import numpy as np
import torch
from torch.autograd import forward_ad
from torch.autograd.function import BackwardCFunction

from .records import SavedInfo, set_stats
from .errors import NoDevice, NoValues

_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+)")


# ---- the Engine's names (adapters/__init__.py): this module is torch's Engine
name = "torch"
Tensor = torch.Tensor
Function = torch.autograd.Function
once_differentiable_code = torch.autograd.function.once_differentiable(
    lambda ctx: None).__code__
own_dirs = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,)


# ---- tensors
def is_tensor(x):
    return isinstance(x, torch.Tensor)


def array(t):
    """t's values as a numpy array: the one place a value crosses to the host. A CPU
    tensor's array shares its memory; a tensor elsewhere (CUDA, ...) is copied, bfloat16
    as float32 (numpy has no bfloat16: every bfloat16 is a float32 exactly). A view with
    torch's conjugate or negative bit (`x.conj()` of a complex x, `torch._neg_view`) gives
    the values it shows, and a ZeroTensor (the zeros torch saves in a Hessian-vector
    product, which have no memory behind them) gives zeros. A tensor with no values (the
    meta device) raises NoValues."""
    host = t.detach()
    if host._is_zerotensor():
        return np.zeros(tuple(host.shape), _numpy_dtype(host.dtype))
    try:
        host = host.cpu()
    except NotImplementedError as e:  # meta: "Cannot copy out of meta tensor; no data!"
        raise NoValues(f"a tensor on the {t.device} device holds no values ({e})") from None
    host = host.resolve_conj().resolve_neg()  # (each the tensor itself when its bit is off)
    return (host.float() if host.dtype == torch.bfloat16 else host).numpy()


def writable(t):
    """t's values to perturb in place (gradcheck), without moving its version counter (as
    torch's gradcheck writes `.data`): its numpy array when that shares t's memory, else
    the values where they live, written there (DeviceValues)."""
    host = t.detach().cpu() if t.device.type != "meta" else None
    if host is not None and host.dtype != torch.bfloat16 and _plain_memory(host) and \
            host.data_ptr() == t.data_ptr() and type(host) is torch.Tensor:
        return host.numpy()
    return DeviceValues(t, array(t))


def wrap(array, like=None):
    """A tensor on these values (shared when possible); with `like` (a tensor, or anything
    with its .device and .dtype), on like's device in like's dtype: a grad_output goes
    where its output is."""
    array = np.asarray(array)
    t = torch.from_numpy(array if array.flags.writeable else array.copy())
    return t if like is None else t.to(device=like.device, dtype=like.dtype)


def numpy_dtype(t):
    """The numpy dtype of t's values as array(t) gives them."""
    return _numpy_dtype(t.dtype)


def leaf(array, requires_grad, device=None, dtype=None):
    """A fresh leaf holding a copy of array, on `device`, in the dtype named `dtype`."""
    t = torch.from_numpy(np.asarray(array))
    # a copy either way: the leaf owns its values
    t = t.to(device=device, dtype=None if dtype is None else getattr(torch, dtype),
             copy=True)
    return t.requires_grad_(requires_grad)


def ones_like(t):
    return torch.ones_like(t)


def has_values(t):
    return t.device.type != "meta"


def device_name(t):
    return str(t.device)


def check_device(name):
    """torch's device called `name`, or NoDevice saying why it cannot be used here."""
    try:
        device = torch.device(name)
        torch.empty(0, device=device)
    except (RuntimeError, AssertionError) as e:  # a bad name; CUDA not built or no GPU
        raise NoDevice(f"--device {name}: torch cannot place a tensor there "
                       f"({str(e).splitlines()[0]})") from None
    return device


def dtype_name(t):
    return str(t.dtype).removeprefix("torch.")


def version(t):
    return t._version


def inplace_site(t):
    """torch does not record where an in-place op ran."""
    return None

manual_seed = torch.manual_seed


def uniform_like(t, low, high):
    dtype = t.dtype if t.is_floating_point() else torch.float64
    return torch.empty(t.shape, dtype=dtype).uniform_(low, high)


# ---- autograd
no_grad = torch.no_grad
enable_grad = torch.enable_grad


def grad(outputs, inputs, grad_outputs, *, retain_graph=None, create_graph=False,
         allow_unused=False, is_grads_batched=False):
    outputs, inputs = list(outputs), list(inputs)
    if not is_grads_batched:
        return torch.autograd.grad(outputs, inputs, grad_outputs, retain_graph=retain_graph,
                                   create_graph=create_graph, allow_unused=allow_unused)
    # one backward per row: torch batches with vmap, which a custom Function without a
    # vmap rule refuses
    rows = [torch.autograd.grad(outputs, inputs, [g[b] for g in grad_outputs],
                                retain_graph=True, create_graph=create_graph,
                                allow_unused=allow_unused)
            for b in range(len(grad_outputs[0]))]
    return tuple(None if column[0] is None else torch.stack(column)
                 for column in zip(*rows))


def backward(tensors, grad_tensors):
    torch.autograd.backward(list(tensors), list(grad_tensors))


def jvp(call, inputs, position, tangent):
    x = inputs[position]
    tangent = torch.from_numpy(tangent.reshape(tuple(x.shape)).copy()).to(x.device)
    with forward_ad.dual_level():
        duals = list(inputs)
        if isinstance(x, torch.nn.Parameter):
            # a module reads its parameter in place, not the dual it was passed: give the
            # parameter itself the tangent (an in-place copy of a dual; the level's exit
            # removes it)
            with torch.no_grad():
                x.copy_(forward_ad.make_dual(x.detach().clone(), tangent))
        else:
            duals[position] = forward_ad.make_dual(x, tangent)
        outs = call(duals)
        outs = outs if isinstance(outs, tuple) else (outs,)
        tangents = [forward_ad.unpack_dual(o).tangent if isinstance(o, torch.Tensor)
                    else None for o in outs]
    return [None if t is None else array(t) for t in tangents]


def batched_jvp(call, inputs, position, tangents):
    """J v for each v in `tangents`, one jvp at a time; call(*inputs) as gradtool's."""
    columns = [jvp(lambda args: call(*args), inputs, position, t) for t in tangents]
    outs = call(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [np.stack([np.zeros(tuple(o.shape)) if c[i] is None else c[i] for c in columns])
            if isinstance(o, torch.Tensor) else None for i, o in enumerate(outs)]


def last_tangent(t):
    return None  # torch drops a tangent when its dual level exits


# ---- the graph
def gradient_edge(t):
    edge = torch.autograd.graph.get_gradient_edge(t)
    return edge.node, edge.output_nr


def topological_order(roots):
    from ..engine.autograd.walk import topological_order
    return topological_order(roots)


def node_name(node):
    if isinstance(node, BackwardCFunction):  # a Function's node: torch 2.11 refuses .name()
        return type(node).__name__
    return node.name().rpartition("::")[2]  # torch::autograd::AccumulateGrad


def node_kind(node):
    name = type(node).__name__
    return ("leaf" if name == "AccumulateGrad" else
            "custom" if isinstance(node, BackwardCFunction) else
            "copy_slices" if name == "CopySlices" else "op")


def edge_meta(node):
    meta = []
    for child, nr in node.next_functions:
        if child is None:
            meta.append(None)
        elif hasattr(child, "variable"):
            meta.append((tuple(child.variable.shape), _dtype_name(child.variable.dtype)))
        else:
            m = child._input_metadata[nr]
            meta.append((tuple(m.shape), _dtype_name(m.dtype)))
    return meta


def saved_values(node):
    if isinstance(node, BackwardCFunction):
        try:
            return {f"saved_tensors[{i}]": t for i, t in enumerate(node.saved_tensors)}
        except RuntimeError as e:
            return {"saved_tensors": _Unreadable(e)}
    values = {}
    for name in dir(node):
        if name.startswith("_saved_"):
            try:
                values[name] = getattr(node, name)
            except RuntimeError as e:  # freed, or modified in place since
                values[name] = _Unreadable(e)
    return values


def saved_info(label, value, pending=None):
    """As gradtool's adapter's (adapters/gradtool.py)."""
    if isinstance(value, _Unreadable):
        info = SavedInfo(label, True)
        found = _VERSIONS.search(value.message)
        if found:  # torch refuses to give it back: its shape and values are unknown
            info.version_now, info.version_saved = int(found.group(1)), int(found.group(2))
            info.state = "modified"
        elif "freed" in value.message:
            info.state = "freed"
        return info
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, torch.Tensor) for v in value):
        value = value[0] if len(value) == 1 else value
    if not isinstance(value, torch.Tensor):
        from .records import short_repr
        return SavedInfo(label, False, value=short_repr(value))
    values = array(value) if has_values(value) else None
    info = SavedInfo(label, True, shape=tuple(value.shape), dtype=_dtype_name(value.dtype),
                     is_output=label == "_saved_result", version_saved=value._version,
                     version_now=value._version,
                     nbytes=value.element_size() * value.numel(),
                     array_id=_storage_id(value))
    if values is not None:
        set_stats(info, values, pending)
    return info


def metadata(node):
    return node.metadata


# ---- custom Functions
def custom_nodes(roots):
    return [n for n in topological_order(roots) if isinstance(n, BackwardCFunction)]


def ctx_attributes(node):
    return dict(vars(node))


def call_backward(node, grads):
    """backward's results per next_functions edge (torch's apply returns one per forward
    argument: the edges are the tensor arguments)."""
    result = node.apply(*grads)
    result = list(result) if isinstance(result, tuple) else [result]
    return [None if k is None else result[k] for k in edge_positions(node)]


def grad_output_meta(node):
    return [(tuple(m.shape), _numpy_dtype(m.dtype), m) for m in node._input_metadata]


def edge_positions(node):
    """The forward argument behind each next_functions edge. torch keeps an edge per
    tensor argument, and ctx.needs_input_grad an entry per argument: the edges that
    require grad are the arguments it marks (None for the others when some arguments
    are not tensors)."""
    needs, edges = node.needs_input_grad, node.next_functions
    if len(needs) == len(edges):
        return tuple(range(len(edges)))
    marked = iter(k for k, need in enumerate(needs) if need)
    return tuple(None if child is None else next(marked, None) for child, _ in edges)


def dirty(node):
    return node.dirty_tensors or ()


def materializes_grads(node):
    return getattr(node, "materialize_grads", None) is not False


def cut_once_differentiable(grads):
    pass  # torch's own once_differentiable already gives torch's verdict


# ---- running a user's file
def importing():
    return contextlib.nullcontext()  # the file's `import torch` is torch


def trace(target_code, record_ops=False):
    """(record_ops, every op's inputs for --localize all: gradtool's engine only; the CLI
    refuses it on torch before anything runs)"""
    from .torch_trace import TorchTrace
    return TorchTrace(target_code)


def module_class():
    return torch.nn.Module


def opcheck(op, args, kwargs):
    """torch.library.opcheck(op, args, kwargs, raise_exception=False): torch's own."""
    return torch.library.opcheck(op, args, kwargs, raise_exception=False)


class DeviceValues:
    """A tensor's values where they live (CUDA, ...), perturbed in place as gradcheck perturbs
    a CPU tensor's numpy array: each write is one small copy to the device (no sync), reads
    come from a host mirror that every write keeps current. The numpy subset gradcheck uses:
    shape, size, dtype, strides, flags, flat[k], [...] = values, copy()."""

    def __init__(self, t, mirror):
        self._data = t.data  # .data: the writes move no version counter (torch's gradcheck)
        self._mirror = mirror
        self.shape, self.size, self.dtype = mirror.shape, mirror.size, mirror.dtype
        self.strides = tuple(s * mirror.itemsize for s in t.stride())
        self.flags = mirror.flags
        self.flat = _FlatWrites(self)

    def copy(self):
        return self._mirror.copy()

    def __setitem__(self, key, values):
        self._mirror[key] = values
        self._data.copy_(torch.from_numpy(np.ascontiguousarray(self._mirror)))

    def _set(self, k, value):
        self._mirror.flat[k] = value
        self._data[np.unravel_index(k, self.shape)] = self._mirror.flat[k].item()


class _FlatWrites:
    def __init__(self, values):
        self._values = values

    def __getitem__(self, k):
        return self._values._mirror.flat[k]

    def __setitem__(self, k, value):
        self._values._set(k, value)


class _Unreadable:
    """A saved value torch refuses to give back (freed after backward, or modified in place
    since it was saved)."""

    def __init__(self, error):
        self.message = str(error)


def _plain_memory(t):
    """Whether t's memory holds its values as they read: no conjugate or negative bit, and
    memory at all (a ZeroTensor has none)."""
    return not (t.is_conj() or t.is_neg() or t._is_zerotensor())


def _storage_id(t):
    """What tells one saved tensor's memory from another's (a ZeroTensor has no storage)."""
    if t._is_zerotensor():
        return id(t)
    return t.untyped_storage().data_ptr() or id(t)


@functools.lru_cache(maxsize=None)
def _dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


@functools.lru_cache(maxsize=None)
def _numpy_dtype(dtype):
    return np.dtype("float32" if dtype == torch.bfloat16 else _dtype_name(dtype))

