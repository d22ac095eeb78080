"""torch's top-level spellings, stacking and splitting helpers, dtype questions, settings and
factories over existing memory, on the engine alone: against numpy's own versions and closed
forms (tests/parity/test_torch_level_functions.py compares them with torch)."""
import numpy as np
import pytest

import gradtool as gt


def _leaf(array):
    return gt.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


ARRAY = np.arange(-5.0, 7.0).reshape(3, 4) / 3


@pytest.mark.parametrize("name, ours, numpys", [
    ("hsplit", lambda x: gt.hsplit(x, 2), lambda a: np.hsplit(a, 2)),
    ("hsplit_indices", lambda x: gt.hsplit(x, [1, -1, 9]), lambda a: np.hsplit(a, [1, -1, 9])),
    ("vsplit", lambda x: gt.vsplit(x, [2]), lambda a: np.vsplit(a, [2])),
    ("dsplit", lambda x: gt.dsplit(x.view(1, 3, 4), 2), lambda a: np.dsplit(a.reshape(1, 3, 4), 2)),
    ("column_stack", lambda x: (gt.column_stack([x[0], x[1], x[:2].t()]),),
     lambda a: (np.column_stack([a[0], a[1], a[:2].T]),)),
    ("dstack", lambda x: (gt.dstack([x, 2 * x]),),
     lambda a: (np.dstack([a, 2 * a]),)),
    ("row_stack", lambda x: (gt.row_stack([x[0], x]),), lambda a: (np.vstack([a[0], a]),)),
    ("atleast_3d", lambda x: gt.atleast_3d(x, x[0], x[0, 0]),
     lambda a: np.atleast_3d(a, a[0], a[0, 0])),
    ("atleast_2d", lambda x: gt.atleast_2d(x[0], x[0, 0]), lambda a: np.atleast_2d(a[0], a[0, 0])),
    ("corrcoef", lambda x: (gt.corrcoef(x * x[0]),), lambda a: (np.corrcoef(a * a[0]),)),
    ("inner", lambda x: (gt.inner(x, x[:2]),), lambda a: (np.inner(a, a[:2]),)),
    ("take_along_dim", lambda x: (gt.take_along_dim(x, gt.tensor([[0], [3], [1]]), 1),),
     lambda a: (np.take_along_axis(a, np.array([[0], [3], [1]]), 1),)),
    ("msort", lambda x: (gt.msort(-x),), lambda a: (np.sort(-a, 0),)),
    ("diagflat", lambda x: (gt.diagflat(x[:2, :2], 1),), lambda a: (np.diagflat(a[:2, :2], 1),)),
])
def test_values_are_numpys(name, ours, numpys):
    mine, theirs = ours(_leaf(ARRAY)), numpys(ARRAY)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.detach().numpy(), t, rtol=1e-12, atol=1e-15)


def test_take_along_dim_sends_each_gradient_back_to_the_element_it_read():
    x = _leaf(ARRAY)
    gt.take_along_dim(x, gt.tensor([[0, 0], [3, 1], [1, 1]]), 1).sum().backward()
    expected = np.zeros((3, 4))
    for row, cols in enumerate([[0, 0], [3, 1], [1, 1]]):
        for c in cols:
            expected[row, c] += 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_cumulative_trapezoid_is_the_running_sum_of_trapezoids():
    y, x = _leaf(ARRAY), np.array([0.0, 0.5, 2.0, 2.5])
    out = gt.cumulative_trapezoid(y, gt.tensor(x))
    areas = (ARRAY[:, 1:] + ARRAY[:, :-1]) / 2 * np.diff(x)
    np.testing.assert_allclose(out.detach().numpy(), np.cumsum(areas, 1))
    out.sum().backward()  # trapezoid i is in the running sums from its own on: 3 - i of them
    weights = np.array([3, 2, 1]) * np.diff(x) / 2
    expected = np.zeros(4)
    expected[:-1] += weights
    expected[1:] += weights
    np.testing.assert_allclose(y.grad.numpy(), np.broadcast_to(expected, (3, 4)))


@pytest.mark.parametrize("mode, rounded", [("floor", np.floor_divide), ("trunc", None)])
def test_div_rounding_modes_are_numpys_quotients_with_zero_gradient(mode, rounded):
    a = np.array([-7.5, -3.0, 2.5, 7.0])
    b = np.array([2.0, -1.5, -2.0, 3.0])
    x, y = _leaf(a), _leaf(b)
    out = x.div(y, rounding_mode=mode)
    expected = rounded(a, b) if rounded else np.trunc(a / b)
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    out.sum().backward()
    assert not x.grad.any() and not y.grad.any()
    ints = gt.tensor([-7, 7]).div(2, rounding_mode=mode)
    assert ints.dtype is gt.int64 and ints.tolist() == ([-4, 3] if mode == "floor" else [-3, 3])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        gt.tensor([1]).div(0, rounding_mode=mode)
    with pytest.raises(RuntimeError, match="expected rounding_mode to be one of None"):
        x.div(y, rounding_mode="round")


def test_questions_a_tensor_answers():
    assert gt.count_nonzero(gt.tensor([[0, 1], [2, 0]])).item() == 2
    assert gt.tensor([[0, 1], [2, 0.5]]).count_nonzero(1).tolist() == [1, 2]
    assert gt.isposinf(gt.tensor([1.0, np.inf, -np.inf])).tolist() == [False, True, False]
    assert gt.isneginf(gt.tensor([1, -3])).tolist() == [False, False]
    assert gt.isreal(gt.tensor([1 + 0j, 2j])).tolist() == [True, False]
    assert gt.tensor([0.5]).is_nonzero() and not gt.tensor(0).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        gt.ones(2).is_nonzero()
    assert [gt.ones(1, dtype=d).is_signed() for d in (gt.uint8, gt.bool, gt.int8)] == [
        False, False, True]
    assert gt.result_type(gt.ones(2, dtype=gt.int32), 2.5) is gt.float32
    assert gt.result_type(gt.ones(2, dtype=gt.uint8), gt.ones(2, dtype=gt.int8)) is gt.int16
    assert not gt.can_cast(gt.float32, gt.int32) and gt.can_cast(gt.int32, gt.float32)
    assert not gt.can_cast(gt.int32, gt.bool) and not gt.can_cast(gt.complex64, gt.float64)


def test_settings_are_kept():
    gt.use_deterministic_algorithms(True, warn_only=True)
    assert gt.get_deterministic_debug_mode() == 1
    assert gt.is_deterministic_algorithms_warn_only_enabled()
    gt.set_deterministic_debug_mode("error")
    assert gt.are_deterministic_algorithms_enabled()
    gt.use_deterministic_algorithms(False)
    assert gt.get_deterministic_debug_mode() == 0
    gt.set_anomaly_enabled(True)
    try:
        assert gt.is_anomaly_enabled() and gt.autograd.is_anomaly_enabled()
    finally:
        gt.set_anomaly_enabled(False)
    assert not gt.set_flush_denormal(True)  # numpy cannot: answered, nothing changed


def test_asarray_and_frombuffer_share_memory():
    array = np.zeros(3)
    shared = gt.asarray(array)
    array[0] = 5.0
    assert shared.tolist() == [5.0, 0.0, 0.0]
    copied = gt.asarray(array, copy=True)
    array[1] = 1.0
    assert copied.tolist() == [5.0, 0.0, 0.0]
    assert gt.asarray(array, dtype=gt.float32).dtype is gt.float32
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Double'"):
        gt.asarray(array, dtype=gt.float32, copy=False)
    buffer = bytearray(b"\x01\x00\x02\x00\x03\x00")
    view = gt.frombuffer(buffer, dtype=gt.int16, count=2, offset=2)
    buffer[2] = 9
    assert view.tolist() == [9, 3]
    strided = gt.empty_strided((2, 3), (1, 2))
    assert strided.stride() == (1, 2) and strided.shape == (2, 3)
    assert gt.scalar_tensor(3).dtype is gt.float32 and gt.scalar_tensor(3).dim() == 0


def test_torch_level_in_place_functions_are_the_methods():
    x = gt.zeros(2)
    assert gt.exp_(x) is x and x.tolist() == [1.0, 1.0]
    assert gt.zero_(x) is x and x.tolist() == [0.0, 0.0]


def test_in_place_twins_write_the_out_of_place_result_and_record_its_node():
    for name, args, out_of_place in [("cumsum_", (1,), lambda y: y.cumsum(1)),
                                     ("cumprod_", (0,), lambda y: y.cumprod(0)),
                                     ("remainder_", (0.7,), lambda y: y.remainder(0.7)),
                                     ("fmod_", (-0.7,), lambda y: y.fmod(-0.7)),
                                     ("absolute_", (), lambda y: y.abs()),
                                     ("mvlgamma_", (2,), lambda y: y.mvlgamma(2))]:
        x = _leaf(np.abs(ARRAY) + 2)
        expected = out_of_place(x)
        y = x * 1.0
        version = y._version
        out = getattr(y, name)(*args)
        assert out is y and y._version == version + 1
        assert type(y.grad_fn).__name__ == type(expected.grad_fn).__name__
        np.testing.assert_array_equal(y.detach().numpy(), expected.detach().numpy())
        (g,) = gt.autograd.grad(y.sum(), x)
        (h,) = gt.autograd.grad(expected.sum(), x)
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-12)


def test_where_a_tensor_lies_in_its_memory():
    t = gt.ones(2, 3, dtype=gt.float64)
    assert t.nbytes == 48 and t[1:].storage_offset() == 3 and t[:, 1].storage_offset() == 1
    assert not (t.is_meta or t.is_mps or t.is_quantized or t.is_nested)
    assert t.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)


def test_bitwise_ops_are_numpys_on_integers_and_refuse_floats():
    a, b = np.array([5, 3, -2]), np.array([6, 1, 7])
    x, y = gt.tensor(a), gt.tensor(b)
    assert (x & y).tolist() == (a & b).tolist() and (x | 6).tolist() == (a | 6).tolist()
    assert (x ^ y).tolist() == (a ^ b).tolist() and (~x).tolist() == (~a).tolist()
    assert (x << 2).tolist() == (a << 2).tolist() and (x >> 1).tolist() == (a >> 1).tolist()
    assert (3 & x).tolist() == (3 & a).tolist()
    assert (gt.tensor([1, 2], dtype=gt.int8) | gt.tensor([4], dtype=gt.int32)).dtype is gt.int32
    version = x._version
    x ^= y
    assert x.tolist() == (a ^ b).tolist() and x._version == version + 1
    with pytest.raises(NotImplementedError, match='"bitwise_and_cpu" not implemented for '
                                                  "'Float'"):
        gt.ones(1).bitwise_and(1)
    with pytest.raises(TypeError, match="only implemented on integer and Boolean"):
        ~gt.ones(1)


@pytest.mark.parametrize("start, end, steps, base", [(0, 2, 3, 10.0), (-1, 1, 4, 3.0),
                                                     (3, -2, 7, 2.5), (0, 1, 1, 10.0),
                                                     (0, 1, 0, 10.0)])
def test_logspace_is_base_to_the_linspace(start, end, steps, base):
    out = gt.logspace(start, end, steps, base=base, dtype=gt.float64)
    np.testing.assert_allclose(out.numpy(), np.logspace(start, end, steps, base=base),
                               rtol=1e-15)
    if steps:  # both ends exact (one step: start's)
        assert out[0].item() == base ** start
        assert out[-1].item() == base ** (end if steps > 1 else start)


def test_logspace_dtypes_and_refusals():
    assert gt.logspace(0, 2, 3).dtype == gt.float32
    assert gt.logspace(0, 2, 5, dtype=gt.int64).tolist() == [1, 3, 10, 31, 100]  # (truncated)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        gt.logspace(0, 1, -1)
