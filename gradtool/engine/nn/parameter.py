"""nn.Parameter: a leaf tensor that a Module registers as one of its parameters."""
from ..autograd.tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning one to a Module attribute registers
    it. It requires grad by default and shares memory (and the version counter) with the
    tensor it wraps, as torch's `Parameter(data)` does. Operations on it return plain
    tensors."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        from ..autograd.creation import empty
        if data is None:
            data = empty(0)
        p = cls._wrap(data._data)  # the same array: no copy, as torch
        p._version_counter = data._version_counter
        p._is_inference = data._is_inference
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ would copy the data)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce__(self):  # copy.deepcopy(model) and gradtool.save keep parameters parameters
        return (_rebuild_parameter, (self._data, self._requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(Tensor._wrap(data.copy()), requires_grad)


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
