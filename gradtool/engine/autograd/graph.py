"""torch.autograd.graph: the graph's node type, hooks on saved tensors, multi-grad hooks."""
import os
import tempfile
import threading

import numpy as np

from . import engine
from .grad_mode import state
from .node import Node, RemovableHandle
from .tensor import Tensor

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "save_on_disk",
           "disable_saved_tensors_hooks", "register_multi_grad_hook"]


class saved_tensors_hooks:
    """Every tensor saved for backward inside is stored as pack_hook(tensor); backward gets it
    back as unpack_hook(packed). Thread-local; the innermost pair wins."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if state.saved_tensors_hooks_disabled is not None:
            raise RuntimeError(state.saved_tensors_hooks_disabled)
        state.saved_tensors_hooks = state.saved_tensors_hooks + (
            (self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        state.saved_tensors_hooks = state.saved_tensors_hooks[:-1]
        return False


class _SpilledTensor:
    """A saved tensor's data in a temporary file, deleted when the graph lets go of it."""

    def __init__(self, directory, array):
        fd, self.path = tempfile.mkstemp(suffix=".npy", prefix="gradtool-saved-", dir=directory)
        with os.fdopen(fd, "wb") as f:
            np.save(f, array, allow_pickle=False)

    def load(self):
        return np.load(self.path, allow_pickle=False)

    def __del__(self):
        try:
            os.remove(self.path)
        except OSError:
            pass


class save_on_cpu(saved_tensors_hooks):
    """torch's save_on_cpu: saved tensors kept in CPU memory. Every gradtool tensor is there
    already, so they are kept as they are (pin_memory and device_type change nothing)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class save_on_disk(saved_tensors_hooks):
    """Spill every tensor saved for backward inside to a temporary file (torch's save_on_cpu
    idea, one level further down): memory for saved tensors traded for disk reads."""

    def __init__(self, directory=None):
        self.directory = directory
        super().__init__(lambda t: _SpilledTensor(directory, t._data),
                         lambda spilled: Tensor._wrap(spilled.load()))


class disable_saved_tensors_hooks:
    """Inside, installing saved-tensor hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if state.saved_tensors_hooks:  # hooks already installed: refused before any change
            raise RuntimeError(self.error_message)
        self._prev = state.saved_tensors_hooks_disabled
        state.saved_tensors_hooks_disabled = self.error_message
        return self

    def __exit__(self, *exc):
        state.saved_tensors_hooks_disabled = self._prev
        return False


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode="all": fn(grads) once per backward, after the gradients of all `tensors` that this
    backward reaches are computed (None for the others). mode="any": fn(grad) once per
    backward, with the first of them computed."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    pending = {}  # one entry per running backward: the grads seen so far

    def make_hook(i):
        def hook(grad):
            task = engine.current_task()
            with lock:
                first = task not in pending
                if first:
                    pending[task] = [None] * len(tensors)
                pending[task][i] = grad
            if mode == "any":
                if first:
                    engine.queue_callback(lambda: pending.pop(task, None))
                    fn(grad)
            elif first:
                engine.queue_callback(lambda: fn(tuple(pending.pop(task))))
        return hook

    return _MultiHandle([t.register_hook(make_hook(i))
                         for i, t in enumerate(tensors) if t.requires_grad])


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
