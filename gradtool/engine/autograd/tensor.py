"""Tensor, the data model (its array, dtype, shape, requires_grad, grad, version counter,
grad_fn, views' base), below every other module of the engine; the methods that run ops are
tensor_methods.py's, attached to the class when gradtool.autograd is imported."""
import numbers
import os
import warnings
import weakref

import numpy as np

from . import dtypes, grad_mode, observers
from .observers import subscribers as _subscribers  # anyone watching what leaves the graph?

_state = grad_mode.state
_new_object = object.__new__


class Size(tuple):
    """A tensor's shape: a tuple that prints as torch.Size does."""

    def __repr__(self):
        return f"gradtool.Size({list(self)})"

    def numel(self):
        return int(np.prod(self))


def _dim(d, ndim):
    """A dim index made non-negative, with torch's error when out of range."""
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not isinstance(d, numbers.Integral) or isinstance(d, bool):
        raise TypeError(f"dim must be an int, got {type(d).__name__}")
    if not lo <= d <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {d})")
    return d % ndim if ndim else 0


def _dims(dim, ndim):
    """Reduction dims as a tuple of non-negative ints; None (or ()) means all dims."""
    if isinstance(dim, (tuple, list)):
        return tuple(_dim(d, ndim) for d in dim) if dim else tuple(range(ndim))
    return tuple(range(ndim)) if dim is None else (_dim(dim, ndim),)


def _shape(args):
    """view(2, 3), view((2, 3)) and view([2, 3]) all mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = args[0]
    return tuple(int(a) for a in args)


def _new_tensor(cls, array):
    """Tensor._wrap (called directly on the hot path: no classmethod to bind)."""
    t = _new_object(cls)
    t._data = array
    t._requires_grad = False
    t._output_nr = 0
    t._grad_fn = t._grad = t._accumulator = t._hooks = None
    t._version_counter = [0, None]  # [version, where the last in-place op ran]
    t._base = None  # for views: the tensor that owns the memory
    t._base_grad_fn = None  # for views: the base's grad_fn when this view's history was set
    # (the thread-local state is read only when some thread's is not the default)
    t._is_inference = _state.inference if grad_mode.threads_off_default else False
    return t


class Tensor:
    """An n-dimensional array that can record the operations applied to it."""
    __module__ = "gradtool"  # as torch.Tensor's is "torch": messages print <class 'gradtool.Tensor'>

    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad",
                 "_version_counter", "_accumulator", "_hooks", "_base", "_base_grad_fn",
                 "_is_inference", "_fw_grad", "_trace_key", "__weakref__")
    __array_ufunc__ = None  # numpy defers to our reflected operators: np.float64(2) * t
    __hash__ = object.__hash__

    def __reduce__(self):  # pickling (gradtool.save, copy.deepcopy) keeps data and the flag
        return (_rebuild, (self._data, self._requires_grad))

    _wrap = classmethod(_new_tensor)  # a Tensor around a numpy array, nothing else set

    # ---------------- attributes ----------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    ndim = property(dim)

    def numel(self):
        return self._data.size

    nelement = numel

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(self._data.dtype)

    def is_floating_point(self):
        return self._data.dtype.kind in "fV"

    # ---------------- complex numbers ----------------
    def is_complex(self):
        return self._data.dtype.kind == "c"

    def resolve_conj(self):
        return self

    def is_conj(self):
        return False

    def __complex__(self):
        return complex(self.item())

    is_cuda = False
    is_cpu = True

    @property
    def data(self):
        """The same values, detached from the graph (as torch's .data)."""
        data = Tensor._wrap(self._data)
        if _subscribers:
            observers.cut("data", ".data", self, data)
        return data

    @data.setter
    def data(self, value):
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    def requires_grad_(self, requires_grad=True):
        requires_grad = bool(requires_grad)
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        if requires_grad and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require "
                               "gradients")
        if requires_grad and self._is_inference and not _state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = requires_grad
        return self

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def grad(self):
        if self._grad_fn is not None and not self.retains_grad:
            _warn_non_leaf_grad()
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size "
                                   f"'{list(value._data.shape)}' to a tensor of size "
                                   f"'{list(self._data.shape)}'. Please ensure that the "
                                   f"gradient and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        node = self._grad_fn
        return bool(node is not None and node._hooks is not None
                    and self._output_nr in node._hooks.retains_grad)

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None:
            self._grad_fn._node_hooks().retains_grad[self._output_nr] = weakref.ref(self)

    @property
    def _version(self):
        if self._is_inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter[0]

    def is_inference(self):
        return self._is_inference

    def detach(self):
        t = Tensor._wrap(self._data)
        t._version_counter = self._version_counter  # same memory, same version counter
        if _subscribers:
            observers.cut("detach", ".detach()", self, t)
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    # ---------------- conversion ----------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               f"to Scalar")
        value = self._data.item()
        if _subscribers:
            observers.cut("item", ".item()", self, value)
        return value

    def __format__(self, format_spec):
        """f"{t}": a 0-d tensor formats as its number, as torch's (f"{t:.3f}" too); printing
        is not a value leaving the graph, so no observer hears of it (as .item() does)."""
        if self._data.ndim == 0 and type(self) is Tensor:
            return self._data.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def tolist(self):
        values = self._data.tolist()
        if _subscribers:
            observers.cut("tolist", ".tolist()", self, values)
        return values

    def numpy(self, *, force=False):
        if self._requires_grad and not force and _state.grad_enabled:  # as torch
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._data.dtype is dtypes.BFLOAT16:  # (numpy has no bfloat16 of its own: torch's)
            raise TypeError("Got unsupported ScalarType BFloat16")
        if _subscribers:
            observers.cut("numpy", ".numpy()", self, self._data)
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data)

    def __float__(self):
        if self._data.dtype.kind == "c":  # (torch's words)
            raise RuntimeError("value cannot be converted to type double without overflow")
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def cpu(self):
        return self

    def equal(self, other):
        return self._data.shape == other._data.shape and bool(np.all(self._data == other._data))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(np.allclose(self._data, _array(other), rtol, atol, equal_nan))


class _MissingTorchAttribute:
    """A public name of torch's Tensor that the engine lacks (`t.to_mkldnn`, and
    `Tensor.to_mkldnn`): reading it raises the one message naming it, an AttributeError
    still, so hasattr() is False as for any missing name. Set on the class for each such name
    instead of a `__getattr__`: Python 3.11 cannot specialize the loads of any attribute of a
    class with one, and every op reads several of a tensor's fields."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __get__(self, tensor, cls=None):
        from ..errors import NotInEngineAttributeError
        raise NotInEngineAttributeError(f"torch.Tensor.{self.name}", name=self.name,
                                        obj=cls if tensor is None else tensor)


def _name_missing_torch_attributes():
    """Once, at import: torch Tensor's public names (torch_tensor_names.txt, written by
    tools/torch_tensor_names.py) that Tensor lacks get a _MissingTorchAttribute. The op
    methods attached later (tensor_methods.py) replace theirs; a name torch does not have
    stays a plain AttributeError, as on torch."""
    path = os.path.join(os.path.dirname(__file__), "torch_tensor_names.txt")
    with open(path) as f:
        names = [line.strip() for line in f if not line.startswith("#")]
    for name in names:
        if name and not hasattr(Tensor, name):
            setattr(Tensor, name, _MissingTorchAttribute(name))


_name_missing_torch_attributes()


def _rebuild(data, requires_grad):
    t = Tensor._wrap(data.copy())
    t._requires_grad = requires_grad
    return t


def _copy_state(src, dst):
    for name in Tensor.__slots__:
        if name != "__weakref__" and hasattr(src, name):  # (_fw_grad is set only when dual)
            setattr(dst, name, getattr(src, name))


def _array(x):
    return x._data if isinstance(x, Tensor) else x


def _as_tensor(x):
    return x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x))


def _scalar(value):
    return value.item() if isinstance(value, Tensor) else value


def _warn_non_leaf_grad():
    warnings.warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
        "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf "
        "Tensor. If you access the non-leaf Tensor by mistake, make sure you access the leaf "
        "Tensor instead.", UserWarning, stacklevel=3)
