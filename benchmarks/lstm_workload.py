"""W7: an LSTM layer forward and backward, hidden 256, 32 steps, batch 32 (input 256,
float32, zero initial state), gradients of the weights and of the input for a fixed
cotangent. In float32 both engines run torch's CPU path: one mkldnn_rnn_layer op for the
layer (oneDNN's kernel on torch; on gradtool the op's numpy steps, formulas.lstm_layer).
numpy's column is the same math with the backward written by hand (the limit)."""
import numpy as np

from workloads import Case, Prepared, to_numpy

SEQ, BATCH, INPUT, HIDDEN = 32, 32, 256, 256


def _arrays(seed=7):
    rng = np.random.default_rng(seed)
    bound = 1 / np.sqrt(HIDDEN)
    weights = [rng.uniform(-bound, bound, shape).astype(np.float32) for shape in
               ((4 * HIDDEN, INPUT), (4 * HIDDEN, HIDDEN), (4 * HIDDEN,), (4 * HIDDEN,))]
    x = rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
    cotangent = rng.standard_normal((SEQ, BATCH, HIDDEN)).astype(np.float32)
    return weights, x, cotangent


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def numpy_lstm(x, w_ih, w_hh, b_ih, b_hh, grad_out, lap):
    """Forward, keeping what backward needs | backward by hand: [dw_ih, dw_hh, db_ih, db_hh,
    dx]."""
    steps, batch, _ = x.shape
    h_size = w_hh.shape[1]
    x2 = x.reshape(steps * batch, -1)
    projected = (x2 @ w_ih.T + b_ih).reshape(steps, batch, -1)
    h = np.zeros((batch, h_size), x.dtype)
    c = np.zeros_like(h)
    saved = []
    for t in range(steps):
        gates = projected[t] + h @ w_hh.T + b_hh
        i, f = _sigmoid(gates[:, :h_size]), _sigmoid(gates[:, h_size:2 * h_size])
        g, o = np.tanh(gates[:, 2 * h_size:3 * h_size]), _sigmoid(gates[:, 3 * h_size:])
        c_new = f * c + i * g
        tc = np.tanh(c_new)
        saved.append((h, c, i, f, g, o, tc))
        h, c = o * tc, c_new
    lap()
    d_gates = np.empty_like(projected)
    dw_hh = np.zeros_like(w_hh)
    dh_next, dc_next = np.zeros_like(h), np.zeros_like(c)
    for t in reversed(range(steps)):
        h_prev, c_prev, i, f, g, o, tc = saved[t]
        dh = grad_out[t] + dh_next
        dc = dc_next + dh * o * (1 - tc * tc)
        d = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                            dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
        d_gates[t] = d
        dw_hh += d.T @ h_prev
        dh_next, dc_next = d @ w_hh, dc * f
    d2 = d_gates.reshape(steps * batch, -1)
    db = d2.sum(0)
    return [d2.T @ x2, dw_hh, db, db.copy(), (d2 @ w_ih).reshape(x.shape)]


def _setup(backend):
    (w_ih, w_hh, b_ih, b_hh), x0, g0 = _arrays()
    if backend.module is None:
        out = []

        def run(lap):
            out[:] = numpy_lstm(x0, w_ih, w_hh, b_ih, b_hh, g0, lap)
        return Prepared(run, lambda: out)
    m = backend.module
    lstm = m.nn.LSTM(INPUT, HIDDEN)
    with m.no_grad():
        for p, a in zip(lstm.parameters(), (w_ih, w_hh, b_ih, b_hh)):
            p.copy_(m.tensor(a))
    x = m.tensor(x0.copy(), requires_grad=True)
    grad = m.tensor(g0.copy())

    def run(lap):
        lstm.zero_grad()
        x.grad = None
        out, _ = lstm(x)
        lap()
        out.backward(grad)
    return Prepared(run, lambda: [to_numpy(p.grad) for p in lstm.parameters()] +
                    [to_numpy(x.grad)])


def lstm_cases():
    return [Case(name="W7/lstm", group="W7",
                 label=f"W7 LSTM hidden {HIDDEN}, {SEQ} steps, batch {BATCH}, fwd+bwd",
                 setup=_setup, unit="ms", phases=("fwd", "bwd"), budget=4.0, min_repeats=3,
                 max_repeats=9, rtol=1e-3, atol=1e-4)]
