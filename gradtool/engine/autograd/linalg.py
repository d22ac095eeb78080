"""torch.linalg's functions (gradtool/engine/linalg.py is the module under torch's name): the norms (vector_norm one LinalgVectorNormBackward0 node; matrix_norm and
norm composed as torch composes them) and the decompositions and solvers, each one node of
the op table with torch's name (LinalgSolveExBackward0, LinalgSvdBackward0, ...)."""
import collections
import math

from . import dtypes
from .dispatch import broadcast_mismatch, call
from .free_functions import cat, vector_norm
from .tensor import _dim
from .ops import derivatives as table
from ..errors import NotInEngineError, _LinAlgError as LinAlgError

__all__ = ["vector_norm", "matrix_norm", "norm", "inv", "inv_ex", "solve", "det", "slogdet",
           "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "svd", "svdvals",
           "matrix_power", "multi_dot", "solve_triangular", "LinAlgError", "lstsq", "pinv",
           "matrix_rank", "matrix_exp", "diagonal", "vander", "solve_ex", "tensorinv",
           "tensorsolve", "cond", "eig", "eigvals", "lu_solve", "householder_product",
           "ldl_factor", "ldl_factor_ex", "ldl_solve"]

# torch.return_types' named tuples
InvExResult = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
CholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])
QrResult = collections.namedtuple("linalg_qr", ["Q", "R"])
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SvdResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])


def _check_square(name, A, complex_ok=False):
    """torch's checks of a batch of square float matrices (complex too where the formulas
    are written for them), in its words."""
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A._data.dtype.kind == "c" and not complex_ok:
        raise NotInEngineError(f"torch.{name} on complex tensors")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)}")
    rows, cols = A.shape[-2:]
    if rows != cols:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {rows} "
                           f"by {cols} matrices")


def inv_ex(A, *, check_errors=False):
    _check_square("linalg.inv", A)
    return InvExResult(*call(table.LINALG_INV_EX, (A,)))


def inv(A):
    """A^{-1}, one LinalgInvExBackward0 node (saving the inverse), as torch's."""
    return inv_ex(A).inverse


def solve(A, B, *, left=True):
    """X with A X = B (or X A = B with left=False); B a vector or a batch of matrices."""
    _check_square("linalg.solve", A, complex_ok=True)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)} and B of "
                           f"type {dtypes.LEGACY_TYPE_NAMES.get(B._data.dtype.name)} instead")
    return call(table.LINALG_SOLVE_EX, (A, B), (bool(left),))[0]


def det(A):
    _check_square("linalg.det", A)
    return call(table.LINALG_DET, (A,))[0]


def slogdet(A):
    """(sign, log|det|): one LinalgSlogdetBackward0 node; only log|det| has a gradient."""
    _check_square("linalg.slogdet", A)
    return SlogdetResult(*call(table.LINALG_SLOGDET, (A,))[:2])


def cholesky_ex(A, *, upper=False, check_errors=False):
    _check_square("linalg.cholesky", A)
    return CholeskyExResult(*call(table.LINALG_CHOLESKY_EX, (A,), (bool(upper),)))


def cholesky(A, *, upper=False):
    return cholesky_ex(A, upper=upper).L


def cholesky_deprecated(input, upper=False):
    """torch.cholesky (deprecated, torch warns the same): linalg.cholesky's factor, U with
    upper (A = U^T U), one CholeskyBackward0 node."""
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
        "for all valid (symmetric positive definite) inputs.", UserWarning, stacklevel=2)
    _check_square("cholesky", input)
    return call(table.CHOLESKY, (input,), (bool(upper),))


def qr(A, mode="reduced"):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    if A.dim() < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    return QrResult(*call(table.LINALG_QR, (A,), (mode,)))


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (its UPLO triangle)."""
    _check_square("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return EighResult(*call(table.LINALG_EIGH, (A,), (UPLO,)))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues: eigh's node (torch computes the eigenvectors when A requires grad)."""
    return eigh(A, UPLO).eigenvalues


def svd(A, full_matrices=True, *, driver=None):
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    return SvdResult(*call(table.LINALG_SVD, (A,), (bool(full_matrices),)))


def svdvals(A, *, driver=None):
    """The singular values, descending: svd's node, as torch's when A requires grad."""
    return svd(A, full_matrices=False).S


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro' is the vector 2-norm over both dims; 1 / inf (and -1 / -inf) the largest
    (smallest) column / row sum of |A|: amax (amin) over a vector 1-norm; 2 / -2 the largest
    (smallest) singular value and 'nuc' their sum, over svdvals, as torch's."""
    if ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{dim if isinstance(dim, int) else ' '.join(map(str, dim))}")
    dims = [_dim(d, A.dim()) for d in dim]
    if ord == "fro":
        return vector_norm(A, 2, dims, keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        return _spectral_norm(A, ord, dims, keepdim, dtype)
    summed, reduced = dims if abs(ord) == 1 else dims[::-1]
    if not keepdim and summed < reduced:  # the summed dim is gone when the extreme is taken
        reduced -= 1
    sums = vector_norm(A, 1, (summed,), keepdim, dtype=dtype)
    return sums.amax(reduced, keepdim) if ord > 0 else sums.amin(reduced, keepdim)


def _spectral_norm(A, ord, dims, keepdim, dtype):
    """The two dims moved last (a permute unless they are already), svdvals, then the
    largest, smallest or sum; keepdim puts size-1 dims back where they were."""
    if dtype is not None:
        A = A.to(dtype)
    order = [d for d in range(A.dim()) if d not in dims] + dims
    moved = A if order == list(range(A.dim())) else A.permute(order)
    values = svdvals(moved)
    out = (values.sum(-1) if ord == "nuc" else
           values.amax(-1) if ord == 2 else values.amin(-1))
    if keepdim:
        out = out.unsqueeze(-1).unsqueeze(-1).permute(
            [order.index(d) for d in range(A.dim())])
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm over one dim (or all, without `ord`), a matrix norm over two."""
    if isinstance(ord, str):  # 'fro' and 'nuc' are matrix norms
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is None:  # the 2-norm of the values, over any dims
        return vector_norm(A, 2.0, dim, keepdim, dtype=dtype)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, ord, dims, keepdim, dtype=dtype)
    if A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.dim()}D.")
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)



# ---- LU factorisation (torch.linalg.lu_factor, lu, torch.lu, lu_unpack)
import numpy as np  # noqa: E402

from .tensor import Tensor  # noqa: E402

LuFactorExResult = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LuFactorResult = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
LuUnpackResult = collections.namedtuple("lu_unpack", ["P", "L", "U"])
LuResult = collections.namedtuple("linalg_lu", ["P", "L", "U"])


def _check_lu(A, pivot, caller):
    """torch's checks of an LU factorization's argument, in its words (caller: the name its
    dimension error gives)."""
    if A.dim() < 2:
        raise RuntimeError(f"{caller}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    if A._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"lu_cpu" not implemented for '
                                  f"'{dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)}'")


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info) of A (..., m, n): one LinalgLuFactorExBackward0 node, differentiable
    in A through LU."""
    _check_lu(A, pivot, "torch.lu_factor")
    return LuFactorExResult(*call(table.LINALG_LU_FACTOR_EX, (A,), (bool(pivot),)))


def lu_factor(A, *, pivot=True):
    """lu_factor_ex's (LU, pivots); a zero on U's diagonal is torch's error (lu_solve would
    divide by it)."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    failed = np.flatnonzero(info._data.reshape(-1))
    if failed.size:
        batch = f"(Batch element {failed[0]}): " if info.dim() else ""
        k = int(info._data.reshape(-1)[failed[0]])
        raise RuntimeError(f"torch.linalg.lu_factor: {batch}U[{k},{k}] is zero and using it on "
                           f"lu_solve would result in a division by zero. If you still want to "
                           f"perform the factorization, consider calling linalg.lu(A, pivot) or "
                           f"linalg.lu_factor_ex(A, pivot)")
    return LuFactorResult(LU, pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) with A = P L U from lu_factor's (LU, pivots); L and U are differentiable in
    LU_data (its lower and upper triangles)."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    batch = tuple(LU_data.shape[:-2])
    empty = Tensor._wrap(np.zeros(0, LU_data._data.dtype))
    L = U = P = empty
    if unpack_data:
        eye = Tensor._wrap(np.eye(m, k, dtype=LU_data._data.dtype))
        L = LU_data[..., :, :k].tril(-1) + eye
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        swaps = LU_pivots._data.reshape(-1, LU_pivots.shape[-1]).astype(np.int64) - 1
        Ps = []
        for row in swaps:
            perm = np.arange(m)
            for i, p in enumerate(row):
                perm[[i, p]] = perm[[p, i]]
            Ps.append(np.eye(m, dtype=LU_data._data.dtype)[perm].T)
        P = Tensor._wrap(np.stack(Ps).reshape(batch + (m, m)) if Ps else
                         np.zeros(batch + (m, m), LU_data._data.dtype))
    return LuUnpackResult(P, L, U)


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U: one LinalgLuBackward0 node, differentiable in A through L
    and U."""
    _check_lu(A, pivot, "linalg.lu")
    return LuResult(*call(table.LINALG_LU, (A,), (bool(pivot),)))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (or X A = B with left=False; A^H for A with adjoint) from lu_factor's
    (LU, pivots) of A: one LinalgLuSolveBackward0 node, differentiable in LU and B."""
    kind = LU._data.dtype.kind
    if kind not in "fc":
        raise RuntimeError(f"torch.linalg.lu_solve: Expected a floating point or complex tensor "
                           f"as input. Got {dtypes.LEGACY_TYPE_NAMES.get(LU._data.dtype.name)}")
    if LU._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {dtypes.LEGACY_TYPE_NAMES.get(LU._data.dtype.name)} "
                           f"and B of type {dtypes.LEGACY_TYPE_NAMES.get(B._data.dtype.name)} "
                           f"instead")
    if pivots._data.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    if LU.dim() < 2:
        raise RuntimeError("torch.linalg.lu_solve: The input tensor A must have at least 2 "
                           "dimensions.")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {LU.shape[-2]} by {n} matrices")
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if pivots.dim() == 0 or pivots.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be "
                           f"the same, but got pivots with shape {list(pivots.shape)} instead")
    mismatch = broadcast_mismatch(tuple(B.shape[:-2]), tuple(LU.shape[:-2]))
    if mismatch:
        raise RuntimeError(mismatch)
    return call(table.LINALG_LU_SOLVE, (LU, pivots, B), (bool(left), bool(adjoint)))


def lu_solve_deprecated(b, LU_data, LU_pivots):
    """torch.lu_solve (deprecated, torch warns the same): linalg.lu_solve with its arguments
    the other way round."""
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, b)


# ---- QR as LAPACK keeps it: geqrf's reflectors, their product (orgqr)
GeqrfResult = collections.namedtuple("geqrf", ["a", "tau"])


def _refuse_integers(kernel, dtype):
    if dtype.kind not in "fc":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dtypes.LEGACY_TYPE_NAMES.get(dtype.name)}'")


def geqrf(input):
    """(a, tau): R on and above a's diagonal, the Householder vectors below it and their
    scales tau (LAPACK's geqrf); not differentiable, as torch's."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _refuse_integers("geqrf_cpu", input._data.dtype)
    return GeqrfResult(*call(table.GEQRF, (input,)))


def householder_product(A, tau):
    """The first n columns of the product of the Householder reflectors I - tau_i v_i v_i^T
    kept in A's columns below the diagonal (LAPACK's orgqr): one
    LinalgHouseholderProductBackward0 node, differentiable in A and tau."""
    name = "torch.linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{A.dim()}")
    if A.dim() > 2 and tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau._data.dtype != A._data.dtype:
        raise RuntimeError(f"{name}: tau dtype "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(tau._data.dtype.name)} does not "
                           f"match input dtype {dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)}")
    _refuse_integers("orgqr_cpu", A._data.dtype)
    return call(table.LINALG_HOUSEHOLDER_PRODUCT, (A, tau))


orgqr = householder_product  # (torch.orgqr: the same node)


def ormqr(input, input2, input3, left=True, transpose=False):
    """op(Q) C (left) or C op(Q) for geqrf's (input, tau) = (input, input2) and C = input3,
    op(Q) Q^T with transpose, Q never formed: one OrmqrBackward0 node, differentiable in all
    three."""
    tau, other = input2, input3
    name = "torch.ormqr"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if other.shape[side] < tau.shape[-1]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError(f"{name}: tau.shape[-1] must be less than or equal to "
                           f"input.shape[-1]")
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{input.dim()}")
    if input.dim() != other.dim():
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.dim()} and input.ndim is "
                           f"equal to {input.dim()}")
    if input.dim() > 2:
        for what, t in (("tau", tau.shape[:-1]), ("other", other.shape[:-2])):
            if tuple(t) != tuple(input.shape[:-2]):
                raise RuntimeError(f"{name}: Expected batch dimensions of {what} to be equal to "
                                   f"input.shape[:-2], but got {list(t)}")
    for what, t in (("tau", tau), ("other", other)):
        if t._data.dtype != input._data.dtype:  # (torch's words run "dtype" into the name)
            raise RuntimeError(
                f"{name}: Expected input and {what} to have the same dtype, but input has dtype"
                f"{dtypes.LEGACY_TYPE_NAMES.get(input._data.dtype.name)} and {what} has dtype "
                f"{dtypes.LEGACY_TYPE_NAMES.get(t._data.dtype.name)}")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    _refuse_integers("ormqr_cpu", input._data.dtype)
    return call(table.ORMQR, (input, tau, other), (bool(left), bool(transpose)))


# ---- LDL^T of symmetric matrices, LDL^H of hermitian ones (Bunch-Kaufman pivoting, LAPACK's
# sytrf / hetrf): no gradient
LdlFactorExResult = collections.namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
LdlFactorResult = collections.namedtuple("linalg_ldl_factor", ["LD", "pivots"])


def _check_float_square(name, A):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)}")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info): A = P L D L^T P^T with D of 1x1 and 2x2 blocks (LAPACK's sytrf,
    lower: its pivots, negative for a 2x2 block). One node whose backward is torch's
    refusal."""
    _check_float_square("torch.linalg.ldl_factor_ex", A)
    result = LdlFactorExResult(*call(table.LINALG_LDL_FACTOR_EX, (A,), (bool(hermitian),)))
    if check_errors:
        _raise_ldl_info(result.info)
    return result


def _raise_ldl_info(info):
    """A zero pivot (info > 0): torch's CPU build reports LAPACK's code as unknown (its message
    without the internal-assert preamble)."""
    failed = info._data.reshape(-1)
    if failed.any():
        raise RuntimeError(f"torch.linalg.ldl_factor: Unknown error code: "
                           f"{int(failed[np.flatnonzero(failed)[0]])}.")


def ldl_factor(A, *, hermitian=False):
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    _raise_ldl_info(info)
    return LdlFactorResult(LD, pivots)


def _check_b_dtype_is_As(B, A):
    """torch's check of a solve's right-hand side against its factor, in its words."""
    if B._data.dtype != A._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(B._data.dtype.name)} and A of type "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)} instead.")


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B from ldl_factor's (LD, pivots) of A (LAPACK's sytrs); B's batch
    broadcasts. No gradient, as torch's."""
    name = "torch.linalg.ldl_solve"
    _check_float_square(name, LD)
    _check_b_dtype_is_As(B, LD)
    if B.dim() < 2:  # (torch reads B's size(-2) first)
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B.dim(), 1)}, {max(B.dim(), 1) - 1}], but got -2)")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots.shape)} instead")
    if pivots._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(pivots._data.dtype.name)}")
    mismatch = broadcast_mismatch(tuple(B.shape[:-2]), tuple(LD.shape[:-2]))
    if mismatch:
        raise RuntimeError(mismatch)
    return call(table.LINALG_LDL_SOLVE, (LD, pivots, B), (bool(hermitian),))


# ---- powers and chains of products, triangular solves (torch.linalg's and older names)
import warnings  # noqa: E402

TriangularSolveResult = collections.namedtuple("triangular_solve",
                                               ["solution", "cloned_coefficient"])


def matrix_power(A, n):
    """A^n by repeated squaring, torch's products in torch's order (so its MmBackward0 nodes):
    A^{-1} first for a negative n (linalg.inv's errors), a copy of the identity for 0."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if n == 0:  # the identity, written into a copy of A (no gradient reaches A)
        eye = Tensor._wrap(np.eye(A.shape[-1], dtype=A._data.dtype))
        return A.clone().copy_(eye)
    if n < 0:
        A, n = inv(A), -n
        if n == 1:
            return A
    if n == 1:
        return A.clone()
    if n == 2:
        return A.matmul(A)
    if n == 3:
        return A.matmul(A).matmul(A)
    squares, result = None, None  # A^(2^k) and the product of those n's bits ask for
    while n > 0:
        bit, n = n % 2, n // 2
        squares = A if squares is None else squares.matmul(squares)
        if bit:
            result = squares if result is None else result.matmul(squares)
    return result


def _chain_order(sizes):
    """The split of each sub-chain that costs the fewest multiplications (the textbook's
    dynamic programme, as torch's: the first split of the cheapest ones)."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def multi_dot(tensors):
    """The product of a chain of matrices (the first may be a row vector, the last a column
    vector) in the cheapest order, mm by mm, viewed to the result's shape as torch's."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0].dim(), tensors[-1].dim()
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{dtypes.C_TYPE_NAMES.get(tensors[0]._data.dtype.name)} and tensor {i} "
                f"{dtypes.C_TYPE_NAMES.get(t._data.dtype.name)}")
    out_shape = (tuple(tensors[0].shape[:1]) if first == 2 else ()) + (
        tuple(tensors[-1].shape[1:]) if last == 2 else ())
    if first == 1:
        tensors[0] = tensors[0].unsqueeze(0)
    if last == 1:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i in range(n - 1):
        if tensors[i].shape[-1] != tensors[i + 1].shape[0]:
            shapes = [list(tensors[k].shape) for k in (i, i + 1)]
            shapes[0] = shapes[0][1:] if i == 0 and first == 1 else shapes[0]
            shapes[1] = shapes[1][:1] if i + 1 == n - 1 and last == 1 else shapes[1]
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {shapes[0]} "
                               f"and {shapes[1]} cannot be multiplied")
    if n == 2:
        return tensors[0].mm(tensors[1]).view(out_shape)
    if n == 3:  # (A B) C or A (B C), whichever costs less (the first on a tie)
        (a, b), d = tensors[0].shape, tensors[2].shape[1]
        c = tensors[1].shape[1]
        A, B, C = tensors
        if a * c * (b + d) > b * d * (a + c):
            return A.mm(B.mm(C)).view(out_shape)
        return A.mm(B).mm(C).view(out_shape)
    split = _chain_order([t.shape[0] for t in tensors] + [tensors[-1].shape[1]])

    def product(i, j):
        if i == j:
            return tensors[i]
        return product(i, split[i][j]).mm(product(split[i][j] + 1, j))
    return product(0, n - 1).view(out_shape)


def _check_triangular_dtypes(kernel, dtype):
    """Floats only (the formulas here are real-only); an integer dtype is torch's refusal by
    its CPU kernel's name."""
    if dtype.kind == "c":
        raise NotInEngineError(f"{kernel} on complex tensors")
    if dtype.kind != "f":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dtypes.LEGACY_TYPE_NAMES.get(dtype.name)}'")


def solve_triangular(A, B, *, upper=None, left=True, unitriangular=False):
    """X with A X = B (or X A = B), A upper or lower triangular (the other triangle is not
    read; unitriangular: nor its diagonal, taken as ones); batch dims broadcast. `upper` has
    no default (torch's words when it is missing)."""
    if upper is None:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    for name, t in (("A", A), ("B", B)):
        if t.dim() < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have "
                               f"at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, "
                           f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != B.shape[-2 if left else -1]:
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
            f"{B.shape[-2]}x{B.shape[-1]})")
    mismatch = broadcast_mismatch(tuple(B.shape[:-2]), tuple(A.shape[:-2]))  # (torch's order)
    if mismatch:
        raise RuntimeError(mismatch)
    _check_triangular_dtypes("triangular_solve_cpu", A._data.dtype)
    return call(table.LINALG_SOLVE_TRIANGULAR, (A, B),
                (bool(upper), bool(left), bool(unitriangular)))


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """Deprecated (torch warns the same): X with op(A) X = b, op(A) A or A^T, and a copy of
    A: linalg.solve_triangular's arguments the other way round."""
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
        "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    if b.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.dim()} dimensions instead")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
    _check_triangular_dtypes("triangular_solve_cpu", A._data.dtype)
    return TriangularSolveResult(*call(table.TRIANGULAR_SOLVE, (b, A), (
        bool(upper), bool(transpose), bool(unitriangular))))


def cholesky_solve(B, L, upper=False):
    """X with A X = B for A = L L^T (U^T U when upper), from the factor's triangle."""
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} "
                           f"dimensions instead")
    if L.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.dim()} "
                           f"dimensions instead")
    _check_b_dtype_is_As(B, L)
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{L.shape[-2]} by {L.shape[-1]} matrices")
    if L.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    _check_triangular_dtypes("cholesky_solve_cpu", L._data.dtype)
    return call(table.CHOLESKY_SOLVE, (B, L), (bool(upper),))


def cholesky_inverse(L, upper=False):
    """(L L^T)^{-1} (or (U^T U)^{-1}) from a Cholesky factor; a zero on its diagonal is
    torch's LinAlgError."""
    if L.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {L.shape[-2]} by {L.shape[-1]} matrices")
    _check_triangular_dtypes("cholesky_inverse_out_cpu", L._data.dtype)
    return call(table.CHOLESKY_INVERSE, (L,), (bool(upper),))


# ---- least squares, the pseudo-inverse, the rank, the matrix exponential
LstsqResult = collections.namedtuple("linalg_lstsq",
                                     ["solution", "residuals", "rank", "singular_values"])
SolveExResult = collections.namedtuple("linalg_solve_ex", ["result", "info"])
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _float_matrices(name, A):
    if A._data.dtype.kind == "c":
        raise NotInEngineError(f"torch.{name} on complex tensors")


def _tolerance(value):
    """atol / rtol as a number (a 0-d tensor's value)."""
    return value.item() if isinstance(value, Tensor) else value


def lstsq(A, B, rcond=None, *, driver=None):
    """min |A X - B|: the minimum-norm solution (through the pseudo-inverse; LAPACK's gelsy
    by default on torch's CPU gives the same), with torch's other results per driver."""
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)} and other's "
                           f"dtype {dtypes.LEGACY_TYPE_NAMES.get(B._data.dtype.name)}")
    if A.dim() < 2:
        raise RuntimeError(f"torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = B.dim() == A.dim() - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match "
                           f"other.size({-1 if vector else -2})")
    _float_matrices("linalg.lstsq", A)
    _check_square_or_float("torch.linalg.lstsq", A)
    return LstsqResult(*call(table.LINALG_LSTSQ, (A, B), (rcond, driver)))


def _check_square_or_float(name, A):
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)}")


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse: through the SVD (eigh when hermitian), singular
    values at or below max(atol, rtol * the largest) dropped."""
    if A.dim() < 2 or A._data.dtype.kind not in "fc":
        kind = dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)
        raise RuntimeError(f"linalg.pinv({kind}{{{list(A.shape)}}}): expected a tensor with 2 "
                           f"or more dimensions of float, double, cfloat or cdouble types")
    _float_matrices("linalg.pinv", A)
    return call(table.LINALG_PINV, (A,), (_tolerance(atol), _tolerance(rtol), bool(hermitian)))


def pinverse(input, rcond=1e-15):
    """torch.pinverse: linalg.pinv with rtol=rcond."""
    return pinv(input, rtol=rcond)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """How many singular values (|eigenvalues| when hermitian) are above max(atol, rtol *
    the largest); rtol defaults as pinv's. An int64 tensor, no gradient."""
    if A._data.dtype.kind not in "fc":
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 "
                           "dimensions.")
    atol, rtol = _tolerance(atol), _tolerance(rtol)
    if rtol is None:
        rtol = 0.0 if atol else np.finfo(A._data.dtype).eps * max(A.shape[-2:])
    data = A._data
    S = np.abs(np.linalg.eigvalsh(data)) if hermitian else np.linalg.svd(data, compute_uv=False)
    largest = S.max(-1, keepdims=True, initial=0.0)
    return Tensor._wrap(np.sum(S > np.maximum(atol or 0.0, rtol * largest), -1).astype(np.int64))


def matrix_exp(A):
    """e^A, one LinalgMatrixExpBackward0 node; its gradient the exponential of a block
    matrix, as torch's."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)}")
    return call(table.LINALG_MATRIX_EXP, (A,))


# ---- composed of other ops, as torch composes them
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.diagonal with the last two dims as its default."""
    return A.diagonal(offset, dim1, dim2)


def vander(x, *, N=None):
    """Columns x^0, x^1, ..., x^(N-1) (ones, then a cumulative product), as torch's."""
    N = x.shape[-1] if N is None and x.dim() else N
    if N is None or N <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = Tensor._wrap(np.ones(tuple(x.shape) + (1,), x._data.dtype))
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)
    return cat([ones, powers], -1)


def solve_ex(A, B, *, left=True, check_errors=False):
    """(X, info): solve's node, info zeros (a singular A is torch's LinAlgError either way
    here, as with check_errors=True)."""
    _check_square("linalg.solve", A)
    result, _, _, info = call(table.LINALG_SOLVE_EX, (A, B), (bool(left),))
    return SolveExResult(result, info)


def tensorinv(A, ind=2):
    """The inverse of A seen as a matrix of its first `ind` dims by the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    n = math.prod(rows)
    if n != math.prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape["
                           f"ind:]) == prod(self.shape[:ind]), but got {math.prod(cols)} != {n}")
    return inv(A.reshape(n, -1)).reshape(cols + rows)


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.dim()) = B: a matrix solve of A's first B.dim() dims by the
    rest (`dims` moved last first)."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    result_shape = tuple(A.shape[B.dim():])
    n = math.prod(result_shape)
    if math.prod(A.shape[:B.dim()]) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape["
                           f"other.ndim:]) == prod(self.shape[:other.ndim]), but got "
                           f"{n} != {math.prod(A.shape[:B.dim()])}")
    return solve(A.reshape(n, n), B.reshape(n)).view(result_shape)


def cond(A, p=None):
    """The condition number: the ratio of the extreme singular values (p None, 2, -2), else
    |A|_p |A^{-1}|_p (inf for a singular A, and where 0 * inf made a nan), as torch's."""
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        values = svdvals(A)
        largest = values.narrow(-1, 0, 1)
        smallest = values.narrow(-1, values.shape[-1] - 1, 1)
        return (smallest / largest if p == -2 else largest / smallest).squeeze(-1)
    if p == "nuc":  # sum(s) sum(1 / s), svdvals twice as torch's
        return svdvals(A).sum(-1) * svdvals(A).reciprocal().sum(-1)
    if p not in ("fro", 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.shape[-1] != A.shape[-2]:
        shown = p if isinstance(p, str) else int(p) if abs(p) == 1 else (
            "inf" if p > 0 else "-inf")
        raise RuntimeError(f"linalg.cond(ord={shown}): A must be batches of square matrices, "
                           f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    try:
        inverse = inv(A)
        singular = Tensor._wrap(np.zeros(A.shape[:-2] + (1, 1), bool))
    except LinAlgError:  # (torch's inv_ex reports it in info: the inverse is then inf)
        _check_square("linalg.inv", A)
        inverse = Tensor._wrap(np.zeros(A._data.shape, A._data.dtype))
        singular = Tensor._wrap(np.ones(A.shape[:-2] + (1, 1), bool))
    # in place, as torch's: so a backward through the inverse fails as torch's does (its
    # saved inverse was modified)
    inverse.masked_fill_(singular, math.inf)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    return result.masked_fill(result.isnan(), math.inf)  # (torch's nan_to_num_)


# ---- eigenvalues of general matrices
EigResult = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def eig(A):
    """Eigenvalues and unit eigenvectors (LAPACK's geev, as torch's: complex even for a real
    A), one LinalgEigBackward0 node."""
    if A.dim() < 2:
        raise RuntimeError("linalg.eig: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.eig: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for "
                           f"{dtypes.LEGACY_TYPE_NAMES.get(A._data.dtype.name)}")
    return EigResult(*call(table.LINALG_EIG, (A,)))


def eigvals(A):
    """The eigenvalues: eig's node (torch computes the eigenvectors when A requires grad)."""
    return eig(A).eigenvalues


# ---- randomized low-rank SVD and PCA (Halko et al. 2009, as torch/_lowrank.py composes them)
def _floating_dtype(A):
    """A's dtype if floating (float16/32/64), else float32, as torch's _linalg_utils."""
    return A.dtype if A._data.dtype.kind == "f" else dtypes.float32


def _approximate_basis(A, q, niter, M):
    """Q (n x q, orthonormal columns) whose range approximates A's (minus M's): a random
    projection, refined by niter power iterations with a QR after each product."""
    from .creation import randn
    R = randn(A.shape[-1], q, dtype=A.dtype if A.is_complex() else _floating_dtype(A))

    def product(B, X):  # B X, less M X (or M^H X when B is A^H)
        out = B.matmul(X)
        return out if M is None else out - (M if B is A else M.mH).matmul(X)
    Q = qr(product(A, R)).Q
    for _ in range(niter):
        Q = qr(product(A.mH, Q)).Q
        Q = qr(product(A, Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # (the basis of the taller side)
        A, M = A.mH, None if M is None else M.mH
    Q = _approximate_basis(A, q, 2 if niter is None else niter, M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q.matmul(U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H of rank q, by random projections (torch's
    torch.svd_lowrank; the projection draws from the default generator)."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """svd_lowrank of A with its columns' means taken out (center), q = min(6, m, n) by
    default."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)="
                         f"{min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
