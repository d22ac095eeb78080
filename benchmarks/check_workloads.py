"""W4 (gradcheck) and W5 (Hessian): the checks users run many times.

W4: gradcheck in full mode on f(x) = sum(sin(x) * x) with N = 10, 100, 1,000 float64 input
elements, and fast mode at N = 1,000. numpy's column is the same work by hand: 2N evaluations
of f for central differences and the closed-form gradient, compared as gradcheck compares.
W5: the Hessian of g(x) = sum(sin(x) * cos(x)) + sum(x^2)^2 over a 50-element float64 vector,
as functional.hessian with vectorize=True on both frameworks (torch: vmap; gradtool: one
backward pass over the batch of one-hot rows, autograd.grad's is_grads_batched); numpy's
column is the closed form.
"""
import numpy as np

from workloads import Case, Prepared, to_numpy


def _f(m, x):
    return (x.sin() * x).sum()


def _np_gradcheck(x0, eps=1e-6, atol=1e-5, rtol=1e-3):
    x = x0.copy()
    numerical = np.empty_like(x)
    for i in range(x.size):  # 2N evaluations, as gradcheck's full mode
        orig = x[i]
        x[i] = orig + eps
        hi = np.sum(np.sin(x) * x)
        x[i] = orig - eps
        lo = np.sum(np.sin(x) * x)
        x[i] = orig
        numerical[i] = (hi - lo) / (2 * eps)
    analytical = np.cos(x) * x + np.sin(x)
    assert np.allclose(analytical, numerical, rtol=rtol, atol=atol)
    return analytical


def _w4_case(n, fast):
    x0 = np.random.default_rng(4).standard_normal(n)

    def setup(backend):
        if backend.module is None:
            if fast:
                return None  # fast mode has no hand-written counterpart
            out = {}

            def run(lap):
                out["g"] = _np_gradcheck(x0)
            return Prepared(run, lambda: [out["g"]])
        m = backend.module
        x = m.tensor(x0.copy(), dtype=m.float64, requires_grad=True)

        def run(lap):
            assert m.autograd.gradcheck(lambda t: _f(m, t), (x,), fast_mode=fast)
        return Prepared(run)

    mode = "fast" if fast else "full"
    return Case(name=f"W4/{mode}{n}", group="W4", label=f"W4 gradcheck {mode}, N={n:,}",
                setup=setup, unit="ms" if n >= 100 and not fast else "us",
                budget=3.0 if n >= 1000 and not fast else 1.0, min_repeats=3, max_repeats=11)


def _g(m, x):
    return (x.sin() * x.cos()).sum() + (x * x).sum() ** 2


def _np_hessian(x):
    # g = sum(sin x cos x) + s^2 with s = sum(x^2): H = diag(-2 sin 2x) + 4 s I + 8 x x^T
    s = np.sum(x * x)
    return np.diag(-2 * np.sin(2 * x)) + 4 * s * np.eye(x.size) + 8 * np.outer(x, x)


def _w5_case():
    x0 = np.random.default_rng(5).standard_normal(50)

    def setup(backend):
        if backend.module is None:
            out = {}

            def run(lap):
                out["h"] = _np_hessian(x0)
            return Prepared(run, lambda: [out["h"]])
        m = backend.module
        x = m.tensor(x0.copy(), dtype=m.float64)
        out = {}

        def run(lap):
            out["h"] = m.autograd.functional.hessian(lambda t: _g(m, t), x, vectorize=True)
        return Prepared(run, lambda: [to_numpy(out["h"])])

    return Case(name="W5/hessian50", group="W5", label="W5 hessian, 50 elements",
                setup=setup, unit="ms", budget=1.5, min_repeats=5, max_repeats=15,
                rtol=1e-8, atol=1e-8)


def check_cases():
    return [_w4_case(10, False), _w4_case(100, False), _w4_case(1000, False),
            _w4_case(1000, True), _w5_case()]
