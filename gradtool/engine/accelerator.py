"""gradtool.accelerator: there is none; device-agnostic code takes its CPU path."""


def is_available():
    return False


def device_count():
    return 0


def current_accelerator(check_available=False):
    return None


_NONE = "Cannot access accelerator device when none is available."


def set_device_index(device):
    raise RuntimeError(_NONE)


def current_device_index():
    raise RuntimeError(_NONE)


set_device_idx, current_device_idx = set_device_index, current_device_index


from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
