"""W1's instructions per recorded op, forward and backward, under callgrind: a count that does
not depend on the machine's load (timings on a shared machine swing by more than the few
percent a change to the per-op path makes).

    .venv/bin/python benchmarks/callgrind_w1.py            # ~1 minute on 2 cores
    .venv/bin/python benchmarks/callgrind_w1.py --freeze   # the heap frozen after the first step
    .venv/bin/python benchmarks/callgrind_w1.py --forward  # the forward alone (the chain, no backward)

Runs W1's step (`profile_w1.step`: the 1,000-op chain, then backward) 2 and 12 times in two
processes under `valgrind --tool=callgrind` and divides the difference of their instruction
counts by the 10,000 ops between them: the imports and the first step cancel out.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def child(steps, freeze, forward):
    import gc
    sys.path.insert(0, HERE)
    from profile_w1 import DEPTH, make, step
    x, g = make()
    if forward:
        import gradtool
        from workloads import chain

        def step(x, g):  # (the chain's graph is dropped, never run backward)
            chain(gradtool, x, DEPTH)
    step(x, g)
    if freeze:
        gc.collect()
        gc.freeze()
    for _ in range(steps - 1):
        step(x, g)


def instructions(steps, freeze, forward):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               sys.executable, os.path.abspath(__file__), "--child", str(steps)]
        flags = ["--freeze"] * freeze + ["--forward"] * forward
        subprocess.run(cmd + flags, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            return int(re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", type=int, metavar="STEPS", help=argparse.SUPPRESS)
    p.add_argument("--freeze", action="store_true",
                   help="gc.freeze() after the first step, as benchmarks/run.py does")
    p.add_argument("--forward", action="store_true", help="count the forward alone")
    args = p.parse_args()
    if args.child:
        child(args.child, args.freeze, args.forward)
        return
    few, many = (instructions(n, args.freeze, args.forward) for n in (2, 12))
    print(f"W1: {(many - few) / 10_000 / 1000:.1f} k instructions per recorded op, "
          f"{'forward alone' if args.forward else 'forward and backward'}"
          f"{' (heap frozen)' if args.freeze else ''}")


if __name__ == "__main__":
    main()
