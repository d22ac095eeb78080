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


def _random(rng, shape, bits=None):
    """Standard normal values; with `bits`, rounded to multiples of 2**-bits (so that sums and
    products of them stay exact even in float32)."""
    a = rng.standard_normal(shape)
    return a if bits is None else np.round(a * 2.0 ** bits) / 2.0 ** bits


def cotangents_for(fn, inputs, rng, bits=None):
    outs = fn(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    return [gt.tensor(_random(rng, o.shape, bits), dtype=gt.float64) for o in outs]


def check_grads(fn, inputs, order=1, rtol=1e-5, atol=1e-6, seed=0, eps=1e-6,
                cotangent_bits=None):
    """Analytic gradients of fn at inputs match central differences; with order=2 so do the
    gradients of (gradient . w), i.e. second derivatives through create_graph.
    `eps` is the central-difference step; `cotangent_bits` rounds the random cotangents and
    weights to multiples of 2**-bits (for ops such as a float32 cast, checked exactly on
    dyadic inputs with a power-of-two eps)."""
    rng = np.random.default_rng(seed)
    f = scalarize(fn, cotangents_for(fn, inputs, rng, cotangent_bits))
    _compare(f, inputs, rtol, atol, eps)
    if order >= 2:
        diff = [x for x in inputs if isinstance(x, gt.Tensor) and x.requires_grad]
        ws = [gt.tensor(_random(rng, x.shape, cotangent_bits), dtype=gt.float64)
              for x in diff]

        def g(*xs):
            with gt.enable_grad():
                out = f(*xs)
                grads = gt.autograd.grad(out, [x for x in xs if isinstance(x, gt.Tensor)
                                               and x.requires_grad],
                                         create_graph=True, allow_unused=True)
            # every gradient counts, whether or not it requires grad: one that does not (a
            # formula that wrongly detached) still has a value, which central differences see
            total = gt.tensor(0.0, dtype=gt.float64)
            for gr, w in zip(grads, ws):
                if gr is not None:
                    total = total + (gr * w).sum()
            return total
        _compare(g, inputs, rtol, atol, eps)


def _compare(f, inputs, rtol, atol, eps=1e-6):
    diff = [x for x in inputs if isinstance(x, gt.Tensor) and x.requires_grad]
    out = f(*inputs)
    if out.requires_grad:
        analytic = gt.autograd.grad(out, diff, allow_unused=True)
    else:
        analytic = [None] * len(diff)
    numeric = [n for n in numerical_grads(f, inputs, eps) if n is not None]
    for k, (a, n) in enumerate(zip(analytic, numeric)):
        a = np.zeros_like(n) if a is None else a._data
        assert a.shape == n.shape, f"input {k}: gradient shape {a.shape} != {n.shape}"
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol,
                                   err_msg=f"input {k}: analytic vs central differences")
