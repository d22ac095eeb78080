"""The nested Python structures torch.func's arguments and results may be (torch's pytrees):
tuples, lists, dicts and namedtuples of leaves."""


def is_node(x):
    return isinstance(x, (tuple, list, dict))


def flatten(tree, is_leaf=None):
    """(the leaves in order, a spec for unflatten); `is_leaf(subtree)` stops the descent where
    it says so (torch's is_leaf)."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return None
    if isinstance(tree, dict):
        keys = list(tree)
        return ("dict", keys, [_flatten(tree[k], leaves, is_leaf) for k in keys])
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return ("namedtuple", type(tree), [_flatten(v, leaves, is_leaf) for v in tree])
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, None, [_flatten(v, leaves, is_leaf) for v in tree])
    leaves.append(tree)
    return None


def unflatten(leaves, spec):
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec is None:
        return next(it)
    kind, extra, children = spec
    values = [_unflatten(it, c) for c in children]
    if kind == "dict":
        return dict(zip(extra, values))
    if kind == "namedtuple":
        return extra(*values)
    return tuple(values) if kind == "tuple" else values


def tree_map(fn, tree):
    leaves, spec = flatten(tree)
    return unflatten([fn(x) for x in leaves], spec)


def describe(spec, indent=0):
    """A spec as torch prints a TreeSpec (for error messages), nested ones indented."""
    if spec is None:
        return "*"
    kind, extra, children = spec
    name = {"namedtuple": getattr(extra, "__name__", "namedtuple")}.get(kind, kind)
    indent += 2
    inner = ",".join((f"\n{' ' * indent}" if i else "") + describe(c, indent)
                     for i, c in enumerate(children))
    return f"TreeSpec({name}, {extra if kind == 'dict' else None}, [{inner}])"


def broadcast_prefix(prefix, tree, error):
    """The leaves of `prefix` (in_dims) repeated over the subtrees of `tree` they stand for;
    `error()` is raised where the structures differ."""
    out = []
    _broadcast(prefix, tree, out, error)
    return out


def _broadcast(prefix, tree, out, error):
    if not is_node(prefix):
        out.extend([prefix] * len(flatten(tree)[0]))
        return
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise error()
        for k in tree:
            _broadcast(prefix[k], tree[k], out, error)
        return
    if not isinstance(tree, (tuple, list)) or isinstance(tree, dict) or len(prefix) != len(tree):
        raise error()
    for p, t in zip(prefix, tree):
        _broadcast(p, t, out, error)


def pprint(spec):
    """A spec as torch's treespec_pprint writes it: (*, *), [*], {'a': *}, *."""
    if spec is None:
        return "*"
    kind, extra, children = spec
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {pprint(c)}" for k, c in zip(extra, children)) + "}"
    inner = ", ".join(pprint(c) for c in children)
    if kind == "list":
        return f"[{inner}]"
    if kind == "namedtuple":
        return f"{extra.__name__}({inner})"
    return f"({inner},)" if len(children) == 1 else f"({inner})"
