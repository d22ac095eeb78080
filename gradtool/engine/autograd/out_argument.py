"""`out=`: a function's result written into a tensor the caller gives, as torch writes it:
the result's dtype must cast to out's, out takes the result's shape (a warning if it had
elements of another shape), and no input may require grad while grad mode is on (torch's
out= functions are not differentiable)."""
import warnings

from . import dtypes
from .grad_mode import no_grad
from .tensor import Tensor


def written_to(out, result, op_name):
    """out holding result (returned), or result itself when out is None."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{op_name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if result.requires_grad:
        raise RuntimeError(f"{op_name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")
    source, target = result._data.dtype, out._data.dtype
    if not dtypes.can_cast(source, target):
        names = dtypes.LEGACY_TYPE_NAMES
        raise RuntimeError(f"result type {names[source.name]} can't be cast to the desired "
                           f"output type {names[target.name]}")
    if out.shape != result.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                f"with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(result.shape)
    with no_grad():
        out.copy_(result)
    return out

