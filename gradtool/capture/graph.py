"""A frozen picture of one backward graph, taken with the engine's one traversal
(autograd.walk): nodes with stable ids in the order backward runs them, their edges, output
shapes, saved values and leaves. Reports (text, dot, json) and diagnostics read only this."""
import contextlib
import dataclasses
import functools
import gc
from typing import Optional

import numpy as np

import gradtool.adapters as engines
from ..adapters.records import fill_stats, short_repr
from ..engine.frames import site_location


@dataclasses.dataclass(slots=True)
class LeafInfo:
    name: Optional[str]
    shape: tuple
    dtype: str
    requires_grad: bool
    is_inference: bool
    grad_norm: Optional[float] = None   # filled in after backward
    grad_finite: Optional[bool] = None
    device: str = "cpu"


@dataclasses.dataclass(slots=True)
class NodeInfo:
    id: str
    name: str                 # MulBackward0, AccumulateGrad, MyFunctionBackward, CopySlices
    kind: str                 # op | custom | leaf | copy_slices | other
    edges: tuple              # (child id or None, output_nr) per next_functions entry
    outputs: dict             # output_nr -> (shape, dtype) of the tensor it is the grad_fn of
    saved: list
    n_parents: int = 0
    label: Optional[str] = None   # the user's variable name for its result, if known
    module: Optional[str] = None  # the nn.Module that ran it, if any
    module_path: tuple = ()       # (call id, name, type) per module call, outermost first
    seq: Optional[int] = None     # when the forward made it (creation order), if known
    metadata: dict = dataclasses.field(default_factory=dict)  # node.metadata's own entries, as text
    site: Optional[str] = None    # file:line of the user's code whose forward call made it
    leaf: Optional[LeafInfo] = None
    problem: Optional[str] = None  # why its backward is wrong, when a check found it so


@dataclasses.dataclass(slots=True)
class OutputInfo:
    index: int
    name: Optional[str]
    shape: tuple
    dtype: str
    requires_grad: bool
    is_inference: bool
    node: Optional[str]       # id of its grad_fn (or of its AccumulateGrad, for a leaf)
    output_nr: int
    finite: bool
    tangent: Optional[dict] = None  # a dual tensor's (forward_ad) tangent: shape, norm
    device: str = "cpu"


@dataclasses.dataclass
class GraphSnapshot:
    nodes: list
    outputs: list

    def __post_init__(self):
        self.by_id = {n.id: n for n in self.nodes}

    @property
    def leaves(self):
        return [n for n in self.nodes if n.leaf is not None]

    def chain_from(self, node, taken=()):
        """The run of nodes from `node` down a single path (each next node has one input
        edge and is used once), stopping at leaves and at nodes in `taken`."""
        run = [node]
        while True:
            children = [c for c, _ in run[-1].edges if c is not None]
            if len(children) != 1:
                return run
            child = self.by_id[children[0]]
            if child.n_parents != 1 or child.kind == "leaf" or child.id in taken:
                return run
            run.append(child)

    @property
    def saved_total_bytes(self):
        """Memory held by saved tensors, each array counted once."""
        seen = {}
        for node in self.nodes:
            for s in node.saved:
                if s.is_tensor and s.state != "freed":
                    seen[s.array_id if s.array_id is not None else id(s)] = s.nbytes
        return sum(seen.values())


@contextlib.contextmanager
def collector_paused():
    """No cyclic collection while the block runs, then the collector as it was. For code that
    makes many lasting objects and no garbage cycles (the snapshot, a page): the collector's
    passes over them meanwhile find nothing, and its full passes scan the whole graph."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def take_snapshot(outputs, named=None, sites=None, module_names=None, engine=None):
    """Picture the graph behind `outputs` (Tensors of `engine`, default the current one).
    `named` maps the user's variable names to tensors, for labels; `sites` maps nodes to the
    (file, line, function) that made them, in the order the forward made them;
    `module_names` maps id(module) to the name the user knows it by (model.3.attn)."""
    with collector_paused():  # (0.7 s of 100,000 nodes' 2 s)
        return _take_snapshot(outputs, named, sites, module_names, engine)


def _take_snapshot(outputs, named, sites, module_names, engine):
    E = engine or engines.current()
    named = named or {}
    name_of = {id(t): name for name, t in named.items()}
    edges = [E.gradient_edge(t) if t.requires_grad else None for t in outputs]
    order = E.topological_order([edge[0] for edge in edges if edge is not None])
    ids = {node: f"n{i}" for i, node in enumerate(order)}
    paths = _ModulePaths(module_names or {})
    pending_stats = []  # (SavedInfo, array): the saved arrays' statistics, computed together
    by_node = {node: _node_info(E, node, ids[node], ids, paths, pending_stats) for node in order}
    fill_stats(pending_stats)
    _place_parameters(E, by_node)
    for node in order:
        for (child, nr), meta in zip(node.next_functions, E.edge_meta(node)):
            if child is not None:
                by_node[child].n_parents += 1
                if meta is not None:
                    by_node[child].outputs.setdefault(nr, meta)
    site_texts = {}  # a line of the user's makes many nodes: one text for them all
    for seq, (node, site) in enumerate((sites or {}).items()):
        if node in by_node:
            by_node[node].seq = seq
            if site is not None:
                text = site_texts.get(site)
                if text is None:
                    text = site_texts[site] = site_location(site)
                by_node[node].site = text
    for name, t in named.items():
        if t.grad_fn is None:
            continue
        node, nr = E.gradient_edge(t)
        info = by_node.get(node)
        if info is not None and info.label is None:
            info.label = name + ("" if nr == 0 else f"[{nr}]")
    for node, info in by_node.items():
        if info.leaf is not None:
            info.label = info.leaf.name = name_of.get(id(node.variable))
    output_infos = []
    for i, (t, edge) in enumerate(zip(outputs, edges)):
        node_id, nr = None, 0
        if edge is not None:
            node, nr = edge
            node_id = ids[node]
            by_node[node].outputs.setdefault(nr, (tuple(t.shape), E.dtype_name(t)))
        finite = bool(np.all(np.isfinite(E.array(t)))) if t.is_floating_point() and \
            E.has_values(t) else True
        output_infos.append(OutputInfo(i, name_of.get(id(t)), tuple(t.shape), E.dtype_name(t),
                                       t.requires_grad, t.is_inference(), node_id, nr, finite,
                                       _tangent_info(E, t), E.device_name(t)))
    _share_alike(by_node.values())
    snapshot = GraphSnapshot(list(by_node.values()), output_infos)
    # the live leaf tensors, aligned with snapshot.leaves, so a runner can read their grads
    snapshot.leaf_tensors = [n.variable for n, info in by_node.items() if info.kind == "leaf"]
    snapshot.node_ids = ids  # live node -> its id, for what checks find about live nodes
    return snapshot


def _share_alike(infos):
    """Nodes whose outputs are alike (most have one, of one of a few shapes) share one dict of
    them, and nodes without metadata of their own one empty dict: a dict each was 4 MB of a
    20,000-node graph's records. Nothing changes a snapshot's records once it is taken."""
    shared = {}
    for info in infos:
        info.outputs = shared.setdefault(tuple(info.outputs.items()), info.outputs)
        if not info.metadata:
            info.metadata = _NO_METADATA


_NO_METADATA = {}
_NOTHING_SAVED = []  # a leaf's (one list for the thousands of parameters a model has)


@functools.lru_cache(maxsize=4096)
def _shared(shape):  # the same few shapes for thousands of leaves: one tuple each
    return shape


def _tangent_info(E, t):
    """The tangent a dual output was given in forward mode (its level may have exited since)."""
    tangent = E.last_tangent(t)
    if tangent is None:
        return None
    return {"shape": list(tangent.shape), "dtype": tangent.dtype.name,
            "norm": float(np.linalg.norm(np.asarray(tangent, dtype=np.float64)))}


def _node_info(E, node, node_id, ids, paths, pending_stats):
    edges = tuple([(ids.get(child) if child is not None else None, nr)
                   for child, nr in node.next_functions])
    kind = E.node_kind(node)
    meta = E.metadata(node) or {}
    if kind == "leaf":
        v = node.variable
        leaf = LeafInfo(None, _shared(tuple(v.shape)), E.dtype_name(v), v.requires_grad,
                        v.is_inference(), device=E.device_name(v))
        return NodeInfo(node_id, E.node_name(node), "leaf", edges, {}, _NOTHING_SAVED, leaf=leaf,
                        module=_module_name(meta), module_path=paths.of(meta))
    saved_info = E.saved_info
    saved = [saved_info(label, value, pending_stats)
             for label, value in E.saved_values(node).items()]
    return NodeInfo(node_id, E.node_name(node), kind, edges, {}, saved, module=_module_name(meta),
                    module_path=paths.of(meta),
                    metadata={str(k): short_repr(v) for k, v in meta.items()
                              if k not in _MODULE_KEYS}
                    if not _MODULE_KEYS_SET.issuperset(meta) else {})  # (most have nn's only)


def _module_name(metadata):
    """'2 (Linear)' for a submodule, 'CrossEntropyLoss' for a module called on its own."""
    name, kind = metadata.get("module"), metadata.get("module_type")
    if name is None:
        return None
    if not isinstance(name, str):  # a module object
        return type(name).__name__
    kind = getattr(kind, "__name__", kind)
    if not name:
        return kind
    return _module_label(name, kind) if kind else name


@functools.lru_cache(maxsize=4096)
def _module_label(name, kind):  # one text for the many nodes of a call
    return f"{name} ({kind})"


_MODULE_KEYS = ("module", "module_type", "nn_module_stack", "module_calls")  # nn's, shown apart
_MODULE_KEYS_SET = frozenset(_MODULE_KEYS)


def _place_parameters(E, by_node):
    """Put each parameter's AccumulateGrad in the call of the module that holds it. Its tag
    may be missing (a forward used a submodule's parameter without calling that submodule,
    as MultiheadAttention does its out_proj's) or stale (the node outlives a forward pass,
    and its tag names a call of an earlier pass: a target run before, holding the same
    model). Such a parameter goes to the innermost call holding it among the calls its
    consumers ran in, the earliest if several (as a fresh tag would), or to none."""
    calls_here = {call for info in by_node.values() if info.kind != "leaf"
                  for call, _, _ in info.module_path}
    misplaced = {node for node, info in by_node.items() if info.kind == "leaf"
                 and (not info.module_path or info.module_path[-1][0] not in calls_here)}
    if not misplaced:
        return
    held = {}    # id(module) -> ids of its parameters, its submodules' included
    placed = {}  # misplaced node -> the module path found for it
    for node, info in by_node.items():
        if info.kind == "leaf" or not info.module_path:
            continue
        for child, _ in node.next_functions:
            if child not in misplaced:
                continue
            stack = (E.metadata(node) or {}).get("nn_module_stack") or ()
            if len(stack) != len(info.module_path):
                break
            for depth in range(len(stack) - 1, -1, -1):
                module = stack[depth][1]
                if id(module) not in held:
                    held[id(module)] = {id(p) for p in module.parameters()}
                if id(child.variable) in held[id(module)]:
                    path = info.module_path[:depth + 1]
                    if child not in placed or path[-1][0] < placed[child][-1][0]:
                        placed[child] = path
                    break
    for node in misplaced:
        info = by_node[node]
        info.module_path = placed.get(node, ())
        info.module = "{} ({})".format(*info.module_path[-1][1:]) if info.module_path else None


class _ModulePaths:
    """The module calls a node was made in, outermost first: (call id, name, type) each,
    named as the user knows the module where we can tell (model.3.attn). The nodes of one
    call share one path (the engine tags them with one stack): made once per call, not per
    node, and held once."""

    def __init__(self, module_names):
        self.module_names = module_names
        self.made = {}  # the calls' ids -> their path
        self.levels = {}  # (call id, module id, name) -> its level, shared by the paths inside it

    def of(self, metadata):
        stack, calls = metadata.get("nn_module_stack"), metadata.get("module_calls")
        if not stack or not calls or len(stack) != len(calls):
            return ()
        path = self.made.get(calls)
        if path is None:
            path = self.made[calls] = tuple(self._level(call, name, module)
                                            for call, (name, module) in zip(calls, stack))
        return path

    def _level(self, call, name, module):
        key = (call, id(module), name)
        level = self.levels.get(key)
        if level is None:
            level = self.levels[key] = (
                call, self.module_names.get(id(module)) or name or type(module).__name__,
                type(module).__name__)
        return level
