"""A custom autograd.Function under torch.func's transforms: it must define setup_context
(torch's refusal otherwise); under vmap its `vmap` staticmethod gives the batched outputs,
and with generate_vmap_rule = True its forward, setup_context and backward run on the
batched values (one Function node on the physical tensors)."""
import collections

from ..autograd import function
from ..autograd.dispatch import NOT_BATCHED
from ..autograd.tensor import Tensor
from . import tree
from .batched import LEVELS, BatchedTensor, batched, level_of, movedim, physical, top_level

VmapInfo = collections.namedtuple("VmapInfo", ["batch_size", "randomness"])
active = [0]  # transforms running (vmap levels count through LEVELS)


def apply_under_transform(cls, args, kwargs):
    if getattr(cls, "_custom_op", None) is not None and not active[0]:
        # a custom op's Function: vmap runs the op's rule or fallback first, so this call is
        # a level down, where only a grad or jvp transform above refuses it (as torch)
        return NOT_BATCHED
    if cls.setup_context is function.Function.setup_context:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html")
    index = top_level(args)
    if not index:
        return NOT_BATCHED
    level = level_of(index)
    overridden = cls.vmap is not function.Function.vmap
    if cls.generate_vmap_rule and overridden:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
            f"and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
            f"delete the overridden vmap staticmethod to avoid ambiguity. For more details, "
            f"please see https://pytorch.org/docs/main/notes/extending.func.html")
    if not cls.generate_vmap_rule and not overridden:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            f"override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            f"more details, please see https://pytorch.org/docs/main/notes/extending.func.html")
    if overridden and _differentiated_inside(index):
        # torch: the grad level (above this vmap) records the Function with its backward,
        # whose forward is the vmap rule one level down; the rule's ops are not recorded
        pairs = [physical(a, index) for a in args]
        info = VmapInfo(level.size, level.randomness)
        generated = _generated(cls, index, level.size, tuple(flag for _, flag in pairs),
                               rule=info)
        return _as_batched(generated.apply(*(v for v, _ in pairs), **kwargs), index)
    if overridden:  # vmap above any grad: the rule's ops are what autograd records
        pairs = [physical(a, index) for a in args]
        in_dims = tuple(0 if flag else None for _, flag in pairs)
        result = cls.vmap(VmapInfo(level.size, level.randomness), in_dims,
                          *(v for v, _ in pairs), **kwargs)
        return rule_outputs_batched(result, index, pairs, args)
    pairs = [physical(a, index) for a in args]
    generated = _generated(cls, index, level.size, tuple(flag for _, flag in pairs))
    return _as_batched(generated.apply(*(v for v, _ in pairs), **kwargs), index)


def _as_batched(out, index):
    if isinstance(out, tuple):
        return tuple(batched(o, index) if isinstance(o, Tensor) else o for o in out)
    return batched(out, index)


# the vmap level that was innermost when each running grad/vjp (reverse mode) began, 0 for
# none: a vmap level at or below one of them has a grad level above it
reverse_entries = []


def _differentiated_inside(index):
    return any(entry >= index for entry in reverse_entries)


def _generated(cls, index, size, flags, rule=None):
    """A Function on the physical tensors whose setup_context and backward run the user's on
    the batched values (the level made active again for a backward that runs after the vmap
    returned: grad(vmap(f))). Its forward is the user's forward on the batched values
    (generate_vmap_rule), or with `rule` (the VmapInfo) the user's vmap staticmethod."""
    def wrapped(values):
        return [batched(v, index) if flag and isinstance(v, Tensor) else v
                for v, flag in zip(values, flags)]

    def unwrapped(out):
        if not isinstance(out, Tensor):
            return out
        if type(out) is BatchedTensor and out._level == index:
            return out._value
        return out.unsqueeze(0).expand((size,) + tuple(out.shape))

    def as_batched(out):
        if isinstance(out, tuple):
            return tuple(batched(o, index) if isinstance(o, Tensor) else o for o in out)
        return batched(out, index)

    def forward(*values, **kwargs):
        if rule is not None:
            return _run_rule(cls, rule, flags, values, kwargs, size)
        with _level_active(index, size):
            out = cls.forward(*wrapped(values), **kwargs)
            return tuple(unwrapped(o) for o in out) if isinstance(out, tuple) else unwrapped(out)

    def setup_context(ctx, inputs, output):
        with _level_active(index, size):
            cls.setup_context(ctx, tuple(wrapped(inputs)), as_batched(output))

    def backward(ctx, *grads):
        with _level_active(index, size):
            out = cls.backward(ctx, *(None if g is None else batched(g, index) for g in grads))
            single = not isinstance(out, tuple)
            result = []
            for g, flag in zip((out,) if single else out, flags):
                if g is not None:
                    g = unwrapped(g)
                    if not flag:  # an input shared by every example: the examples' sum
                        g = g.sum(0)
                result.append(g)
            return result[0] if single else tuple(result)
    return type(cls.__name__, (function.Function,), {
        "forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
        "backward": staticmethod(backward), "generate_vmap_rule": True})


def _run_rule(cls, info, flags, values, kwargs, size):
    """The user's vmap staticmethod on the physical values: outputs with the batch at dim 0
    (an output it says is unbatched, out_dim None, expanded)."""
    in_dims = tuple(0 if flag else None for flag in flags)
    flat, dims, spec = rule_outputs(cls.vmap(info, in_dims, *values, **kwargs))
    return tree.unflatten([
        o if not isinstance(o, Tensor) else
        o.unsqueeze(0).expand((size,) + tuple(o.shape)) if d is None else movedim(o, d, 0)
        for o, d in zip(flat, dims)], spec)


def rule_outputs(result):
    """(flat outputs, their out_dims, the outputs' structure) of what a vmap rule returned
    (a Function's vmap staticmethod, a custom op's register_vmap), checked as torch checks
    it."""
    if not isinstance(result, tuple) or len(result) != 2:
        kind = "<class 'torch.Tensor'>" if isinstance(result, Tensor) else type(result)
        got = f"a {kind}" if not isinstance(result, tuple) else f"{len(result)} returns"
        raise RuntimeError(f"Expected the vmap staticmethod to have two returns, an output and "
                           f"out_dims with pytree structure compatible with the output. Got "
                           f"{got} instead")
    output, out_dims = result
    flat, spec = tree.flatten(output)

    def incompatible():
        return RuntimeError(
            f"The autograd.Function's vmap staticmethod returned an incompatible (output, "
            f"out_dims) tuple. Expected out_dims={out_dims} to be compatible with the "
            f"structure of `output`. out_dims has structure "
            f"{tree.describe(tree.flatten(out_dims)[1])} but output has structure "
            f"{tree.describe(spec)}. For more details, please see "
            f"https://pytorch.org/docs/main/notes/extending.func.html")
    return flat, tree.broadcast_prefix(out_dims, output, incompatible), spec


def rule_outputs_batched(result, index, pairs, originals):
    """A vmap rule's outputs as batched tensors of level `index` (out_dim None: as they are);
    an output that is one of the rule's physical inputs is the argument it came from (torch
    keeps its identity). pairs: (physical, batched?) per flat argument, as in originals."""
    flat, dims, spec = rule_outputs(result)
    by_id = {id(v): a for (v, _), a in zip(pairs, originals)}
    return tree.unflatten([
        o if not isinstance(o, Tensor) else by_id[id(o)] if id(o) in by_id else
        o if d is None else batched(movedim(o, d, 0), index) for o, d in zip(flat, dims)], spec)


class _level_active:
    """The vmap level `index` active (pushed again if its vmap has returned)."""

    def __init__(self, index, size):
        self.index, self.size, self.pushed = index, size, None

    def __enter__(self):
        if not any(level.index == self.index for level in LEVELS):
            from . import batched as batching
            self.pushed = batching.Level(self.index, self.size, "error")
            LEVELS.append(self.pushed)
            LEVELS.sort(key=lambda level: level.index)
            batching._install_hooks()

    def __exit__(self, *exc):
        if self.pushed is not None:
            from . import batched as batching
            LEVELS.remove(self.pushed)
            batching._install_hooks()


def install():
    """The hook is set while any transform runs (vmap levels, or grad/vjp/jvp's function)."""
    function.transform_hook = apply_under_transform if (LEVELS or active[0]) else None
