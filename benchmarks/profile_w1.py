"""Where W1's time per op goes in gradtool: cProfile of the 1,000-op chain, per op.

    .venv/bin/python benchmarks/profile_w1.py                 # cProfile, top functions
    .venv/bin/python benchmarks/profile_w1.py --sort cumulative --top 40
    .venv/bin/python benchmarks/profile_w1.py --breakdown     # timed experiments, no profiler
    .venv/bin/py-spy record -r 2000 -f speedscope -o w1.json -- \\
        .venv/bin/python benchmarks/profile_w1.py --loop 10   # sampling, no cProfile overhead

cProfile's own cost per Python call inflates the absolute numbers (several-fold for code
made of many tiny calls): read its output for the split between functions, and the
benchmark (or --breakdown) for absolute times.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import cProfile  # noqa: E402
import gc  # noqa: E402
import pstats  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import gradtool as gt  # noqa: E402
from workloads import chain  # noqa: E402

DEPTH = 1000


def make():
    x = gt.tensor(np.random.default_rng(2).standard_normal(16, dtype=np.float32),
                  requires_grad=True)
    return x, gt.ones(16)


def step(x, g, depth=DEPTH):
    x.grad = None
    y = chain(gt, x, depth)
    y.backward(g)


def best_of(fn, n=30):
    best = float("inf")
    for _ in range(n):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def breakdown():
    """Timed experiments, per op: forward with and without recording, backward, GC."""
    x, g = make()
    us = 1e6 / DEPTH
    step(x, g)
    full = best_of(lambda: step(x, g)) * us

    def fwd():
        chain(gt, x, DEPTH)
    forward = best_of(fwd) * us
    with gt.no_grad():
        forward_nograd = best_of(fwd) * us
    xd = x.detach()
    forward_noreq = best_of(lambda: chain(gt, xd, DEPTH)) * us

    def bwd_only():
        y = chain(gt, x, DEPTH)
        t0 = time.perf_counter()
        y.backward(g)
        return time.perf_counter() - t0
    backward = min(bwd_only() for _ in range(30)) * us
    gc.disable()
    try:
        nogc = best_of(lambda: step(x, g)) * us
    finally:
        gc.enable()
    a = np.random.default_rng(0).standard_normal(16).astype(np.float32)

    def raw():
        v = a
        for _ in range(DEPTH // 3):
            v = np.tanh(v * 0.9 + 0.1)
    numpy_fwd = best_of(raw) * us
    print(f"per op, best of 30 (µs):\n"
          f"  fwd+bwd                          {full:6.2f}\n"
          f"  fwd+bwd, gc disabled             {nogc:6.2f}\n"
          f"  forward, recording               {forward:6.2f}\n"
          f"  forward, no_grad                 {forward_nograd:6.2f}\n"
          f"  forward, input not requiring grad{forward_noreq:6.2f}\n"
          f"  backward (engine)                {backward:6.2f}\n"
          f"  numpy forward alone              {numpy_fwd:6.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sort", default="tottime")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--loop", type=int, default=0,
                   help="just run the chain for N seconds (for py-spy), no cProfile")
    p.add_argument("--breakdown", action="store_true")
    args = p.parse_args()
    if args.breakdown:
        breakdown()
        return
    x, g = make()
    step(x, g)
    if args.loop:
        end = time.perf_counter() + args.loop
        n = 0
        while time.perf_counter() < end:
            step(x, g)
            n += 1
        print(f"{n * DEPTH} ops")
        return
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.reps):
        step(x, g)
    prof.disable()
    stats = pstats.Stats(prof)
    total = stats.total_tt
    print(f"cProfile: {args.reps} x {DEPTH}-op chain; {total / (args.reps * DEPTH) * 1e6:.2f} "
          f"µs/op under the profiler")
    stats.sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
