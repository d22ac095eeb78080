"""Parity with PyTorch for torch.fft: every transform, with `n`/`s`, `dim` and each `norm`, on
real and complex inputs in float64 and float32, against torch: values and dtypes, the
recorded nodes (torch's FftR2C/FftC2C/FftC2RBackward0 and what it records before them), the
gradients for a random cotangent and gradients of gradients; the frequency helpers, shifts,
and torch's errors. Skipped without torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402

pytestmark = pytest.mark.parity

SHAPE = (3, 4, 6)
# (function, keyword arguments, input: "real" or "complex")
CALLS = [
    ("fft", {}, "real"), ("fft", {"n": 9}, "real"), ("fft", {"n": 4, "dim": 0}, "complex"),
    ("ifft", {}, "real"), ("ifft", {"n": 7, "dim": 1}, "complex"),
    ("fft2", {}, "real"), ("fft2", {"s": (3, 8)}, "complex"), ("ifft2", {}, "complex"),
    ("fftn", {"dim": (0, 2)}, "real"), ("fftn", {}, "complex"),
    ("ifftn", {"s": (2, 5, 7)}, "complex"), ("ifftn", {"dim": 1}, "real"),
    ("rfft", {}, "real"), ("rfft", {"n": 7, "dim": 1}, "real"), ("rfft", {"n": 4}, "real"),
    ("irfft", {}, "complex"), ("irfft", {"n": 9}, "complex"), ("irfft", {"n": 3, "dim": 0},
                                                                 "complex"),
    ("irfft", {}, "real"),
    ("rfft2", {}, "real"), ("rfft2", {"s": (5, 5)}, "real"),
    ("irfft2", {"s": (3, 7)}, "complex"), ("irfft2", {}, "complex"),
    ("rfftn", {"s": (4, 5)}, "real"), ("rfftn", {"dim": (2, 0)}, "real"),
    ("irfftn", {}, "complex"), ("irfftn", {"s": (2, -1), "dim": (0, 1)}, "complex"),
    ("hfft", {}, "complex"), ("hfft", {"n": 7}, "complex"), ("hfft", {}, "real"),
    ("ihfft", {}, "real"), ("ihfft", {"n": 5, "dim": 0}, "real"),
    ("hfft2", {}, "complex"), ("hfft2", {"s": (3, 7)}, "complex"), ("hfftn", {}, "real"),
    ("hfftn", {"dim": 1}, "complex"), ("hfftn", {"s": (2, 4, 5)}, "complex"),
    ("ihfft2", {}, "real"), ("ihfft2", {"s": (3, 5)}, "real"), ("ihfftn", {}, "real"),
    ("ihfftn", {"dim": (0, 2)}, "real"), ("ihfftn", {"dim": 2}, "real"),
]
NORMS = [None, "backward", "ortho", "forward"]


def _input(kind, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(SHAPE)
    return a + 1j * rng.standard_normal(SHAPE) if kind == "complex" else a


def _graph(fn):
    """The node names from the output down to the leaf (first inputs)."""
    names = []
    while fn is not None:
        names.append(fn.name().removeprefix("torch::autograd::"))
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


def _run(lib, name, kwargs, array, dtype, seed):
    """Output, node names, gradient and gradient of the gradient, as numpy."""
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        array = array.astype(np.complex64 if np.iscomplexobj(array) else np.float32)
    x = lib.tensor(array, requires_grad=True)
    y = getattr(lib.fft, name)(x, **kwargs)
    w = lib.tensor(rng.uniform(0.5, 1.5, tuple(y.shape)))
    loss = (y.abs() ** 2 * w).sum()  # (quadratic: its gradient depends on x, so a second order)
    (g,) = lib.autograd.grad(loss, x, create_graph=True)
    u = lib.tensor(rng.standard_normal(tuple(x.shape)))
    (gg,) = lib.autograd.grad((g * u).real.sum() if g.is_complex() else (g * u).sum(), x)
    return (_numpy(y), str(y.dtype).split(".")[-1], _graph(y.grad_fn), _numpy(g), _numpy(gg))


def _numpy(t):
    t = t.detach()
    return (t.resolve_conj() if hasattr(t, "resolve_conj") else t).numpy()


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, kwargs, kind", CALLS,
                         ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}-{kind}"
                              for n, kw, kind in CALLS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_transform_matches_torch(name, kwargs, kind, norm, dtype):
    array = _input(kind, 7)
    mine = _run(gt, name, dict(kwargs, norm=norm), array, dtype, 3)
    theirs = _run(torch, name, dict(kwargs, norm=norm), array, dtype, 3)
    assert mine[1] == theirs[1], "dtype"
    assert mine[2] == theirs[2], "recorded nodes"
    tol = dict(rtol=1e-10, atol=1e-10) if dtype == "float64" else dict(rtol=2e-4, atol=2e-4)
    for what, a, b in zip(("value", "gradient", "second-order gradient"), (mine[0], mine[3],
                                                                            mine[4]),
                          (theirs[0], theirs[3], theirs[4])):
        assert a.dtype == b.dtype, what
        scale = max(1.0, np.abs(b).max())
        np.testing.assert_allclose(a / scale, b / scale, **tol, err_msg=what)


def test_saved_values_match_torch():
    """The nodes keep what torch's keep, under its names."""
    for name, kind in (("rfft", "real"), ("fft", "complex"), ("irfft", "complex")):
        ys = [getattr(lib.fft, name)(lib.tensor(_input(kind, 1), requires_grad=True),
                                     norm="ortho") for lib in (gt, torch)]
        saved = [{a: getattr(y.grad_fn, a) for a in dir(y.grad_fn) if a.startswith("_saved")
                  and a != "_saved_self"} for y in ys]
        assert saved[0] == saved[1]
        assert sorted(a for a in dir(ys[0].grad_fn) if a.startswith("_saved")) == sorted(
            a for a in dir(ys[1].grad_fn) if a.startswith("_saved"))


@pytest.mark.parametrize("n, d", [(1, 1.0), (6, 1.0), (7, 0.25), (8, 3.0)])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_frequencies_match_torch(n, d, dtype):
    for fn in ("fftfreq", "rfftfreq"):
        mine = getattr(gt.fft, fn)(n, d, dtype=dtype and getattr(gt, dtype))
        theirs = getattr(torch.fft, fn)(n, d, dtype=dtype and getattr(torch, dtype))
        assert str(mine.dtype) == str(theirs.dtype).replace("torch", "gradtool")
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)])
def test_shifts_match_torch(dim):
    a = np.arange(35.0).reshape(5, 7)
    for fn in ("fftshift", "ifftshift"):
        np.testing.assert_array_equal(getattr(gt.fft, fn)(gt.tensor(a), dim).numpy(),
                                      getattr(torch.fft, fn)(torch.tensor(a), dim).numpy())


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fft.fft(x, n=0),
    lambda lib, x: lib.fft.fft(x, norm="sideways"),
    lambda lib, x: lib.fft.rfft(x.to(lib.complex128)),
    lambda lib, x: lib.fft.fftn(x, dim=(0, 0)),
    lambda lib, x: lib.fft.fftn(x, s=(2, 2), dim=(0,)),
    lambda lib, x: lib.fft.fftn(x, s=(2, 2, 2, 2)),
    lambda lib, x: lib.fft.irfft(x[:, :1, :1], dim=1),
    lambda lib, x: lib.fft.fft(x, dim=3),
    lambda lib, x: lib.fft.fftfreq(4, dtype=lib.int64),
    lambda lib, x: lib.fft.rfftn(x.to(lib.complex128)),
    lambda lib, x: lib.fft.fft(x.to(lib.float16)),
], ids=["n0", "norm", "rfft_complex", "dims_repeated", "s_dim_lengths", "s_too_long",
        "irfft_one_bin", "dim_out_of_range", "fftfreq_int", "rfftn_complex", "half"])
def test_errors_match_torch(call):
    messages = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            call(lib, lib.tensor(_input("real", 0)))
        messages.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert messages[0] == messages[1]
