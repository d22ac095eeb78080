"""torch.linalg's norms: vector_norm (one LinalgVectorNormBackward0 node), matrix_norm and
norm composed as torch composes them. Norms that need singular values (ord 2, -2, 'nuc' of a
matrix) are not in gradtool."""
import math

from .autograd.tensor import _dim, vector_norm

__all__ = ["vector_norm", "matrix_norm", "norm"]


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro' is the vector 2-norm over both dims; 1 / inf (and -1 / -inf) the largest
    (smallest) column / row sum of |A|: amax (amin) over a vector 1-norm, as torch's."""
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
        raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} needs singular values, "
                                  f"which gradtool does not compute")
    summed, reduced = dims if abs(ord) == 1 else dims[::-1]
    if not keepdim and summed < reduced:  # the summed dim is gone when the extreme is taken
        reduced -= 1
    sums = vector_norm(A, 1, (summed,), keepdim, dtype=dtype)
    return sums.amax(reduced, keepdim) if ord > 0 else sums.amin(reduced, keepdim)


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
