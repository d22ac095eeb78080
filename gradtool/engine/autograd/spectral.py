"""Short-time Fourier transforms (torch.stft, torch.istft, Tensor.stft/istft) and the window
functions (torch.hann_window, ...), as torch composes them (torch/functional.py and
SpectralOps.cpp): stft pads the signal (F.pad), cuts it into frames (an index, where torch's
as_strided view is), weighs them by the window and transforms each (FftR2CBackward0 or
FftC2CBackward0); istft inverts each frame (FftC2R/FftC2CBackward0) and overlap-adds them
(index_add, torch's unfold_backward), divided by the windows' summed squares. The nodes
recorded between the transforms are the engine's, the values and gradients torch's."""
import warnings

import numpy as np

from . import creation, dtypes
from .dispatch import call
from .free_functions import cat
from .grad_mode import no_grad
from .ops import derivatives as table

__all__ = ["stft", "istft", "hann_window", "hamming_window", "blackman_window",
           "bartlett_window", "kaiser_window"]


# ---- windows: float factories (the default dtype), periodic by default as torch's ----
def _window(name, window_length, periodic, dtype, requires_grad, values):
    """`values(N)`: the symmetric window of N points, as float64 numpy; a periodic window of
    length L is the symmetric one of L + 1 points without its last."""
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window length, got "
                           f"window_length={window_length}")
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        array = np.ones(window_length)
    else:
        array = values(window_length + 1)[:-1] if periodic else values(window_length)
    np_dtype = dtypes.DEFAULT_FLOAT if dtype is None else dtypes.to_numpy_dtype(dtype)
    return creation.tensor(array.astype(np_dtype), requires_grad=requires_grad)


def _cosine_sum(*coefficients):
    """sum_k (-1)^k a_k cos(2 pi k n / (N - 1)): the generalised cosine windows."""
    def values(N):
        phase = 2 * np.pi * np.arange(N) / (N - 1)
        return sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients))
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   _cosine_sum(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda N: 1 - np.abs(2 * np.arange(N) / (N - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    from .special_functions import i0  # (the modified Bessel function, torch's Cephes series)

    def values(N):
        alpha = (N - 1) / 2
        ratio = (np.arange(N) - alpha) / alpha
        return i0(beta * np.sqrt(np.maximum(1 - ratio * ratio, 0))) / i0(np.float64(beta))
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, values)


# ---- stft and istft ----
def _padded_window(window, n_fft, win_length, like):
    """The window centred in n_fft points by zeros (a rectangle of win_length ones if none)."""
    if window is None:
        if win_length == n_fft:
            return None
        window = creation.ones(win_length, dtype=dtypes.from_numpy_dtype(_real_dtype(like)))
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = call(table.CONSTANT_PAD_ND, (window,), ((left, n_fft - win_length - left), 0))
    return window


def _real_dtype(x):
    """The real dtype of x's precision (float64 for complex128)."""
    return np.dtype(x._data.real.dtype)


def _frame_index(n_frames, n_fft, hop_length):
    return creation.tensor(np.arange(n_frames)[:, None] * hop_length + np.arange(n_fft))


def _option(value):
    """An optional argument as torch's messages print it: None, or a bool as 0 or 1."""
    return "None" if value is None else str(int(value)) if isinstance(value, bool) else str(value)


def _legacy(x):
    return dtypes.LEGACY_TYPE_NAMES[x._data.dtype.name]


def _window_repr(window):
    return "None" if window is None else f"torch.{_legacy(window)}Tensor{{{list(window.shape)}}}"


def _repr(input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex,
          align_to_window):
    """torch's REPR of the stft call, which its error messages begin with."""
    return (f"stft(torch.{_legacy(input)}Tensor{list(input.shape)}, n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length}, window={_window_repr(window)}, "
            f"normalized={int(normalized)}, onesided={_option(onesided)}, "
            f"return_complex={_option(return_complex)}, "
            f"align_to_window={_option(align_to_window)}) ")


def _padded(x, pad, mode):
    """F.pad(x, [pad, pad], mode) of the (1, batch, length) signal, by F.pad's rows."""
    length = x.shape[-1]
    if mode == "constant":
        return call(table.CONSTANT_PAD_ND, (x,), ((pad, pad), 0))
    if mode == "reflect":
        if pad >= length:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({pad}, {pad}) at dimension 2 "
                               f"of input {list(x.shape)}")
        return call(table.REFLECTION_PAD1D, (x,), ((pad, pad),))
    if mode == "replicate":
        return call(table.REPLICATION_PAD1D, (x,), ((pad, pad),))
    if mode == "circular":
        if pad > length:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        return cat([x[..., length - pad:], x, x[..., :pad]], -1)
    raise NotImplementedError(f"Unrecognised padding mode {mode}")


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The Fourier transforms of the signal's frames, n_fft points every hop_length:
    (batch?, frequencies, frames), complex (or its view_as_real with return_complex=False)."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if align_to_window:
        from ..errors import NotInEngineError
        raise NotInEngineError("torch.stft(align_to_window=True)")
    if center:
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        input = _padded(input.view(extended), n_fft // 2, pad_mode)
        input = input.view(input.shape[-signal_dim:])
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    complex_input = input._data.dtype.kind == "c" or (
        window is not None and window._data.dtype.kind == "c")
    say = _repr(input, n_fft, hop_length, win_length, window, normalized, onesided,
                return_complex, align_to_window)
    if return_complex is None:
        if not complex_input:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(say + ": expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(say + ": expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(say + f": expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(say + f": expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(say + f": expected 0 < win_length <= n_fft, but got win_length="
                           f"{win_length}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(say + f": expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    window = _padded_window(window, n_fft, win_length, x)
    n_frames = 1 + (length - n_fft) // hop_length
    frames = x[:, _frame_index(n_frames, n_fft, hop_length)]  # (batch, frames, n_fft)
    if window is not None:
        frames = frames * window
    complex_fft = frames._data.dtype.kind == "c"
    onesided = (not complex_fft) if onesided is None else onesided
    normalization = 1 if normalized else 0
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = call(table.FFT_C2C, (frames,), ((2,), normalization, True))
    else:
        out = call(table.FFT_R2C, (frames,), ((2,), normalization, bool(onesided)))
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex else call(table.VIEW_AS_REAL, (out,))


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The signal whose stft is `input` (with the same window): each frame's inverse
    transform, overlap-added and divided by the sum of the squared windows under it."""
    given_window, given_onesided = window, onesided  # (for the message)
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if input._data.dtype.kind != "c":
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.numel() == 0:
        raise RuntimeError("istft input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected a tensor with 3 or 4 dimensions of shape (..., "
                           f"fft_size, n_frames, 2) but got a tensor of shape "
                           f"{list(input.shape) + [2]}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected = n_fft + hop_length * (n_frames - 1)
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got "
                           f"{fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError("istft expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError("istft expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError("Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    if window is None:
        window = creation.ones(win_length, dtype=dtypes.from_numpy_dtype(_real_dtype(input)))
    window = _padded_window(window, n_fft, win_length, input)
    x = input.unsqueeze(0) if input.dim() == 2 else input
    x = x.transpose(1, 2)  # (batch, frames, frequencies)
    normalization = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = call(table.FFT_C2C, (x,), ((2,), normalization, False))
    else:
        if window._data.dtype.kind == "c":
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = call(table.SLICE, (x,), (2, 0, n_fft // 2 + 1, 1))
        frames = call(table.FFT_C2R, (x,), ((2,), normalization, n_fft))
    y = _overlap_add(frames * window.view(1, 1, n_fft), expected, hop_length)
    with no_grad():
        envelope = _overlap_add((window * window).expand(1, n_frames, n_fft), expected,
                                hop_length)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else expected)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(
            f"istft(CPU{_legacy(input)}Type{list(input.shape)}, n_fft={n_fft}, hop_length="
            f"{hop_length}, win_length={win_length}, window={_window_repr(given_window)}, "
            f"center={int(center)}, normalized={int(normalized)}, onesided="
            f"{_option(given_onesided)}, length={_option(length)}, return_complex="
            f"{int(return_complex)}) window overlap add min: 1\n[ CPUBoolType{{}} ]")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        y = call(table.CONSTANT_PAD_ND, (y,), ((0, end - expected), 0))
    return y


def _overlap_add(frames, length, hop_length):
    """(batch, frames, n) -> (batch, length): frame k added at k * hop_length (torch's
    unfold_backward), through index_add on the real and imaginary parts as real numbers."""
    batch, n_frames, n = frames.shape
    index = _frame_index(n_frames, n, hop_length).reshape(-1)
    if frames._data.dtype.kind == "c":
        parts = call(table.VIEW_AS_REAL, (frames,)).reshape(batch, n_frames * n, 2)
        zeros = creation.zeros(batch, length, 2, dtype=parts.dtype)
        return call(table.VIEW_AS_COMPLEX, (zeros.index_add(1, index, parts),))
    zeros = creation.zeros(batch, length, dtype=frames.dtype)
    return zeros.index_add(1, index, frames.reshape(batch, n_frames * n))


class SpectralTensorMethods:
    """Tensor.stft and Tensor.istft are the functions."""
    stft = stft
    istft = istft

