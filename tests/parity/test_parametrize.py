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


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("shape", programs.ORTHOGONAL_SHAPES)
@pytest.mark.parametrize("orthogonal_map, complex_weight", [
    *((m, False) for m in programs.ORTHOGONAL_MAPS),
    ("matrix_exp", True), ("cayley", True)])  # (householder takes real weights only)
def test_orthogonal_is_torchs(orthogonal_map, complex_weight, shape, use_trivialization):
    """Keys, repr, the weight (unitary for a complex one), the original's gradient (a complex
    weight's: conjugate Wirtinger) and the weight after right_inverse (or torch's message
    where there is none)."""
    torch = pytest.importorskip("torch")
    (mine, _), (theirs, _) = (programs.orthogonal(lib, orthogonal_map, shape, use_trivialization,
                                                  complex_weight=complex_weight)
                              for lib in (gt, torch))
    assert mine[:2] == theirs[:2]
    for a, b in zip(mine[2:4], theirs[2:4]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
    if isinstance(theirs[4], str):
        assert mine[4] == theirs[4]
    else:
        np.testing.assert_allclose(mine[4], theirs[4], atol=1e-11)


def test_orthogonal_errors_are_torchs():
    torch = pytest.importorskip("torch")

    def messages(lib):
        P, seen = lib.nn.utils.parametrizations, []
        complex_module = lib.nn.Module()
        complex_module.weight = lib.nn.Parameter(lib.ones(3, 3, dtype=lib.complex128))
        for call in (lambda: P.orthogonal(lib.nn.Linear(2, 2), "bias"),
                     lambda: P.orthogonal(lib.nn.Linear(2, 2), "w"),
                     lambda: P.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr"),
                     lambda: P.orthogonal(complex_module, orthogonal_map="householder"),
                     lambda: setattr(P.orthogonal(lib.nn.Linear(2, 3)), "weight", lib.eye(3))):
            with pytest.raises(Exception) as info:
                call()
            # (the engine's Size prints as gradtool.Size where torch's prints torch.Size)
            message = str(info.value).split("Module '")[0].replace("gradtool.Size", "torch.Size")
            seen.append((type(info.value).__name__, message))
        return seen
    assert messages(gt) == messages(torch)
