"""torch's free functions that are Tensor methods too: gradtool.exp(x) is x.exp()."""
from ..tensor import Tensor
from .derivatives import TABLE

# the rows' (their one-input ops, and the methods that parse their arguments), then the
# Tensor methods with no row of their own (composites, and results that need no gradient)
_METHODS = list(dict.fromkeys(name for spec in TABLE.values()
                              for name in spec.method_names + spec.function_names)) + (
    "clip flatten chunk argmax argmin all any logical_not isnan isinf isfinite detach numel eq "
    "ne lt le gt ge fliplr flipud tile argsort outer ger arctan2 diag nonzero argwhere multinomial "
    "unsafe_chunk inverse det logdet slogdet svd equal allclose conj").split()


def _function(name):
    method = getattr(Tensor, name)

    def fn(input, *args, **kwargs):
        if type(input) is not Tensor:  # (a sparse tensor's class has methods of its own)
            return getattr(type(input), name, method)(input, *args, **kwargs)
        return method(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"gradtool.{name}(input, ...) is input.{name}(...)."
    return fn


FUNCTIONS = {name: _function(name) for name in _METHODS}
FUNCTIONS["is_tensor"] = lambda obj: isinstance(obj, Tensor)
FUNCTIONS["real"] = lambda input: input.real
FUNCTIONS["imag"] = lambda input: input.imag
