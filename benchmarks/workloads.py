"""The workloads, each written once against the torch-like API (a function taking the module:
`gradtool` or `torch`), plus the same math with hand-written gradients in numpy (the limit).

Every workload gives a list of `Case`s. A case's `setup(backend)` returns a `Prepared`:
`run(lap)` is the timed body (it may call `lap()` to mark phase boundaries, e.g. forward |
backward) and `result()` returns numpy arrays (gradients) compared across backends once, after
the first call, so every backend is known to compute the same thing.

Inputs come from one seeded numpy generator, so all backends start from identical arrays.
"""
import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

F32 = np.float32


@dataclass
class Prepared:
    run: Callable            # run(lap) -> None: the timed body
    result: Callable = None  # () -> list of numpy arrays, for the cross-backend check


@dataclass
class Case:
    name: str                  # "P1/mul/small": selectable with -k
    group: str                 # P1, W1, ...
    label: str                 # what the table shows
    setup: Callable            # setup(backend) -> Prepared
    unit: str = "us"           # us or ms (per call, divided by `per`)
    per: int = 1               # e.g. ops in a chain, to report time per op
    phases: tuple = ()         # names of the phases split by lap() calls
    budget: float = 1.0        # seconds of timing to aim for, all backends together
    min_repeats: int = 5
    max_repeats: int = 25
    precall: bool = True       # one untimed call right before each sample (steady state)
    rtol: float = 1e-4         # tolerances of the cross-backend check
    atol: float = 1e-5


@dataclass
class Backend:
    name: str                  # "gradtool", "numpy", "torch"
    module: Optional[object]   # the framework module (None for numpy)


def to_numpy(t):
    if t is None:
        return None
    if isinstance(t, np.ndarray):
        return t
    return np.asarray(t.detach().numpy())


def leaf(m, array):
    """A leaf tensor that requires grad, from (a copy of) a numpy array, on either framework."""
    return m.tensor(np.array(array, copy=True), requires_grad=True)


def _rng(seed=0):
    return np.random.default_rng(seed)


# =================================== P1: per-op ===================================
# op name -> (number of tensor inputs, framework function, numpy forward+backward)
# numpy functions take the input arrays and the output gradient (None for scalar outputs)
# and return the input gradients, each its own materialized array, as a .grad must be.

def _np_mul(a, b, g):
    a * b
    return [g * b, g * a]


def _np_add(a, b, g):
    a + b
    return [g.copy(), g.copy()]


def _np_tanh(x, g):
    y = np.tanh(x)
    return [g * (1 - y * y)]


def _np_exp(x, g):
    y = np.exp(x)
    return [g * y]


def _np_sum(x, g):
    x.sum()
    return [np.full_like(x, 1)]


def _np_mean(x, g):
    x.mean()
    return [np.full_like(x, 1 / x.size)]


def _np_matmul(a, b, g):
    a @ b
    return [g @ b.T, a.T @ g]


def _np_softmax(x, g):
    e = np.exp(x - x.max(-1, keepdims=True))
    y = e / e.sum(-1, keepdims=True)
    return [y * (g - (g * y).sum(-1, keepdims=True))]


def _np_relu(x, g):
    y = np.maximum(x, 0)
    return [g * (y > 0)]  # (np.where with a random mask is ~10x slower on 1e6 elements)


def _np_getitem(x, g):
    x[1:]
    gx = np.zeros_like(x)
    gx[1:] = g
    return [gx]


P1_OPS = {
    "mul": (2, lambda m, a, b: a * b, _np_mul),
    "add": (2, lambda m, a, b: a + b, _np_add),
    "tanh": (1, lambda m, x: m.tanh(x), _np_tanh),
    "exp": (1, lambda m, x: m.exp(x), _np_exp),
    "sum": (1, lambda m, x: x.sum(), _np_sum),
    "mean": (1, lambda m, x: x.mean(), _np_mean),
    "matmul": (2, lambda m, a, b: a @ b, _np_matmul),
    "softmax": (1, lambda m, x: m.softmax(x, dim=-1), _np_softmax),
    "relu": (1, lambda m, x: m.relu(x), _np_relu),
    "getitem": (1, lambda m, x: x[1:], _np_getitem),
}

# 16 and 1,000,000 float32 elements; matmul is 16x16 @ 16x16 and 1000x1000 @ 1000x1000.
P1_SHAPES = {"small": (4, 4), "large": (1000, 1000)}
P1_MATMUL_SHAPES = {"small": (16, 16), "large": (1000, 1000)}


def _p1_case(op, size):
    n_in, fn, np_fn = P1_OPS[op]
    shape = (P1_MATMUL_SHAPES if op == "matmul" else P1_SHAPES)[size]
    rng = _rng(1)
    arrays = [rng.standard_normal(shape, dtype=F32) for _ in range(n_in)]
    # The output's shape, for the given gradient (ones) of non-scalar outputs.
    out = P1_OUT_SHAPE[op](shape)
    grad = None if out == () else np.ones(out, dtype=F32)

    def setup(backend):
        if backend.module is None:
            g = grad

            def run(lap):
                np_fn(*arrays, g)
            return Prepared(run, lambda: np_fn(*arrays, g))
        m = backend.module
        xs = [leaf(m, a) for a in arrays]
        g = None if grad is None else m.tensor(grad.copy())

        if g is None:
            def run(lap):
                for x in xs:
                    x.grad = None
                fn(m, *xs).backward()
        else:
            def run(lap):
                for x in xs:
                    x.grad = None
                fn(m, *xs).backward(g)
        return Prepared(run, lambda: [to_numpy(x.grad) for x in xs])

    large = size == "large"
    return Case(
        name=f"P1/{op}/{size}", group="P1",
        label=f"P1 {op:<7} {'x'.join(map(str, shape)):>9} fwd+bwd",
        setup=setup, unit="ms" if large and op == "matmul" else "us",
        budget=(2.5 if op == "matmul" else 1.2) if large else 0.6,
        min_repeats=3 if large else 7, max_repeats=15 if large else 25,
        rtol=1e-3 if op == "matmul" else 1e-4, atol=1e-3 if op == "matmul" else 1e-5)


P1_OUT_SHAPE = {
    "mul": lambda s: s, "add": lambda s: s, "tanh": lambda s: s, "exp": lambda s: s,
    "sum": lambda s: (), "mean": lambda s: (), "matmul": lambda s: s,
    "softmax": lambda s: s, "relu": lambda s: s, "getitem": lambda s: (s[0] - 1,) + s[1:],
}


# ============================ W1 / W3: chains of elementwise ops ============================
# x -> x * 0.9 -> + 0.1 -> tanh -> x * 0.9 -> ...: `depth` ops on a 16-element float32 tensor.

def chain(m, x, depth):
    """The framework chain (m unused: the ops are Tensor methods on both frameworks)."""
    for _ in range(depth // 3):
        x = (x * 0.9 + 0.1).tanh()
    rest = depth % 3
    if rest:
        x = x * 0.9
        if rest == 2:
            x = x + 0.1
    return x


def np_chain(x, g, depth, lap):
    """The same chain with the gradient by hand: saves each tanh output, as autograd does."""
    saved = []
    for _ in range(depth // 3):
        x = np.tanh(x * F32(0.9) + F32(0.1))
        saved.append(x)
    rest = depth % 3
    if rest:
        x = x * F32(0.9)
        if rest == 2:
            x = x + F32(0.1)
    lap()
    if rest:
        g = g * F32(0.9)  # (the add's backward is the identity)
    for y in reversed(saved):
        g = g * (1 - y * y)  # tanh
        g = g * F32(0.9)     # mul (the add passes g through)
    return g


def _chain_case(name, group, label, depth, budget, min_repeats, max_repeats, precall=True):
    x0 = _rng(2).standard_normal(16, dtype=F32)
    ones = np.ones(16, dtype=F32)

    def setup(backend):
        if backend.module is None:
            out = {}

            def run(lap):
                out["g"] = np_chain(x0, ones, depth, lap)
            return Prepared(run, lambda: [out["g"]])
        m = backend.module
        x = leaf(m, x0)
        g = m.tensor(ones.copy())

        def run(lap):
            x.grad = None
            y = chain(m, x, depth)
            lap()
            y.backward(g)
        return Prepared(run, lambda: [to_numpy(x.grad)])

    return Case(name=name, group=group, label=label, setup=setup, unit="us", per=depth,
                phases=("fwd", "bwd"), budget=budget, min_repeats=min_repeats,
                max_repeats=max_repeats, precall=precall)


# ================================ W2: an MLP training step ================================
# Written with plain tensors, shaped like torch.nn so it can switch to nn.Linear/optim.SGD
# (use_nn=True) once gradtool has them.

MLP_WIDTH, MLP_LAYERS, MLP_BATCH, MLP_LR = 1024, 3, 512, 0.01


class Linear:
    """torch.nn.Linear's layout and math: weight (out, in), bias (out,), y = x W^T + b."""

    def __init__(self, m, weight, bias):
        self.weight = leaf(m, weight)
        self.bias = leaf(m, bias)

    def __call__(self, x):
        return x @ self.weight.t() + self.bias

    def parameters(self):
        return [self.weight, self.bias]


class MLP:
    """Linear -> ReLU -> Linear -> ReLU -> Linear (nn.Sequential's behaviour)."""

    def __init__(self, m, arrays):
        self.m = m
        self.layers = [Linear(m, w, b) for w, b in arrays]

    def __call__(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = self.m.relu(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


class SGD:
    """optim.SGD(params, lr) without momentum: zero_grad(set_to_none=True), step()."""

    def __init__(self, m, params, lr):
        self.m, self.params, self.lr = m, list(params), lr

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        with self.m.no_grad():
            for p in self.params:
                if p.grad is not None:
                    p.data = p.data - self.lr * p.grad


def mlp_arrays(seed=3):
    """Weights (nn.Linear's default init range), input and target, float32."""
    rng = _rng(seed)
    bound = 1 / math.sqrt(MLP_WIDTH)
    layers = [(rng.uniform(-bound, bound, (MLP_WIDTH, MLP_WIDTH)).astype(F32),
               rng.uniform(-bound, bound, (MLP_WIDTH,)).astype(F32))
              for _ in range(MLP_LAYERS)]
    x = rng.standard_normal((MLP_BATCH, MLP_WIDTH), dtype=F32)
    target = rng.standard_normal((MLP_BATCH, MLP_WIDTH), dtype=F32)
    return layers, x, target


def make_model(m, layers, use_nn=False):
    """(model, optimizer): plain tensors, or the framework's nn.Linear and optim.SGD."""
    if not use_nn:
        model = MLP(m, layers)
        return model, SGD(m, model.parameters(), MLP_LR)
    if not hasattr(m, "nn") or not hasattr(m, "optim"):
        raise RuntimeError(f"{m.__name__} has no nn/optim yet (run without --nn)")
    mods = []
    for i, (w, b) in enumerate(layers):
        lin = m.nn.Linear(MLP_WIDTH, MLP_WIDTH)
        with m.no_grad():
            lin.weight.copy_(m.tensor(w))
            lin.bias.copy_(m.tensor(b))
        mods.append(lin)
        if i < len(layers) - 1:
            mods.append(m.nn.ReLU())
    model = m.nn.Sequential(*mods)
    return model, m.optim.SGD(model.parameters(), lr=MLP_LR)


def train_step(model, opt, x, target, lap):
    """One step: forward and MSE loss | backward | SGD update."""
    opt.zero_grad()
    loss = ((model(x) - target) ** 2).mean()
    lap()
    loss.backward()
    lap()
    opt.step()


class NumpyMLP:
    """The same network, forward and backward by hand: the limit for this step."""

    def __init__(self, layers):
        self.params = [a.copy() for wb in layers for a in wb]
        self.grads = [None] * len(self.params)

    def step(self, x, target, lap):
        """Out of place, keeping what autograd keeps: each layer's input (the ReLU outputs,
        whose sign is also the ReLU's mask) and the loss's difference."""
        p = self.params
        n_layers = len(p) // 2
        inputs = []
        h = x
        for i in range(n_layers):
            inputs.append(h)
            h = h @ p[2 * i].T + p[2 * i + 1]
            if i < n_layers - 1:
                h = np.maximum(h, 0)
        diff = h - target
        del h
        float(np.mean(diff * diff))  # the loss
        lap()
        g = diff * F32(2 / diff.size)
        del diff
        grads = [None] * len(p)
        for i in reversed(range(n_layers)):
            a = inputs.pop()
            grads[2 * i] = g.T @ a
            grads[2 * i + 1] = g.sum(0)
            if i:
                g = (g @ p[2 * i]) * (a > 0)
            del a
        self.grads = grads
        lap()
        for k in range(len(p)):
            p[k] = p[k] - F32(MLP_LR) * grads[k]


def _mlp_setup_factory(use_nn):
    layers, x0, t0 = mlp_arrays()

    def setup(backend):
        if backend.module is None:
            net = NumpyMLP(layers)
            return Prepared(lambda lap: net.step(x0, t0, lap), lambda: list(net.grads))
        m = backend.module
        model, opt = make_model(m, layers, use_nn)
        x, target = m.tensor(x0.copy()), m.tensor(t0.copy())
        return Prepared(lambda lap: train_step(model, opt, x, target, lap),
                        lambda: [to_numpy(p.grad) for p in model.parameters()])
    return setup


def _mlp_case(use_nn):
    return Case(name="W2/mlp_step", group="W2",
                label=f"W2 MLP step {MLP_LAYERS}x{MLP_WIDTH}, batch {MLP_BATCH}",
                setup=_mlp_setup_factory(use_nn), unit="ms",
                phases=("fwd", "bwd", "sgd"), budget=4.0, min_repeats=3, max_repeats=11,
                rtol=1e-3, atol=1e-5)


# ==================================== W6: MLP memory ====================================

def mlp_memory(backend, use_nn=False):
    """tracemalloc figures for one W2 step, in bytes: numpy reports its buffers to
    tracemalloc, so gradtool's and the numpy reference's arrays are all counted (torch's
    allocator is not: None for torch). Measured after one warm-up step, relative to the
    memory held before the step (parameters, input, target)."""
    import gc
    import tracemalloc
    if backend.name == "torch":
        return None
    layers, x0, t0 = mlp_arrays()
    nolap = _noop
    tracemalloc.start()
    try:
        if backend.module is None:
            net = NumpyMLP(layers)
            step = lambda: net.step(x0, t0, nolap)  # noqa: E731

            def release():
                net.grads = [None] * len(net.params)
        else:
            m = backend.module
            model, opt = make_model(m, layers, use_nn)
            x, target = m.tensor(x0.copy()), m.tensor(t0.copy())
            step = lambda: train_step(model, opt, x, target, nolap)  # noqa: E731
            release = opt.zero_grad
        step()
        release()
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        step()
        current, peak = tracemalloc.get_traced_memory()
        with_grads = current - base
        release()
        held = tracemalloc.get_traced_memory()[0] - base
        gc.collect()
        held_gc = tracemalloc.get_traced_memory()[0] - base
        return {"peak": peak - base, "with_grads": with_grads, "held": held,
                "held_gc": held_gc}
    finally:
        tracemalloc.stop()


def _noop():
    pass


PARAM_BYTES = MLP_LAYERS * (MLP_WIDTH * MLP_WIDTH + MLP_WIDTH) * 4


# ==================================== the list ====================================

def all_cases(quick=False, use_nn=False, deep=100_000):
    cases = []
    for size in ("small", "large"):
        for op in P1_OPS:
            cases.append(_p1_case(op, size))
    cases.append(_chain_case("W1/chain1000", "W1", "W1 chain 1,000 ops, 16 el.", 1000,
                             budget=1.5, min_repeats=7, max_repeats=25))
    cases.append(_chain_case("W3/depth1000", "W3", "W3 chain 1,000 ops", 1000,
                             budget=1.0, min_repeats=5, max_repeats=15))
    cases.append(_chain_case(f"W3/depth{deep}", "W3", f"W3 chain {deep:,} ops", deep,
                             budget=3.0, min_repeats=3, max_repeats=7, precall=False))
    cases.append(_mlp_case(use_nn))
    from check_workloads import check_cases  # W4 gradcheck, W5 hessian
    cases.extend(check_cases())
    from forward_ad_workloads import forward_ad_cases  # F1-F4: forward mode
    cases.extend(forward_ad_cases())
    from lstm_workload import lstm_cases  # W7: a recurrent layer
    cases.extend(lstm_cases())
    from conv_workload import conv_cases  # W8: a conv net's training step
    cases.extend(conv_cases())
    from func_workload import func_cases  # W9: torch.func's per-sample gradients
    cases.extend(func_cases())
    from fft_workload import fft_cases  # W10: a spectral convolution (torch.fft)
    cases.extend(fft_cases())
    from checkpoint_workload import checkpoint_cases  # W11: activation checkpointing
    cases.extend(checkpoint_cases())
    if quick:
        for c in cases:
            c.budget /= 3
            c.min_repeats = max(3, c.min_repeats // 2)
            c.max_repeats = max(c.min_repeats, c.max_repeats // 2)
    return cases
