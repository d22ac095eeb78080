"""Sequential, ModuleList and ModuleDict, and the deprecated Container."""
import collections
import operator
import warnings

from .module import Module


def _key(modules, index):
    """The name of the module at position `index` (negative counts from the end)."""
    size = len(modules)
    index = operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of range")
    return list(modules)[index % size]


class _Numbered(Module):
    """Sequential's and ModuleList's indexing: modules in order, by position (negative counts
    from the end) or slice, and append, which names a module by its position."""

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(self._slice(list(self._modules.items())[index]))
        return self._modules[_key(self._modules, index)]

    def __setitem__(self, index, module):
        setattr(self, _key(self._modules, index), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class Sequential(_Numbered):
    """Calls its modules in order, each on the previous one's output. Built from modules
    (named "0", "1", ...) or from an ordered dict of name -> module."""

    _slice = collections.OrderedDict  # a slice keeps the modules' names

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def __delitem__(self, index):
        if isinstance(index, slice):
            keys = list(self._modules)[index]
        else:
            keys = [_key(self._modules, index)]
        for key in keys:
            delattr(self, key)

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_Numbered):
    """A list of modules, registered (so their parameters are the container's) under the
    names "0", "1", ...; it has no forward of its own."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @staticmethod
    def _slice(items):  # a slice is numbered from 0 again
        return [module for _, module in items]

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self


class ModuleDict(Module):
    """A dict of modules, registered under their keys, in insertion order; no forward."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module


_CONTAINER_DEPRECATED = ("`nn.Container` is deprecated. All of its functionality is now "
                         "implemented in `nn.Module`. Subclass that instead.")


class Container(Module):
    """torch's deprecated Module holding the keyword arguments as children; it warns when made
    and when subclassed, as torch's."""

    def __init_subclass__(cls, **kwargs):
        warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs):
        warnings.warn(_CONTAINER_DEPRECATED, FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
