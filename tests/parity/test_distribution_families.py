"""torch.distributions' families, transforms, constraint registries and kl_divergence against
torch: values, gradients, shapes, reprs and refusals, with the programs of
tests/engine/test_distribution_families.py. Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_distribution_families as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


# torch 2.13's GeneralizedPareto compares its concentration with a float32 zero (isclose), so
# it refuses float64 parameters; it is compared in float32 below instead
FLOAT32_ONLY = {"generalized_pareto"}
FAMILIES = [name for name in programs.FAMILIES if name not in FLOAT32_ONLY]
SHAPES = [name for name in programs.SHAPES if name.rsplit("_", 1)[0] not in FLOAT32_ONLY]


def _arrays(out):
    return [np.asarray(t.detach().numpy()) for t in out]


def _assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(_arrays(ours), _arrays(theirs)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", FAMILIES)
def test_values_are_torchs(name):
    _assert_same(programs.statistics(gt, name), programs.statistics(torch, name))


def _grads(lib, name):
    params = [lib.tensor(np.asarray(p, dtype=np.float64), requires_grad=True)
              for p in programs.FAMILIES[name][1]]
    outs = [s for s in programs.statistics(lib, name, params, differentiated=True)
            if s.requires_grad and bool(s.isfinite().all())]
    grads = lib.autograd.grad(sum(o.sum() for o in outs), params, allow_unused=True)
    return [np.zeros(1) if g is None else g.numpy() for g in grads]


@pytest.mark.parametrize("name", FAMILIES)
def test_gradients_are_torchs(name):
    for a, b in zip(_grads(gt, name), _grads(torch, name)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def _flat(shapes):
    return [tuple(s) if not isinstance(s, bool) else s for s in shapes]


@pytest.mark.parametrize("name", SHAPES)
def test_shapes_are_torchs(name):
    assert _flat(programs.SHAPES[name](gt)) == _flat(programs.SHAPES[name](torch))


@pytest.mark.parametrize("name", programs.FAMILIES)
def test_reprs_and_supports_are_torchs(name):
    ours, theirs = programs.family(gt, name), programs.family(torch, name)
    assert repr(ours).replace("gradtool.", "torch.") == repr(theirs)
    # (a support with tensor bounds prints them, with their dtype: both float64 here)
    assert repr(ours.support).replace("gradtool.", "torch.") == repr(theirs.support)


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value).replace("gradtool.", "torch.") == str(theirs.value)


@pytest.mark.parametrize("name", programs.TRANSFORMS)
def test_transforms_are_torchs(name):
    _assert_same(programs.transformed(gt, name), programs.transformed(torch, name))
    ours, theirs = programs._transforms(gt)[name][0], programs._transforms(torch)[name][0]
    assert ours.bijective == theirs.bijective
    for side in ("domain", "codomain"):
        assert repr(getattr(ours, side)).replace("gradtool.", "torch.") == \
            repr(getattr(theirs, side))
        assert getattr(ours, side).event_dim == getattr(theirs, side).event_dim
    assert repr(ours).replace("gradtool.", "torch.") == repr(theirs)
    shape = np.shape(programs._transforms(gt)[name][1][0])
    assert tuple(ours.forward_shape(shape)) == tuple(theirs.forward_shape(shape))


CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "simplex", "lower_cholesky",
               "corr_cholesky", "positive_definite", "real_vector", "boolean"]


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_constraints_check_and_print_as_torchs(name):
    rng = np.random.default_rng(2)
    values = [rng.standard_normal((2, 3, 3)), np.abs(rng.standard_normal((2, 3, 3))),
              np.tril(np.abs(rng.standard_normal((3, 3)))) + np.eye(3), np.eye(3),
              np.array([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0], [0.5, 0.5, 0.1]]),
              np.array([[1.0, 0.0], [0.0, 1.0]])]
    ours, theirs = (getattr(lib.distributions.constraints, name) for lib in (gt, torch))
    assert repr(ours) == repr(theirs)
    assert (ours.event_dim, ours.is_discrete) == (theirs.event_dim, theirs.is_discrete)
    for v in values:
        np.testing.assert_array_equal(ours.check(gt.tensor(v)).numpy(),
                                      theirs.check(torch.tensor(v)).numpy())


def _registered(lib):
    C = lib.distributions.constraints
    x = lib.tensor([-2.0, 0.3, 1.5], dtype=lib.float64)
    out = []
    for constraint in (C.real, C.positive, C.greater_than(2.0), C.less_than(-1.0),
                       C.interval(-1.0, 3.0), C.unit_interval, C.simplex, C.corr_cholesky,
                       C.independent(C.positive, 1)):
        for registry in (lib.distributions.biject_to, lib.distributions.transform_to):
            t = registry(constraint)
            y = t(x)
            out += [y] + ([t.log_abs_det_jacobian(x, y)] if t.bijective else [])
    return out


def test_biject_to_and_transform_to_are_torchs():
    _assert_same(_registered(gt), _registered(torch))


@pytest.mark.parametrize("name", programs.KL_PAIRS)
def test_kl_divergence_is_torchs(name):
    _assert_same([programs.kl(gt, name)], [programs.kl(torch, name)])


def test_lowrank_matrices_are_torchs():
    _assert_same(programs.lowrank_matrices(gt), programs.lowrank_matrices(torch))


def _generalized_pareto(lib, dtype):
    loc, scale, concentration = (lib.tensor(p, dtype=dtype, requires_grad=True)
                                 for p in programs.FAMILIES["generalized_pareto"][1])
    d = lib.distributions.GeneralizedPareto(loc, scale, concentration)
    value = lib.tensor([1.5, 0.3], dtype=dtype)
    out = [d.log_prob(value), d.cdf(value), d.icdf(lib.tensor([0.2, 0.7], dtype=dtype)),
           d.entropy(), d.mean, d.variance, d.mode]
    grads = lib.autograd.grad(sum(o.sum() for o in out[:4]), [loc, scale, concentration])
    return out + list(grads) + [d.expand((3, 2)).sample().shape]


def test_generalized_pareto_is_torchs_in_float32():
    with pytest.raises(RuntimeError, match="Double did not match Float"):
        _generalized_pareto(torch, torch.float64)
    *ours, our_shape = _generalized_pareto(gt, gt.float32)
    *theirs, their_shape = _generalized_pareto(torch, torch.float32)
    assert tuple(our_shape) == tuple(their_shape)
    for a, b in zip(_arrays(ours), _arrays(theirs)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
