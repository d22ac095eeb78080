"""matmul as ATen's: mm, mv, bmm or dot, with the folding of batches into one mm and the
views, expands and unsafe views around them, so the graph (and when in-place errors happen)
is torch's."""
import numpy as np

from . import dtypes
from .dispatch import call
from .ops.rows import table

def matmul(input, other):
    """torch's matmul; exact torch node names for the mm, mv, dot and bmm shapes."""
    a, b = input.dim(), other.dim()
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{dtypes.C_TYPE_NAMES.get(input._data.dtype.name)} != "
                           f"{dtypes.C_TYPE_NAMES.get(other._data.dtype.name)}")
    k_a = input.shape[-1]
    k_b = other.shape[-2] if b >= 2 else other.shape[0]
    if k_a != k_b:
        if a == 1 and b == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src "
                               f"[{k_b}] to have the same number of elements, but got {k_a} and "
                               f"{k_b} elements respectively")
        rows = int(np.prod(input.shape[:-1])) if a > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and "
                           f"{k_b}x{other.shape[-1] if b > 1 else 1})")
    if a == 2 and b == 2:
        return call(table.MM, (input, other))
    if a == 1 and b == 1:
        return call(table.DOT, (input, other))
    if a == 2 and b == 1:
        return call(table.MV, (input, other))
    if a == 1 and b == 2:  # torch: unsqueeze(0).mm(...).squeeze_(0)
        return call(table.SQUEEZE_, (call(table.MM, (input.unsqueeze(0), other)),), (0,))
    return _batched_matmul(input, other)


def _batched_matmul(t1, t2):
    """matmul with a batch (ATen's _matmul_impl, op for op, so the graph has torch's nodes
    and saves what torch's saves): the larger operand folded into a matrix for one mm / mv
    when that needs no copy or the other operand requires grad, else both expanded to a
    common batch and reshaped for one bmm."""
    a, b = t1._data.ndim, t2._data.ndim
    # a batch of one that requires grad is squeezed, so that its gradient is an mm's
    if a == 3 and b == 3 and t1._data.shape[0] != t2._data.shape[0]:
        if t1._data.shape[0] == 1 and t1._requires_grad:
            return matmul(t1.squeeze(0), t2)
        if t2._data.shape[0] == 1 and t2._requires_grad:
            return matmul(t1, t2.squeeze(0))
    if _should_fold(t1, t2):
        transposed = b > a
        big = t2.mT if transposed else t1
        small = (t1.t() if a == 2 else t1) if transposed else t2
        shape = tuple(big._data.shape[:-1])
        folded = big.reshape(int(np.prod(shape)), big._data.shape[-1])
        if small._data.ndim == 1:
            return call(table.UNSAFE_VIEW, (call(table.MV, (folded, small)),), (shape,))
        out = call(table.UNSAFE_VIEW, (call(table.MM, (folded, small)),),
                   (shape + (small._data.shape[1],),))
        return out.mT.contiguous() if transposed else out
    n, m1 = (t1._data.shape[-2] if a > 1 else 1), t1._data.shape[-1]
    m2, p = (t2._data.shape[-2], t2._data.shape[-1]) if b > 1 else (t2._data.shape[0], 1)
    try:
        batch = np.broadcast_shapes(t1._data.shape[:-2], t2._data.shape[:-2] if b > 1 else ())
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({t1._data.shape[-3]}) must match the size of "
                           f"tensor b ({t2._data.shape[-3]}) at non-singleton dimension "
                           f"{max(a, b) - 3}") from None
    size = int(np.prod(batch))
    out = call(table.BMM, (t1.expand(batch + (n, m1)).reshape(size, n, m1),
                        (t2 if b > 1 else t2.unsqueeze(-1)).expand(batch + (m2, p))
                        .reshape(size, m2, p)))
    if b == 1:
        out = out.squeeze(-1)
    size = batch + ((n,) if a > 1 else ()) + ((p,) if b > 1 else ())
    return call(table.UNSAFE_VIEW, (out,), (size,))


def _should_fold(t1, t2):
    """torch's should_fold: the larger operand (>= 3-D, beside a 1- or 2-D one) is folded into
    a matrix when the other requires grad (its gradient is then an mm, not a bmm and a sum)
    or when folding needs no copy."""
    a, b = t1._data.ndim, t2._data.ndim
    larger = a >= b
    if not (max(a, b) >= 3 and min(a, b) <= 2):
        return False
    if (t2 if larger else t1)._requires_grad:
        return True
    if a == 2:  # folding the other's transpose would need a copy of the result
        return False
    big = (t1 if larger else t2)._data
    if big.size == 0:
        return True
    shape, strides = list(big.shape), [s // big.itemsize for s in big.strides]
    if not larger:  # the transpose of t2
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))
