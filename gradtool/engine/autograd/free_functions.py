"""torch's free functions that are not Tensor methods: gradtool.cat, stack, where, maximum,
meshgrid, normal, ... The formulas and the engine use cat, stack and where too, so this
module stands below the table: it finds its rows by name (ops/rows.py)."""
import numbers
import warnings

import numpy as np

from . import creation, dtypes
from ..errors import NotInEngineError
from .dispatch import call
from .ops.rows import table
from .tensor import Tensor, _as_tensor, _dim, _dims, _shape


def where(condition, input=None, other=None):
    condition = _as_tensor(condition)
    if input is None and other is None:
        return tuple(Tensor._wrap(a) for a in np.nonzero(condition._data))
    return call(table.WHERE, (condition, input, other))


def maximum(input, other):
    return call(table.MAXIMUM, (input, _as_tensor(other)))


def minimum(input, other):
    return call(table.MINIMUM, (input, _as_tensor(other)))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm, one LinalgVectorNormBackward0 node (saving ord and dim)."""
    if not isinstance(ord, numbers.Number) or isinstance(ord, bool):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, "
                        f"not {type(ord).__name__}")
    if dtype is not None:
        x = x.to(dtype)
    if x._data.dtype.kind == "c":  # (norm_backward is real-only)
        raise NotInEngineError("torch.linalg.vector_norm on complex tensors")
    if x._data.dtype.kind not in "fV":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {dtypes.LEGACY_TYPE_NAMES.get(x._data.dtype.name)}")
    dims = None if dim is None else _dims(dim, x._data.ndim)
    return call(table.NORM, (x,), (ord, dims, keepdim))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) in one VarMeanBackward0 node."""
    return call(table.VAR_MEAN, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) in one StdMeanBackward0 node."""
    return call(table.STD_MEAN, (input,), _var_args(input, dim, unbiased, keepdim, correction))


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: each 1-D (or 0-D) input viewed along its own dim and expanded to
    the grid (ViewBackward0, ExpandBackward0, as torch's); 'xy' swaps the first two dims."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                         f"received: {indexing}")
    if not tensors:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t.numel() for t in order)
    grids = [t.view([-1 if d == i else 1 for d in range(len(order))]).expand(shape)
             for i, t in enumerate(order)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False):
    """torch.normal: draws of N(mean, std) for a tensor mean and/or std (their nodes have zero
    gradients, as torch's), or of a given size for two numbers."""
    generator = creation.generator(generator)
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: two "
                            "numbers need a size")
        out = generator.normal(mean, std, _shape((size,))).astype(
            dtypes.to_numpy_dtype(dtype))
        return creation.tensor(out, requires_grad=requires_grad)
    if isinstance(std, Tensor) and np.any(std._data < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not isinstance(std, Tensor):
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        return call(table.NORMAL_TENSOR_FLOAT, (mean,), (std, generator))
    if not isinstance(mean, Tensor):
        return call(table.NORMAL_FLOAT_TENSOR, (std,), (mean, generator))
    return call(table.NORMAL_TENSOR_TENSOR, (mean, std), (generator,))


is_inference = Tensor.is_inference  # gradtool.is_inference(input)


def cat(tensors, dim=0, *, axis=None):
    dim = dim if axis is None else axis  # torch takes numpy's name too
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    first = tensors[0]._data.shape
    dim = _dim(dim, len(first))
    for k, t in enumerate(tensors[1:], 1):
        shape = t._data.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} "
                               f"and {len(shape)}")
        for d, (a, b) in enumerate(zip(first, shape)):
            if d != dim and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                                   f"Expected size {a} but got size {b} for tensor number {k} "
                                   f"in the list.")
    return call(table.CAT, (tensors,), (dim,))


concat = concatenate = cat


def stack(tensors, dim=0, *, axis=None):
    dim = dim if axis is None else axis
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                           f"{list(tensors[0].shape)} at entry 0 and "
                           f"{list(next(t.shape for t in tensors if t.shape != tensors[0].shape))}"
                           f" at entry 1")
    return call(table.STACK, (tensors,), (_dim(dim, tensors[0].dim() + 1),))


def _var_args(t, dim, unbiased, keepdim, correction):
    if correction is None:
        correction = 0 if unbiased is False else 1
    if isinstance(dim, bool):  # torch's legacy var(unbiased) positional form
        correction, dim = (1 if dim else 0), None
    return (_dims(dim, t._data.ndim), correction, keepdim)
