"""torch's *_copy ops (view_copy, transpose_copy, unbind_copy, ...): a view op's result in
memory of its own. torch generates them from its view ops: each records one node, named after
the view's with `_copy` (TransposeBackward0_copy), holding the view's formulas. So here: the
view runs (its own method parses and checks the arguments, in torch's words), then its
results are copied out of the input's memory and their node becomes the `_copy` node."""
import functools

import numpy as np

from . import complex_numbers
from .dispatch import call
from .ops import derivatives as table
from .tensor import Tensor


def _slice(input, dim=0, start=None, end=None, step=1):
    return input[(slice(None),) * (dim % input.dim()) + (slice(start, end, step),)]


# each copy op and the view it copies (a Tensor method's name, or a function of the input)
VIEWS = {
    "view_copy": "view", "transpose_copy": "transpose", "permute_copy": "permute",
    "expand_copy": lambda input, size, *, implicit=False: input.expand(size),
    "diagonal_copy": "diagonal", "select_copy": "select", "slice_copy": _slice,
    "squeeze_copy": "squeeze", "unsqueeze_copy": "unsqueeze", "t_copy": "t",
    "unbind_copy": "unbind", "split_copy": "split", "split_with_sizes_copy": "split_with_sizes",
    "alias_copy": lambda input: call(table.ALIAS, (input,)), "unfold_copy": "unfold",
    "view_as_real_copy": complex_numbers.view_as_real,
    "view_as_complex_copy": complex_numbers.view_as_complex,
    "narrow_copy": "narrow", "as_strided_copy": "as_strided",
    "indices_copy": lambda input: _refused_at_coo("indices_copy", input).indices(),
    "values_copy": lambda input: _refused_at_coo("values_copy", input).values(),
}
def _refused_at_coo(op, input):
    """torch registers indices_copy and values_copy for no sparse COO backend: refused there,
    as torch's dispatcher refuses them (other layouts get indices() and values()'s errors)."""
    from .sparse_compressed import not_on_backend
    from .memory import sparse_coo
    if input.layout is sparse_coo:
        raise not_on_backend(op, input)
    return input


# (narrow_copy is an op of torch's own, not a generated copy: its node has its own name)
_NODE_NAMES = {"narrow_copy": "NarrowCopyBackward0"}


def copy_op(name):
    """torch.<name>: VIEWS[name]'s results, copied, under the `_copy` node."""
    view = VIEWS[name]
    if isinstance(view, str):
        view = getattr(Tensor, view)

    def fn(input, *args, **kwargs):
        results = view(input, *args, **kwargs)
        if isinstance(results, Tensor):
            return _copied(results, name)
        return tuple(_copied(r, name) for r in results)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: the view op's result in memory of its own."
    return fn


def _copied(view, name):
    out = Tensor._wrap(np.array(view._data, copy=True, order="C"))
    node = view._grad_fn
    if node is not None:  # (the view's node, made the copy's: one node, as torch's)
        if not type(node).__name__.endswith("_copy"):
            node.__class__ = _copy_node_class(type(node), _NODE_NAMES.get(name))
        out._requires_grad, out._grad_fn, out._output_nr = True, node, view._output_nr
    tangent = getattr(view, "_fw_grad", None)
    if tangent is not None:  # (forward mode: the view's tangent, copied too)
        level, value = tangent
        out._fw_grad = (level, value.clone() if isinstance(value, Tensor) else value.copy())
    return out


@functools.lru_cache(maxsize=None)
def _copy_node_class(view_node_class, name=None):
    return type(name or view_node_class.__name__ + "_copy", (view_node_class,), {"__slots__": ()})


def detach_copy(input):
    """A copy outside the graph: torch's result requires grad (when input does) under a node
    that refuses backward, as here (DETACH_COPY)."""
    return call(table.DETACH_COPY, (input,))


FUNCTIONS = {name: copy_op(name) for name in VIEWS}
FUNCTIONS["detach_copy"] = detach_copy
