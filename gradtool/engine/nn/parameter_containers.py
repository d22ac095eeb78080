"""nn.ParameterList and nn.ParameterDict: parameters held in a list or a dict and registered
on the container (under "0", "1", ... or their keys), so that the module holding the container
sees them in parameters(), state_dict() and the optimizer's groups. A plain tensor put in is
made a Parameter, as torch does."""
import collections
import collections.abc

from ..autograd.tensor import Tensor
from .module import Module
from .parameter import Parameter


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters; no forward."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _index(self, index):
        if not -self._size <= index < self._size:
            raise IndexError(f"index {index} is out of range")
        return str(index % self._size)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)([self[i] for i in range(self._size)[index]])
        return getattr(self, self._index(index))

    def __setitem__(self, index, value):
        key, value = self._index(index), _as_parameter(value)
        if isinstance(value, Parameter) and key in self._parameters:
            self._parameters[key] = value  # in its place: the order of parameters() stays
        else:
            setattr(self, key, value)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, values):
        return self.extend(values)

    def append(self, value):
        self.__dict__["_size"] = self._size + 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(f"({i}): Parameter containing: [{p.dtype} of size "
                         f"{'x'.join(map(str, p.shape))}]" for i, p in enumerate(self))


class ParameterDict(Module):
    """A dict of parameters under their keys, in insertion order; no forward."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def update(self, parameters):
        """From pairs or an ordered mapping in their order; from a plain dict sorted by key,
        as torch (which still treats a dict as unordered)."""
        if isinstance(parameters, (collections.OrderedDict, ParameterDict)):
            items = parameters.items()
        elif isinstance(parameters, collections.abc.Mapping):
            items = sorted(parameters.items())
        else:
            items = parameters
        for key, value in items:
            self[key] = value


__all__ = ["ParameterList", "ParameterDict"]
