"""torch's device API, CPU only: `device("cpu")`, `device=` on factories, `.to(device)`, so
device-agnostic code runs unchanged; any other device is a clear error where it is used."""
from .tensor import Tensor

# torch's device types: naming one is not an error (device("cuda") is a value), using it is
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
          "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
          "privateuseone")


class device:
    """A device: `device("cpu")`, `device("cuda:1")`, `device("cuda", 1)`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):  # torch: an int is cuda:i
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments: "
                            f"{type!r}")
        elif ":" in type:
            type, _, number = type.partition(":")
            if not number.isdigit() or index is not None:
                raise RuntimeError(f"Invalid device string: '{type}:{number}'")
            index = int(number)
        if type not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                               f"device string: {type}")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError("device objects are immutable")

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return (isinstance(other, device) and self.type == other.type
                and self.index == other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):  # `with device("cpu"):` sets the default device: the CPU already
        check(self)
        return self

    def __exit__(self, *exc):
        return False


CPU = device("cpu")


def check(where):
    """The device a tensor may be put on: None or the CPU; anything else raises."""
    if where is None:
        return CPU
    d = where if isinstance(where, device) else device(where)
    if d.type != "cpu":
        raise RuntimeError(f"gradtool runs on the CPU only: device '{d}' is not available "
                           f"(gradtool.cuda.is_available() is False). Use device='cpu', or "
                           f"pick the device with `'cuda' if torch.cuda.is_available() else "
                           f"'cpu'`.")
    return d


def parse_to(args, kwargs):
    """Tensor.to / Module.to's arguments, torch's three forms: to(dtype), to(device, dtype),
    to(other): returns (dtype or None, copy) after checking any device named."""
    dtype, copy = kwargs.pop("dtype", None), kwargs.pop("copy", False)
    check(kwargs.pop("device", None))
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    flags = []
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, device)) or (isinstance(a, int) and not isinstance(a, bool)):
            check(a)
        elif isinstance(a, bool):
            flags.append(a)  # non_blocking, copy
        elif a is not None:
            dtype = a  # a dtype (or a numpy dtype or Python type)
    if len(flags) > 1:
        copy = copy or flags[1]
    return dtype, copy


def set_default_device(where):
    check(where)


def get_default_device():
    return CPU
