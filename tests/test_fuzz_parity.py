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
UNARY = ["exp", "sin", "tanh", "sigmoid", "relu", "abs", "neg", "cos", "clone", "contiguous"]
INPLACE_UNARY = ["exp_", "tanh_", "sigmoid_", "relu_", "abs_", "neg_", "zero_", "sqrt_"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]


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
    a = pick(rng, shapes, lambda s: 1 <= len(s) <= 3)
    if a is None:
        return None
    b = pick(rng, shapes, lambda s: 1 <= len(s) <= 3 and s[-2 if len(s) > 1 else 0]
             == shapes[a][-1])
    if b is None:
        return None
    return f"t{a} @ t{b}", (a, b), lambda lib, x, y: x @ y


def op_inplace(rng, shapes):
    a = pick(rng, shapes)
    kind = rng.choice(["unary", "binary", "setitem", "setitem", "clamp_", "masked_fill_",
                       "copy_", "fill_"])
    if kind == "unary":
        name = str(rng.choice(INPLACE_UNARY))
        return f"t{a}.{name}()", (a,), lambda lib, x: getattr(x, name)() and None
    if kind == "binary":
        name = str(rng.choice(["add_", "sub_", "mul_", "div_"]))
        b = broadcast_partner(rng, shapes, a)
        if rng.random() < 0.3:
            return f"t{a}.{name}(2.0)", (a,), lambda lib, x: getattr(x, name)(2.0) and None
        return f"t{a}.{name}(t{b})", (a, b), lambda lib, x, y: getattr(x, name)(y) and None
    if kind == "clamp_":
        return f"t{a}.clamp_(-0.5, 0.8)", (a,), lambda lib, x: x.clamp_(-0.5, 0.8) and None
    if kind == "fill_":
        return f"t{a}.fill_(1.5)", (a,), lambda lib, x: x.fill_(1.5) and None
    if kind == "masked_fill_":
        mask = rng.random(shapes[a]) < 0.5
        return f"t{a}.masked_fill_(mask, 0.)", (a,), \
            lambda lib, x: x.masked_fill_(lib.tensor(mask), 0.0) and None
    if kind == "copy_":
        b = broadcast_partner(rng, shapes, a)
        return f"t{a}.copy_(t{b})", (a, b), lambda lib, x, y: x.copy_(y) and None
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


MAKERS = [(op_unary, 3), (op_binary, 3), (op_reduce, 2), (op_view, 4), (op_getitem, 3),
          (op_matmul, 1), (op_inplace, 4), (op_misc, 2)]


# ------------------------------ running a program on both ------------------------------
# torch refuses in-place writes to split/unbind outputs, gradtool allows them (README)
MULTI_VIEW = "This view is the output of a function that returns multiple views"


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


def compare_pool(log, mine, theirs, unnamed):
    for k, (a, b) in enumerate(zip(mine, theirs)):
        agree(log, f"t{k} shape", tuple(a.shape), tuple(b.shape))
        agree(log, f"t{k} value", as_array(a), as_array(b))
        agree(log, f"t{k} requires_grad", a.requires_grad, b.requires_grad)
        if k not in unnamed:
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
    unnamed = set()  # results of matmul: one node in gradtool (README: differences)
    makers, weights = zip(*MAKERS)
    p = np.array(weights, dtype=float) / sum(weights)
    for _ in range(STEPS):
        shapes = [tuple(t.shape) for t in theirs]
        maker = makers[rng.choice(len(makers), p=p)]
        made = maker(rng, shapes)
        if made is None:
            continue
        text, positions, fn = made
        made = (maker,)
        new = f"t{len(mine)} = " if len(mine) < POOL else f"t{len(mine) - 1} = "
        log.append("  " + new + text)
        got_mine = outcome(fn, gt, *(mine[i] for i in positions))
        got_theirs = outcome(fn, torch, *(theirs[i] for i in positions))
        if MULTI_VIEW in str(got_theirs[1]):
            return  # a documented difference: the programs part here
        if compare_outcomes(log, "step", got_mine, got_theirs) and got_mine[0] is not None:
            if len(mine) >= POOL:  # the pool is full: the newest replaces the last
                mine.pop(), theirs.pop()
            mine.append(got_mine[0])
            theirs.append(got_theirs[0])
            unnamed.discard(len(mine) - 1)
            if made[0] is op_matmul:
                unnamed.add(len(mine) - 1)
        try:
            compare_pool(log, mine, theirs, unnamed)
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
    if "saved for backward by Matmul" in str(g_mine[1]):
        return  # torch's matmul saves other tensors than gradtool's one node (README)
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
