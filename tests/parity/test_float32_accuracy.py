"""gradtool's float32 elementwise functions are at least as accurate as torch's: on the same
inputs, no more of gradtool's results differ from the correctly rounded value than torch's
do (the value computed in float64 and rounded once: correct but for about 2^-29 of inputs).
tests/engine/test_float_accuracy.py measures gradtool's alone, in ulps, against math."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402

pytestmark = pytest.mark.parity

N = 100_000
REALS, POSITIVE, UNIT, ABOVE_ONE = (-10, 10), (1e-3, 1e3), (-0.999, 0.999), (1, 100)


def _draw(rng, domain):
    low, high = domain
    if domain is POSITIVE:
        return np.exp(rng.uniform(np.log(low), np.log(high), N)).astype(np.float32)
    return rng.uniform(low, high, N).astype(np.float32)


# name: (the domain of each input, the function on either library's module)
FUNCTIONS = {
    "exp": ((REALS,), lambda m, x: m.exp(x)),
    "log": ((POSITIVE,), lambda m, x: m.log(x)),
    "log1p": ((POSITIVE,), lambda m, x: m.log1p(x)),
    "expm1": ((REALS,), lambda m, x: m.expm1(x)),
    "rsqrt": ((POSITIVE,), lambda m, x: m.rsqrt(x)),
    "sin": ((REALS,), lambda m, x: m.sin(x)),
    "cos": ((REALS,), lambda m, x: m.cos(x)),
    "tan": ((REALS,), lambda m, x: m.tan(x)),
    "tanh": ((REALS,), lambda m, x: m.tanh(x)),
    "sigmoid": ((REALS,), lambda m, x: m.sigmoid(x)),
    "asin": ((UNIT,), lambda m, x: m.asin(x)),
    "acos": ((UNIT,), lambda m, x: m.acos(x)),
    "atan": ((REALS,), lambda m, x: m.atan(x)),
    "asinh": ((REALS,), lambda m, x: m.asinh(x)),
    "acosh": ((ABOVE_ONE,), lambda m, x: m.acosh(x)),
    "atanh": ((UNIT,), lambda m, x: m.atanh(x)),
    "atan2": ((REALS, REALS), lambda m, y, x: m.atan2(y, x)),
    "pow": ((POSITIVE, (-3, 3)), lambda m, x, e: m.pow(x, e)),
    "silu": ((REALS,), lambda m, x: m.nn.functional.silu(x)),
    "softplus": ((REALS,), lambda m, x: m.nn.functional.softplus(x)),
    "elu": ((REALS,), lambda m, x: m.nn.functional.elu(x)),
    "addcmul": ((REALS, REALS, REALS), lambda m, s, a, b: m.addcmul(s, a, b, value=0.375)),
    "add alpha": ((REALS, REALS), lambda m, a, b: m.add(a, b, alpha=0.375)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_results_are_correctly_rounded_at_least_as_often_as_torchs(name):
    domains, fn = FUNCTIONS[name]
    rng = np.random.default_rng(0)
    xs = [_draw(rng, d) for d in domains]
    exact = fn(torch, *(torch.tensor(x, dtype=torch.float64) for x in xs)).numpy()
    rounded = exact.astype(np.float32)
    mine = fn(gt, *(gt.tensor(x) for x in xs)).numpy()
    theirs = fn(torch, *(torch.tensor(x) for x in xs)).numpy()
    assert mine.dtype == theirs.dtype == np.float32
    off_mine, off_theirs = np.mean(mine != rounded), np.mean(theirs != rounded)
    assert off_mine <= off_theirs, (f"{name}: {off_mine:.2%} of gradtool's results are not "
                                    f"the correctly rounded value, {off_theirs:.2%} of torch's")


def _discretized_gaussian_nll(m, x, means, log_scales):
    """A diffusion model's decoder loss: the negative log-likelihood of 8-bit data under a
    Gaussian, from differences of a tanh-approximated normal CDF (run in float32, as its
    users run it: the CDFs' differences cancel, so every rounding counts)."""
    def cdf(v):
        return 0.5 * (1.0 + m.tanh(np.sqrt(2.0 / np.pi) * (v + 0.044715 * m.pow(v, 3))))
    centered = x - means
    inv_stdv = m.exp(-log_scales)
    cdf_plus = cdf(inv_stdv * (centered + 1.0 / 255.0))
    cdf_min = cdf(inv_stdv * (centered - 1.0 / 255.0))
    log_cdf_plus = m.log(cdf_plus.clamp(min=1e-12))
    log_one_minus_cdf_min = m.log((1.0 - cdf_min).clamp(min=1e-12))
    cdf_delta = cdf_plus - cdf_min
    log_probs = m.where(x < -0.999, log_cdf_plus,
                        m.where(x > 0.999, log_one_minus_cdf_min,
                                m.log(cdf_delta.clamp(min=1e-12))))
    return -log_probs.mean()


def test_a_float32_diffusion_loss_is_as_accurate_as_torchs():
    """The gradients of a float32 loss whose every rounding counts: gradtool's are no farther
    from the float64 answer than torch's (relative to the largest), and the two agree."""
    rng = np.random.default_rng(0)
    x = (rng.integers(0, 256, 4096) / 127.5 - 1.0)
    # scales where the CDFs' differences are a few percent: rounding decides their digits
    means = x + rng.normal(0, 0.1, x.shape)
    log_scales = rng.uniform(-1.5, -0.5, x.shape)

    def grads(m, dtype):
        leaves = [m.tensor(a, dtype=dtype, requires_grad=True) for a in (means, log_scales)]
        _discretized_gaussian_nll(m, m.tensor(x, dtype=dtype), *leaves).backward()
        return np.concatenate([leaf.grad.detach().numpy().astype(np.float64)
                               for leaf in leaves])

    exact = grads(torch, torch.float64)
    scale = np.abs(exact).max()
    ours = np.abs(grads(gt, gt.float32) - exact).max() / scale
    theirs = np.abs(grads(torch, torch.float32) - exact).max() / scale
    assert ours <= max(2 * theirs, 1e-5), (ours, theirs)


# where torch's arithmetic is not the correctly rounded value's, the engine follows its steps
GELU_INPUTS = np.concatenate([np.linspace(-40, 40, 4001), [0.0, -0.0, np.inf, -np.inf],
                              np.random.default_rng(0).standard_normal(2000) * 3])


def _same_bits(a, b):
    """Where two results are the same number, with the same sign (NaNs alike)."""
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


def test_float16_gelu_is_torchs_bit_for_bit():
    """float16's (and bfloat16's) kernel: x/2 (1 + erf) in float32, no fused add, whose tails
    are -0.0 (float32's fused add gives +0.0)."""
    x = GELU_INPUTS.astype(np.float16)
    mine, theirs = (lib.nn.functional.gelu(lib.tensor(x)).numpy() for lib in (gt, torch))
    assert _same_bits(mine, theirs).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_follows_torchs_arithmetic(dtype, approximate):
    def run(lib):
        x = lib.tensor(GELU_INPUTS, dtype=getattr(lib, dtype))
        return lib.nn.functional.gelu(x, approximate=approximate).numpy()
    mine, theirs = run(gt), run(torch)
    same = _same_bits(mine, theirs)
    # where 1 + erf or 1 + tanh cancels to zero (x below -5.4 in float32), both give 0, signed
    # as torch's: -0.0, or +0.0 from float32's fused x/2 + x/2 erf
    tails = GELU_INPUTS < (-5.5 if dtype == "float32" else -8.5)
    assert same[tails].all()
    # elsewhere an ulp of torch's erf or tanh (Sleef's, or float32's erf polynomial) from the
    # engine's, which 1 + erf or 1 + tanh magnifies where it nearly cancels
    assert np.mean(~same) < 0.06
    away = np.abs(theirs) > 1e-3
    np.testing.assert_allclose(mine[away], theirs[away], rtol=4e-6 if dtype == "float32"
                               else 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_and_cumsum_sign_zeros_as_torch(dtype):
    x = np.array([-1.0, -0.0, 0.0, np.nan, -0.0, 2.0])
    for fn in (lambda m, t: m.relu(t), lambda m, t: t.clamp(min=0.0), lambda m, t: t.clamp(
            max=-0.0), lambda m, t: m.nn.functional.relu(t.clone(), inplace=True),
               lambda m, t: m.cumsum(m.zeros_like(t) - 0.0, 0), lambda m, t: t.cumprod(0)):
        mine, theirs = (fn(m, m.tensor(x, dtype=getattr(m, dtype))).numpy() for m in (gt, torch))
        assert _same_bits(mine, theirs).all(), (mine, theirs)


def test_float32_scans_accumulate_as_torchs():
    x = np.random.default_rng(0).standard_normal((40, 300)).astype(np.float32)
    for fn in (lambda m, t: m.cumsum(t, 1), lambda m, t: t.cumsum(0),
               lambda m, t: (t / 2 + 0.75).cumprod(1)):
        mine, theirs = (fn(m, m.tensor(x)).numpy() for m in (gt, torch))
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_scans_accumulate_in_float32_as_torchs(dtype):
    # 1 + 2^-24 is 1 in float32 and exact in float64: the sum's last entry tells them apart
    x = np.array([1.0, 2.0 ** -24, -1.0])
    mine, theirs = (m.tensor(x, dtype=getattr(m, dtype)).cumsum(0).float().numpy()
                    for m in (gt, torch))
    np.testing.assert_array_equal(mine, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(mine, theirs)
    x = np.random.default_rng(0).standard_normal((40, 300)).astype(np.float32)
    for fn in (lambda m, t: m.cumsum(t, 1), lambda m, t: t.cumsum(0),
               lambda m, t: (t / 2 + 0.75).cumprod(1)):
        mine, theirs = (fn(m, m.tensor(x).to(getattr(m, dtype))).float().numpy()
                        for m in (gt, torch))
        np.testing.assert_array_equal(mine, theirs)
