"""The default dtype, promote_types, typename, set_printoptions and the removed names against
torch, with the programs of tests/engine/test_default_dtype_and_names.py. Tests marked parity,
skipped without torch."""
import pytest

import gradtool as gt
from tests.engine import test_default_dtype_and_names as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_names_behave_as_torchs(name):
    ours, theirs = programs.PROGRAMS[name](gt), programs.PROGRAMS[name](torch)
    if isinstance(ours, str):  # (gradtool prints its own module name where torch prints torch)
        ours = ours.replace("gradtool.", "torch.")
    assert ours == theirs


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)
