"""Central differences for the tests: the independent oracle every op is checked against."""
import numpy as np

import gradtool as gt


def scalarize(fn, cotangents):
    """x -> sum_i <v_i, out_i(x)>, a scalar whose gradient is the vector-Jacobian product."""
    def f(*xs):
        outs = fn(*xs)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        total = 0
        for o, v in zip(outs, cotangents):
            if o.dtype.is_floating_point:
                total = total + (o * v).sum()
        return total
    return f


def numerical_grads(f, inputs, eps=1e-6):
    """d f / d input for each float input, by central differences in float64."""
    grads = []
    for x in inputs:
        if not (isinstance(x, gt.Tensor) and x.requires_grad):
            grads.append(None)
            continue
        data = x._data
        g = np.zeros(data.shape)
        for i in np.ndindex(data.shape):
            orig = data[i]
            data[i] = orig + eps
            with gt.no_grad():
                hi = f(*inputs).item()
            data[i] = orig - eps
            with gt.no_grad():
                lo = f(*inputs).item()
            data[i] = orig
            g[i] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


def cotangents_for(fn, inputs, rng):
    outs = fn(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    return [gt.tensor(rng.standard_normal(o.shape), dtype=gt.float64) for o in outs]


def check_grads(fn, inputs, order=1, rtol=1e-5, atol=1e-6, seed=0):
    """Analytic gradients of fn at inputs match central differences; with order=2 so do the
    gradients of (gradient . w), i.e. second derivatives through create_graph."""
    rng = np.random.default_rng(seed)
    f = scalarize(fn, cotangents_for(fn, inputs, rng))
    _compare(f, inputs, rtol, atol)
    if order >= 2:
        diff = [x for x in inputs if isinstance(x, gt.Tensor) and x.requires_grad]
        ws = [gt.tensor(rng.standard_normal(x.shape), dtype=gt.float64) for x in diff]

        def g(*xs):
            with gt.enable_grad():
                out = f(*xs)
                grads = gt.autograd.grad(out, [x for x in xs if isinstance(x, gt.Tensor)
                                               and x.requires_grad],
                                         create_graph=True, allow_unused=True)
            total = 0
            for gr, w in zip(grads, ws):
                if gr is not None and gr.requires_grad:
                    total = total + (gr * w).sum()
            return total if isinstance(total, gt.Tensor) else gt.tensor(0.0, dtype=gt.float64)
        _compare(g, inputs, rtol, atol)


def _compare(f, inputs, rtol, atol):
    diff = [x for x in inputs if isinstance(x, gt.Tensor) and x.requires_grad]
    out = f(*inputs)
    if out.requires_grad:
        analytic = gt.autograd.grad(out, diff, allow_unused=True)
    else:
        analytic = [None] * len(diff)
    numeric = [n for n in numerical_grads(f, inputs) if n is not None]
    for k, (a, n) in enumerate(zip(analytic, numeric)):
        a = np.zeros_like(n) if a is None else a._data
        assert a.shape == n.shape, f"input {k}: gradient shape {a.shape} != {n.shape}"
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol,
                                   err_msg=f"input {k}: analytic vs central differences")
