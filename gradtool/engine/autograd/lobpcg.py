"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite
generalized eigenproblem A x = lambda B x by LOBPCG (Knyazev's locally optimal block
preconditioned conjugate gradient): Rayleigh-Ritz on the span of the current eigenvectors X,
the preconditioned residuals iK R and the previous step P, B-orthonormalised, until every
residual passes torch's backward-stable test (Duersch et al. 2018, sec. 4.3). Its arguments,
refusals and results are torch's; its iterates are not torch's own (another random start and
orthogonalisation), so eigenvectors agree up to sign and the tolerance.

Differentiable in A, as torch's LOBPCGAutogradFunction: A enters symmetrised, (A + A^T) / 2,
and the gradient is the symmetric eigendecomposition's for the k pairs returned."""
import types

import numpy as np

from . import dtypes
from .creation import randn
from .function import Function
from .tensor import Tensor

# torch's default tolerance: the square root of each dtype's machine epsilon, as torch spells it
_EPS = {dtypes.float32: 1.2e-07, dtypes.float64: 2.23e-16}
# dtypes as torch's C++ messages name them
_C_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(E, X): the k largest (smallest unless largest) eigenvalues of A x = E B x (B = I when
    None) and their eigenvectors, B-orthonormal columns of X; n >= k vectors are iterated
    (X's, when given: its columns are the start), preconditioned by iK, for at most niter
    steps. tracker(worker) is called after each step, as torch's."""
    args = (A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams)
    if A.requires_grad or (B is not None and B.requires_grad):
        # (A's gradient is made symmetric, as torch's, so that a step along it keeps A so)
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        return LOBPCGAutogradFunction.apply(A_sym, k, B_sym, *args[3:])
    return _lobpcg(*args)


class LOBPCGAutogradFunction(Function):
    """torch's node for lobpcg: the eigenpairs' gradient for B = I and real A."""

    @staticmethod
    def forward(ctx, A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None,
                largest=None, method=None, tracker=None, ortho_iparams=None,
                ortho_fparams=None, ortho_bparams=None):
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker,
                       ortho_iparams, ortho_fparams, ortho_bparams)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A, B, D, U = ctx.saved_tensors
        if A.is_complex() or (B is not None and B.is_complex()):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that "
                             "lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        grads = [None] * 14
        grads[0] = _eigenpairs_backward(D_grad, U_grad, A, D, U)
        return tuple(grads)


def _eigenpairs_backward(D_grad, U_grad, A, D, U):
    """The gradient of k eigenpairs (D, U) of a symmetric A: U diag(gD) U^T, and for each
    eigenvector u_i with its gradient g_i, -(A - d_i I)^+ g_i u_i^T, the pseudo-inverse on
    u_i's complement (from A's whole eigendecomposition)."""
    a, d, u = (np.asarray(t._data, np.float64) for t in (A, D, U))
    grad = np.zeros(a.shape)
    if D_grad is not None:
        grad += (u * np.asarray(D_grad._data, np.float64)[..., None, :]) @ np.swapaxes(u, -1, -2)
    if U_grad is not None:
        g = np.asarray(U_grad._data, np.float64)
        values, vectors = np.linalg.eigh(a)
        for i in range(d.shape[-1]):
            gaps = values - d[..., i, None]
            own = np.argmin(np.abs(gaps), -1)[..., None]  # (u_i's own eigenvalue: left out)
            mask = np.arange(values.shape[-1]) != own
            weights = np.where(mask, 1 / np.where(mask, gaps, 1), 0)
            resolvent = (vectors * weights[..., None, :]) @ np.swapaxes(vectors, -1, -2)
            grad -= (resolvent @ g[..., :, i, None]) @ u[..., None, :, i]
    return Tensor._wrap(grad.astype(A._data.dtype))


def _floating_dtype(A):
    return A.dtype if A.dtype in (dtypes.float16, dtypes.float32, dtypes.float64) \
        else dtypes.float32


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams):
    """torch's _lobpcg: the checks, the defaults, a batch one matrix at a time."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = _floating_dtype(A)
    for t in (A, B):  # (torch's first product of A with its float start refuses other dtypes)
        if t is not None and t.dtype is not dtype:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_C_NAMES.get(t.dtype.name, t.dtype.name)} != "
                               f"{_C_NAMES[dtype.name]}")
    tol = _EPS[dtype] ** 0.5 if tol is None else tol
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    niter = 1000 if niter is None else niter
    largest = True if largest is None else largest
    batch = tuple(A.shape[:-2])
    values, vectors = [], []
    arrays = [None if t is None else np.asarray(t.detach()._data, np.float64) for t in (A, B, X)]
    count = int(np.prod(batch)) if batch else 1
    for b in range(count):
        start = arrays[2].reshape((count, m, n))[b] if arrays[2] is not None else \
            np.asarray(randn((m, n), dtype=dtype)._data, np.float64)
        if start.shape != (m, n):
            raise AssertionError(f"X shape mismatch: got {tuple(start.shape)}, expected "
                                 f"{(m, n)}")
        one = [None if a is None else a.reshape((count, m, m))[b] for a in arrays[:2]]
        precondition = None if iK is None else np.asarray(iK.detach()._data, np.float64)
        E, V = _iterate(*one, start, precondition, k, niter, tol, largest, tracker, b)
        values.append(E[:k])
        vectors.append(V[:, :k])
    E = np.stack(values).reshape(batch + (k,)).astype(dtype.numpy)
    V = np.stack(vectors).reshape(batch + (m, k)).astype(dtype.numpy)
    return Tensor._wrap(E), Tensor._wrap(V)


def _iterate(A, B, X, iK, k, niter, tol, largest, tracker, batch_index):
    """LOBPCG on one matrix: Rayleigh-Ritz on span[X, iK R, P] until the first k residuals
    pass rerr = |r_i| / (|x_i| (|A| + |e_i| |B|)) < tol, or niter steps."""
    times_B = (lambda Y: Y) if B is None else (lambda Y: B @ Y)
    n = X.shape[-1]
    x_norm = np.linalg.norm(X)
    A_norm, B_norm = np.linalg.norm(A @ X) / x_norm, np.linalg.norm(times_B(X)) / x_norm
    E, X, _ = _rayleigh_ritz(A, times_B, X, n, largest)
    P = np.zeros((X.shape[0], 0))
    worker = types.SimpleNamespace(A=A, B=B, iK=iK, X=X, E=E, R=None, P=P,
                                   ivars={"istep": 0, "batch_index": batch_index,
                                          "converged_count": 0, "iterations_left": niter},
                                   fvars={"A_norm": A_norm, "B_norm": B_norm, "tol": tol},
                                   bvars={}, tvars={})
    for step in range(niter):
        R = A @ X - times_B(X) * E
        rerr = np.linalg.norm(R, axis=0) / (np.linalg.norm(X, axis=0)
                                            * (A_norm + np.abs(E) * B_norm))
        converged = int(np.argmin(rerr < tol)) if not (rerr < tol).all() else n
        worker.X, worker.E, worker.R, worker.P = X, E, R, P
        worker.ivars.update(istep=step, converged_count=converged,
                            iterations_left=niter - step - 1)
        worker.tvars["rerr"] = rerr
        if tracker is not None:
            tracker(worker)
        if converged >= k or step == niter - 1 or worker.bvars.get("force_stop", False):
            break
        W = R[:, converged:] if iK is None else iK @ R[:, converged:]
        S = np.concatenate([X, W, P], -1)
        E, Y, C = _rayleigh_ritz(A, times_B, S, n, largest)
        P = S[:, n:] @ C[n:]  # (the step just taken, outside the old X)
        X = Y
    return E, X


def _rayleigh_ritz(A, times_B, S, n, largest):
    """The n extreme Ritz pairs of A on span(S): S B-orthonormalised (its near-dependent
    directions dropped), then the small symmetric eigenproblem; also the Ritz vectors'
    coordinates C in S's columns."""
    gram = S.T @ times_B(S)
    gram = (gram + gram.T) / 2
    scale = 1 / np.sqrt(np.maximum(np.diag(gram), np.finfo(float).tiny))
    d, V = np.linalg.eigh(gram * scale[:, None] * scale[None, :])
    keep = d > d.max() * 1e-14
    basis = (scale[:, None] * V[:, keep]) / np.sqrt(d[keep])  # S basis is B-orthonormal
    Q = S @ basis
    M = Q.T @ A @ Q
    values, Z = np.linalg.eigh((M + M.T) / 2)
    order = np.argsort(-values if largest else values, kind="stable")[:n]
    return values[order], Q @ Z[:, order], basis @ Z[:, order]
