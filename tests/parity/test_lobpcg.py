"""torch.lobpcg against torch 2.13: eigenvalues, eigenvectors up to sign, the gradient
through torch's LOBPCGAutogradFunction (and the nodes recorded), refusals. The iterations
differ (another random start), so values agree to the tolerance. Skipped without torch."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import gradtool as gt  # noqa: E402
from tests.engine.test_lobpcg import problem  # noqa: E402

pytestmark = pytest.mark.parity


def _run(lib, a, b, k, largest, n):
    A = lib.tensor(a, requires_grad=b is None)
    E, X = lib.lobpcg(A, k=k, B=None if b is None else lib.tensor(b), largest=largest, n=n,
                      tol=1e-12)
    grad = None
    if b is None:  # (a loss blind to the eigenvectors' signs)
        (E * lib.arange(1.0, k + 1, dtype=lib.float64)).sum().backward(
            retain_graph=True)
        grad = A.grad.numpy().copy()
        A.grad = None
        ((X ** 2) * lib.arange(float(X.numel()), dtype=lib.float64).reshape(X.shape)).sum() \
            .backward()
        grad = (grad, A.grad.numpy())
    return (E.detach().numpy(), X.detach().numpy(), grad,
            (E.grad_fn.name(), [f.name() for f, _ in E.grad_fn.next_functions if f])
            if E.grad_fn else None)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2 ** 16), m=st.integers(9, 12), k=st.integers(1, 2),
       largest=st.booleans(), generalized=st.booleans(), extra=st.booleans())
def test_lobpcg_matches_torch(seed, m, k, largest, generalized, extra):
    a, b = problem(np.random.default_rng(seed), m, generalized)
    n = k + 1 if extra else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = (_run(lib, a, b, k, largest, n) for lib in (gt, torch))
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-9)
    signs = np.sign(np.sum(mine[1] * theirs[1], 0))
    np.testing.assert_allclose(mine[1] * signs, theirs[1], atol=1e-6)
    if b is None:
        for g_mine, g_theirs in zip(mine[2], theirs[2]):
            np.testing.assert_allclose(g_mine, g_theirs, atol=1e-6)
    assert mine[3] == theirs[3]


@pytest.mark.parametrize("program", [
    "gt.lobpcg(gt.ones(5, 5), k=2)",
    "gt.lobpcg(gt.ones(6, 5))",
    "gt.lobpcg(gt.eye(6), B=gt.eye(7))",
    "gt.lobpcg(gt.eye(9, dtype=gt.complex128), k=1)",
    "gt.lobpcg(gt.eye(9, dtype=gt.int64), k=1)",
    "gt.lobpcg(gt.eye(9), B=gt.eye(9, dtype=gt.float64), k=1)",
    "gt.lobpcg(gt.eye(6, dtype=gt.float64, requires_grad=True), B=gt.eye(6, dtype=gt.float64))"
    "[0].sum().backward()",
])
def test_lobpcg_refuses_as_torch(program):
    caught = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as error:
            eval(program, {"gt": lib})
        caught.append((type(error.value), str(error.value).replace("torch.Size", "Size")
                       .replace("gradtool.Size", "Size")))
    assert caught[0] == caught[1]
