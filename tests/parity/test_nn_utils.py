"""nn.utils and nn.init against torch: the programs of tests/engine/test_nn_utils.py (fusing
batch norms, get_total_norm and clipping with it, memory formats, skip_init, sparse_ and the
old spellings) give what torch's give. Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_nn_utils as programs

pytestmark = pytest.mark.parity


def test_fused_layers_are_torchs():
    torch = pytest.importorskip("torch")
    programs.RNG = np.random.default_rng(7)
    mine = programs.fused_layers(gt)
    programs.RNG = np.random.default_rng(7)
    theirs = programs.fused_layers(torch)
    for m, t in zip(mine[:-2], theirs[:-2]):
        for a, b in zip(m[:4], t[:4]):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        assert m[4:] == t[4:]
    assert mine[-2:] == theirs[-2:]


@pytest.mark.parametrize("program", [programs.clipping, programs.layouts_and_skip_init])
def test_nn_utils_are_torchs(program):
    torch = pytest.importorskip("torch")
    assert program(gt) == program(torch)


def test_init_spellings_are_torchs_but_for_the_draws():
    torch = pytest.importorskip("torch")
    mine, theirs = (programs.init_spellings(lib) for lib in (gt, torch))
    assert mine[0] == theirs[0] and mine[1:] == theirs[1:]


@pytest.mark.parametrize("permutation", [[2, 0, 3, 1], [0], [4, 3, 2, 1, 0]])
def test_rnn_helpers_are_torchs(permutation):
    torch = pytest.importorskip("torch")
    assert programs.rnn_helpers(gt, permutation) == programs.rnn_helpers(torch, permutation)
