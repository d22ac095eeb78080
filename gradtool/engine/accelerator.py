"""gradtool.accelerator: there is none; device-agnostic code takes its CPU path."""


def is_available():
    return False


def device_count():
    return 0


def current_accelerator(check_available=False):
    return None


from .errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
