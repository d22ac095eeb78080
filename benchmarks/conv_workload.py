"""W8: one training step of a LeNet-sized conv net, batch 64 of 28x28 (float32): conv 5x5
(1 -> 6), BatchNorm2d, ReLU, max pool 2, conv 5x5 (6 -> 16), BatchNorm2d, ReLU, max pool 2,
Linear (256 -> 10), cross-entropy; forward, backward, SGD update. Written once with the
frameworks' nn, F and optim; numpy's column is the same step by hand with im2col
(sliding_window_view) + matmul and col2im (the limit for this engine)."""
import numpy as np

from workloads import Case, Prepared, to_numpy

BATCH, LR, EPS = 64, 0.01, 1e-5
SHAPES = {"conv1.weight": (6, 1, 5, 5), "conv1.bias": (6,), "bn1.weight": (6,),
          "bn1.bias": (6,), "conv2.weight": (16, 6, 5, 5), "conv2.bias": (16,),
          "bn2.weight": (16,), "bn2.bias": (16,), "fc.weight": (10, 256), "fc.bias": (10,)}


def _arrays(seed=8):
    rng = np.random.default_rng(seed)
    params = {name: (rng.uniform(0.5, 1.5, shape) if name.startswith("bn") and "weight" in name
                     else rng.uniform(-0.3, 0.3, shape)).astype(np.float32)
              for name, shape in SHAPES.items()}
    x = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, BATCH)
    return params, x, labels


# ---------------- the numpy reference, (N, C, pixels) arrays ----------------
def _im2col(x, k):
    """(N, C, H, W) -> (N, C * k * k, Ho * Wo): each window a column, in one copy."""
    win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))  # N C Ho Wo k k
    n, c, ho, wo = win.shape[:4]
    return win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * k * k, ho * wo), ho


def _col2im(cols, shape, k):
    """The adjoint of _im2col: each column added back into its window of (N, C, H, W)."""
    n, c, h, w = shape
    ho, wo = h - k + 1, w - k + 1
    cols = cols.reshape(n, c, k, k, ho, wo)
    out = np.zeros(shape, cols.dtype)
    for i in range(k):
        for j in range(k):
            out[:, :, i:i + ho, j:j + wo] += cols[:, :, i, j]
    return out


def _bn_forward(z, gamma, beta):  # z: (N, C, pixels)
    mean = z.mean((0, 2), keepdims=True)
    rstd = 1 / np.sqrt(z.var((0, 2), keepdims=True) + EPS)
    xhat = (z - mean) * rstd
    return xhat * gamma[:, None] + beta[:, None], (xhat, rstd)


def _bn_backward(dy, gamma, saved):
    xhat, rstd = saved
    dgamma, dbeta = (dy * xhat).sum((0, 2)), dy.sum((0, 2))
    g = dy * gamma[:, None]
    dz = rstd * (g - g.mean((0, 2), keepdims=True)
                 - xhat * (g * xhat).mean((0, 2), keepdims=True))
    return dz, dgamma, dbeta


def _pool(a, size):
    """2x2 max pooling of (N, C, size * size) as (N, C, size / 2, size / 2), and the four
    corners of each window (to find the maxima again in backward)."""
    a = a.reshape(a.shape[0], a.shape[1], size, size)
    corners = [a[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]
    out = np.maximum(np.maximum(corners[0], corners[1]), np.maximum(corners[2], corners[3]))
    return out, (corners, a.shape)


def _unpool(d, saved):
    """Each window's gradient to its max (the first, as the frameworks pick ties)."""
    corners, shape = saved
    out = np.zeros(shape, d.dtype)
    taken = np.zeros(d.shape, bool)
    out_max = np.maximum(np.maximum(corners[0], corners[1]), np.maximum(corners[2], corners[3]))
    for k, (i, j) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        here = (corners[k] == out_max) & ~taken
        out[:, :, i::2, j::2] = np.where(here, d, 0)
        taken |= here
    return out.reshape(shape[0], shape[1], -1)


def numpy_step(p, x, labels, lap):
    """Forward, backward by hand, SGD; returns the gradients (as the frameworks' .grad)."""
    n = x.shape[0]
    w1, w2 = p["conv1.weight"].reshape(6, -1), p["conv2.weight"].reshape(16, -1)
    cols1, h1 = _im2col(x, 5)
    z1 = np.matmul(w1, cols1) + p["conv1.bias"][:, None]          # (N, 6, 576)
    y1, bn1 = _bn_forward(z1, p["bn1.weight"], p["bn1.bias"])
    a1 = np.maximum(y1, 0)
    p1, mask1 = _pool(a1, h1)                                       # (N, 6, 12, 12)
    cols2, h2 = _im2col(p1, 5)
    z2 = np.matmul(w2, cols2) + p["conv2.bias"][:, None]          # (N, 16, 64)
    y2, bn2 = _bn_forward(z2, p["bn2.weight"], p["bn2.bias"])
    a2 = np.maximum(y2, 0)
    p2, mask2 = _pool(a2, h2)                                       # (N, 16, 4, 4)
    flat = p2.reshape(n, -1)
    logits = flat @ p["fc.weight"].T + p["fc.bias"]
    shifted = logits - logits.max(1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(1, keepdims=True)
    lap()
    dlogits = probs
    dlogits[np.arange(n), labels] -= 1
    dlogits /= n
    g = {"fc.weight": dlogits.T @ flat, "fc.bias": dlogits.sum(0)}
    dp2 = (dlogits @ p["fc.weight"]).reshape(p2.shape)
    dy2 = _unpool(dp2, mask2) * (y2 > 0)
    dz2, g["bn2.weight"], g["bn2.bias"] = _bn_backward(dy2, p["bn2.weight"], bn2)
    g["conv2.weight"] = np.matmul(dz2, cols2.transpose(0, 2, 1)).sum(0).reshape(16, 6, 5, 5)
    g["conv2.bias"] = dz2.sum((0, 2))
    dp1 = _col2im(np.matmul(w2.T, dz2), p1.shape, 5)
    dy1 = _unpool(dp1, mask1) * (y1 > 0)
    dz1, g["bn1.weight"], g["bn1.bias"] = _bn_backward(dy1, p["bn1.weight"], bn1)
    g["conv1.weight"] = np.matmul(dz1, cols1.transpose(0, 2, 1)).sum(0).reshape(6, 1, 5, 5)
    g["conv1.bias"] = dz1.sum((0, 2))
    lap()
    for name in p:
        p[name] -= LR * g[name]
    return [g[name] for name in SHAPES]


def _lenet(m):
    nn, F = m.nn, m.nn.functional

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(1, 6, 5), nn.BatchNorm2d(6)
            self.conv2, self.bn2 = nn.Conv2d(6, 16, 5), nn.BatchNorm2d(16)
            self.fc = nn.Linear(256, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
            x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
            return self.fc(x.flatten(1))
    return LeNet()


def _setup(backend):
    params, x0, labels0 = _arrays()
    if backend.module is None:
        out = []

        def run(lap):
            out[:] = numpy_step(params, x0, labels0, lap)
        return Prepared(run, lambda: out)
    m = backend.module
    model = _lenet(m)
    model.load_state_dict({**model.state_dict(), **{k: m.tensor(v) for k, v in params.items()}})
    optimizer = m.optim.SGD(model.parameters(), lr=LR)
    x, labels = m.tensor(x0), m.tensor(labels0)

    def run(lap):
        optimizer.zero_grad()
        loss = m.nn.functional.cross_entropy(model(x), labels)
        lap()
        loss.backward()
        lap()
        optimizer.step()
    return Prepared(run, lambda: [to_numpy(dict(model.named_parameters())[name].grad)
                                  for name in SHAPES])


def conv_cases():
    return [Case(name="W8/lenet_step", group="W8",
                 label=f"W8 LeNet step, batch {BATCH}, 28x28, 2 conv + BN + pool",
                 setup=_setup, unit="ms", phases=("fwd", "bwd", "sgd"), budget=4.0,
                 min_repeats=5, max_repeats=15, rtol=2e-3, atol=2e-4)]
