"""bfloat16 tensors on the engine: as torch's CPU kernels, an op on bfloat16 computes in
float32 inside and rounds its result to bfloat16 once. The oracle here needs no torch: the same
computation in float32 on the bfloat16 inputs' values, rounded once with ml_dtypes (round to
nearest even, as torch's). Comparisons with torch itself are in tests/parity/test_bfloat16.py."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import gradtool as gt

BF16 = np.dtype(ml_dtypes.bfloat16)
F = gt.nn.functional


def bf16(values):
    """A bfloat16 tensor of these float32 values, rounded once."""
    return gt.tensor(np.asarray(values, np.float32).tolist(), dtype=gt.bfloat16)


def f32(t):
    """The bfloat16 tensor's values as float32 (exact: every bfloat16 is a float32)."""
    return t._data.astype(np.float32)


def rounded(values):
    return np.asarray(values, np.float32).astype(BF16)


def assert_bitwise(t, expected):
    assert t.dtype is gt.bfloat16, t.dtype
    assert np.array_equal(t._data.view(np.uint16), rounded(expected).view(np.uint16)), \
        (t._data, rounded(expected))


floats = st.floats(-20, 20, width=32, allow_subnormal=False)
arrays = st.integers(1, 40).flatmap(lambda n: st.lists(floats, min_size=n, max_size=n))


# ---------------------------------- elementwise ----------------------------------
UNARY = ("exp", "tanh", "sin", "sqrt", "sigmoid", "neg", "log1p")
ENGINE_UNARY = {"sqrt": lambda t: t.abs().sqrt(), "log1p": lambda t: t.abs().log1p()}


@pytest.mark.parametrize("name", UNARY)
@settings(max_examples=25, deadline=None)
@given(values=arrays)
@example(values=[6.84375])
def test_one_input_ops_round_the_float32_result_once(name, values):
    # the oracle is the engine's own float32 op (torch's float32 values, checked elsewhere),
    # not numpy's: numpy's float32 exp(6.84375) is 938.0, a tie in bfloat16 that rounds to
    # 936, where torch's is 938.00006, which rounds to 940 as torch's bfloat16 exp does
    x = bf16(values)
    op = ENGINE_UNARY.get(name, lambda t: getattr(t, name)())
    with np.errstate(all="ignore"):
        assert_bitwise(op(x), op(gt.from_numpy(f32(x)))._data)


@settings(max_examples=40, deadline=None)
@given(values=arrays, scalar=st.floats(-3, 3, width=32))
def test_binary_ops_with_tensors_and_python_scalars(values, scalar):
    x, y = bf16(values), bf16(values[::-1])
    a, b = f32(x), f32(y)
    assert_bitwise(x + y, a + b)
    assert_bitwise(x * y, a * b)
    assert_bitwise(x - 2 * y, a - rounded(2 * b).astype(np.float32))  # (2 * y rounds first)
    # a Python float keeps bfloat16 (torch's promotion); it is a bfloat16 number, as torch's
    # wrapped numbers, except in mul and div, whose kernels take it in float32
    assert_bitwise(x * scalar, a * np.float32(scalar))
    assert_bitwise(x / scalar if scalar else x, a / np.float32(scalar) if scalar else a)
    as_bfloat16 = rounded(scalar).astype(np.float32)
    assert_bitwise(x + scalar, a + as_bfloat16)
    assert_bitwise(scalar - x, as_bfloat16 - a)
    assert (x > scalar).tolist() == (a > as_bfloat16).tolist()
    assert_bitwise(x / (y.abs() + 1), a / (rounded(np.abs(b) + 1).astype(np.float32)))


def test_promotion_with_other_dtypes():
    x = bf16([1.5, -2.25])
    assert (x + gt.ones(2)).dtype is gt.float32            # a float32 tensor wins
    assert (x + gt.ones(2, dtype=gt.float16)).dtype is gt.float32  # float16 with bfloat16
    assert (x + gt.tensor(2.0, dtype=gt.float64)).dtype is gt.bfloat16  # a 0-d tensor does not
    assert (x + gt.arange(2)).dtype is gt.bfloat16 and (gt.arange(2) * x).dtype is gt.bfloat16
    assert (x * 2).dtype is gt.bfloat16 and (x > 0).dtype is gt.bool
    table = {gt.float16: gt.float32, gt.float32: gt.float32, gt.float64: gt.float64,
             gt.int64: gt.bfloat16, gt.uint8: gt.bfloat16, gt.bool: gt.bfloat16,
             gt.complex64: gt.complex64, gt.bfloat16: gt.bfloat16}
    for other, want in table.items():
        assert gt.promote_types(gt.bfloat16, other) is want, other
        assert gt.promote_types(other, gt.bfloat16) is want, other
    assert gt.result_type(x, 2.5) is gt.bfloat16
    assert gt.can_cast(gt.bfloat16, gt.float16) and not gt.can_cast(gt.bfloat16, gt.int32)
    info = gt.finfo(gt.bfloat16)
    assert (info.eps, info.bits, info.tiny) == (0.0078125, 16, 2.0 ** -126)
    assert info.max == float(ml_dtypes.finfo(BF16).max)


# ---------------------------------- reductions, products, norms ----------------------------------
def test_sums_and_means_accumulate_in_float32():
    # 4096 values of 1 + 1/128: summed in bfloat16 the total stops growing at 512, where one
    # more 1.0078 is under half an ulp (2); in float32 the sum is exact, then rounded once
    x = gt.full((4096,), 1.0078125, dtype=gt.bfloat16)
    assert_bitwise(x.sum(), np.float32(4096 * 1.0078125))
    assert_bitwise(x.mean(), np.float32(1.0078125))
    values = np.random.default_rng(0).standard_normal((64, 50)).astype(np.float32)
    y = bf16(values)
    assert_bitwise(y.sum(1), f32(y).sum(1))
    assert_bitwise(y.mean(0), f32(y).mean(0))
    assert_bitwise(y.cumsum(1), np.cumsum(f32(y), 1))
    values, indices = y.max(1)
    assert values.dtype is gt.bfloat16 and indices.dtype is gt.int64
    assert np.array_equal(indices._data, f32(y).argmax(1))


def test_matmul_linear_and_conv_accumulate_in_float32():
    r = np.random.default_rng(1)
    a, b = bf16(r.standard_normal((8, 300))), bf16(r.standard_normal((300, 5)))
    assert_bitwise(a @ b, f32(a) @ f32(b))
    w, bias = bf16(r.standard_normal((5, 300))), bf16(r.standard_normal(5))
    out = F.linear(a, w, bias)
    assert out.dtype is gt.bfloat16
    # (the float32 kernel's own order of additions: compare with it, not a bitwise oracle)
    expected = F.linear(a.float(), w.float(), bias.float()).to(gt.bfloat16)
    assert np.array_equal(out._data, expected._data)
    image, kernel = bf16(r.standard_normal((1, 3, 9, 9))), bf16(r.standard_normal((4, 3, 3, 3)))
    out = F.conv2d(image, kernel, padding=1)
    assert out.dtype is gt.bfloat16
    assert np.array_equal(out._data, F.conv2d(image.float(), kernel.float(),
                                              padding=1).to(gt.bfloat16)._data)


@pytest.mark.parametrize("op", [lambda t: t.softmax(-1), lambda t: t.log_softmax(-1),
                                lambda t: F.layer_norm(t, (t.shape[-1],)),
                                lambda t: t.norm(dim=-1), lambda t: t.var(-1)])
def test_softmax_and_norms_run_in_float32_inside(op):
    x = bf16(np.random.default_rng(2).standard_normal((6, 33)) * 4)
    out = op(x)
    assert out.dtype is gt.bfloat16
    assert np.array_equal(out._data, op(x.float()).to(gt.bfloat16)._data)


# ---------------------------------- indexing, in place, views ----------------------------------
def test_indexing_writes_and_views_share_bfloat16_memory():
    x = bf16(np.arange(12.0) / 10).reshape(3, 4)
    view = x.t()
    assert view.dtype is gt.bfloat16 and np.shares_memory(view._data, x._data)
    x[1] = 0.3                                 # a number is a 0-d tensor of x's dtype
    x[0, gt.tensor([0, 2])] = bf16([7.1, 7.2])
    assert_bitwise(view[1], [rounded(0.1), rounded(0.3), rounded(0.9)])
    assert_bitwise(x[0], [rounded(7.1), rounded(0.1), rounded(7.2), rounded(0.3)])
    before = f32(x)
    x.mul_(1.1).add_(gt.ones(4))              # float32 inside; the write rounds once
    assert_bitwise(x, f32(bf16(before * np.float32(1.1))) + 1)
    x.exp_()
    assert x.dtype is gt.bfloat16
    assert_bitwise(x[gt.tensor([True, False, True])], f32(x)[[0, 2]])


# ---------------------------------- conversions, factories ----------------------------------
def test_factories_and_conversions():
    for t in (gt.zeros(3, dtype=gt.bfloat16), gt.ones(2, 2, dtype=gt.bfloat16),
              gt.full((2,), 0.1, dtype=gt.bfloat16), gt.empty(4, dtype=gt.bfloat16),
              gt.rand(5, dtype=gt.bfloat16), gt.randn(5, dtype=gt.bfloat16),
              gt.arange(0, 1, 0.25, dtype=gt.bfloat16), gt.linspace(0, 1, 5, dtype=gt.bfloat16),
              gt.zeros_like(gt.ones(2), dtype=gt.bfloat16)):
        assert t.dtype is gt.bfloat16 and t.element_size() == 2 and t.is_floating_point()
    assert gt.full((1,), 0.1, dtype=gt.bfloat16).item() == 0.10009765625
    x = gt.tensor([0.1, 2.7, -1e-3])
    assert x.bfloat16().tolist() == rounded([0.1, 2.7, -1e-3]).astype(np.float64).tolist()
    assert x.to(gt.bfloat16).float().dtype is gt.float32
    assert x.bfloat16().to(gt.float64).tolist() == x.bfloat16().tolist()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        x.bfloat16().numpy()
    assert repr(bf16([1.0, 2.0])) == "tensor([1., 2.], dtype=gradtool.bfloat16)"
    assert repr(bf16([0.1, 2.0])) == "tensor([0.1001, 2.0000], dtype=gradtool.bfloat16)"
    assert gt.typename(x.bfloat16()) == "torch.BFloat16Tensor"


def test_cpu_autocast_is_refused_clearly():
    """torch's CPU autocast casts per op (matmul in bfloat16, losses in float32): the engine
    does not, and says so rather than compute in float32."""
    from gradtool.engine.errors import NotInEngineError
    with pytest.raises(NotInEngineError, match=r"torch.autocast on the CPU .*\.bfloat16\(\)"):
        with gt.autocast("cpu", dtype=gt.bfloat16):
            pass


def test_module_bfloat16_and_save_load(tmp_path):
    model = gt.nn.Linear(3, 2).bfloat16()
    assert model.weight.dtype is gt.bfloat16 and model.weight.requires_grad
    assert model(gt.ones(4, 3, dtype=gt.bfloat16)).dtype is gt.bfloat16
    x = bf16([[0.1, 2.5], [3.3, -1e-3]])
    gt.save({"x": x, "column": x[:, 1], "model": model.state_dict()}, tmp_path / "bf16.pt")
    back = gt.load(tmp_path / "bf16.pt")
    assert back["x"].dtype is gt.bfloat16 and np.array_equal(back["x"]._data, x._data)
    assert back["column"].tolist() == x[:, 1].tolist()
    assert np.array_equal(back["model"]["weight"]._data, model.weight._data)


# ---------------------------------- gradients ----------------------------------
def test_gradients_of_bfloat16_leaves_are_each_formula_in_float32_rounded_once():
    r = np.random.default_rng(3)
    x = bf16(r.standard_normal((100, 30))).requires_grad_()
    w = bf16(r.standard_normal((30, 20))).requires_grad_()
    b = bf16(r.standard_normal(30) / 10).requires_grad_()
    ((x + b) @ w).tanh().sum().backward()
    # the same chain by hand: every op's result, forward and backward, rounded once
    X, W, B = f32(x), f32(w), f32(b)

    def r16(v):
        return rounded(v).astype(np.float32)
    h = r16(X + B)
    y = r16(np.tanh(r16(h @ W)))
    grad_z = r16(1 - y * y)                      # TanhBackward0: grad * (1 - result**2)
    grad_h = r16(grad_z @ W.T)                   # MmBackward0
    assert_bitwise(w.grad, h.T @ grad_z)
    assert_bitwise(x.grad, grad_h)
    assert_bitwise(b.grad, grad_h.sum(0))       # AddBackward0's sum over the broadcast rows


def test_broadcast_gradients_sum_in_float32():
    b = gt.zeros(1, dtype=gt.bfloat16, requires_grad=True)
    (gt.full((4096,), 1.0078125, dtype=gt.bfloat16) * (b + 1)).sum().backward()
    assert_bitwise(b.grad, [4096 * 1.0078125])


def test_second_order_gradients_in_bfloat16():
    x = bf16([0.5, -1.25, 2.0]).requires_grad_()
    (g,) = gt.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.dtype is gt.bfloat16 and g.grad_fn is not None
    (h,) = gt.autograd.grad(g.sum(), x)
    assert_bitwise(h, 6 * f32(x))
