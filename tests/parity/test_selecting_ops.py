"""mode, histograms, logical ops, movedim, masked_select, put/take, index_copy/index_fill,
unfold, logit, nansum/nanmean against torch (values, dtypes, refusals), with the programs of
tests/engine/test_selecting_ops.py. Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_selecting_ops as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _described(out):
    return [(tuple(o.shape), str(o.dtype).split(".")[-1], o.detach().numpy())
            if hasattr(o, "detach") else (tuple(o),) for o in out]


@pytest.mark.parametrize("name", [n for n in programs.PROGRAMS if n != "unfold_is_a_view"])
def test_values_are_torchs(name):
    ours, theirs = _described(programs.PROGRAMS[name](gt)), _described(
        programs.PROGRAMS[name](torch))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a[:-1] == b[:-1]
        np.testing.assert_allclose(a[-1], b[-1], rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)
