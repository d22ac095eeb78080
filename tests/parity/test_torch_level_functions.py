"""torch's top-level spellings of Tensor methods, its stacking and splitting helpers, its
dtype questions, settings and factories over existing memory, against torch: values, the
gradient, the nodes recorded and the errors. Tests marked parity, skipped without torch."""
import warnings

import numpy as np
import pytest

import gradtool as gt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _input(lib):
    return lib.tensor(np.arange(-5.0, 7.0).reshape(3, 4) / 3, requires_grad=True)


# name: f(lib, x) -> a tensor or tuple of tensors computed from x, a (3, 4) float64 leaf
DIFFERENTIABLE = {
    "linalg_matmul": lambda lib, x: lib.linalg.matmul(x, x.t()),
    "swapaxes": lambda lib, x: lib.swapaxes(x, 0, 1),
    "swapdims": lambda lib, x: x.swapdims(1, 0),
    "narrow": lambda lib, x: lib.narrow(x, 1, 1, 2),
    "select": lambda lib, x: lib.select(x, 0, -1),
    "broadcast_to": lambda lib, x: lib.broadcast_to(x, (2, 3, 4)),
    "msort": lambda lib, x: lib.msort(-x),
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, lib.tensor([[0], [3], [1]]), 1),
    "take_along_dim_flat": lambda lib, x: x.take_along_dim(lib.tensor([11, 0, 5])),
    "take_along_dim_broadcast": lambda lib, x: lib.take_along_dim(x, lib.tensor([[2, 0]]), 1),
    "inner": lambda lib, x: lib.inner(x, x[:2]),
    "inner_vectors": lambda lib, x: x[0].inner(x[1]),
    "inner_number": lambda lib, x: lib.inner(x, x[0, 0]),
    "diagflat": lambda lib, x: lib.diagflat(x[:2, :2], 1),
    "divide": lambda lib, x: lib.divide(x, 3.0),
    "divide_floor": lambda lib, x: x.divide(0.7, rounding_mode="floor") * x,
    "div_trunc": lambda lib, x: lib.div(x, x[0] + 3, rounding_mode="trunc") * x,
    "atleast_1d": lambda lib, x: lib.atleast_1d(x[0, 0]),
    "atleast_2d": lambda lib, x: lib.atleast_2d(x[0], x[0, 0]),
    "atleast_3d": lambda lib, x: lib.atleast_3d([x, x[0], x[0, 0]]),
    "column_stack": lambda lib, x: lib.column_stack([x[0], x[1], x[:2].t()]),
    "column_stack_numbers": lambda lib, x: lib.column_stack([x[0, 0], x[1, 1]]),
    "row_stack": lambda lib, x: lib.row_stack([x[0], x]),
    "dstack": lambda lib, x: lib.dstack([x, x * 2, x]),
    "dstack_vectors": lambda lib, x: lib.dstack([x[0], x[1]]),
    "hsplit": lambda lib, x: lib.hsplit(x, 2),
    "hsplit_indices": lambda lib, x: lib.hsplit(x, [1, -1, 9]),
    "hsplit_1d": lambda lib, x: lib.hsplit(x[0], [3]),
    "vsplit": lambda lib, x: lib.vsplit(x, [2]),
    "dsplit": lambda lib, x: lib.dsplit(x.view(1, 3, 4), 2),
    "cumulative_trapezoid": lambda lib, x: lib.cumulative_trapezoid(x),
    "cumulative_trapezoid_dx": lambda lib, x: lib.cumulative_trapezoid(x, dx=0.5, dim=0),
    "cumulative_trapezoid_x": lambda lib, x: lib.cumulative_trapezoid(x, x[0].exp().cumsum(0)),
    "corrcoef": lambda lib, x: lib.corrcoef(x * x[0]),
    "exp_": lambda lib, x: lib.exp_(x * 1.0),
    "clamp_": lambda lib, x: lib.clamp_(x * 1.0, -0.5, 0.5),
    "sinh_": lambda lib, x: lib.sinh_(x * 1.0),
}


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_values_and_gradients_match_torch(name):
    seen = []
    for lib in (gt, torch):
        x = _input(lib)
        outs = _outputs(DIFFERENTIABLE[name](lib, x))
        total = sum((o * lib.arange(1.0, o.numel() + 1, dtype=lib.float64).view(o.shape)).sum()
                    for o in outs)
        total.backward()
        seen.append(([tuple(o.shape) for o in outs], [o.detach().numpy().copy() for o in outs],
                     x.grad.numpy().copy()))
    (shapes, values, grad), (t_shapes, t_values, t_grad) = seen
    assert shapes == t_shapes
    for mine, theirs in zip(values, t_values):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-12, atol=1e-12)


QUESTIONS = {
    "vdot_ints": lambda lib: lib.vdot(lib.tensor([1, 2]), lib.tensor([3, 4])),
    "rad2deg_ints": lambda lib: lib.rad2deg(lib.tensor([1, 2])),
    "deg2rad_half": lambda lib: lib.deg2rad(lib.tensor([90.0, 45.0], dtype=lib.float16)),
    "count_nonzero": lambda lib: lib.count_nonzero(lib.tensor([[0, 1], [2, 0]])),
    "count_nonzero_dim": lambda lib: lib.tensor([[0, 1], [2, 0.5]]).count_nonzero(1),
    "count_nonzero_dims": lambda lib: lib.count_nonzero(lib.ones(2, 3, 4), (0, 2)),
    "isposinf": lambda lib: lib.isposinf(lib.tensor([1.0, float("inf"), -float("inf")])),
    "isneginf": lambda lib: lib.tensor([1.0, float("inf"), -float("inf")]).isneginf(),
    "isneginf_ints": lambda lib: lib.isneginf(lib.tensor([1, -3])),
    "isreal": lambda lib: lib.isreal(lib.tensor([1 + 0j, 2j])),
    "isreal_floats": lambda lib: lib.isreal(lib.tensor([1.0, 2.0])),
    "is_nonzero": lambda lib: lib.is_nonzero(lib.tensor([0.5])),
    "is_nonzero_zero": lambda lib: lib.tensor(0).is_nonzero(),
    "is_signed": lambda lib: [lib.is_signed(lib.ones(1, dtype=d)) for d in (
        lib.uint8, lib.bool, lib.int8, lib.float16, lib.complex64)],
    "is_same_size": lambda lib: [lib.ones(2, 3).is_same_size(lib.zeros(2, 3)),
                                 lib.is_same_size(lib.ones(2), lib.ones(3))],
    "is_neg": lambda lib: [lib.is_neg(-lib.ones(2)), lib.resolve_neg(lib.ones(2)).tolist()],
    "is_conj": lambda lib: [lib.is_conj(lib.ones(2)), lib.resolve_conj(lib.ones(2)).tolist()],
    "get_device": lambda lib: [lib.get_device(lib.ones(1)), lib.ones(1).get_device()],
    "result_type": lambda lib: [str(lib.result_type(*pair)).split(".")[-1] for pair in (
        (lib.ones(2, dtype=lib.int32), 2.5), (2, 3.0), (lib.tensor(1.0), lib.ones(2, dtype=lib.float16)),
        (lib.ones(2, dtype=lib.uint8), lib.ones(2, dtype=lib.int8)), (True, 2),
        (lib.ones(1, dtype=lib.int64), 1j))],
    "can_cast": lambda lib: [lib.can_cast(a, b) for a in (
        lib.bool, lib.uint8, lib.int32, lib.float16, lib.float64, lib.complex64)
        for b in (lib.bool, lib.int8, lib.int64, lib.float32, lib.complex128)],
    "asarray_list": lambda lib: lib.asarray([[1, 2], [3, 4]], dtype=lib.float64),
    "scalar_tensor": lambda lib: [lib.scalar_tensor(3), lib.scalar_tensor(2, dtype=lib.int32)],
    "empty_strided": lambda lib: [lib.empty_strided((2, 3), (1, 2)).stride(),
                                  lib.empty_strided((2,), (1,), dtype=lib.int8).zero_()],
    "frombuffer": lambda lib: lib.frombuffer(bytearray(b"\x01\x00\x02\x00\x03\x00"),
                                             dtype=lib.int16, count=2, offset=2),
}


def _plain(value):
    if hasattr(value, "numpy"):
        return (tuple(value.shape), str(value.dtype).split(".")[-1], value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("name", QUESTIONS)
def test_answers_match_torch(name):
    assert _plain(QUESTIONS[name](gt)) == _plain(QUESTIONS[name](torch))


ERRORS = {
    "take_along_dim_dtype": lambda lib: lib.take_along_dim(lib.ones(2, 2), lib.ones(2, 1), 1),
    "take_along_dim_dims": lambda lib: lib.take_along_dim(lib.ones(2, 2),
                                                          lib.tensor([0]), 1),
    "inner_sizes": lambda lib: lib.inner(lib.ones(2, 3), lib.ones(4)),
    "is_nonzero_empty": lambda lib: lib.is_nonzero(lib.ones(0)),
    "is_nonzero_many": lambda lib: lib.ones(2).is_nonzero(),
    "hsplit_divisible": lambda lib: lib.hsplit(lib.ones(2, 4), 3),
    "hsplit_0d": lambda lib: lib.hsplit(lib.tensor(1.0), 1),
    "vsplit_1d": lambda lib: lib.vsplit(lib.ones(4), 2),
    "dsplit_2d": lambda lib: lib.dsplit(lib.ones(4, 2), 2),
    "debug_mode_name": lambda lib: lib.set_deterministic_debug_mode("sometimes"),
    "debug_mode_number": lambda lib: lib.set_deterministic_debug_mode(5),
    "deterministic_mode": lambda lib: lib.use_deterministic_algorithms(1),
    "asarray_no_copy": lambda lib: lib.asarray(lib.ones(2), dtype=lib.float64, copy=False),
    "addmv_vec": lambda lib: lib.addmv(lib.zeros(2), lib.ones(2, 3), lib.ones(4)),
    "addmv_input": lambda lib: lib.addmv(lib.zeros(3), lib.ones(2, 3), lib.ones(3)),
    "addmv_dims": lambda lib: lib.addmv(lib.zeros(2), lib.ones(2, 3, 1), lib.ones(3)),
    "addmv_in_place": lambda lib: lib.zeros(1).addmv_(lib.ones(2, 3), lib.ones(3)),
    "addr_dims": lambda lib: lib.addr(lib.zeros(2, 3), lib.ones(2, 2), lib.ones(3)),
    "addr_input": lambda lib: lib.addr(lib.zeros(3, 3), lib.ones(2), lib.ones(3)),
    "addbmm_batches": lambda lib: lib.addbmm(lib.zeros(2, 2), lib.ones(4, 2, 3),
                                             lib.ones(5, 3, 2)),
    "addbmm_sizes": lambda lib: lib.addbmm(lib.zeros(2, 2), lib.ones(4, 2, 3), lib.ones(4, 4, 2)),
    "addbmm_input": lambda lib: lib.addbmm(lib.zeros(3, 2), lib.ones(4, 2, 3), lib.ones(4, 3, 2)),
    "baddbmm_in_place": lambda lib: lib.zeros(1, 2).baddbmm_(lib.ones(1, 1, 3), lib.ones(1, 3, 2)),
    "kthvalue_k": lambda lib: lib.ones(3).kthvalue(4),
    "kthvalue_empty": lambda lib: lib.ones(2, 0).kthvalue(1),
    "vdot_dims": lambda lib: lib.vdot(lib.ones(2, 2), lib.ones(2)),
    "vdot_sizes": lambda lib: lib.vdot(lib.ones(3), lib.ones(4)),
    "vdot_dtypes": lambda lib: lib.vdot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "rad2deg_complex": lambda lib: lib.rad2deg(lib.tensor([1j])),
    "lt_complex": lambda lib: lib.tensor([1j], dtype=lib.complex128).lt_(1),
    "eq_leaf": lambda lib: lib.ones(2, requires_grad=True).eq_(1),
    "deg2rad_complex": lambda lib: lib.ones(1, dtype=lib.complex64).deg2rad_(),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    raised = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib)
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[0] == raised[1]


def test_settings_are_kept_and_reported_as_torch_s():
    def report(lib):
        states = []
        for step in (lambda: lib.use_deterministic_algorithms(True, warn_only=True),
                     lambda: lib.set_deterministic_debug_mode("error"),
                     lambda: lib.set_deterministic_debug_mode(0),
                     lambda: lib.use_deterministic_algorithms(True),
                     lambda: lib.use_deterministic_algorithms(False)):
            step()
            states.append((lib.get_deterministic_debug_mode(),
                           lib.are_deterministic_algorithms_enabled(),
                           lib.is_deterministic_algorithms_warn_only_enabled()))
        lib.set_warn_always(True)
        states.append(lib.is_warn_always_enabled())
        lib.set_warn_always(False)
        lib.set_anomaly_enabled(True, check_nan=False)
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        lib.set_anomaly_enabled(False)
        states.append(lib.is_anomaly_enabled())
        return states
    assert report(gt) == report(torch)


def test_asarray_and_frombuffer_share_memory_as_torch_s():
    for lib in (gt, torch):
        array = np.zeros(3)
        shared = lib.asarray(array)
        array[0] = 5.0
        assert shared.tolist() == [5.0, 0.0, 0.0]
        assert lib.asarray(array, copy=True).tolist() == [5.0, 0.0, 0.0]
        array[1] = 1.0
        t = lib.ones(2)
        assert lib.asarray(t) is t
        buffer = bytearray(4)
        view = lib.frombuffer(buffer, dtype=lib.uint8)
        buffer[2] = 7
        assert view.tolist() == [0, 0, 7, 0]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert lib.frombuffer(b"\x01\x02", dtype=lib.uint8).tolist() == [1, 2]
        assert any("not writable" in str(w.message) for w in caught)


# name: f(lib, y) changing y, a non-leaf (3, 4) float64 tensor, in place
IN_PLACE = {
    "cumsum_": lambda lib, y: y.cumsum_(1),
    "cumprod_": lambda lib, y: y.cumprod_(0),
    "remainder_": lambda lib, y: y.remainder_(0.7),
    "remainder_tensor": lambda lib, y: y.remainder_(y.detach()[0] + 3),
    "fmod_": lambda lib, y: y.fmod_(-0.7),
    "subtract_": lambda lib, y: y.subtract_(y.detach(), alpha=0.5),
    "absolute_": lambda lib, y: y.absolute_(),
    "true_divide_": lambda lib, y: y.true_divide_(3.0),
    "swapdims_": lambda lib, y: y.swapdims_(0, 1),
    "mvlgamma_": lambda lib, y: (y.abs_() + 2).mvlgamma_(2),
    "igammac_": lambda lib, y: y.detach().abs().add_(0.5).igammac_(y.abs() + 1),
    "eq_": lambda lib, y: y.eq_(y.detach()[0, 0].clone()),
    "less_": lambda lib, y: y.less_(0.5),
    "ge_tensor": lambda lib, y: y.ge_(y.detach()[0] * 0.5),
    "not_equal_": lambda lib, y: y.not_equal_(y.detach().round()),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_twins_match_torch(name):
    seen = []
    for lib in (gt, torch):
        x = _input(lib)
        y = x * 1.0
        out = IN_PLACE[name](lib, y)
        names, node = [], out.grad_fn
        while node is not None and len(names) < 3:
            names.append(type(node).__name__)
            node = node.next_functions[0][0] if node.next_functions else None
        (out * lib.arange(1.0, out.numel() + 1, dtype=lib.float64).view(out.shape)).sum().backward()
        seen.append((out.detach().numpy().copy(), names, x.grad.numpy().copy(), y._version))
    np.testing.assert_allclose(seen[0][0], seen[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-10, atol=1e-12)
    assert seen[0][1] == seen[1][1] and seen[0][3] == seen[1][3]


def test_layout_answers_match_torch():
    def answers(lib):
        t = lib.ones(2, 3, dtype=lib.float64)
        return [t.nbytes, t[1:].storage_offset(), t.t().storage_offset(), t[:, 1].storage_offset(),
                t.is_meta, t.is_mps, t.is_quantized, t.is_nested, t.is_mkldnn, t.is_sparse_csr,
                t.positive().tolist(), t.new_empty_strided((2, 2), (1, 2)).stride(),
                [p.shape for p in t.hsplit(3)], t.corrcoef().shape]
    assert answers(gt) == answers(torch)
    for lib in (gt, torch):
        with pytest.raises(RuntimeError, match="on a bool tensor is not supported"):
            lib.ones(2, dtype=lib.bool).positive()


@pytest.mark.parametrize("mode", ["floor", "trunc"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "uint8"])
def test_rounded_division_is_torch_s_in_every_dtype(mode, dtype):
    """torch defines it by its own arithmetic in the tensor's dtype: compared value for value,
    at random quotients and at the edges (zero divisors, signed zeros, infinities)."""
    rng = np.random.default_rng(0)
    if dtype.startswith("float"):
        a = np.concatenate([rng.uniform(-50, 50, 500), [0.0, -0.0, np.inf, -np.inf, 7.0, -7.0]])
        b = np.concatenate([rng.uniform(-5, 5, 500), [0.0, 3.0, 2.0, -0.0, 0.0, -0.0]])
    else:
        low = 0 if dtype == "uint8" else -50
        a, b = rng.integers(low, 50, 500), rng.integers(1, 9, 500)
    results = []
    for lib in (gt, torch):
        x = lib.tensor(a.astype(dtype))
        y = lib.tensor(b.astype(dtype))
        results.append(x.div(y, rounding_mode=mode).numpy())
    np.testing.assert_array_equal(results[0], results[1])


BITWISE = {
    "and": lambda lib: lib.tensor([5, 3, -2]).bitwise_and(6),
    "and_operator_bools": lambda lib: lib.tensor([True, False]) & lib.tensor([True, True]),
    "and_reflected": lambda lib: 6 & lib.tensor([5, 3]),
    "or_dtypes": lambda lib: lib.tensor([1, 2], dtype=lib.int8) | lib.tensor([4], dtype=lib.int32),
    "xor_bool_number": lambda lib: lib.tensor([5]) ^ True,
    "not_uint8": lambda lib: ~lib.tensor([5, 0], dtype=lib.uint8),
    "not_bools": lambda lib: lib.bitwise_not(lib.tensor([True, False])),
    "left_shift": lambda lib: lib.bitwise_left_shift(lib.tensor([5, -3]), lib.tensor([1, 2])),
    "right_shift_operator": lambda lib: lib.tensor([5, -3, 64]) >> 1,
    "shift_reflected": lambda lib: 1 << lib.tensor([0, 3]),
}


@pytest.mark.parametrize("name", BITWISE)
def test_bitwise_ops_match_torch(name):
    assert _plain(BITWISE[name](gt)) == _plain(BITWISE[name](torch))


def test_bitwise_in_place_forms_and_refusals_match_torch():
    for lib in (gt, torch):
        x = lib.tensor([5, 3])
        version = x._version
        x &= 6
        x.bitwise_or_(lib.tensor([8, 8]))
        x <<= 1
        assert x.tolist() == [24, 20] and x._version == version + 3
    for op in (lambda lib: lib.ones(1).bitwise_and(lib.tensor([1])),
               lambda lib: lib.ones(1) << 1, lambda lib: ~lib.ones(1),
               lambda lib: lib.tensor([1j]) | 1):
        messages = []
        for lib in (gt, torch):
            with pytest.raises(Exception) as info:
                op(lib)
            messages.append((type(info.value).__name__, str(info.value)))
        assert messages[0] == messages[1]


def test_kthvalue_picks_torch_s_index_among_equal_values_and_nan():
    """torch's CPU kernel is a quickselect: which of equal values it reports depends on its
    swaps. Rows of few distinct values (and NaN) give many ties."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 14))
        row = rng.integers(0, 4, n).astype(float)
        if rng.random() < 0.2:
            row[rng.integers(0, n)] = np.nan
        k = int(rng.integers(1, n + 1))
        mine, theirs = gt.tensor(row).kthvalue(k), torch.tensor(row).kthvalue(k)
        assert mine.indices.item() == theirs.indices.item(), (row, k)
        np.testing.assert_array_equal(mine.values.numpy(), theirs.values.numpy())
    x = rng.integers(0, 3, (3, 5, 4)).astype(float)
    for dim, keepdim in ((0, False), (1, True), (-1, False)):
        mine, theirs = gt.tensor(x).kthvalue(2, dim, keepdim), torch.tensor(x).kthvalue(2, dim, keepdim)
        np.testing.assert_array_equal(mine.indices.numpy(), theirs.indices.numpy())


@pytest.mark.parametrize("args", [
    "0, 2, 3", "0, 2, 3, base=2", "-1, 1, 4, base=3, dtype=lib.float64", "0, 2, 5, dtype=lib.int64",
    "0.1, 3.7, 11", "3, -2, 7, 2.5, dtype=lib.float64", "0, 1, 1", "0, 1, 0", "2, 2, 4",
    "0, 1, 3, requires_grad=True", "0, 1, -1", "0, 1, 3, dtype=lib.bool",
    "0.5, 2.7, 4, dtype=lib.int32", "-2.2, 3.1, 23, 2.5", "1.3, -0.4, 9, 0.5, dtype=lib.bfloat16",
])
def test_logspace_as_torch(args):
    def run(lib):
        try:
            out = eval(f"lib.logspace({args})", {"lib": lib})
        except (RuntimeError, NotImplementedError) as e:
            return type(e).__name__, str(e)
        values = out.detach().float() if out.dtype == lib.bfloat16 else out.detach()
        return values.numpy().tobytes(), str(out.dtype).split(".")[1], out.requires_grad
    assert run(gt) == run(torch)
