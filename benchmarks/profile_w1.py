"""Where W1's time per op goes in gradtool: cProfile of the 1,000-op chain, per op.

    .venv/bin/python benchmarks/profile_w1.py                 # cProfile, top functions
    .venv/bin/python benchmarks/profile_w1.py --sort cumulative --top 40
    .venv/bin/python benchmarks/profile_w1.py --breakdown     # timed experiments, no profiler
    .venv/bin/python benchmarks/profile_w1.py --gc 100000     # GC: objects per op, collections
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


def gc_report(depth):
    """What the cyclic GC costs a chain of `depth` ops: the GC-tracked objects each recorded op
    leaves alive (by type), and the collections per generation during forward and backward."""
    import collections
    x, g = make()
    step(x, g)
    gc.collect()
    gc.freeze()  # as the benchmark: the import-time heap is not scanned
    before = {id(o) for o in gc.get_objects()}
    y = chain(gt, x, depth)
    fresh = [o for o in gc.get_objects() if id(o) not in before]
    kinds = collections.Counter(type(o).__name__ for o in fresh)
    print(f"GC-tracked objects alive per op after the forward: {len(fresh) / depth:.2f}")
    for name, n in kinds.most_common(8):
        print(f"  {n / depth:5.2f}  {name}")
    del fresh, y
    stats = {}
    started = [0.0]

    def callback(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            s = stats.setdefault((where[0], info["generation"]), [0, 0.0])
            s[0] += 1
            s[1] += time.perf_counter() - started[0]
    where = ["fwd"]
    x.grad = None
    gc.collect()
    gc.callbacks.append(callback)
    try:
        t0 = time.perf_counter()
        y = chain(gt, x, depth)
        t1 = time.perf_counter()
        where[0] = "bwd"
        y.backward(g)
        del y
        t2 = time.perf_counter()
    finally:
        gc.callbacks.remove(callback)
        gc.unfreeze()
    print(f"fwd {(t1 - t0) / depth * 1e6:.2f} µs/op, bwd (with freeing) "
          f"{(t2 - t1) / depth * 1e6:.2f} µs/op; collections:")
    for (phase, gen), (n, sec) in sorted(stats.items()):
        print(f"  {phase} gen{gen}: {n:4d} collections, {sec / depth * 1e6:.2f} µs/op")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sort", default="tottime")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--loop", type=int, default=0,
                   help="just run the chain for N seconds (for py-spy), no cProfile")
    p.add_argument("--breakdown", action="store_true")
    p.add_argument("--gc", type=int, metavar="DEPTH", default=0,
                   help="GC-tracked objects per op and collections per generation at DEPTH")
    args = p.parse_args()
    if args.breakdown:
        breakdown()
        return
    if args.gc:
        gc_report(args.gc)
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
