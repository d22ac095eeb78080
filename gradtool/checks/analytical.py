"""The analytical side: vector-Jacobian products from the engine, on one retained graph."""
import numpy as np


def vjp(E, outputs, diff_inputs, grad_outputs):
    """autograd.grad of `outputs` weighted by `grad_outputs` (numpy arrays, one per output)
    on engine E: one gradient per input, None where the graph does not reach it."""
    # copies: an identity backward returns grad_output itself, which callers then reuse
    grads = [E.wrap(np.array(g, dtype=E.numpy_dtype(o)).reshape(tuple(o.shape)), like=o)
             for o, g in zip(outputs, grad_outputs)]
    return E.grad(outputs, diff_inputs, grads, retain_graph=True, allow_unused=True)


# One-hot rows per batched backward pass: the passes' fixed cost is shared by this many rows,
# while the memory a pass needs (each gradient on the way, times the rows) stays bounded.
ROWS_PER_PASS = 64


def jacobian_rows(E, output, diff_inputs):
    """The Jacobians of one output with respect to each input, built from vjp(e_m) for every
    output element m, ROWS_PER_PASS rows per batched backward pass (torch's layout: (input
    numel, output numel)), and whether every returned gradient had its input's shape and
    dtype."""
    n_out = output.numel()
    jacobians = [np.zeros((x.numel(), n_out)) for x in diff_inputs]
    sizes_ok = types_ok = True
    for start in range(0, n_out, ROWS_PER_PASS):
        rows = np.eye(min(ROWS_PER_PASS, n_out - start), n_out, start, E.numpy_dtype(output))
        basis = E.wrap(rows.reshape((len(rows),) + tuple(output.shape)), like=output)
        grads = E.grad([output], diff_inputs, [basis], retain_graph=True, allow_unused=True,
                       is_grads_batched=True)
        for jac, g, x in zip(jacobians, grads, diff_inputs):
            if g is None:
                continue
            if g.shape[1:] != x.shape:
                sizes_ok = False
                continue
            types_ok &= g.dtype == x.dtype
            jac[:, start:start + len(rows)] = E.array(g).reshape(len(rows), -1).T
    return jacobians, sizes_ok, types_ok


def as_arrays(E, grads, diff_inputs):
    """Gradients as float64 arrays of their input's shape (zeros for None)."""
    return [np.zeros(tuple(x.shape)) if g is None else np.asarray(E.array(g), dtype=np.float64)
            for g, x in zip(grads, diff_inputs)]


def max_difference(a, b):
    """Largest absolute difference between two lists of arrays (NaN never counts, as in
    torch's reentrancy check where NaN > tol is False)."""
    # fmax skips NaN; starting from 0, an all-NaN (or empty) difference counts as 0
    return max((float(np.fmax.reduce(np.abs(x - y), axis=None, initial=0.0))
                for x, y in zip(a, b)), default=0.0)
