"""gradtool.save / gradtool.load: pickle-based, like torch.save for tensors and state dicts.

As torch 2.6+, `load` is weights_only by default: a restricted unpickler that builds only
tensors, parameters, dtypes, containers, numbers and strings, never calling anything else a
file names. `weights_only=False` unpickles anything, running whatever code the file holds."""
import collections
import contextlib
import math
import pickle
import re

import numpy as np

from .autograd import dtypes
from .autograd.tensor import _rebuild as _rebuild_tensor
from .nn.parameter import _rebuild_parameter

_SAFE_NUMPY_DTYPE = re.compile(r"[<>|=]?[biufc]\d{1,2}")
_user_safe_globals = {}


def save(obj, f):
    """Write obj (tensors, dicts and lists of them, numbers) to a path or binary file."""
    if hasattr(f, "write"):
        _Pickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    else:
        with open(f, "wb") as fh:
            _Pickler(fh, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **kwargs):
    """Read what save wrote. weights_only (the default, None, means True as in torch 2.6+)
    builds only tensors, containers and numbers; weights_only=False unpickles anything, so
    the file can run code: use it only for files you trust."""
    if weights_only is None:
        weights_only = pickle_module is None  # as torch: a pickle_module means full pickle
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    unpickler = _WeightsUnpickler if weights_only else (pickle_module or pickle).Unpickler
    if hasattr(f, "read"):
        return _load(unpickler, f, kwargs)
    with open(f, "rb") as fh:
        return _load(unpickler, fh, kwargs)


def add_safe_globals(safe_globals):
    """Allow these classes/functions in weights_only loads (torch's API): only for code you
    trust, since loading calls them with whatever arguments the file holds."""
    for obj in safe_globals:
        obj, name = obj if isinstance(obj, tuple) else (obj, None)
        _user_safe_globals[name or f"{obj.__module__}.{obj.__qualname__}"] = obj


def get_safe_globals():
    return list(_user_safe_globals.values())


def clear_safe_globals():
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """add_safe_globals for the duration of a with block."""
    before = dict(_user_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe_globals.clear()
        _user_safe_globals.update(before)


def _load(unpickler, file, kwargs):
    if unpickler is not _WeightsUnpickler:
        return unpickler(file, **kwargs).load()
    try:
        return unpickler(file, **kwargs).load()
    except _Refused as e:
        raise pickle.UnpicklingError(_weights_only_message(e)) from None


class _Pickler(pickle.Pickler):
    """numpy arrays (a tensor's data) as dtype, shape and raw bytes, which the weights_only
    loader can rebuild without calling into numpy's own pickle machinery."""

    def reducer_override(self, obj):
        if isinstance(obj, np.ndarray) and _safe_numpy_dtype(obj.dtype.str):
            flat = np.ascontiguousarray(obj).reshape(-1)
            return _rebuild_array, (obj.dtype.str, obj.shape, pickle.PickleBuffer(flat))
        if isinstance(obj, np.generic) and _safe_numpy_dtype(obj.dtype.str):
            return _rebuild_array, (obj.dtype.str, None, obj.tobytes())
        return NotImplemented


def _rebuild_array(dtype_str, shape, data):
    """What _Pickler wrote, checked: a plain numeric dtype, and exactly the bytes the shape
    needs (shape None: a numpy scalar)."""
    if not _safe_numpy_dtype(dtype_str):
        raise _Refused(f"array dtype {dtype_str!r} is not a plain numeric dtype")
    dtype = np.dtype(dtype_str)
    if not isinstance(data, (bytes, bytearray)):
        raise _Refused(f"array data is a {type(data).__name__}, not bytes")
    if shape is not None and not (isinstance(shape, tuple) and all(
            type(n) is int and n >= 0 for n in shape)):
        raise _Refused(f"array shape {shape!r} is not a tuple of sizes")
    size = 1 if shape is None else math.prod(shape)
    if size * dtype.itemsize != len(data):
        raise _Refused(f"array of shape {shape} and dtype {dtype_str} needs "
                       f"{size * dtype.itemsize} bytes, the file holds {len(data)}")
    array = np.frombuffer(data, dtype=dtype)
    if shape is None:
        return array[0]
    array = array.reshape(shape)
    return array if array.flags.writeable else array.copy()


def _safe_numpy_dtype(dtype_str):
    return type(dtype_str) is str and _SAFE_NUMPY_DTYPE.fullmatch(dtype_str) is not None


def _checked_tensor(rebuild):
    def rebuild_checked(data, requires_grad):
        if not isinstance(data, np.ndarray) or type(requires_grad) is not bool:
            raise _Refused(f"{rebuild.__qualname__} got ({type(data).__name__}, "
                           f"{type(requires_grad).__name__}), not (array, bool)")
        return rebuild(data, requires_grad)
    return rebuild_checked


def _checked_dtype(name):
    if name not in {d.name for d in dtypes.ALL}:
        raise _Refused(f"{name!r} is not a gradtool dtype")
    return dtypes._by_name(name)


# What gradtool.save writes and torch's weights_only allows, by the name a pickle uses.
_ALLOWED_GLOBALS = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.complex": complex,
    "builtins.bytearray": bytearray,
    f"{__name__}._rebuild_array": _rebuild_array,
    "gradtool.engine.autograd.tensor._rebuild": _checked_tensor(_rebuild_tensor),
    "gradtool.engine.nn.parameter._rebuild_parameter": _checked_tensor(_rebuild_parameter),
    "gradtool.engine.autograd.dtypes._by_name": _checked_dtype,
}


_BLOCKED_MODULES = ("sys", "os", "posix", "nt")  # as torch


class _Refused(pickle.UnpicklingError):
    """Something a weights_only load does not build."""

    def __init__(self, message, blocked=False):
        super().__init__(message)
        self.blocked = blocked


class _WeightsUnpickler(pickle.Unpickler):
    """Builds only the allowed globals; everything else a pickle can name is refused before
    it is imported or called."""

    def find_class(self, module, name):
        if module.startswith("gradtool.") and not module.startswith("gradtool.engine."):
            module = "gradtool.engine." + module[len("gradtool."):]  # saved before the move
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:  # never allowed, not even by add_safe_globals
            raise _Refused(f"Trying to load unsupported GLOBAL {full} whose module {module} "
                           f"is blocked.", blocked=True)
        if full in _ALLOWED_GLOBALS:
            return _ALLOWED_GLOBALS[full]
        if full in _user_safe_globals:
            return _user_safe_globals[full]
        shown = full[len("builtins."):] if module == "builtins" else full
        raise _Refused(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please "
            f"use `gradtool.serialization.add_safe_globals([{shown}])` or the "
            f"`gradtool.serialization.safe_globals([{shown}])` context manager to allowlist "
            f"this global if you trust this class/function.")

    def persistent_load(self, pid):
        raise _Refused("Unsupported operand: persistent ids are not part of gradtool's format")


_UNSAFE = ("As in PyTorch 2.6+, `weights_only` defaults to `True` in `gradtool.load`. "
           "Re-running `gradtool.load` with `weights_only` set to `False` will likely succeed, "
           "but it can result in arbitrary code execution. Do it only if you got the file from "
           "a trusted source.")


def _weights_only_message(error):
    """torch's wording: how to load the file anyway, and what the unpickler refused."""
    if error.blocked:
        return f"Weights only load failed. {_UNSAFE}\n\n\n{error}"
    return ("Weights only load failed. This file can still be loaded, to do so you have two "
            "options, do those steps only if you trust the source of the checkpoint.\n"
            f"\t(1) {_UNSAFE}\n"
            "\t(2) Alternatively, to load with `weights_only=True` please check the "
            "recommended steps in the following error message.\n"
            f"\tWeightsUnpickler error: {error}")
