"""torch.func's autograd transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian.

Each differentiates on physical tensors (batched.py): inside vmaps, an input is first made
batched at every active level (an unbatched one expanded), so that the batch of outputs
depends on each example's own copy, and one backward pass gives every example's gradient.
The function sees differentiable copies (torch's grad works on inputs that do not require
grad); a result leaves with a graph only when an outer level differentiates: grad enabled
and an input requiring grad (regular autograd, or an enclosing transform's copy), a tangent
(an enclosing jvp) or an enclosing transform whose function closes over our inputs."""
import functools
import weakref

from ..autograd import engine as autograd_engine, forward_ad, forward_level, grad_mode
from ..autograd.creation import eye, ones_like, zeros_like
from ..autograd.node import AccumulateGrad
from ..autograd.tensor import Tensor
from . import function as custom_function, tree
from .batched import LEVELS, BatchedTensor, batched, movedim
from .vmap import vmap

_active = [0]  # transforms running their function: an inner one records for the outer


# ---------------- physical tensors ----------------
def to_physical(x, levels):
    """x as one plain tensor with a dim per level (outermost first) before its own dims;
    where x is not batched at a level it is expanded."""
    for level in reversed(levels):
        if type(x) is BatchedTensor and x._level == level.index:
            x = x._value
        else:
            x = x.unsqueeze(0).expand((level.size,) + tuple(x.shape))
    return x


def from_physical(p, levels):
    for level in levels:
        p = batched(p, level.index)
    return p


def _tangent(p):
    return forward_ad.tangent_of(p) if forward_level.active is not None else None


def _differentiable(p):
    """(the tensor to differentiate with respect to, the one the function sees)."""
    if p.requires_grad:  # an outer level differentiates through it: stay connected
        d = p.view_as(p)
        return d, d
    leaf = p.detach().requires_grad_()
    _made[id(leaf)] = leaf
    tangent = _tangent(p)
    return leaf, (leaf if tangent is None else forward_ad.make_dual(leaf, tangent))


def _records(physical):
    """Whether results keep their graph: an outer level differentiates."""
    return grad_mode.is_grad_enabled() and (
        _active[0] > 0 or any(p.requires_grad or _tangent(p) is not None for p in physical))


# the leaves transforms made (theirs, not an outer level's), by id: a WeakSet would compare
# tensors with ==, which is elementwise
_made = weakref.WeakValueDictionary()


def _made_here(t):
    return _made.get(id(t)) is t


def _reaches_others(outputs):
    """Whether the outputs' graph reaches a tensor that requires grad other than the leaves
    transforms made: the function used one an outer level differentiates (an argument not
    in argnums, a closed-over parameter), so results keep their graph, as torch's do."""
    stack = [o._grad_fn for o in outputs]
    for o in outputs:
        if o._grad_fn is None and o._requires_grad and not _made_here(o):
            return True
    seen = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if not _made_here(node.variable):
                return True
            continue
        stack.extend(fn for fn, _ in node.next_functions)
    return False


def _unwrapped(x, record):
    return x if record or not isinstance(x, Tensor) else x.detach()


# ---------------- argnums ----------------
def _check_argnums(argnums, n):
    def one(a):
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
        return a % n
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return one(argnums)
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        normalized = tuple(one(a) for a in argnums)
        if len(set(normalized)) != len(normalized):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return normalized
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _selected(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[a] for a in argnums)


def _replaced(args, argnums, values):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = values
    else:
        for a, v in zip(argnums, values):
            args[a] = v
    return tuple(args)


def _check_tensors(leaves):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")


class _Running:
    """The transform's function runs: inner transforms record, custom Functions are checked
    (and a reverse-mode one, grad or vjp, is a grad level above the vmaps active now)."""
    def __init__(self, reverse=False):
        self.reverse = reverse

    def __enter__(self):
        _active[0] += 1
        custom_function.active[0] += 1
        if self.reverse:
            custom_function.reverse_entries.append(LEVELS[-1].index if LEVELS else 0)
        custom_function.install()

    def __exit__(self, *exc):
        _active[0] -= 1
        custom_function.active[0] -= 1
        if self.reverse:
            custom_function.reverse_entries.pop()
        custom_function.install()


def _split_aux(output, has_aux, call):
    """(output, aux) of a function run with has_aux (aux None without), in torch's words."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{call}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return output


# ---------------- grad ----------------
def grad_and_value(func, argnums=0, has_aux=False):
    """(the gradient of func's scalar output with respect to args[argnums], the output)."""
    @functools.wraps(func)  # (its name and signature are func's, as torch's)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        levels = list(LEVELS)
        flat, spec = tree.flatten(_selected(args, nums))
        _check_tensors(flat)
        physical = [to_physical(x, levels) for x in flat]
        record = _records(physical)
        with grad_mode.enable_grad():
            pairs = [_differentiable(p) for p in physical]
            seen = tree.unflatten([from_physical(s, levels) for _, s in pairs], spec)
            with _Running(reverse=True):
                output = func(*_replaced(args, nums, seen), **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be "
                                       "a tuple: (output, aux) if has_aux is True")
                output, aux = output
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe you "
                                   f"wanted to use the vjp or jacrev APIs instead?")
            out = to_physical(output, levels)
            leaves = [leaf for leaf, _ in pairs]
            record = record or (grad_mode.is_grad_enabled() and _reaches_others([out]))
            grads = _grads([out], [ones_like(out)], leaves, record)
        grads = tree.unflatten([from_physical(g, levels) for g in grads], spec)
        value = _unwrapped(output, record)
        if has_aux:
            return grads, (value, tree.tree_map(lambda a: _unwrapped(a, record), aux))
        return grads, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of func's scalar output with respect to args[argnums]."""
    with_value = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)  # (its name and signature are func's, as torch's)
    def wrapper(*args, **kwargs):
        grads, value = with_value(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def _grads(outputs, cotangents, leaves, record, batched_grads=False):
    """autograd.grad on the physical tensors, zeros where an input is unused."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        found = [None] * len(leaves)
    else:
        found = autograd_engine.grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                                     retain_graph=True, create_graph=record, allow_unused=True,
                                     is_grads_batched=batched_grads)
    batch = (cotangents[0].shape[0],) if batched_grads else ()
    out = []
    for g, leaf in zip(found, leaves):
        if g is None:
            g = zeros_like(leaf).expand(batch + tuple(leaf.shape)) if batch else zeros_like(leaf)
        out.append(g if record else g.detach())
    return out


# ---------------- vjp ----------------
def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives the vector-Jacobian products."""
    levels = list(LEVELS)
    flat, spec = tree.flatten(primals)
    _check_tensors(flat)
    physical = [to_physical(x, levels) for x in flat]
    record = _records(physical)
    with grad_mode.enable_grad():
        pairs = [_differentiable(p) for p in physical]
        seen = tree.unflatten([from_physical(s, levels) for _, s in pairs], spec)
        with _Running(reverse=True):
            output = func(*seen)
        output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
        flat_out, out_spec = tree.flatten(output)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        outputs = [to_physical(o, levels) for o in flat_out]
    leaves = [leaf for leaf, _ in pairs]
    record = record or (grad_mode.is_grad_enabled() and _reaches_others(outputs))

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = tree.flatten(cotangents)
        if ct_spec != out_spec and not (out_spec is None and len(flat_ct) == 1):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{tree.pprint(ct_spec)}, primal output: "
                               f"{tree.pprint(out_spec)}")
        now = list(LEVELS)
        if now[:len(levels)] != levels:
            raise RuntimeError("vjp_fn: called outside the vmap its vjp was computed in")
        extra = now[len(levels):]  # vmaps over the cotangents (jacrev's basis)
        cts = [to_physical(c, now) for c in flat_ct]
        keep = record or create_graph or any(c.requires_grad for c in cts) or _active[0] > 0
        keep = keep and grad_mode.is_grad_enabled()
        with grad_mode.enable_grad():
            if not extra:
                grads = _grads(outputs, cts, leaves, keep)
            else:
                k, n = len(levels), len(extra)
                sizes = tuple(level.size for level in extra)
                cts = [_extra_first(c, k, n) for c in cts]
                grads = [_extra_back(g, k, sizes)
                         for g in _grads(outputs, cts, leaves, keep, batched_grads=True)]
        return tree.unflatten([from_physical(g, now) for g in grads], spec)

    value = tree.tree_map(lambda o: _unwrapped(o, record), output)
    if has_aux:
        return value, vjp_fn, tree.tree_map(lambda a: _unwrapped(a, record), aux)
    return value, vjp_fn


def _extra_first(c, k, n):
    """Physical dims (old levels k, extra levels n, rest) -> (extra flattened, old, rest)."""
    dims = list(range(k, k + n)) + list(range(k)) + list(range(k + n, c.dim()))
    c = c.permute(tuple(dims))
    return c.reshape((-1,) + tuple(c.shape[n:]))


def _extra_back(g, k, sizes):
    g = g.reshape(sizes + tuple(g.shape[1:]))
    n = len(sizes)
    dims = list(range(n, n + k)) + list(range(n)) + list(range(n + k, g.dim()))
    return g.permute(tuple(dims))


# ---------------- jvp ----------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with tangents[, aux]): forward mode."""
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected {name} to be a tuple. E.g. "
                               f"it should be valid to call f(*primals).")
    flat_p, p_spec = tree.flatten(primals)
    flat_t, t_spec = tree.flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the "
                           f"same python structure. For example, if primals is a tuple of 3 "
                           f"tensors, tangents also must be. Got primals with structure "
                           f"{tree.describe(p_spec)} and tangents with structure "
                           f"{tree.describe(t_spec)}")
    _check_tensors(flat_p + flat_t)
    levels = list(LEVELS)
    if forward_level.active is not None:  # inside another jvp: its tangents ride along
        return _jvp_by_reverse(func, flat_p, p_spec, flat_t, levels, has_aux)
    physical = [to_physical(p, levels) for p in flat_p]
    record = _records(physical)
    with forward_ad.dual_level():
        duals = []
        for p, t in zip(physical, flat_t):
            t = to_physical(t, levels)
            if t.shape != p.shape:
                raise RuntimeError(
                    f"Trying to set a forward gradient that has a different size than that of "
                    f"the original Tensor, this is not supported. Tensor is of size "
                    f"{list(p.shape[len(levels):])} while the given forward gradient is of size "
                    f"{list(t.shape[len(levels):])}.")
            duals.append(forward_ad.make_dual(p, t.to(p.dtype)))
        seen = tree.unflatten([from_physical(d, levels) for d in duals], p_spec)
        with _Running():
            output = func(*seen)
        output, aux = _split_aux(output, has_aux, "jvp(f, primals, tangents)")
        flat_out, out_spec = tree.flatten(output)
        values, out_tangents = [], []
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): expected f(*args) to return "
                                   f"only tensors, got unsupported type {type(o)}")
            primal, tangent = forward_ad.unpack_dual(to_physical(o, levels))
            tangent = zeros_like(primal) if tangent is None else tangent
            keep = record or (grad_mode.is_grad_enabled() and _reaches_others([primal, tangent]))
            values.append(from_physical(_unwrapped(primal, keep), levels))
            out_tangents.append(from_physical(_unwrapped(tangent, keep), levels))
    result = (tree.unflatten(values, out_spec), tree.unflatten(out_tangents, out_spec))
    if has_aux:
        return result + (tree.tree_map(lambda a: _unwrapped(a, record), aux),)
    return result


def _jvp_by_reverse(func, flat_p, p_spec, flat_t, levels, has_aux):
    """jvp inside a jvp (torch's levels of forward mode; the engine has one): J v computed
    in reverse mode as d/du <J^T u, v> (u a cotangent; J^T u is linear in it), every step an
    op recorded with the outer level active, so that the outer tangents flow through the
    result (forward over reverse over reverse). Takes the ops' double backward."""
    physical = [to_physical(p, levels) for p in flat_p]
    tangents = []
    for p, t in zip(physical, flat_t):
        t = to_physical(t, levels)
        if t.shape != p.shape:
            raise RuntimeError(
                f"Trying to set a forward gradient that has a different size than that of "
                f"the original Tensor, this is not supported. Tensor is of size "
                f"{list(p.shape[len(levels):])} while the given forward gradient is of size "
                f"{list(t.shape[len(levels):])}.")
        tangents.append(t.to(p.dtype))
    with grad_mode.enable_grad():
        pairs = [_differentiable(p) for p in physical]
        seen = tree.unflatten([from_physical(s, levels) for _, s in pairs], p_spec)
        with _Running():
            output = func(*seen)
        output, aux = _split_aux(output, has_aux, "jvp(f, primals, tangents)")
        flat_out, out_spec = tree.flatten(output)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): expected f(*args) to return "
                                   f"only tensors, got unsupported type {type(o)}")
        outputs = [to_physical(o, levels) for o in flat_out]
        leaves = [leaf for leaf, _ in pairs]
        cotangents = [zeros_like(o).requires_grad_() for o in outputs]
        pulled = _grads(outputs, cotangents, leaves, record=True)
        used = [(g, t) for g, t in zip(pulled, tangents) if g.requires_grad]
        if used:
            found = autograd_engine.grad([g for g, _ in used], cotangents,
                                         [t for _, t in used], retain_graph=True,
                                         create_graph=True, allow_unused=True)
        else:
            found = [None] * len(cotangents)
        out_tangents = [zeros_like(o) if g is None else g for g, o in zip(found, outputs)]
    values = tree.unflatten([from_physical(o, levels) for o in outputs], out_spec)
    result = (values, tree.unflatten([from_physical(t, levels) for t in out_tangents],
                                     out_spec))
    return result + (aux,) if has_aux else result


# ---------------- Jacobians ----------------
def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func's outputs with respect to args[argnums], by reverse mode: one
    backward pass for every output element at once (vmap over the vjp)."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)  # (its name and signature are func's, as torch's)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        selected = _selected(args, nums)
        primals = selected if isinstance(nums, tuple) else (selected,)

        def partial(*diff):
            return func(*_replaced(args, nums, diff if isinstance(nums, tuple) else diff[0]),
                        **kwargs)
        result = vjp(partial, *primals, has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        flat_out, out_spec = tree.flatten(output)
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jacrev(f, ...)(*args): expected f(*args) to return only "
                                   f"tensors, got unsupported type {type(o)}")
        jacobians = []
        for i, o in enumerate(flat_out):
            n = o.numel()
            basis = eye(n, dtype=o.dtype).reshape((n,) + tuple(o.shape))
            cts = [basis if j == i else zeros_like(other) for j, other in enumerate(flat_out)]
            in_dims = tuple(0 if j == i else None for j in range(len(flat_out)))

            def pull(*c):
                return vjp_fn(tree.unflatten(list(c), out_spec))
            rows = vmap(pull, in_dims=in_dims, chunk_size=chunk_size)(*cts)
            shape = tuple(o.shape)
            per_primal = tree.tree_map(
                lambda r: r.reshape(shape + tuple(r.shape[1:])), rows)
            jacobians.append(per_primal if isinstance(nums, tuple) else per_primal[0])
        jac = tree.unflatten(jacobians, out_spec)
        if has_aux:
            return jac, result[2]
        return jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func's outputs with respect to args[argnums], by forward mode: one
    forward pass for every input element at once (vmap over jvp)."""
    @functools.wraps(func)  # (its name and signature are func's, as torch's)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        selected = _selected(args, nums)
        primals = selected if isinstance(nums, tuple) else (selected,)
        flat_p, p_spec = tree.flatten(primals)
        _check_tensors(flat_p)

        def partial(*diff):
            return func(*_replaced(args, nums, diff if isinstance(nums, tuple) else diff[0]),
                        **kwargs)
        columns = []  # per flat primal: the output tree of (N_j, *out) tangents
        aux = None
        out_spec = None
        for j, p in enumerate(flat_p):
            n = p.numel()
            basis = eye(n, dtype=p.dtype).reshape((n,) + tuple(p.shape))

            def push(t, j=j):
                tangents = [t if k == j else zeros_like(q) for k, q in enumerate(flat_p)]
                result = jvp(partial, primals, tree.unflatten(tangents, p_spec),
                             has_aux=has_aux)
                return (result[1], result[2]) if has_aux else result[1]
            out = vmap(push, randomness=randomness)(basis)
            if has_aux:
                out, batch_aux = out
                aux = tree.tree_map(lambda a: a[0] if isinstance(a, Tensor) else a, batch_aux)
            flat_out, out_spec = tree.flatten(out)
            columns.append([movedim(c, 0, -1).reshape(
                tuple(c.shape[1:]) + tuple(p.shape)) for c in flat_out])
        jacobians = []
        for i in range(len(columns[0])):
            per_primal = tree.unflatten([columns[j][i] for j in range(len(flat_p))], p_spec)
            jacobians.append(per_primal if isinstance(nums, tuple) else per_primal[0])
        jac = tree.unflatten(jacobians, out_spec)
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """jacfwd(jacrev(func)): the Hessian, forward over reverse."""
    return jacfwd(jacrev(func, argnums), argnums)

