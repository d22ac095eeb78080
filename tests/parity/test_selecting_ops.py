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


def _grads(lib, fn, arrays):
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    grads = lib.autograd.grad(out.sum(), inputs, create_graph=True)
    total = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(total, inputs, allow_unused=True) if total.requires_grad else \
        [None] * len(inputs)
    return [out.detach().numpy()] + [g.detach().numpy() for g in grads] + [
        np.zeros(1) if g is None else g.detach().numpy() for g in second]


@pytest.mark.parametrize("name", programs.GRADIENTS)
def test_composites_gradients_are_torchs(name):
    fn, shapes = programs.GRADIENTS[name]
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in shapes]
    for a, b in zip(_grads(gt, fn, arrays), _grads(torch, fn, arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
