"""torch's semantics where real code meets them: type promotion, grad modes on generators,
.numpy() under no_grad, views and inference tensors, and error messages. Each behaviour is
tested against torch's documented rules; the same code runs through torch too in tests/parity
(test_dtypes.py, test_autograd.py, test_errors.py)."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradtool.engine.autograd import Function


# ---------------------------------- type promotion ----------------------------------
def test_a_dimensioned_tensor_wins_over_a_0d_tensor_of_its_category():
    x = gt.ones(3, dtype=gt.float32)
    assert (x * gt.tensor(1 / 3, dtype=gt.float64)).dtype == gt.float32
    assert (gt.tensor(2.0, dtype=gt.float64) + x).dtype == gt.float32
    h = gt.ones(3, dtype=gt.float16)
    assert (h - gt.tensor(1.0)).dtype == gt.float16
    assert (gt.ones(3, dtype=gt.int32) + gt.tensor(5)).dtype == gt.int32
    # a 0-d tensor of a higher category counts: int tensor * 0-d float64 is float64
    assert (gt.ones(3, dtype=gt.int32) * gt.tensor(2.0, dtype=gt.float64)).dtype == gt.float64
    # computed in the result dtype, as torch (not in float64, then rounded)
    assert (x * gt.tensor(1 / 3, dtype=gt.float64)).tolist() == [np.float32(1) * np.float32(1 / 3)] * 3


_ARITHMETIC = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
               "div": operator.truediv}


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64]), op=st.sampled_from(sorted(_ARITHMETIC)),
       number=st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
           [0.0, -0.0, 0.9, -0.1, 1e300, -1e-320, 3.4e38, 1.0]),
       values=st.lists(st.floats(width=32), min_size=1, max_size=6),
       shape=st.sampled_from(["vector", "0-d", "column"]))
def test_a_python_float_operand_is_cast_to_the_tensors_dtype_first(dtype, op, number, values,
                                                                   shape):
    """x * 0.9 computes x * float32(0.9) in float32 (torch's wrapped number, numpy's NEP 50):
    the kernels hand numbers to numpy as cached 0-d arrays of the tensor's dtype, which must
    give the same bits, -0.0 and nan included, whatever the tensor's dims."""
    a = np.array(values, dtype=dtype)
    a = a[:1].reshape(()) if shape == "0-d" else a[:, None] if shape == "column" else a
    fn = _ARITHMETIC[op]
    with np.errstate(all="ignore"):
        expected = fn(a, number)
        got = fn(gt.tensor(a), number)._data
        again = fn(gt.tensor(a), number)._data  # (a cached number array, reused)
    assert got.dtype == expected.dtype == dtype
    assert got.tobytes() == expected.tobytes() == again.tobytes()


def test_python_and_numpy_scalars_never_upcast():
    x = gt.ones(2, dtype=gt.float16)
    assert (x * 2.5).dtype == gt.float16 and (x * np.float64(2.5)).dtype == gt.float16
    assert (gt.ones(2, dtype=gt.int32) * 3).dtype == gt.int32
    assert (gt.tensor([1, 2]) * 2.5).dtype == gt.float32  # a higher category: default float
    assert (gt.tensor([True, False]) + 1).dtype == gt.int64
    assert (gt.tensor([1, 2]).clamp(min=1.5)).dtype == gt.float32
    assert (gt.tensor([1, 2]) ** 2.5).dtype == gt.float32


def test_integer_true_division_and_float_functions_give_the_default_float_dtype():
    assert (gt.tensor([1, 2]) / gt.tensor([2, 4])).tolist() == [0.5, 0.5]
    assert (gt.tensor([1, 2]) / gt.tensor([2, 4])).dtype == gt.float32
    assert (2 / gt.tensor([1, 2])).dtype == gt.float32
    assert gt.tensor([True]).exp().dtype == gt.float32  # numpy gives float16
    assert gt.tensor([1], dtype=gt.int32).sigmoid().dtype == gt.float32


def test_result_type_is_the_one_rule_and_in_place_ops_check_it():
    from gradtool.engine.autograd.dtypes import result_type
    assert result_type(np.ones(2, np.float32), np.array(1.0)) == np.float32
    assert result_type(np.ones(2, np.int32), 2.5) == np.float32
    assert gt.cat([gt.tensor([1, 2]), gt.tensor([1.0], dtype=gt.float16)]).dtype == gt.float16
    x = gt.ones(2)
    x.add_(gt.tensor(1.0, dtype=gt.float64))  # float32 result: fits
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        gt.tensor([1, 2]).add_(2.5)
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        gt.ones(2, 2) @ gt.ones(2, 2, dtype=gt.float64)


# ---------------------------------- grad modes on generators ----------------------------------
@pytest.mark.parametrize("mode, inside", [
    (lambda: gt.no_grad(), False), (lambda: gt.set_grad_enabled(False), False),
    (lambda: gt.inference_mode(), False), (lambda: gt.enable_grad(), True)])
def test_grad_mode_decorators_apply_inside_a_generator_across_yields(mode, inside):
    @mode()
    def numbers():
        for _ in range(2):
            received = yield gt.is_grad_enabled()
            assert received == "sent"

    outside = not inside
    with gt.set_grad_enabled(outside):
        gen = numbers()
        seen = [next(gen)]
        assert gt.is_grad_enabled() is outside  # the caller's mode between yields
        seen.append(gen.send("sent"))
        with pytest.raises(StopIteration):
            gen.send("sent")
    assert seen == [inside, inside]


# ---------------------------------- numpy ----------------------------------
def test_numpy_of_a_tensor_that_requires_grad_works_under_no_grad_only():
    x = gt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    with gt.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0]
        assert np.asarray(x).tolist() == [1.0, 1.0]  # numpy reads it through __array__


def test_numpy_code_inside_function_forward_works():
    class NumpySin(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return gt.from_numpy(np.sin(x.numpy()))

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * gt.from_numpy(np.cos(x.detach().numpy()))
    x = gt.randn(4, dtype=gt.float64, requires_grad=True)
    assert gt.autograd.gradcheck(NumpySin.apply, (x,))


# ---------------------------------- views and inference tensors ----------------------------------
def test_detach_in_place_refuses_a_view():
    base = gt.randn(4, requires_grad=True) * 1
    for view in (base[:2], base.view(2, 2), gt.randn(4)[1:]):
        with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach\\(\\) "
                                               "instead."):
            view.detach_()
    y = gt.randn(4, requires_grad=True) * 1
    assert y.detach_() is y and not y.requires_grad and y.grad_fn is None


def test_version_of_an_inference_tensor_raises():
    with gt.inference_mode():
        t = gt.ones(2)
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter."):
        t._version
    assert gt.ones(2)._version == 0


# ---------------------------------- error messages ----------------------------------
def _error_programs(lib):
    """Mistakes real code makes, each raising an error whose message torch users know."""
    x = lib.ones(6, requires_grad=True)
    return {
        "reshape": lambda: lib.ones(6).reshape(4, 2),
        "view": lambda: lib.ones(6).view(-1, 4),
        "view two -1": lambda: lib.ones(6).view(-1, -1),
        "broadcast": lambda: lib.ones(2, 3) + lib.ones(4),
        "mm shapes": lambda: lib.ones(2, 3) @ lib.ones(2, 3),
        "mv": lambda: lib.ones(2, 3).mv(lib.ones(4)),
        "bmm": lambda: lib.ones(2, 3, 4).bmm(lib.ones(3, 4, 5)),
        "dot": lambda: lib.ones(3).dot(lib.ones(4)),
        "non-scalar backward": lambda: (x * 2).backward(),
        "backward twice": lambda: [y.backward() for y in [(x * x).sum()] * 2],
        "no grad_fn": lambda: lib.ones(2).sum().backward(),
        "in-place on leaf": lambda: x.add_(1),
        "unused input": lambda: lib.autograd.grad((x * 2).sum(),
                                                  [x, lib.ones(2, requires_grad=True)]),
        "int requires grad": lambda: lib.ones(2, dtype=lib.int64).requires_grad_(),
        "item": lambda: lib.ones(2).item(),
        "dim out of range": lambda: lib.ones(2, 3).sum(2),
        "cat sizes": lambda: lib.cat([lib.ones(2, 3), lib.ones(2, 4)]),
        "cat dims": lambda: lib.cat([lib.ones(2, 3), lib.ones(3)]),
        "stack sizes": lambda: lib.stack([lib.ones(2), lib.ones(3)]),
        "expand": lambda: lib.ones(3).expand(2, 4),
        "gather float index": lambda: lib.ones(2, 3).gather(1, lib.ones(2, 3)),
        "grad shape": lambda: (x * 2).backward(lib.ones(3)),
        "mean of ints": lambda: lib.ones(2, dtype=lib.int64).mean(),
        "split sizes": lambda: lib.ones(4).split([1, 2]),
        "narrow": lambda: lib.ones(4).narrow(0, 3, 4),
        "chunk 0": lambda: lib.ones(4).chunk(0),
        "masked_fill mask": lambda: lib.ones(2).masked_fill(lib.ones(2), 0.0),
        "mixed matmul": lambda: lib.ones(2, 2) @ lib.ones(2, 2, dtype=lib.float64),
        "hook resizes": lambda: _hooked(lib, x, lambda g: lib.ones(3)),
        "hook retypes": lambda: _hooked(lib, x, lambda g: g.double()),
        "grad of another size": lambda: setattr(lib.ones(2, 3, requires_grad=True), "grad",
                                                lib.ones(5)),
        "copy_ not broadcasting": lambda: lib.ones(2, 3).copy_(lib.ones(4)),
        "copy_ into fewer dims": lambda: lib.ones(3).copy_(lib.ones(2, 3)),
        "bce target size": lambda: lib.nn.functional.binary_cross_entropy(
            lib.full((2, 3), 0.5), lib.ones(3)),
        "state dict sizes": lambda: lib.nn.Linear(2, 3).load_state_dict(
            {"weight": lib.ones(4, 4), "bias": lib.ones(3)}),
    }


def _hooked(lib, x, hook):
    y = x * 1
    y.register_hook(hook)
    y.sum().backward()


def _message(fn):
    try:
        fn()
    except Exception as e:
        return f"{type(e).__name__}: {e}".replace("gradtool", "torch")
    return None


def test_error_messages_carry_torchs_key_phrases():
    errors = {name: _message(fn) for name, fn in _error_programs(gt).items()}
    assert errors["reshape"] == "RuntimeError: shape '[4, 2]' is invalid for input of size 6"
    assert errors["view"] == "RuntimeError: shape '[-1, 4]' is invalid for input of size 6"
    assert "Sizes of tensors must match except in dimension 0" in errors["cat sizes"]
    assert "The expanded size of the tensor (4) must match the existing size (3)" in \
        errors["expand"]
    assert errors["unused input"].startswith("RuntimeError: The differentiated Tensor at index 1 "
                                             "appears to not have been used in the graph.")
    assert errors["hook resizes"] == "RuntimeError: hook '<lambda>' has changed the size of value"
    assert errors["hook retypes"] == ("RuntimeError: hook '<lambda>' has changed the type of "
                                      "value (was torch.FloatTensor got torch.DoubleTensor)")
    assert errors["copy_ not broadcasting"] == ("RuntimeError: The size of tensor a (3) must "
                                                "match the size of tensor b (4) at "
                                                "non-singleton dimension 1")
    assert all(message is not None for message in errors.values())


# ------------------------- found by the fuzz test's newer op makers -------------------------
def _f64(*shape, seed=0):
    return gt.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def test_gradients_that_read_no_input_do_not_require_grad_as_torchs():
    """torch's backward of cumprod over a dim of size one is the gradient itself, and of
    var_mean's mean alone reads no input: with create_graph they do not require grad."""
    x = _f64(3, 1)
    (g,) = gt.autograd.grad(x.cumprod(1).sum(), x, create_graph=True)
    assert not g.requires_grad and np.all(g._data == 1)
    (g,) = gt.autograd.grad(gt.var_mean(x, 0)[1].sum(), x, create_graph=True)
    assert not g.requires_grad and np.allclose(g._data, 1 / 3)
    (g,) = gt.autograd.grad(gt.std_mean(x, 0)[1].sum(), x, create_graph=True)
    assert not g.requires_grad


def test_leaky_relu_and_nll_loss_backwards_are_ops_whose_gradients_require_grad():
    """As torch's: their backward is a node of its own, differentiable in its input with
    derivative zero, so a gradient of a gradient requires grad (and is zero)."""
    x = _f64(3, 4)
    (g,) = gt.autograd.grad(gt.nn.functional.leaky_relu(x).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "LeakyReluBackwardBackward0"
    assert not gt.autograd.grad(g.sum(), x)[0]._data.any()
    (g,) = gt.autograd.grad(gt.nn.functional.nll_loss(x, gt.tensor([0, 3, 1])), x,
                            create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "NllLossBackwardBackward0"
    np.testing.assert_allclose(g._data, np.eye(4)[[0, 3, 1]] / -3)


def test_results_are_laid_out_in_memory_as_torchs():
    """torch's strides (read from torch 2.13) for a transposed (4, 3) input: sort and flip
    keep its layout, scans, roll and layer_norm give contiguous results."""
    x = gt.tensor(np.arange(12.0).reshape(3, 4)).t()
    for y in (x.sort(0).values, x.sort(0).indices, x.flip(0)):
        assert tuple(s // y._data.itemsize for s in y._data.strides) == (1, 4)
    for y in (x.cumsum(0), x.cumprod(1), x.roll(1, 0), gt.nn.functional.layer_norm(x, (3,))):
        assert y.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.sort(0).values.view(-1)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([np.float16, np.float32, np.float64]),
       st.lists(st.integers(1, 9), min_size=1, max_size=3), st.integers(1, 3),
       st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_layer_norm_statistics_are_numpys_mean_and_var_bit_for_bit(dtype, shape, normalized,
                                                                     transposed, seed):
    """layer_norm's mean, 1/std and result are those of np.mean and np.var (biased), to the
    bit, in every float dtype and memory layout: its kernel takes their steps itself for
    float32/64, where their Python wrappers cost more than a small layer's sums."""
    rng = np.random.default_rng(seed)
    data = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3) + rng.uniform(-100, 100))
    x = data.astype(dtype)
    x = x.T if transposed else x
    normalized_shape = x.shape[len(x.shape) - min(normalized, x.ndim):]
    weight = rng.standard_normal(normalized_shape).astype(dtype)
    bias = rng.standard_normal(normalized_shape).astype(dtype)
    out, mean, rstd = gt.engine.autograd.ops.kernels.native_layer_norm(x, weight, bias,
                                                                       normalized_shape, 1e-5)
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    with np.errstate(all="ignore"):
        want_mean = np.mean(x, axis=dims, keepdims=True)
        want_rstd = 1 / np.sqrt(np.var(x, axis=dims, keepdims=True) + 1e-5)
        want_out = (x - want_mean) * want_rstd * weight + bias
    for got, want in ((mean, want_mean), (rstd, want_rstd), (out, want_out)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                      np.ascontiguousarray(want).view(np.uint8))
    assert out.flags.c_contiguous


def test_transpose_in_place_of_a_view_keeps_it_a_view_with_torchs_gradient():
    a = _f64(3, 2)
    b = a * 1
    v = b[0:2]
    assert v.transpose_(0, 1) is v and v.shape == (2, 2) and v._base is b
    assert b._version == 1 and v.grad_fn.name() == "TransposeBackward1"
    (v * gt.tensor(np.arange(4.0).reshape(2, 2))).sum().backward()
    np.testing.assert_array_equal(a.grad._data, [[0, 2], [1, 3], [0, 0]])
    m = _f64(2, 3) * 1
    assert m.t_().grad_fn.name() == "TBackward1" and m.shape == (3, 2)
    assert (_f64(3) * 1).t_().grad_fn.name() == "TBackward1"


def test_erf_of_a_0d_tensor():
    x = gt.tensor(0.5, dtype=gt.float64, requires_grad=True)
    y = x.erf()
    assert y.shape == () and abs(y.item() - 0.5204998778130465) < 1e-15


def test_comparisons_run_in_the_promoted_dtype():
    # a 0-d float64 tensor does not promote a float32 one: 0.1 is compared in float32, as an
    # integer tensor with a float is (2**24 + 1 is 2**24 in float32)
    x = gt.tensor([0.1, 0.2], dtype=gt.float32)
    assert (x == gt.tensor(0.1, dtype=gt.float64)).tolist() == [True, False]
    assert (gt.tensor(0.1, dtype=gt.float64) >= x).tolist() == [True, False]
    assert (gt.tensor([16777217]) > 16777216.0).tolist() == [False]
    assert (gt.tensor([16777217]) == gt.tensor([16777216.0])).tolist() == [True]
    assert (gt.tensor([16777217]) > 16777216).tolist() == [True]  # (integers: as they are)
    assert x.eq_(gt.tensor(0.1, dtype=gt.float64)).tolist() == [1.0, 0.0]
