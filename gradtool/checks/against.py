"""`--against torch`: each target run on gradtool's engine and on PyTorch with the same
inputs, and compared: outputs, the gradients of every input and module parameter (and the
second-order ones with order 2), backward node names and `_saved_*` names.

The file is imported once per engine (its `import torch` gives gradtool, then torch), so the
modules it defines exist twice; the parameters and buffers of its global nn.Modules, and the
tensors it holds in global variables or gives in @gradtool.example(...), are copied from
torch's to gradtool's (by name, by argument) before the targets run, so both start from the
same weights and data. Values are compared with torch.testing.assert_close's tolerances for their dtype."""
import collections
import dataclasses
import os
import sys

import numpy as np

import gradtool.adapters as engines

from ..engine import frames
from ..engine.testing import _DEFAULT_TOLERANCES as TOLERANCES  # assert_close's, per dtype
from ..capture import loader

_SECOND_ORDER_SEED = 20250


@dataclasses.dataclass
class Difference:
    kind: str          # output | gradient | second_order | node | saved
    name: str          # "output 0", "x", "model.0.weight", "n4 AddmmBackward0", ...
    gradtool: object   # gradtool's value there (a number, a shape, a list of names, ...)
    torch: object      # torch's
    detail: str = ""


@dataclasses.dataclass
class AgainstResult:
    """One target compared across engines."""
    target: object
    differences: list
    compared: dict     # how many outputs, gradients, nodes and saved names were compared

    @property
    def passed(self):
        return not self.differences


@dataclasses.dataclass
class _Side:
    """What one engine computed for a target."""
    outputs: list
    gradients: dict    # name -> array or None
    second: dict       # name -> array or None (order 2)
    nodes: list        # node names, in backward's order
    saved: list        # per node: its sorted saved names


def load_both(spec):
    """The file's targets on each engine: (gradtool's, torch's). Modules the file imports
    from its own folder are imported afresh for torch."""
    before = set(sys.modules)
    with engines.use("gradtool") as engine, engine.importing():
        ours = loader.load(spec)
    library = frames.library_dirs()
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None) or ""
        if not os.path.abspath(path).startswith(library):  # the user's own modules
            del sys.modules[name]
    with engines.use("torch") as engine:
        theirs = loader.load(spec)
    return ours, theirs


def compare(ours, theirs, seed, shape, order=1):
    """AgainstResult of one target, given its gradtool and torch Target."""
    from ..capture.loader import file_modules
    E_ours, E_theirs = engines.get("gradtool"), engines.get("torch")
    with engines.use(E_theirs):
        modules_theirs = file_modules(E_theirs, theirs)
    with engines.use(E_ours), E_ours.importing():
        modules_ours = file_modules(E_ours, ours)
        # torch's values into gradtool's tensors, where both are tensors of one shape
        for t, source in [*_weights(modules_theirs, modules_ours),
                          *_global_tensors(theirs, ours), *_example_tensors(theirs, ours)]:
            if E_ours.is_tensor(t) and E_theirs.is_tensor(source) and \
                    tuple(source.shape) == tuple(t.shape):
                E_ours.array(t)[...] = E_theirs.array(source)
        a = _run(E_ours, ours, modules_ours, seed, shape, order)
    with engines.use(E_theirs):
        b = _run(E_theirs, theirs, modules_theirs, seed, shape, order)
    differences = []
    differences += _values("output", [(f"output {i}", x) for i, x in enumerate(a.outputs)],
                           [(f"output {i}", x) for i, x in enumerate(b.outputs)])
    differences += _values("gradient", list(a.gradients.items()), list(b.gradients.items()))
    if order == 2:
        differences += _values("second_order", list(a.second.items()), list(b.second.items()))
    differences += _graphs(a, b)
    compared = {"outputs": len(a.outputs), "gradients": len(a.gradients),
                "second_order": len(a.second), "nodes": len(a.nodes),
                "saved": sum(len(s) for s in a.saved)}
    return AgainstResult(ours, differences, compared)


def _weights(modules_from, modules_to):
    """Parameters and buffers of gradtool's modules and torch's, paired by qualified name."""
    for var, module in modules_to.items():
        other = modules_from.get(var)
        if other is None:
            continue
        theirs = dict(other.named_parameters(recurse=False))
        theirs.update(other.named_buffers(recurse=False))
        mine = dict(module.named_parameters(recurse=False))
        mine.update(module.named_buffers(recurse=False))
        yield from ((t, theirs.get(name)) for name, t in mine.items())


def _global_tensors(target_from, target_to):
    """Tensors the file holds in global variables (data drawn with torch.randn as it is
    imported: the engines draw different numbers), gradtool's and torch's, paired by name."""
    theirs = loader.file_namespace(target_from)
    return [(t, theirs.get(var)) for var, t in loader.file_namespace(target_to).items()]


def _example_tensors(target_from, target_to):
    """Tensors given in @gradtool.example(...) (torch.randn there draws differently on each
    engine too), paired argument by argument."""
    pairs = list(zip(target_to.arg_specs, target_from.arg_specs))
    return pairs + [(t, target_from.kwarg_specs.get(k)) for k, t in target_to.kwarg_specs.items()]


def _run(E, target, modules, seed, shape, order):
    """Run the target on E (seeded inputs), picture its graph, take its gradients."""
    from ..capture.loader import module_parameters
    from ..capture.graph import take_snapshot
    run = loader.run_target(target, seed, shape)
    snapshot = take_snapshot(run.outputs, engine=E)
    reached = {id(t) for t in snapshot.leaf_tensors}  # the parameters the target uses
    wrt = [(n, t) for n, t in run.tensor_inputs if t.requires_grad]
    wrt += [(n, p) for n, p in module_parameters(modules).items() if id(p) in reached]
    nodes = [n.name for n in snapshot.nodes]
    saved = [sorted(s.name for s in n.saved) for n in snapshot.nodes]
    outputs = [np.array(E.array(o)) for o in run.outputs]
    differentiable = [o for o in run.outputs if o.requires_grad]
    gradients, second = {}, {}
    if differentiable and wrt:
        try:
            with E.enable_grad():
                ones = [E.ones_like(o) for o in differentiable]
                grads = E.grad(differentiable, [t for _, t in wrt], ones, allow_unused=True,
                               create_graph=order == 2)
                gradients = {n: None if g is None else np.array(E.array(g))
                             for (n, _), g in zip(wrt, grads)}
                if order == 2:
                    second = _second_order(E, wrt, grads)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the user's backward raised: their line
            raise loader.user_error(e, f"backward of target {target.name} on {E.name}") \
                from None
    return _Side(outputs, gradients, second, nodes, saved)


def _second_order(E, wrt, grads):
    """The gradients of sum(w * grad) for fixed random w (the same on both engines)."""
    rng = np.random.default_rng(_SECOND_ORDER_SEED)
    pairs = [(g, E.wrap(rng.uniform(-1, 1, tuple(g.shape)).astype(E.numpy_dtype(g)), like=g))
             for g in grads if g is not None and g.requires_grad]
    if not pairs:
        return {n: None for n, _ in wrt}
    second = E.grad([g for g, _ in pairs], [t for _, t in wrt], [w for _, w in pairs],
                    allow_unused=True)
    return {n: None if g is None else np.array(E.array(g)) for (n, _), g in zip(wrt, second)}


def _values(kind, ours, theirs):
    """Differences between two lists of (name, array or None)."""
    found = []
    if len(ours) != len(theirs):
        found.append(Difference(kind, f"number of {kind}s", len(ours), len(theirs)))
    theirs = dict(theirs)
    for name, a in ours:
        if name not in theirs:
            continue
        b = theirs[name]
        if a is None or b is None:
            if (a is None) != (b is None):
                found.append(Difference(kind, name, _describe(a), _describe(b),
                                        "one engine gives no gradient"))
            continue
        if a.shape != b.shape:
            found.append(Difference(kind, name, list(a.shape), list(b.shape), "shapes differ"))
        elif a.dtype != b.dtype:
            found.append(Difference(kind, name, a.dtype.name, b.dtype.name, "dtypes differ"))
        else:
            difference = _worst(a, b)
            if difference is not None:
                found.append(Difference(kind, name, *difference))
    return found


def _describe(array):
    return None if array is None else f"{array.dtype.name}{list(array.shape)}"


def _worst(a, b):
    """(gradtool's value, torch's value, detail) at the worst element beyond the dtype's
    tolerances (NaN equal to NaN), or None when every element is close."""
    if a.dtype.kind not in "fc":
        bad = a != b
        if not bad.any():
            return None
        k = int(np.flatnonzero(bad)[0])
        return (a.flat[k].item(), b.flat[k].item(),
                f"{int(bad.sum())} of {a.size} differ; first at {_index(k, a.shape)}")
    rtol, atol = TOLERANCES.get(a.dtype.name, TOLERANCES["float64"])
    with np.errstate(invalid="ignore"):
        error = np.abs(a - b)
        allowed = atol + rtol * np.abs(b)
        bad = ~((error <= allowed) | (np.isnan(a) & np.isnan(b)) | (a == b))
    if not bad.any():
        return None
    ratio = np.where(bad, np.nan_to_num(error / allowed, nan=np.inf), -1)
    k = int(np.argmax(ratio))
    return (a.flat[k].item(), b.flat[k].item(),
            f"{int(bad.sum())} of {a.size} differ beyond rtol={rtol:g}, atol={atol:g}; worst "
            f"at {_index(k, a.shape)} (abs difference {error.flat[k]:.3g})")


def _index(k, shape):
    return [int(i) for i in np.unravel_index(k, shape)] if shape else []


def _graphs(a, b):
    """Node names (as a multiset, then in order) and saved names."""
    found = []
    if a.nodes != b.nodes:
        ours, theirs = collections.Counter(a.nodes), collections.Counter(b.nodes)
        for name in sorted(set(ours) | set(theirs)):
            if ours[name] != theirs[name]:
                found.append(Difference("node", name, ours[name], theirs[name],
                                        "how many nodes of this name the graph has"))
        if not found:
            k = next(i for i, (x, y) in enumerate(zip(a.nodes, b.nodes)) if x != y)
            found.append(Difference("node", f"n{k}", a.nodes[k], b.nodes[k],
                                    "the same nodes, in another order"))
        ours, theirs = _saved_by_name(a), _saved_by_name(b)
        for name in sorted(set(ours) & set(theirs)):
            if ours[name] != theirs[name]:
                found.append(Difference("saved", name, sorted(ours[name]),
                                        sorted(theirs[name]), "saved names of these nodes"))
        return found
    for k, (name, x, y) in enumerate(zip(a.nodes, a.saved, b.saved)):
        if x != y:
            found.append(Difference("saved", f"n{k} {name}", x, y))
    return found


def _saved_by_name(side):
    names = collections.defaultdict(set)
    for node, saved in zip(side.nodes, side.saved):
        names[node].update(saved)
    return names
