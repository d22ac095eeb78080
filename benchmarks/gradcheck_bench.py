"""What a full-mode gradcheck costs, next to the least it could cost.

    .venv/bin/python benchmarks/gradcheck_bench.py [--n 1000] [--repeats 5]

A full-mode check of f at N input elements evaluates f 2N times (central differences) plus
once with a graph, and runs 2N backward passes (the analytical Jacobian, twice, as torch
does, to catch nondeterminism). The floor for the numerical half is plain numpy evaluating
the same f 2N times, perturbing one element each time. Printed: the median of --repeats runs
of each, and torch.autograd.gradcheck (full and fast mode) on the same function when torch
is importable.
"""
import argparse
import os
import statistics
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # single-threaded for every backend alike, before numpy loads

import numpy as np  # noqa: E402

import gradtool as gt  # noqa: E402
from gradtool.checks import analytical as A  # noqa: E402
from gradtool.checks import gradcheck_report  # noqa: E402
from gradtool.checks import numerical as N  # noqa: E402

EPS = 1e-6


def f_gradtool(x):
    return (x.sin() * x).exp()


def f_numpy(a):
    return np.exp(np.sin(a) * a)


def numpy_central_differences(a):
    """The floor: 2N evaluations of f in numpy, one element perturbed at a time, each
    result copied (as any finite-difference Jacobian must), differences into a column."""
    jac = np.empty((a.size, a.size))
    for k in range(a.size):
        orig = a[k]
        a[k] = orig - EPS
        lo = f_numpy(a).copy()
        a[k] = orig + EPS
        hi = f_numpy(a).copy()
        a[k] = orig
        jac[k] = (hi - lo) / (2 * EPS)
    return jac


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="input elements (default 1000)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.n
    data = np.random.default_rng(0).standard_normal(n)
    x = gt.tensor(data, dtype=gt.float64, requires_grad=True)

    report = gradcheck_report(f_gradtool, (x,))
    assert report.passed, report.message()
    numerical_calls = report.evaluations["numerical"]

    def numerical_half():  # gradcheck's central differences alone
        ev = N.Evaluator(f_gradtool, (x,))
        N.jacobian_wrt(ev, (x,), 0, EPS, ev.values())

    def analytical_half():  # gradcheck's 2N backward passes alone
        out = f_gradtool(x)
        A.jacobian_rows(out, [x])
        A.jacobian_rows(out, [x])

    full = median_time(lambda: gradcheck_report(f_gradtool, (x,)), args.repeats)
    numerical = median_time(numerical_half, args.repeats)
    analytical = median_time(analytical_half, args.repeats)
    fast = median_time(lambda: gradcheck_report(f_gradtool, (x,), fast_mode=True),
                       args.repeats)
    floor = median_time(lambda: numpy_central_differences(data.copy()), args.repeats)

    print(f"gradcheck of f(x) = exp(sin(x) * x), x: {n} float64 elements "
          f"(median of {args.repeats})")
    print(f"  evaluations of f (full mode):  {report.evaluations['total']} "
          f"= 1 with a graph + {numerical_calls} central differences")
    rows = [
        ("gradtool gradcheck, full mode", full),
        (f"  numerical half: {numerical_calls} evaluations", numerical),
        (f"  analytical half: {2 * n} backward passes", analytical),
        (f"plain numpy, the same {numerical_calls} evaluations", floor),
        ("gradtool gradcheck, fast mode", fast),
    ]
    try:
        import torch
        torch.set_num_threads(1)
        tx = torch.tensor(data, dtype=torch.float64, requires_grad=True)

        def f_torch(t):
            return (t.sin() * t).exp()
        rows.append(("torch.autograd.gradcheck, full mode",
                     median_time(lambda: torch.autograd.gradcheck(f_torch, (tx,)),
                                 args.repeats)))
        rows.append(("torch.autograd.gradcheck, fast mode",
                     median_time(lambda: torch.autograd.gradcheck(f_torch, (tx,),
                                                                  fast_mode=True),
                                 args.repeats)))
    except ImportError:
        pass
    for label, seconds in rows:
        ratio = f"{seconds / floor:6.1f}x numpy" if "plain numpy" not in label else ""
        print(f"  {label:<45} {seconds * 1e3:9.1f} ms   {ratio}")


if __name__ == "__main__":
    main()
