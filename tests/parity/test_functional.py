"""autograd.functional against torch: jacobian, hessian, vjp, jvp, hvp and vhp with and
without create_graph and vectorize, jvp's graph, and autograd.grad(is_grads_batched=True).
Tests marked parity, skipped without torch."""
import pytest

import gradtool as gt
from tests.engine.test_functional import RNG, A, X, Y, _assert_same, _jvp_docstring_example

pytestmark = pytest.mark.parity


def _cases(T):
    def f(x, y):
        return (x * y).tanh(), x.sin() @ y

    def s(x, y):
        return (x.exp() @ y.cos()).sum() + (x ** 3).sum()

    return f, s


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_every_function_matches_torch(create_graph, vectorize):
    torch = pytest.importorskip("torch")
    results = {}
    for T in (gt, torch):
        f, s = _cases(T)
        x, y, v2 = (T.tensor(a, dtype=T.float64) for a in (X, Y, X + 1))
        fn = T.autograd.functional
        kw = {"create_graph": create_graph}
        vec = {"create_graph": create_graph, "vectorize": vectorize}
        results[T] = [
            fn.jacobian(f, (x, y), **vec), fn.jacobian(lambda x: f(x, y)[0], x, **vec),
            fn.hessian(s, (x, y), **vec), fn.hessian(lambda x: s(x, y), x, **vec),
            fn.vjp(f, (x, y), (v2, T.tensor(2.0, dtype=T.float64)), **kw),
            fn.jvp(f, (x, y), (v2, y), **kw), fn.hvp(s, (x, y), (v2, y), **kw),
            fn.vhp(s, (x, y), (v2, y), **kw), fn.vjp(lambda x: s(x, y), x, **kw),
        ]
    _assert_same(results[gt], results[torch])


def test_jvp_docstring_example_matches_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _jvp_docstring_example(gt), _jvp_docstring_example(torch)
    assert [t.grad_fn.name() for t in ours] == [t.grad_fn.name() for t in theirs]


def test_batched_grads_match_torch():
    torch = pytest.importorskip("torch")
    vs = RNG.standard_normal((5, 2))
    results = []
    for T in (gt, torch):
        m = T.tensor(A, dtype=T.float64, requires_grad=True)
        x = T.tensor(X, dtype=T.float64, requires_grad=True)
        out = (m @ x.tanh()).softmax(0) * m.sum(1)
        results.append(T.autograd.grad(out, (m, x), T.tensor(vs), is_grads_batched=True))
    _assert_same(*results)


def test_forward_mode_strategies_match_torch():
    """jacobian(strategy="forward-mode") and hessian(outer_jacobian_strategy="forward-mode")
    with tuple inputs and outputs, an empty input and an output no input reaches."""
    torch = pytest.importorskip("torch")
    results = {}
    for T in (gt, torch):
        f, s = _cases(T)
        x, y = (T.tensor(a, dtype=T.float64) for a in (X, Y))
        e, c = T.zeros(0, dtype=T.float64), T.tensor(Y, dtype=T.float64)
        fn = T.autograd.functional
        fwd = {"vectorize": True, "strategy": "forward-mode"}
        outer = {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}
        results[T] = [
            fn.jacobian(f, (x, y), **fwd), fn.jacobian(lambda x: f(x, y)[0], x, **fwd),
            fn.jacobian(lambda x, e: (x.exp() * (e.sum() + 1), c), (x, e), **fwd),
            # (values only: torch's forward-over-reverse result keeps a graph back to the
            # dual inputs it made itself, requires_grad=True; gradtool's records none)
            *(h.detach() for row in fn.hessian(s, (x, y), **outer) for h in row),
            fn.hessian(lambda x: s(x, y), x, **outer).detach(),
        ]
    _assert_same(results[gt], results[torch])


@pytest.mark.parametrize("kw", [{}, {"vectorize": True}, {"create_graph": True},
                                {"strict": True},
                                {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}])
def test_hessian_hands_func_what_torch_hands_it(kw):
    """However hessian takes its rows, func gets what torch's gives it (a view of the input
    that requires grad) and the Hessian is torch's."""
    torch = pytest.importorskip("torch")
    seen, results = {}, {}
    for T in (gt, torch):
        def s(x, y):
            seen.setdefault(T, []).append([(t.is_leaf, t.requires_grad, t.grad_fn.name())
                                           for t in (x, y)])
            return (x.exp() * y).sum() * y.sum() + (x ** 3).sum()
        inputs = tuple(T.tensor(a, dtype=T.float64) for a in (X, Y))
        hess = T.autograd.functional.hessian(s, inputs, **kw)
        if "outer_jacobian_strategy" in kw:  # (values only, as in the test above)
            hess = [h.detach() for row in hess for h in row]
        results[T] = hess
    assert seen[gt] == seen[torch]
    _assert_same(results[gt], results[torch])
