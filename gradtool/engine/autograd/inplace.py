"""`call_inplace`, call's in-place twin (add_, mul_, copy_, x[...] = v): checked before
anything is written (inference tensors, leaves that require grad, torch's memory-overlap
rules in overlap.py), then written, the version counter bumped, and the target's history
rewritten. A view shares memory and the version counter with its base (the tensor owning the
memory): when an in-place op writes through a view of a tensor that is part of a graph, the
base gets a CopySlices node (its gradient passes unchanged outside the view's region and
through the in-place op's own backward inside it), and the view's history is regenerated
over the base's (AsStridedBackward0), as torch does."""
import functools

import numpy as np

from . import anomaly, forward_ad, forward_level, grad_mode, observers
from .dispatch import (NO_NODE, NOT_BATCHED, as_result, call, make_node, refuse_complex, regenerate_view,
                       run_forward, save_for_backward, view_indices)
from .engine import gradient_edge, validate_gradient
from .node import Node, SavedTensor
from .observers import subscribers as _subscribers  # anyone watching?
from .ops import derivatives as table
from .overlap import check_writable, internal_overlap
from .tensor import Tensor

_state = grad_mode.state
batching_hook = None  # vmap's, as dispatch's


def call_inplace(spec, inputs, args=(), _observed=False):
    """Op `spec` writing its result into inputs[0], as above. (_observed: as call's.)"""
    if _subscribers and not _observed and observers.watching():
        # (add's in-place form is add_; uniform_ and eq_ are named so already)
        name = spec.name if spec.name.endswith("_") else spec.name + "_"
        return observers.op(name, inputs,
                            functools.partial(call_inplace, spec, inputs, args, True))
    if batching_hook is not None:
        out = batching_hook(spec, inputs, args)
        if out is not NOT_BATCHED:
            return out
    target = inputs[0]
    check_inplace(target)
    arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    out = as_result(run_forward(spec, arrays, args), arrays, spec, args)
    if not spec.complex and out.dtype.kind == "c":
        refuse_complex(spec, out.dtype)
    check_writable(spec, target, out, inputs, args)
    tangent = (forward_ad.inplace_tangent(spec, inputs, args, arrays, out)
               if forward_level.active is not None else None)
    node, plan = make_node(spec, inputs, args) if _state.grad_enabled else NO_NODE
    if node is not None:  # inputs are saved as they were before the write
        saved = node._for_backward = save_for_backward(
            [e for e in plan if e[1] != "output"], inputs, args, arrays, None)
        for name, kind, where in plan:  # the target as input 0 is kept as it was (torch's
            # original_self); saved as another input it is the tensor itself, and so is
            # seen as modified in backward (m.mul_(m) fails there, as in torch)
            if kind == "input" and where == 0 and name in saved:
                value = saved[name]
                if type(value) is SavedTensor and value._tensor is target:
                    if forward_level.active is not None:
                        forward_ad.snapshot_tangent(value, target)
                    value.snapshot()
    if internal_overlap(target._data):  # only elements written: others alias them
        np.copyto(target._data, out, casting="same_kind", where=out != target._data)
    else:
        np.copyto(target._data, out, casting="same_kind")
    counter = target._version_counter
    counter[0] += 1
    counter[1] = anomaly.user_site()  # named in the error if a saved tensor was overwritten
    if node is not None:
        rebase_history(target, node)
        outputs = save_for_backward([e for e in plan if e[1] == "output"], inputs, args, arrays,
                                    (target,))
        if target._base is not None:  # as torch, the saved output of a write through a view
            # unpacks onto the view's new history (over CopySlices), not onto this node
            for value in outputs.values():
                value.is_output = False
                value._graph_edge = (target._grad_fn, target._output_nr, None)
        saved.update(outputs)
    if tangent is not None:
        forward_ad.write_inplace_tangent(target, tangent)
        if node is not None:
            forward_ad.save_output_tangent(saved, target._data, tangent)
    return target


def check_inplace(target):
    """torch's refusals of an in-place write (inference tensors, leaves that require grad)."""
    if target._is_inference and not _state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                           "details.")
    if not _state.grad_enabled:
        return
    base = target._base
    if base is None and target._requires_grad and target._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


class CopySlices(Node):
    """The base's grad_fn after an in-place op through one of its views."""

    __slots__ = ("fn", "indices", "base_shape", "view_overlaps")

    def __init__(self, base_edge, base_meta, fn, indices, view_overlaps=False):
        super().__init__((base_edge,) + fn.next_functions[1:], (base_meta,) + fn._input_meta[1:])
        self.fn = fn
        self.indices = indices
        self.base_shape = base_meta[0]
        self.view_overlaps = view_overlaps  # (an expand: torch cannot write its gradient)

    def apply(self, grad_outputs):
        flat = grad_outputs[0].reshape(-1)
        region = call(table.INDEX, (flat,), ((self.indices,),))
        grads = self.fn.apply([region])
        inside = grads[0]
        if inside is not None:
            if self.view_overlaps:  # torch copies it into the view's elements, which overlap
                raise RuntimeError("unsupported operation: more than one element of the "
                                   "written-to tensor refers to a single memory location. "
                                   "Please clone() the tensor before performing the operation.")
            inside = validate_gradient(self.fn, 0, inside)
        base_grad = call(table.INDEX_PUT, (flat, 0 if inside is None else inside),
                         ((self.indices,), False))
        return [base_grad.reshape(self.base_shape)] + list(grads[1:])

    def saved_values(self):
        return self.fn.saved_values()

    def release_saved(self):
        self.fn.release_saved()


def rebase_history(target, node):
    """After an in-place op recorded as `node`, make `target` its result; written through a
    view, its base's history gets a CopySlices node, and the view a history over it."""
    base = target._base
    if base is None:
        target._requires_grad, target._grad_fn, target._output_nr = True, node, 0
        return
    base_edge = gradient_edge(base) if base._requires_grad else (None, 0)
    base_meta = (base._data.shape, base._data.dtype)
    base._grad_fn = CopySlices(base_edge, base_meta, node, view_indices(base._data, target._data),
                               internal_overlap(target._data))
    base._requires_grad, base._output_nr = True, 0
    regenerate_view(target)
