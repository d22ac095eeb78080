"""W10: a spectral convolution, the layer of a Fourier neural operator, forward and backward:
rfft2 of the input (batch 16, 8 channels, 64x64, float32), its 12x12 lowest frequencies at
both ends of the first axis mixed across channels by complex weights (built from two real
weight tensors), the rest zero, irfft2 back; the gradients of the input and of both weight
tensors for a fixed cotangent. Written once with torch's API (torch.fft, torch.complex,
cat, F.pad); numpy's column is the same layer with the backward by hand (the adjoint
transforms, the doubled bins of the half spectrum): the limit."""
import numpy as np

from workloads import Case, Prepared, to_numpy

BATCH, CHANNELS, SIZE, MODES = 16, 8, 64, 12
HALF = SIZE // 2 + 1  # rfft's bins along the last axis


def _arrays(seed=11):
    rng = np.random.default_rng(seed)
    scale = 1 / (CHANNELS * CHANNELS)
    w_re, w_im = (scale * rng.random((2, CHANNELS, CHANNELS, MODES, MODES))).astype(np.float32)
    x = rng.standard_normal((BATCH, CHANNELS, SIZE, SIZE)).astype(np.float32)
    cotangent = rng.standard_normal((BATCH, CHANNELS, SIZE, SIZE)).astype(np.float32)
    return x, w_re, w_im, cotangent


def spectral_conv(m, x, w_re, w_im):
    """The layer on a framework `m` (torch or gradtool)."""
    spectrum = m.fft.rfft2(x)
    weight = m.complex(w_re, w_im).unsqueeze(0)  # (1, in, out, modes, modes)

    def mix(block):  # (batch, in, modes, modes) -> (batch, out, modes, modes)
        return (block.unsqueeze(2) * weight).sum(1)
    top, bottom = mix(spectrum[:, :, :MODES, :MODES]), mix(spectrum[:, :, -MODES:, :MODES])
    middle = m.zeros(BATCH, CHANNELS, SIZE - 2 * MODES, MODES, dtype=top.dtype)
    kept = m.cat([top, middle, bottom], 2)
    full = m.nn.functional.pad(kept, (0, HALF - MODES))
    return m.fft.irfft2(full, s=(SIZE, SIZE))


def numpy_spectral_conv(x, w_re, w_im, grad_out, lap):
    """Forward | backward by hand: [dx, dw_re, dw_im]."""
    weight = (w_re + 1j * w_im).astype(np.complex64)
    spectrum = np.fft.rfft2(x).astype(np.complex64)
    blocks = [spectrum[:, :, :MODES, :MODES], spectrum[:, :, -MODES:, :MODES]]
    mixed = [np.einsum("bixy,ioxy->boxy", b, weight) for b in blocks]
    full = np.zeros((BATCH, CHANNELS, SIZE, HALF), np.complex64)
    full[:, :, :MODES, :MODES], full[:, :, -MODES:, :MODES] = mixed
    np.fft.irfft2(full, s=(SIZE, SIZE)).astype(np.float32)
    lap()
    # irfft2's adjoint: rfft2 scaled by 1/n, the bins standing for two counted twice
    g_full = np.fft.rfft2(grad_out) / (SIZE * SIZE)
    g_full[..., 1:SIZE - HALF + 1] *= 2
    g_blocks = [g_full[:, :, :MODES, :MODES], g_full[:, :, -MODES:, :MODES]]
    d_weight = sum(np.einsum("boxy,bixy->ioxy", g, np.conj(b))
                   for g, b in zip(g_blocks, blocks))
    d_spectrum = np.zeros((BATCH, CHANNELS, SIZE, SIZE), np.complex64)
    for rows, g in zip((slice(0, MODES), slice(SIZE - MODES, SIZE)), g_blocks):
        d_spectrum[:, :, rows, :MODES] = np.einsum("boxy,ioxy->bixy", g, np.conj(weight))
    # rfft2's adjoint: the unscaled inverse of the spectrum with its dropped half zero
    dx = np.real(np.fft.ifft2(d_spectrum, norm="forward")).astype(np.float32)
    return [dx, d_weight.real.astype(np.float32), d_weight.imag.astype(np.float32)]


def _setup(backend):
    x0, w_re0, w_im0, g0 = _arrays()
    if backend.module is None:
        out = []

        def run(lap):
            out[:] = numpy_spectral_conv(x0, w_re0, w_im0, g0, lap)
        return Prepared(run, lambda: out)
    m = backend.module
    x, w_re, w_im = (m.tensor(a.copy(), requires_grad=True) for a in (x0, w_re0, w_im0))
    grad = m.tensor(g0.copy())

    def run(lap):
        for t in (x, w_re, w_im):
            t.grad = None
        y = spectral_conv(m, x, w_re, w_im)
        lap()
        y.backward(grad)
    return Prepared(run, lambda: [to_numpy(t.grad) for t in (x, w_re, w_im)])


def fft_cases():
    return [Case(name="W10/spectral_conv", group="W10",
                 label=f"W10 spectral conv {BATCH}x{CHANNELS}x{SIZE}x{SIZE}, {MODES} modes, "
                       f"fwd+bwd",
                 setup=_setup, unit="ms", phases=("fwd", "bwd"), budget=3.0, min_repeats=3,
                 max_repeats=9, rtol=1e-3, atol=1e-4)]
