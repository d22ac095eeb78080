"""torch's elementwise functions beyond arithmetic (logaddexp, logaddexp2, hypot, nextafter,
copysign, fmax, fmin, ldexp, frexp, heaviside, nan_to_num, float_power, signbit, gcd, lcm)
against torch itself: values and gradients in float32 (the sweep compares float64), dtypes
of integer, bool and mixed operands, the in-place forms, and the errors torch raises."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402
from tests.parity.test_shape_ops import compare, refuses_as_torch  # noqa: E402

pytestmark = pytest.mark.parity

R = np.random.default_rng(0)
A32, B32 = R.standard_normal((3, 4)).astype(np.float32), R.standard_normal(4).astype(np.float32)
A64 = R.standard_normal((3, 4))
INTS, MORE_INTS = np.array([4, 6, -9, 0]), np.array([6, 4, 6, 5], np.int32)
BOOLS = np.array([True, False, True, True])
SPECIALS = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
BINARY = ("logaddexp", "logaddexp2", "hypot", "nextafter", "copysign", "fmax", "fmin", "ldexp")


@pytest.mark.parametrize("name", BINARY)
def test_binary_float32_values_and_gradients_match_torch(name):
    # torch's float32 logaddexp2 computes in float32, some ulps from the exact value; the
    # engine's is rounded once from float64 (tests/engine/test_float_accuracy.py)
    rtol = 1e-6 if name == "logaddexp2" else 2e-7
    compare(lambda t, a, b: getattr(t, name)(a, b), A32, B32, rtol=rtol)


@pytest.mark.parametrize("name", ["copysign", "fmax", "fmin", "ldexp", "logaddexp", "hypot"])
@pytest.mark.parametrize("operands", ["float32_float64", "int_float32", "float32_bool"])
def test_binary_mixed_dtypes_promote_as_torch(name, operands):
    a, b = {"float32_float64": (B32, A64), "int_float32": (INTS, B32),
            "float32_bool": (B32, BOOLS)}[operands]
    if name == "ldexp" and operands == "float32_bool":  # (torch's 2^other has no bool kernel)
        refuses_as_torch(lambda t, x, y: t.ldexp(x, y), a, b)
        return
    # (torch's logaddexp backward subtracts the operands, which a bool tensor refuses: the
    # values only there)
    compare(lambda t, x, y: getattr(t, name)(x, y), a, b, rtol=2e-7,
            graph=operands != "float32_bool")


@pytest.mark.parametrize("name", ["copysign", "fmax", "fmin", "ldexp", "gcd", "lcm"])
def test_integer_operands_give_torchs_values_and_dtype(name):
    compare(lambda t, x, y: getattr(t, name)(x, y), INTS, MORE_INTS)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "hypot", "nextafter"])
def test_float_only_ops_refuse_integers_as_torch(name):
    refuses_as_torch(lambda t, x, y: getattr(t, name)(x, y), INTS, INTS)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_and_lcm_refuse_floats_as_torch(name):
    refuses_as_torch(lambda t, x, y: getattr(t, name)(x, y), A32, A32)


def test_fmax_fmin_ignore_nan_as_torch():
    a = np.array([np.nan, 1.0, np.nan, -2.0])
    b = np.array([0.5, np.nan, np.nan, 3.0])
    compare(lambda t, x, y: t.stack([t.fmax(x, y), t.fmin(x, y)]), a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("args", [(), (1.0,), (0.0, 5.0, -5.0)])
def test_nan_to_num_defaults_by_dtype_as_torch(dtype, args):
    compare(lambda t, x: t.nan_to_num(x * 1, *args), SPECIALS.astype(dtype))


def test_nan_to_num_of_integers_and_in_place_as_torch():
    compare(lambda t, x: t.nan_to_num(x, 1.0), INTS)
    compare(lambda t, x: x.clone().nan_to_num_(posinf=7.0), SPECIALS)


def test_frexp_returns_torchs_named_tuple():
    x = np.array([0.0, -3.5, 1e-40, 1024.0, np.inf], np.float32)
    mine, theirs = gt.frexp(gt.tensor(x)), torch.frexp(torch.tensor(x))
    assert type(mine).__name__ == "frexp" and mine._fields == ("mantissa", "exponent")
    assert str(mine.exponent.dtype) == "gradtool.int32"
    np.testing.assert_array_equal(mine.mantissa.numpy(), theirs.mantissa.numpy())
    np.testing.assert_array_equal(mine.exponent.numpy(), theirs.exponent.numpy())
    compare(lambda t, a: t.frexp(a).mantissa, A32)
    refuses_as_torch(lambda t, a: t.frexp(a), INTS)


@pytest.mark.parametrize("operands", ["float64", "ints"])
def test_heaviside_values_as_torch(operands):
    x, v = {"float64": (np.array([-1.0, 0.0, 2.0]), np.array([0.5, 0.25, 9.0])),
            "ints": (np.array([-1, 0, 2]), np.array([7, 7, 7]))}[operands]
    compare(lambda t, a, b: t.heaviside(a, b), x, v, graph=False)
    compare(lambda t, a, b: a.clone().heaviside_(b), x, v, graph=False)


def test_heaviside_refuses_mixed_dtypes_and_its_backward_as_torch():
    refuses_as_torch(lambda t, a, b: t.heaviside(a, b), INTS, A64[0])
    errors = []
    for lib in (gt, torch):
        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        out = lib.heaviside(x, lib.tensor([0.5, 0.5, 0.5]))
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        errors.append((type(out.grad_fn).__name__, str(error.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("base, exponent", [(A32, B32), (INTS, 2), (A32, 0.5), (BOOLS, INTS),
                                            (A64, MORE_INTS)])
def test_float_power_is_pow_in_float64_as_torch(base, exponent):
    base = np.abs(base) if base.dtype.kind == "f" else base
    if isinstance(exponent, np.ndarray):
        compare(lambda t, a, b: t.float_power(a, b), base, exponent)
    else:
        compare(lambda t, a: t.float_power(a, exponent), base)


def test_float_power_in_place_refuses_a_float32_base_as_torch():
    refuses_as_torch(lambda t, a: a.float_power_(2), A32)
    compare(lambda t, a: a.clone().float_power_(2), A64)


@pytest.mark.parametrize("x", [SPECIALS, INTS, BOOLS, np.array([-0.0, 0.0])])
def test_signbit_as_torch(x):
    compare(lambda t, a: t.signbit(a), x)


@pytest.mark.parametrize("name", ["hypot_", "copysign_", "ldexp_", "nextafter_"])
def test_in_place_forms_as_torch(name):
    compare(lambda t, a, b: getattr(a.clone(), name)(b), A32, B32, rtol=2e-7)


def test_gcd_lcm_in_place_as_torch():
    compare(lambda t, a, b: a.clone().gcd_(b), INTS, MORE_INTS)
    compare(lambda t, a, b: a.clone().lcm_(b), INTS, MORE_INTS)


# clamp's tensor bounds at ties, crossed (min > max), equal, NaN, and broadcast: x at a bound
# keeps its gradient, the bound gets none; crossed bounds give max (and max the gradient)
TIE_X = np.array([[0.5, 1.0, 1.5, 2.0, 3.0, np.nan], [1.0, 2.0, 1.5, 0.0, 1.5, 1.0]])
TIE_MIN = np.array([1.0, 1.0, 1.0, 2.0, 1.5, np.nan])
TIE_MAX = np.array([[2.0], [1.0]])


@pytest.mark.parametrize("call", [
    lambda t, x, lo, hi: t.clamp(x, lo, hi),
    lambda t, x, lo, hi: x.clamp(min=lo),
    lambda t, x, lo, hi: x.clip(max=hi),
    lambda t, x, lo, hi: t.clamp_min(x, lo),
    lambda t, x, lo, hi: x.clamp_max(hi),
    lambda t, x, lo, hi: (x * 1).clamp_(lo, hi),
    lambda t, x, lo, hi: (x * 1).clamp_min_(lo),
], ids=["clamp", "min_only", "clip_max_only", "clamp_min", "clamp_max", "clamp_", "clamp_min_"])
def test_clamp_with_tensor_bounds_as_torch(call):
    compare(call, TIE_X, TIE_MIN, TIE_MAX)


def test_clamp_saves_torchs_values():
    mine, theirs = ([lib.tensor(a, requires_grad=True) for a in (TIE_X, TIE_MIN)]
                    for lib in (gt, torch))
    ours, torchs = gt.clamp(mine[0], min=mine[1]).grad_fn, torch.clamp(theirs[0], theirs[1]).grad_fn
    assert ours._saved_max is None and torchs._saved_max is None
    for name in ("_saved_self", "_saved_min"):
        np.testing.assert_array_equal(getattr(ours, name).detach().numpy(),
                                      getattr(torchs, name).detach().numpy())


def test_clamp_of_a_tensor_and_a_number_bound_as_torch():
    # a 0-d tensor is a number to torch's overload of numbers (ClampBackward1); another, refused
    compare(lambda t, x, lo: t.clamp(x, lo, 2.0), TIE_X, np.array(1.0), graph=False)
    refuses_as_torch(lambda t, x, lo: t.clamp(x, lo, 2.0), TIE_X, TIE_MIN)
    # (the method's message lists the overloads without `input`, and why each did not match:
    # the engine words it as the function's; the type and the first words agree)
    for lib in (torch, gt):
        with pytest.raises(TypeError, match=r"^clamp\(\) received an invalid combination of "
                                            r"arguments - got \("):
            lib.ones(3).clamp(1.0, lib.ones(3))
