"""torch.Generator, generator= and the random fills against torch: everything but the drawn
numbers (numpy draws them), with the programs of tests/engine/test_random.py. Tests marked
parity, skipped without torch."""
import pytest

import gradtool as gt
from tests.engine import test_random as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_generators_and_random_fills_behave_as_torchs(name):
    assert programs.PROGRAMS[name](gt) == programs.PROGRAMS[name](torch)


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]
