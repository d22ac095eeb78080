"""F1-F4: forward-mode AD (autograd.forward_ad and the functional API built on it).

F1: the cost of a jvp next to a forward: an MLP-shaped function (x @ W1 -> tanh -> @ W2 ->
sum of squares per row; batch 64, width 256, float64) evaluated plainly ("forward") and with
functional.jvp along a random direction of x ("jvp"). Forward mode costs at most one
forward's work more: jvp / forward <= 2. numpy's column is the forward plus its tangent by
hand.
F2/F3: the Jacobian of a function with 10 inputs and 10,000 outputs (x -> tanh(A x) * 2 + x_0,
A a fixed 10,000 x 10 matrix), by functional.jacobian in forward mode (vectorize=True: 10
jvps) and in reverse mode (vectorize=False: 10,000 backward passes; vectorized, its batch of
10,000 one-hot cotangents is a 10,000 x 10,000 identity, 800 MB, and takes seconds on both
frameworks). numpy's column is the closed form.
F4: functional.hessian(g, x, vectorize=True, outer_jacobian_strategy="forward-mode") on W5's
function of 50 float64 elements (forward over reverse); numpy's column is the closed form.
"""
import numpy as np

from workloads import Case, Prepared, to_numpy

BATCH, WIDTH = 64, 256
N_IN, N_OUT = 10, 10_000


def _mlp(x, w1, w2):
    return ((x @ w1).tanh() @ w2).pow(2).sum(1)


def _np_mlp_jvp(x, w1, w2, v, tangent):
    h = np.tanh(x @ w1)
    y = h @ w2
    if not tangent:
        return (y * y).sum(1)
    y_t = ((v @ w1) * (1 - h * h)) @ w2
    return (2 * y * y_t).sum(1)


def _f1_cases():
    rng = np.random.default_rng(11)
    x0 = rng.standard_normal((BATCH, WIDTH))
    w10 = rng.standard_normal((WIDTH, WIDTH)) / 16
    w20 = rng.standard_normal((WIDTH, WIDTH)) / 16
    v0 = rng.standard_normal((BATCH, WIDTH))

    def case(tangent):
        def setup(backend):
            out = {}
            if backend.module is None:
                def run(lap):
                    out["r"] = _np_mlp_jvp(x0, w10, w20, v0, tangent)
                return Prepared(run, lambda: [out["r"]])
            m = backend.module
            x, w1, w2, v = (m.tensor(a.copy(), dtype=m.float64) for a in (x0, w10, w20, v0))

            def run(lap):
                if tangent:
                    out["r"] = m.autograd.functional.jvp(lambda t: _mlp(t, w1, w2), x, v)[1]
                else:
                    out["r"] = _mlp(x, w1, w2)
            return Prepared(run, lambda: [to_numpy(out["r"])])
        what = "jvp" if tangent else "forward"
        return Case(name=f"F1/{what}", group="F1",
                    label=f"F1 MLP {BATCH}x{WIDTH} {what}", setup=setup, unit="ms",
                    budget=1.0, rtol=1e-8, atol=1e-8)
    return [case(False), case(True)]


def _fn(m, a):
    return lambda x: (a @ x).tanh() * 2 + x[0]


def _np_jacobian(a, x):
    s = 1 - np.tanh(a @ x) ** 2
    jac = 2 * s[:, None] * a
    jac[:, 0] += 1
    return jac


def _f23_cases():
    rng = np.random.default_rng(12)
    a0 = rng.standard_normal((N_OUT, N_IN)) / 3
    x0 = rng.standard_normal(N_IN)

    def case(strategy):
        def setup(backend):
            out = {}
            if backend.module is None:
                def run(lap):
                    out["j"] = _np_jacobian(a0, x0)
                return Prepared(run, lambda: [out["j"]])
            m = backend.module
            a, x = m.tensor(a0.copy(), dtype=m.float64), m.tensor(x0.copy(), dtype=m.float64)

            def run(lap):
                out["j"] = m.autograd.functional.jacobian(
                    _fn(m, a), x, vectorize=strategy == "forward-mode", strategy=strategy)
            return Prepared(run, lambda: [to_numpy(out["j"])])
        short = "forward" if strategy == "forward-mode" else "reverse"
        return Case(name=f"F{2 if short == 'forward' else 3}/jacobian_{short}",
                    group="F2" if short == "forward" else "F3",
                    label=f"F{2 if short == 'forward' else 3} jacobian 10->10,000 {short}",
                    setup=setup, unit="ms", budget=2.0, rtol=1e-8, atol=1e-8,
                    # reverse mode: ~10 s a call on both frameworks, so one sample only
                    **(dict(min_repeats=3, max_repeats=11) if short == "forward" else
                       dict(min_repeats=1, max_repeats=1, precall=False)))
    return [case("forward-mode"), case("reverse-mode")]


def _g(m, x):
    return (x.sin() * x.cos()).sum() + (x * x).sum() ** 2


def _np_hessian(x):
    s = np.sum(x * x)
    return np.diag(-2 * np.sin(2 * x)) + 4 * s * np.eye(x.size) + 8 * np.outer(x, x)


def _f4_case():
    x0 = np.random.default_rng(5).standard_normal(50)

    def setup(backend):
        out = {}
        if backend.module is None:
            def run(lap):
                out["h"] = _np_hessian(x0)
            return Prepared(run, lambda: [out["h"]])
        m = backend.module
        x = m.tensor(x0.copy(), dtype=m.float64)

        def run(lap):
            out["h"] = m.autograd.functional.hessian(
                lambda t: _g(m, t), x, vectorize=True, outer_jacobian_strategy="forward-mode")
        return Prepared(run, lambda: [to_numpy(out["h"])])
    return Case(name="F4/hessian50_forward", group="F4",
                label="F4 hessian 50, forward-mode outer", setup=setup, unit="ms",
                budget=1.5, min_repeats=5, max_repeats=15, rtol=1e-8, atol=1e-8)


def forward_ad_cases():
    return _f1_cases() + _f23_cases() + [_f4_case()]
