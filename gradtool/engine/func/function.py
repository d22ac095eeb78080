"""A custom autograd.Function under torch.func's transforms: it must define setup_context
(torch's refusal otherwise); under vmap its `vmap` staticmethod gives the batched outputs,
and with generate_vmap_rule = True it runs once per example (stacked: its forward and
backward see one example's values each)."""
import collections

from ..autograd import function
from ..autograd.dispatch import NOT_BATCHED
from ..autograd.tensor import Tensor
from .batched import LEVELS, BatchedTensor, batched, level_of, movedim, physical, top_level
from .rules import rewrap_examples

VmapInfo = collections.namedtuple("VmapInfo", ["batch_size", "randomness"])
active = [0]  # transforms running (vmap levels count through LEVELS)


def apply_under_transform(cls, args, kwargs):
    if cls.setup_context is function.Function.setup_context:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html")
    index = top_level(args)
    if not index:
        return NOT_BATCHED
    level = level_of(index)
    rule = vars(cls).get("vmap") or next(
        (vars(k)["vmap"] for k in cls.__mro__ if "vmap" in vars(k)), None)
    if rule is not None:
        pairs = [physical(a, index) for a in args]
        in_dims = tuple(0 if flag else None for _, flag in pairs)
        out, out_dims = rule.__func__(VmapInfo(level.size, level.randomness), in_dims,
                                      *(v for v, _ in pairs), **kwargs) if isinstance(
            rule, staticmethod) else rule(VmapInfo(level.size, level.randomness), in_dims,
                                          *(v for v, _ in pairs), **kwargs)
        single = not isinstance(out, tuple)
        outs, dims = ((out,), (out_dims,)) if single else (out, out_dims if isinstance(
            out_dims, tuple) else (out_dims,) * len(out))
        wrapped = tuple(o if d is None or not isinstance(o, Tensor) else batched(
            movedim(o, d, 0), index) for o, d in zip(outs, dims))
        return wrapped[0] if single else wrapped
    if not getattr(cls, "generate_vmap_rule", False):
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            f"override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            f"more details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    outs = []
    for b in range(level.size):
        example = [a._value.select(0, b) if type(a) is BatchedTensor and a._level == index
                   else a for a in args]
        outs.append(cls.apply(*example, **kwargs))
    return rewrap_examples(outs, index)


def install():
    """The hook is set while any transform runs (vmap levels, or grad/vjp/jvp's function)."""
    function.transform_hook = apply_under_transform if (LEVELS or active[0]) else None
