"""float32 and float16 results are correctly rounded: every elementwise row of the op table,
measured in ulps against a float64 reference computed independently (Python's math module,
element by element), must be within half an ulp of it.

Half an ulp is the correctly rounded value's error. The reference has float64's own error (an
ulp of float64 or a few, which is 2^-29 of float32's ulp, 2^-42 of float16's), so the bound
allows 2^-20 ulp more: where the exact value lies that close to a midpoint between two
float32s, the float64 computation may round to either side, and both count as right (a
vanishing fraction of inputs; none of these seeded ones). A result off by one ulp is 0.5
more, far outside the bound. (`measure` gives the errors themselves, for a table of them.)"""
import math
import operator

import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.autograd.ops.derivatives import TABLE

BOUND = 0.5 + 2 ** -20
SAMPLES = 2000

# ---- domains: (low, high, spacing) of the inputs drawn, plus special values ----
REALS = ("uniform", -10.0, 10.0, (0.0, -0.0, 1e-30, -1e-30, 1e-6, 0.5, -0.5, 1.0, -1.0))
POSITIVE = ("log-uniform", 1e-3, 1e3, (1.0, 1e-3, 0.5, 2.0))
UNIT = ("uniform", -0.999, 0.999, (0.0, -0.0, 0.5, -0.5))
ABOVE_ONE = ("uniform", 1.0, 100.0, (1.0, 1.5))
EXPONENTS = ("uniform", -3.0, 3.0, (0.0, 1.0, -1.0, 2.0, 0.5))
DIVISORS = ("uniform", -10.0, 10.0, (1e-3, -0.5, 1.0))
BOOLS = ("bools",)


# x.eq_(y) and its kin: exact by definition (1 or 0)
_COMPARED = {"EQ": operator.eq, "NE": operator.ne, "LT": operator.lt, "LE": operator.le,
             "GT": operator.gt, "GE": operator.ge}


def _sigmoid(x):
    return 1 / (1 + math.exp(-x)) if x > -700 else 0.0


def _softplus(x, beta, threshold):
    return x if x * beta > threshold else math.log1p(math.exp(x * beta)) / beta


def _elu(x, alpha, scale, input_scale):
    return x * scale if x > 0 else alpha * scale * math.expm1(x * input_scale)


def _sign(x):
    return math.copysign(1.0, x) if x else 0.0


# row name: (the domain of each tensor input, the argument tuples to try, the function).
# Number arguments are exact in float16, so that they mean the same in every dtype.
REFERENCE = {
    "NEG": ((REALS,), [()], lambda x: -x),
    "ABS": ((REALS,), [()], abs),
    "SIGN": ((REALS,), [()], _sign),
    "SGN": ((REALS,), [()], _sign),
    "EXP": ((REALS,), [()], math.exp),
    "LOG": ((POSITIVE,), [()], math.log),
    "LOG1P": ((POSITIVE,), [()], math.log1p),
    "EXPM1": ((REALS,), [()], math.expm1),
    "SQRT": ((POSITIVE,), [()], math.sqrt),
    "RECIPROCAL": ((REALS,), [()], lambda x: 1 / x if x else math.copysign(math.inf, x)),
    "RSQRT": ((POSITIVE,), [()], lambda x: 1 / math.sqrt(x)),
    "SIN": ((REALS,), [()], math.sin),
    "COS": ((REALS,), [()], math.cos),
    "TAN": ((REALS,), [()], math.tan),
    "SINH": ((REALS,), [()], math.sinh),
    "RAD2DEG": ((REALS,), [()], math.degrees),
    "DEG2RAD": ((REALS,), [()], math.radians),
    "COSH": ((REALS,), [()], math.cosh),
    "TANH": ((REALS,), [()], math.tanh),
    "SIGMOID": ((REALS,), [()], _sigmoid),
    "ASIN": ((UNIT,), [()], math.asin),
    "ACOS": ((UNIT,), [()], math.acos),
    "ATAN": ((REALS,), [()], math.atan),
    "ASINH": ((REALS,), [()], math.asinh),
    "ACOSH": ((ABOVE_ONE,), [()], math.acosh),
    "ATANH": ((UNIT,), [()], math.atanh),
    "ERF": ((REALS,), [()], math.erf),
    "ROUND": ((REALS,), [()], lambda x: float(round(x))),  # (half to even, as torch)
    "RELU": ((REALS,), [()], lambda x: max(x, 0.0)),
    "CLAMP": ((REALS,), [(-2.5, 3.5)], lambda x, lo, hi: min(max(x, lo), hi)),
    "CLAMP_MIN": ((REALS,), [(-2.5, None)], lambda x, lo, hi: max(x, lo)),
    "CLAMP_MAX": ((REALS,), [(None, 2.5)], lambda x, lo, hi: min(x, hi)),
    "CLAMP_TENSOR": ((REALS, REALS, REALS), [()], lambda x, lo, hi: min(max(x, lo), hi)),
    "CLAMP_MIN_TENSOR": ((REALS, REALS), [()], max),
    "CLAMP_MAX_TENSOR": ((REALS, REALS), [()], min),
    "COPY": ((REALS, REALS), [()], lambda x, src: src),
    "FILL": ((REALS,), [(2.5,)], lambda x, value: value),
    "ZERO": ((REALS,), [()], lambda x: 0.0),
    "ADD": ((REALS, REALS), [(1,), (0.375,)], lambda a, b, alpha: a + b * alpha),
    "ADD_SCALAR": ((REALS,), [(1.5, 1), (0.375, 2)], lambda a, other, alpha: a + other * alpha),
    "SUB_SCALAR": ((REALS,), [(1.5, 1), (0.375, 2)], lambda a, other, alpha: a - other * alpha),
    "SUB": ((REALS, REALS), [(1,), (0.375,)], lambda a, b, alpha: a - b * alpha),
    "RSUB": ((REALS,), [(2.5, 1), (2.5, 0.375)], lambda x, other, alpha: other - x * alpha),
    "RSUB_TENSOR": ((REALS, REALS), [(1,), (0.375,)], lambda a, b, alpha: b - a * alpha),
    "MUL": ((REALS, REALS), [()], lambda a, b: a * b),
    "MUL_SCALAR": ((REALS,), [(0.375,)], lambda x, other: x * other),
    "DIV": ((REALS, DIVISORS), [()], lambda a, b: a / b),
    "POW": ((POSITIVE,), [(2.5,), (-1.5,), (3,)], math.pow),
    "POW_TENSOR": ((POSITIVE, EXPONENTS), [()], math.pow),
    "POW_SCALAR_BASE": ((EXPONENTS,), [(2.5,)], lambda e, base: math.pow(base, e)),
    "ATAN2": ((REALS, REALS), [()], math.atan2),
    "ADDCMUL": ((REALS, REALS, REALS), [(0.375,)], lambda s, a, b, v: s + v * a * b),
    "ADDCDIV": ((REALS, REALS, DIVISORS), [(0.375,)], lambda s, a, b, v: s + v * a / b),
    "MAXIMUM": ((REALS, REALS), [()], max),
    "MINIMUM": ((REALS, REALS), [()], min),
    "WHERE": ((BOOLS, REALS, REALS), [()], lambda c, a, b: a if c else b),
    "MASKED_FILL": ((REALS, BOOLS), [(2.5,)], lambda x, mask, value: value if mask else x),
    "ANGLE": ((REALS,), [()], lambda x: math.pi if x < 0 else 0.0),
    "POLAR": ((POSITIVE, REALS), [()], lambda r, t: complex(r * math.cos(t), r * math.sin(t))),
    "LEAKY_RELU_BACKWARD": ((REALS, REALS), [(0.375, False)],
                            lambda g, x, slope, is_result: g if x > 0 else g * slope),
    "THRESHOLD_BACKWARD": ((REALS, REALS), [(0.0,)], lambda g, x, t: g if x > t else 0.0),
    "SILU": ((REALS,), [()], lambda x: x * _sigmoid(x)),
    "SOFTPLUS": ((REALS,), [(1.0, 20.0), (2.0, 5.0)], _softplus),
    "LEAKY_RELU": ((REALS,), [(0.375,)], lambda x, slope: x if x > 0 else x * slope),
    **{f"{n}_": ((REALS,), [(0.5,)], lambda x, other, c=c: float(c(x, other)))
       for n, c in _COMPARED.items()},
    **{f"{n}_TENSOR_": ((REALS, REALS), [()], lambda x, y, c=c: float(c(x, y)))
       for n, c in _COMPARED.items()},
    "HARDSHRINK": ((REALS,), [(0.5,)], lambda x, lambd: x if abs(x) > lambd else 0.0),
    "SOFTSHRINK": ((REALS,), [(0.5,)], lambda x, lambd: x - math.copysign(lambd, x)
                   if abs(x) > lambd else 0.0),
    "THRESHOLD": ((REALS,), [(0.5, -1.5)], lambda x, threshold, value: x if x > threshold
                  else value),
    "THRESHOLD_": ((REALS,), [(0.5, -1.5)], lambda x, threshold, value: x if x > threshold
                   else value),
    "CELU": ((REALS,), [(1.0,), (0.5,)], lambda x, alpha: _elu(x, alpha, 1.0, 1 / alpha)),
    "CELU_": ((REALS,), [(1.0,), (0.5,)], lambda x, alpha: _elu(x, alpha, 1.0, 1 / alpha)),
    "LEAKY_RELU_": ((REALS,), [(0.375,)], lambda x, slope: x if x > 0 else x * slope),
    "ELU": ((REALS,), [(1.0, 1.0, 1.0), (0.375, 1.5, 2.5)], _elu),
    "ELU_": ((REALS,), [(1.0, 1.0, 1.0)], _elu),
    "FLOOR": ((REALS,), [()], lambda x: float(math.floor(x))),
    "CEIL": ((REALS,), [()], lambda x: float(math.ceil(x))),
    "TRUNC": ((REALS,), [()], lambda x: float(math.trunc(x))),
    "FRAC": ((REALS,), [()], lambda x: x - math.trunc(x)),
    "LOG2": ((POSITIVE,), [()], math.log2),
    "LOG10": ((POSITIVE,), [()], math.log10),
    "EXP2": ((REALS,), [()], lambda x: 2.0 ** x),
    "HARDTANH": ((REALS,), [(-2.5, 3.5)], lambda x, lo, hi: min(max(x, lo), hi)),
    "HARDSIGMOID": ((REALS,), [()], lambda x: min(max(x / 6 + 0.5, 0.0), 1.0)),
    "HARDSWISH": ((REALS,), [()], lambda x: x * min(max(x / 6 + 0.5, 0.0), 1.0)),
    "MISH": ((REALS,), [()], lambda x: x * math.tanh(_softplus(x, 1.0, math.inf))),
    "PRELU": ((REALS, REALS), [()], lambda x, w: x if x > 0 else w * x),
    "LERP": ((REALS, REALS, UNIT), [()], lambda a, b, w: a + w * (b - a)),
    "LERP_SCALAR": ((REALS, REALS), [(0.375,), (0.75,)], lambda a, b, w: a + w * (b - a)),
    "REMAINDER": ((REALS, DIVISORS), [()], lambda a, b: a % b),  # (Python's %: exact)
    "REMAINDER_SCALAR": ((REALS,), [(1.5,), (-0.75,)], lambda a, b: a % b),
    "FMOD": ((REALS, DIVISORS), [()], math.fmod),
    "FMOD_SCALAR": ((REALS,), [(1.5,), (-0.75,)], math.fmod),
    "FILL_OUT": ((REALS,), [(2.5,)], lambda x, value: value),
    "LOGIT": ((REALS,), [(0.25,)], lambda x, eps: math.log(
        min(max(x, eps), 1 - eps) / (1 - min(max(x, eps), 1 - eps)))),
}
# torch.special's rows: the float64 reference is torch's own series (the engine's
# special_functions, on Python floats element by element) or math's; what is measured is the
# rounding to float32 and float16
from gradtool.engine.autograd import special_functions as sf  # noqa: E402

NORMAL_PROBABILITIES = ("uniform", 0.001, 0.999, (0.5, 0.25))
OFF_POLES = ("uniform", 0.001, 10.0, (0.5, -0.5, 1e-6, 1.0, -2.5))  # (digamma: NaN at -1, -2, ..)
REFERENCE.update({
    "I0": ((REALS,), [()], sf._i0),
    "SPECIAL_I0E": ((REALS,), [()], sf._i0e),
    "SPECIAL_I1": ((REALS,), [()], sf._i1),
    "SPECIAL_I1E": ((REALS,), [()], sf._i1e),
    "LGAMMA": ((POSITIVE,), [()], math.lgamma),
    "DIGAMMA": ((OFF_POLES,), [()], sf._digamma),
    "POLYGAMMA": ((POSITIVE,), [(1,), (2,)], lambda x, n: float(sf.polygamma(x, n))),
    "POLYGAMMA_": ((POSITIVE,), [(1,)], lambda x, n: float(sf.polygamma(x, n))),
    "MVLGAMMA": ((ABOVE_ONE,), [(2,)], lambda x, p: sum(math.lgamma(x - j / 2) for j in range(
        p)) + p * (p - 1) / 4 * math.log(math.pi)),
    "ERFC": ((REALS,), [()], math.erfc),
    "ERFINV": ((UNIT,), [()], sf._erfinv),
    "SPECIAL_ERFCX": ((REALS,), [()], sf._erfcx),
    "SPECIAL_NDTRI": ((NORMAL_PROBABILITIES,), [()], sf._ndtri),
    "SPECIAL_LOG_NDTR": ((REALS,), [()], sf._log_ndtr),
    "SINC": ((REALS,), [()], lambda x: math.sin(math.pi * x) / (math.pi * x) if x else 1.0),
    "SPECIAL_ENTR": ((POSITIVE,), [()], lambda x: -x * math.log(x)),
    "XLOGY": ((REALS, POSITIVE), [()], lambda x, y: x * math.log(y) if x else 0.0),
    "XLOGY_SCALAR_SELF": ((POSITIVE,), [(1.5,)], lambda y, x: x * math.log(y)),
    "XLOGY_SCALAR_OTHER": ((REALS,), [(3.0,)], lambda x, y: x * math.log(y) if x else 0.0),
    "SPECIAL_XLOG1PY": ((REALS, POSITIVE), [()], lambda x, y: x * math.log1p(y) if x else 0.0),
    "SPECIAL_XLOG1PY_SCALAR_SELF": ((POSITIVE,), [(1.5,)], lambda y, x: x * math.log1p(y)),
    "SPECIAL_XLOG1PY_SCALAR_OTHER": ((REALS,), [(3.0,)],
                                     lambda x, y: x * math.log1p(y) if x else 0.0),
    "SPECIAL_ZETA": ((ABOVE_ONE, POSITIVE), [()], sf._zeta),
    "SPECIAL_ZETA_SCALAR_SELF": ((POSITIVE,), [(2.5,)], lambda q, x: sf._zeta(x, q)),
    "IGAMMA": ((POSITIVE, POSITIVE), [()], sf._igamma),
    "IGAMMAC": ((POSITIVE, POSITIVE), [()], sf._igammac),
})
REFERENCE.update({
    "LOGADDEXP": ((REALS, REALS), [()],
                  lambda a, b: max(a, b) + math.log1p(math.exp(-abs(a - b)))),
    "LOGADDEXP2": ((REALS, REALS), [()],
                   lambda a, b: max(a, b) + math.log1p(2.0 ** -abs(a - b)) / math.log(2)),
    "HYPOT": ((REALS, REALS), [()], math.hypot),
    "COPYSIGN": ((REALS, REALS), [()], math.copysign),
    "COPYSIGN_SCALAR": ((REALS,), [(-2.0,), (0.0,)], math.copysign),
    "FMAX": ((REALS, REALS), [()], max),
    "FMIN": ((REALS, REALS), [()], min),
    "LDEXP": ((REALS, EXPONENTS), [()], lambda x, e: x * 2.0 ** e),
    "NAN_TO_NUM": ((REALS,), [(0.0, None, None), (1.5, 2.5, -2.5)], lambda x, *replaced: x),
})
# elementwise rows that are not a function to round
NOT_FUNCTIONS = {
    "NORMAL": "random draws", "NORMAL_TENSOR_FLOAT": "random draws",
    "NORMAL_FLOAT_TENSOR": "random draws", "NORMAL_TENSOR_TENSOR": "random draws",
    "UNIFORM": "random draws", "BERNOULLI": "random draws", "RANDOM": "random draws",
    "BERNOULLI_FILL": "random draws", "BERNOULLI_FILL_TENSOR": "random draws",
    "RANDOM_TO": "random draws", "RANDOM_FROM_TO": "random draws", "LOG_NORMAL": "random draws",
    "EXPONENTIAL": "random draws", "GEOMETRIC": "random draws", "CAUCHY": "random draws",
    "RRELU_WITH_NOISE": "random draws", "RRELU_WITH_NOISE_": "random draws",
    # torch defines it by its own arithmetic, nearbyint(x * 10^d) / 10^d in the tensor's
    # dtype, which numpy's computes as it does
    "ROUND_DECIMALS": "torch's float arithmetic",
    # x/2 (1 + erf(x/sqrt2)) (its float32 erf a polynomial within 1.5e-7) and the tanh form,
    # step by step in the tensor's dtype: 1 + erf cancels where x is very negative (gelu(-6)
    # is 0 in float32), which the engine's copy of torch's steps keeps (tests/parity)
    "GELU": "torch's float arithmetic",
    # floor division is fmod-based in the tensor's dtype (torch's div_floor_floating), as
    # numpy's floor_divide; trunc is the rounded quotient truncated
    "DIV_ROUNDED": "torch's float arithmetic",
    # the next number of the tensor's own dtype: exact by definition (tests/parity compares it)
    "NEXTAFTER": "a step to the next number of the dtype",
}


def elementwise_rows():
    return {name for name, spec in TABLE.items() if spec.jvp and spec.jvp[0] == "elementwise"}


def draw(domain, dtype, rng, n):
    """n inputs of `dtype` from `domain`, its special values first (all finite in dtype)."""
    if domain[0] == "bools":
        return rng.random(n) < 0.5
    kind, low, high, special = domain
    if kind == "uniform":
        x = rng.uniform(low, high, n)
    else:
        x = np.exp(rng.uniform(math.log(low), math.log(high), n))
    return np.concatenate([np.array(special), x]).astype(dtype)[:n]


def reference(fn, inputs, args):
    """fn on each element (Python floats: the float64 math of the inputs' exact values)."""
    values = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
    out = np.frompyfunc(lambda *xs: fn(*(float(x) if type(x) is not np.bool_ else bool(x)
                                         for x in xs), *args), len(values), 1)(*values)
    return np.array(out.tolist(), dtype=np.complex128 if isinstance(out.flat[0], complex)
                    else np.float64)


def ulp_errors(got, ref, dtype):
    """|got - ref| in units in the last place of `dtype` where ref lies (the gap between the
    two numbers of dtype around it): 0.5 at most for the correctly rounded value. Where the
    correctly rounded value is inf, 0 if got is it and inf otherwise."""
    if np.iscomplexobj(ref):
        return np.maximum(ulp_errors(got.real, ref.real, dtype),
                          ulp_errors(got.imag, ref.imag, dtype))
    with np.errstate(all="ignore"):  # (inf where the result overflows: decided below)
        return _ulp_errors(got, ref, dtype)


def _ulp_errors(got, ref, dtype):
    rounded = ref.astype(dtype)
    below = np.abs(rounded)  # the number of dtype at or below |ref|, then the gap above it
    below = np.where(below.astype(np.float64) > np.abs(ref),
                     np.nextafter(below, np.zeros((), dtype)), below)
    ulp = np.spacing(below).astype(np.float64)
    err = np.abs(got.astype(np.float64) - ref) / ulp
    overflow = ~np.isfinite(rounded)
    return np.where(overflow, np.where(got == rounded, 0.0, np.inf), err)


def measure(name, args, dtype, n=SAMPLES, seed=0):
    """The ulp errors of row `name` with `args` on n inputs of `dtype`, drawn by seed."""
    domains, _, fn = REFERENCE[name]
    rng = np.random.default_rng(seed)
    inputs = [draw(d, dtype, rng, n) for d in domains]
    out = TABLE[name](*(gt.tensor(x) for x in inputs), *args)
    got = out.detach().numpy()
    want = dtype if got.dtype.kind == "f" else np.dtype(np.complex64)
    assert got.dtype == want, f"{name}: {got.dtype}"
    return ulp_errors(got, reference(fn, inputs, args), dtype)


def test_every_elementwise_row_is_measured_or_is_not_a_function():
    assert elementwise_rows() == set(REFERENCE) | set(NOT_FUNCTIONS)


CASES = [(name, args) for name, (_, arg_sets, _) in sorted(REFERENCE.items())
         for args in arg_sets]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["float32", "float16"])
@pytest.mark.parametrize("name, args", CASES, ids=[f"{n}{list(a) if a else ''}" for n, a in CASES])
def test_elementwise_results_are_correctly_rounded(name, args, dtype):
    err = measure(name, args, np.dtype(dtype))
    worst = int(np.argmax(err))
    assert err[worst] <= BOUND, (
        f"{name}{args}: {err[worst]:.3g} ulps at input {worst}; "
        f"{np.mean(err > BOUND):.2%} of the inputs beyond half an ulp")


def test_relu_and_clamp_keep_negative_zero_and_cumsum_starts_from_positive_zero():
    x = gt.tensor([-1.0, -0.0, 0.0, 2.0])
    assert np.signbit(gt.relu(x).numpy()).tolist() == [False, True, False, False]
    assert np.signbit(x.clamp(min=0.0).numpy()).tolist() == [False, True, False, False]
    assert np.signbit(gt.tensor([0.0]).clamp(max=-0.0).numpy()).tolist() == [False]
    assert not np.signbit(gt.cumsum(gt.tensor([-0.0, -0.0]), 0).numpy()).any()
    assert np.signbit(gt.cumprod(gt.tensor([-0.0, -0.0]), 0).numpy()).tolist() == [True, False]


def test_float32_scans_accumulate_in_float64():
    x = np.random.default_rng(0).standard_normal((4, 500)).astype(np.float32)
    want = np.cumsum(x.astype(np.float64), 1).astype(np.float32)
    np.testing.assert_array_equal(gt.tensor(x).cumsum(1).numpy(), want)
    want = np.cumprod(x[:, :40].astype(np.float64), 1).astype(np.float32)
    np.testing.assert_array_equal(gt.tensor(x[:, :40]).cumprod(1).numpy(), want)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_follows_torchs_steps_where_one_plus_erf_cancels(approximate):
    x = np.array([-40.0, -10.0, -6.0, -3.0, -0.5, 0.0, 1.5, 8.0])
    exact = np.array([_exact_gelu(v, approximate) for v in x])
    for dtype, tail in ((gt.float32, 3), (gt.float64, 2)):  # (float32: -6 cancels too)
        out = gt.nn.functional.gelu(gt.tensor(x, dtype=dtype), approximate=approximate).numpy()
        assert (out[:tail] == 0).all()  # where x Phi(x) is 1e-8 or less
        # (float32's 1 + erf keeps a few digits at -3: its erf is within 1.5e-7)
        np.testing.assert_allclose(out[3:], exact[3:], rtol=1e-4 if tail == 3 else 1e-9)
    # the signs: x/2 (1 + erf) is -0.0, float32's fused x/2 + x/2 erf +0.0; tanh's -0.0
    f32 = gt.nn.functional.gelu(gt.tensor([-10.0]), approximate=approximate).numpy()
    assert np.signbit(f32[0]) == (approximate == "tanh")


def _exact_gelu(x, approximate):
    if approximate == "tanh":  # x (1 + tanh u) / 2 = x / (1 + exp(-2u))
        u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        return x / (1 + math.exp(-2 * u)) if u > -350 else -0.0
    return 0.5 * x * math.erfc(-x / math.sqrt(2))
