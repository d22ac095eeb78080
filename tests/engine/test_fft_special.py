"""torch.fft, stft/istft, the windows and torch.special on the engine alone, beyond the op
sweep's gradients (tests/engine/test_op_gradients.py): round trips for every norm, the
transforms against numpy's, the frequency helpers and windows at known values, torch's
refusals, and the names of the family the engine lacks as clear errors. Their comparison with
torch itself is tests/parity/test_fft.py and tests/parity/test_special.py."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradtool.engine.errors import NotInEngineAttributeError

NORMS = [None, "backward", "ortho", "forward"]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), norm=st.sampled_from(NORMS),
       seed=st.integers(0, 2 ** 16))
def test_transforms_match_numpy_and_invert(shape, norm, seed):
    """Every transform is numpy's (whose norm= means the same), and each inverse undoes it."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    z = x + 1j * rng.standard_normal(shape)
    n = shape[-1]
    checks = [
        (gt.fft.fft(gt.tensor(z), norm=norm), np.fft.fft(z, norm=norm)),
        (gt.fft.ifft(gt.tensor(z), norm=norm), np.fft.ifft(z, norm=norm)),
        (gt.fft.fftn(gt.tensor(z), norm=norm), np.fft.fftn(z, norm=norm)),
        (gt.fft.ifftn(gt.tensor(x), norm=norm), np.fft.ifftn(x, norm=norm)),
        (gt.fft.rfft(gt.tensor(x), norm=norm), np.fft.rfft(x, norm=norm)),
        (gt.fft.rfftn(gt.tensor(x), norm=norm), np.fft.rfftn(x, norm=norm)),
        (gt.fft.ihfft(gt.tensor(x), norm=norm), np.fft.ihfft(x, norm=norm)),
        (gt.fft.irfft(gt.fft.rfft(gt.tensor(x), norm=norm), n, norm=norm), x),
        (gt.fft.irfftn(gt.fft.rfftn(gt.tensor(x), norm=norm), shape, norm=norm), x),
        (gt.fft.hfft(gt.fft.ihfft(gt.tensor(x), norm=norm), n, norm=norm), x),
        (gt.fft.hfftn(gt.fft.ihfftn(gt.tensor(x), norm=norm), shape, norm=norm), x),
        (gt.fft.ifftn(gt.fft.fftn(gt.tensor(z), norm=norm), norm=norm), z),
    ]
    for mine, expected in checks:
        np.testing.assert_allclose(mine.numpy(), expected, rtol=1e-10, atol=1e-10)


def test_float32_gives_complex64_and_integers_the_default_dtype():
    assert gt.fft.rfft(gt.ones(4)).dtype == gt.complex64
    assert gt.fft.fft(gt.arange(4)).dtype == gt.complex64
    assert gt.fft.irfft(gt.ones(3, dtype=gt.complex128)).dtype == gt.float64
    assert gt.fft.fft2(gt.ones(2, 2, dtype=gt.float64)).dtype == gt.complex128


def test_rfft_gradient_counts_the_mirrored_bins_twice():
    """|rfft(x)|^2 summed counts each bin once, where Parseval counts the mirrored ones twice:
    the gradient is 2 x n weighted by how often each frequency appears in the half."""
    x = gt.tensor([1.0, 2.0, -1.0, 0.5], dtype=gt.float64, requires_grad=True)
    (gt.fft.irfft(gt.fft.rfft(x), 4) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_frequencies_and_shifts():
    np.testing.assert_allclose(gt.fft.fftfreq(5, 0.5).numpy(), np.fft.fftfreq(5, 0.5), 1e-7)
    np.testing.assert_allclose(gt.fft.rfftfreq(8, dtype=gt.float64).numpy(), np.fft.rfftfreq(8))
    a = np.arange(12).reshape(3, 4)
    assert gt.fft.fftshift(gt.tensor(a)).tolist() == np.fft.fftshift(a).tolist()
    assert gt.fft.ifftshift(gt.tensor(a), 1).tolist() == np.fft.ifftshift(a, 1).tolist()


@pytest.mark.parametrize("call, message", [
    (lambda: gt.fft.fft(gt.ones(4), n=0), "Invalid number of data points (0) specified"),
    (lambda: gt.fft.fft(gt.ones(4), norm="both"), 'Invalid normalization mode: "both"'),
    (lambda: gt.fft.rfft(gt.ones(4, dtype=gt.complex64)),
     "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda: gt.fft.fftn(gt.ones(2, 2), dim=(1, -1)), "FFT dims must be unique"),
    (lambda: gt.fft.fft(gt.ones(4, dtype=gt.float16)), "Unsupported dtype Half"),
])
def test_fft_refusals_in_torchs_words(call, message):
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_windows_at_known_values():
    np.testing.assert_allclose(gt.hann_window(4).numpy(), [0, 0.5, 1, 0.5], atol=1e-7)
    np.testing.assert_allclose(gt.hann_window(5, periodic=False).numpy(),
                               [0, 0.5, 1, 0.5, 0], atol=1e-7)
    np.testing.assert_allclose(gt.bartlett_window(5, False).numpy(), [0, 0.5, 1, 0.5, 0])
    np.testing.assert_allclose(gt.hamming_window(3, False, dtype=gt.float64).numpy(),
                               [0.08, 1.0, 0.08])
    np.testing.assert_allclose(gt.blackman_window(3, False, dtype=gt.float64).numpy(),
                               [0, 1, 0], atol=1e-15)
    kaiser = gt.kaiser_window(5, False, beta=2.0, dtype=gt.float64).numpy()
    np.testing.assert_allclose(kaiser, np.kaiser(5, 2.0), rtol=1e-14)
    assert gt.hann_window(1).tolist() == [1.0] and gt.hann_window(0).shape == (0,)
    assert gt.hann_window(8, requires_grad=True).requires_grad


@pytest.mark.parametrize("center, onesided, window", [(True, None, True), (False, None, True),
                                                      (True, False, True), (True, None, False)])
def test_istft_inverts_stft(center, onesided, window):
    x = gt.tensor(np.random.default_rng(0).standard_normal((2, 64)), requires_grad=True)
    w = gt.hann_window(16, dtype=gt.float64) if window else None
    if not center and window:
        w = w + 0.1  # (a window zero at its ends cannot be undone uncentred)
    spectrum = x.stft(16, 4, window=w, center=center, onesided=onesided, return_complex=True)
    back = gt.istft(spectrum, 16, 4, window=w, center=center, onesided=onesided, length=64)
    np.testing.assert_allclose(back.detach().numpy(), x.detach().numpy(), atol=1e-12)
    (g,) = gt.autograd.grad(back.sum(), x)  # the round trip is the identity: so is its gradient
    np.testing.assert_allclose(g.numpy(), np.ones((2, 64)), atol=1e-12)


def test_stft_needs_return_complex_for_real_input():
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter"):
        gt.stft(gt.ones(32), 8)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        out = gt.stft(gt.ones(32, dtype=gt.float64), 8, return_complex=False)
    assert out.shape == (5, 17, 2) and out.dtype == gt.float64


def test_special_values_at_their_edges():
    s = gt.special
    x = gt.tensor([0.0, 1.0, -1.0, 2.0], dtype=gt.float64)
    assert s.i0(x)[0].item() == 1.0 and s.i1(x)[0].item() == 0.0
    assert s.digamma(gt.tensor([0.0, -0.0, -2.0])).tolist()[:2] == [-math.inf, math.inf]
    assert math.isnan(s.digamma(gt.tensor([-2.0])).item())
    assert s.ndtri(gt.tensor([0.0, 0.5, 1.0], dtype=gt.float64)).tolist() == [-math.inf, 0.0,
                                                                              math.inf]
    assert s.erfinv(gt.tensor([1.0, -1.0])).tolist() == [math.inf, -math.inf]
    assert s.xlogy(gt.tensor([0.0]), gt.tensor([0.0])).item() == 0.0
    assert math.isnan(s.xlogy(gt.tensor([0.0]), gt.tensor([math.nan])).item())
    assert s.entr(gt.tensor([0.0, -1.0])).tolist() == [0.0, -math.inf]
    assert s.sinc(gt.tensor([0.0])).item() == 1.0
    assert s.zeta(gt.tensor([2.0], dtype=gt.float64), 1.0).item() == pytest.approx(
        math.pi ** 2 / 6, rel=1e-15)
    # (trigamma is torch's asymptotic series, good to 1e-9 at 1: torch's value, not the limit)
    assert s.polygamma(1, gt.tensor([1.0], dtype=gt.float64)).item() == pytest.approx(
        math.pi ** 2 / 6, rel=1e-9)
    assert s.multigammaln(gt.tensor([2.5], dtype=gt.float64), 1).item() == pytest.approx(
        math.lgamma(2.5), rel=1e-15)


def test_zeros_of_xlogy_pass_no_gradient_where_the_log_is_not_finite():
    """torch's masked_fill: d/dx x log y is log y, except where x is 0 and y <= 0."""
    x = gt.tensor([0.0, 0.0, 1.0], requires_grad=True)
    gt.xlogy(x, gt.tensor([0.0, 2.0, 2.0])).sum().backward()
    assert x.grad.tolist() == pytest.approx([0.0, math.log(2), math.log(2)])


def test_i1_gradient_at_zero_is_one_half():
    x = gt.tensor([0.0], dtype=gt.float64, requires_grad=True)
    (gt.special.i1(x) + gt.special.i1e(x)).backward()
    assert x.grad.item() == 1.0


@pytest.mark.parametrize("fn, what", [
    (lambda x: gt.special.zeta(x, 1.5), "zeta"),
    (lambda x: gt.special.zeta(x, gt.tensor([1.5])), "zeta"),
    (lambda x: gt.special.gammainc(x, gt.tensor([1.5])), "igamma: input"),
    (lambda x: gt.igammac(x, gt.tensor([1.5])), "igammac: input"),
])
def test_no_gradient_in_the_first_argument_of_zeta_and_the_incomplete_gammas(fn, what):
    """(torch differentiates them in their second argument only)"""
    with pytest.raises(NotImplementedError, match=f"the derivative for '{what}' is not "
                                                  "implemented"):
        fn(gt.tensor([2.0], requires_grad=True)).sum().backward()


def test_incomplete_gammas_at_known_values():
    a, x = gt.tensor([1.0, 0.5, 2.0], dtype=gt.float64), gt.tensor([2.0, 3.0, 0.0],
                                                                   dtype=gt.float64)
    p = gt.special.gammainc(a, x).tolist()
    assert p[0] == pytest.approx(1 - math.exp(-2), rel=1e-15)  # P(1, x) = 1 - e^-x
    assert p[1] == pytest.approx(math.erf(math.sqrt(3)), rel=1e-15)  # P(1/2, x) = erf(sqrt x)
    assert p[2] == 0.0
    q = gt.special.gammaincc(a, x).tolist()
    assert [pi + qi for pi, qi in zip(p, q)] == pytest.approx([1, 1, 1], rel=1e-15)


def test_bessel_functions_record_no_gradient():
    y = gt.special.bessel_j0(gt.tensor([1.0], requires_grad=True))
    assert not y.requires_grad and y.grad_fn is None
    assert y.item() == pytest.approx(0.7651976865579666, rel=1e-7)


def test_special_names_the_engine_lacks_are_clear_errors():
    with pytest.raises(NotInEngineAttributeError, match="torch.special.not_a_function"):
        gt.special.not_a_function
