"""out=: the result written into the caller's tensor (its dtype cast, its shape taken), as
torch writes it; refused where an input requires grad."""
import inspect
import warnings

import numpy as np
import pytest

import gradtool as gt


@pytest.mark.parametrize("call, expected", [
    (lambda out: gt.special.expm1(gt.tensor([0.0, 1.0]), out=out), np.expm1([0.0, 1.0])),
    (lambda out: gt.special.xlogy(gt.tensor([2.0, 0.0]), 3.0, out=out), [2 * np.log(3), 0.0]),
    (lambda out: gt.special.polygamma(1, gt.tensor([1.0]), out=out), [np.pi ** 2 / 6]),
    (lambda out: gt.fft.fftfreq(4, out=out), [0.0, 0.25, -0.5, -0.25]),
    (lambda out: gt.chain_matmul(gt.ones(1, 2, dtype=gt.float64), gt.ones(2, 1, dtype=gt.float64),
                                 out=out), [[2.0]]),
])
def test_the_result_is_written_into_out_and_out_is_returned(call, expected):
    out = gt.empty(0, dtype=gt.float64)
    version = out._version
    assert call(out) is out
    assert out.dtype is gt.float64 and out._version > version
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_out_of_another_shape_is_resized_with_torchs_warning():
    out = gt.zeros(5)
    with pytest.warns(UserWarning, match=r"resized since it had shape \[5\], which does not "
                                         r"match the required output shape \[2\]"):
        gt.special.i0e(gt.ones(2), out=out)
    assert out.shape == (2,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gt.special.i0e(gt.ones(3), out=gt.empty(0))  # no elements: resized silently


def test_out_refuses_a_dtype_the_result_cannot_cast_to_and_an_input_that_requires_grad():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        gt.special.expm1(gt.ones(2), out=gt.empty(2, dtype=gt.int64))
    x = gt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"expm1\(\): functions with out=\.\.\. arguments "
                                           r"don't support automatic differentiation"):
        gt.special.expm1(x, out=gt.empty(2))
    with gt.no_grad():
        assert gt.special.expm1(x, out=gt.empty(2)).tolist() == pytest.approx([np.e - 1] * 2)


def test_searchsorted_writes_its_indices_into_out():
    out = gt.empty(0, dtype=gt.int64)
    gt.searchsorted(gt.tensor([1, 3, 5]), gt.tensor([2, 6]), out=out)
    assert out.tolist() == [1, 3]


# ---- the functions torch calls with out= take it (out_argument.given_out)
@pytest.mark.parametrize("call, dtype, expected", [
    (lambda out: gt.exp(gt.tensor([0.0, 1.0], dtype=gt.float64), out=out), gt.float64,
     [1.0, np.e]),
    (lambda out: gt.add(gt.tensor([1.0]), gt.tensor([2.0]), alpha=3, out=out), gt.float32, [7.0]),
    (lambda out: gt.sum(gt.ones(2, 3), 1, out=out), gt.float32, [3.0, 3.0]),
    (lambda out: gt.cat([gt.ones(1), gt.zeros(2)], out=out), gt.float32, [1.0, 0.0, 0.0]),
    (lambda out: gt.linalg.vector_norm(gt.tensor([3.0, 4.0]), out=out), gt.float32, 5.0),
    (lambda out: gt.fft.rfft(gt.tensor([1.0, 0.0]), out=out), gt.complex64, [1.0, 1.0]),
    (lambda out: gt.where(gt.tensor([True, False]), gt.ones(2), gt.tensor([5.0, 6.0]), out=out),
     gt.float32, [1.0, 6.0]),
])
def test_torch_functions_write_into_out(call, dtype, expected):
    out = gt.empty(0, dtype=dtype)
    assert call(out) is out
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_a_tuple_of_results_is_written_into_a_tuple_of_outs_named_as_torchs():
    values, indices = gt.empty(0), gt.empty(0, dtype=gt.int64)
    returned = gt.max(gt.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(values, indices))
    assert type(returned).__name__ == "max_out" and returned.values is values
    assert returned.indices is indices and indices.tolist() == [1, 0]
    assert values.tolist() == [5.0, 7.0]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype long int, but "
                                           "got float instead"):
        gt.sort(gt.ones(3), out=(gt.empty(0), gt.empty(0)))


def test_functions_whose_out_must_have_the_results_dtype_say_so_as_torch():
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got "
                                           "double instead"):
        gt.mm(gt.ones(2, 2), gt.ones(2, 2), out=gt.empty(0, dtype=gt.float64))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        gt.abs(gt.ones(2), out=gt.empty(0, dtype=gt.float64))
    # where the casting rule allows it, the result is cast into out (as torch's exp)
    assert gt.exp(gt.zeros(2), out=gt.empty(0, dtype=gt.float64)).dtype is gt.float64


def test_a_factory_with_out_makes_its_values_in_outs_dtype():
    out = gt.empty(7, dtype=gt.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a factory resizes out silently)
        assert gt.zeros(2, 3, out=out) is out
    assert out.dtype is gt.int64 and out.tolist() == [[0, 0, 0]] * 2


def test_out_that_requires_grad_is_refused_in_grad_mode():
    out = gt.empty(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^exp\(\): functions with out=\.\.\. arguments"):
        gt.exp(gt.ones(2), out=out)
    with pytest.raises(RuntimeError, match=r"^clamp\(\): functions with out="):  # (torch's
        gt.clip(gt.ones(2, requires_grad=True), 0, 1, out=gt.empty(2))  # kernel's name)


def test_without_out_the_function_is_the_op_itself():
    x = gt.ones(2, requires_grad=True)
    assert gt.exp(x).grad_fn.name() == "ExpBackward0"
    assert "out" in inspect.signature(gt.exp).parameters
    assert "out" not in inspect.signature(gt.Tensor.exp).parameters


def test_an_out_whose_derivative_torch_lacks_is_recorded_and_raises_at_backward():
    x = gt.tensor([[1.0, 2.0], [3.0, 0.5]], requires_grad=True)
    out = gt.empty(0)
    assert gt.softmax(x, 1, out=out) is out
    assert out.grad_fn.name() == "NotImplemented" and out._version == 1
    np.testing.assert_allclose(out.detach().numpy(), gt.softmax(x, 1).detach().numpy())
    with pytest.raises(RuntimeError, match=r"^derivative for aten::softmax is not implemented$"):
        out.sum().backward()


def test_a_composite_writes_out_by_a_recorded_copy_whose_gradient_is_the_composites():
    x = gt.tensor([[1.0, 2.0], [3.0, 0.5]], requires_grad=True)
    y = gt.tensor([[0.5, -1.0], [2.0, 4.0], [1.0, 1.0]])
    out = gt.empty(0)
    gt.inner(x, y, out=out)
    assert out.grad_fn.name() == "CopyBackwards"
    out.sum().backward()
    # d/dx_i of sum_j <x_i, y_j> is sum_j y_j, for every row i
    np.testing.assert_allclose(x.grad.numpy(), np.tile(y.numpy().sum(0), (2, 1)))


@pytest.mark.parametrize("call, shapes", [
    (lambda x, out: gt.split_copy(x, 2, 1, out=out), [(3, 2), (3, 2)]),
    (lambda x, out: gt.split_with_sizes_copy(x, [1, 3], 1, out=out), [(3, 1), (3, 3)]),
    (lambda x, out: gt.unbind_copy(x, 1, out=out), [(3,)] * 4),
])
def test_the_copies_with_several_results_write_a_list_of_outs_and_return_none(call, shapes):
    x = gt.arange(12.0).reshape(3, 4)
    outs = [gt.zeros(s) for s in shapes]
    assert call(x, outs) is None
    np.testing.assert_array_equal(np.concatenate([o.numpy().reshape(3, -1) for o in outs], 1),
                                  x.numpy())


def test_arange_keeps_the_shape_of_an_out_of_as_many_elements():
    out = gt.empty(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gt.arange(4, out=out)
    assert out.shape == (2, 2) and out.numpy().tolist() == [[0, 1], [2, 3]]
    with pytest.warns(UserWarning, match=r"^The number of elements in the out tensor of shape "
                                         r"\[2, 2\] is 4 which does not match the computed "
                                         r"number of elements 3\."):
        gt.arange(3, out=out)
    assert out.shape == (3,)
