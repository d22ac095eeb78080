"""gradtool's benchmarks: gradtool vs hand-written numpy (the limit) vs torch (if importable).

    make bench                          # everything, about 1-2 minutes
    make bench ARGS="--quick"           # fewer repeats, 20,000-op deep chain
    .venv/bin/python benchmarks/run.py -k W1 -k P1/matmul   # select cases by name
    .venv/bin/python benchmarks/run.py --list

See benchmarks/README.md for what each workload measures.
"""
import os

# Single-threaded BLAS and OpenMP for every backend alike: set before numpy/torch load.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"



def _steady_malloc():
    """Fixed glibc malloc thresholds: large blocks are reused from the heap instead of being
    mmap'ed and page-faulted afresh. With glibc's default (dynamic) thresholds, whether a
    1,000,000-element call pays ~1,000 page faults depends on what ran just before it, which
    made the interleaved large-tensor timings swing by up to 10x for every backend (all of
    them allocate through malloc). Returns a description for the header."""
    if os.environ.get("GRADTOOL_BENCH_SYSTEM_MALLOC"):
        return "glibc defaults"
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        ok = (libc.mallopt(M_MMAP_THRESHOLD, 256 << 20) == 1
              and libc.mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1)
        return "malloc: fixed thresholds" if ok else "glibc defaults (mallopt failed)"
    except (OSError, AttributeError):
        return "system malloc"


MALLOC_NOTE = _steady_malloc()

import argparse  # noqa: E402
import fnmatch  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import harness  # noqa: E402
import workloads  # noqa: E402
from workloads import Backend  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("patterns", nargs="*", metavar="PATTERN",
                   help="run only cases whose name contains PATTERN (or matches it as a glob), "
                        "e.g. W1, P1/matmul, 'P1/*/small', W6")
    p.add_argument("-k", dest="more", action="append", default=[], metavar="PATTERN",
                   help="same as a positional PATTERN (repeatable)")
    p.add_argument("--quick", action="store_true",
                   help="fewer repeats and a 20,000-op deep chain (W3): a smoke run")
    p.add_argument("--deep", type=int, default=None,
                   help="depth of W3's deep chain (default 100,000; 20,000 with --quick)")
    p.add_argument("--no-torch", action="store_true", help="do not compare with torch")
    p.add_argument("--nn", action="store_true",
                   help="W2/W6 with the frameworks' nn.Linear and optim.SGD instead of plain "
                        "tensors (gradtool needs nn/optim for this)")
    p.add_argument("--json", metavar="PATH", help="also write every sample to PATH as JSON")
    p.add_argument("--list", action="store_true", help="list the case names and exit")
    return p.parse_args(argv)


def selected(name, patterns):
    if not patterns:
        return True
    low = name.lower()
    return any(p.lower() in low or fnmatch.fnmatch(low, p.lower()) for p in patterns)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    patterns = args.patterns + args.more
    deep = args.deep or (20_000 if args.quick else 100_000)
    cases = workloads.all_cases(quick=args.quick, use_nn=args.nn, deep=deep)
    names = [c.name for c in cases] + ["W6/mlp_memory"]
    if args.list:
        print("\n".join(names))
        return 0
    cases = [c for c in cases if selected(c.name, patterns)]
    run_memory = selected("W6/mlp_memory", patterns)
    if not cases and not run_memory:
        print(f"no case matches {patterns}; see --list", file=sys.stderr)
        return 2

    import gradtool as gt
    backends = [Backend("gradtool", gt), Backend("numpy", None)]
    torch = None
    torch_note = "skipped (--no-torch)"
    if not args.no_torch:
        try:
            import torch
            torch.set_num_threads(1)
            try:
                torch.set_num_interop_threads(1)
            except RuntimeError:
                pass
            backends.append(Backend("torch", torch))
            torch_note = f"{torch.__version__} ({torch.get_num_threads()} thread)"
        except ImportError:
            torch_note = "skipped (not importable)"
    # Everything imported so far stays put: collections during timing scan only new objects.
    gc.collect()
    gc.freeze()

    sample_s, warmup_s = (0.005, 0.02) if args.quick else (0.01, 0.05)
    print(f"gradtool benchmarks{' (--quick)' if args.quick else ''}: "
          f"gradtool {gt.__version__}, numpy {np.__version__}, torch {torch_note}, "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"BLAS threads 1, {MALLOC_NOTE}", flush=True)
    print("median of interleaved repeats; P1 is y = op(x) then backward, per call; W1/W3 per "
          "op; ratios: gradtool's time over the others'\n", flush=True)

    started = time.perf_counter()
    results = []
    for i, case in enumerate(cases, 1):
        t0 = time.perf_counter()
        print(f"[{i:2d}/{len(cases)}] {case.name} ...", end="", file=sys.stderr, flush=True)
        results.append(harness.measure(case, backends, sample_s=sample_s, warmup_s=warmup_s))
        print(f" {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    mem, mem_errors = {}, {}
    if run_memory:
        t0 = time.perf_counter()
        print("[W6] mlp memory ...", end="", file=sys.stderr, flush=True)
        mem, mem_errors = harness.measure_memory(backends, use_nn=args.nn)
        print(f" {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)

    table = harness.Table(torch_present=any(b.name == "torch" for b in backends))
    by_name = {r.case.name: r for r in results}
    group = None
    for r in results:
        if group is not None and r.case.group != group:
            table.separator()
        group = r.case.group
        harness.add_case_rows(table, r)
        if r.case.name.startswith("W3/depth") and r.case.name != "W3/depth1000":
            harness.add_ratio_row(table, f"W3 per-op {r.case.per:,} / 1,000",
                                  by_name.get("W3/depth1000"), r)
    if run_memory:
        if results:
            table.separator()
        harness.add_memory_rows(table, mem, mem_errors)
    print(table.render())
    harness.print_errors(results, mem_errors)
    elapsed = time.perf_counter() - started
    print(f"\n{len(results)} timed cases{' + W6' if run_memory else ''} in {elapsed:.0f}s")

    if args.json:
        doc = {"schema": 1, "quick": args.quick, "numpy": np.__version__,
               "torch": getattr(torch, "__version__", None), "gradtool": gt.__version__,
               "cases": {r.case.name: {"unit_seconds_per": r.case.per, "phases": r.case.phases,
                                       "samples": r.totals, "phase_samples": r.phases,
                                       "calls_per_sample": r.numbers,
                                       "errors": {k: v[0] for k, v in r.errors.items()},
                                       "mismatch": r.mismatch} for r in results},
               "memory_bytes": mem}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    failed = any(r.errors for r in results) or mem_errors
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
