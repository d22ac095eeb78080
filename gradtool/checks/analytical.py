"""The analytical side: vector-Jacobian products from the engine, on one retained graph."""
import numpy as np

from ..autograd import engine
from ..autograd.tensor import Tensor


def vjp(outputs, diff_inputs, grad_outputs):
    """autograd.grad of `outputs` weighted by `grad_outputs` (numpy arrays, one per output):
    one gradient per input, None where the graph does not reach it."""
    # copies: an identity backward returns grad_output itself, which callers then reuse
    grads = [Tensor._wrap(np.array(g, dtype=o._data.dtype).reshape(o._data.shape))
             for o, g in zip(outputs, grad_outputs)]
    return engine.grad(list(outputs), list(diff_inputs), grads, retain_graph=True,
                       allow_unused=True)


def jacobian_rows(output, diff_inputs):
    """The Jacobians of one output with respect to each input, built from vjp(e_m) for every
    output element m, all in one batched backward pass (torch's layout: (input numel, output
    numel)), and whether every returned gradient had its input's shape and dtype."""
    n_out = output.numel()
    jacobians = [np.zeros((x.numel(), n_out)) for x in diff_inputs]
    if n_out == 0:
        return jacobians, True, True
    basis = np.eye(n_out, dtype=output._data.dtype).reshape((n_out,) + output._data.shape)
    grads = engine.grad([output], list(diff_inputs), [Tensor._wrap(basis)], retain_graph=True,
                        allow_unused=True, is_grads_batched=True)
    sizes_ok = types_ok = True
    for jac, g, x in zip(jacobians, grads, diff_inputs):
        if g is None:
            continue
        if g.shape[1:] != x.shape:
            sizes_ok = False
            continue
        types_ok &= g.dtype == x.dtype
        jac[:] = g._data.reshape(n_out, -1).T
    return jacobians, sizes_ok, types_ok


def as_arrays(grads, diff_inputs):
    """Gradients as float64 arrays of their input's shape (zeros for None)."""
    return [np.zeros(x.shape) if g is None else np.asarray(g._data, dtype=np.float64)
            for g, x in zip(grads, diff_inputs)]


def max_difference(a, b):
    """Largest absolute difference between two lists of arrays (NaN never counts, as in
    torch's reentrancy check where NaN > tol is False)."""
    # fmax skips NaN; starting from 0, an all-NaN (or empty) difference counts as 0
    return max((float(np.fmax.reduce(np.abs(x - y), axis=None, initial=0.0))
                for x, y in zip(a, b)), default=0.0)
