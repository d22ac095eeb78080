"""torch's free functions that are Tensor methods too: gradtool.exp(x) is x.exp()."""
from ..tensor import Tensor
from .derivatives import TABLE

# the table's one-input ops, then the methods that parse their arguments before dispatching
_METHODS = [name for spec in TABLE.values() for name in spec.method_names] + (
    "clamp clip sum mean var std prod max min amax amin logsumexp softmax log_softmax norm "
    "mm addmm bmm mv dot reshape flatten squeeze unsqueeze transpose t permute split chunk "
    "unbind gather scatter scatter_add masked_fill argmax argmin all any isnan isinf "
    "isfinite clone detach numel eq ne lt le gt ge add sub mul div pow cumsum cumprod "
    "flip fliplr flipud roll tile triu tril sort argsort topk index_select index_add "
    "outer ger bernoulli diagonal round atan2 arctan2 addcmul addcdiv diag diag_embed nonzero "
    "argwhere multinomial baddbmm unsafe_chunk unsafe_split unsafe_split_with_sizes inverse det "
    "logdet slogdet svd").split()


def _function(name):
    method = getattr(Tensor, name)

    def fn(input, *args, **kwargs):
        return method(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"gradtool.{name}(input, ...) is input.{name}(...)."
    return fn


FUNCTIONS = {name: _function(name) for name in _METHODS}
FUNCTIONS["equal"] = lambda a, b: a.equal(b)
FUNCTIONS["allclose"] = lambda a, b, **kw: a.allclose(b, **kw)
FUNCTIONS["is_tensor"] = lambda obj: isinstance(obj, Tensor)
FUNCTIONS["conj"] = lambda input: input.conj()
FUNCTIONS["real"] = lambda input: input.real
FUNCTIONS["imag"] = lambda input: input.imag
