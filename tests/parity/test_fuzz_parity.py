"""Differential fuzzing against torch: seeded random programs of ops, views, indexing and
in-place ops run on gradtool and on torch side by side. After every step both agree on whether
it raised, on the value, requires_grad and node name of every tensor alive; at the end on the
gradients (first order with create_graph: values and whether they require grad; second order;
and a second backward without retain_graph, which must fail or not in both).

GRADTOOL_FUZZ_PROGRAMS sets how many programs (default 30, a few seconds) and
GRADTOOL_FUZZ_SEED the first seed; a failure prints the program, to replay it alone."""
import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402
from gradtool.engine.autograd.ops.derivatives import TABLE  # noqa: E402

pytestmark = pytest.mark.parity

PROGRAMS = int(os.environ.get("GRADTOOL_FUZZ_PROGRAMS", "30"))
FIRST_SEED = int(os.environ.get("GRADTOOL_FUZZ_SEED", "0"))
STEPS = 10
POOL = 6


class Diverged(AssertionError):
    pass


# ------------------------------ random pieces ------------------------------
def random_shape(rng, ndim=None):
    ndim = rng.integers(1, 4) if ndim is None else ndim
    return tuple(int(n) for n in rng.choice([1, 2, 3, 4], size=ndim, p=[.2, .35, .3, .15]))


def random_index(rng, shape):
    """A random index for `shape`, as items each backend turns into its own objects:
    ints, slices, None, Ellipsis, bools, lists, int tensors, bool masks."""
    items, dim, ellipsis = [], 0, False
    while dim < len(shape) and (not items or rng.random() < 0.7):
        size = shape[dim]
        kind = rng.choice(["int", "slice", "slice", "none", "ellipsis", "list", "tensor",
                           "mask", "bool", "tensor0"])
        if kind == "int" and size:
            items.append(("int", int(rng.integers(-size, size))))
        elif kind == "tensor0" and size:
            items.append(("tensor", np.array(rng.integers(0, size))))
        elif kind == "slice":
            bound = [None, 0, 1, -1, size, -size - 1, size + 2]
            step = [None, 1, 1, 2, 3][rng.integers(5)]
            items.append(("slice", slice(bound[rng.integers(len(bound))],
                                         bound[rng.integers(len(bound))], step)))
        elif kind == "none":
            items.append(("none", None))
            continue
        elif kind == "bool":
            items.append(("bool", bool(rng.random() < 0.8)))
            continue
        elif kind == "ellipsis" and not ellipsis:
            ellipsis = True
            items.append(("ellipsis", Ellipsis))
            dim = len(shape) - sum(1 for k, _ in items[:-1]  # (a crude count; errors are fine)
                                   if k not in ("none", "bool", "ellipsis"))
            continue
        elif kind in ("list", "tensor") and size:
            n = [(), (1,), (2,), (3,), (2, 1)][rng.integers(5)]
            values = rng.integers(-size, size, size=n)
            items.append(("list", values.tolist()) if kind == "list" and n
                         else ("tensor", values))
        elif kind == "mask":
            items.append(("mask", rng.random(size) < 0.5))
        else:
            continue
        dim += 1
    if not items:
        items = [("ellipsis", Ellipsis)]
    if len(items) == 1 and rng.random() < 0.5:
        return items[0]
    return tuple(items)


def make_index(lib, index):
    def one(item):
        kind, v = item
        if kind == "tensor":
            return lib.tensor(v)
        if kind == "mask":
            return lib.tensor(v)
        return v
    return one(index) if isinstance(index[0], str) else tuple(one(i) for i in index)


def show_index(index):
    def one(item):
        kind, v = item
        if kind == "slice":
            return ":".join("" if x is None else str(x) for x in (v.start, v.stop, v.step))
        if kind == "ellipsis":
            return "..."
        if kind in ("tensor", "mask"):
            return f"tensor({v.tolist()})"
        return repr(v)
    return one(index) if isinstance(index[0], str) else ", ".join(one(i) for i in index) + (
        "," if len(index) == 1 else "")


# ------------------------------ the ops ------------------------------
# Each maker gets (rng, shapes of the pool) and returns (text, pool positions, fn(lib, *ts))
# or None when it does not apply; fn returns a new tensor, or None for an in-place op.
# the table's one-input ops (and their in-place forms), with a few that have no row of their own
ONE_INPUT = [s.method_names[0] for s in TABLE.values() if s.method_names]
UNARY = ONE_INPUT + ["clone", "contiguous"]
INPLACE_UNARY = [f"{name}_" for name in ONE_INPUT] + ["zero_", "t_"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]


def nothing(_):
    """An in-place op's step: its result is the tensor written, not a new one."""
    return None


def pick(rng, shapes, want=None):
    choices = [i for i, s in enumerate(shapes) if want is None or want(s)]
    return int(rng.choice(choices)) if choices else None


def broadcast_partner(rng, shapes, a):
    """A pool tensor whose shape broadcasts with shapes[a], or None."""
    def fits(s):
        try:
            np.broadcast_shapes(s, shapes[a])
            return True
        except ValueError:
            return False
    return pick(rng, shapes, fits)


def op_unary(rng, shapes):
    a, name = pick(rng, shapes), str(rng.choice(UNARY))
    return f"{name}(t{a})", (a,), lambda lib, x: getattr(x, name)()


def op_binary(rng, shapes):
    a, name = pick(rng, shapes), str(rng.choice(BINARY))
    fn = (lambda lib, x, y: getattr(lib, name)(x, y)) if name in ("maximum", "minimum") else (
        lambda lib, x, y: getattr(x, name)(y))
    if rng.random() < 0.3 and name not in ("maximum", "minimum"):
        c = float(rng.choice([2.0, -0.5, 3.0]))
        return f"t{a}.{name}({c})", (a,), lambda lib, x: getattr(x, name)(c)
    b = broadcast_partner(rng, shapes, a)
    return f"{name}(t{a}, t{b})", (a, b), fn


def op_reduce(rng, shapes):
    a = pick(rng, shapes)
    nd = len(shapes[a])
    if nd == 0:
        return f"t{a}.sum()", (a,), lambda lib, x: x.sum()
    d, keep = int(rng.integers(-nd, nd)), bool(rng.random() < 0.5)
    name = str(rng.choice(["sum", "mean", "softmax", "log_softmax", "logsumexp", "amax", "max",
                           "prod", "var", "sum_all"]))
    if name in ("softmax", "log_softmax"):
        return f"t{a}.{name}({d})", (a,), lambda lib, x: getattr(x, name)(d)
    if name == "max":
        return f"t{a}.max({d}, {keep}).values", (a,), lambda lib, x: x.max(d, keep).values
    if name == "sum_all":
        return f"t{a}.sum()", (a,), lambda lib, x: x.sum()
    return f"t{a}.{name}({d}, keepdim={keep})", (a,), \
        lambda lib, x: getattr(x, name)(d, keepdim=keep)


def op_view(rng, shapes):
    a = pick(rng, shapes)
    s = shapes[a]
    nd = len(s)
    name = str(rng.choice(["permute", "transpose", "t", "view", "reshape", "unsqueeze",
                           "squeeze", "expand", "flatten", "unbind", "split", "narrow", "T"]))
    if name == "permute" and nd:
        p = [int(i) for i in rng.permutation(nd)]
        return f"t{a}.permute({p})", (a,), lambda lib, x: x.permute(*p)
    if name == "transpose" and nd:
        d0, d1 = (int(i) for i in rng.integers(-nd, nd, 2))
        return f"t{a}.transpose({d0}, {d1})", (a,), lambda lib, x: x.transpose(d0, d1)
    if name == "t" and nd <= 2:
        return f"t{a}.t()", (a,), lambda lib, x: x.t()
    if name == "T" and nd == 2:
        return f"t{a}.T", (a,), lambda lib, x: x.T
    if name in ("view", "reshape"):
        n = int(np.prod(s))
        shape = [d for d in (1, 2, 3, 4, 6, 8, 12) if n % d == 0]
        first = int(rng.choice(shape)) if shape else 1
        new = [first, -1] if rng.random() < 0.6 else [-1]
        return f"t{a}.{name}({new})", (a,), lambda lib, x: getattr(x, name)(*new)
    if name == "unsqueeze":
        d = int(rng.integers(-nd - 1, nd + 1))
        return f"t{a}.unsqueeze({d})", (a,), lambda lib, x: x.unsqueeze(d)
    if name == "squeeze" and nd:
        d = int(rng.integers(-nd, nd))
        return f"t{a}.squeeze({d})", (a,), lambda lib, x: x.squeeze(d)
    if name == "expand":
        new = [int(rng.integers(2, 4)) if n == 1 else n for n in s]
        if rng.random() < 0.4 or not new:
            new = [2] + new
        return f"t{a}.expand({new})", (a,), lambda lib, x: x.expand(*new)
    if name == "flatten":
        return f"t{a}.flatten()", (a,), lambda lib, x: x.flatten()
    if name in ("unbind", "split") and nd and s[0]:
        k = int(rng.integers(0, s[0]))
        if name == "unbind":
            return f"t{a}.unbind(0)[{k}]", (a,), lambda lib, x: x.unbind(0)[k]
        return f"t{a}.split(2)[{k // 2}]", (a,), lambda lib, x: x.split(2)[k // 2]
    if name == "narrow" and nd and s[-1]:
        start = int(rng.integers(0, s[-1]))
        return f"t{a}.narrow(-1, {start}, 1)", (a,), lambda lib, x: x.narrow(-1, start, 1)
    return None


def op_getitem(rng, shapes):
    a = pick(rng, shapes)
    index = random_index(rng, shapes[a])
    return f"t{a}[{show_index(index)}]", (a,), lambda lib, x: x[make_index(lib, index)]


def op_matmul(rng, shapes):
    a = pick(rng, shapes, lambda s: len(s) >= 1)
    if a is None:
        return None

    def fits(s):  # contracts with t_a, and any batch dims broadcast
        if not s or s[-2 if len(s) > 1 else 0] != shapes[a][-1]:
            return False
        try:
            np.broadcast_shapes(shapes[a][:-2], s[:-2])
            return True
        except ValueError:
            return False
    b = pick(rng, shapes, fits)
    if b is None:
        return None
    return f"t{a} @ t{b}", (a, b), lambda lib, x, y: x @ y


def op_inplace(rng, shapes):
    a = pick(rng, shapes)
    kind = rng.choice(["unary", "binary", "setitem", "setitem", "clamp_", "masked_fill_",
                       "copy_", "fill_", "transpose_", "index_add_"])
    nd = len(shapes[a])
    if kind == "transpose_" and nd:
        d0, d1 = (int(i) for i in rng.integers(-nd, nd, 2))
        return f"t{a}.transpose_({d0}, {d1})", (a,), lambda lib, x: nothing(x.transpose_(d0, d1))
    if kind == "index_add_" and nd and shapes[a][0]:
        index = rng.integers(0, shapes[a][0], int(rng.integers(1, 3)))
        b = pick(rng, shapes, lambda t: t == (len(index),) + shapes[a][1:])
        if b is not None:
            return f"t{a}.index_add_(0, {index.tolist()}, t{b})", (a, b), \
                lambda lib, x, y: nothing(x.index_add_(0, lib.tensor(index), y))
    if kind == "unary":
        name = str(rng.choice(INPLACE_UNARY))
        return f"t{a}.{name}()", (a,), lambda lib, x: nothing(getattr(x, name)())
    if kind == "binary":
        name = str(rng.choice(["add_", "sub_", "mul_", "div_"]))
        b = broadcast_partner(rng, shapes, a)
        if rng.random() < 0.3:
            return f"t{a}.{name}(2.0)", (a,), lambda lib, x: nothing(getattr(x, name)(2.0))
        return f"t{a}.{name}(t{b})", (a, b), lambda lib, x, y: nothing(getattr(x, name)(y))
    if kind == "clamp_":
        return f"t{a}.clamp_(-0.5, 0.8)", (a,), lambda lib, x: nothing(x.clamp_(-0.5, 0.8))
    if kind == "fill_":
        return f"t{a}.fill_(1.5)", (a,), lambda lib, x: nothing(x.fill_(1.5))
    if kind == "masked_fill_":
        mask = rng.random(shapes[a]) < 0.5
        return f"t{a}.masked_fill_(mask, 0.)", (a,), \
            lambda lib, x: nothing(x.masked_fill_(lib.tensor(mask), 0.0))
    if kind == "copy_":
        b = broadcast_partner(rng, shapes, a)
        return f"t{a}.copy_(t{b})", (a, b), lambda lib, x, y: nothing(x.copy_(y))
    index = random_index(rng, shapes[a])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target = tuple(torch.empty(shapes[a])[make_index(torch, index)].shape)
    except Exception:
        target = ()
    b = pick(rng, shapes, lambda s: s == target or s == target[1:] or s == ())
    if b is None or rng.random() < 0.3:
        return f"t{a}[{show_index(index)}] = 0.25", (a,), \
            lambda lib, x: x.__setitem__(make_index(lib, index), 0.25)
    return f"t{a}[{show_index(index)}] = t{b}", (a, b), \
        lambda lib, x, y: x.__setitem__(make_index(lib, index), y)


def op_misc(rng, shapes):
    a = pick(rng, shapes)
    s, nd = shapes[a], len(shapes[a])
    kind = str(rng.choice(["cat", "stack", "pow", "clamp", "where", "masked_fill", "gather",
                           "std", "norm", "mean", "to32"]))
    if kind in ("cat", "stack"):
        b = pick(rng, shapes, lambda t: t == s)
        d = int(rng.integers(0, nd + (kind == "stack"))) if nd or kind == "stack" else None
        if d is None:
            return None
        return f"{kind}([t{a}, t{b}], {d})", (a, b),             lambda lib, x, y: getattr(lib, kind)([x, y], d)
    if kind == "pow":
        e = float(rng.choice([2.0, 3.0, 0.5, -1.0]))
        return f"t{a} ** {e}", (a,), lambda lib, x: x ** e
    if kind == "clamp":
        return f"t{a}.clamp(-0.5, 0.5)", (a,), lambda lib, x: x.clamp(-0.5, 0.5)
    if kind == "where":
        b = broadcast_partner(rng, shapes, a)
        return f"where(t{a} > 0, t{a}, t{b})", (a, b), lambda lib, x, y: lib.where(x > 0, x, y)
    if kind == "masked_fill":
        return f"t{a}.masked_fill(t{a} > 0, 0.)", (a,), lambda lib, x: x.masked_fill(x > 0, 0.0)
    if kind == "gather" and nd and all(s):
        index = rng.integers(0, s[-1], size=s)
        return f"t{a}.gather(-1, {index.tolist()})", (a,),             lambda lib, x: x.gather(-1, lib.tensor(index))
    if kind in ("std", "norm") and nd:
        d = int(rng.integers(-nd, nd))
        return f"t{a}.{kind}(dim={d})", (a,), lambda lib, x: getattr(x, kind)(dim=d)
    if kind == "mean":
        return f"t{a}.mean()", (a,), lambda lib, x: x.mean()
    if kind == "to32":
        return f"t{a}.to(float32).to(float64)", (a,),             lambda lib, x: x.to(lib.float32).to(lib.float64)
    return None


def _distinct(lib, x):
    """x with ties broken (a tiny distinct offset per element): which of tied elements
    sort/topk pick is not specified (torch's topk may pick other indices than gradtool's)."""
    offsets = np.arange(int(np.prod(x.shape)), dtype=np.float64).reshape(tuple(x.shape))
    return x + lib.tensor(offsets * 1e-3)


def op_table(rng, shapes):
    """The ops added after the first makers: scans, reorderings, selections, norms,
    diagonals, einsum, activations."""
    a = pick(rng, shapes)
    s, nd = shapes[a], len(shapes[a])
    d = int(rng.integers(-nd, nd)) if nd else 0
    kind = str(rng.choice(["sort", "topk", "cumsum", "cumprod", "flip", "roll", "repeat", "tile",
                           "triu", "tril", "erf", "outer", "index_select", "index_add",
                           "var_mean", "std_mean", "norm_p", "diagonal", "einsum", "activation",
                           "normalize"]))
    if kind == "sort" and nd:
        desc = bool(rng.random() < 0.5)
        return f"sort(distinct(t{a}), {d}, descending={desc}).values", (a,), \
            lambda lib, x: _distinct(lib, x).sort(d, descending=desc).values
    if kind == "topk" and nd and s[d]:
        k, largest = int(rng.integers(1, s[d] + 1)), bool(rng.random() < 0.5)
        return f"topk(distinct(t{a}), {k}, {d}, largest={largest}).values", (a,), \
            lambda lib, x: _distinct(lib, x).topk(k, d, largest).values
    if kind in ("cumsum", "cumprod") and nd:
        return f"t{a}.{kind}({d})", (a,), lambda lib, x: getattr(x, kind)(d)
    if kind == "flip" and nd:
        dims = sorted({int(i) for i in rng.integers(0, nd, 2)})
        return f"t{a}.flip({dims})", (a,), lambda lib, x: x.flip(dims)
    if kind == "roll":
        shift = int(rng.integers(-3, 4))
        if nd and rng.random() < 0.7:
            return f"t{a}.roll({shift}, {d})", (a,), lambda lib, x: x.roll(shift, d)
        return f"t{a}.roll({shift})", (a,), lambda lib, x: x.roll(shift)
    if kind in ("repeat", "tile"):
        reps = [int(r) for r in rng.integers(1, 3, max(nd, 1) + int(rng.integers(0, 2)))]
        if kind == "tile" and rng.random() < 0.5:
            reps = reps[1:] or [2]
        return f"t{a}.{kind}({reps})", (a,), lambda lib, x: getattr(x, kind)(*reps)
    if kind in ("triu", "tril") and nd >= 2:
        diag = int(rng.integers(-2, 3))
        return f"t{a}.{kind}({diag})", (a,), lambda lib, x: getattr(x, kind)(diag)
    if kind == "erf":
        return f"t{a}.erf()", (a,), lambda lib, x: x.erf()
    if kind == "outer" and nd == 1:
        b = pick(rng, shapes, lambda t: len(t) == 1)
        return f"outer(t{a}, t{b})", (a, b), lambda lib, x, y: lib.outer(x, y)
    if kind in ("index_select", "index_add") and nd and s[d]:
        index = rng.integers(0, s[d], int(rng.integers(1, 4)))
        if kind == "index_select":
            return f"t{a}.index_select({d}, {index.tolist()})", (a,), \
                lambda lib, x: x.index_select(d, lib.tensor(index))
        source = list(s)
        source[d] = len(index)
        b = pick(rng, shapes, lambda t: list(t) == source)
        if b is None:
            return None
        return f"t{a}.index_add({d}, {index.tolist()}, t{b}, alpha=2)", (a, b), \
            lambda lib, x, y: x.index_add(d, lib.tensor(index), y, alpha=2)
    if kind in ("var_mean", "std_mean") and nd:
        which = int(rng.integers(0, 2))
        return f"{kind}(t{a}, {d})[{which}]", (a,), lambda lib, x: getattr(lib, kind)(x, d)[which]
    if kind == "norm_p":
        p = [1, 3, 0.5, float("inf"), -float("inf"), "fro"][rng.integers(6)]
        if nd and rng.random() < 0.6:
            keep = bool(rng.random() < 0.5)
            return f"t{a}.norm({p!r}, {d}, keepdim={keep})", (a,), \
                lambda lib, x: x.norm(p, d, keep)
        return f"t{a}.norm({p!r})", (a,), lambda lib, x: x.norm(p)
    if kind == "diagonal" and nd >= 2:
        offset = int(rng.integers(-1, 2))
        return f"t{a}.diagonal({offset}, 0, -1)", (a,), lambda lib, x: x.diagonal(offset, 0, -1)
    if kind == "einsum" and nd:
        letters = "ijkl"[:nd]
        if nd >= 2 and s[0] == s[1] and rng.random() < 0.5:  # a diagonal
            eq = "ii" + letters[2:] + "->i" + letters[2:]
            return f"einsum({eq!r}, t{a})", (a,), lambda lib, x: lib.einsum(eq, x)
        b = pick(rng, shapes, lambda t: len(t) >= 1 and t[-1] == s[-1])
        other = "mn"[:len(shapes[b]) - 1] + letters[-1]
        eq = f"{letters},{other}->{letters[:-1]}{other[:-1]}"
        return f"einsum({eq!r}, t{a}, t{b})", (a, b), lambda lib, x, y: lib.einsum(eq, x, y)
    if kind == "activation":
        name = str(rng.choice(["gelu", "silu", "softplus", "leaky_relu", "elu"]))
        return f"F.{name}(t{a})", (a,), lambda lib, x: getattr(lib.nn.functional, name)(x)
    if kind == "normalize" and nd:
        p = [1, 2, 3, float("inf")][rng.integers(4)]
        return f"F.normalize(t{a}, p={p}, dim={d})", (a,), \
            lambda lib, x: lib.nn.functional.normalize(x, p=p, dim=d)
    return None


def op_loss(rng, shapes):
    """The functional losses (one node each, as torch's), reduced or not."""
    a = pick(rng, shapes)
    b = pick(rng, shapes, lambda t: t == shapes[a])
    reduction = str(rng.choice(["mean", "sum", "none"]))
    name = str(rng.choice(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                           "binary_cross_entropy_with_logits", "binary_cross_entropy",
                           "cross_entropy", "nll_loss"]))
    if name in ("cross_entropy", "nll_loss"):
        if len(shapes[a]) != 2 or not all(shapes[a]):
            return None
        target, log_probs = rng.integers(0, shapes[a][1], shapes[a][0]), name == "nll_loss"
        return f"F.{name}(t{a}{'.log_softmax(1)' if log_probs else ''}, " \
               f"{target.tolist()}, reduction={reduction!r})", (a,), \
            lambda lib, x: getattr(lib.nn.functional, name)(
                x.log_softmax(1) if log_probs else x, lib.tensor(target), reduction=reduction)
    if name == "binary_cross_entropy":  # probabilities in (0, 1), targets too
        return f"F.{name}(sigmoid(t{a}), sigmoid(t{b}), reduction={reduction!r})", (a, b), \
            lambda lib, x, y: lib.nn.functional.binary_cross_entropy(
                x.sigmoid(), y.sigmoid(), reduction=reduction)
    return f"F.{name}(t{a}, t{b}, reduction={reduction!r})", (a, b), \
        lambda lib, x, y: getattr(lib.nn.functional, name)(x, y, reduction=reduction)


def op_spatial(rng, shapes):
    """Convolutions, pooling, pads, resampling and normalisation on a 3-d pool tensor, read
    as one unbatched (C, H, W) image (or as (N, C, L)). A convolution's weight requires grad
    (as a layer's): with a constant weight, torch's gradient in the input requires grad and
    gradtool's does not (README, "Where gradtool differs")."""
    a = pick(rng, shapes, lambda t: len(t) == 3 and all(t))
    if a is None:
        return None
    c, h, w = shapes[a]
    kind = str(rng.choice(["conv2d", "conv_transpose2d", "conv1d", "max_pool2d", "avg_pool2d",
                           "adaptive", "pad", "interpolate", "batch_norm", "group_norm"]))
    kh, kw = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
    if kind in ("conv2d", "conv_transpose2d"):
        stride, dilation = int(rng.integers(1, 3)), 1 if kh * kw > 1 else int(rng.integers(1, 3))
        groups = int(rng.choice([g for g in (1, c) if c % g == 0]))
        weight = rng.standard_normal((c, 2, kh, kw) if kind == "conv_transpose2d" else
                                     (2 * groups, c // groups, kh, kw))
        padding = int(rng.integers(0, min(kh, kw) // 2 + 1))
        if kind == "conv2d":
            return f"F.conv2d(t{a}, w{weight.shape}, stride={stride}, padding={padding}, "                    f"dilation={dilation}, groups={groups})", (a,),                 lambda lib, x: lib.nn.functional.conv2d(
                    x, lib.tensor(weight, requires_grad=True), None, stride, padding, dilation,
                    groups)
        extra = int(rng.integers(0, stride)) if stride > 1 else 0
        return f"F.conv_transpose2d(t{a}, w{weight.shape}, stride={stride}, "                f"output_padding={extra})", (a,),             lambda lib, x: lib.nn.functional.conv_transpose2d(
                x, lib.tensor(weight, requires_grad=True), None, stride, 0, extra)
    if kind == "conv1d":
        weight, bias = rng.standard_normal((3, h, kw)), rng.standard_normal(3)
        return f"F.conv1d(t{a}, w{weight.shape}, b, padding='same')", (a,),             lambda lib, x: lib.nn.functional.conv1d(
                x, lib.tensor(weight, requires_grad=True), lib.tensor(bias), padding="same")
    if kind in ("max_pool2d", "avg_pool2d"):
        padding = (int(rng.integers(0, kh // 2 + 1)), int(rng.integers(0, kw // 2 + 1)))
        stride, ceil = int(rng.integers(1, 3)), bool(rng.random() < 0.5)
        return f"F.{kind}(t{a}, {(kh, kw)}, {stride}, {padding}, ceil_mode={ceil})", (a,),             lambda lib, x: getattr(lib.nn.functional, kind)(x, (kh, kw), stride, padding,
                                                            ceil_mode=ceil)
    if kind == "adaptive":
        size, which = (int(rng.integers(1, 5)), int(rng.integers(1, 5))), str(
            rng.choice(["adaptive_avg_pool2d", "adaptive_max_pool2d"]))
        return f"F.{which}(t{a}, {size})", (a,),             lambda lib, x: getattr(lib.nn.functional, which)(x, size)
    if kind == "pad":
        mode = str(rng.choice(["constant", "reflect", "replicate", "circular"]))
        top = (h - 1) if mode == "reflect" else h
        left = (w - 1) if mode == "reflect" else w
        pads = [int(rng.integers(0, left + 1)), int(rng.integers(0, left + 1)),
                int(rng.integers(0, top + 1)), int(rng.integers(0, top + 1))]
        return f"F.pad(t{a}, {pads}, mode={mode!r})", (a,),             lambda lib, x: lib.nn.functional.pad(x, pads, mode=mode)
    if kind == "interpolate":
        mode = str(rng.choice(["nearest", "bilinear", "nearest1d"]))
        scale = float(rng.choice([0.5, 1.5, 2.0, 3.0]))
        corners = None if mode != "bilinear" else bool(rng.random() < 0.5)
        if mode == "nearest1d":
            return f"F.interpolate(t{a}, scale_factor={scale})", (a,),                 lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=scale)
        return f"F.interpolate(t{a}[None], scale_factor={scale}, mode={mode!r}, "                f"align_corners={corners})[0]", (a,),             lambda lib, x: lib.nn.functional.interpolate(x[None], scale_factor=scale, mode=mode,
                                                         align_corners=corners)[0]
    if kind == "batch_norm" and c * w > 1:
        weight, bias = rng.standard_normal(h), rng.standard_normal(h)
        return f"F.batch_norm(t{a}, None, None, w, b, training=True)", (a,),             lambda lib, x: lib.nn.functional.batch_norm(x, None, None, lib.tensor(weight),
                                                        lib.tensor(bias), training=True)
    if kind == "group_norm":
        groups = int(rng.choice([g for g in (1, 2, h) if h % g == 0]))
        return f"F.group_norm(t{a}, {groups})", (a,),             lambda lib, x: lib.nn.functional.group_norm(x, groups)


def op_functions(rng, shapes):
    """The functions real model files use: inverse trigonometric, atan2, addcmul/addcdiv,
    round, diag, sum_to_size, meshgrid, unsafe_chunk, scatter of a value, linear algebra of
    square slices."""
    a = pick(rng, shapes)
    s, nd = shapes[a], len(shapes[a])
    kind = str(rng.choice(["arc", "atan2", "addcmul", "addcdiv", "round", "diag", "sum_to_size",
                           "meshgrid", "unsafe_chunk", "scatter", "linalg"]))
    if kind == "arc":  # outside the domain: nan on both
        name = str(rng.choice(["asin", "acos", "atan", "asinh", "atanh", "arcsin", "arctan"]))
        return f"t{a}.{name}()", (a,), lambda lib, x: getattr(x, name)()
    if kind in ("atan2", "addcmul", "addcdiv"):
        b = broadcast_partner(rng, shapes, a)
        if kind == "atan2":
            return f"atan2(t{a}, t{b})", (a, b), lambda lib, x, y: lib.atan2(x, y)
        return f"{kind}(t{a}, t{b}, t{a}, value=0.5)", (a, b), \
            lambda lib, x, y: getattr(lib, kind)(x, y, x, value=0.5)
    if kind == "round":
        return f"t{a}.round(decimals=1) * t{a}", (a,), lambda lib, x: x.round(decimals=1) * x
    if kind == "diag" and nd in (1, 2):
        k = int(rng.integers(-1, 2))
        return f"diag(t{a}, {k})", (a,), lambda lib, x: lib.diag(x, k)
    if kind == "sum_to_size" and nd:
        size = [1 if rng.random() < 0.5 else n for n in s][int(rng.integers(0, 2)):]
        return f"t{a}.sum_to_size({size})", (a,), lambda lib, x: x.sum_to_size(size)
    if kind == "meshgrid" and nd == 1:
        b = pick(rng, shapes, lambda t: len(t) == 1)
        k = int(rng.integers(0, 2))
        return f"meshgrid(t{a}, t{b}, indexing='xy')[{k}]", (a, b), \
            lambda lib, x, y: lib.meshgrid(x, y, indexing="xy")[k]
    if kind == "unsafe_chunk" and nd and s[-1]:
        k = int(rng.integers(0, (s[-1] + 1) // 2))
        return f"t{a}.unsafe_chunk(2, -1)[{k}]", (a,), lambda lib, x: x.unsafe_chunk(2, -1)[k]
    if kind == "scatter" and nd and all(s):
        index = rng.integers(0, s[-1], size=s[:-1] + (1,))
        return f"t{a}.scatter(-1, {index.tolist()}, 0.5)", (a,), \
            lambda lib, x: x.scatter(-1, lib.tensor(index), 0.5)
    if kind == "linalg" and nd >= 2 and s[-1] == s[-2] and s[-1] > 1:
        name = str(rng.choice(["det", "inv", "slogdet", "svdvals", "matrix_norm"]))
        fns = {"det": lambda lib, x: lib.linalg.det(x + 3 * x.new_tensor(np.eye(s[-1]))),
               "inv": lambda lib, x: lib.linalg.inv(x + 3 * x.new_tensor(np.eye(s[-1]))),
               "slogdet": lambda lib, x: lib.linalg.slogdet(x)[1],
               "svdvals": lambda lib, x: lib.linalg.svdvals(x),
               "matrix_norm": lambda lib, x: lib.linalg.matrix_norm(x, "nuc")}
        return f"linalg.{name}(t{a})", (a,), fns[name]
    return None


MAKERS = [(op_unary, 3), (op_binary, 3), (op_reduce, 2), (op_view, 4), (op_getitem, 3),
          (op_matmul, 1), (op_inplace, 4), (op_misc, 2), (op_table, 3), (op_loss, 1),
          (op_spatial, 2),
          (op_functions, 2)]


# ------------------------------ running a program on both ------------------------------
# torch refuses in-place writes to split/unbind outputs, gradtool allows them (README)
MULTI_VIEW = "This view is the output of a function that returns multiple views"


def reads_what_it_writes(text, operands):
    """An in-place op whose other operand overlaps the target's memory in part (a narrow of
    it): torch does not detect that overlap and reads values it has already written."""
    if "_(" not in text or len(operands) != 2 or operands[0] is operands[1]:
        return False
    a, b = operands[0]._data, operands[1]._data
    same = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.shape == b.shape and a.strides == b.strides)
    return np.shares_memory(a, b) and not same


def node_name(t):
    fn = t.grad_fn
    return None if fn is None else fn.name().removeprefix("torch::autograd::")


def as_array(t):
    # (torch may give an efficient zero tensor, which needs force)
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t.detach().numpy()


def agree(log, what, mine, theirs):
    if isinstance(theirs, np.ndarray) or isinstance(mine, np.ndarray):
        ok = np.shape(mine) == np.shape(theirs) and np.allclose(
            mine, theirs, rtol=1e-6, atol=1e-8, equal_nan=True)
    else:
        ok = mine == theirs
    if not ok:
        raise Diverged("\n".join(log) + f"\n  {what}: gradtool {mine!r} != torch {theirs!r}")


def outcome(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except Exception as e:  # noqa: BLE001 - any error is an outcome to compare
            return None, e


def compare_pool(log, mine, theirs):
    for k, (a, b) in enumerate(zip(mine, theirs)):
        agree(log, f"t{k} shape", tuple(a.shape), tuple(b.shape))
        agree(log, f"t{k} value", as_array(a), as_array(b))
        agree(log, f"t{k} requires_grad", a.requires_grad, b.requires_grad)
        agree(log, f"t{k} node", node_name(a), node_name(b))


def compare_outcomes(log, what, mine, theirs):
    """Both raised the same kind of error, or neither; True when neither did."""
    (_, e_mine), (_, e_theirs) = mine, theirs
    if type(e_mine) is not type(e_theirs) and not (
            isinstance(e_mine, Exception) and isinstance(e_theirs, type(e_mine))):
        raise Diverged("\n".join(log) + f"\n  {what}: gradtool raised {e_mine!r}, "
                       f"torch raised {e_theirs!r}")
    return e_mine is None


def run_program(seed):
    rng = np.random.default_rng(seed)
    log = [f"seed {seed}:"]
    mine, theirs, leaves = [], [], []
    for k in range(int(rng.integers(1, 3))):
        data = rng.standard_normal(random_shape(rng))
        log.append(f"  t{k} = leaf {list(data.shape)}")
        mine.append(gt.tensor(data, requires_grad=True))
        theirs.append(torch.tensor(data, requires_grad=True))
        leaves.append(k)
    data = rng.standard_normal(random_shape(rng))
    log.append(f"  t{len(mine)} = constant {list(data.shape)}")
    mine.append(gt.tensor(data))
    theirs.append(torch.tensor(data))
    makers, weights = zip(*MAKERS)
    p = np.array(weights, dtype=float) / sum(weights)
    for _ in range(STEPS):
        shapes = [tuple(t.shape) for t in theirs]
        maker = makers[rng.choice(len(makers), p=p)]
        made = maker(rng, shapes)
        if made is None:
            continue
        text, positions, fn = made
        new = f"t{len(mine)} = " if len(mine) < POOL else f"t{len(mine) - 1} = "
        log.append("  " + new + text)
        if reads_what_it_writes(text, [mine[i] for i in positions]):
            return  # torch's result depends on its write order (README: differences)
        got_mine = outcome(fn, gt, *(mine[i] for i in positions))
        got_theirs = outcome(fn, torch, *(theirs[i] for i in positions))
        if MULTI_VIEW in str(got_theirs[1]):
            return  # a documented difference: the programs part here
        if compare_outcomes(log, "step", got_mine, got_theirs) and got_mine[0] is not None:
            if len(mine) >= POOL:  # the pool is full: the newest replaces the last
                mine.pop(), theirs.pop()
            mine.append(got_mine[0])
            theirs.append(got_theirs[0])
        try:
            compare_pool(log, mine, theirs)
        except RuntimeError as e:  # torch's grad_fn of a split output written in place
            if MULTI_VIEW in str(e):
                return
            raise
    check_gradients(rng, log, mine, theirs, leaves)


def loss_of(lib, pool, weights):
    total = None
    for t, w in zip(pool, weights):
        if t.requires_grad and t.dtype == lib.float64:
            term = (t * lib.tensor(w)).sum()
            total = term if total is None else total + term
    return total


def check_gradients(rng, log, mine, theirs, leaves):
    weights = [rng.standard_normal(tuple(t.shape)) for t in theirs]
    log.append("  loss = sum((t * w).sum() for every t that requires grad)")
    loss_mine, loss_theirs = loss_of(gt, mine, weights), loss_of(torch, theirs, weights)
    agree(log, "loss exists", loss_mine is None, loss_theirs is None)
    if loss_mine is None:
        return
    xs_mine, xs_theirs = [mine[k] for k in leaves], [theirs[k] for k in leaves]

    def first(lib, loss, xs):
        return lib.autograd.grad(loss, xs, create_graph=True, allow_unused=True)
    log.append("  g = grad(loss, leaves, create_graph=True)")
    g_mine, g_theirs = outcome(first, gt, loss_mine, xs_mine), \
        outcome(first, torch, loss_theirs, xs_theirs)
    if not compare_outcomes(log, "first-order grad", g_mine, g_theirs):
        return
    for k, (a, b) in enumerate(zip(g_mine[0], g_theirs[0])):
        agree(log, f"grad {k} is None", a is None, b is None)
        if a is not None:
            agree(log, f"grad {k}", as_array(a), as_array(b))
            agree(log, f"grad {k} requires_grad", a.requires_grad, b.requires_grad)
    vs = [rng.standard_normal(tuple(x.shape)) for x in xs_theirs]

    def second(lib, gs, xs):
        terms = [(g * lib.tensor(v)).sum() for g, v in zip(gs, vs)
                 if g is not None and g.requires_grad]
        if not terms:
            return None
        return lib.autograd.grad(sum(terms[1:], terms[0]), xs, allow_unused=True)
    log.append("  grad(sum((g * v).sum()), leaves)")
    h_mine, h_theirs = outcome(second, gt, g_mine[0], xs_mine), \
        outcome(second, torch, g_theirs[0], xs_theirs)
    if compare_outcomes(log, "second-order grad", h_mine, h_theirs) and h_mine[0] is not None:
        for k, (a, b) in enumerate(zip(h_mine[0], h_theirs[0])):
            agree(log, f"second-order grad {k} is None", a is None, b is None)
            if a is not None:
                agree(log, f"second-order grad {k}", as_array(a), as_array(b))
    log.append("  loss.backward(); loss.backward()")
    twice_mine = outcome(lambda: (loss_mine.backward(), loss_mine.backward()))
    twice_theirs = outcome(lambda: (loss_theirs.backward(), loss_theirs.backward()))
    compare_outcomes(log, "backward twice", twice_mine, twice_theirs)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + PROGRAMS))
def test_random_program_agrees_with_torch(seed):
    run_program(seed)
