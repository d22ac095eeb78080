"""torch.distributions' families beyond Normal and Categorical (Uniform, Exponential, Laplace,
Cauchy, the transformed ones: LogNormal, HalfNormal, HalfCauchy, Gumbel, Weibull, Pareto),
their transforms, constraint registries, kl_divergence and the validation in Distribution.
Each family is checked against properties that hold whatever its formulas: the cdf's
derivative is the density, icdf inverts cdf, samples have the distribution's mean, variance and
entropy, gradients match central differences. The programs run on either library:
tests/parity/test_distribution_families.py compares them with torch."""
import math

import numpy as np
import pytest

import gradtool as gt
from gradcheck_util import check_grads


def _t(lib, a):
    return lib.tensor(np.asarray(a, dtype=np.float64))


# name -> (the distribution of parameters (tensors), the parameters, values to score,
#          the statistics the family has: moments "mv" (mean, variance) and whether its samples
#          have them, "r" an rsample)
FAMILIES = {
    "uniform": (lambda D, low, width: D.Uniform(low, low + width),
                ([0.0, -1.0], [2.0, 0.5]), [1.5, -0.75], "mvr"),
    "exponential": (lambda D, rate: D.Exponential(rate), ([0.5, 2.0],), [1.5, 0.3], "mvr"),
    "laplace": (lambda D, loc, scale: D.Laplace(loc, scale), ([0.5, 2.0], [1.0, 3.0]),
                [1.5, 0.3], "mvr"),
    "cauchy": (lambda D, loc, scale: D.Cauchy(loc, scale), ([0.5, 2.0], [1.0, 3.0]),
               [1.5, 0.3], "r"),
    "log_normal": (lambda D, loc, scale: D.LogNormal(loc, scale), ([0.5, -1.0], [0.5, 0.3]),
                   [1.5, 0.3], "mvr"),
    "half_normal": (lambda D, scale: D.HalfNormal(scale), ([1.0, 3.0],), [1.5, 0.3], "mvr"),
    "half_cauchy": (lambda D, scale: D.HalfCauchy(scale), ([1.0, 3.0],), [1.5, 0.3], "r"),
    "gumbel": (lambda D, loc, scale: D.Gumbel(loc, scale), ([0.5, 2.0], [1.0, 3.0]),
               [1.5, 0.3], "mvr"),
    "weibull": (lambda D, scale, concentration: D.Weibull(scale, concentration),
                ([0.5, 2.0], [1.5, 3.0]), [1.5, 0.3], "mvr"),
    "pareto": (lambda D, scale, alpha: D.Pareto(scale, alpha), ([0.5, 0.2], [5.0, 6.0]),
               [1.5, 0.3], "mvr"),
    # (the Gamma family's draws move with the parameters at a fixed CDF value, not at fixed
    # noise: no "r", their rsample is checked against the CDF below)
    "gamma": (lambda D, concentration, rate: D.Gamma(concentration, rate),
              ([0.5, 3.0], [1.0, 2.0]), [1.5, 0.3], "mv"),
    "chi2": (lambda D, df: D.Chi2(df), ([1.5, 4.0],), [1.5, 0.3], "mv"),
    "beta": (lambda D, c1, c0: D.Beta(c1, c0), ([0.5, 2.0], [1.5, 3.0]), [0.3, 0.8], "mv"),
    "dirichlet": (lambda D, concentration: D.Dirichlet(concentration),
                  ([[0.5, 2.0, 1.5], [3.0, 1.2, 2.0]],), [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],
                  "mv"),
    "student_t": (lambda D, df, loc, scale: D.StudentT(df, loc, scale),
                  ([3.0, 5.0], [0.5, -1.0], [1.0, 2.0]), [1.5, 0.3], "m"),
    "poisson": (lambda D, rate: D.Poisson(rate), ([0.5, 3.5],), [1.0, 4.0], "mv"),
    "geometric": (lambda D, probs: D.Geometric(probs), ([0.3, 0.7],), [0.0, 3.0], "mv"),
    "kumaraswamy": (lambda D, c1, c0: D.Kumaraswamy(c1, c0), ([1.5, 2.0], [2.0, 3.0]),
                    [0.3, 0.8], "mvr"),
    "logistic_normal": (lambda D, loc, scale: D.LogisticNormal(loc, scale),
                        ([[0.5, -1.0], [0.2, 0.3]], [[1.0, 0.5], [2.0, 0.3]]),
                        [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], "r"),
    "mixture_same_family": (lambda D, logits, loc, scale: D.MixtureSameFamily(
        D.Categorical(logits=logits), D.Normal(loc, scale)),
        ([0.3, -0.5], [-1.0, 2.0], [0.5, 1.5]), [0.3, 1.5], "mv"),
    "binomial": (lambda D, probs: D.Binomial(10, probs), ([0.3, 0.7],), [3.0, 8.0], "mv"),
    "relaxed_bernoulli": (lambda D, probs: D.RelaxedBernoulli(probs.new_tensor(0.5), probs),
                          ([0.3, 0.7],), [0.2, 0.9], "r"),
    "negative_binomial": (lambda D, total_count, probs: D.NegativeBinomial(total_count, probs),
                          ([2.5, 4.0], [0.3, 0.6]), [1.0, 5.0], "mv"),
    "multinomial": (lambda D, probs: D.Multinomial(5, probs),
                    ([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],), [[1.0, 2.0, 2.0], [3.0, 0.0, 2.0]],
                    "mv"),
    "relaxed_one_hot_categorical": (lambda D, logits: D.RelaxedOneHotCategorical(
        logits.new_tensor(0.7), logits=logits), ([[0.2, -0.3, 0.5], [0.6, 0.1, -0.3]],),
        [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], "r"),
    "lowrank_multivariate_normal": (lambda D, loc, cov_factor, cov_diag:
                                    D.LowRankMultivariateNormal(loc, cov_factor, cov_diag),
                                    ([[0.5, -1.0, 0.2], [0.0, 1.0, 2.0]],
                                     [[1.0, 0.5], [-0.3, 0.8], [0.2, -1.0]], [0.5, 1.5, 0.8]),
                                    [[0.1, 0.2, -0.3], [1.0, -2.0, 0.5]], "mvr"),
    "fisher_snedecor": (lambda D, df1, df2: D.FisherSnedecor(df1, df2),
                        ([3.0, 6.0], [9.0, 12.0]), [1.5, 0.3], "m"),
    "generalized_pareto": (lambda D, loc, scale, concentration: D.GeneralizedPareto(
        loc, scale, concentration), ([0.5, -1.0], [1.0, 2.0], [0.2, -0.1]), [1.5, 0.3], "mvr"),
    "continuous_bernoulli": (lambda D, probs: D.ContinuousBernoulli(probs),
                             ([0.2, 0.8],), [0.3, 0.9], "mvr"),
    "continuous_bernoulli_near_half": (lambda D, probs: D.ContinuousBernoulli(probs),
                                       ([0.4995, 0.5004],), [0.3, 0.9], "mvr"),
    "inverse_gamma": (lambda D, concentration, rate: D.InverseGamma(concentration, rate),
                      ([2.5, 4.0], [1.0, 2.0]), [1.5, 0.3], "m"),
    # (its mean and variance are circular ones: their own test below)
    "von_mises": (lambda D, loc, concentration: D.VonMises(loc, concentration),
                  ([0.5, -1.0], [1.0, 4.0]), [1.5, 0.3], ""),
    "lkj_cholesky": (lambda D, concentration: D.LKJCholesky(3, concentration), ([0.5, 2.0],),
                     np.linalg.cholesky([[[1.0, 0.3, -0.2], [0.3, 1.0, 0.5], [-0.2, 0.5, 1.0]],
                                         [[1.0, -0.6, 0.1], [-0.6, 1.0, 0.2],
                                          [0.1, 0.2, 1.0]]]).tolist(), ""),
    # (the covariance a a^T of a free matrix: central differences keep it symmetric)
    "wishart": (lambda D, df, a: D.Wishart(df, covariance_matrix=a @ a.mT),
                ([4.0, 5.5], [[1.4, 0.3], [0.2, 0.9]]),
                [[[1.5, 0.2], [0.2, 0.8]], [[3.0, -0.5], [-0.5, 2.0]]], "mv"),
}
# (torch's have none: Poisson's carrier measure has no closed-form mean; transformed ones
# have no formula)
NO_ENTROPY = {"poisson", "logistic_normal", "relaxed_bernoulli", "mixture_same_family",
              "negative_binomial", "relaxed_one_hot_categorical", "fisher_snedecor",
              "von_mises", "lkj_cholesky"}
QUANTILES = [0.2, 0.7]


def family(lib, name, params=None):
    make, default, *_ = FAMILIES[name]
    return make(lib.distributions, *(p if params else _t(lib, p)
                                      for p in (params or default)))


def has_icdf(name):
    return name in ("uniform", "exponential", "laplace", "cauchy", "half_normal",
                    "half_cauchy", "generalized_pareto", "continuous_bernoulli",
                    "continuous_bernoulli_near_half")


def has_cdf(name):
    return has_icdf(name) or name in ("log_normal", "gamma", "chi2", "mixture_same_family")


def statistics(lib, name, params=None, differentiated=False):
    """Every value the family computes, in a fixed order (the same on both libraries);
    `differentiated`: those with a derivative in the parameters (the Gamma cdf's in the
    concentration is torch's igamma's, which it does not implement)."""
    d = family(lib, name, params)
    value = _t(lib, FAMILIES[name][2])
    out = [d.log_prob(value)]
    for statistic in ("mean", "variance", "stddev", "mode"):
        try:  # (what the family does not define raises, on torch too)
            out.append(getattr(d, statistic))
        except NotImplementedError:
            pass
    if name not in NO_ENTROPY:
        out.append(d.entropy())
    if has_cdf(name) and not (differentiated and name in ("gamma", "chi2")):
        out.append(d.cdf(value))
    if has_icdf(name):
        out.append(d.icdf(_t(lib, QUANTILES)))
    return out


@pytest.mark.parametrize("name", FAMILIES)
def test_gradients_match_central_differences(name):
    _, default, value, _ = FAMILIES[name]
    params = [gt.tensor(np.asarray(p, dtype=np.float64), requires_grad=True) for p in default]
    checked = [i for i, s in enumerate(statistics(gt, name, params, True))
               if s.requires_grad and bool(s.isfinite().all())]  # (not a constant's nan or inf)
    check_grads(lambda *ps: [statistics(gt, name, list(ps), True)[i] for i in checked], params)


# (near 1/2 ContinuousBernoulli's cdf is torch's Taylor expansion, the uniform's: not exact)
@pytest.mark.parametrize("name", [n for n in FAMILIES if has_cdf(n) and "near_half" not in n])
def test_the_cdfs_derivative_is_the_density_and_icdf_inverts_it(name):
    d = family(gt, name)
    value = _t(gt, FAMILIES[name][2]).requires_grad_()
    (density,) = gt.autograd.grad(d.cdf(value).sum(), value)
    np.testing.assert_allclose(density.numpy(), d.log_prob(value).exp().detach().numpy(),
                               rtol=1e-9)
    if has_icdf(name):
        q = _t(gt, QUANTILES)
        np.testing.assert_allclose(d.cdf(d.icdf(q)).numpy(), QUANTILES, rtol=1e-9)


@pytest.mark.parametrize("name", FAMILIES)
def test_samples_have_the_mean_variance_and_entropy(name):
    gt.manual_seed(0)
    d = family(gt, name)
    n = 200_000
    samples = d.sample((n,)).double()
    assert samples.shape == (n,) + tuple(d.batch_shape + d.event_shape)
    assert not samples.requires_grad
    # the entropy is -E[log p(X)]: the mean of -log_prob over the samples, to 5 standard errors
    surprise = -d.log_prob(samples).numpy()
    if name not in NO_ENTROPY:
        np.testing.assert_array_less(np.abs(surprise.mean(0) - d.entropy().numpy()),
                                     5 * surprise.std(0) / math.sqrt(n) + 1e-12)
    if "mv" in FAMILIES[name][3]:
        x = samples.numpy()
        np.testing.assert_array_less(np.abs(x.mean(0) - d.mean.numpy()),
                                     5 * x.std(0) / math.sqrt(n))
        np.testing.assert_allclose(x.var(0), d.variance.numpy(), rtol=0.05)


@pytest.mark.parametrize("name", [n for n in FAMILIES if "r" in FAMILIES[n][3]])
def test_rsample_is_differentiable_in_the_parameters(name):
    _, default, _, _ = FAMILIES[name]
    params = [gt.tensor(np.asarray(p, dtype=np.float64), requires_grad=True) for p in default]

    def drawn(*ps):
        gt.manual_seed(3)  # (the same noise at every point: the pathwise derivative)
        return family(gt, name, list(ps)).rsample((3,))
    check_grads(drawn, params)
    assert family(gt, name).has_rsample


SHAPES = {  # (lib) -> shapes and flags, the same on both libraries
    **{f"{name}_expand": lambda lib, name=name: (lambda d: [
        d.batch_shape, d.event_shape, d.sample((4,)).shape, d.expand((3, 2)).batch_shape,
        d.expand((3, 2)).sample().shape, d.expand((3, 2)).log_prob(
            _t(lib, FAMILIES[name][2])).shape, d.has_rsample,
        d.has_enumerate_support])(family(lib, name)) for name in FAMILIES},
    "uniform_numbers": lambda lib: (lambda d: [d.batch_shape, d.sample((2,)).shape])(
        lib.distributions.Uniform(0.0, 1.0)),
}

# refusals: torch's exception and message for each
ERRORS = {
    "exponential_negative_rate": lambda lib: lib.distributions.Exponential(_t(lib, [-1.0])),
    "laplace_zero_scale": lambda lib: lib.distributions.Laplace(_t(lib, [0.0]), _t(lib, [0.0])),
    "uniform_low_above_high": lambda lib: lib.distributions.Uniform(_t(lib, [2.0]),
                                                                    _t(lib, [1.0])),
    "log_normal_value_outside_support": lambda lib: lib.distributions.LogNormal(
        _t(lib, [0.0]), _t(lib, [1.0])).log_prob(_t(lib, [-1.0])),
    "exponential_value_outside_support": lambda lib: lib.distributions.Exponential(
        _t(lib, [1.0])).log_prob(_t(lib, [-1.0])),
    "normal_value_wrong_shape": lambda lib: lib.distributions.Normal(
        _t(lib, [0.0, 1.0]), _t(lib, [1.0, 1.0])).log_prob(_t(lib, [0.0, 1.0, 2.0])),
    "mvn_value_wrong_event": lambda lib: lib.distributions.MultivariateNormal(
        _t(lib, [0.0, 1.0]), _t(lib, np.eye(2))).log_prob(_t(lib, [0.0, 1.0, 2.0])),
    "normal_value_not_a_tensor": lambda lib: lib.distributions.Normal(
        _t(lib, [0.0]), _t(lib, [1.0])).log_prob(1.0),
    "categorical_value_outside_support": lambda lib: lib.distributions.Categorical(
        _t(lib, [0.5, 0.5])).log_prob(_t(lib, 2.0)),
    "pareto_value_below_scale": lambda lib: lib.distributions.Pareto(
        _t(lib, [1.0]), _t(lib, [2.0])).log_prob(_t(lib, [0.5])),
    "transformed_not_transforms": lambda lib: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(_t(lib, [0.0]), _t(lib, [1.0])), "exp"),
    "kl_not_registered": lambda lib: lib.distributions.kl_divergence(
        lib.distributions.Normal(_t(lib, [0.0]), _t(lib, [1.0])),
        lib.distributions.Cauchy(_t(lib, [0.0]), _t(lib, [1.0]))),
    "biject_to_unknown": lambda lib: lib.distributions.biject_to(
        lib.distributions.constraints.boolean),
    "register_kl_not_a_type": lambda lib: lib.distributions.register_kl(1, 2),
    "reshape_transform_sizes": lambda lib: lib.distributions.transforms.ReshapeTransform(
        (2, 3), (4,)),
    "transform_cache_size": lambda lib: lib.distributions.transforms.ExpTransform(
        cache_size=2),
    "von_mises_negative_concentration": lambda lib: lib.distributions.VonMises(
        _t(lib, [0.0]), _t(lib, [-1.0])),
    "lkj_cholesky_dim_1": lambda lib: lib.distributions.LKJCholesky(1, _t(lib, 1.0)),
    "lkj_cholesky_value_not_a_correlation_factor": lambda lib: lib.distributions.LKJCholesky(
        2, _t(lib, 1.0)).log_prob(_t(lib, [[2.0, 0.0], [0.5, 1.0]])),
    "wishart_df_below_the_dimension": lambda lib: lib.distributions.Wishart(
        _t(lib, 0.5), _t(lib, np.eye(2))),
    "wishart_not_positive_definite": lambda lib: lib.distributions.Wishart(
        _t(lib, 3.0), _t(lib, [[1.0, 2.0], [2.0, 1.0]])),
}


@pytest.mark.parametrize("name", ERRORS)
def test_refusals(name):
    with pytest.raises((ValueError, NotImplementedError, TypeError)):
        ERRORS[name](gt)


def test_validation_skips_what_was_not_given_and_can_be_turned_off():
    """A parametrisation computed from the one given is not checked (probs from logits);
    validate_args=False and set_default_validate_args(False) check nothing."""
    gt.distributions.Bernoulli(logits=_t(gt, [100.0]))
    gt.distributions.Exponential(_t(gt, [-1.0]), validate_args=False)
    gt.distributions.Distribution.set_default_validate_args(False)
    try:
        d = gt.distributions.Exponential(_t(gt, [-1.0]))
        assert not d._validate_args
        d.log_prob(_t(gt, [-2.0]))
    finally:
        gt.distributions.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        gt.distributions.Distribution.set_default_validate_args(2)


# ---- transforms: (lib) -> the transform, and points of its domain
def _transforms(lib):
    T = lib.distributions.transforms
    return {
        "exp": (T.ExpTransform(), [[-1.0, 0.5, 2.0]]),
        "affine": (T.AffineTransform(_t(lib, [1.0, -2.0, 0.5]), _t(lib, [2.0, -0.5, 3.0])),
                   [[-1.0, 0.5, 2.0]]),
        "affine_numbers": (T.AffineTransform(1.0, -2.0), [[-1.0, 0.5, 2.0]]),
        "sigmoid": (T.SigmoidTransform(), [[-1.0, 0.5, 2.0]]),
        "tanh": (T.TanhTransform(), [[-1.0, 0.5, 2.0]]),
        "softplus": (T.SoftplusTransform(), [[-1.0, 0.5, 2.0]]),
        "power": (T.PowerTransform(_t(lib, 2.5)), [[0.5, 1.0, 2.0]]),
        "stick_breaking": (T.StickBreakingTransform(), [[-1.0, 0.5, 2.0]]),
        "corr_cholesky": (T.CorrCholeskyTransform(), [[-1.0, 0.5, 2.0]]),
        "lower_cholesky": (T.LowerCholeskyTransform(), [[[0.5, 0.0], [1.0, -0.3]]]),
        "compose": (T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]),
                    [[-1.0, 0.5, 2.0]]),
        "independent": (T.IndependentTransform(T.SigmoidTransform(), 1), [[-1.0, 0.5, 2.0]]),
        "reshape": (T.ReshapeTransform((2, 3), (3, 2)), [np.linspace(-1, 1, 6).reshape(2, 3)]),
        "cat": (T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], 0, [2, 1]),
                [[-1.0, 0.5, 2.0]]),
        "stack": (T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], 0),
                  [[[-1.0, 0.5], [2.0, 0.1]]]),
        "cdf": (T.CumulativeDistributionTransform(lib.distributions.Normal(
            _t(lib, 0.5), _t(lib, 2.0))), [[-1.0, 0.5, 2.0]]),
        "inverse_exp": (T.ExpTransform().inv, [[0.5, 1.0, 2.0]]),
    }


TRANSFORMS = list(_transforms(gt))
ELEMENTWISE = ["exp", "affine", "affine_numbers", "sigmoid", "tanh", "softplus", "power",
               "compose", "cdf", "inverse_exp"]


def transformed(lib, name):
    """y = t(x), x = t.inv(y), log|det J| and the event dims: the same on both libraries."""
    t, (x,) = _transforms(lib)[name]
    x = _t(lib, x)
    y = t(x)
    return [y, t.inv(y)] + ([t.log_abs_det_jacobian(x, y)] if t.bijective else [])


@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_transforms_inverse_undoes_it(name):
    y, x_back, *_ = transformed(gt, name)
    _, (x,) = _transforms(gt)[name]
    np.testing.assert_allclose(x_back.numpy(), np.asarray(x), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ELEMENTWISE + ["independent", "stack", "cat"])
def test_log_abs_det_jacobian_is_the_log_derivative(name):
    t, (x,) = _transforms(gt)[name]
    x = _t(gt, x).requires_grad_()
    y = t(x)
    (dy,) = gt.autograd.grad(y.sum(), x)  # (elementwise maps: the Jacobian's diagonal)
    ladj = t.log_abs_det_jacobian(x, y).detach().numpy()
    expected = np.log(np.abs(dy.numpy()))
    if name == "independent":
        expected = expected.sum(-1)
    np.testing.assert_allclose(ladj, expected, rtol=1e-9)


@pytest.mark.parametrize("name", ["stick_breaking", "corr_cholesky"])
def test_log_abs_det_jacobian_of_vector_maps_is_the_jacobians_determinant(name):
    """For maps into a simplex or a Cholesky factor: log|det| of the Jacobian from x to the
    free coordinates of y (all but the last entry; the strict lower triangle)."""
    t, (x,) = _transforms(gt)[name]
    x = _t(gt, x)
    free = (lambda y: y[..., :-1]) if name == "stick_breaking" else (
        lambda y: gt.distributions.utils.tril_matrix_to_vec(y, diag=-1))
    jac = gt.autograd.functional.jacobian(lambda v: free(t(v)), x)
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, t(x)).numpy(),
                               np.linalg.slogdet(jac.numpy())[1], rtol=1e-9)


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_gradients_match_central_differences(name):
    t, (x,) = _transforms(gt)[name]
    x = _t(gt, x).requires_grad_()
    check_grads(lambda v: [t(v), t.log_abs_det_jacobian(v, t(v))] if t.bijective else t(v),
                [x])


def test_cache_returns_the_same_tensor():
    t = gt.distributions.transforms.ExpTransform(cache_size=1)
    x = _t(gt, [0.5])
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert gt.distributions.transforms.ExpTransform().with_cache(1)._cache_size == 1


def test_biject_to_and_transform_to_land_in_the_constraint():
    C = gt.distributions.constraints
    x = _t(gt, [-2.0, 0.3, 1.5])
    for constraint in (C.real, C.positive, C.greater_than(2.0), C.less_than(-1.0),
                       C.interval(-1.0, 3.0), C.unit_interval, C.simplex,
                       C.independent(C.positive, 1)):
        for registry in (gt.distributions.biject_to, gt.distributions.transform_to):
            assert bool(constraint.check(registry(constraint)(x)).all())
    assert gt.distributions.biject_to(C.simplex)(x).shape == (4,)
    assert bool(C.corr_cholesky.check(gt.distributions.biject_to(C.corr_cholesky)(x)).all())


def test_kl_dispatch_picks_the_most_specific_registration():
    D = gt.distributions

    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(_t(gt, [0.0]), _t(gt, [1.0])), D.Normal(_t(gt, [1.0]), _t(gt, [2.0]))
    expected = D.kl_divergence(D.Normal(_t(gt, [0.0]), _t(gt, [1.0])), q)
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), expected.numpy())

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return p.loc * 0 + 42.0
    try:
        assert D.kl_divergence(p, q).item() == 42.0
    finally:
        del D.kl._KL_REGISTRY[MyNormal, D.Normal]
        D.kl._KL_MEMOIZE.clear()


KL_PAIRS = {  # (lib) -> (p, q)
    "normal": lambda D, t: (D.Normal(t([0.5, 1.0]), t([1.0, 2.0])),
                            D.Normal(t([0.0, -1.0]), t([2.0, 0.5]))),
    "exponential": lambda D, t: (D.Exponential(t([0.5, 2.0])), D.Exponential(t([1.5, 0.3]))),
    "laplace": lambda D, t: (D.Laplace(t([0.5, 1.0]), t([1.0, 2.0])),
                             D.Laplace(t([0.0, -1.0]), t([2.0, 0.5]))),
    "uniform": lambda D, t: (D.Uniform(t([0.0, 1.0]), t([1.0, 2.0])),
                             D.Uniform(t([-1.0, 0.5]), t([2.0, 2.5]))),
    "gumbel": lambda D, t: (D.Gumbel(t([0.5, 1.0]), t([1.0, 2.0])),
                            D.Gumbel(t([0.0, -1.0]), t([2.0, 0.5]))),
    "half_normal": lambda D, t: (D.HalfNormal(t([1.0, 2.0])), D.HalfNormal(t([2.0, 0.5]))),
    "pareto": lambda D, t: (D.Pareto(t([1.0, 2.0]), t([3.0, 4.0])),
                            D.Pareto(t([0.5, 1.0]), t([2.0, 5.0]))),
    "log_normal": lambda D, t: (D.LogNormal(t([0.5, 1.0]), t([1.0, 2.0])),
                                D.LogNormal(t([0.0, -1.0]), t([2.0, 0.5]))),
    "gamma": lambda D, t: (D.Gamma(t([0.5, 3.0]), t([1.0, 2.0])),
                           D.Gamma(t([1.5, 2.0]), t([0.5, 3.0]))),
    "beta": lambda D, t: (D.Beta(t([0.5, 3.0]), t([1.0, 2.0])),
                          D.Beta(t([1.5, 2.0]), t([0.5, 3.0]))),
    "dirichlet": lambda D, t: (D.Dirichlet(t([0.5, 3.0, 1.0])), D.Dirichlet(t([1.5, 2.0, 0.5]))),
    "poisson": lambda D, t: (D.Poisson(t([0.5, 3.0])), D.Poisson(t([1.5, 2.0]))),
    "geometric": lambda D, t: (D.Geometric(t([0.3, 0.7])), D.Geometric(t([0.5, 0.2]))),
    "bernoulli": lambda D, t: (D.Bernoulli(t([0.3, 0.9])), D.Bernoulli(t([0.5, 0.2]))),
    "categorical": lambda D, t: (D.Categorical(t([0.2, 0.8])), D.Categorical(t([0.6, 0.4]))),
    "independent": lambda D, t: (D.Independent(D.Normal(t([0.5, 1.0]), t([1.0, 2.0])), 1),
                                 D.Independent(D.Normal(t([0.0, -1.0]), t([2.0, 0.5])), 1)),
    "mvn": lambda D, t: (D.MultivariateNormal(t([0.5, 1.0]), t([[2.0, 0.3], [0.3, 1.0]])),
                         D.MultivariateNormal(t([0.0, -1.0]), t([[1.0, -0.2], [-0.2, 0.5]]))),
}


def kl(lib, name):
    p, q = KL_PAIRS[name](lib.distributions, lambda a: _t(lib, a))
    return lib.distributions.kl_divergence(p, q)


# one member of each family, with parameters where every pair below is finite (q's support
# holds p's, the moments the formula needs exist), for the pairs of different families
def _members(D, t):
    return {
        "Bernoulli": lambda: D.Bernoulli(t([0.3, 0.9])),
        "Binomial": lambda: D.Binomial(10, t([0.3, 0.6])),
        "Poisson": lambda: D.Poisson(t([0.5, 3.0])),
        "Beta": lambda: D.Beta(t([0.5, 3.0]), t([1.5, 2.0])),
        "ContinuousBernoulli": lambda: D.ContinuousBernoulli(t([0.2, 0.7])),
        "Exponential": lambda: D.Exponential(t([0.5, 2.0])),
        "Gamma": lambda: D.Gamma(t([1.5, 3.0]), t([1.0, 2.0])),
        "Gumbel": lambda: D.Gumbel(t([0.5, -1.0]), t([1.0, 2.0])),
        "Laplace": lambda: D.Laplace(t([0.5, -1.0]), t([1.0, 2.0])),
        "Normal": lambda: D.Normal(t([0.5, -1.0]), t([1.0, 2.0])),
        "Pareto": lambda: D.Pareto(t([0.5, 1.0]), t([3.5, 5.0])),
        "Uniform": lambda: D.Uniform(t([0.2, 0.1]), t([0.7, 0.6])),
        # (q: a Uniform around [0, 1], around the Pareto's support, above 0)
        "WideUniform": lambda: D.Uniform(t([-0.5, -1.0]), t([1.5, 2.0])),
        "UniformAboveScale": lambda: D.Uniform(t([1.2, 1.5]), t([2.0, 3.0])),
    }


CROSS_KL = [  # (p's family, q's family): finite closed forms
    ("Bernoulli", "Poisson"), ("Beta", "ContinuousBernoulli"), ("Beta", "Exponential"),
    ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "WideUniform"),
    ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"),
    ("ContinuousBernoulli", "WideUniform"), ("Exponential", "Gamma"),
    ("Exponential", "Gumbel"), ("Exponential", "Normal"), ("Gamma", "Exponential"),
    ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gumbel", "Normal"), ("Laplace", "Normal"),
    ("Normal", "Gumbel"), ("Normal", "Laplace"), ("Pareto", "Exponential"),
    ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Uniform", "Beta"),
    ("Uniform", "ContinuousBernoulli"), ("Uniform", "Exponential"), ("Uniform", "Gamma"),
    ("Uniform", "Gumbel"), ("Uniform", "Normal"), ("UniformAboveScale", "Pareto")]
INFINITE_KL = [  # p puts mass where q has none
    ("Beta", "Pareto"), ("ContinuousBernoulli", "Pareto"), ("Poisson", "Bernoulli"),
    ("Poisson", "Binomial"), ("Beta", "Uniform"), ("ContinuousBernoulli", "Uniform"),
    ("WideUniform", "ContinuousBernoulli"), ("WideUniform", "Beta"),
    ("WideUniform", "Exponential"), ("WideUniform", "Gamma"), ("Uniform", "Pareto")] + [
    (p, q) for p, qs in (("Exponential", ("Beta", "ContinuousBernoulli", "Pareto", "Uniform")),
                         ("Gamma", ("Beta", "ContinuousBernoulli", "Pareto", "Uniform")),
                         ("Gumbel", ("Beta", "ContinuousBernoulli", "Exponential", "Gamma",
                                     "Pareto", "Uniform")),
                         ("Laplace", ("Beta", "ContinuousBernoulli", "Exponential", "Gamma",
                                      "Pareto", "Uniform")),
                         ("Normal", ("Beta", "ContinuousBernoulli", "Exponential", "Gamma",
                                     "Pareto", "Uniform")),
                         ("Pareto", ("Beta", "ContinuousBernoulli", "Uniform")))
    for q in qs]
for _p, _q in CROSS_KL + INFINITE_KL:
    KL_PAIRS[f"{_p}_{_q}"] = lambda D, t, _p=_p, _q=_q: (
        _members(D, t)[_p](), _members(D, t)[_q]())
KL_PAIRS.update({
    "binomial": lambda D, t: (D.Binomial(10, t([0.3, 0.6])), D.Binomial(10, t([0.5, 0.2]))),
    "binomial_fewer_trials": lambda D, t: (D.Binomial(10, t([0.3, 0.6])),
                                           D.Binomial(t([10.0, 7.0]), t([0.5, 0.2]))),
    "continuous_bernoulli": lambda D, t: (D.ContinuousBernoulli(t([0.2, 0.7, 0.5001])),
                                          D.ContinuousBernoulli(t([0.6, 0.1, 0.3]))),
    "cauchy": lambda D, t: (D.Cauchy(t([0.5, 1.0]), t([1.0, 2.0])),
                            D.Cauchy(t([0.0, -1.0]), t([2.0, 0.5]))),
    "pareto_heavy_exponential": lambda D, t: (D.Pareto(t([0.5, 1.0]), t([0.8, 3.0])),
                                              D.Exponential(t([0.5, 2.0]))),
    "lowrank_lowrank": lambda D, t: (_lowrank(D, t, 0), _lowrank(D, t, 1)),
    "lowrank_mvn": lambda D, t: (_lowrank(D, t, 0), _mvn(D, t)),
    "mvn_lowrank": lambda D, t: (_mvn(D, t), _lowrank(D, t, 1)),
})
# (Cauchy's log-ratio has no variance to speak of, p's draws of Binomial with more trials land
# where q has none, a Pareto with alpha <= 1 has no mean: checked against torch only)
MONTE_CARLO_KL = [n for n in KL_PAIRS if n not in (
    "cauchy", "binomial_fewer_trials", "pareto_heavy_exponential") and tuple(
        n.split("_", 1)) not in INFINITE_KL]


def _lowrank(D, t, which):
    loc, factor, diag = [([0.5, -1.0, 0.2], [[1.0, 0.5], [-0.3, 0.8], [0.2, -1.0]],
                          [0.5, 1.5, 0.8]),
                         ([0.0, 1.0, -0.5], [[0.3], [1.0], [-0.6]], [1.0, 0.7, 2.0])][which]
    return D.LowRankMultivariateNormal(t(loc), t(factor), t(diag))


def _mvn(D, t):
    return D.MultivariateNormal(t([0.0, 1.0, -1.0]), t([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2],
                                                        [0.1, 0.2, 1.5]]))


@pytest.mark.parametrize("name", MONTE_CARLO_KL)
def test_kl_divergence_is_the_expected_log_ratio(name):
    """KL(p || q) = E_p[log p(X) - log q(X)], estimated from samples of p."""
    gt.manual_seed(1)
    p, q = KL_PAIRS[name](gt.distributions, lambda a: _t(gt, a))
    x = p.sample((200_000,))
    ratio = (p.log_prob(x) - q.log_prob(x)).numpy()
    np.testing.assert_array_less(np.abs(ratio.mean(0) - kl(gt, name).numpy()),
                                 5 * ratio.std(0) / math.sqrt(len(ratio)) + 1e-9)


@pytest.mark.parametrize("pair", INFINITE_KL)
def test_kl_divergence_is_infinite_where_q_misses_ps_support(pair):
    """(and p's draws do land where q's density is 0)"""
    name = "_".join(pair)
    assert bool(gt.isinf(kl(gt, name)).all())
    gt.manual_seed(1)
    p, q = KL_PAIRS[name](gt.distributions, lambda a: _t(gt, a))
    x = p.sample((20000,))
    outside = ~q.support.check(x) if not isinstance(q, gt.distributions.Binomial) else x > 10
    assert bool(outside.any())


def test_kl_divergence_is_infinite_where_its_formula_needs_a_moment_p_lacks():
    """A Pareto with alpha <= 1 has no mean: KL to an Exponential is infinite there; a
    Binomial with more trials than q's reaches counts q cannot."""
    heavy = kl(gt, "pareto_heavy_exponential").tolist()
    assert math.isinf(heavy[0]) and math.isfinite(heavy[1])
    assert math.isinf(kl(gt, "binomial_fewer_trials").tolist()[1])
    assert math.isfinite(kl(gt, "binomial_fewer_trials").tolist()[0])


def test_von_mises_draws_have_the_circular_mean_and_variance():
    """The mean direction of the draws is loc and 1 - their mean resultant length is the
    circular variance, I1/I0 (also for a concentration near 0: torch's Taylor proposal)."""
    gt.manual_seed(0)
    d = gt.distributions.VonMises(_t(gt, [0.5, -3.0, 2.0]), _t(gt, [4.0, 0.7, 1e-6]))
    x = d.sample((100_000,)).numpy()
    assert x.min() >= -math.pi and x.max() <= math.pi
    resultant = np.hypot(np.cos(x).mean(0), np.sin(x).mean(0))
    np.testing.assert_allclose(1 - resultant, d.variance.numpy(), atol=0.01)
    direction = np.arctan2(np.sin(x).mean(0), np.cos(x).mean(0))
    np.testing.assert_allclose(direction[:2], [0.5, -3.0], atol=0.02)
    assert not d.has_rsample


def test_lkj_cholesky_draws_are_correlation_factors_with_the_lkj_marginals():
    """L L^T has a unit diagonal, and the first correlation r of LKJ(eta) in d dims has
    (r + 1) / 2 ~ Beta(eta - 1 + d / 2, the same): mean 0, variance 1 / (2 eta + d - 1)."""
    gt.manual_seed(0)
    eta, dim = np.array([0.5, 2.0, 8.0]), 4
    L = gt.distributions.LKJCholesky(dim, _t(gt, eta)).sample((40_000,))
    assert bool(gt.distributions.constraints.corr_cholesky.check(L).all())
    corr = (L @ L.mT).numpy()
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-12)
    r = corr[..., 1, 0]  # (torch's onion draws give the later rows other spreads: as torch's,
    # which tests/parity compares)
    np.testing.assert_allclose(r.mean(0), 0.0, atol=0.02)
    np.testing.assert_allclose(r.var(0), 1 / (2 * eta + dim - 1), rtol=0.03)


def test_wishart_rsample_is_differentiable_in_the_covariance():
    """Bartlett's draws L A A^T L^T: at fixed noise, smooth in the covariance's factor (torch
    2.13's own rsample raises at backward: it writes into a mask its graph saved)."""
    a = _t(gt, [[1.4, 0.3], [0.2, 0.9]]).requires_grad_()

    def drawn(a):
        gt.manual_seed(3)
        with pytest.warns(UserWarning, match="Singular sample detected"):  # (torch's, always)
            return gt.distributions.Wishart(_t(gt, [4.0, 5.5]), a @ a.mT).rsample((2,))
    check_grads(drawn, [a])


def test_positive_definite_checks_each_matrix_of_a_batch():
    """(the whole batch factorised at once, and matrix by matrix only when one fails)"""
    check = gt.distributions.constraints.positive_definite.check
    batch = np.stack([np.eye(2), -np.eye(2), [[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]])
    assert check(_t(gt, batch)).tolist() == [True, False, True, False]
    assert check(_t(gt, batch[[0, 2]])).tolist() == [True, True]


def test_wishart_refuses_as_torch():
    D = gt.distributions
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 1"):
        D.Wishart(_t(gt, 0.5), _t(gt, np.eye(2)))
    with pytest.warns(UserWarning, match="Low df values detected"):
        D.Wishart(_t(gt, 1.5), _t(gt, np.eye(2)))
    with pytest.raises(AssertionError, match="Exactly one of"):
        D.Wishart(_t(gt, 3.0))


def _richardson(f, a, h):
    """f'(a) by central differences at steps h and h/2, extrapolated (error O(h^4))."""
    coarse = (f(a + h) - f(a - h)) / (2 * h)
    fine = (f(a + h / 2) - f(a - h / 2)) / h
    return (4 * fine - coarse) / 3


def gamma_draw_derivative(alpha, x):
    """dx/dalpha at a fixed CDF value P(alpha, x): -(dP/dalpha) / density, dP/dalpha by
    central differences of the incomplete gamma function (of its smaller tail, for accuracy)."""
    lower = gt.special.gammainc(_t(gt, alpha), _t(gt, x)).numpy() < 0.5

    def tail(a):
        a, xs = _t(gt, a), _t(gt, x)
        return np.where(lower, gt.special.gammainc(a, xs).numpy(),
                        -gt.special.gammaincc(a, xs).numpy())
    density = np.exp((alpha - 1) * np.log(x) - x - np.vectorize(math.lgamma)(alpha))
    return -_richardson(tail, alpha, 1e-3 * alpha) / density


def _beta_continued_fraction(a, b, x):
    """The continued fraction of I_x(a, b) (Lentz's method), fast where x < (a+1)/(a+b+2)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 20000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-16:
            return h
    raise AssertionError("no convergence")


def _log_beta_density(a, b, x):
    return (a - 1) * math.log(x) + (b - 1) * math.log1p(-x) + math.lgamma(a + b) \
        - math.lgamma(a) - math.lgamma(b)


def beta_draw_derivative(a, b, x):
    """dx/da for a draw x of Beta(a, b) at a fixed CDF value I_x(a, b), b held: -(dI/da) /
    density, dI/da by central differences of the smaller tail (each its own fraction)."""
    lower = x < (a + 1) / (a + b + 2)

    def tail(s):
        front = math.exp(_log_beta_density(s, b, x) + math.log(x * (1 - x)))
        return front * _beta_continued_fraction(s, b, x) / s if lower else \
            -front * _beta_continued_fraction(b, s, 1 - x) / b
    return -_richardson(tail, a, 1e-3 * a) / math.exp(_log_beta_density(a, b, x))


def test_gamma_draws_move_with_the_concentration_at_a_fixed_cdf():
    """torch's _standard_gamma_grad (a series, a saddle point expansion, a fitted rational
    function) is the pathwise derivative of a Gamma(alpha) draw to torch's accuracy (5e-4,
    its own test's bound) for alpha from 1e-3 to 1e3, at the engine's own draws; in the upper
    tail beyond the 0.99 quantile, where its fit was not made, to 2e-2."""
    gt.manual_seed(0)
    for alpha in 10.0 ** np.arange(-3, 3.01, 0.5):
        x = gt._standard_gamma(gt.full((60,), alpha, dtype=gt.float64)).numpy()
        x = x[x > 1e-280]  # (below, the density overflows: the reference cannot be computed)
        alphas = np.full_like(x, alpha)
        got = gt._standard_gamma_grad(_t(gt, alphas), _t(gt, x)).numpy()
        error = np.abs(got / gamma_draw_derivative(alphas, x) - 1)
        far_tail = gt.special.gammaincc(_t(gt, alphas), _t(gt, x)).numpy() < 1e-2
        assert error.max(initial=0, where=~far_tail) < 5e-4, f"alpha {alpha}"
        assert error.max(initial=0, where=far_tail) < 2e-2, f"alpha {alpha}"


def test_beta_draws_move_with_the_concentration_at_a_fixed_cdf():
    """torch's _dirichlet_grad(x, a, a + b) * (1 - x) is dx/da for a Beta(a, b) draw x (b held),
    to torch's accuracy (1e-3, its own test's bound), for a and b from 1e-2 to 1e2."""
    gt.manual_seed(0)
    for a in 10.0 ** np.arange(-2, 2.01):
        for b in 10.0 ** np.arange(-2, 2.01):
            x = gt.distributions.Beta(_t(gt, a), _t(gt, b)).sample((12,)).numpy()
            x = x[(x > 1e-200) & (x < 1 - 1e-12)]  # (the reference's float64 reach)
            got = gt._dirichlet_grad(_t(gt, x), _t(gt, np.full_like(x, a)),
                                     _t(gt, np.full_like(x, a + b))).numpy() * (1 - x)
            expected = [beta_draw_derivative(a, b, v) for v in x]
            np.testing.assert_allclose(got, expected, rtol=1e-3, err_msg=f"a {a}, b {b}")


def test_rsample_of_the_gamma_family_carries_the_pathwise_gradient():
    """Gamma's rsample is a standard draw over the rate, Beta's a Dirichlet's first coordinate:
    the gradients reaching the parameters are those of the draws at a fixed CDF value."""
    D = gt.distributions
    concentration, rate = _t(gt, [0.3, 2.0, 40.0]).requires_grad_(), \
        _t(gt, [2.0, 0.5, 1.0]).requires_grad_()
    gt.manual_seed(1)
    x = D.Gamma(concentration, rate).rsample()
    x.sum().backward()
    standard = x.detach().numpy() * rate.detach().numpy()
    np.testing.assert_allclose(concentration.grad.numpy(), gamma_draw_derivative(
        concentration.detach().numpy(), standard) / rate.detach().numpy(), rtol=5e-4)
    np.testing.assert_allclose(rate.grad.numpy(), -x.detach().numpy() / rate.detach().numpy())

    a, b = _t(gt, [0.5, 3.0, 20.0]).requires_grad_(), _t(gt, [2.0, 0.7, 15.0]).requires_grad_()
    x = D.Beta(a, b).rsample()
    x.sum().backward()
    draws, a_, b_ = x.detach().numpy(), a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), [beta_draw_derivative(*v) for v in zip(
        a_, b_, draws)], rtol=1e-3)
    # (b is the first concentration of 1 - x)
    np.testing.assert_allclose(b.grad.numpy(), [-beta_draw_derivative(*v) for v in zip(
        b_, a_, 1 - draws)], rtol=1e-3)


@pytest.mark.parametrize("name", ["gamma", "chi2", "beta", "dirichlet", "student_t",
                                  "fisher_snedecor", "inverse_gamma"])
def test_rsample_of_families_built_on_gamma_draws_reaches_every_parameter(name):
    params = [gt.tensor(np.asarray(p, dtype=np.float64), requires_grad=True)
              for p in FAMILIES[name][1]]
    gt.manual_seed(2)
    d = family(gt, name, params)
    assert d.has_rsample
    draws = d.rsample((5,))
    assert draws.shape == (5,) + tuple(d.batch_shape + d.event_shape)
    grads = gt.autograd.grad(draws.sum(), params)
    for p, g in zip(params, grads):
        assert g.shape == p.shape and bool(g.isfinite().all()) and bool((g != 0).any())


def test_the_draws_own_gradients_refuse_a_gradient_as_torch():
    """_standard_gamma_grad, _dirichlet_grad and _sample_dirichlet are not differentiable on
    torch: their nodes raise at backward, and a second order through rsample does too."""
    alpha = _t(gt, [0.5, 2.0]).requires_grad_()
    (grad,) = gt.autograd.grad(gt._standard_gamma(alpha).sum(), alpha, create_graph=True)
    with pytest.raises(NotImplementedError, match="'_standard_gamma_grad' is not implemented"):
        grad.sum().backward()
    with pytest.raises(RuntimeError, match="aten::_sample_dirichlet is not implemented"):
        gt._sample_dirichlet(alpha).sum().backward()
    with pytest.raises(NotImplementedError, match='"gamma_cpu" not implemented for \'Long\''):
        gt._standard_gamma(gt.tensor([1, 2]))


def lowrank_matrices(lib):
    d = family(lib, "lowrank_multivariate_normal")
    return [d.covariance_matrix, d.precision_matrix, d.scale_tril, d.variance]


def test_lowrank_matrices_are_the_covariances():
    cov, precision, tril, variance = (m.numpy() for m in lowrank_matrices(gt))
    _, (_, w, diag), *_ = FAMILIES["lowrank_multivariate_normal"]
    expected = np.asarray(w) @ np.asarray(w).T + np.diag(diag)
    np.testing.assert_allclose(cov, np.broadcast_to(expected, (2, 3, 3)), rtol=1e-12)
    np.testing.assert_allclose(precision[0], np.linalg.inv(expected), rtol=1e-10)
    np.testing.assert_allclose(tril[0] @ tril[0].T, expected, rtol=1e-12)
    np.testing.assert_allclose(variance[0], np.diag(expected), rtol=1e-12)


def test_the_module_paths_hold_the_classes():
    import gradtool.distributions.constraint_registry as constraint_registry
    import gradtool.distributions.exponential as exponential
    import gradtool.distributions.transformed_distribution as transformed_distribution
    from gradtool.distributions.transforms import ExpTransform
    from gradtool.distributions.utils import broadcast_all, lazy_property  # noqa: F401
    assert exponential.Exponential is gt.distributions.Exponential
    assert transformed_distribution.TransformedDistribution is \
        gt.distributions.TransformedDistribution
    assert constraint_registry.biject_to is gt.distributions.biject_to
    assert ExpTransform is gt.distributions.ExpTransform
    from gradtool.distributions.lkj_cholesky import LKJCholesky
    from gradtool.distributions.von_mises import VonMises
    from gradtool.distributions.wishart import Wishart
    assert (LKJCholesky, VonMises, Wishart) == (gt.distributions.LKJCholesky,
                                                gt.distributions.VonMises, gt.distributions.Wishart)
    assert {"LKJCholesky", "VonMises", "Wishart"} <= set(gt.distributions.__all__)
