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


def _kl_and_gradients(lib, name):
    """KL(p || q) and its gradients in every parameter of p and q."""
    leaves = []

    def leaf(a):
        leaves.append(lib.tensor(np.asarray(a, dtype=np.float64), requires_grad=True))
        return leaves[-1]
    p, q = programs.KL_PAIRS[name](lib.distributions, leaf)
    kl = lib.distributions.kl_divergence(p, q)
    if not kl.requires_grad:  # (torch's infinite pairs: a constant)
        return [kl]
    finite = lib.where(kl.isfinite(), kl, lib.zeros_like(kl))
    grads = lib.autograd.grad(finite.sum(), leaves, allow_unused=True)
    return [kl] + [lib.zeros_like(x) if g is None else g for x, g in zip(leaves, grads)]


@pytest.mark.parametrize("name", programs.KL_PAIRS)
def test_kl_divergence_and_its_gradients_are_torchs(name):
    _assert_same(_kl_and_gradients(gt, name), _kl_and_gradients(torch, name))


KL_ERRORS = {
    "binomial_more_trials_in_q": lambda D, t: (D.Binomial(t([5.0]), t([0.3])),
                                              D.Binomial(t([10.0]), t([0.5]))),
    "mvn_event_shapes": lambda D, t: (D.MultivariateNormal(t([0.0, 1.0]), t(np.eye(2))),
                                      D.MultivariateNormal(t([0.0, 1.0, 2.0]), t(np.eye(3)))),
    "lowrank_event_shapes": lambda D, t: (programs._lowrank(D, t, 0), D.LowRankMultivariateNormal(
        t([0.0, 1.0]), t([[1.0], [0.5]]), t([1.0, 2.0]))),
    "lowrank_mvn_event_shapes": lambda D, t: (programs._lowrank(D, t, 0), D.MultivariateNormal(
        t([0.0, 1.0]), t(np.eye(2)))),
    "mvn_lowrank_event_shapes": lambda D, t: (D.MultivariateNormal(t([0.0, 1.0]), t(np.eye(2))),
                                              programs._lowrank(D, t, 0)),
}


@pytest.mark.parametrize("name", KL_ERRORS)
def test_kl_divergence_refusals_are_torchs(name):
    errors = []
    for lib in (torch, gt):
        p, q = KL_ERRORS[name](lib.distributions, lambda a: programs._t(lib, a))
        with pytest.raises(Exception) as error:
            lib.distributions.kl_divergence(p, q)
        errors.append((type(error.value), str(error.value)))
    assert errors[0] == errors[1]


def test_kl_registry_is_torchs():
    """Every pair torch registers, and no other."""
    def names(lib):
        return sorted((p.__name__, q.__name__) for p, q in lib.distributions.kl._KL_REGISTRY)
    assert names(gt) == names(torch)


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


# ---- the Gamma family's draws: torch's approximations of their pathwise derivatives ----
def _gamma_grid(dtype):
    """Concentrations from 1e-3 to 1e3 and draws from each (torch's), in every branch of
    the approximation: small draws, near the concentration, far from it."""
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    alpha = 10.0 ** rng.uniform(-3, 3, 3000)
    x = torch._standard_gamma(torch.tensor(alpha)).numpy()
    alpha = np.concatenate([alpha, alpha[:500], alpha[:500]])
    x = np.concatenate([x, alpha[:500] * rng.uniform(0.85, 1.15, 500),
                        alpha[:500] * rng.uniform(0.2, 3.0, 500)])
    return alpha.astype(dtype), np.maximum(x, np.finfo(dtype).tiny).astype(dtype)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-11), (np.float32, 2e-5)])
def test_standard_gamma_grad_is_torchs(dtype, rtol):
    """The same concentrations and draws give torch's values: its approximation, computed
    in float64 (float32 rounds once; torch's float32 kernel rounds a few of its steps)."""
    alpha, x = _gamma_grid(dtype)
    ours = gt._standard_gamma_grad(gt.tensor(alpha), gt.tensor(x))
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x))
    assert ours.dtype == gt.float32 if dtype == np.float32 else gt.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=0)


def _dirichlet_grid(dtype):
    rng = np.random.default_rng(1)
    torch.manual_seed(1)
    concentration = 10.0 ** rng.uniform(-2, 2, (3000, 3))
    x = torch._sample_dirichlet(torch.tensor(concentration)).numpy()
    keep = (x > 1e-30).all(-1) & (x < 1 - 1e-7).all(-1)  # (float32's reach)
    total = np.broadcast_to(concentration.sum(-1, keepdims=True), concentration.shape)
    return [a[keep].astype(dtype) for a in (x, concentration, total)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dirichlet_grad_is_torchs(dtype):
    """torch's values; in float32, torch's float64 values rounded once (torch's float32 kernel
    sums its series in float32, up to 2e-3 off them: measured on grids like this one)."""
    arrays = _dirichlet_grid(dtype)
    ours = gt._dirichlet_grad(*(gt.tensor(a) for a in arrays)).numpy()
    assert ours.dtype == dtype
    exact = torch._dirichlet_grad(*(torch.tensor(a.astype(np.float64)) for a in arrays)).numpy()
    np.testing.assert_allclose(ours, exact, rtol=1e-11 if dtype == np.float64 else 1.2e-7,
                               atol=1e-30)
    theirs = torch._dirichlet_grad(*(torch.tensor(a) for a in arrays)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=5e-3, atol=1e-30)


def test_gamma_rsample_gradients_are_torchs_on_the_same_draws():
    """The engine's draws, differentiated by the engine, and by torch's formulas for those
    very draws: Gamma's through torch's _standard_gamma_grad, Dirichlet's (and Beta's, its
    first coordinate) through torch's own _Dirichlet_backward."""
    gt.manual_seed(0)
    c, r = np.array([0.01, 0.7, 3.0, 40.0]), np.array([2.0, 0.5, 1.0, 3.0])
    concentration, rate = gt.tensor(c, requires_grad=True), gt.tensor(r, requires_grad=True)
    x = gt.distributions.Gamma(concentration, rate).rsample()
    assert x.grad_fn.name() == "DivBackward0"
    assert x.grad_fn.next_functions[0][0].name() == "StandardGammaBackward0"
    cotangent = np.array([1.0, -2.0, 0.5, 3.0])
    x.backward(gt.tensor(cotangent))
    drawn = torch.tensor(x.detach().numpy())
    expected = torch.tensor(cotangent) * torch._standard_gamma_grad(
        torch.tensor(c), drawn * torch.tensor(r)) / torch.tensor(r)
    np.testing.assert_allclose(concentration.grad.numpy(), expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rate.grad.numpy(), -cotangent * x.detach().numpy() / r)

    c = np.array([[0.3, 2.0, 5.0], [10.0, 0.05, 1.0]])
    concentration = gt.tensor(c, requires_grad=True)
    x = gt.distributions.Dirichlet(concentration).rsample()
    assert x.grad_fn.name() == "_DirichletBackward" == torch.distributions.Dirichlet(
        torch.tensor(c, requires_grad=True)).rsample().grad_fn.name()
    cotangent = np.array([[1.0, -2.0, 0.5], [3.0, 0.2, -1.0]])
    x.backward(gt.tensor(cotangent))
    expected = torch.distributions.dirichlet._Dirichlet_backward(
        torch.tensor(x.detach().numpy()), torch.tensor(c), torch.tensor(cotangent))
    np.testing.assert_allclose(concentration.grad.numpy(), expected.numpy(), rtol=1e-12)

    a = gt.tensor([0.5, 4.0], dtype=gt.float64, requires_grad=True)
    b = gt.tensor([2.0, 0.3], dtype=gt.float64, requires_grad=True)
    x = gt.distributions.Beta(a, b).rsample()
    assert x.grad_fn.name() == torch.distributions.Beta(
        torch.tensor([0.5], requires_grad=True), torch.tensor([2.0])).rsample().grad_fn.name()
    x.sum().backward()
    both = torch.stack([torch.tensor(x.detach().numpy()), 1 - torch.tensor(x.detach().numpy())],
                       -1)
    expected = torch.distributions.dirichlet._Dirichlet_backward(
        both, torch.tensor([[0.5, 2.0], [4.0, 0.3]], dtype=torch.float64),
        torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=torch.float64))
    # (1 - x here is not the draw's own second coordinate to the last bit: its gradient
    # differs in its last digits where x is near 1)
    np.testing.assert_allclose(a.grad.numpy(), expected[:, 0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), expected[:, 1].numpy(), rtol=1e-6)


def _draws_node(lib):
    alpha = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
    node = lib._standard_gamma(alpha).grad_fn
    return [node.name(), node._saved_self.tolist(), sorted(
        n for n in dir(node) if n.startswith("_saved_")), lib._standard_gamma(
        lib.tensor([0.0, -1.0, float("nan"), float("inf")])).tolist(),
        type(lib._sample_dirichlet(alpha).grad_fn).__name__]


def test_the_draws_nodes_and_edges_are_torchs():
    """Node names and saved values; a concentration that is not positive draws the dtype's
    smallest number, as torch's clamp."""
    assert _draws_node(gt) == _draws_node(torch)


DRAW_ERRORS = {
    "standard_gamma_of_integers": lambda lib: lib._standard_gamma(lib.tensor([1, 2])),
    "sample_dirichlet_of_integers": lambda lib: lib._sample_dirichlet(lib.tensor([1, 2])),
    "standard_gamma_grad_of_integers": lambda lib: lib._standard_gamma_grad(
        lib.tensor([1, 2]), lib.tensor([1, 2])),
    "standard_gamma_grad_mixed_dtypes": lambda lib: lib._standard_gamma_grad(
        lib.tensor([1.0], dtype=lib.float64), lib.tensor([1.0])),
    "dirichlet_grad_mixed_dtypes": lambda lib: lib._dirichlet_grad(
        lib.tensor([0.5], dtype=lib.float64), lib.tensor([1.0]), lib.tensor([2.0])),
    "standard_gamma_grad_shapes": lambda lib: lib._standard_gamma_grad(
        lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0, 3.0])),
    "second_order": lambda lib: (lambda a: lib.autograd.grad(lib.autograd.grad(
        lib._standard_gamma(a).sum(), a, create_graph=True)[0].sum(), a))(
        lib.tensor([0.5, 2.0], requires_grad=True)),
    "sample_dirichlet_backward": lambda lib: lib._sample_dirichlet(
        lib.tensor([0.5, 2.0], requires_grad=True)).sum().backward(),
    "dirichlet_grad_backward": lambda lib: lib._dirichlet_grad(
        lib.tensor([0.5]), lib.tensor([1.0], requires_grad=True),
        lib.tensor([2.0])).sum().backward(),
}


@pytest.mark.parametrize("name", DRAW_ERRORS)
def test_the_draws_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        DRAW_ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        DRAW_ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)


def test_the_draws_refuse_forward_ad_as_torch():
    for name in ("_standard_gamma", "_sample_dirichlet"):
        messages = []
        for lib in (torch, gt):
            with lib.autograd.forward_ad.dual_level():
                dual = lib.autograd.forward_ad.make_dual(
                    lib.tensor([0.5, 2.0], dtype=lib.float64),
                    lib.tensor([1.0, 1.0], dtype=lib.float64))
                with pytest.raises(NotImplementedError) as error:
                    getattr(lib, name)(dual)
                messages.append(str(error.value).split("\n")[0])
        assert messages[0] == messages[1]


def _sample_statistics(lib):
    """Moments of draws that depend on the sampler itself, not only on the distribution:
    LKJCholesky's correlations (torch's onion draws spread its later rows otherwise than the
    LKJ marginal), VonMises' circular moments, Wishart's entries."""
    lib.manual_seed(0)
    D = lib.distributions
    L = D.LKJCholesky(4, programs._t(lib, [0.5, 2.0])).sample((40_000,))
    corr = (L @ L.mT).numpy()
    lower = np.tril_indices(4, -1)
    angles = D.VonMises(programs._t(lib, [0.5, -3.0]), programs._t(lib, [4.0, 0.7])).sample(
        (40_000,)).numpy()
    with pytest.warns(UserWarning, match="Singular sample detected"):
        W = D.Wishart(programs._t(lib, [4.0, 5.5]), programs._t(lib, [[2.0, 0.3], [0.3, 1.0]])
                      ).sample((40_000,)).numpy()
    return [corr[..., lower[0], lower[1]].var(0), np.cos(angles).mean(0),
            np.sin(angles).mean(0), W.mean(0), W.var(0)]


def test_draws_of_lkj_cholesky_von_mises_and_wishart_have_torchs_statistics():
    for ours, theirs in zip(_sample_statistics(gt), _sample_statistics(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=0.05, atol=0.01)
