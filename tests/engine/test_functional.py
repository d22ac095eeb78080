"""gradtool.autograd.functional: torch's jacobian, hessian, vjp, jvp, hvp and vhp, checked
against closed forms, torch's output structure and strict-mode errors (against torch itself:
tests/parity/test_functional.py)."""
import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.autograd import functional as F
from tests.checks.test_gradcheck import Cube

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3))
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)


def t(data, requires_grad=False):
    return gt.tensor(np.asarray(data), dtype=gt.float64, requires_grad=requires_grad)


def close(tensor, expected):
    np.testing.assert_allclose(tensor.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


# ---------------- closed forms ----------------
def test_jacobian_of_a_linear_map_is_its_matrix():
    jac = F.jacobian(lambda x: t(A) @ x, t(X))
    assert isinstance(jac, gt.Tensor) and jac.shape == (2, 3)
    close(jac, A)


def test_jacobian_shape_is_output_shape_then_input_shape():
    jac = F.jacobian(lambda m: m.exp(), t(A))
    assert jac.shape == (2, 3, 2, 3)
    expected = np.zeros((2, 3, 2, 3))
    for i in np.ndindex(2, 3):
        expected[i + i] = np.exp(A[i])
    close(jac, expected)


def test_jacobian_structure_follows_tuples_of_inputs_and_outputs():
    def f(x, y):
        return x * y, (x * y).sum()

    one_in = F.jacobian(lambda x: x * t(Y), t(X))
    tuple_in = F.jacobian(lambda x, y: x * y, (t(X), t(Y)))
    tuple_out = F.jacobian(lambda x: (x.sin(), x.sum()), t(X))
    both = F.jacobian(f, (t(X), t(Y)))
    assert isinstance(one_in, gt.Tensor)
    assert isinstance(tuple_in, tuple) and len(tuple_in) == 2
    assert isinstance(tuple_out, tuple) and tuple_out[1].shape == (3,)
    assert [[j.shape for j in row] for row in both] == [[(3, 3), (3, 3)], [(3,), (3,)]]
    close(tuple_in[0], np.diag(Y))
    close(tuple_in[1], np.diag(X))
    close(both[1][0], Y)
    close(tuple_out[0], np.diag(np.cos(X)))


def test_jacobian_with_create_graph_is_differentiable():
    x = t(X, requires_grad=True)
    jac = F.jacobian(lambda x: x ** 3, x, create_graph=True)
    assert jac.requires_grad
    (second,) = gt.autograd.grad(jac.sum(), x)
    close(second, 6 * X)
    assert not F.jacobian(lambda x: x ** 3, x).requires_grad


def test_jacobian_vectorize_and_forward_strategy_give_the_same_result():
    f = lambda x: (t(A) @ x).tanh()  # noqa: E731
    plain = F.jacobian(f, t(X))
    close(F.jacobian(f, t(X), vectorize=True), plain.numpy())
    close(F.jacobian(f, t(X), vectorize=True, strategy="forward-mode"), plain.numpy())
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(f, t(X), strategy="forward-mode")


def test_hessian_closed_forms():
    close(F.hessian(lambda x: (x ** 3).sum(), t(X)), np.diag(6 * X))
    hess = F.hessian(lambda x, y: (x * y).sum(), (t(X), t(Y)))
    assert [[h.shape for h in row] for row in hess] == [[(3, 3), (3, 3)], [(3, 3), (3, 3)]]
    close(hess[0][0], np.zeros((3, 3)))
    close(hess[0][1], np.eye(3))
    close(hess[1][0], np.eye(3))
    with pytest.raises(RuntimeError, match="should contain a single element"):
        F.hessian(lambda x: x ** 2, t(X))


def test_vjp_and_jvp_closed_forms():
    v = RNG.standard_normal(2)
    out, vjp = F.vjp(lambda x: t(A) @ x, t(X), t(v))
    close(out, A @ X)
    close(vjp, v @ A)
    out, jvp = F.jvp(lambda x: t(A) @ x, t(X), t(Y))
    close(jvp, A @ Y)
    _, (gx, gy) = F.vjp(lambda x, y: (x * y).sum(), (t(X), t(Y)))  # v=None: scalar output
    close(gx, Y)
    close(gy, X)
    _, (j1, j2) = F.jvp(lambda x: (x.exp(), x.sum()), t(X), t(Y))
    close(j1, np.exp(X) * Y)
    close(j2, Y.sum())


def test_hvp_and_vhp_closed_forms():
    v = RNG.standard_normal(3)
    f = lambda x: (x ** 3).sum()  # noqa: E731  H = diag(6x)
    out, hvp = F.hvp(f, t(X), t(v))
    close(out, (X ** 3).sum())
    close(hvp, 6 * X * v)
    close(F.vhp(f, t(X), t(v))[1], 6 * X * v)
    g = lambda x, y: (x * x * y).sum()  # noqa: E731  H = [[2 diag(y), 2 diag(x)], [2 diag(x), 0]]
    _, (hx, hy) = F.hvp(g, (t(X), t(Y)), (t(v), t(v)))
    close(hx, 2 * Y * v + 2 * X * v)
    close(hy, 2 * X * v)


def test_results_are_detached_unless_create_graph():
    x = t(X, requires_grad=True)
    out, vjp = F.vjp(lambda x: x.exp().sum(), x)
    assert not out.requires_grad and not vjp.requires_grad
    out, vjp = F.vjp(lambda x: x.exp().sum(), x, create_graph=True)
    assert out.requires_grad and vjp.requires_grad
    (g,) = gt.autograd.grad(vjp.sum(), x)
    close(g, np.exp(X))


def test_inputs_independent_of_the_output_get_zeros_or_a_strict_error():
    _, (gx, gy) = F.vjp(lambda x, y: (x * 2).sum(), (t(X), t(Y)))
    close(gy, np.zeros(3))
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in "
                                           "strict mode"):
        F.vjp(lambda x, y: (x * 2).sum(), (t(X), t(Y)), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        F.jacobian(lambda x, y: x * 2, (t(X), t(Y)), strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with "
                                           "respect to input 0 is independent of the input"):
        F.hessian(lambda x: (x * 2).sum(), t(X), strict=True)


def test_argument_errors_as_torch():
    with pytest.raises(RuntimeError, match="v can only be None if the user-provided function "
                                           "returns a single Tensor with a single element"):
        F.vjp(lambda x: x * 2, t(X))
    with pytest.raises(RuntimeError, match="v has invalid size: should be"):
        F.vjp(lambda x: x * 2, t(X), t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2"):
        F.jvp(lambda x, y: x * y, (t(X), t(Y)), (t(X),))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        F.jacobian(lambda x: x, [t(X)])
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        F.vhp(lambda x: (x.sum(), x.sum()), t(X), t(X))


# ---------------- jvp with create_graph ----------------
def _jvp_docstring_example(lib):
    def exp_reducer(x):
        return x.exp().sum(dim=1)
    inputs = lib.rand(4, 4, dtype=lib.float64)
    v = lib.ones(4, 4, dtype=lib.float64)
    return lib.autograd.functional.jvp(exp_reducer, inputs, v, create_graph=True)


def test_jvp_with_create_graph_records_torchs_graph():
    # torch's trick: the gradient, with respect to grad_outputs, of sum's backward (an expand
    # of an unsqueeze): its result hangs off a squeeze
    output, jvp = _jvp_docstring_example(gt)
    assert output.grad_fn.name() == "SumBackward1"
    assert jvp.grad_fn.name() == "SqueezeBackward1"
    np.testing.assert_allclose(jvp.detach().numpy(), output.detach().numpy())


def _assert_same(ours, theirs, path="result"):
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), path
        for k, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{path}[{k}]")
        return
    assert tuple(ours.shape) == tuple(theirs.shape), path
    assert ours.requires_grad == theirs.requires_grad, path
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12, err_msg=path)


# ---------------- vectorize=True: all rows in one batched backward pass ----------------
def _jacobians(f, inputs, **kw):
    return F.jacobian(f, inputs, **kw), F.jacobian(f, inputs, vectorize=True, **kw)


@pytest.mark.parametrize("name, f, inputs", [
    ("tuples, an unused input", lambda x, y, z: (x * y, (x.sin() * y).sum()),
     lambda: (t(X), t(Y), t(Y))),
    ("matrices and reductions", lambda m, x: (m @ x).softmax(0) + m.mean(1) * x.sum(),
     lambda: (t(A), t(X))),
    ("shape ops", lambda m: m.t().reshape(6).unsqueeze(0).expand(2, 6).transpose(0, 1),
     lambda: t(A)),
    # a custom Function has no batched formula: it takes part one element at a time
    ("a custom Function", lambda x: Cube.apply(x.exp()) * x, lambda: t(X)),
    ("indexing (one element at a time)", lambda m: m[:, 1:] * m[0, 1:], lambda: t(A)),
])
def test_vectorized_jacobian_equals_row_by_row(name, f, inputs):
    plain, vectorized = _jacobians(f, inputs())
    _assert_same(vectorized, plain)


def test_vectorized_jacobian_with_hooks_or_create_graph_goes_one_row_at_a_time():
    seen = []

    def f(x):
        y = x * x
        y.register_hook(lambda g: seen.append(tuple(g.shape)))
        return y.sin()

    plain, vectorized = _jacobians(f, t(X))
    _assert_same(vectorized, plain)
    assert seen == [(3,)] * 6, "hooks see one gradient at a time, as with vectorize=False"
    x = t(X, requires_grad=True)
    jac = F.jacobian(lambda x: x ** 3, x, create_graph=True, vectorize=True)
    (second,) = gt.autograd.grad(jac.sum(), x)
    close(second, 6 * X)


def test_vectorized_hessian_matches_its_closed_form():
    x0 = np.random.default_rng(5).standard_normal(50)
    s = np.sum(x0 * x0)
    expected = np.diag(-2 * np.sin(2 * x0)) + 4 * s * np.eye(50) + 8 * np.outer(x0, x0)
    hess = F.hessian(lambda x: (x.sin() * x.cos()).sum() + (x * x).sum() ** 2, t(x0),
                     vectorize=True)
    np.testing.assert_allclose(hess.numpy(), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("rows_per_pass", [None, 1, 2])
def test_hessian_asked_for_no_strategy_batches_its_rows_with_the_same_result(
        monkeypatch, rows_per_pass):
    """With no strategy asked for, hessian's rows come from batched backward passes (the
    fastest way), in passes of bounded size: the Hessian of one backward pass per row (what
    create_graph=True still takes) and of the closed form, in torch's tuple structure."""
    if rows_per_pass is not None:  # the bound counts row elements: rows x the widest input
        monkeypatch.setattr(F, "_ROWS_PER_PASS", rows_per_pass * 4)

    def f(x, y):
        return (x * x).sum() ** 2 * y.prod() + (x.sin() * y[:3]).sum()
    inputs = (t(X), t(RNG.standard_normal(4)))
    batched = F.hessian(f, inputs)
    row_by_row = F.hessian(f, inputs, create_graph=True)
    for i in range(2):
        for j in range(2):
            assert not batched[i][j].requires_grad
            close(batched[i][j], row_by_row[i][j].detach().numpy())
    assert batched[1][0].shape == (4, 3)
    s = np.sum(X * X)  # sum(x^2)^2 + sum(sin x): 4 s I + 8 x x^T - diag(sin x)
    close(F.hessian(lambda x: (x * x).sum() ** 2 + x.sin().sum(), t(X)),
          4 * s * np.eye(3) + 8 * np.outer(X, X) - np.diag(np.sin(X)))


# ---------------- strategy="forward-mode": all the columns in one forward pass ----------------
@pytest.mark.parametrize("name, f, inputs", [
    ("tuples, an unused input", lambda x, y, z: (x * y, (x.sin() * y).sum()),
     lambda: (t(X), t(Y), t(Y))),
    ("matrices and reductions", lambda m, x: (m @ x).softmax(0) + m.mean(1) * x.sum(),
     lambda: (t(A), t(X))),
    ("an empty input", lambda x, e: x.exp() * (e.sum() + 1), lambda: (t(X), t(np.zeros(0)))),
    # a 0-d tensor reduced: the batch of tangents stays whole (an empty dim list is every dim)
    ("a reduced dot product", lambda x, y: (x @ y).sum() * x.sum(dim=[]) * x,
     lambda: (t(X), t(Y))),
    ("a constant output", lambda x: (x.sin(), t(Y)), lambda: t(X)),
])
def test_forward_mode_jacobian_runs_func_once_for_the_reverse_mode_result(name, f, inputs):
    """Every input's one-hot tangents go through func in one forward pass (as torch's vmap
    over its standard basis): func runs once, however many inputs, and the Jacobian is
    reverse mode's, in the same structure."""
    calls = []

    def counted(*args):
        calls.append(len(args))
        return f(*args)
    forward = F.jacobian(counted, inputs(), vectorize=True, strategy="forward-mode")
    assert len(calls) == 1
    _assert_same(forward, F.jacobian(f, inputs()))


def test_forward_over_reverse_hessian_runs_func_once():
    calls = []

    def s(x, y):
        calls.append(1)
        return (x * x).sum() ** 2 * y.prod() + (x.sin() * y[:3]).sum()
    inputs = (t(X), t(RNG.standard_normal(4)))
    forward = F.hessian(s, inputs, vectorize=True, outer_jacobian_strategy="forward-mode")
    assert len(calls) == 1
    _assert_same(forward, F.hessian(s, inputs))
    x0 = np.random.default_rng(5).standard_normal(50)
    expected = (np.diag(-2 * np.sin(2 * x0)) + 4 * np.sum(x0 * x0) * np.eye(50)
                + 8 * np.outer(x0, x0))
    hess = F.hessian(lambda x: (x.sin() * x.cos()).sum() + (x * x).sum() ** 2, t(x0),
                     vectorize=True, outer_jacobian_strategy="forward-mode")
    np.testing.assert_allclose(hess.numpy(), expected, rtol=1e-10, atol=1e-10)


# ---------------- autograd.grad(is_grads_batched=True) ----------------
def test_batched_grads_are_one_vector_jacobian_product_per_row():
    m = t(A, requires_grad=True)
    out = (m * m).sum(1)
    vs = RNG.standard_normal((4, 2))
    (g,) = gt.autograd.grad(out, m, t(vs), is_grads_batched=True)
    close(g, vs[:, :, None] * 2 * A)
    assert not m.grad_fn and m.grad is None  # returned, not accumulated


def test_batched_grads_errors_and_options_follow_torch():
    x = t(X, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=r"If `is_grads_batched=True`, we interpret the first "
                       r"dimension .* grad_output\[0\] has a shape of gradtool.Size\(\[2\]\) "
                       r"and output\[0\] has a shape of gradtool.Size\(\[3\]\)"):
        gt.autograd.grad(y, x, t(np.ones((3, 2))), is_grads_batched=True, retain_graph=True)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        gt.autograd.grad((y, y.sum()), x, (t(np.ones((2, 3))), t(np.ones(5))),
                         is_grads_batched=True, retain_graph=True)
    unused = t(Y, requires_grad=True)
    g, zeros = gt.autograd.grad(y, (x, unused), t(np.eye(3)), is_grads_batched=True,
                                materialize_grads=True)
    close(g, 2 * np.eye(3))
    close(zeros, np.zeros((3, 3)))
    (empty,) = gt.autograd.grad(y, x, t(np.zeros((0, 3))), is_grads_batched=True,
                                retain_graph=True)
    assert empty.shape == (0, 3)


