"""W11: activation checkpointing in a training step: four residual blocks
(x + tanh(x @ W1) @ W2, batch 64, width 256, float32), each run under non-reentrant
torch.utils.checkpoint, forward then backward (which reruns each block's forward to get back
what its ops saved); the gradients of the input and of every weight for a fixed cotangent.
numpy's column is the same step with the backward by hand, recomputing each block from its
kept input: the limit."""
import numpy as np

from workloads import Case, Prepared, to_numpy

BATCH, WIDTH, BLOCKS = 64, 256, 4


def _arrays(seed=13):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    weights = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
               for _ in range(2 * BLOCKS)]
    cotangent = rng.standard_normal((BATCH, WIDTH)).astype(np.float32)
    return x, weights, cotangent


def block(x, w1, w2):
    return x + (x @ w1).tanh() @ w2


def numpy_step(x, weights, grad_out, lap):
    """Forward keeping each block's input only | backward recomputing each block: [dx, dW...]."""
    inputs = []
    for w1, w2 in zip(weights[::2], weights[1::2]):
        inputs.append(x)
        x = x + np.tanh(x @ w1) @ w2
    lap()
    g, grads = grad_out, [None] * len(weights)
    for i in reversed(range(BLOCKS)):
        x, w1, w2 = inputs[i], weights[2 * i], weights[2 * i + 1]
        t = np.tanh(x @ w1)  # the recomputation
        grads[2 * i + 1] = t.T @ g
        da = (g @ w2.T) * (1 - t * t)
        grads[2 * i] = x.T @ da
        g = g + da @ w1.T
    return [g] + grads


def _setup(backend):
    x0, weights0, g0 = _arrays()
    if backend.module is None:
        out = []

        def run(lap):
            out[:] = numpy_step(x0, weights0, g0, lap)
        return Prepared(run, lambda: out)
    m = backend.module
    import importlib
    checkpoint = importlib.import_module(f"{m.__name__}.utils.checkpoint").checkpoint
    x = m.tensor(x0.copy(), requires_grad=True)
    weights = [m.tensor(w.copy(), requires_grad=True) for w in weights0]
    grad = m.tensor(g0.copy())

    def run(lap):
        for t in [x] + weights:
            t.grad = None
        y = x
        for w1, w2 in zip(weights[::2], weights[1::2]):
            y = checkpoint(block, y, w1, w2, use_reentrant=False)
        lap()
        y.backward(grad)
    return Prepared(run, lambda: [to_numpy(t.grad) for t in [x] + weights])


def checkpoint_cases():
    return [Case(name="W11/checkpointed_blocks", group="W11",
                 label=f"W11 {BLOCKS} checkpointed residual blocks {BATCH}x{WIDTH}, fwd+bwd",
                 setup=_setup, unit="ms", phases=("fwd", "bwd"), budget=2.0, min_repeats=3,
                 max_repeats=9, rtol=1e-3, atol=1e-4)]
