"""gradtool.save / gradtool.load in torch.save's own format, so checkpoints travel both ways:
a zip archive holding `data.pkl` (a protocol-2 pickle naming torch's rebuild functions) and one
record of raw bytes per storage. `load` also reads the plain pickles earlier gradtool versions
wrote.

As torch 2.6+, `load` is weights_only by default: a restricted unpickler that builds only
tensors, parameters, dtypes, containers, numbers and strings, never calling anything else a
file names. `weights_only=False` unpickles anything, running whatever code the file holds."""
import _compat_pickle
import collections
import contextlib
import functools
import io
import math
import os
import pickle
import re
import sys
import zipfile

import numpy as np

from .autograd import dtypes
from .autograd.device import device
from .autograd.memory import owning_array, sparse_bsc, sparse_bsr, sparse_csc, sparse_csr
from .autograd.sparse_compressed import SparseCompressedTensor, sparse_compressed_tensor
from .autograd.tensor import Size, Tensor, _rebuild as _rebuild_tensor
from .errors import NotInEngineError
from .nn.parameter import Parameter, _rebuild_parameter

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C  # the first pickle of torch's format before 1.6
_SAFE_NUMPY_DTYPE = re.compile(r"[<>|=]?[biufc]\d{1,2}")
_user_safe_globals = {}


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write obj (tensors, dicts and lists of them, numbers) to a path or binary file, as
    torch.save writes it: torch.load reads the file, and so does load. (pickle_module: the
    engine's own pickler writes torch's names, whichever module is passed.)"""
    if not _use_new_zipfile_serialization:
        raise NotInEngineError("torch.save's pre-1.6 format (_use_new_zipfile_serialization="
                               "False)")
    buffer = io.BytesIO()
    storages = {}
    _TorchPickler(buffer, storages, pickle_protocol).dump(obj)
    name = "archive" if hasattr(f, "write") else os.path.splitext(os.path.basename(f))[0]
    records = [("data.pkl", buffer.getvalue()), (".format_version", b"1"),
               (".storage_alignment", b"64"), ("byteorder", sys.byteorder.encode())]
    records += [(f"data/{key}", array.tobytes()) for key, array in storages.values()]
    records += [("version", b"3\n"), (".data/serialization_id", b"0" * 40)]
    with (contextlib.nullcontext(f) if hasattr(f, "write") else open(f, "wb")) as file:
        with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
            for record, data in records:
                archive.writestr(f"{name}/{record}", data)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **kwargs):
    """Read what save wrote. weights_only (the default, None, means True as in torch 2.6+)
    builds only tensors, containers and numbers; weights_only=False unpickles anything, so
    the file can run code: use it only for files you trust."""
    if weights_only is None:
        weights_only = pickle_module is None  # as torch: a pickle_module means full pickle
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    unpickler = _WeightsUnpickler if weights_only else _full_unpickler(pickle_module or pickle)
    with (contextlib.nullcontext(f) if hasattr(f, "read") else open(f, "rb")) as file:
        if not zipfile.is_zipfile(file):
            file.seek(0)
            loaded = _load(unpickler, file, kwargs)  # a plain pickle: earlier gradtool versions
            if type(loaded) is int and loaded == _LEGACY_MAGIC:
                raise NotInEngineError("torch.load of torch's pre-1.6 checkpoint format (resave "
                                       "it with a current torch.save)")
            return loaded
        file.seek(0)
        with zipfile.ZipFile(file) as archive:
            return _load_archive(archive, unpickler, map_location, kwargs)


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


def _load(unpickler, file, kwargs, persistent_load=None):
    if persistent_load is not None:  # (the C unpickler looks the method up once, at init)
        unpickler = type(unpickler.__name__, (unpickler,),
                         {"persistent_load": staticmethod(persistent_load)})
    reader = unpickler(file, **kwargs)
    if not issubclass(unpickler, _WeightsUnpickler):
        return reader.load()
    try:
        return reader.load()
    except _Refused as e:
        raise pickle.UnpicklingError(_weights_only_message(e)) from None


def _load_archive(archive, unpickler, map_location, kwargs):
    """torch.save's zip format: data.pkl names each storage by a key whose bytes are the
    record data/<key>, all under one top folder (the archive's name)."""
    pickled = [n for n in archive.namelist() if n.endswith("data.pkl")]
    if len(pickled) != 1:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pickled[0][:-len("data.pkl")]
    storages = {}

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise _Refused(f"persistent id {pid!r} is not one of torch's storages")
        _, storage_type, key, location, numel = pid
        if str(location).startswith("cuda") and map_location is None:
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "torch.cuda.is_available() is False. If you are running on a CPU-only machine, "
                "please use torch.load with map_location=torch.device('cpu') to map your "
                "storages to the CPU.")
        if key not in storages:
            data = bytearray(archive.read(f"{prefix}data/{key}"))
            storages[key] = np.frombuffer(data, dtype=storage_type.numpy_dtype())
        return storages[key]

    return _load(unpickler, io.BytesIO(archive.read(pickled[0])), kwargs, persistent_load)


def _full_unpickler(pickle_module):
    """weights_only=False: anything, with torch's own names read as the engine's."""
    class Unpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            known = _TORCH_GLOBALS.get(f"{module}.{name}")
            return known if known is not None else super().find_class(module, name)
    return Unpickler


@functools.cache
def _torch_name(module, name):
    return _TorchName(module, name)


class _TorchName:
    """A name in torch's namespace, written into the pickle as a GLOBAL, for torch to find:
    the engine's own objects live elsewhere. One object per name (_torch_name), so the
    pickle writes each name once."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle asks a reduce function to be callable
        raise TypeError(f"{self.module}.{self.name} is only a name in a pickle")


class _Reduced:
    """An object pickled as torch pickles its counterpart: function(*args)."""

    def __init__(self, function, args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


_COMPRESSED_LAYOUTS = {lay.name: lay for lay in (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)}


class _Storage:
    def __init__(self, key, array):
        self.key, self.array = key, array


class _TorchPickler(pickle._Pickler):
    """torch.save's data.pkl: a tensor is torch._utils._rebuild_tensor_v2 over a storage kept
    as its own record; dtypes, sizes and devices are torch's names. The Python pickler, not
    the C one, because only its save_global can write a name without importing it."""

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_TorchName] = lambda self, name: self._save_torch_name(name)

    def __init__(self, file, storages, protocol):
        super().__init__(file, protocol=protocol)
        self.storages = storages  # id of a base array -> (key, that array)
        self.substitutes = {}  # id(obj) -> (obj, its torch form): one form per object

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, (Tensor, dtypes.dtype, Size, device)):
            kept = self.substitutes.get(id(obj))
            if kept is None:
                kept = self.substitutes[id(obj)] = (obj, self._torch_form(obj))
            obj = kept[1]
        super().save(obj, save_persistent_id)

    def _torch_form(self, obj):
        if isinstance(obj, dtypes.dtype):
            return _torch_name("torch", obj.name)
        if isinstance(obj, Size):
            return _Reduced(_torch_name("torch", "Size"), (tuple(obj),))
        if isinstance(obj, device):
            return _Reduced(_torch_name("torch", "device"), (str(obj),))
        if isinstance(obj, SparseCompressedTensor):  # (its indices and values, as torch's)
            compressed, plain, lay, _ = obj._compressed
            layout = _Reduced(_torch_name("torch.serialization", "_get_layout"),
                              (f"torch.{lay.name}",))
            return _Reduced(_torch_name("torch._utils", "_rebuild_sparse_tensor"), (
                layout, (compressed, plain, obj.values().detach(), Size(obj.shape))))
        tensor = _Reduced(_torch_name("torch._utils", "_rebuild_tensor_v2"),
                          self._storage_view(obj._data) + (
                              bool(obj._requires_grad) and type(obj) is not Parameter,
                              collections.OrderedDict()))
        if type(obj) is Parameter:
            return _Reduced(_torch_name("torch._utils", "_rebuild_parameter"),
                            (tensor, bool(obj._requires_grad), collections.OrderedDict()))
        return tensor

    def _storage_view(self, array):
        """(storage, offset, size, stride) in elements; a view of a contiguous base shares
        its base's storage, as the tensors shared it; anything else is copied."""
        base = owning_array(array)
        itemsize = array.itemsize
        offset = (array.__array_interface__["data"][0] - base.__array_interface__["data"][0])
        if not (base.dtype == array.dtype and base.flags.c_contiguous and offset % itemsize == 0
                and all(s >= 0 and s % itemsize == 0 for s in array.strides)):
            base = array = np.ascontiguousarray(array)
            offset = 0
        key, _ = self.storages.setdefault(id(base), (str(len(self.storages)), base))
        storage = self.substitutes.setdefault(("storage", key), (base, _Storage(key, base)))[1]
        return (storage, offset // itemsize, tuple(array.shape),
                tuple(s // itemsize for s in array.strides))

    def persistent_id(self, obj):
        if type(obj) is _Storage:
            return ("storage", _torch_name("torch", _STORAGE_NAMES[obj.array.dtype]), obj.key,
                    "cpu", obj.array.size)
        return None

    def _save_torch_name(self, name):
        self.write(pickle.GLOBAL + f"{name.module}\n{name.name}\n".encode())
        self.memoize(name)


def _rebuild_array(dtype_str, shape, data):
    """A numpy array as earlier gradtool versions pickled it, checked: a plain numeric dtype, and exactly the bytes the shape
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


class _StorageType:
    """torch.FloatStorage and its kin as a checkpoint names them: the dtype of a storage."""

    def __init__(self, name, dtype_name):
        self.name, self.dtype_name = name, dtype_name

    def numpy_dtype(self):
        return dtypes.to_numpy_dtype(dtypes._by_name(self.dtype_name))


_STORAGE_TYPES = {f"{kind}Storage": dtype_name for kind, dtype_name in (
    ("Half", "float16"), ("Float", "float32"), ("Double", "float64"), ("BFloat16", "bfloat16"),
    ("Char", "int8"), ("Short", "int16"), ("Int", "int32"), ("Long", "int64"),
    ("Byte", "uint8"), ("Bool", "bool"), ("ComplexFloat", "complex64"),
    ("ComplexDouble", "complex128"))}
_STORAGE_NAMES = {dtypes._by_name(d).numpy: name for name, d in _STORAGE_TYPES.items()}


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """torch._utils._rebuild_tensor_v2: a view of a storage's elements, checked to lie inside
    it (a crafted file cannot read beyond its own bytes)."""
    if not isinstance(storage, np.ndarray) or storage.ndim != 1:
        raise _Refused(f"_rebuild_tensor_v2 got a {type(storage).__name__}, not a storage")
    if not all(isinstance(v, tuple) and all(type(n) is int and n >= 0 for n in v)
               for v in (size, stride)) or len(size) != len(stride) or \
            type(storage_offset) is not int or storage_offset < 0 or \
            type(requires_grad) is not bool:
        raise _Refused(f"_rebuild_tensor_v2 got offset {storage_offset!r}, size {size!r}, "
                       f"stride {stride!r}: not sizes")
    if math.prod(size) and storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) \
            >= storage.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {storage_offset} lie outside a storage of "
                           f"{storage.size} elements")
    view = np.lib.stride_tricks.as_strided(
        storage[storage_offset:], size, [s * storage.itemsize for s in stride])
    tensor = Tensor._wrap(view)
    tensor._requires_grad = requires_grad
    return tensor


def _rebuild_parameter_v2(data, requires_grad, backward_hooks, state=None):
    """torch._utils._rebuild_parameter(_with_state): a Parameter around a rebuilt tensor."""
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise _Refused(f"_rebuild_parameter got ({type(data).__name__}, "
                       f"{type(requires_grad).__name__}), not (tensor, bool)")
    return Parameter(data, requires_grad)


def _torch_device(name):
    if not isinstance(name, (str, int)):
        raise _Refused(f"torch.device got a {type(name).__name__}")
    return device(name)


def _rebuild_sparse_tensor(layout, data):
    """torch._utils._rebuild_sparse_tensor for the compressed layouts: their indices and
    values, checked as torch's constructor checks them."""
    if layout not in _COMPRESSED_LAYOUTS.values() or not isinstance(data, tuple) or \
            len(data) != 4:
        raise _Refused(f"_rebuild_sparse_tensor got layout {layout!r}: the engine rebuilds "
                       f"the compressed layouts (sparse_csr, sparse_csc, sparse_bsr, "
                       f"sparse_bsc)")
    compressed, plain, values, size = data
    if not all(isinstance(t, Tensor) for t in (compressed, plain, values)):
        raise _Refused("_rebuild_sparse_tensor got indices or values that are not tensors")
    return sparse_compressed_tensor(compressed, plain, values, size, layout=layout)


def _get_layout(name):
    """torch.serialization._get_layout: a layout by its name, torch.sparse_csr and friends."""
    lay = _COMPRESSED_LAYOUTS.get(name.removeprefix("torch.")) if isinstance(name, str) else None
    if lay is None:
        raise _Refused(f"_get_layout got {name!r}: the engine rebuilds the compressed layouts")
    return lay


def _torch_size(sizes):
    if not (isinstance(sizes, tuple) and all(type(n) is int for n in sizes)):
        raise _Refused(f"torch.Size got {sizes!r}")
    return Size(sizes)


def _encoded_bytes(text, encoding):
    """_codecs.encode, as protocol 2 spells a bytes object: latin-1 text, nothing else."""
    if type(text) is not str or encoding != "latin1":
        raise _Refused(f"_codecs.encode got ({type(text).__name__}, {encoding!r}), not bytes")
    return text.encode("latin1")


# torch's names in a checkpoint torch wrote (and save writes), read as the engine's objects
_TORCH_GLOBALS = {
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_parameter": _rebuild_parameter_v2,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_v2,
    "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
    "torch.serialization._get_layout": _get_layout,
    "torch.Size": _torch_size,
    "torch.device": _torch_device,
    "_codecs.encode": _encoded_bytes,
    **{f"torch.{name}": _StorageType(name, d) for name, d in _STORAGE_TYPES.items()},
    **{f"torch.{d.name}": d for d in dtypes.ALL},
}

# What gradtool.save writes (and wrote) and torch's weights_only allows, by a pickle's name.
_ALLOWED_GLOBALS = {
    **_TORCH_GLOBALS,
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
        # protocol 2 (torch's) writes Python 2's names: read them as Python 3's, as torch does
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
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

    def persistent_load(self, pid):  # an archive's storages replace this (_load_archive)
        raise _Refused("Unsupported operand: a persistent id outside a torch.save archive")


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
