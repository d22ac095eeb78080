"""MultivariateNormal, Bernoulli, OneHotCategorical and Independent against torch: values,
gradients, shapes and refusals, with the programs of tests/engine/test_distributions.py.
Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_distributions as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _arrays(out):
    return [np.asarray(t.detach().numpy()) for t in (out if isinstance(out, list) else [out])]


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_values_are_torchs(name):
    ours, theirs = _arrays(programs.PROGRAMS[name](gt)), _arrays(programs.PROGRAMS[name](torch))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", programs.SHAPES)
def test_shapes_are_torchs(name):
    ours, theirs = programs.SHAPES[name](gt), programs.SHAPES[name](torch)
    assert [tuple(s) if not isinstance(s, bool) else s for s in ours] == \
        [tuple(s) if not isinstance(s, bool) else s for s in theirs]


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    # (the distribution's repr in the message prints gradtool.Size where torch's prints torch.Size)
    assert str(ours.value).replace("gradtool.", "torch.") == str(theirs.value)


def _grads(lib, fn, arrays):
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    grads = lib.autograd.grad(out.sum(), inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), inputs, allow_unused=True)
    return [g.detach().numpy() for g in grads] + [
        np.zeros(1) if g is None else g.detach().numpy() for g in second]


GRADIENTS = {
    "mvn_log_prob": (lambda lib, loc, a: lib.distributions.MultivariateNormal(
        loc, a @ a.mT + lib.eye(3, dtype=lib.float64)).log_prob(lib.tensor(programs.VALUE)),
        [(3,), (3, 3)]),
    "mvn_scale_tril_log_prob": (lambda lib, loc, a: lib.distributions.MultivariateNormal(
        loc, scale_tril=a.tril() + 3 * lib.eye(3, dtype=lib.float64)).log_prob(
        lib.tensor(programs.VALUE)), [(3,), (3, 3)]),
    "mvn_entropy": (lambda lib, loc, a: lib.distributions.MultivariateNormal(
        loc, a @ a.mT + lib.eye(3, dtype=lib.float64)).entropy() + 0 * loc.sum(), [(3,), (3, 3)]),
    "bernoulli_logits": (lambda lib, l: lib.distributions.Bernoulli(logits=l).log_prob(
        lib.tensor([1.0, 0.0, 1.0], dtype=lib.float64)) + lib.distributions.Bernoulli(
        logits=l).entropy(), [(3,)]),
    "one_hot_logits": (lambda lib, l: lib.distributions.OneHotCategorical(logits=l).log_prob(
        lib.tensor([0.0, 1.0, 0.0], dtype=lib.float64)), [(3,)]),
    "independent_normal": (lambda lib, loc: lib.distributions.Independent(
        lib.distributions.Normal(loc, loc.exp()), 1).log_prob(lib.zeros(2, 3, dtype=lib.float64)),
        [(2, 3)]),
}


@pytest.mark.parametrize("name", GRADIENTS)
def test_gradients_and_second_order_are_torchs(name):
    fn, shapes = GRADIENTS[name]
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in shapes]
    for a, b in zip(_grads(gt, fn, arrays), _grads(torch, fn, arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
