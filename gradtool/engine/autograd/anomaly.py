"""Anomaly detection: a NaN produced by a backward node raises, naming the node and the line
of user code whose forward call created it. Forward call sites are recorded only while the
mode is on, so normal runs pay one flag check per op."""
from ..frames import location
from ..frames import user_site  # noqa: F401  (the one "is this the user's frame?": engine/frames.py)
from .grad_mode import _ModeContext

enabled = False
check_nan = True


def is_anomaly_enabled():
    return enabled


def is_anomaly_check_nan_enabled():
    return enabled and check_nan


def format_site(site):
    if site is None:
        return "an unknown location"
    filename, lineno, function = site
    return f"{location(filename, lineno, relative=False)} (in {function})"


class _AnomalyMode(_ModeContext):
    """set_detect_anomaly's and detect_anomaly's exit: the anomaly mode they found."""

    _bare_decorator_ok = False

    def __exit__(self, *exc):
        _set(*self._prev_anomaly)
        return False


class set_detect_anomaly(_AnomalyMode):
    """Turn anomaly detection on or off: a plain call, a context manager or a decorator."""

    def __init__(self, mode, check_nan=True):
        self.mode, self.check_nan = bool(mode), bool(check_nan)
        self._prev_anomaly = (enabled, globals()["check_nan"])
        _set(self.mode, self.check_nan)

    def __call__(self, func):
        _set(*self._prev_anomaly)
        return super().__call__(func)

    def __enter__(self):
        pass  # set_detect_anomaly(...) already applied the mode when it was made, as torch


class detect_anomaly(_AnomalyMode):
    """Context manager (and decorator) turning anomaly detection on inside."""

    def __init__(self, check_nan=True):
        self.check_nan = bool(check_nan)

    def __enter__(self):
        self._prev_anomaly = (enabled, check_nan)
        _set(True, self.check_nan)


def _set(mode, nan):
    global enabled, check_nan
    enabled, check_nan = mode, nan


def check_gradients(node, grads):
    """Raise if a backward node produced NaN, naming it and where its forward ran."""
    import numpy as np
    for i, g in enumerate(grads):
        if g is not None and np.isnan(g._data).any():
            trace = getattr(node, "_anomaly_trace", None)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output. It was created by the forward call at "
                               f"{format_site(trace)}.")
