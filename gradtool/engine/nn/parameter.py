"""nn.Parameter and nn.Buffer: tensors that a Module registers as a parameter, a buffer, when
assigned to its attributes; the uninitialized ones of the lazy modules."""
from ..autograd.tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning one to a Module attribute registers
    it. It requires grad by default and shares memory (and the version counter) with the
    tensor it wraps, as torch's `Parameter(data)` does. Operations on it return plain
    tensors."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..autograd.creation import empty
            data = empty(0)
        p = cls._wrap(data._data)  # the same array: no copy, as torch
        p._version_counter = data._version_counter
        p._is_inference = data._is_inference
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ would copy the data)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce__(self):  # copy.deepcopy(model) and gradtool.save keep parameters parameters
        return (_rebuild_parameter, (self._data, self._requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(Tensor._wrap(data.copy()), requires_grad)


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned to one of its attributes
    (persistent: in its state_dict). Detached from the tensor it wraps, sharing its memory."""

    __slots__ = ()
    persistent = True

    def __new__(cls, data=None, *, persistent=True):
        from ..autograd.creation import empty
        data = empty(0) if data is None else data
        t = (cls if persistent else _NonPersistentBuffer)._wrap(data._data)
        t._version_counter = data._version_counter
        Tensor.requires_grad_(t, data.requires_grad)
        return t

    def __init__(self, data=None, *, persistent=True):
        pass  # everything happens in __new__


class _NonPersistentBuffer(Buffer):
    __slots__ = ()
    persistent = False


class _Uninitialized:
    """A lazy module's parameter or buffer before its first forward: no shape, and every
    operation but a few conversions refused, with torch's messages, until materialize()."""

    __slots__ = ()
    _allowed = frozenset(("size", "copy_", "is_complex", "is_floating_point", "half", "float",
                          "double", "char", "short", "int", "long", "cuda", "cpu", "to",
                          "get_device", "materialize", "share_memory_"))

    def __getattribute__(self, name):
        if not name.startswith("_") and name not in _Uninitialized._allowed and callable(
                getattr(Tensor, name, None)):
            raise ValueError(
                f"Attempted to use an uninitialized parameter in <method '{name}' of "
                f"'torch._C.TensorBase' objects>. This error happens when you are using a "
                f"`LazyModule` or explicitly manipulating `torch.nn.parameter."
                f"{type(self).__name__}` objects. When using LazyModules Call `forward` with "
                f"a dummy batch to initialize the parameters before calling torch functions")
        return super().__getattribute__(name)

    def materialize(self, shape, device=None, dtype=None):
        """Become a tensor of `shape` (uninitialised values) of the class it stands for."""
        from ..autograd.creation import empty
        self._data = empty(tuple(shape), dtype=dtype or self.dtype)._data
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def to(self, *args, **kwargs):  # (another dtype: still uninitialized)
        out = Tensor.to(self, *args, **kwargs)
        return self if out is self else self._like(out.dtype)

    def double(self):
        return self.to(float64)

    def float(self):
        return self.to(float32)

    def half(self):
        return self.to(float16)

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = self._like(self.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return (_rebuild_uninitialized, (type(self), self.requires_grad, self.dtype))


def _rebuild_uninitialized(cls, requires_grad, dtype):
    return cls._create(requires_grad, dtype)


class UninitializedParameter(_Uninitialized, Parameter):
    """A lazy module's parameter until its first forward (materialize: a Parameter)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ..autograd.device import check
        check(device)  # the CPU, the only device
        return cls._create(requires_grad, dtype)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    @classmethod
    def _create(cls, requires_grad, dtype, persistent=True):
        from ..autograd.creation import empty
        p = cls._wrap(empty(0, dtype=dtype)._data)
        Tensor.requires_grad_(p, requires_grad)
        return p

    def _like(self, dtype):
        return type(self)._create(self.requires_grad, dtype)


class UninitializedBuffer(_Uninitialized, Buffer):
    """A lazy module's buffer until its first forward (materialize: a plain tensor)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ..autograd.device import check
        check(device)  # the CPU, the only device
        return cls._create(requires_grad, dtype, persistent)

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    @classmethod
    def _create(cls, requires_grad, dtype, persistent=True):
        from ..autograd.creation import empty
        kind = cls if persistent else _NonPersistentUninitializedBuffer
        b = kind._wrap(empty(0, dtype=dtype)._data)
        Tensor.requires_grad_(b, requires_grad)
        return b

    def _like(self, dtype):
        return type(self)._create(self.requires_grad, dtype, self.persistent)


class _NonPersistentUninitializedBuffer(UninitializedBuffer):
    __slots__ = ()
    persistent = False


def is_lazy(param):
    return isinstance(param, _Uninitialized)


from ..autograd.dtypes import float16, float32, float64  # noqa: E402
from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
