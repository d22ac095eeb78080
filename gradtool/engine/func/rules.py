"""vmap's batching rules: an op on batched inputs runs once, on the physical tensors (batch at
dim 0), with its dim arguments shifted past the batch dim and the operands aligned
(functorch's rules). An op without a rule runs one example at a time and stacks the results
(the fallback, counted in FALLBACKS and warned about once per op, as functorch warns).

A rule takes (spec, values, batched, args, level): values are the inputs with the level's
batch at dim 0 where `batched` says so, and gives the physical result(s); the caller wraps
them."""
import collections
import functools
import warnings

import numpy as np

from ..autograd import creation, inplace
from ..autograd.dispatch import NOT_BATCHED, call
from ..autograd.free_functions import stack
from ..autograd.matmul import matmul
from ..autograd.ops.rows import table
from ..autograd.tensor import Tensor, _dim
from ..errors import NotInEngineError
from .batched import (BatchedTensor, LogicalArray, Unbatched, batched, level_of, mirror_graph,
                      movedim, physical, top_level)

FALLBACKS = collections.Counter()  # op name -> calls that ran one example at a time
_warned = set()


# ---------------- the hook ----------------
def batched_call(spec, inputs, args):
    """dispatch.call's hook: NOT_BATCHED unless an input is a BatchedTensor."""
    index = top_level(inputs)
    if not index:
        return NOT_BATCHED
    level = level_of(index)
    if spec.variadic:
        pairs = [physical(v, index) for v in inputs[0]]
        values, flags = [p[0] for p in pairs], [p[1] for p in pairs]
    else:
        values, flags = [], []
        for v in inputs:
            value, flag = physical(v, index)
            values.append(value)
            flags.append(flag)
    rule = RULES.get(spec.name)
    out = NOT_BATCHED if rule is None else rule(spec, values, flags, args, level)
    if out is NOT_BATCHED:
        out = _one_at_a_time(spec, values, flags, args, level)
    return _wrap(out, index)


def batched_call_inplace(spec, inputs, args):
    """call_inplace's hook: the write goes into the physical target (batched at the top
    level, as torch requires of an in-place op's self when another operand is batched)."""
    index = top_level(inputs)
    if not index:
        return NOT_BATCHED
    target = inputs[0]
    value, flag = physical(target, index)
    if not flag:  # another operand is batched: the result would not fit in self
        shapes = [tuple(v.shape) for v in inputs if isinstance(v, Tensor)]
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast "
                           f"shape {[level_of(index).size] + list(np.broadcast_shapes(*shapes))}")
    rest = [physical(v, index) for v in inputs[1:]]
    level = level_of(index)
    if spec.name in _SCATTERS:  # scatter_, scatter_add_, index_add_: dims, not broadcasting
        values = _scatter_operands(spec, [value] + [v for v, _ in rest],
                                   [True] + [f for _, f in rest], level.size)
        if values is NOT_BATCHED:
            raise NotInEngineError(f"{spec.name}_ under vmap with batched indices")
        inplace.call_inplace(spec, values, _shifted_args(spec, args, value._data.ndim - 1))
        mirror_graph(target)
        return target
    rank = max([target._data.ndim] + [_logical_ndim(v, f) for v, f in rest])
    values = [value] + [_aligned(v, rank) if f else v for v, f in rest]
    args = _shifted_args(spec, args, value._data.ndim - 1)
    if spec.name in _RANDOM_FILLS and level.randomness == "same":  # one draw for every example
        one = value.select(0, 0).clone()
        inplace.call_inplace(spec, [one] + values[1:], args)
        inplace.call_inplace(table.COPY, (value, one.unsqueeze(0)))
    else:
        with _drawing(level):
            inplace.call_inplace(spec, values, args)
    mirror_graph(target)
    return target


_RANDOM_FILLS = ("normal_", "uniform_", "bernoulli_")


def _wrap(out, index):
    if isinstance(out, (tuple, list)):
        return tuple(batched(o, index) if isinstance(o, Tensor) else o for o in out)
    return batched(out, index)


# ---------------- the fallback ----------------
def _one_at_a_time(spec, values, flags, args, level):
    """The op on each example, stacked: correct for any op, one numpy call per example."""
    note_fallback(spec.name)
    outs = []
    with _looping(level):
        for b in range(level.size):
            if spec.variadic:
                inputs = ([v.select(0, b) if f else v for v, f in zip(values, flags)],)
            else:
                inputs = [v.select(0, b) if f else v for v, f in zip(values, flags)]
            outs.append(call(spec, inputs, args))
    return _stacked(outs)


def note_fallback(name, stacklevel=5):
    """Count a call that runs one example at a time; warn the first time for each op."""
    FALLBACKS[name] += 1
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the "
                      f"batching rule for {name}. gradtool runs it one example at a time.",
                      UserWarning, stacklevel=stacklevel)


def _stacked(outs):
    if isinstance(outs[0], tuple):
        return tuple(_stacked(list(column)) for column in zip(*outs))
    return stack(outs, 0)


class _looping:
    """Random draws are allowed one example at a time (randomness='different' draws each)."""

    def __init__(self, level):
        self.level, self.was = level, level.looping

    def __enter__(self):
        self.level.looping = True

    def __exit__(self, *exc):
        self.level.looping = self.was


_drawing = _looping  # a rule that draws for the whole batch at once (different per example)
looping = _looping  # (a custom op's fallback, library.py)


def method_with_fallback(name, method):
    """A Tensor method on BatchedTensor: its rule (METHOD_RULES: methods that compute on
    values without an op), else as is (the ops it calls batch), else, where it computes on
    values with numpy (Unbatched), one example at a time."""
    rule = METHOD_RULES.get(name)

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if rule is not None:
            out = rule(method, self, args, kwargs)
            if out is not NOT_BATCHED:
                return out
        try:
            return method(self, *args, **kwargs)
        except Unbatched:
            pass
        index = top_level((self,) + args + tuple(kwargs.values()))
        level = level_of(index)
        FALLBACKS["Tensor." + name] += 1

        def example(v, b):
            if type(v) is BatchedTensor and v._level == index:
                return v._value.select(0, b)
            if type(v) in (list, tuple):
                return type(v)(example(w, b) for w in v)
            return v
        outs = []
        state = creation.default_generator._rng.bit_generator.state
        with _looping(level):
            for b in range(level.size):
                if level.randomness == "same":  # every example draws the same numbers
                    creation.default_generator._rng.bit_generator.state = state
                outs.append(method(example(self, b), *(example(a, b) for a in args),
                                   **{k: example(v, b) for k, v in kwargs.items()}))
        return rewrap_examples(outs, index)
    return run


def rewrap_examples(outs, index):
    """Per-example results (tensors, or tuples of them) stacked into batched ones."""
    first = outs[0]
    if isinstance(first, Tensor):
        return batched(stack(outs, 0), index)
    if isinstance(first, tuple):
        columns = [rewrap_examples(list(c), index) for c in zip(*outs)]
        return type(first)(*columns) if hasattr(first, "_fields") else tuple(columns)
    if all(o == first for o in outs):
        return first
    raise RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
        "control flow. We don't support that yet, please file an issue at "
        "https://github.com/pytorch/pytorch/issues .")


# ---------------- helpers ----------------
def _logical_ndim(v, flag):
    if not isinstance(v, Tensor):
        return 0
    return v._data.ndim - 1 if flag else v._data.ndim


def _aligned(v, rank):
    """A physical tensor (batch at 0) with ones after the batch dim up to logical `rank`, so
    it broadcasts against unbatched operands as its example would."""
    shape = v._data.shape
    missing = rank - (len(shape) - 1)
    if missing <= 0:
        return v
    return v.reshape((shape[0],) + (1,) * missing + tuple(shape[1:]))


def _expanded(v, flag, size):
    """A physical tensor batched at dim 0, expanding an unbatched one."""
    if flag:
        return v
    return v.unsqueeze(0).expand((size,) + tuple(v._data.shape))


def _shift(d):
    return d + 1 if d >= 0 else d


def _shifted(dim, ndim):
    """Dim arguments moved past the batch dim; None (every dim) becomes every logical dim."""
    if dim is None:
        return tuple(range(1, ndim + 1))
    if isinstance(dim, (tuple, list)):
        return tuple(_shift(d) for d in dim) if dim else tuple(range(1, ndim + 1))
    return _shift(dim)


# ---------------- the rules ----------------
RULES = {}


def _rule(*names):
    def register(fn):
        for name in names:
            RULES[name] = fn
        return fn
    return register


@_rule("neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "reciprocal", "rsqrt",
       "sin", "cos", "tan", "tanh", "sigmoid", "asin", "acos", "atan", "asinh", "acosh",
       "atanh", "round", "relu", "clamp", "clamp_min", "clone", "to", "mul", "rsub", "pow",
       "add", "sub", "div", "atan2", "addcmul", "addcdiv", "maximum", "minimum", "where",
       "masked_fill", "conj", "conj_physical", "sgn", "angle", "complex", "polar", "alias",
       "erf", "gelu", "silu", "softplus", "leaky_relu", "elu", "leaky_relu_backward",
       "threshold_backward", "triu", "tril", "copy_", "view_as_real", "view_as_complex",
       "ceil", "floor", "trunc", "frac", "exp2", "log2", "log10", "fmod", "remainder",
       "hardsigmoid", "hardswish", "hardtanh", "mish", "lerp", "log_sigmoid_forward")
def elementwise(spec, values, flags, args, level):
    """Elementwise and broadcasting ops (and those on the last dims only): operands aligned
    to the logical rank, so broadcasting sees each example."""
    rank = max(_logical_ndim(v, f) for v, f in zip(values, flags))
    return call(spec, [_aligned(v, rank) if f else v for v, f in zip(values, flags)], args)


# ops whose named arguments are dims (shifted past the batch dim)
_DIM_ARGS = {
    "sum": ("dim",), "mean": ("dim",), "var": ("dim",), "std": ("dim",), "prod": ("dim",),
    "max": ("dim",), "min": ("dim",), "amax": ("dim",), "amin": ("dim",),
    "logsumexp": ("dim",), "norm": ("dim",), "softmax": ("dim",), "log_softmax": ("dim",),
    "cumsum": ("dim",), "cumprod": ("dim",), "flip": ("dims",), "squeeze": ("dim",),
    "squeeze_": ("dim",), "unsqueeze": ("dim",), "select": ("dim",), "slice": ("dim",),
    "transpose": ("dim0", "dim1"), "unbind": ("dim",), "split": ("dim",),
    "split_with_sizes": ("dim",), "unsafe_split": ("dim",), "unsafe_split_with_sizes": ("dim",),
    "sort": ("dim",), "topk": ("dim",), "var_mean": ("dim",), "std_mean": ("dim",),
    "diagonal": ("dim1", "dim2"), "diag_embed": ("dim1", "dim2"), "diagonal_copy": ("dim1", "dim2"),
    "roll": ("dims",),
}
# reductions of every element: the same reduction over every logical dim
_WHOLE = {"sum": "SUM_DIM", "mean": "MEAN_DIM", "prod": None, "max": "AMAX", "min": "AMIN"}


_DIM_NAMES = ("dim", "dims", "dim0", "dim1", "dim2")


def _shifted_args(spec, args, ndim):
    """The row's dim arguments (by name) past the batch dim."""
    if not any(name in _DIM_NAMES for name in spec.args):
        return args
    return tuple(_shifted(a, ndim) if name in _DIM_NAMES and a is not None else a
                 for name, a in zip(spec.args, args))


_SCATTERS = ("scatter", "scatter_add", "index_add")


def _scatter_operands(spec, values, flags, size):
    """scatter's index and src batched with self (they index it elementwise); index_add's
    index stays one list of rows for every example (a batched one: NOT_BATCHED)."""
    if spec.name == "index_add":
        if flags[1]:
            return NOT_BATCHED
        return [_expanded(values[0], flags[0], size), values[1],
                _expanded(values[2], flags[2], size)]
    return [_expanded(v, f, size) if isinstance(v, Tensor) else v
            for v, f in zip(values, flags)]


@_rule(*_SCATTERS)
def scatter(spec, values, flags, args, level):
    values = _scatter_operands(spec, values, flags, level.size)
    if values is NOT_BATCHED:
        return NOT_BATCHED
    return call(spec, values, _shifted_args(spec, args, values[0]._data.ndim - 1))


@_rule(*_DIM_ARGS)
def along_dims(spec, values, flags, args, level):
    names = _DIM_ARGS[spec.name]
    if not any(name in spec.args for name in names):  # (sum(), max(), ...: no dim argument)
        return _whole(spec, values, flags, args, level)
    if len(values) != 1:
        return NOT_BATCHED
    x = values[0]
    ndim = x._data.ndim - 1
    args = list(args)
    for i, name in enumerate(spec.args):
        if name in names:
            if spec.name == "squeeze" and args[i] is None:
                args[i] = tuple(d + 1 for d, n in enumerate(x._data.shape[1:]) if n == 1)
            elif spec.name == "norm" and args[i] is None:
                args[i] = tuple(range(1, ndim + 1))
            else:
                args[i] = _shifted(args[i], ndim)
    return call(spec, (x,), tuple(args))


def _whole(spec, values, flags, args, level):
    """sum(), mean(), max(), ... of every element: over every logical dim of each example."""
    x = values[0]
    if spec.name not in _WHOLE or len(values) != 1:
        return NOT_BATCHED
    x = x.reshape((x._data.shape[0], -1))
    if spec.name == "prod":
        return call(table.PROD_DIM, (x,), (1, False))
    return call(getattr(table, _WHOLE[spec.name]), (x,), ((1,), False))


@_rule("t")
def transpose_2d(spec, values, flags, args, level):
    x = values[0]
    if x._data.ndim < 3:
        return call(table.ALIAS, (x,))
    return call(table.TRANSPOSE, (x,), (1, 2))


@_rule("view", "reshape")
def reshape(spec, values, flags, args, level):
    x = values[0]
    return call(spec, (x,), ((x._data.shape[0],) + tuple(args[0]),))


@_rule("expand")
def expand(spec, values, flags, args, level):
    x = values[0]
    size = tuple(args[0])
    x = _aligned(x, len(size))
    return call(spec, (x,), ((x._data.shape[0],) + size,))


@_rule("permute")
def permute(spec, values, flags, args, level):
    x = values[0]
    ndim = x._data.ndim - 1
    return call(spec, (x,), ((0,) + tuple(d % ndim + 1 for d in args[0]),))


@_rule("repeat")
def repeat(spec, values, flags, args, level):
    repeats = tuple(args[0])
    x = _aligned(values[0], len(repeats))
    return call(spec, (x,), ((1,) + repeats,))


@_rule("cat", "stack")
def cat(spec, values, flags, args, level):
    """Every operand batched (the unbatched ones expanded), the dim shifted."""
    dim = args[0]
    tensors = [_expanded(v, f, level.size) for v, f in zip(values, flags)]
    return call(spec, (tensors,), (_shift(dim),))


@_rule("mm", "mv", "dot", "bmm")
def matrix_product(spec, values, flags, args, level):
    """One matmul of the physical operands: a batched one becomes a stack of matrices (an
    unbatched matrix operand is shared by every example)."""
    a, b = values
    fa, fb = flags
    if spec.name in ("mv", "dot"):  # the vector as a column
        b = b.unsqueeze(-1)
    if spec.name == "dot" and fa and not fb:
        return matmul(a, b).squeeze(-1)
    if spec.name == "dot":
        a = a.unsqueeze(-2)
        return matmul(a, b).squeeze(-1).squeeze(-1)
    out = matmul(a, b)
    return out.squeeze(-1) if spec.name == "mv" else out


@_rule("addmm", "baddbmm")
def add_product(spec, values, flags, args, level):
    bias, a, b = values
    beta, alpha = args
    product = matmul(a, b)
    if alpha != 1:
        product = product * alpha
    if flags[0]:
        bias = _aligned(bias, product._data.ndim - 1)
    if beta == 0:
        return product
    return product + (bias if beta == 1 else bias * beta)


@_rule("convolution")
def convolution(spec, values, flags, args, level):
    """A batched input (the weight and bias shared): the batch folded into conv's N."""
    x, weight, bias = values
    if flags[1] or flags[2]:
        return _convolution_batched_weight(spec, values, flags, args, level)
    spatial = weight._data.ndim - 2
    if x._data.ndim == spatial + 2:  # an unbatched example (C, ...): the batch is N
        return call(spec, (x, weight, bias), args)
    size, n = x._data.shape[:2]
    out = call(spec, (x.reshape((size * n,) + tuple(x._data.shape[2:])), weight, bias), args)
    return out.reshape((size, n) + tuple(out._data.shape[1:]))


def _convolution_batched_weight(spec, values, flags, args, level):
    """Per-example weights (per-sample gradients, ensembles): one grouped convolution, the
    examples as groups (the batch folded into the channels)."""
    x, weight, bias = values
    stride, padding, dilation, transposed, output_padding, groups = args
    if transposed:
        return NOT_BATCHED
    size = level.size
    spatial = (weight._data.ndim - 1 if flags[1] else weight._data.ndim) - 2
    x = _expanded(x, flags[0], size)
    weight = _expanded(weight, flags[1], size)
    unbatched_example = x._data.ndim == spatial + 2  # (C, ...): one image per example
    if unbatched_example:
        x = x.unsqueeze(1)
    n = x._data.shape[1]
    # (B, N, C, ...) -> (N, B*C, ...); weight (B, O, C/g, ...) -> (B*O, C/g, ...)
    folded = movedim(x, 0, 1).reshape((n, -1) + tuple(x._data.shape[3:]))
    w = weight.reshape((-1,) + tuple(weight._data.shape[2:]))
    b = None if bias is None else _expanded(bias, flags[2], size).reshape((-1,))
    out = call(spec, (folded, w, b), (stride, padding, dilation, transposed, output_padding,
                                      groups * size))
    out = movedim(out.reshape((n, size, -1) + tuple(out._data.shape[2:])), 1, 0)
    return out.squeeze(1) if unbatched_example else out


_LEADING = {"max_pool2d_with_indices": 4, "avg_pool2d": 4, "adaptive_avg_pool2d": 4,
            "adaptive_max_pool2d": 4, "upsample_nearest2d": 4, "upsample_bilinear2d": 4,
            "upsample_nearest1d": 3, "reflection_pad1d": 3, "reflection_pad2d": 4,
            "replication_pad1d": 3, "replication_pad2d": 4, "constant_pad_nd": None}


@_rule(*_LEADING)
def leading_batch(spec, values, flags, args, level):
    """Ops on the last dims of an (N, C, ...) input: the batch folded into N."""
    if any(flags[1:]):
        return NOT_BATCHED
    x = values[0]
    most = _LEADING[spec.name]
    if most is None or x._data.ndim <= most:
        return call(spec, (x,) + tuple(values[1:]), args)
    shape = x._data.shape
    lead = shape[:x._data.ndim - most + 1]
    folded = x.reshape((-1,) + tuple(shape[len(lead):]))
    out = call(spec, (folded,) + tuple(values[1:]), args)
    if isinstance(out, tuple):
        return tuple(o.reshape(tuple(lead) + tuple(o._data.shape[1:])) for o in out)
    return out.reshape(tuple(lead) + tuple(out._data.shape[1:]))


@_rule("native_layer_norm")
def layer_norm(spec, values, flags, args, level):
    if any(flags[1:]):
        return NOT_BATCHED
    return call(spec, values, args)  # normalized over the last dims: the batch is a lead dim


_BATCH_NORM_REFUSAL = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on how "
    "to patch your module to work with vmap")


@_rule("native_batch_norm")
def batch_norm(spec, values, flags, args, level):
    """functorch's rule: the examples' channels side by side, (N, B*C, *), one batch norm
    for all (each example's channel its own statistics), then back to (B, N, C, *). In
    training, running statistics that an example would update must be batched (torch's
    refusal), and are updated through a view of them."""
    x, weight, bias, running_mean, running_var = values
    training = args[0]
    stats = [(t, f) for t, f in ((running_mean, flags[3]), (running_var, flags[4]))
             if t is not None]
    if training and flags[0] and any(not f for _, f in stats):
        raise RuntimeError(_BATCH_NORM_REFUSAL)
    if training and any(not t._data.flags.c_contiguous for t, f in stats if f):
        return NOT_BATCHED  # (their view would be a copy: the update would be lost)
    size = level.size
    x = _expanded(x, flags[0], size)
    n, c = x._data.shape[1], x._data.shape[2]
    rest = tuple(x._data.shape[3:])
    side_by_side = movedim(x, 0, 1).reshape((n, size * c) + rest)

    def per_channel(t, flag):
        return None if t is None else _expanded(t, flag, size).reshape((size * c,))
    out, mean, rstd = call(spec, (side_by_side,) + tuple(
        per_channel(t, f) for t, f in zip(values[1:], flags[1:])), args)
    out = movedim(out.reshape((n, size, c) + rest), 1, 0)
    if mean._data.shape[0] == 0:  # eval mode: empty statistics, one per example
        return out, mean.expand((size, 0)), rstd.expand((size, 0))
    return out, mean.reshape((size, c)), rstd.reshape((size, c))


@_rule("native_group_norm")
def group_norm(spec, values, flags, args, level):
    """Each example's samples normalised on their own: the batch folded into N."""
    if any(flags[1:]):
        return NOT_BATCHED
    x = values[0]
    n, c, hxw, group, eps = args
    size = level.size
    out, mean, rstd = call(spec, (x.reshape((size * n,) + tuple(x._data.shape[2:])),) +
                           tuple(values[1:]), (size * n, c, hxw, group, eps))
    return (out.reshape(tuple(x._data.shape)), mean.reshape((size, n, group)),
            rstd.reshape((size, n, group)))


# ---------------- indexing by tensors batched under vmap ----------------
_DYNAMIC_SHAPE = ("vmap: We do not support batching operators that can support dynamic shape. "
                  "Attempting to batch over indexing with a boolean mask.")


def batched_getitem(t, index):
    """t[index] where an index tensor is batched (per-example indices): one advanced
    indexing of the physical tensor, each example's indices paired with its own rows by an
    index over the batch. NotImplemented where the ordinary path serves (no batched index
    tensor) or this one cannot (None items, 0-d index tensors: the fallback)."""
    from ..autograd.indexing import _index_items
    items = _index_items(index)
    tensors = [i for i in items if isinstance(i, Tensor)]
    index_level = top_level(tensors)
    if not index_level or index_level < top_level((t,)):
        return NotImplemented  # (an index batched only below t's level: t's rule first)
    for i in tensors:
        if type(i) is BatchedTensor and i._level == index_level and i._data.dtype == np.bool_:
            raise RuntimeError(_DYNAMIC_SHAPE)
    if any(i is None or isinstance(i, (bool, np.bool_)) or (isinstance(i, Tensor) and (
            i._data.ndim == 0 or i._data.dtype == np.bool_)) or isinstance(i, (list, tuple))
            for i in items):
        return NotImplemented
    # the ints and slices first (views, each example's), then the tensor indices
    view = t[tuple(slice(None) if isinstance(i, Tensor) else i for i in items)]
    positions, dim = {}, 0
    for i in items:
        if i is Ellipsis:
            dim += view.dim() - sum(1 for j in items if isinstance(j, (slice, Tensor)))
        elif isinstance(i, (slice, Tensor)):
            if isinstance(i, Tensor):
                positions[dim] = i
            dim += 1
    level = level_of(index_level)
    size = level.size
    source, flag = physical(view, index_level)
    source = _expanded(source, flag, size)
    pairs = {d: physical(i, index_level) for d, i in positions.items()}
    rank = max(_logical_ndim(v, f) for v, f in pairs.values())
    arrays = {d: (_aligned(v, rank) if f else v)._data for d, (v, f) in pairs.items()}
    if not all(type(a) is np.ndarray for a in arrays.values()):
        return NotImplemented
    over_batch = np.arange(size).reshape((size,) + (1,) * rank)
    first, last = min(arrays), max(arrays)
    if last - first + 1 == len(arrays):  # adjacent: the indexed dims stay where they are
        source = movedim(source, 0, first)
        numpy_index = (slice(None),) * first + (over_batch,) + tuple(
            arrays[d] for d in range(first, last + 1))
        return batched(movedim(call(table.INDEX, (source,), (numpy_index,)), first, 0),
                       index_level)
    numpy_index = (over_batch,) + tuple(arrays.get(d, slice(None)) for d in range(last + 1))
    return batched(call(table.INDEX, (source,), (numpy_index,)), index_level)


@_rule("embedding")
def embedding(spec, values, flags, args, level):
    weight, indices = values
    if not flags[0]:
        return call(spec, values, args)  # batched indices: a batch more of lookups
    # per-example tables (per-sample gradients): each example's rows picked by indexing,
    # where no padding row must be kept from the gradient
    padding_idx = args[0]
    rows = indices._data
    if padding_idx not in (None, -1) or type(rows) is not np.ndarray:
        return NOT_BATCHED
    if flags[1]:
        examples = np.arange(level.size).reshape((-1,) + (1,) * (rows.ndim - 1))
        return call(table.INDEX, (weight,), ((examples, rows),))
    return call(table.INDEX, (weight,), ((slice(None), rows),))


@_rule("gather")
def gather(spec, values, flags, args, level):
    x, index = (_expanded(v, f, level.size) for v, f in zip(values, flags))
    return call(spec, (x, index), (_shift(args[0]),) + tuple(args[1:]))


_NONE, _MEAN, _SUM = 0, 1, 2  # torch's reduction enum (nn.functional._REDUCTION_ENUM)


@_rule("mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
       "binary_cross_entropy_with_logits")
def pointwise_loss(spec, values, flags, args, level):
    """Each example's loss: the unreduced loss of the aligned operands, reduced per example."""
    rank = max(_logical_ndim(v, f) for v, f in zip(values, flags))
    reduction = args[0]
    size = level.size
    # input and target batched alike (the loss kernels want equal shapes); weights aligned
    aligned = [_aligned(_expanded(v, f, size), rank) if isinstance(v, Tensor) and i < 2
               else (_aligned(v, rank) if f else v)
               for i, (v, f) in enumerate(zip(values, flags))]
    out = call(spec, aligned, (_NONE,) + tuple(args[1:]))
    return _reduced(out, reduction)


def _reduced(out, reduction):
    if reduction == _NONE:
        return out
    flat = out.reshape((out._data.shape[0], -1))
    return flat.mean(1) if reduction == _MEAN else flat.sum(1)


@_rule("nll_loss", "nll_loss2d")
def nll_loss(spec, values, flags, args, level):
    """Each example's nll_loss: the unreduced losses of every example's rows at once, then
    each example's sum (mean: over its weights)."""
    x, target, weight = values
    if flags[2]:
        return NOT_BATCHED
    reduction, ignore_index = args
    size = level.size
    x = _expanded(x, flags[0], size)
    target = _expanded(target, flags[1], size)
    n_classes = x._data.shape[1] if x._data.ndim == 2 else x._data.shape[2]
    if spec.name == "nll_loss2d" or x._data.ndim > 3:  # classes at logical dim 1
        x = movedim(x, 2, -1)
    rows = x.reshape((-1, n_classes))
    labels = target.reshape((-1,))
    losses, _ = call(table.NLL_LOSS, (rows, labels, weight), (_NONE, ignore_index))
    per_example = losses.reshape((size, -1))
    kept = (labels != ignore_index)
    weights = kept.to(rows.dtype) if weight is None else (
        weight.index_select(0, labels.clamp(0, n_classes - 1)) * kept.to(rows.dtype))
    total = weights.reshape((size, -1)).sum(1)
    if reduction == _NONE:
        return (losses.reshape(tuple(target._data.shape)), total)
    summed = per_example.sum(1)
    return (summed / total if reduction == _MEAN else summed, total)


@_rule("index")
def index(spec, values, flags, args, level):
    """x[indices] with a batched x and unbatched indices: the same indices after the batch
    dim (a leading full slice)."""
    (indices,) = args
    if not isinstance(indices, tuple):
        return NOT_BATCHED
    arrays = [i for i, item in enumerate(indices) if not isinstance(item, slice)]
    if arrays and arrays[-1] - arrays[0] + 1 != len(arrays):
        return NOT_BATCHED  # (separated index arrays go first: not after the batch dim)
    return call(spec, values, ((slice(None),) + indices,))


@_rule("normal_", "uniform_", "bernoulli")
def random_fill(spec, values, flags, args, level):
    """Draws for the whole batch: different per example (randomness='different'); 'same'
    draws one example's and expands it."""
    if level.randomness == "same":
        return NOT_BATCHED if any(flags[1:]) else _same_draw(spec, values, args, level)
    with _drawing(level):
        return call(spec, values, args)


def _same_draw(spec, values, args, level):
    x = values[0]
    one = call(spec, [x.select(0, 0)] + list(values[1:]), args)
    return one.unsqueeze(0).expand(tuple(x._data.shape))


# ---------------- methods that compute on values without an op ----------------
METHOD_RULES = {}


def _values_elementwise(method, self, args, kwargs):
    """Comparisons, logic, isnan, ...: the method on the aligned physical operands."""
    if kwargs or len(args) > 1:
        return NOT_BATCHED
    values = (self,) + args
    index = top_level(values)
    pairs = [physical(v, index) for v in values]
    rank = max(_logical_ndim(v, f) for v, f in pairs)
    aligned = [_aligned(v, rank) if f else v for v, f in pairs]
    if not isinstance(aligned[0], Tensor):
        return NOT_BATCHED
    return batched(method(*aligned), index)


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "eq", "ne", "lt",
              "le", "gt", "ge", "__and__", "__or__", "__xor__", "__invert__", "logical_not",
              "isnan", "isinf", "isfinite"):
    METHOD_RULES[_name] = _values_elementwise


def _values_reduction(method, self, args, kwargs):
    """argmax, argmin, any, all: over the shifted dim, or every logical dim of each example."""
    index = top_level((self,))
    x, _ = physical(self, index)
    dim = kwargs.pop("dim", args[0] if args else None)
    keepdim = kwargs.pop("keepdim", args[1] if len(args) > 1 else False)
    if kwargs:
        return NOT_BATCHED
    if dim is None:
        out = method(x.reshape((x._data.shape[0], -1)), 1)
        if keepdim:
            out = out.reshape((x._data.shape[0],) + (1,) * (x._data.ndim - 1))
        return batched(out, index)
    if isinstance(dim, (tuple, list)):
        return batched(method(x, tuple(_shift(d) for d in dim), keepdim), index)
    return batched(method(x, _shift(dim), keepdim), index)


for _name in ("argmax", "argmin", "any", "all"):
    METHOD_RULES[_name] = _values_reduction
del _name


@_rule("index_select")
def index_select(spec, values, flags, args, level):
    if flags[1]:
        return NOT_BATCHED
    return call(spec, values, (_shift(args[0]),))


@_rule("linalg_inv_ex", "linalg_det", "linalg_slogdet", "linalg_cholesky_ex", "linalg_qr",
       "linalg_eigh", "linalg_svd")
def linalg(spec, values, flags, args, level):
    """Functions of the last two dims, batched already: the examples are one more batch."""
    return call(spec, values, args)


def _random_method(method, self, args, kwargs):
    """bernoulli, bernoulli_, normal_, uniform_ on a batched tensor: one draw for the whole
    batch, different per example (randomness='different'); 'same' and 'error' run the method
    as is (one example's draw, broadcast; or torch's error)."""
    index = top_level((self,) + args + tuple(kwargs.values()))
    x, flag = physical(self, index)
    level = level_of(index)
    if not flag or level.randomness != "different" or index != top_level((self,)) or any(
            type(a) is BatchedTensor for a in args + tuple(kwargs.values())):
        return NOT_BATCHED
    with _drawing(level):
        out = method(x, *args, **kwargs)
    return self if out is x else batched(out, index)


for _name in ("bernoulli", "bernoulli_", "normal_", "uniform_"):
    METHOD_RULES[_name] = _random_method
del _name


def _transposed_in_place(method, self, args, kwargs):
    """transpose_ and t_ change the shape: the physical tensor is transposed in place and the
    BatchedTensor takes its new layout."""
    index = top_level((self,))
    x, _ = physical(self, index)
    ndim = self._data.ndim
    if method.__name__ == "t_":
        if ndim > 2:
            return NOT_BATCHED  # (t_'s own error)
        dims = (0, 1) if ndim == 2 else None
    else:
        dims = tuple(_dim(d, ndim) for d in (list(args) + [kwargs.get("dim0"),
                                                           kwargs.get("dim1")])[:2])
    if dims is not None:
        x.transpose_(dims[0] + 1, dims[1] + 1)
    self._data = LogicalArray(x._data)
    mirror_graph(self)
    return self


METHOD_RULES["transpose_"] = METHOD_RULES["t_"] = _transposed_in_place
