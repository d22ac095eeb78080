"""BatchedTensor, vmap's value: a tensor of the engine whose batch dim is hidden (functorch's
design). It holds `_value`, the physical tensor with the batch at dim 0 (itself batched at a
lower level under nested vmaps), and `_level`, the vmap it belongs to. Its `_data` is a
LogicalArray: the logical shape, dtype and flags, so that code reading shapes works as on
one example, while numpy on it raises Unbatched, which the callers answer by running that
code one example at a time (the fallback). Ops reach rules.py through dispatch's hook.

The autograd graph is recorded on the physical tensors: batch elements never mix, so the
gradient of a batched output with respect to a batched input is the batch of per-example
gradients (eager.py relies on it)."""
import itertools

import numpy as np

from ..autograd import dispatch, indexing, inplace
from ..autograd.tensor import Tensor

_new_object = object.__new__


class Unbatched(Exception):
    """Raised where code computes on a batched tensor's values with numpy (a path with no
    batching rule): the caller runs it again one example at a time."""


class Level:
    """One active vmap: its number (1 for the outermost), batch size and randomness."""
    __slots__ = ("index", "size", "randomness", "looping")

    def __init__(self, index, size, randomness):
        self.index, self.size, self.randomness = index, size, randomness
        self.looping = False  # the fallback runs one example at a time: random draws may

    def __repr__(self):
        return f"<vmap level {self.index}, batch of {self.size}>"


LEVELS = []  # the active vmaps, outermost first


def level_of(index):
    for level in LEVELS:
        if level.index == index:
            return level
    raise RuntimeError("vmap: a batched tensor escaped the vmap it belongs to (was it saved "
                       "in a global or a closure and used after vmap returned?)")


def _unbatched(*args, **kwargs):
    raise Unbatched()


class LogicalArray:
    """What a BatchedTensor's `_data` is: the logical shape and dtype of the physical array
    (one example's), and numpy refused (Unbatched)."""
    __slots__ = ("physical",)

    def __init__(self, physical):
        self.physical = physical  # an ndarray, or a lower level's LogicalArray

    @property
    def shape(self):
        return self.physical.shape[1:]

    @property
    def ndim(self):
        return self.physical.ndim - 1

    @property
    def size(self):
        return int(np.prod(self.physical.shape[1:], dtype=np.int64))

    @property
    def dtype(self):
        return self.physical.dtype

    @property
    def itemsize(self):
        return self.physical.itemsize

    @property
    def flags(self):
        return self.physical.flags

    @property
    def strides(self):
        return self.physical.strides[1:]

    @property
    def examples(self):
        """Every example's values, one array (validations that hold for each example may read
        it: nll_loss's targets in range)."""
        physical = self.physical
        return physical.examples if isinstance(physical, LogicalArray) else physical

    __array__ = __array_ufunc__ = __array_function__ = __getitem__ = __setitem__ = _unbatched
    __iter__ = __len__ = __bool__ = __float__ = __int__ = __index__ = _unbatched
    for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
                  "or", "xor", "lt", "le", "gt", "ge", "eq", "ne", "neg", "invert", "abs"):
        for _form in ("__{}__", "__r{}__"):
            locals()[_form.format(_name)] = _unbatched
    del _name, _form
    __hash__ = object.__hash__

    def __getattr__(self, name):  # .astype, .copy, .reshape, .min, ...: values, refused
        raise Unbatched()


def batched(value, level):
    """A BatchedTensor at `level` (an index) around `value`, whose dim 0 is the batch."""
    t = _new_object(BatchedTensor)
    t._data = LogicalArray(value._data)
    t._value = value
    t._level = level
    t._output_nr = 0
    t._grad = t._accumulator = t._hooks = t._base = t._base_grad_fn = None
    mirror_graph(t)
    t._version_counter = value._version_counter
    t._is_inference = value._is_inference
    return t


def mirror_graph(t):
    """The physical tensor's place in the graph, on its BatchedTensor (for code that reads
    _requires_grad and _grad_fn: in-place checks, matmul's folding)."""
    t._requires_grad = t._value._requires_grad
    t._grad_fn = t._value._grad_fn


def top_level(values):
    """The highest vmap level among the BatchedTensors in `values` (lists looked into), or 0."""
    top = 0
    for v in values:
        if type(v) is BatchedTensor:
            if v._level > top:
                top = v._level
        elif type(v) in (list, tuple):
            for w in v:
                if type(w) is BatchedTensor and w._level > top:
                    top = w._level
    return top


def physical(v, index):
    """(the tensor with the batch of level `index` at dim 0, whether v is batched there)."""
    if type(v) is BatchedTensor and v._level == index:
        return v._value, True
    return v, False


class BatchedTensor(Tensor):
    """A tensor inside vmap: one example's shape, every example's values (see the module)."""
    __slots__ = ("_value", "_level")

    def __repr__(self):
        return (f"BatchedTensor(lvl={self._level}, bdim=0, value=\n"
                + "\n".join("    " + line for line in repr(self._value).splitlines()) + "\n)")

    # the graph lives on the physical tensor
    @property
    def requires_grad(self):
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        self._requires_grad = self._value._requires_grad
        return self

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def is_leaf(self):
        return self._value.is_leaf

    @property
    def data(self):
        return batched(self._value.data, self._level)

    def detach(self):
        return batched(self._value.detach(), self._level)

    # values read in Python: torch's refusals
    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
            "over calling .item() on a Tensor, please try to rewrite what you're doing with "
            "other operations. If error is occurring somewhere inside PyTorch internals, please "
            "file a bug report.")

    __float__ = __int__ = __complex__ = __index__ = item

    def __bool__(self):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues .")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    numpy = __array__ = tolist

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __reduce__(self):
        raise RuntimeError("vmap: a BatchedTensor cannot be saved or copied; return it from "
                           "the vmapped function instead")


# Methods that never read values (shapes, flags) or that BatchedTensor defines itself
_AS_IS = {"__init__", "__new__", "__getattribute__", "__setattr__", "__delattr__", "__dir__",
          "__init_subclass__", "__subclasshook__", "__class_getitem__", "__reduce_ex__",
          "__sizeof__", "__format__", "__eq__", "__ne__", "__hash__", "__repr__", "__str__",
          "_wrap", "size", "dim", "numel", "nelement", "is_floating_point", "is_complex",
          "is_contiguous", "get_device", "type", "element_size", "stride", "storage_offset",
          "data_ptr", "untyped_storage", "register_hook", "retain_grad", "backward"}


def _attach_fallbacks():
    """Every op method of Tensor, on BatchedTensor: run as is (the ops it calls batch), and
    where it computes on values with numpy, one example at a time."""
    from . import rules
    for name, attr in list(vars(Tensor).items()):
        if name in _AS_IS or name in vars(BatchedTensor) or not callable(attr) or isinstance(
                attr, (staticmethod, classmethod, type)):
            continue
        setattr(BatchedTensor, name, rules.method_with_fallback(name, attr))
    # ==, != are ops here (Tensor's are elementwise comparisons), not identity
    for name in ("__eq__", "__ne__"):
        if name in vars(Tensor):
            setattr(BatchedTensor, name, rules.method_with_fallback(name, vars(Tensor)[name]))
    BatchedTensor.__hash__ = object.__hash__


def _install_hooks():
    """While a vmap runs, dispatch and in-place ops send batched inputs to the rules."""
    from . import function, rules
    dispatch.batching_hook = rules.batched_call if LEVELS else None
    inplace.batching_hook = rules.batched_call_inplace if LEVELS else None
    indexing.batching_hook = rules.batched_getitem if LEVELS else None
    function.install()


_numbers = itertools.count(1)  # (a level's number is never reused: inner levels are higher)


def push(size, randomness):
    level = Level(next(_numbers), size, randomness)
    LEVELS.append(level)
    _install_hooks()
    return level


def pop(level):
    LEVELS.remove(level)
    _install_hooks()


def movedim(t, source, destination):
    """t with dim `source` moved to `destination` (a permute; the same tensor if in place)."""
    n = t.dim()
    source, destination = source % n, destination % n
    if source == destination:
        return t
    order = [d for d in range(n) if d != source]
    order.insert(destination, source)
    return t.permute(tuple(order))
