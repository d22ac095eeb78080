"""The reference check's cost: `reference_report` on a fused LayerNorm of a 64x1024
input against the same work written by hand: the float64 reference's forward and backward,
then per dtype the target's and the reference's (inputs cast, one seeded grad_output, every
output and gradient read back as float64 and compared). Prints the medians and their ratio
(target: within 1.3x), on gradtool's engine (float32, float16) and on torch when importable
(float32, bfloat16, float16).

    .venv/bin/python benchmarks/reference_bench.py [--repeat 7]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))


def layer_norms(torch):
    """The example's fused LayerNorm and reference, built on `torch` (gradtool or torch)."""
    import importlib.util
    import gradtool.adapters.torch_alias as alias
    spec = importlib.util.spec_from_file_location(
        f"layernorm_{torch.__name__}", os.path.join(HERE, "..", "examples",
                                                    "layernorm_reference.py"))
    module = importlib.util.module_from_spec(spec)
    if torch.__name__ == "gradtool":
        with alias.torch_is_gradtool():
            spec.loader.exec_module(module)
    else:
        spec.loader.exec_module(module)
    return module.FusedLayerNorm.apply, module.layer_norm_reference


def by_hand(torch, fn, ref, inputs, dtypes):
    """What a kernel author writes: the same runs and comparisons, no report."""
    def run(f, dtype, grad=None):
        xs = [x.detach().to(dtype).requires_grad_() for x in inputs]
        out = f(*xs)
        if grad is None:
            grad = torch.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)))
        grads = torch.autograd.grad(out, xs, grad.to(out.dtype))
        host = lambda t: t.detach().float().numpy().astype(np.float64) if dtype == \
            getattr(torch, "bfloat16", None) else t.detach().numpy().astype(np.float64)  # noqa
        return [host(out)] + [host(g) for g in grads], grad
    exact, grad = run(ref, torch.float64)
    worst = []
    for d in dtypes:
        target, _ = run(fn, getattr(torch, d), grad)
        reference, _ = run(ref, getattr(torch, d), grad)
        for e, t, r in zip(exact, target, reference):
            worst.append(np.abs(t - e).max() <= 2 * np.abs(r - e).max() + 1e-6)
    return all(worst)


def median_time(call, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(torch, dtypes, repeat):
    from gradtool.checks.reference import reference_report
    fn, ref = layer_norms(torch)
    rng = np.random.default_rng(0)
    make = lambda a: torch.tensor(a, dtype=torch.float64, requires_grad=True)  # noqa: E731
    inputs = (make(rng.standard_normal((64, 1024))), make(1 + 0.1 * rng.standard_normal(1024)),
              make(0.1 * rng.standard_normal(1024)))
    report = reference_report(fn, ref, inputs, dtypes=dtypes)  # warm-up, and its verdict
    checked = median_time(lambda: reference_report(fn, ref, inputs, dtypes=dtypes), repeat)
    hand = median_time(lambda: by_hand(torch, fn, ref, inputs, dtypes), repeat)
    print(f"{torch.__name__:8s} {','.join(dtypes):26s} reference_report {checked * 1e3:8.1f} ms"
          f"   by hand {hand * 1e3:8.1f} ms   ratio {checked / hand:.2f}   "
          f"({'PASS' if report.passed else 'FAIL'}, {report.evaluations['total']} runs)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print("reference check, fused LayerNorm 64x1024 (medians):")
    import gradtool
    measure(gradtool, ["float32", "float16"], args.repeat)
    try:
        import torch
    except ImportError:
        print("torch     skipped (not importable)")
        return
    torch.set_num_threads(1)
    measure(torch, ["float32", "bfloat16", "float16"], args.repeat)


if __name__ == "__main__":
    main()
