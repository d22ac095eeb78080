"""W9: per-sample gradients of a small MLP (32 -> 64 tanh -> 10, cross-entropy), batch 64
(float32), torch.func's way: vmap(grad(loss), in_dims=(None, 0, 0)) with functional_call,
the same code on gradtool and torch; numpy's column is the per-example gradients by hand
for the whole batch at once (outer products of each example's deltas)."""
import numpy as np

from workloads import Case, Prepared, to_numpy

BATCH, IN, HIDDEN, OUT = 64, 32, 64, 10
NAMES = ("0.weight", "0.bias", "2.weight", "2.bias")


def _arrays(seed=9):
    rng = np.random.default_rng(seed)
    params = {"0.weight": rng.uniform(-0.2, 0.2, (HIDDEN, IN)),
              "0.bias": rng.uniform(-0.2, 0.2, HIDDEN),
              "2.weight": rng.uniform(-0.2, 0.2, (OUT, HIDDEN)),
              "2.bias": rng.uniform(-0.2, 0.2, OUT)}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    return params, x, rng.integers(0, OUT, BATCH)


def numpy_per_sample(p, x, labels):
    h = np.tanh(x @ p["0.weight"].T + p["0.bias"])
    logits = h @ p["2.weight"].T + p["2.bias"]
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    d2 = probs
    d2[np.arange(len(x)), labels] -= 1  # each example's own loss (a batch of one)
    d1 = (d2 @ p["2.weight"]) * (1 - h * h)
    return [d1[:, :, None] * x[:, None, :], d1, d2[:, :, None] * h[:, None, :], d2]


def _setup(backend):
    params0, x0, labels0 = _arrays()
    if backend.module is None:
        out = []

        def run(lap):
            out[:] = numpy_per_sample(params0, x0, labels0)
        return Prepared(run, lambda: out)
    m = backend.module
    model = m.nn.Sequential(m.nn.Linear(IN, HIDDEN), m.nn.Tanh(), m.nn.Linear(HIDDEN, OUT))
    params = {k: m.tensor(v) for k, v in params0.items()}
    x, labels = m.tensor(x0), m.tensor(labels0)

    def loss(p, xb, yb):
        out = m.func.functional_call(model, p, (xb.unsqueeze(0),))
        return m.nn.functional.cross_entropy(out, yb.unsqueeze(0))
    per_sample = m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))
    out = {}

    def run(lap):
        out.update(per_sample(params, x, labels))
    return Prepared(run, lambda: [to_numpy(out[name]) for name in NAMES])


def func_cases():
    return [Case(name="W9/per_sample_grads", group="W9",
                 label=f"W9 per-sample grads, vmap(grad), MLP {IN}-{HIDDEN}-{OUT}, batch {BATCH}",
                 setup=_setup, unit="ms", budget=2.0, min_repeats=5, max_repeats=25,
                 rtol=2e-3, atol=2e-5)]
