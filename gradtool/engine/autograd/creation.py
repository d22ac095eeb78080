"""Factory functions. As in torch, they honour requires_grad= even under no_grad."""
import numbers

import numpy as np

from . import dtypes
from .device import check as check_device
from .tensor import Size, Tensor, _shape

class Generator:
    """A source of random numbers (torch.Generator): seeded with manual_seed, passed to the
    random factories and fills as generator=. numpy's generator underneath: the same seed
    gives other numbers than torch's."""

    def __init__(self, device="cpu"):
        if str(device).startswith("cuda"):  # torch's CPU build has no CUDA generator
            raise RuntimeError(
                "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its "
                "backend into two shared libraries: a CPU library and a CUDA library; this error "
                "has occurred because you are trying to use some CUDA functionality, but the CUDA "
                "library has not been loaded by the dynamic linker for some reason.  The CUDA "
                "library MUST be loaded, EVEN IF you don't directly use any symbols from the "
                "CUDA library! One common culprit is a lack of -Wl,--no-as-needed in your link "
                "arguments; many dynamic linkers will delete dynamic library dependencies if you "
                "don't depend on any of their symbols.  You can check if this has occurred by "
                "using ldd on your binary to see if there is a dependency on *_cuda.so "
                "library.")
        check_device(device)
        self.seed()

    @property
    def device(self):
        from .device import CPU
        return CPU

    def manual_seed(self, seed):
        self._initial_seed = int(seed) % 2 ** 64  # (torch takes negative seeds modulo 2^64)
        self._rng = np.random.default_rng(self._initial_seed)
        return self

    def initial_seed(self):
        return self._initial_seed

    def seed(self):
        """Seeds from the operating system's entropy; returns the seed."""
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.manual_seed(seed)
        return seed

    def get_state(self):
        """The state as a uint8 tensor (numpy's state, pickled: not torch's bytes)."""
        import pickle
        state = pickle.dumps((self._initial_seed, self._rng.bit_generator.state))
        return Tensor._wrap(np.frombuffer(state, np.uint8).copy())

    def set_state(self, new_state):
        import pickle
        self._initial_seed, state = pickle.loads(new_state._data.tobytes())
        self._rng.bit_generator.state = state
        return self


default_generator = Generator()


def manual_seed(seed):
    """Seed every random factory (rand, randn, randint, ..., and nn's initialisers)."""
    return default_generator.manual_seed(seed)


def initial_seed():
    return default_generator.initial_seed()


def seed():
    return default_generator.seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


# vmap's check of its randomness= (engine/func/vmap.py), set while a vmap runs
random_check = None


def generator(given=None):
    """numpy's generator a random draw reads: the given torch.Generator's, or the default's
    (through here, so vmap can refuse or allow it)."""
    if random_check is not None:
        random_check()
    if given is None:
        return default_generator._rng
    if not isinstance(given, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(given).__name__}")
    return given._rng


def _finish(array, requires_grad, device=None):
    check_device(device)
    t = Tensor._wrap(array)
    if requires_grad:
        if array.dtype.kind not in "fcV":  # torch's factory wording (requires_grad_ has its own)
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def _np_dtype(dtype, default=None):  # (None: the default float dtype when called)
    if dtype is not None:
        return dtypes.to_numpy_dtype(dtype)
    return dtypes.DEFAULT_FLOAT if default is None else default


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of data, with torch's dtype: Python floats become float32,
    numpy scalars and Tensors keep their dtype."""
    if isinstance(data, Tensor):
        array = data._data.copy()
    elif isinstance(data, (np.ndarray, np.generic)):  # numpy scalars keep their dtype too
        array = np.array(data)
    else:
        array = np.array(_unwrap_nested(data),
                         dtype=_inferred_dtype(data) if dtype is None else None)
        if array.dtype.kind not in "iufcbV":
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if dtype is not None:
        array = array.astype(dtypes.to_numpy_dtype(dtype))
    dtypes.from_numpy_dtype(array.dtype)  # refuse dtypes gradtool does not have
    return _finish(array, requires_grad, device)


def _inferred_dtype(data):
    """torch's dtype for nested Python data: Python floats are float32 (the default dtype),
    ints int64, bools bool; numpy scalars and arrays and Tensors keep theirs; the elements'
    types promote as torch promotes them (a float type wins over any int type)."""
    if isinstance(data, Tensor):
        return data._data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return data.dtype
    if isinstance(data, (list, tuple)):
        kinds = {_inferred_dtype(d) for d in data} or {np.dtype(dtypes.DEFAULT_FLOAT)}
        if None in kinds:
            return None
        for group in ("fc", "iu", "b"):
            same = [d for d in kinds if d.kind in group]
            if same:
                return np.result_type(*same)
        return None
    if isinstance(data, bool):
        return np.dtype(np.bool_)
    if isinstance(data, numbers.Integral):
        return np.dtype(np.int64)
    if isinstance(data, numbers.Real):
        return np.dtype(dtypes.DEFAULT_FLOAT)
    if isinstance(data, numbers.Complex):
        return dtypes.default_complex()
    return None  # not a number: np.array decides, and the caller refuses what is not one


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def legacy(np_dtype, args, device=None):
    """The legacy constructors torch.Tensor(...), torch.FloatTensor(...) and x.new(...): sizes
    give an uninitialised tensor, anything else is data copied into np_dtype."""
    check_device(device)
    if not args:
        return Tensor._wrap(np.empty(0, np_dtype))
    if all(isinstance(a, numbers.Integral) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)):
        return Tensor._wrap(np.empty(_shape(args), np_dtype))
    if len(args) > 1:
        raise TypeError(f"a legacy tensor constructor takes sizes (ints) or one sequence of "
                        f"data, not {', '.join(type(a).__name__ for a in args)}")
    (data,) = args
    if isinstance(data, TypedStorage):  # a tensor over the storage's memory, as torch's
        if data.dtype.numpy != np_dtype:
            raise TypeError(f"expected {dtypes.from_numpy_dtype(np_dtype)} storage, got "
                            f"{data.dtype}")
        return Tensor._wrap(data._array)
    return Tensor._wrap(np.array(_unwrap_nested(data)).astype(np_dtype))


class TypedStorage:
    """A one-dimensional block of elements of one dtype (torch's typed storages:
    torch.ByteStorage, FloatStorage, ...), which a legacy constructor of that dtype views."""

    dtype = None  # (each storage class's)

    def __init__(self, *args, device=None):
        check_device(device)
        if len(args) == 1 and isinstance(args[0], numbers.Integral):
            self._array = np.zeros(int(args[0]), self.dtype.numpy)
        elif len(args) == 1:
            self._array = np.array(_unwrap_nested(args[0]), self.dtype.numpy).reshape(-1)
        else:
            self._array = np.zeros(0, self.dtype.numpy)

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0):
        """The storage of the bytes of `buffer` (byte_order for elements wider than a byte)."""
        dtype = cls.dtype.numpy
        if dtype.itemsize > 1 and byte_order != "native":
            dtype = dtype.newbyteorder("<" if byte_order == "little" else ">")
        storage = cls.__new__(cls)
        storage._array = np.frombuffer(bytes(buffer), dtype, count, offset).astype(
            cls.dtype.numpy)
        return storage

    def __len__(self):
        return self._array.size

    def size(self):
        return self._array.size

    def __getitem__(self, index):
        return self._array[index].tolist()

    def __setitem__(self, index, value):
        self._array[index] = value

    def __iter__(self):
        return iter(self._array.tolist())

    def tolist(self):
        return self._array.tolist()

    def element_size(self):
        return self._array.itemsize

    def nbytes(self):
        return self._array.nbytes

    def __repr__(self):
        values = "\n".join(f" {v}" for v in self._array.tolist())
        return (f"{values}\n[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size "
                f"{self._array.size}]")


def _storage_class(name, dtype):
    return type(name, (TypedStorage,), {"dtype": dtype, "__doc__": f"{dtype} storage."})


STORAGES = {d.name: _storage_class(f"{name}Storage", d) for name, d in (
    ("Byte", dtypes.uint8), ("Char", dtypes.int8), ("Short", dtypes.int16),
    ("Int", dtypes.int32), ("Long", dtypes.int64), ("Float", dtypes.float32),
    ("Double", dtypes.float64), ("Half", dtypes.float16), ("Bool", dtypes.bool_))}


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and dtype is None:
        check_device(device)
        return data
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor sharing memory with the numpy array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._wrap(array)


def _size(sizes, size):
    """zeros(2, 3), zeros((2, 3)) and torch's keyword form zeros(size=(2, 3))."""
    if size is None:
        return _shape(sizes)
    if sizes:
        raise TypeError("got the size both positionally and as size=")
    return _shape((size,))


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.zeros(_size(sizes, size), _np_dtype(dtype)), requires_grad, device)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.ones(_size(sizes, size), _np_dtype(dtype)), requires_grad, device)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.empty(_size(sizes, size), _np_dtype(dtype)), requires_grad, device)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = (dtypes.bool_ if isinstance(fill_value, bool) else
                 dtypes.int64 if isinstance(fill_value, numbers.Integral) else None)
    return _finish(np.full(_shape((size,)), fill_value, _np_dtype(dtype)), requires_grad, device)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.eye(n, m, dtype=_np_dtype(dtype)), requires_grad, device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    is_int = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    default = np.dtype(np.int64) if is_int else dtypes.DEFAULT_FLOAT
    np_dtype = kernel_dtype("arange_cpu", dtype, refused="bc", default=default)
    return _finish(np.arange(start, end, step).astype(np_dtype), requires_grad, device)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    np_dtype = kernel_dtype("linspace_cpu", dtype, refused="b")
    return _finish(np.linspace(start, end, steps).astype(np_dtype), requires_grad, device)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    """base ** linspace(start, end, steps), as torch's CPU kernel: start, end and their
    difference in the result's dtype, the rest in float64 (the first half stepped from
    start, the second from end, so both ends are exact), rounded once to the dtype."""
    np_dtype = kernel_dtype("logspace_cpu", dtype, refused="b")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = np_dtype.type(start), np_dtype.type(end)
    index = np.arange(steps)
    step = np.float64(end - start) / max(steps - 1, 1)
    start, end = np.float64(start), np.float64(end)
    exponents = np.where(index < max(steps // 2, 1), start + step * index,
                         end - step * (steps - 1 - index))
    return _finish(np.power(np.float64(base), exponents).astype(np_dtype), requires_grad, device)


def rand(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    np_dtype = kernel_dtype("check_uniform_bounds", dtype, refused="biu")
    return _finish(_draw(generator).random(_size(sizes, size)).astype(np_dtype),
                   requires_grad, device)


def randn(*sizes, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    shape, rng = _size(sizes, size), _draw(generator)
    np_dtype = kernel_dtype("normal_kernel_cpu", dtype, refused="biu")
    if np_dtype.kind == "c":  # as torch: each part N(0, 1/2), so E|z|^2 = 1
        values = (rng.standard_normal(shape + (2,)) * np.sqrt(0.5)).view(np.complex128)
        return _finish(values[..., 0].astype(np_dtype), requires_grad, device)
    return _finish(rng.standard_normal(shape).astype(np_dtype), requires_grad, device)


def randint(low, high=None, size=(), *, generator=None, dtype=None, device=None,
            requires_grad=False):
    if high is None or isinstance(high, (tuple, list)):  # randint(high, size), as torch
        low, high, size = 0, low, size if high is None else high
    np_dtype = _np_dtype(dtype, np.dtype(np.int64))
    _check_random_bounds(low, high, np_dtype)
    array = _draw(generator).integers(low, high, _shape((size,)))
    return _finish(array.astype(np_dtype), requires_grad, device)


def _check_random_bounds(low, high, np_dtype):
    """torch's check of randint's bounds: an integer dtype (bool too) must hold low and
    high - 1; complex numbers are not drawn."""
    if np_dtype.kind == "c":
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if np_dtype.kind in "biu":
        info = (0, 1) if np_dtype.kind == "b" else (np.iinfo(np_dtype).min,
                                                    np.iinfo(np_dtype).max)
        for name, value in (("from", low), ("to - 1", high - 1)):
            if not info[0] <= value <= info[1]:
                raise RuntimeError(f"{name} is out of bounds for "
                                   f"{dtypes.C_TYPE_NAMES[np_dtype.name]}")


def randperm(n, *, generator=None, dtype=None, device=None):
    np_dtype = kernel_dtype("randperm", dtype, refused="bc", default=np.dtype(np.int64))
    if np_dtype.kind in "iu" and n - 1 > np.iinfo(np_dtype).max:
        raise RuntimeError(f"value cannot be converted to type {np_dtype.name}_t without "
                           f"overflow")
    if np_dtype.name in _RANDPERM_FLOAT_LIMITS and n > _RANDPERM_FLOAT_LIMITS[np_dtype.name][0]:
        words, name = _RANDPERM_FLOAT_LIMITS[np_dtype.name][1:]
        raise RuntimeError(f"n cannot be greater than {words} for {name} type.")
    return _finish(_draw(generator).permutation(n).astype(np_dtype), False, device)


# the largest n whose permutation a floating dtype holds exactly, as torch's words give it
_RANDPERM_FLOAT_LIMITS = {"float16": (2049, "2049", "Half"),
                          "float32": (2 ** 24 + 1, "2^24+1", "Float")}


def kernel_dtype(kernel, dtype, refused, default=None):
    """dtype as numpy's, where torch's CPU kernel `kernel` has one: numpy kinds `refused`
    raise torch's error (rand draws no integers, arange counts in no complex numbers)."""
    np_dtype = _np_dtype(dtype, default)
    if np_dtype.kind in refused:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{dtypes.LEGACY_TYPE_NAMES[np_dtype.name]}'")
    return np_dtype


def _draw(given):  # (the factories' argument generator= hides generator() inside them)
    return generator(given)


def _like(fn):
    def like(input, dtype=None, requires_grad=False, **kwargs):
        return fn(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad, **kwargs)
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"{fn.__name__}() with the shape (and by default the dtype) of input."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    """randint(low, high) (or randint(0, low)) of input's shape and (by default) dtype."""
    low, high = (0, low) if high is None else (low, high)
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device,
                   requires_grad=requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    return full(input.shape, fill_value, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)
