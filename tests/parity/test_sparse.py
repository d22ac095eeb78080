"""Sparse COO tensors against torch's: values, indices, flags, products, gradients and
refusals, with the programs of tests/engine/test_sparse.py. Tests marked parity, skipped
without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_sparse as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _plain(out):
    return [(tuple(o.shape), str(o.dtype).split(".")[-1], o.detach().numpy())
            if hasattr(o, "detach") else o for o in out]


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_sparse_tensors_behave_as_torchs(name):
    ours, theirs = _plain(programs.PROGRAMS[name](gt)), _plain(programs.PROGRAMS[name](torch))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(a, tuple) and len(a) == 3 and isinstance(a[2], np.ndarray):
            assert a[:2] == b[:2]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-6)
        else:
            assert a == b


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)
