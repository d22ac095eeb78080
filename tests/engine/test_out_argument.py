"""out=: the result written into the caller's tensor (its dtype cast, its shape taken), as
torch writes it; refused where an input requires grad."""
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
