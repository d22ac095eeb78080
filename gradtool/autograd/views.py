"""In-place ops through views: the base's history is rewritten so gradients stay right.

A view shares memory and the version counter with its base (the tensor owning the memory).
When an in-place op writes through a view of a tensor that is part of a graph, the base gets
a CopySlices node: its gradient passes unchanged outside the view's region and through the
in-place op's own backward inside it. The view's history is then regenerated from the base's
(AsStridedBackward0), as torch does.
"""
from . import overlap
from .dispatch import call, regenerate_view, view_indices
from .engine import _validate, gradient_edge
from .node import Node
from .ops import derivatives as table


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
    """After an in-place op recorded as `node` wrote through the view `target`: its base's
    history gets a CopySlices node, and the view a history over it."""
    base = target._base
    base_edge = gradient_edge(base) if base._requires_grad else (None, 0)
    base_meta = (base._data.shape, base._data.dtype)
    base._grad_fn = CopySlices(base_edge, base_meta, node, view_indices(base._data, target._data),
                               overlap.internal_overlap(target._data))
    base._requires_grad, base._output_nr = True, 0
    regenerate_view(target)
