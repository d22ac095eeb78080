"""torch.distributions' MultivariateNormal, Bernoulli, OneHotCategorical and Independent:
log_prob, entropy, moments and samples against their closed forms, gradients through
log_prob and rsample against central differences, and the argument checks. The programs
below run on either library: tests/parity/test_distributions.py compares them with torch."""
import math

import numpy as np
import pytest

import gradtool as gt
from gradcheck_util import check_grads

COV = np.array([[2.0, 0.6, 0.2], [0.6, 1.5, -0.3], [0.2, -0.3, 1.0]])
LOC = np.array([0.5, -1.0, 0.25])
VALUE = np.array([[0.1, 0.2, -0.3], [1.0, -2.0, 0.5]])


def _t(lib, a):
    return lib.tensor(np.asarray(a, dtype=np.float64))


def _mvn(lib, form="covariance_matrix"):
    cov = _t(lib, COV)
    matrix = {"covariance_matrix": cov, "precision_matrix": lib.linalg.inv(cov),
              "scale_tril": lib.linalg.cholesky(cov)}[form]
    return lib.distributions.MultivariateNormal(_t(lib, LOC), **{form: matrix})


# (lib) -> a tensor or a list of tensors: the same numbers on both libraries
PROGRAMS = {
    **{f"mvn_{form}": lambda lib, form=form: [
        _mvn(lib, form).log_prob(_t(lib, VALUE)), _mvn(lib, form).entropy(),
        _mvn(lib, form).mean, _mvn(lib, form).variance, _mvn(lib, form).covariance_matrix,
        _mvn(lib, form).scale_tril, _mvn(lib, form).precision_matrix]
       for form in ("covariance_matrix", "precision_matrix", "scale_tril")},
    "mvn_batched": lambda lib: (lambda m: [m.log_prob(_t(lib, VALUE)), m.entropy(), m.variance])(
        lib.distributions.MultivariateNormal(_t(lib, [LOC, -LOC]), _t(lib, COV))),
    "bernoulli_probs": lambda lib: (lambda b: [
        b.log_prob(_t(lib, [[1, 0, 1], [0, 0, 1]])), b.entropy(), b.mean, b.variance, b.mode,
        b.logits, b.enumerate_support()])(
        lib.distributions.Bernoulli(_t(lib, [0.2, 0.5, 0.9]))),
    "bernoulli_logits": lambda lib: (lambda b: [b.log_prob(_t(lib, [1, 0])), b.entropy(),
                                                b.probs])(
        lib.distributions.Bernoulli(logits=_t(lib, [-1.5, 2.0]))),
    "one_hot_categorical": lambda lib: (lambda o: [
        o.log_prob(_t(lib, [[0, 1, 0], [0, 0, 1]])), o.entropy(), o.mean, o.variance, o.mode,
        o.enumerate_support()])(
        lib.distributions.OneHotCategorical(_t(lib, [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]))),
    "one_hot_categorical_logits": lambda lib: (lambda o: [o.log_prob(_t(lib, [1, 0])),
                                                          o.probs])(
        lib.distributions.OneHotCategorical(logits=_t(lib, [0.3, -0.2]))),
    "independent_normal": lambda lib: (lambda d: [d.log_prob(_t(lib, VALUE)), d.entropy(),
                                                  d.mean, d.variance])(
        lib.distributions.Independent(lib.distributions.Normal(
            _t(lib, [LOC, -LOC]), _t(lib, [[1.0, 2.0, 0.5], [0.3, 1.0, 1.5]])), 1)),
    "independent_bernoulli_2": lambda lib: (lambda d: [
        d.log_prob(_t(lib, [[1, 0], [0, 1]])), d.entropy()])(
        lib.distributions.Independent(lib.distributions.Bernoulli(
            _t(lib, [[0.2, 0.4], [0.7, 0.9]])), 2)),
}
SHAPES = {
    "mvn": lambda lib: (lambda m: [m.batch_shape, m.event_shape, m.sample((4,)).shape,
                                   m.rsample().shape])(
        lib.distributions.MultivariateNormal(_t(lib, np.zeros((2, 3))), _t(lib, COV))),
    "bernoulli": lambda lib: (lambda b: [b.batch_shape, b.event_shape, b.sample((5,)).shape])(
        lib.distributions.Bernoulli(_t(lib, [[0.2, 0.5, 0.9]]))),
    "one_hot": lambda lib: (lambda o: [o.batch_shape, o.event_shape, o.sample((2,)).shape])(
        lib.distributions.OneHotCategorical(_t(lib, [[0.2, 0.8], [0.5, 0.5]]))),
    "independent": lambda lib: (lambda d: [d.batch_shape, d.event_shape, d.sample().shape,
                                           d.has_rsample])(
        lib.distributions.Independent(lib.distributions.Normal(_t(lib, np.zeros((3, 2))),
                                                               _t(lib, np.ones((3, 2)))), 1)),
}
ERRORS = {
    "mvn_not_positive_definite": lambda lib: lib.distributions.MultivariateNormal(
        _t(lib, [0, 0]), _t(lib, [[1, 2], [2, 1]])),
    "mvn_two_matrices": lambda lib: lib.distributions.MultivariateNormal(
        _t(lib, [0, 0]), _t(lib, np.eye(2)), scale_tril=_t(lib, np.eye(2))),
    "mvn_scalar_loc": lambda lib: lib.distributions.MultivariateNormal(
        _t(lib, 0.0), _t(lib, np.eye(2))),
    "mvn_vector_covariance": lambda lib: lib.distributions.MultivariateNormal(
        _t(lib, [0.0]), _t(lib, [1.0])),
    "bernoulli_probs_above_one": lambda lib: lib.distributions.Bernoulli(_t(lib, [1.5])),
    "bernoulli_both": lambda lib: lib.distributions.Bernoulli(_t(lib, [0.5]), _t(lib, [0.0])),
    "bernoulli_value_not_boolean": lambda lib: lib.distributions.Bernoulli(
        _t(lib, [0.3])).log_prob(_t(lib, [0.5])),
    "one_hot_value_not_one_hot": lambda lib: lib.distributions.OneHotCategorical(
        _t(lib, [0.2, 0.8])).log_prob(_t(lib, [0.5, 0.5])),
    "independent_too_many_dims": lambda lib: lib.distributions.Independent(
        lib.distributions.Normal(_t(lib, [0.0]), _t(lib, [1.0])), 2),
}


def _mvn_log_pdf(x, loc, cov):
    d = x - loc
    inv = np.linalg.inv(cov)
    return -0.5 * (len(loc) * math.log(2 * math.pi) + np.einsum("...i,ij,...j", d, inv, d)
                   + np.linalg.slogdet(cov)[1])


@pytest.mark.parametrize("form", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_log_prob_and_entropy_are_the_closed_forms(form):
    log_prob, entropy, mean, variance, cov, tril, precision = PROGRAMS[f"mvn_{form}"](gt)
    np.testing.assert_allclose(log_prob.numpy(), _mvn_log_pdf(VALUE, LOC, COV), rtol=1e-12)
    np.testing.assert_allclose(entropy.item(), 0.5 * (3 * (1 + math.log(2 * math.pi))
                                                      + np.linalg.slogdet(COV)[1]), rtol=1e-12)
    np.testing.assert_allclose(variance.numpy(), np.diag(COV), rtol=1e-12)
    np.testing.assert_allclose(cov.numpy(), COV, rtol=1e-12)
    np.testing.assert_allclose(tril.numpy(), np.linalg.cholesky(COV), rtol=1e-12)
    np.testing.assert_allclose(precision.numpy(), np.linalg.inv(COV), rtol=1e-10)


def test_multivariate_normal_samples_have_its_mean_and_covariance():
    gt.manual_seed(0)
    samples = _mvn(gt).sample((20000,)).numpy()
    np.testing.assert_allclose(samples.mean(0), LOC, atol=0.05)
    np.testing.assert_allclose(np.cov(samples.T), COV, atol=0.08)


def _pd(a):  # a positive definite matrix of a free one (so central differences stay inside)
    return a @ a.mT + gt.eye(3, dtype=gt.float64)


def test_gradients_flow_through_multivariate_normal_log_prob_and_rsample():
    rng = np.random.default_rng(0)
    loc, a = (gt.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3,), (3, 3)))
    value = gt.tensor(VALUE)
    check_grads(lambda loc, a: gt.distributions.MultivariateNormal(loc, _pd(a)).log_prob(value),
                [loc, a], order=2)
    check_grads(lambda loc, a: gt.distributions.MultivariateNormal(loc, _pd(a)).entropy(),
                [loc, a])

    def drawn(loc, a):
        gt.manual_seed(3)  # (the same noise at every point)
        return gt.distributions.MultivariateNormal(loc, scale_tril=a.tril()).rsample((2,))
    check_grads(drawn, [loc, a], order=2)


def test_gradients_flow_through_bernoulli_and_one_hot_log_prob_and_entropy():
    rng = np.random.default_rng(1)
    logits = gt.tensor(rng.standard_normal(4), requires_grad=True)
    value = gt.tensor([1.0, 0.0, 0.0, 1.0], dtype=gt.float64)
    check_grads(lambda l: gt.distributions.Bernoulli(logits=l).log_prob(value), [logits], order=2)
    check_grads(lambda l: gt.distributions.Bernoulli(logits=l).entropy(), [logits], order=2)
    probs = gt.tensor(rng.uniform(0.2, 0.8, 4), requires_grad=True)
    check_grads(lambda p: gt.distributions.Bernoulli(p).log_prob(value), [probs])
    check_grads(lambda l: gt.distributions.OneHotCategorical(logits=l).log_prob(
        gt.tensor([0.0, 0.0, 1.0, 0.0], dtype=gt.float64)), [logits], order=2)
    check_grads(lambda l: gt.distributions.Independent(gt.distributions.Bernoulli(
        logits=l.view(2, 2)), 1).log_prob(value.view(2, 2)), [logits])


def test_bernoulli_and_one_hot_values_are_the_closed_forms():
    log_prob, entropy, mean, variance, mode, logits, support = PROGRAMS["bernoulli_probs"](gt)
    p = np.array([0.2, 0.5, 0.9])
    np.testing.assert_allclose(log_prob.numpy(), np.log(np.where([[1, 0, 1], [0, 0, 1]], p,
                                                                  1 - p)), rtol=1e-12)
    np.testing.assert_allclose(entropy.numpy(), -p * np.log(p) - (1 - p) * np.log(1 - p))
    np.testing.assert_array_equal(mode.numpy(), [0.0, np.nan, 1.0])
    np.testing.assert_array_equal(support.numpy(), [[0, 0, 0], [1, 1, 1]])
    o_log_prob, o_entropy, *_ = PROGRAMS["one_hot_categorical"](gt)
    np.testing.assert_allclose(o_log_prob.numpy(), np.log([0.5, 0.3]), rtol=1e-12)


def test_shapes():
    assert SHAPES["mvn"](gt) == [(2,), (3,), (4, 2, 3), (2, 3)]
    assert SHAPES["independent"](gt) == [(3,), (2,), (3, 2), True]
    sample = gt.distributions.OneHotCategorical(gt.tensor([[0.2, 0.8]])).sample((50,))
    assert sample.shape == (50, 1, 2) and (sample.sum(-1) == 1).all().item()


@pytest.mark.parametrize("name", ERRORS)
def test_arguments_outside_their_constraints_are_refused(name):
    with pytest.raises(ValueError):
        ERRORS[name](gt)


def test_the_module_paths_hold_the_classes():
    import gradtool.distributions.bernoulli as bernoulli
    import gradtool.distributions.independent as independent
    import gradtool.distributions.multivariate_normal as multivariate_normal
    import gradtool.distributions.one_hot_categorical as one_hot_categorical
    assert multivariate_normal.MultivariateNormal is gt.distributions.MultivariateNormal
    assert bernoulli.Bernoulli is gt.distributions.Bernoulli
    assert independent.Independent is gt.distributions.Independent
    assert one_hot_categorical.OneHotCategorical is gt.distributions.OneHotCategorical
