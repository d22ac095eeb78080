"""A record of the forward pass, so diagnostics can say *why* a tensor has no graph:
which op made it, in which grad mode, at which line of the user's code, and whether a
detach() or an input without requires_grad cut it off."""
import dataclasses
import sys

import numpy as np

from ..autograd import anomaly, grad_mode
from ..autograd import tensor as T


@dataclasses.dataclass
class OpEvent:
    op: str
    inputs: list          # ids of the tensor inputs
    outputs: list         # ids of the results
    grad_enabled: bool
    inference: bool
    any_input_requires_grad: bool
    site: tuple           # (filename, lineno, function) in the user's code, or None
    made_nonfinite: bool = False  # finite inputs, but NaN or Inf in the result


def _finite(t):
    return t._data.dtype.kind != "f" or bool(np.all(np.isfinite(t._data)))


class ForwardTrace:
    """Context manager recording every op run inside it. Tensors it saw are kept alive while
    the trace lives, so their ids stay unique."""

    def __init__(self, target_code=None):
        self.events = []
        self.made_by = {}     # id(tensor) -> OpEvent that produced it
        self.detached = {}    # id(tensor) -> site of the detach() that made it
        self.site_of_node = {}  # grad_fn -> site of the forward call that created it
        self._keep = []
        self._target_code = target_code
        self._target_frame = None  # kept: a returned frame still holds its final locals

    def local_names(self):
        """id(tensor) -> the name it had in the target function when that returned."""
        if self._target_frame is None:
            return {}
        return {id(v): k for k, v in self._target_frame.f_locals.items()
                if isinstance(v, T.Tensor) and not k.startswith("_")}

    def __enter__(self):
        self._saved = (T.call, T.call_inplace, T.Tensor.detach)
        call, call_inplace, detach = self._saved
        trace = self

        def traced(dispatch, suffix):
            def wrapper(spec, inputs, args=()):
                result = dispatch(spec, inputs, args)
                trace._record(spec.name + suffix, inputs, result)
                return result
            return wrapper

        def traced_detach(tensor):
            out = detach(tensor)
            trace._keep.append(out)
            trace.detached[id(out)] = anomaly.user_site()
            return out

        T.call, T.call_inplace = traced(call, ""), traced(call_inplace, "_")
        T.Tensor.detach = traced_detach
        return self

    def __exit__(self, *exc):
        T.call, T.call_inplace, T.Tensor.detach = self._saved
        return False

    def _record(self, name, inputs, result):
        from ..autograd.engine import current_task
        if current_task() is not None:
            return  # ops run by backward formulas are not the user's forward
        tensors = list(inputs[0]) if inputs and isinstance(inputs[0], list) else [
            x for x in inputs if isinstance(x, T.Tensor)]
        tensors = [x for x in tensors if isinstance(x, T.Tensor)]
        outputs = list(result) if isinstance(result, tuple) else [result]
        event = OpEvent(name, [id(x) for x in tensors], [id(o) for o in outputs],
                        grad_mode.state.grad_enabled, grad_mode.state.inference,
                        any(x._requires_grad for x in tensors), anomaly.user_site(),
                        not all(_finite(o) for o in outputs) and all(_finite(x) for x in tensors))
        self.events.append(event)
        if self._target_frame is None and self._target_code is not None:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code is not self._target_code:
                frame = frame.f_back
            self._target_frame = frame
        self._keep.extend(tensors)
        self._keep.extend(outputs)
        for o in outputs:
            self.made_by[id(o)] = event
            if o._grad_fn is not None:
                self.site_of_node.setdefault(o._grad_fn, event.site)
