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
