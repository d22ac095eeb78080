"""gradtool.cuda: gradtool runs on the CPU, so there is no CUDA device (code that asks
`torch.cuda.is_available()` takes its CPU path)."""
from ..autograd.device import check
from . import amp


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Nothing to seed (torch's does nothing without CUDA either)."""


manual_seed_all = manual_seed


def current_device():
    check("cuda")


def is_bf16_supported(including_emulation=True):
    return False


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error


# ---- the rest of torch.cuda that real files call, answered as torch's build without CUDA
# answers on this machine: memory queries say 0 and empty_cache does nothing; what needs a
# device raises torch's own error
_NO_CUDA = "Torch not compiled with CUDA enabled"


def empty_cache():
    return None


def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def synchronize(device=None):
    raise AssertionError(_NO_CUDA)


def set_device(device):
    raise AssertionError(_NO_CUDA)


def get_device_name(device=None):
    raise AssertionError(_NO_CUDA)


def get_device_properties(device=None):
    raise AssertionError(_NO_CUDA)


def reset_peak_memory_stats(device=None):
    raise AssertionError(_NO_CUDA)


class _CudaTypedTensorMeta(type):
    """torch.cuda.FloatTensor and the other typed classes, as torch's without CUDA has them:
    no tensor here is one (isinstance is False), and making one raises torch's TypeError."""

    def __instancecheck__(cls, obj):
        return False

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{cls.__name__} not available. {_NO_CUDA}.")


def _cuda_typed_tensor(name, dtype):
    return _CudaTypedTensorMeta(name, (), {"dtype": dtype, "is_cuda": True,
                                           "__doc__": f"torch.cuda.{name}: none without CUDA."})


def _typed_tensor_classes():
    from ..autograd import dtypes
    names = {"FloatTensor": dtypes.float32, "DoubleTensor": dtypes.float64,
             "HalfTensor": dtypes.float16, "BFloat16Tensor": dtypes.bfloat16,
             "LongTensor": dtypes.int64, "IntTensor": dtypes.int32, "ShortTensor": dtypes.int16,
             "CharTensor": dtypes.int8, "ByteTensor": dtypes.uint8, "BoolTensor": dtypes.bool_}
    return {name: _cuda_typed_tensor(name, dtype) for name, dtype in names.items()}


globals().update(_typed_tensor_classes())


# ---- devices, streams and events, as torch's build without CUDA answers them
class OutOfMemoryError(RuntimeError):
    """What a CUDA allocation that does not fit raises (never, here: no CUDA memory)."""


class device:
    """with torch.cuda.device(i): make CUDA device i current; index -1 does nothing. Without
    CUDA, entering a real index raises torch's error."""

    def __init__(self, device):
        self.idx, self.prev_idx = _device_index(device), -1

    def __enter__(self):
        if self.idx is None:
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        if self.idx != -1:
            raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc):
        return False


def _device_index(device):
    from ..autograd.device import device as torch_device
    if isinstance(device, int) or device is None:
        return device
    device = torch_device(device)
    if device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return device.index


class Event:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")


class Stream:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


def current_stream(device=None):
    raise AssertionError(_NO_CUDA)


def get_device_capability(device=None):
    raise AssertionError(_NO_CUDA)
