"""torch.fft, under torch's module name: every transform is one of the op table's three
(FftR2CBackward0, FftC2CBackward0, FftC2RBackward0, in derivatives.py) after torch's own
preparation of its input (SpectralOps.cpp): an integer input made the default float dtype, a
real one made complex (ToCopyBackward0) where the transform needs it, `n`/`s` met by slicing
(SliceBackward0) or zero padding (ConstantPadNdBackward0), and the inverse of a real input
the conjugate of its forward transform (ConjBackward0). So the recorded graph is torch's."""
import numpy as np

from .autograd import dtypes
from .autograd.creation import arange
from .autograd.dispatch import call
from .autograd.ops import derivatives as table
from .autograd.out_argument import (check_factory_dtype, given_out,
                                     written_as_arange_writes)
from .autograd.tensor import _dim
from .errors import missing_attribute

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

# how a transform is scaled (torch's fft_norm_mode): not, by 1/sqrt(n), by 1/n
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _normalization(norm, forward):
    """torch's norm_from_string: `norm` names the forward transform's scaling; the inverse
    takes the complementary one, so that the pair is the identity."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promoted(x, complex=False):
    """torch's promote_tensor_fft: integers become the default float dtype; floats other
    than float32 and float64 are refused (torch's CPU build has no half-precision FFT);
    `complex` makes the result complex (a real input through ToCopyBackward0)."""
    kind = x._data.dtype.kind
    if kind == "c":
        return x
    real = x._data.dtype if kind == "f" else dtypes.DEFAULT_FLOAT
    if real not in (np.float32, np.float64):
        raise RuntimeError(f"Unsupported dtype {dtypes.LEGACY_TYPE_NAMES[real.name]}")
    if complex:
        real = np.complex64 if real == np.float32 else np.complex128
    return x if x._data.dtype == real else x.to(dtypes.from_numpy_dtype(np.dtype(real)))


def _resized(x, dims, sizes):
    """torch's resize_fft_input: each dim in `dims` cut (a slice) or zero padded (one
    constant_pad_nd for all) to its size."""
    pad = [0] * (2 * x.dim())
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = call(table.SLICE, (x,), (d, 0, n, 1))
        elif have < n:
            pad[len(pad) - 2 * d - 1] = n - have
    return call(table.CONSTANT_PAD_ND, (x,), (pad, 0)) if any(pad) else x


def _checked_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _r2c(x, n, dim, norm, forward, onesided):
    x = _promoted(x)
    d = _dim(dim, x.dim())
    if n is not None:
        x = _resized(x, [d], [_checked_n(n)])
    _checked_n(x.shape[d])
    out = call(table.FFT_R2C, (x,), ((d,), _normalization(norm, forward), onesided))
    return out if forward else out.conj()  # (an inverse: the conjugate of the forward's)


def _c2c(x, dims, sizes, norm, forward):
    x = _resized(_promoted(x, complex=True), dims, sizes)
    return call(table.FFT_C2C, (x,), (tuple(dims), _normalization(norm, forward), forward))


def _c2r(x, n, dim, norm, forward):
    x = _promoted(x, complex=True)
    d = _dim(dim, x.dim())
    n = _checked_n(2 * (x.shape[d] - 1) if n is None else n)
    x = _resized(x, [d], [n // 2 + 1])
    if forward:  # (hfft: the inverse transform of the conjugate)
        x = x.conj()
    return call(table.FFT_C2R, (x,), ((d,), _normalization(norm, forward), n))


def _shape_and_dims(x, s, dim):
    """torch's canonicalize_fft_shape_and_dim_args: the dims transformed and their sizes."""
    ndim = x.dim()
    if dim is not None:
        dims = [_dim(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dim is None:  # the last len(s) dims
            dims = list(range(ndim - len(s), ndim))
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dim is None:
        dims = list(range(ndim))
        sizes = list(x.shape)
    else:
        sizes = [x.shape[d] for d in dims]
    for n in sizes:
        _checked_n(n)
    return dims, sizes


def _real_input(name, x, words="real"):
    if x._data.dtype.kind == "c":
        raise RuntimeError(f"{name} expects a {words} input tensor, but got "
                           f"{dtypes.LEGACY_TYPE_NAMES[x._data.dtype.name]}")


def fft(input, n=None, dim=-1, norm=None):
    """The 1-D discrete Fourier transform along `dim` (`n` points: cut or zero padded)."""
    if input._data.dtype.kind == "c":
        d = _dim(dim, input.dim())
        return _c2c(input, [d], [_checked_n(input.shape[d] if n is None else n)], norm, True)
    return _r2c(input, n, dim, norm, forward=True, onesided=False)


def ifft(input, n=None, dim=-1, norm=None):
    """The inverse of fft."""
    if input._data.dtype.kind == "c":
        d = _dim(dim, input.dim())
        return _c2c(input, [d], [_checked_n(input.shape[d] if n is None else n)], norm, False)
    return _r2c(input, n, dim, norm, forward=False, onesided=False)


def fftn(input, s=None, dim=None, norm=None):
    """The N-D transform over `dim` (all dims, or the last len(s))."""
    dims, sizes = _shape_and_dims(input, s, dim)
    return _c2c(input, dims, sizes, norm, True)


def ifftn(input, s=None, dim=None, norm=None):
    """The inverse of fftn."""
    dims, sizes = _shape_and_dims(input, s, dim)
    return _c2c(input, dims, sizes, norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return ifftn(input, s, dim, norm)


def rfft(input, n=None, dim=-1, norm=None):
    """The transform of a real signal: the n // 2 + 1 frequencies that are not the conjugates
    of others."""
    _real_input("rfft", input)
    return _r2c(input, n, dim, norm, forward=True, onesided=True)


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of rfft: a real signal of `n` points (default 2 * (input.size(dim) - 1))."""
    return _c2r(input, n, dim, norm, forward=False)


def hfft(input, n=None, dim=-1, norm=None):
    """The transform of a signal with Hermitian symmetry (given by its first half): real."""
    return _c2r(input, n, dim, norm, forward=True)


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of hfft: the first half of a real signal's inverse transform."""
    _real_input("ihfft", input)
    return _r2c(input, n, dim, norm, forward=False, onesided=True)


def rfftn(input, s=None, dim=None, norm=None):
    """rfft over several dims: onesided in the last of them."""
    _real_input("rfftn", input, "real-valued")
    dims, sizes = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resized(_promoted(input), dims, sizes)
    return call(table.FFT_R2C, (x,), (tuple(dims), _normalization(norm, True), True))


def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of rfftn; the last dim's output size is s[-1], default
    2 * (input.size(dim[-1]) - 1)."""
    dims, sizes = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    last = 2 * (input.shape[dims[-1]] - 1) if s is None or list(s)[-1] == -1 else sizes[-1]
    _checked_n(last)
    x = _resized(_promoted(input, complex=True), dims, sizes[:-1] + [last // 2 + 1])
    return call(table.FFT_C2R, (x,), (tuple(dims), _normalization(norm, False), last))


def hfftn(input, s=None, dim=None, norm=None):
    """hfft over several dims: forward transforms over all but the last, then the last's
    Hermitian one (real output, s[-1] long)."""
    dims, sizes = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("hfftn must transform at least one axis")
    last = 2 * (input.shape[dims[-1]] - 1) if s is None or list(s)[-1] == -1 else sizes[-1]
    _checked_n(last)
    x = _resized(_promoted(input, complex=True), dims, sizes[:-1] + [last // 2 + 1])
    normalization = _normalization(norm, True)
    if len(dims) > 1:
        x = call(table.FFT_C2C, (x,), (tuple(dims[:-1]), normalization, True))
    return call(table.FFT_C2R, (x.conj(),), ((dims[-1],), normalization, last))


def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of hfftn: the onesided inverse transform of a real signal."""
    _real_input("ihfftn", input)
    dims, sizes = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resized(_promoted(input), dims, sizes)
    normalization = _normalization(norm, False)
    out = call(table.FFT_R2C, (x,), ((dims[-1],), normalization, True))
    if len(dims) == 1:
        return out.conj()
    out = call(table.CONJ_PHYSICAL, (out,))  # (conj(fft(y)) is the inverse of conj(y))
    return call(table.FFT_C2C, (out,), (tuple(dims[:-1]), normalization, False))


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return ihfftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return irfftn(input, s, dim, norm)


def fftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False,
            out=None):
    """The sample frequencies of an n-point transform: [0, 1, ..., -(n // 2), ..., -1] / (d n)."""
    with _no_grad():
        result = arange(n, dtype=_float_dtype("fftfreq", dtype, out))
        result[(n + 1) // 2:] -= n
        result = result * (1.0 / (n * d))
    return _written_as_arange_writes(out, result).requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False,
             out=None):
    """The sample frequencies of rfft's n // 2 + 1 bins: [0, 1, ..., n // 2] / (d n)."""
    with _no_grad():
        result = arange(n // 2 + 1, dtype=_float_dtype("rfftfreq", dtype, out)) * (1.0 / (n * d))
    return _written_as_arange_writes(out, result).requires_grad_(requires_grad)


def _written_as_arange_writes(out, result):
    """torch writes the frequencies through arange(out=)."""
    return result if out is None else written_as_arange_writes(out, result)


def fftshift(input, dim=None):
    """The zero frequency moved to the middle: a roll by half of each dim."""
    dims = list(range(input.dim())) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    return input.roll([input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of fftshift."""
    dims = list(range(input.dim())) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    return input.roll([(input.shape[d] + 1) // 2 for d in dims], dims)


def _float_dtype(name, dtype, out=None):
    """The frequencies' dtype: the one given, or out's (torch's arange(out=)), or the default."""
    if out is not None:
        check_factory_dtype(dtype, out)
        dtype = out.dtype
    if dtype is None:
        return dtypes.from_numpy_dtype(dtypes.DEFAULT_FLOAT)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return dtype


def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


given_out(globals(), "torch.fft")  # out= for those torch takes it in
__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
