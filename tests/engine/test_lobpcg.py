"""torch.lobpcg on the engine: the extreme eigenpairs of standard and generalized symmetric
problems against numpy's eigh (eigenvectors up to sign), torch's refusals, and the gradient
of the eigenpairs (torch's LOBPCGAutogradFunction node) against its closed form and central
differences. The same programs against torch: tests/parity/test_lobpcg.py."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt


def spd(rng, m, spread=1.0):
    """A symmetric positive definite matrix with well separated eigenvalues 1, 2, ..., m."""
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    return Q @ np.diag(spread * np.arange(1.0, m + 1)) @ Q.T


def problem(rng, m, generalized):
    """A (an spd matrix) and B (another one, or None for a standard problem)."""
    a = spd(rng, m)
    if not generalized:
        return a, None
    c = rng.standard_normal((m, m))
    return a, c @ c.T / m + np.eye(m)


def generalized_eigh(a, b):
    """Eigenvalues (ascending) and B-orthonormal eigenvectors of A x = e B x."""
    L_inv = np.linalg.inv(np.linalg.cholesky(b))
    values, vectors = np.linalg.eigh(L_inv @ a @ L_inv.T)
    return values, L_inv.T @ vectors


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 16), m=st.integers(6, 14), k=st.integers(1, 2),
       largest=st.booleans(), generalized=st.booleans())
def test_eigenpairs_are_eighs(seed, m, k, largest, generalized):
    a, b = problem(np.random.default_rng(seed), m, generalized)
    E, X = gt.lobpcg(gt.tensor(a), k=k, B=None if b is None else gt.tensor(b),
                     largest=largest)
    values, vectors = generalized_eigh(a, np.eye(m) if b is None else b)
    pick = slice(None, -k - 1, -1) if largest else slice(0, k)
    np.testing.assert_allclose(E.numpy(), values[pick], rtol=1e-10)
    signs = np.sign(np.sum(X.numpy() * vectors[:, pick], 0))
    np.testing.assert_allclose(X.numpy() * signs, vectors[:, pick], atol=1e-6)
    assert E.dtype == gt.float64 and tuple(X.shape) == (m, k)


def test_a_batch_its_start_and_float32():
    """A batch is solved matrix by matrix; X's columns are the start (n = X's columns); a
    float32 A gives float32 results to float32's tolerance."""
    rng = np.random.default_rng(0)
    a = np.stack([spd(rng, 9), spd(rng, 9, 2.0)])
    E, X = gt.lobpcg(gt.tensor(a), k=2, X=gt.tensor(rng.standard_normal((2, 9, 3))))
    np.testing.assert_allclose(E.numpy(), [[9, 8], [18, 16]], rtol=1e-10)
    assert tuple(X.shape) == (2, 9, 2)
    E32, _ = gt.lobpcg(gt.tensor(a[0], dtype=gt.float32), k=1)
    assert E32.dtype == gt.float32 and abs(E32.item() - 9) < 1e-3


def test_the_tracker_sees_each_step_and_can_stop():
    rng = np.random.default_rng(1)
    steps = []

    def tracker(worker):
        steps.append(worker.ivars["istep"])
        worker.bvars["force_stop"] = worker.ivars["istep"] == 2
    gt.lobpcg(gt.tensor(spd(rng, 12)), k=1, tracker=tracker)
    assert steps == [0, 1, 2]


@pytest.mark.parametrize("call, error, message", [
    (lambda: gt.lobpcg(gt.ones(5, 5), k=2), ValueError,
     "LOBPCG algorithm is not applicable when the number of A rows (=5) is smaller than 3 x the "
     "number of requested eigenpairs (=2)"),
    (lambda: gt.lobpcg(gt.ones(6, 5)), AssertionError, "A must be square, got shape"),
    (lambda: gt.lobpcg(gt.eye(6), B=gt.eye(7)), AssertionError,
     "A and B must have same shape, got"),
    (lambda: gt.lobpcg(gt.eye(9, dtype=gt.complex128)), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: c10::complex<double> != float"),
])
def test_refusals_are_torchs(call, error, message):
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value).startswith(message)


def _eigenpairs_closed_form(a, gE, gX, k, largest):
    """The gradient of E.dot(gE) + X.dot(gX) for the k extreme eigenpairs of a symmetric A
    (perturbation theory: dE_i = x_i^T dA x_i, dx_i = sum_j x_j x_j^T dA x_i / (e_i - e_j)),
    symmetrised as lobpcg's (A + A^T) / 2."""
    values, vectors = np.linalg.eigh(a)
    order = np.argsort(-values if largest else values)[:k]
    g = np.zeros_like(a)
    for col, i in enumerate(order):
        x = vectors[:, i]
        g += gE[col] * np.outer(x, x)
        for j in range(len(values)):
            if j != i:
                g += np.outer(vectors[:, j], x) * (vectors[:, j] @ gX[:, col]) / (
                    values[i] - values[j])
    return (g + g.T) / 2


@pytest.mark.parametrize("largest", [True, False])
def test_gradient_is_the_eigenpairs_closed_form(largest):
    rng = np.random.default_rng(2)
    a = spd(rng, 9)
    A = gt.tensor(a, requires_grad=True)
    E, X = gt.lobpcg(A, k=2, largest=largest, tol=1e-12)
    assert E.grad_fn.name() == "LOBPCGAutogradFunctionBackward"
    assert X.grad_fn is E.grad_fn
    gE, gX = rng.standard_normal(2), rng.standard_normal((9, 2))
    gA, = gt.autograd.grad((E * gt.tensor(gE)).sum() + (X * gt.tensor(gX)).sum(), A)
    values, vectors = np.linalg.eigh(a)
    order = np.argsort(-values if largest else values)[:2]
    # (X's columns are eigh's up to sign: the cotangent turned to eigh's signs)
    signs = np.sign(np.sum(X.detach().numpy() * vectors[:, order], 0))
    expected = _eigenpairs_closed_form(a, gE, gX * signs, 2, largest)
    np.testing.assert_allclose(gA.numpy(), expected, atol=1e-7)


def test_gradient_passes_central_differences():
    rng = np.random.default_rng(3)
    A = gt.tensor(spd(rng, 6), requires_grad=True)

    def gauged(A):  # (each eigenvector's sign fixed: its first entry positive)
        E, X = gt.lobpcg(A, k=2, tol=1e-12)
        return E, X * X[0].sign().detach()
    assert gt.autograd.gradcheck(gauged, (A,), eps=1e-6, atol=1e-5)


def test_backward_refuses_what_torchs_does():
    rng = np.random.default_rng(4)
    A = gt.tensor(spd(rng, 6), requires_grad=True)
    E, _ = gt.lobpcg(A, k=1, B=gt.eye(6, dtype=gt.float64))
    with pytest.raises(ValueError, match="lobpcg.backward does not support backward with B != "
                                         r"I yet\."):
        E.sum().backward()
