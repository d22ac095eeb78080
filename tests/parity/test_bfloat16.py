"""bfloat16 tensors against torch 2.13's CPU build: values (bitwise where torch rounds a float32
computation once), gradients, reprs, the refusals, and torch.save/load both ways. The promotion
table for every pair of dtypes, bfloat16 included, is test_dtypes.py's; the engine's own tests
(float32 rounded once as the oracle) are tests/engine/test_bfloat16.py."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradtool as gt

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def both(values):
    """The same bfloat16 tensor in each library."""
    values = np.asarray(values, np.float32)
    return (gt.tensor(values.tolist(), dtype=gt.bfloat16),
            torch.tensor(values, dtype=torch.bfloat16))


def bits(t):
    """A bfloat16 tensor's bit patterns (int16), whichever library made it."""
    if isinstance(t, gt.Tensor):
        assert t.dtype is gt.bfloat16, t.dtype
        return t._data.view(np.int16)
    assert t.dtype == torch.bfloat16, t.dtype
    return t.detach().view(torch.int16).numpy()


def values(t):
    return np.asarray((t.detach().float() if isinstance(t, torch.Tensor) else t.float()).tolist())


def assert_same_bits(mine, theirs):
    """The same bfloat16 values (0.0 and -0.0 count as one: torch's relu and cumsum give
    either sign of zero, in float32 too)."""
    bits(mine), bits(theirs)  # (both bfloat16)
    np.testing.assert_array_equal(values(mine), values(theirs))


def assert_within_ulps(mine, theirs, ulps):
    """Equal but for torch's own order of float32 operations (its matmul blocking, its
    vectorised softmax): `ulps` bfloat16 ulps at each value."""
    a, b = values(mine), values(theirs)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(b), 2.0 ** -126))) - 7)
    assert np.all(np.abs(a - b) <= ulps * ulp), np.max(np.abs(a - b) / ulp)


floats = st.floats(-30, 30, width=32, allow_subnormal=False)
arrays = st.integers(1, 64).flatmap(lambda n: st.lists(floats, min_size=n, max_size=n))

# (name, op): torch's CPU kernels compute these in float32 and round once
ROUNDED_ONCE = {
    "exp": lambda t: t.exp(), "tanh": lambda t: t.tanh(), "sigmoid": lambda t: t.sigmoid(),
    "sin": lambda t: t.sin(), "sqrt": lambda t: t.abs().sqrt(), "log": lambda t: t.abs().log(),
    "relu": lambda t: t.relu(),
    "add": lambda t: t + t.flip(0), "mul": lambda t: t * t.flip(0),
    "div": lambda t: t / (t.flip(0).abs() + 1), "scalar": lambda t: t * 1.37 - 0.1,
    "scalar_div": lambda t: t / 3.3 + 0.7, "rsub": lambda t: 0.3 - t,
    "pow": lambda t: t.abs() ** 1.37, "sum": lambda t: t.sum(), "mean": lambda t: t.mean(),
    "amax": lambda t: t.amax(), "cumsum": lambda t: t.cumsum(0), "norm": lambda t: t.norm(),
    "clamp": lambda t: t.clamp(-1.5, 2.5), "where": lambda t: gt_or_torch(t).where(t > 0, t, 0.3),
}


def gt_or_torch(t):
    return gt if isinstance(t, gt.Tensor) else torch


@pytest.mark.parametrize("name", sorted(ROUNDED_ONCE))
@settings(max_examples=20, deadline=None)
@given(data=arrays)
def test_values_are_torchs_bit_for_bit(name, data):
    mine, theirs = both(data)
    op = ROUNDED_ONCE[name]
    assert_same_bits(op(mine), op(theirs))


def test_gelu_is_torchs_bit_for_bit():
    """torch's bfloat16 gelu is its float32 steps without the float32 kernel's fused add: in
    the tails, where 1 + erf cancels, that gives -0.0 (the fused add gives +0.0), so the
    bits are compared, the sign of zero included."""
    grid = np.concatenate([np.linspace(-12, 12, 4001),
                           np.random.default_rng(0).standard_normal(2005) * 3])
    mine, theirs = both(grid)
    np.testing.assert_array_equal(bits(gt.nn.functional.gelu(mine)),
                                  bits(torch.nn.functional.gelu(theirs)))


@settings(max_examples=30, deadline=None)
@given(data=arrays, scalar=st.floats(-30, 30, width=32))
def test_python_floats_are_bfloat16_numbers_but_in_mul_and_div(data, scalar):
    mine, theirs = both(data)
    for op in (lambda t: t > scalar, lambda t: t <= scalar, lambda t: t == scalar,
               lambda t: t.clone().gt_(scalar), lambda t: t.clone().add_(scalar),
               lambda t: t.clone().sub_(scalar, alpha=2), lambda t: t.clone().mul_(scalar),
               lambda t: t > gt_or_torch(t).tensor(scalar)):
        assert op(mine).tolist() == op(theirs).tolist()


def test_large_sums_accumulate_in_float32_as_torchs():
    data = np.random.default_rng(0).standard_normal((64, 512)).astype(np.float32)
    mine, theirs = both(data)
    for op in (lambda t: t.sum(1), lambda t: t.mean(0), lambda t: t.sum()):
        # (torch adds in another order inside float32: a bfloat16 ulp where it rounds across)
        assert_within_ulps(op(mine), op(theirs), 1)


@pytest.mark.parametrize("name", ["matmul", "linear", "conv2d", "softmax", "log_softmax",
                                  "layer_norm"])
def test_products_softmax_and_norms_match_torchs_within_its_float32_order(name):
    r = np.random.default_rng(1)
    a, b = r.standard_normal((16, 64)), r.standard_normal((64, 8))
    ops = {
        "matmul": lambda lib, x, y: x @ y,
        "linear": lambda lib, x, y: lib.nn.functional.linear(x, y.T, y[0]),
        "conv2d": lambda lib, x, y: lib.nn.functional.conv2d(x.reshape(1, 4, 16, 16),
                                                             y.reshape(8, 4, 4, 4)[:3]),
        "softmax": lambda lib, x, y: x.softmax(-1),
        "log_softmax": lambda lib, x, y: x.log_softmax(-1),
        "layer_norm": lambda lib, x, y: lib.nn.functional.layer_norm(x, (64,), y[:, 0], y[:, 1]),
    }
    (xa, xb), (ya, yb) = both(a * 2), both(b)
    mine, theirs = ops[name](gt, xa, ya), ops[name](torch, xb, yb)
    assert str(mine.dtype).rpartition(".")[2] == "bfloat16" == str(theirs.dtype).rpartition(".")[2]
    # torch's log_softmax on bfloat16 rounds inside (max + log-sum in bfloat16): 2 ulps
    assert_within_ulps(mine, theirs, 2 if name == "log_softmax" else 1)


def test_gradients_match_torchs():
    r = np.random.default_rng(2)
    (x, tx), (w, tw), (b, tb) = both(r.standard_normal((40, 30))), \
        both(r.standard_normal((30, 20))), both(r.standard_normal(30) / 10)
    for t in (x, w, b, tx, tw, tb):
        t.requires_grad_()
    for lib, (p, q, c) in ((gt, (x, w, b)), (torch, (tx, tw, tb))):
        out = ((p + c) @ q).tanh()
        (out * out.detach().flip(0)).sum().backward()
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        assert mine.grad.dtype is gt.bfloat16 and theirs.grad.dtype == torch.bfloat16
        assert_within_ulps(mine.grad, theirs.grad, 2)
    # a chain of torch's fused backward kernels (tanh_backward, sigmoid_backward: float32
    # inside, rounded once) and products: bit for bit. (Where torch's formula is several ops,
    # as sin's grad * cos(self), torch rounds cos first and the engine does not: an ulp.)
    (s, ts) = both(r.standard_normal(200) * 3)
    s.requires_grad_(), ts.requires_grad_()
    for t in (s, ts):
        ((t.tanh() * 1.5).sigmoid().exp() * 0.3).sum().backward()
    assert_same_bits(s.grad, ts.grad)


def test_reprs_conversions_and_refusals_are_torchs():
    data = [[0.1, 2.0, -3.3e-3], [1e4, 7.0, 0.5]]
    mine, theirs = both(data)
    assert repr(mine).replace("gradtool.", "torch.") == repr(theirs)
    for m, t in ((mine[1], theirs[1]), (mine[0, :2], theirs[0, :2]), (mine.sum(), theirs.sum())):
        assert repr(m).replace("gradtool.", "torch.") == repr(t)
    assert mine.tolist() == theirs.tolist() and mine[0, 0].item() == theirs[0, 0].item()
    with pytest.raises(TypeError) as refused:
        theirs.numpy()
    with pytest.raises(TypeError, match=str(refused.value)):
        mine.numpy()
    wide = np.random.default_rng(3).standard_normal(200) * 10.0 ** np.arange(-20, 20).repeat(5)
    assert_same_bits(gt.tensor(wide).bfloat16(), torch.tensor(wide).bfloat16())  # from float64
    assert_same_bits(gt.tensor(wide, dtype=gt.float32).to(gt.bfloat16),
                     torch.tensor(wide, dtype=torch.float32).to(torch.bfloat16))
    assert gt.typename(mine) == torch.typename(theirs)
    assert str(gt.nn.Linear(2, 2).bfloat16().weight.dtype) == "gradtool.bfloat16"


def test_save_and_load_both_ways(tmp_path):
    mine, theirs = both([[0.1, 2.5, 3.3], [-1e-3, 6e4, 0.0]])
    gt.save({"x": mine, "column": mine[:, 1]}, tmp_path / "engine.pt")
    loaded = torch.load(tmp_path / "engine.pt")
    assert loaded["x"].dtype == torch.bfloat16
    assert_same_bits(mine, loaded["x"])
    assert_same_bits(mine[:, 1], loaded["column"])
    torch.save({"x": theirs, "column": theirs[:, 1]}, tmp_path / "torch.pt")
    back = gt.load(tmp_path / "torch.pt")
    assert_same_bits(back["x"], theirs)
    assert_same_bits(back["column"], theirs[:, 1])
