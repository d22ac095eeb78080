"""out= against torch: the value written, the dtype kept, the shape taken with torch's
warning, and torch's refusals. Tests marked parity, skipped without torch."""
import warnings

import numpy as np
import pytest

import gradtool as gt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

CALLS = {
    "special_expm1": lambda lib, out: lib.special.expm1(lib.tensor([0.0, 1.0]), out=out),
    "special_i0e": lambda lib, out: lib.special.i0e(lib.tensor([0.5, 2.0]), out=out),
    "special_xlogy": lambda lib, out: lib.special.xlogy(lib.tensor([2.0, 0.0]), 3.0, out=out),
    "special_polygamma": lambda lib, out: lib.special.polygamma(2, lib.tensor([1.5]), out=out),
    "special_logsumexp": lambda lib, out: lib.special.logsumexp(lib.ones(2, 3), 1, out=out),
    "fftfreq": lambda lib, out: lib.fft.fftfreq(5, 0.5, out=out),
    "rfftfreq": lambda lib, out: lib.fft.rfftfreq(6, out=out),
    "chain_matmul": lambda lib, out: lib.chain_matmul(lib.ones(2, 3), lib.ones(3, 2), out=out),
}


# (multi_dot's out must have the result's dtype: a refusal, below)
CASES = [(n, s) for n in CALLS for s in ("empty", "wrong_shape", "double")
         if (n, s) != ("chain_matmul", "double")]


@pytest.mark.parametrize("name, start", CASES)
def test_out_is_written_as_torch_writes_it(name, start):
    seen = []
    for lib in (gt, torch):
        out = {"empty": lambda: lib.empty(0), "wrong_shape": lambda: lib.zeros(7),
               "double": lambda: lib.zeros(0, dtype=lib.float64)}[start]()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            returned = CALLS[name](lib, out)
        resized = [str(w.message).split(" (Triggered")[0] for w in caught
                   if "resized" in str(w.message)]
        seen.append((returned is out, str(out.dtype).split(".")[-1], tuple(out.shape),
                     out.numpy().copy(), resized))
    (mine, theirs) = seen
    assert mine[0] and theirs[0] and mine[1:3] == theirs[1:3] and mine[4] == theirs[4]
    np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-6)


def test_out_refusals_are_torchs():
    for make in (lambda lib: lib.special.expm1(lib.ones(2), out=lib.empty(2, dtype=lib.int64)),
                 lambda lib: lib.special.expm1(lib.ones(2, requires_grad=True),
                                               out=lib.empty(2)),
                 lambda lib: CALLS["chain_matmul"](lib, lib.zeros(0, dtype=lib.float64))):
        messages = []
        for lib in (gt, torch):
            with pytest.raises(RuntimeError) as info:
                make(lib)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
