"""In-place ops through views: the base's history is rewritten so gradients stay right.

A view shares memory and the version counter with its base (the tensor owning the memory).
When an in-place op writes through a view of a tensor that is part of a graph, the base gets
a CopySlices node: its gradient passes unchanged outside the view's region and through the
in-place op's own backward inside it. The view's history is then regenerated from the base's
(AsStridedBackward0), as torch does.
"""
import numpy as np

from . import grad_mode, overlap
from .dispatch import call
from .engine import _validate, gradient_edge
from .node import Node
from .ops import derivatives as table


def view_indices(base, view):
    """For each element of `view` (a numpy view into `base`'s memory), the flat C-order index
    of the base element it aliases. (Views made by gradtool's ops never have negative
    strides.)"""
    itemsize = base.itemsize
    span = sum(s * (n - 1) for s, n in zip(base.strides, base.shape)) // itemsize + 1
    memory = np.empty(max(span, 1), dtype=np.int64)  # memory slot -> flat index stored there

    def slot_strides(strides):
        return tuple(s // itemsize * memory.itemsize for s in strides)
    as_strided = np.lib.stride_tricks.as_strided
    as_strided(memory, base.shape, slot_strides(base.strides))[...] = \
        np.arange(base.size).reshape(base.shape)
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // itemsize
    return as_strided(memory[start:], view.shape, slot_strides(view.strides)).copy()


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
            inside = _validate(self.fn, 0, inside)
        base_grad = call(table.INDEX_PUT, (flat, 0 if inside is None else inside),
                         ((self.indices,), False))
        return [base_grad.reshape(self.base_shape)] + list(grads[1:])

    def saved_values(self):
        return self.fn.saved_values()

    def release_saved(self):
        self.fn.release_saved()


def rebase_history(target, node):
    """After an in-place op recorded as `node`, make `target` (or its base) its result."""
    base = target._base
    if base is None:
        target._requires_grad, target._grad_fn, target._output_nr = True, node, 0
        return
    base_edge = gradient_edge(base) if base._requires_grad else (None, 0)
    base_meta = (base._data.shape, base._data.dtype)
    base._grad_fn = CopySlices(base_edge, base_meta, node, view_indices(base._data, target._data),
                               overlap.internal_overlap(target._data))
    base._requires_grad, base._output_nr = True, 0
    regenerate(target)


def regenerate(view):
    """Give a view the history `base -> view` on top of the base's current history."""
    base = view._base
    view._base_grad_fn = base._grad_fn
    if not base._requires_grad:
        view._requires_grad, view._grad_fn, view._output_nr = False, None, 0
        return
    with grad_mode.enable_grad():
        alias = call(table.AS_STRIDED, (base,),
                     (view._data.shape, view_indices(base._data, view._data)))
    view._requires_grad, view._grad_fn, view._output_nr = True, alias._grad_fn, 0
