"""nn.utils.parametrize and parametrizations against torch: the programs of
tests/engine/test_parametrize.py give what torch's give. Tests marked parity, skipped
without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_parametrize as programs

pytestmark = pytest.mark.parity


@pytest.mark.parametrize("program", [programs.parametrized_linear, programs.parametrize_errors])
def test_parametrize_is_torchs(program):
    torch = pytest.importorskip("torch")
    assert program(gt) == program(torch)


@pytest.mark.parametrize("program", [programs.weight_norm, programs.spectral_norm])
def test_parametrizations_are_torchs(program):
    torch = pytest.importorskip("torch")
    mine, theirs = [], []
    for lib, out in ((gt, mine), (torch, theirs)):
        programs.RNG = np.random.default_rng(11)
        lib.manual_seed(0)
        out.extend(program(lib))
    assert mine[0] == theirs[0] and mine[-1] == theirs[-1]
    for a, b in zip(mine[1:-1], theirs[1:-1]):
        np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float),
                                   rtol=1e-10, atol=1e-12)
