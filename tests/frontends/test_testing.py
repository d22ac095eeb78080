"""gradtool.testing, for a project's own tests: assert_close with torch.testing's tolerances and
messages; assert_gradcheck / assert_gradgradcheck failing with the CLI's gradcheck report."""
import inspect
import math

import numpy as np
import pytest

import gradtool as gt
from gradtool.frontends.testing import (GradcheckAssertionError, assert_close, assert_gradcheck,
                                        assert_gradgradcheck)

NAN, INF = math.nan, math.inf


def _cases(torch):
    """assert_close calls, written once for both libraries: (id, thunk taking assert_close)."""
    T = torch.tensor
    return {
        "float32_mismatch": lambda ac: ac(T([1., 2., 3.]), T([1., 2.1, 3.])),
        "dtype_differs": lambda ac: ac(T([1., 2.], dtype=torch.float64), T([1., 2.])),
        "int_tensors_exact": lambda ac: ac(T([1, 2, 3]), T([1, 5, 3])),
        "int32_tensors_exact": lambda ac: ac(T([1, 2], dtype=torch.int32),
                                             T([1, 4], dtype=torch.int32)),
        "bool_tensors": lambda ac: ac(T([True]), T([False])),
        "shape_differs": lambda ac: ac(T([1., 2., 3.]), T([1., 2.])),
        "zero_dim_is_a_scalar": lambda ac: ac(T(1.), T(2.)),
        "two_dims_index": lambda ac: ac(T([[1., 2.], [3., 4.]]), T([[1., 2.], [3., 0.]])),
        "relative_to_zero_is_inf": lambda ac: ac(T([1., 0.]), T([1., 0.5])),
        "nan_is_not_equal": lambda ac: ac(T([1., NAN]), T([1., NAN])),
        "nan_equal_nan": lambda ac: ac(T([1., NAN]), T([1., NAN]), equal_nan=True),
        "nan_is_the_worst": lambda ac: ac(T([1., NAN, 5.]), T([1., 1., 2.])),
        "equal_infinities": lambda ac: ac(T([INF]), T([INF])),
        "opposite_infinities": lambda ac: ac(T([1., INF]), T([1., -INF])),
        "float16_tolerance": lambda ac: ac(T([1.], dtype=torch.float16),
                                           T([1.1], dtype=torch.float16)),
        "mixed_dtypes_take_looser_tolerance": lambda ac: ac(
            T([1., 2.]), T([1., 2.0001], dtype=torch.float64), check_dtype=False),
        "mixed_dtypes_pass": lambda ac: ac(T([1., 2.]), T([1., 2.], dtype=torch.float64),
                                           check_dtype=False),
        "explicit_tolerances": lambda ac: ac(T([1., 2.]), T([1., 3.]), atol=1e-3, rtol=0.0),
        "zero_tolerances_say_equal": lambda ac: ac(T([1., 2.]), T([1., 2.5]), rtol=0, atol=0),
        "only_rtol": lambda ac: ac(T([1., 2.]), T([1., 2.5]), rtol=1e-3),
        "only_atol": lambda ac: ac(T([1., 2.]), T([1., 2.5]), atol=1e-3),
        "msg_string": lambda ac: ac(T([1., 2.]), T([1., 2.5]), msg="custom"),
        "msg_callable": lambda ac: ac(T([1., 2.]), T([1., 2.5]), msg=lambda m: "X" + m),
        "requires_grad_is_fine": lambda ac: ac(T([1., 2.], requires_grad=True), T([1., 2.])),
        "parameter_and_tensor": lambda ac: ac(torch.nn.Parameter(T([1.])), T([1.])),
        "tensor_and_float": lambda ac: ac(T(1.), 1.0),
        "sequence_item": lambda ac: ac([T(1.), T([1., 2.])], [T(1.), T([1., 2.5])]),
        "sequence_length": lambda ac: ac([1.0, 2.0], [1.0]),
        "tuple_and_list": lambda ac: ac((1.0, 2.0), [1.0, 2.0]),
        "mapping_keys": lambda ac: ac({"a": T(1.)}, {"b": T(1.)}),
        "mapping_item": lambda ac: ac({"a": T(1.)}, {"a": T(2.)}),
        "floats": lambda ac: ac(1.0, 1.1),
        "float_tolerance_given": lambda ac: ac(1.0, 1.1, rtol=0.2, atol=0),
        "float_relative_to_zero": lambda ac: ac(0.5, 0.0),
        "int_and_float": lambda ac: ac(1, 1.0),
        "int_and_float_unchecked": lambda ac: ac(3, 3.5, check_dtype=False),
        "ints": lambda ac: ac(2, 3),
        "float_nans": lambda ac: ac(NAN, NAN),
        "float_nans_equal_nan": lambda ac: ac(NAN, NAN, equal_nan=True),
        "bools": lambda ac: ac(True, False),
        "strings": lambda ac: ac("a", "a"),
        "numpy_arrays": lambda ac: ac(np.array([1., 2.]), np.array([1., 3.])),
    }


def _outcome(torch, assert_close_fn, case):
    try:
        _cases(torch)[case](assert_close_fn)
        return "passed"
    except (AssertionError, TypeError, ValueError) as e:
        message = str(e)
        for name in ("torch.", "gradtool."):
            message = message.replace(name, "LIB.")
        return f"{type(e).__name__}: {message}"


# What torch 2.13's assert_close says (recorded from it), so that these run without torch.
EXPECTED = {
    "float32_mismatch": "AssertionError: Tensor-likes are not close!\n\nMismatched elements: "
    "1 / 3 (33.3%)\nGreatest absolute difference: 0.09999990463256836 at index (1,) (up to "
    "1e-05 allowed)\nGreatest relative difference: 0.04761900380253792 at index (1,) (up to "
    "1.3e-06 allowed)",
    "dtype_differs": "AssertionError: The values for attribute 'dtype' do not match: "
    "LIB.float64 != LIB.float32.",
    "int_tensors_exact": "AssertionError: Tensor-likes are not equal!\n\nMismatched elements: "
    "1 / 3 (33.3%)\nGreatest absolute difference: 3 at index (1,)\nGreatest relative "
    "difference: 0.6000000238418579 at index (1,)",
    "shape_differs": "AssertionError: The values for attribute 'shape' do not match: "
    "LIB.Size([3]) != LIB.Size([2]).",
    "zero_dim_is_a_scalar": "AssertionError: Scalars are not close!\n\nExpected 2.0 but got "
    "1.0.\nAbsolute difference: 1.0 (up to 1e-05 allowed)\nRelative difference: 0.5 (up to "
    "1.3e-06 allowed)",
    "sequence_item": "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 1 / 2 "
    "(50.0%)\nGreatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\nGreatest "
    "relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)\n\nThe "
    "failure occurred for item [1]",
    "mapping_keys": "AssertionError: The keys of the mappings do not match:\nMissing keys in "
    "the actual mapping: ['b']\nAdditional keys in the actual mapping: ['a']",
    "only_rtol": "ValueError: Both 'rtol' and 'atol' must be either specified or omitted, but "
    "got no atol.",
    "floats": "AssertionError: Scalars are not close!\n\nExpected 1.1 but got 1.0.\nAbsolute "
    "difference: 0.10000000000000009 (up to 1e-07 allowed)\nRelative difference: "
    "0.09090909090909098 (up to 1e-07 allowed)",
    "int_and_float": "AssertionError: The (d)types do not match: <class 'int'> != "
    "<class 'float'>.",
    "bools": "AssertionError: Booleans mismatch: True is not False",
    "msg_string": "AssertionError: custom",
    "mixed_dtypes_pass": "passed",
    "requires_grad_is_fine": "passed",
    "equal_infinities": "passed",
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_assert_close_verdicts_and_messages_are_torchs(case):
    assert _outcome(gt, assert_close, case) == EXPECTED[case]


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(_cases(gt)))
def test_assert_close_matches_torch_on_every_case(case):
    torch = pytest.importorskip("torch")
    from torch.testing import assert_close as torch_assert_close
    assert _outcome(gt, assert_close, case) == _outcome(torch, torch_assert_close, case)


def test_assert_close_is_torch_testing_assert_close_on_the_namespace():
    assert gt.testing.assert_close is assert_close


# ------------------------------------------------------------------ gradients

class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x ** 2  # 2, not 3


def _x(*shape, seed=0):
    gt.manual_seed(seed)
    return gt.randn(*shape, dtype=gt.float64, requires_grad=True)


def test_assert_gradcheck_passes_silently_on_a_right_gradient():
    assert assert_gradcheck(Cube.apply, (_x(3),)) is None
    assert assert_gradcheck(lambda a, b: (a * b).sin(), (_x(2), _x(2, seed=1))) is None
    assert assert_gradgradcheck(Cube.apply, (_x(3),)) is None


def test_assert_gradcheck_failure_message_is_the_cli_report():
    with pytest.raises(AssertionError) as caught:
        assert_gradcheck(WrongCube.apply, _x(3), atol=1e-6)
    error = caught.value
    assert isinstance(error, GradcheckAssertionError) and not error.report.passed
    lines = str(error).splitlines()
    # the title: what failed, where it is defined; then the verdict of order 1
    assert lines[0].startswith("WrongCube  Function at ")
    assert lines[0].endswith(f"test_testing.py:{inspect.getsourcelines(WrongCube)[1]}")
    assert lines[1] == "order 1:  FAIL"
    assert "atol=1e-06" in lines[2]  # the options given
    # the per-pair table, the input named after forward's parameter, the worst element
    row = next(line for line in lines if line.lstrip().startswith("output 0   x float64[3]"))
    assert row.rstrip().endswith("FAIL") and "in[" in row and " vs " in row
    # the Jacobians side by side with every differing entry marked, and the diagnosis
    assert "numerical | analytical, 3 differing entries marked ≠" in str(error)
    assert sum(line.count("≠") for line in lines[lines.index(next(
        line for line in lines if "differing entries" in line)) + 1:]) == 3
    assert any("wrong_gradient" in line for line in lines)
    assert all(line == line.rstrip() for line in lines)  # no table padding at line ends


def test_assert_gradgradcheck_failure_names_the_second_order_problem():
    class OnceCube(Cube):
        @staticmethod
        @gt.autograd.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    assert_gradcheck(OnceCube.apply, (_x(3),))  # first order is right
    with pytest.raises(GradcheckAssertionError) as caught:
        assert_gradgradcheck(OnceCube.apply, (_x(3),))
    message = str(caught.value)
    assert message.startswith("OnceCube  Function at ")
    assert message.splitlines()[1] == "order 2:  FAIL"
    assert "gradgradcheck" in message.splitlines()[2]
    assert "once_differentiable" in message


def test_assert_gradcheck_names_inputs_after_the_function_parameters():
    def weighted(values, weights):
        return (values * weights).sum()

    def broken(values, weights):
        return _WrongMul.apply(values, weights)

    with pytest.raises(GradcheckAssertionError) as caught:
        assert_gradcheck(broken, (_x(2), _x(2, seed=1)))
    message = str(caught.value)
    assert message.startswith("broken  function at ")
    assert "values float64[2]" in message and "weights float64[2]" in message
    assert_gradcheck(weighted, (_x(2), _x(2, seed=1)))


def test_assert_gradcheck_with_an_option_only_gradcheck_takes_still_fails_with_the_report():
    with pytest.raises(GradcheckAssertionError) as caught:
        assert_gradcheck(WrongCube.apply, (_x(3),), check_batched_grad=True)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("WrongCube  Function at ") and lines[1] == "order 1:  FAIL"
    assert any("input 0 float64[3]" in line for line in lines)  # gradcheck names no input


class _WrongMul(gt.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * b  # the second should be grad * a


def test_assert_gradcheck_lets_a_users_forward_error_out_as_it_is():
    def raises(x):
        raise ValueError("bad input")
    with pytest.raises(ValueError, match="bad input"):
        assert_gradcheck(raises, (_x(2),))
