"""Graph nodes (torch's grad_fn objects) and the values they save for backward."""
import threading
import weakref

from . import forward_level
from . import anomaly, dtypes, grad_mode
from .tensor import Tensor

_state = grad_mode.state
FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class RemovableHandle:
    """Returned by every register_* call; .remove() takes the hook out again."""

    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class NodeHooks:
    """The hooks of one node, allocated only when the first one is registered."""

    __slots__ = ("pre", "post", "tensor_pre", "retains_grad")

    def __init__(self):
        self.pre = []          # fn(grad_outputs) -> new grad_outputs or None
        self.post = []         # fn(grad_inputs, grad_outputs) -> new grad_inputs or None
        self.tensor_pre = {}   # output_nr -> [fn(grad) -> new grad or None] (Tensor.register_hook)
        self.retains_grad = {}  # output_nr -> weakref to the non-leaf tensor that retains grad


class Node:
    """A function of the backward graph: maps gradients of its outputs to gradients of its
    inputs. `next_functions[i]` is the (node, output_nr) that receives input i's gradient."""

    __slots__ = ("next_functions", "_input_meta", "_for_backward", "_hooks", "_metadata",
                 "_anomaly_trace", "__weakref__")
    takes_arrays = False  # apply() also maps numpy arrays to arrays (the engine's fast path)
    batches = False  # apply_batched() maps batches of gradients (see engine._batched_grad)
    saves_tensors = True  # False: what it keeps needs no freeing after backward (scalars)
    # The values torch's node class exposes as `_saved_<name>`: {name: what reads when this
    # node did not save it}; the tensors among them are also `_raw_saved_<name>`.
    _exposed = {}
    _exposed_tensors = frozenset()
    _arg_index = {}  # exposed names that are arguments: their position in the node's _args

    def __init__(self, next_functions=(), input_meta=()):
        self.next_functions = next_functions
        self._input_meta = input_meta  # (shape, numpy dtype) per edge: what each input expects
        self._for_backward = None  # {name: SavedTensor or plain value}: what backward reads
        self._hooks = None
        self._metadata = None
        self._anomaly_trace = None

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def apply(self, grad_outputs):
        """Gradients of the inputs (one per next_functions edge) from those of the outputs."""
        raise NotImplementedError(f"{self.name()} defines no backward")

    def __call__(self, *grad_outputs):
        return tuple(self.apply(list(grad_outputs)))

    # -- saved values: _saved_<name> and _raw_saved_<name>, as torch exposes them, are
    # attributes of each op's node class (exposed_attributes), not a __getattr__: a class
    # with __getattr__ keeps CPython 3.11 from specializing the loads of every node field
    # the engine reads per node --

    def saved_values(self):
        """{name: SavedTensor or plain value}: what this node saved of torch's `_saved_*`."""
        exposed = type(self)._exposed
        return {name: v for name, v in (self._for_backward or {}).items() if name in exposed}

    def release_saved(self):
        """Free saved tensors after backward (non-tensor values stay readable, as in torch)."""
        kept = self._for_backward
        if kept:
            for value in kept.values():
                if type(value) is SavedTensor:
                    value.release()

    # -- hooks --
    def _node_hooks(self):
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; may return new grad_inputs."""
        hooks = self._node_hooks().post
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; may return new grad_outputs."""
        hooks = self._node_hooks().pre
        hooks.append(fn)
        return RemovableHandle(hooks, fn)


class _SavedAttribute:
    """A node's `_saved_<name>`: the value saved (a tensor unpacked, with its checks), or what
    torch shows when this call did not save it (an argument from the node's `_args`)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __get__(self, node, cls=None):
        if node is None:
            return self
        name = self.name
        kept = node._for_backward
        if kept and name in kept:
            value = kept[name]
            if type(value) is SavedIndices:  # (numpy's index, once its tensors are checked)
                value.check(node)
            return value.unpack(node) if type(value) is SavedTensor else value
        index = cls._arg_index.get(name)
        return cls._exposed[name] if index is None else node._args[index]


class _RawSavedAttribute(_SavedAttribute):
    """A node's `_raw_saved_<name>`: the SavedTensor itself (None once nothing is kept)."""

    __slots__ = ()

    def __get__(self, node, cls=None):
        if node is None:
            return self
        value = (node._for_backward or {}).get(self.name)
        return value if type(value) is SavedTensor else None


def exposed_attributes(exposed, exposed_tensors):
    """The class attributes `_saved_<name>` (and `_raw_saved_<name>` for tensors) of a node
    class exposing `exposed`."""
    attributes = {"_saved_" + name: _SavedAttribute(name) for name in exposed}
    attributes.update({"_raw_saved_" + name: _RawSavedAttribute(name)
                       for name in exposed_tensors})
    return attributes


class GraphRoot(Node):
    """The engine's entry point: hands the initial gradients to the roots."""

    __slots__ = ("grads",)

    def __init__(self, edges, grads, metas):
        super().__init__(tuple(edges), tuple(metas))
        self.grads = grads

    batches = True

    def apply(self, grad_outputs):
        return list(self.grads)

    apply_batched = apply


class AccumulateGrad(Node):
    """The node behind a leaf tensor that requires grad; backward sums into `.variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__()
        self.variable = variable

    def apply(self, grad_outputs):  # the engine accumulates; see engine.accumulate_into_leaf
        return []


_making_accumulator = threading.Lock()


def accumulator_of(leaf):
    """The leaf's AccumulateGrad, shared by every op that uses the leaf while it lives.
    The leaf holds it weakly (the node holds the leaf strongly), so no cycle. Made under a
    lock (checked again inside it): two threads never give one leaf two accumulators."""
    ref = leaf._accumulator
    node = ref() if ref is not None else None
    if node is None:
        with _making_accumulator:
            ref = leaf._accumulator
            node = ref() if ref is not None else None
            if node is None:
                node = AccumulateGrad(leaf)
                leaf._accumulator = weakref.ref(node)
    return node


class SavedTensor:
    """A tensor a node keeps for backward (torch's SavedVariable): remembers the version it was
    saved at, is freed after backward, and may be packed by saved-tensor hooks.
    An op's own output is kept as data only (no reference to the node), so no cycle."""

    __slots__ = ("_tensor", "_data", "_version_counter", "saved_version", "is_output",
                 "_requires_grad", "_output_nr", "_freed", "_packed", "_unpack_hook",
                 "_graph_edge", "_fw_grad")

    def __init__(self, tensor, is_output=False):
        if not is_output and tensor._is_inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. To work around "
                               "you can make a clone to get a normal tensor and use it in "
                               "autograd.")
        counter = self._version_counter = tensor._version_counter
        self.saved_version = counter[0]
        self.is_output = is_output
        self._freed = False
        self._packed = self._unpack_hook = None
        if is_output:
            self._tensor = None
            self._data = tensor._data
            self._requires_grad = tensor._requires_grad
            self._output_nr = tensor._output_nr
        else:
            self._tensor = tensor
            self._data = None
        hooks = _state.saved_tensors_hooks if grad_mode.threads_off_default else ()
        if hooks:  # the innermost saved_tensors_hooks pair packs every tensor saved inside it
            self.register_hooks(*hooks[-1])

    def release(self):
        self._freed = True
        self._tensor = self._data = self._packed = None

    @property
    def version_now(self):
        return self._version_counter[0]

    @property
    def shape(self):
        return self._array().shape

    @property
    def dtype(self):
        return self._array().dtype

    def _array(self):
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        return self._tensor._data if self._tensor is not None else self._data

    def unpack(self, owner=None):
        """The saved tensor, after checking nobody modified it in place since it was saved."""
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._version_counter[0] != self.saved_version:
            raise RuntimeError(version_error(self, owner))
        if self._tensor is not None:
            return self._tensor
        if self._unpack_hook is not None:
            data = _as_array(self._unpack_hook(self._packed), self._unpack_hook)
        else:
            data = self._data
        out = Tensor._wrap(data)
        if self._requires_grad:
            out._requires_grad = True
            if self.is_output:
                out._grad_fn, out._output_nr = owner, self._output_nr
            else:  # a copy (pack hook, in-place snapshot): reconnect to the original's graph
                out._grad_fn, out._output_nr, out._accumulator = self._graph_edge
        tangent = getattr(self, "_fw_grad", None) if forward_level.active is not None else None
        if tangent is not None:  # an output saved with its tangent (forward_ad)
            out._fw_grad = tangent
        return out

    def unpack_array(self, owner=None):
        """unpack()'s array, for formulas that run on arrays: the same checks, no Tensor."""
        if self._unpack_hook is None and not self._freed and (
                self._version_counter[0] == self.saved_version):
            return self._data if self._tensor is None else self._tensor._data
        return self.unpack(owner)._data  # raises unpack()'s errors, or runs the unpack hook

    def register_hooks(self, pack_hook, unpack_hook):
        """Replace the stored tensor by pack_hook(tensor); backward calls unpack_hook on it."""
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._unpack_hook is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks expects two callables: pack_hook, unpack_hook")
        tensor = self._tensor
        if tensor is None:
            tensor = Tensor._wrap(self._data)
        else:
            self._remember_graph_edge(tensor)
        self._packed = pack_hook(tensor)
        self._unpack_hook = unpack_hook
        self._tensor = self._data = None

    def snapshot(self):
        """Keep a copy of the data instead of the tensor, which an in-place op is about to
        overwrite (torch saves `original_self` the same way)."""
        tensor = self._tensor
        self._remember_graph_edge(tensor)
        self._data = tensor._data.copy()
        self._version_counter = [0, None]
        self.saved_version = 0
        self._tensor = None

    def _remember_graph_edge(self, tensor):
        self._requires_grad = tensor._requires_grad
        leaf_accumulator = (weakref.ref(accumulator_of(tensor))
                            if tensor._requires_grad and tensor._grad_fn is None else None)
        self._graph_edge = (tensor._grad_fn, tensor._output_nr, leaf_accumulator)


def _released():
    saved = SavedTensor.__new__(SavedTensor)
    saved._tensor = saved._data = saved._packed = saved._unpack_hook = None
    saved._version_counter, saved.saved_version, saved.is_output = [0, None], 0, False
    saved._requires_grad, saved._output_nr, saved._freed = False, 0, True
    return saved


# A saved value already freed: reading it raises the freed error. (One object for all:
# nothing changes a freed value, and backward frees one per number an op saved.)
RELEASED = _released()
_new_saved = SavedTensor.__new__


def saved_output(tensor):
    """SavedTensor(tensor, is_output=True), its fields set here: no __init__ to go through
    on the per-op path (an op saving its result, as tanh and exp do)."""
    saved = _new_saved(SavedTensor)
    counter = saved._version_counter = tensor._version_counter
    saved.saved_version = counter[0]
    saved.is_output = True
    saved._freed = False
    saved._packed = saved._unpack_hook = saved._tensor = None
    saved._data = tensor._data
    saved._requires_grad = tensor._requires_grad
    saved._output_nr = tensor._output_nr
    if grad_mode.threads_off_default:  # (else no thread has saved-tensor hooks)
        hooks = _state.saved_tensors_hooks
        if hooks:
            saved.register_hooks(*hooks[-1])
    return saved


class SavedIndices(tuple):
    """An index op's numpy index (x[idx], x[idx] = v, index_put) that also keeps the index
    tensors it was read from as torch saves them (SavedTensors, with their versions): the
    formulas read the arrays, which are the tensors' own memory, so writing into an index
    after the forward must make backward raise torch's in-place error, not read new values."""

    def __new__(cls, index, tensors):
        self = tuple.__new__(cls, index)
        self.saved = tuple(SavedTensor(t) for t in tensors)
        return self

    def check(self, owner):
        """Raise as unpack() would (modified in place, or freed) for any index tensor."""
        for saved in self.saved:
            saved.unpack_array(owner)

    def released(self):
        """The same index with its tensors freed (reading it raises the freed error)."""
        return SavedIndices(self, ())._freed(len(self.saved))

    def _freed(self, count):
        self.saved = (RELEASED,) * count
        return self


def _as_array(unpacked, hook):
    if not isinstance(unpacked, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook {getattr(hook, '__name__', hook)!r} "
                        f"must be a Tensor, got {type(unpacked).__name__}")
    return unpacked._data


def type_name(array):
    """torch's name of a tensor's type in its messages: its legacy tensor class where torch
    has one (torch.LongTensor), else the backend's type (CPUBoolType, CPUComplexFloatType)."""
    name = dtypes.LEGACY_TYPE_NAMES.get(array.dtype.name, "")
    if array.dtype.kind in "bc":
        return f"CPU{name}Type"
    return f"gradtool.{name}Tensor"


def version_error(saved, owner):
    """torch's in-place error, for a saved tensor whose version moved since it was saved."""
    array = saved._data if saved._tensor is None else saved._tensor._data
    what = "[gradtool.Tensor]" if array is None else f"[{type_name(array)} {list(array.shape)}]"
    if saved.is_output and owner is not None:
        what += f", which is output {saved._output_nr} of {owner.name()},"
    elif saved._tensor is not None and saved._tensor._grad_fn is not None:
        t = saved._tensor
        what += f", which is output {t._output_nr} of {t._grad_fn.name()},"
    counter = saved._version_counter
    beyond_torch = (f" It was saved for backward by {owner.name()}" if owner is not None
                    else " It was saved for backward") + \
        f"; the last in-place operation on it ran at {anomaly.format_site(counter[1])}."
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {what} is at version {counter[0]}; expected "
            f"version {saved.saved_version} instead." + beyond_torch + " Hint: enable anomaly "
            "detection to find the operation that failed to compute its gradient, with "
            "gradtool.autograd.set_detect_anomaly(True).")
