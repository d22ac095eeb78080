"""torch.autograd.forward_ad: dual tensors carry a tangent through every op (forward mode).

Inside `dual_level()`, `make_dual(x, v)` gives a tensor whose ops also compute their output's
tangent by the op table's jvp (see ops/registry.py); `unpack_dual(y)` reads it back.
A tangent lives on its tensor (the `_fw_grad` slot, with the level it belongs to), so it
dies with it and is invisible once its level has exited. dispatch.call pays one check of
`forward_level.active` when no level is active.
"""
import collections
import contextlib
import types

import numpy as np

from ..errors import NotInEngineError

from . import forward_level, grad_mode
from .node import SavedTensor
from .tensor import Tensor

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]


class UnpackedDualTensor(collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """What unpack_dual returns: the primal (a view without tangent) and the tangent."""


def enter_dual_level():
    if forward_level.active is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    # torch numbers its levels (only level 0 exists here); batch: B when every tangent at
    # this level holds B tangents (a leading dim), see batched()
    forward_level.active = types.SimpleNamespace(index=0, batch=None)
    return 0


def exit_dual_level(*, level=None):
    if forward_level.active is None or level not in (None, forward_level.active.index):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    forward_level.active = None


@contextlib.contextmanager
def batched(size):
    """A dual level whose tangents carry a leading batch dim of `size` tangents: a forward
    pass computes `size` Jacobian-vector products at once (torch gets this from vmap over
    make_dual). gradtool's own: functional.jacobian(strategy="forward-mode", vectorize=True)
    and gradcheck's check_batched_forward_grad use it; make_dual then takes a tangent of
    shape (size, *tensor.shape)."""
    enter_dual_level()
    forward_level.active.batch = size
    try:
        yield 0
    finally:
        exit_dual_level()


class dual_level(grad_mode._ModeContext):
    """Context manager for forward AD: every dual tensor made inside lives at this level.
    Also a decorator (`@dual_level()`), as torch's."""

    _bare_decorator_ok = False

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` whose tangent is `tangent` (differentiable in backward too)."""
    current = forward_level.active
    if current is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level is not None and level != current.index:
        raise RuntimeError("Invalid level given to _make_dual")
    if tensor._data.dtype.kind == "c" or tangent._data.dtype.kind == "c":
        raise NotInEngineError("forward-mode AD (forward_ad, jvp) on complex tensors")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if t._data.dtype.kind not in "fV":
            raise ValueError(f"Expected {name} to be floating point or complex, but got: "
                             f"{t.dtype}")
    check_size(tensor, tangent)
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           "gradient at the same level 0 is not supported.")
    dual = _untracked(tensor.view, tensor._data.shape)
    dual._fw_grad = (current, tangent)
    return dual


def check_size(tensor, tangent):
    """torch's refusal of a tangent whose size is not its tensor's (after the batch dim of
    batched tangents): make_dual's and a custom Function's jvp's."""
    batch = forward_level.active.batch
    expected = tensor._data.shape if batch is None else (batch,) + tensor._data.shape
    if tangent._data.shape != expected:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor._data.shape)} while the given forward gradient "
                           f"is of size {list(tangent._data.shape)}.")


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor; the tangent is None for any other tensor."""
    tangent = tangent_of(tensor) if forward_level.active is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_untracked(tensor.view, tensor._data.shape), tangent)


# ---------------- the engine's side: reading, computing and writing tangents ----------------
def _untracked(fn, *args):
    """fn run with no level active: tangents computed from tangents get none of their own."""
    level = forward_level.active
    forward_level.active = None
    try:
        return fn(*args)
    finally:
        forward_level.active = level


def tangent_of(t):
    """t's tangent at the active level, or None. A view made before its base got a tangent
    reads the same view of the base's tangent."""
    try:
        level, tangent = t._fw_grad
    except AttributeError:
        level = None
    if level is forward_level.active:
        return tangent
    base = t._base
    if base is not None and forward_level.active.batch is None:
        try:
            level, base_tangent = base._fw_grad
        except AttributeError:
            return None
        if level is forward_level.active:
            tangent = Tensor._wrap(_same_view(base_tangent._data, base._data, t._data))
            t._fw_grad = (level, tangent)
            return tangent
    return None


def last_tangent(t):
    """The tangent t was last given, at any level (for reports, after the level exited)."""
    try:
        return t._fw_grad[1]
    except AttributeError:
        return None


@contextlib.contextmanager
def tangent_on(t, tangent):
    """`tangent` on `t` itself for a while (gradcheck's module parameters, which the module
    reads in place rather than as the dual tensor it was passed)."""
    before = getattr(t, "_fw_grad", None)
    _set(t, tangent)
    try:
        yield
    finally:
        if before is None:
            del t._fw_grad
        else:
            t._fw_grad = before


def _same_view(base_tangent, base, view):
    """The view of `base_tangent` that `view` is of `base` (they share a layout)."""
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0])
    flat = base_tangent.reshape(-1)
    start = offset // base.itemsize
    return np.lib.stride_tricks.as_strided(flat[start:], view.shape, view.strides)


def _set(t, tangent):
    t._fw_grad = (forward_level.active, tangent)


def propagate(spec, inputs, args, arrays, results):
    """After an op ran with a level active: its outputs' tangents, if an input has one."""
    tangents = _input_tangents(spec, inputs)
    if tangents is None:
        return
    if any(r._data.dtype.kind == "c" for r in results):  # (the jvp rules are real-only)
        raise NotInEngineError("forward-mode AD (forward_ad, jvp) on complex tensors")
    out = _untracked(spec.tangent, inputs, args, arrays, results, tangents,
                     forward_level.active.batch)
    if spec.multi_output:
        out = out if isinstance(out, (list, tuple)) else [out]
        for r, t in zip(results, out):
            if t is not None and r._data.dtype.kind in "fV":
                _give_tangent(r, t)
        return
    _give_tangent(results[0], out)


def inplace_tangent(spec, inputs, args, arrays, out):
    """call_inplace's tangent of its target, computed before the write (the formulas read
    the inputs as they were), or None."""
    tangents = _input_tangents(spec, inputs)
    if tangents is None:
        return None
    return _untracked(spec.tangent, inputs, args, arrays, (Tensor._wrap(out),), tangents,
                      forward_level.active.batch)


def write_inplace_tangent(target, tangent):
    """Give the target of an in-place op its new tangent: written into the existing one when
    the target is a view (so its base, and the base's other views, see it), else replaced."""
    base = target._base
    if base is None:
        _set(target, tangent)
        return
    if forward_level.active.batch is not None:
        raise NotImplementedError("an in-place write through a view with batched tangents "
                                  "(a forward-mode Jacobian): compute it out of place, or "
                                  "use vectorize=False")
    current = tangent_of(target)
    if current is None:  # the base gets a zero tangent, and the view a view of it
        _set(base, Tensor._wrap(np.zeros_like(base._data)))
        current = tangent_of(target)
    np.copyto(current._data, tangent._data)


def _input_tangents(spec, inputs):
    """The inputs' tangents (None where an input has none), or None if none has one (or
    in inference mode, which computes no tangent, as torch's)."""
    if grad_mode.state.inference:
        return None
    xs = inputs[0] if spec.variadic else inputs
    tangents = [tangent_of(x) if isinstance(x, Tensor) else None for x in xs]
    return tangents if any(t is not None for t in tangents) else None


def _give_tangent(result, tangent):
    """An op's output gets its tangent; if its node saved it, so does the saved value, for
    backward (forward-over-reverse)."""
    _set(result, tangent)
    node = result._grad_fn
    if node is not None and node._for_backward:
        save_output_tangent(node._for_backward, result._data, tangent)


def save_output_tangent(saved, data, tangent):
    for value in saved.values():
        # (an output kept as data: is_output, or the output of a write through a view)
        if (type(value) is SavedTensor and value._tensor is None
                and value._data is data):
            value._fw_grad = (forward_level.active, tangent)


def snapshot_tangent(saved, tensor):
    """A saved input about to be overwritten in place keeps a copy of its tangent too."""
    tangent = tangent_of(tensor)
    if tangent is not None:
        saved._fw_grad = (forward_level.active, _untracked(tangent.clone))


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
