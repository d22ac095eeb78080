"""Timing, checking and reporting: backends side by side, interleaved, in one process.

For each case: set up every backend; call each once and compare its gradients with the
numpy reference's; warm up; pick per backend how many calls make one sample (~sample_s
seconds); then take `repeats` rounds, each round timing one sample of every backend, the
backends' order rotating from round to round, so drift (thermal, other load, allocator
state) hits all of them alike. Reported: the median sample. Python's cyclic GC stays on
(it is part of what users pay), collected before each sample, with the import-time heap
frozen (gc.freeze) so that collections do not scan torch's and numpy's module objects.
"""
import gc
import statistics
import sys
import time
import traceback

import numpy as np

from workloads import PARAM_BYTES, mlp_memory

perf = time.perf_counter


class CaseResult:
    def __init__(self, case):
        self.case = case
        self.totals = {}    # backend -> [seconds per call, one per sample]
        self.phases = {}    # backend -> [[seconds per phase per call], ...]
        self.numbers = {}   # backend -> calls per sample
        self.errors = {}    # backend -> (one-line summary, full traceback)
        self.mismatch = {}  # backend -> description

    def median(self, backend):
        s = self.totals.get(backend)
        return statistics.median(s) if s else None

    def phase_median(self, backend, i):
        s = self.phases.get(backend)
        return statistics.median(p[i] for p in s) if s else None


def _summary(exc):
    tb = traceback.extract_tb(exc.__traceback__)
    where = ""
    for frame in reversed(tb):
        if "gradtool" in frame.filename.replace("\\", "/").split("/benchmarks/")[-1]:
            where = f" [{frame.filename.split('/')[-1]}:{frame.lineno}]"
            break
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}{where}"


def _time_calls(run, number, n_phases):
    """Seconds per call for `number` calls, and per phase (None if no phases)."""
    if not n_phases:
        lap = _noop
        t0 = perf()
        for _ in range(number):
            run(lap)
        return (perf() - t0) / number, None
    marks = []
    append = marks.append
    lap = lambda: append(perf())  # noqa: E731
    for _ in range(number):
        append(perf())
        run(lap)
        append(perf())
    k = n_phases + 1
    sums = [0.0] * n_phases
    total = 0.0
    for c in range(number):
        m = marks[c * k:(c + 1) * k]
        if len(m) != k:
            raise RuntimeError("a workload called lap() the wrong number of times")
        total += m[-1] - m[0]
        for i in range(n_phases):
            sums[i] += m[i + 1] - m[i]
    return total / number, [s / number for s in sums]


def _noop():
    pass


def _compare(ref, got, rtol, atol):
    if len(ref) != len(got):
        return f"{len(got)} results vs {len(ref)} in the numpy reference"
    for i, (r, g) in enumerate(zip(ref, got)):
        if g is None:
            return f"result {i} is None"
        r, g = np.asarray(r), np.asarray(g)
        if r.shape != g.shape:
            return f"result {i}: shape {g.shape} vs {r.shape}"
        if g.dtype != r.dtype:
            return f"result {i}: dtype {g.dtype} vs {r.dtype}"
        scale = max(1.0, float(np.max(np.abs(r))) if r.size else 1.0)
        if not np.allclose(g, r, rtol=rtol, atol=atol * scale):
            err = float(np.max(np.abs(g.astype(np.float64) - r)))
            return f"result {i}: max abs diff {err:.3g}"
    return None


def measure(case, backends, sample_s=0.01, warmup_s=0.05, log=None):
    res = CaseResult(case)
    prepared = {}
    first = {}
    results = {}
    for b in backends:
        try:
            p = case.setup(b)
            if p is None:  # no counterpart on this backend
                continue
            gc.collect()
            t0 = perf()
            p.run(_noop)
            first[b.name] = perf() - t0
            if p.result is not None:
                results[b.name] = p.result()
            prepared[b.name] = p
        except Exception as e:  # report, and go on with the other backends
            res.errors[b.name] = (_summary(e), traceback.format_exc())
    ref = results.get("numpy")
    if ref is not None:
        for name, got in results.items():
            if name != "numpy":
                try:
                    problem = _compare(ref, [None if g is None else np.asarray(g) for g in got],
                                       case.rtol, case.atol)
                except Exception as e:  # noqa: BLE001
                    problem = _summary(e)
                if problem:
                    res.mismatch[name] = problem
    # warm up, and estimate the time of one call
    estimate = {}
    for name, p in prepared.items():
        times = []
        spent = first[name]
        try:
            while ((spent < warmup_s or len(times) < 3) and len(times) < 200
                   and first[name] < 0.5):
                t0 = perf()
                p.run(_noop)
                dt = perf() - t0
                times.append(dt)
                spent += dt
        except Exception as e:
            res.errors[name] = (_summary(e), traceback.format_exc())
            continue
        estimate[name] = min(times) if times else first[name]
    prepared = {n: p for n, p in prepared.items() if n in estimate}
    for name, t in estimate.items():
        # a few calls per sample at least: large-tensor calls reach the allocator's steady
        # state only after a call or two (glibc's mmap threshold and heap trimming)
        res.numbers[name] = max(3 if t < 0.05 else 1, int(sample_s / max(t, 1e-9)))
    round_cost = sum((res.numbers[n] + case.precall) * estimate[n] for n in prepared) or 1e-3
    repeats = int(min(case.max_repeats, max(case.min_repeats, case.budget / round_cost)))
    n_phases = len(case.phases)
    order = list(prepared)
    for r in range(repeats):
        k = r % len(order) if order else 0
        for name in order[k:] + order[:k]:
            p = prepared[name]
            try:
                if case.precall:  # what ran before (other backends) may have left caches
                    p.run(_noop)  # and the allocator cold: measure this backend warm
                gc.collect()
                total, phases = _time_calls(p.run, res.numbers[name], n_phases)
            except Exception as e:
                res.errors[name] = (_summary(e), traceback.format_exc())
                order.remove(name)
                break
            res.totals.setdefault(name, []).append(total)
            if phases is not None:
                res.phases.setdefault(name, []).append(phases)
    prepared.clear()
    gc.collect()
    return res


def measure_memory(backends, use_nn=False):
    out = {}
    errors = {}
    for b in backends:
        gc.collect()
        try:
            out[b.name] = mlp_memory(b, use_nn)
        except Exception as e:
            errors[b.name] = (_summary(e), traceback.format_exc())
    return out, errors


# ======================================= the table =======================================

UNIT_SCALE = {"us": 1e6, "ms": 1e3}
UNIT_NAME = {"us": "µs", "ms": "ms"}


def fmt(v):
    if v is None:
        return "—"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:.1f}x" if r < 100 else f"{r:.0f}x"


class Table:
    COLS = ("workload", "unit", "gradtool", "numpy", "torch", "gt/numpy", "gt/torch")

    def __init__(self, torch_present):
        self.rows = []
        self.torch_present = torch_present

    def add(self, label, unit, values, ratios=True, note=""):
        gt, npv, th = (values.get(k) for k in ("gradtool", "numpy", "torch"))
        if not ratios:
            r1 = r2 = ""
        else:
            r1, r2 = fmt_ratio(gt, npv), fmt_ratio(gt, th)
        cells = [label, unit] + [values.get(f"_{k}_text") or fmt(values.get(k))
                                 for k in ("gradtool", "numpy", "torch")] + [r1, r2]
        if not self.torch_present:
            cells[4] = "skipped"
            cells[6] = ""
        self.rows.append((cells, note))

    def separator(self):
        self.rows.append((None, ""))

    def render(self):
        widths = [len(c) for c in self.COLS]
        for cells, _ in self.rows:
            if cells:
                widths = [max(w, len(c)) for w, c in zip(widths, cells)]

        def line(cells):
            out = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
            out += [c.rjust(w) for c, w in zip(cells[2:], widths[2:])]
            return "  ".join(out).rstrip()
        rule = "-" * len(line(list(self.COLS)))
        text = [line(list(self.COLS)), rule]
        for cells, note in self.rows:
            if cells is None:
                text.append(rule)
            else:
                text.append(line(cells) + (f"   {note}" if note else ""))
        return "\n".join(text)


def add_case_rows(table, res):
    case = res.case
    scale = UNIT_SCALE[case.unit] / case.per
    unit = UNIT_NAME[case.unit] + ("/op" if case.per > 1 else "")
    values = {}
    for name in ("gradtool", "numpy", "torch"):
        m = res.median(name)
        values[name] = None if m is None else m * scale
        if name in res.errors:
            values[f"_{name}_text"] = "ERROR"
    notes = [f"{n} differs from numpy: {d}" for n, d in res.mismatch.items()]
    notes += [f"{n}: {e[0]}" for n, e in res.errors.items()]
    label = case.label + (" (total)" if case.phases else "")
    table.add(label, unit, values, note="; ".join(notes))
    for i, phase in enumerate(case.phases):
        pv = {}
        for name in ("gradtool", "numpy", "torch"):
            m = res.phase_median(name, i)
            pv[name] = None if m is None else m * scale
        table.add(f"{' ' * 3}· {phase}", unit, pv)


def add_ratio_row(table, label, shallow, deep):
    values = {}
    for name in ("gradtool", "numpy", "torch"):
        a = shallow.median(name) if shallow else None
        b = deep.median(name) if deep else None
        if a and b:
            r = (b / deep.case.per) / (a / shallow.case.per)
            values[name] = r
            values[f"_{name}_text"] = f"{r:.2f}x"
    table.add(label, "ratio", values, ratios=False, note="per-op time deep/shallow: 1.00x is flat")


def add_memory_rows(table, mem, errors):
    MB = 1e6

    def row(label, key, ratios=True, note=""):
        values = {}
        for name in ("gradtool", "numpy", "torch"):
            r = mem.get(name)
            if name in errors:
                values[f"_{name}_text"] = "ERROR"
            elif r is None:
                values[f"_{name}_text"] = "n/a"
            else:
                values[name] = r[key] / MB
        table.add(label, "MB", values, ratios=ratios, note=note)

    notes = "; ".join(f"{n}: {e[0]}" for n, e in errors.items())
    row("W6 MLP step peak, above params+data", "peak",
        note=notes or "torch: its allocator is invisible to tracemalloc")
    row("W6 held after step (grads)", "with_grads",
        note=f"the .grads: {PARAM_BYTES / MB:.1f} MB expected")
    row("W6 held after loss+grads released", "held", ratios=False, note="0 expected")
    row("W6 held after gc.collect()", "held_gc", ratios=False)


def print_errors(results, mem_errors, file=sys.stdout):
    items = [(r.case.name, n, e) for r in results for n, e in r.errors.items()]
    items += [("W6/mlp_memory", n, e) for n, e in mem_errors.items()]
    mism = [(r.case.name, n, d) for r in results for n, d in r.mismatch.items()]
    if not items and not mism:
        return
    print("\nProblems:", file=file)
    for case, name, d in mism:
        print(f"  {case} [{name}]: gradients differ from the numpy reference: {d}", file=file)
    for case, name, (summary, tb) in items:
        print(f"  {case} [{name}]: {summary}", file=file)
        for ln in tb.rstrip().splitlines()[-6:]:
            print(f"      {ln}", file=file)
