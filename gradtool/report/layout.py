"""What a drawing of the backward graph shows, before any Graphviz: boxes for module calls
(nested as the modules are) and for chunks of graphs too long to read, which of them are
collapsed, and the edges between what is visible. dot.py and html.py both draw from a Plan.

Acyclic by construction: every node gets a place in one forward order (inputs before the ops
that use them) in which each box is one contiguous run; a module call whose nodes cannot be
contiguous (something outside it runs between them) becomes several boxes, "part 1/2", ....
Collapsing a run of consecutive nodes into one box keeps every edge pointing forward, so the
collapsed graph is a DAG whatever the grouping."""
import collections
import dataclasses
import heapq
from typing import Optional

READABLE = 150   # more visible items than this and boxes collapse (graphviz-pure's layout is
                 # superlinear: seconds on a few thousand tangled nodes), or long runs chunk
CHUNK = 100      # nodes (or boxes) per chunk when a level has more than READABLE items


@dataclasses.dataclass(eq=False)
class Box:
    key: str                 # stable id in drawings: b0, b1, ...
    kind: str                # module | chunk | root
    title: str               # "model.3.attn (Attention)", "part 2/3", "nodes 1–100"
    depth: int               # module boxes above it (top-level module calls: 1)
    items: list = dataclasses.field(default_factory=list)  # node ids and Boxes, in order
    parent: Optional["Box"] = None
    collapsed: bool = False
    n_nodes: int = 0         # all nodes inside, nested ones too
    names: collections.Counter = dataclasses.field(  # node name -> count inside
        default_factory=collections.Counter)
    sites: list = dataclasses.field(default_factory=list)  # first few source lines inside
    loop: bool = False       # a repeat of calls of one module (a cell called at each step)
    signature: Optional[tuple] = None  # what calls alike share (_signature)

    def __repr__(self):
        return f"Box({self.key}, {self.title!r}, {self.n_nodes} nodes)"

    def boxes(self):
        """Every box inside, depth first (self excluded)."""
        stack = [i for i in reversed(self.items) if isinstance(i, Box)]
        while stack:
            box = stack.pop()
            yield box
            stack += [i for i in reversed(box.items) if isinstance(i, Box)]

    def node_ids(self):
        """Every node inside, nested ones too, in order."""
        out, stack = [], [iter(self.items)]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, Box):
                stack.append(iter(item.items))
            else:
                out.append(item)
        return out


@dataclasses.dataclass
class Plan:
    root: Box
    order: list              # node ids in forward order
    box_of: dict             # node id -> innermost Box holding it (root if none)
    inputs: dict             # node id -> ids of the nodes it takes input from
    consumers: dict          # node id -> ids of the nodes that take its output

    def unlink(self):
        """Take the boxes' links to their parents, the plan's only reference cycles, away (the
        plan is no use after): a plan let go is then freed at once, not by the cyclic
        collector's next pass, which would have to look at everything made with it (0.1 s
        of a 20,000-node page)."""
        for box in self.root.boxes():
            box.parent = None

    def visible(self, node_id, within=None):
        """What stands for a node in the view of `within` (root by default): the node itself,
        or the outermost collapsed box (below `within`) holding it; None outside `within`."""
        within = within or self.root
        box, shown = self.box_of[node_id], node_id
        while box is not within:
            if box is None:
                return None
            if box.collapsed:
                shown = box
            box = box.parent
        return shown

    def edges(self, within=None):
        """(tail, head) pairs between what is visible in `within`, inputs first, each once;
        tails or heads outside `within` are given as ("in", node id) / ("out", node id)."""
        within = within or self.root
        seen = set()
        out = []
        for head_id in within.node_ids():
            head = self.visible(head_id, within)
            for tail_id in self.inputs[head_id]:
                tail = self.visible(tail_id, within)
                if tail is None:
                    tail = ("in", tail_id)
                if tail is not head and (tail, head) not in seen:
                    seen.add((tail, head))
                    out.append((tail, head))
            if within is not self.root:
                for consumer in self.consumers[head_id]:
                    if self.visible(consumer, within) is None:
                        pair = (head, ("out", consumer))
                        if pair not in seen:
                            seen.add(pair)
                            out.append(pair)
        return out


def make_plan(snapshot, depth=None, expand=False, readable=READABLE):
    """Boxes for the snapshot's module calls; with `expand` all open, with `depth` those
    nested deeper than it collapsed, else collapsed as little as keeps the drawing readable."""
    nodes = snapshot.nodes
    # the nodes of one call share its module path: one tuple of its calls for them all
    calls_of, paths, names = {}, {}, {}
    for n in nodes:
        calls = calls_of.get(id(n.module_path))
        if calls is None:
            names.update((call, (name, kind)) for call, name, kind in n.module_path)
            calls = calls_of[id(n.module_path)] = (n.module_path, tuple(
                call for call, _, _ in n.module_path))
        paths[n.id] = calls[1]
    inputs = {n.id: list(dict.fromkeys(c for c, _ in n.edges if c is not None)) for n in nodes}
    consumers = {n.id: [] for n in nodes}
    for head, tails in inputs.items():
        for tail in tails:
            consumers[tail].append(head)
    order = _forward_order(nodes, inputs, consumers, paths)
    root = _box_tree(order, paths, names, snapshot.by_id)
    _group_repeats(root, snapshot.by_id)
    if not expand:
        for box in [root, *root.boxes()]:
            _chunk(box, readable, snapshot.by_id)
        _collapse(root, depth, readable)
    box_of = {}
    for box in [root, *root.boxes()]:
        for item in box.items:
            if not isinstance(item, Box):
                box_of[item] = box
    return Plan(root, order, box_of, inputs, consumers)


def views(plan):
    """The boxes an interactive page lays out on their own, each while its collapse flags are
    set for it: the root as planned, then every box collapsed in a view before, shown open
    with its inner boxes collapsed as little as keeps it readable."""
    queue = [plan.root]
    while queue:
        box = queue.pop(0)
        if box is not plan.root:
            _collapse(box, None, READABLE)  # (it sets every box inside)
        yield box
        queue.extend(collapsed_within(box))


def collapsed_within(box):
    """The collapsed boxes a view of `box` shows (not those inside them)."""
    out, stack = [], [i for i in reversed(box.items) if isinstance(i, Box)]
    while stack:
        b = stack.pop()
        if b.collapsed:
            out.append(b)
        else:
            stack.extend(i for i in reversed(b.items) if isinstance(i, Box))
    return out


def _forward_order(nodes, inputs, consumers, paths):
    """Node ids, each after its inputs, the nodes of one module call kept together: Kahn's
    algorithm that takes the next ready node from the innermost module call it is in, in the
    order the forward made them. Nodes without inputs (leaves) are placed afterwards, just
    before their first use."""
    index = {n.id: i for i, n in enumerate(nodes)}
    made = _creation_order(nodes, inputs)
    # the heaps hold each node's rank in (made, -index) order: ints compare faster than tuples
    by_rank = sorted(index, key=lambda nid: (made[nid], -index[nid]))
    rank = {nid: r for r, nid in enumerate(by_rank)}
    sources = [n.id for n in nodes if not inputs[n.id]]
    # the usual case: the forward ran each call's ops one after another, and then the order it
    # made them in is the one Kahn's algorithm gives (each time, the next of that order is
    # ready, and in the innermost call that has a ready node), without its heaps
    order = [nid for nid in by_rank if inputs[nid]]
    if not (_calls_kept_together(order, paths) and all(
            rank[tail] < rank[nid] for nid in order for tail in inputs[nid] if inputs[tail])):
        order = _ready_order(by_rank, rank, sources, inputs, consumers, paths)
    return _place_sources(order, sources, consumers, paths)


def _ready_order(by_rank, rank, sources, inputs, consumers, paths):
    """Kahn's algorithm on the nodes with inputs: the next node is the first in `by_rank`
    among those ready in the innermost call of the last one that has any."""
    waiting = {nid: len(tails) for nid, tails in inputs.items()}
    ready = {}  # path prefix -> heap of the ranks of ready nodes under it

    prefixes = {}  # a path -> its prefixes, shortest first: the nodes of a call share them

    def prefixes_of(path):
        found = prefixes.get(path)
        if found is None:
            found = prefixes[path] = [path[:k] for k in range(len(path) + 1)]
        return found

    def release(nid):
        for head in consumers[nid]:
            waiting[head] -= 1
            if waiting[head] == 0:
                r = rank[head]
                for prefix in prefixes_of(paths[head]):
                    heapq.heappush(ready.setdefault(prefix, []), r)
    for s in sources:
        release(s)
    order, done, current = [], bytearray(len(by_rank)), ()
    while True:
        for prefix in reversed(prefixes_of(current)):
            heap = ready.get(prefix)
            while heap and done[heap[0]]:
                heapq.heappop(heap)
            if heap:
                r = heapq.heappop(heap)
                break
        else:
            break
        done[r] = 1
        nid = by_rank[r]
        order.append(nid)
        current = paths[nid]
        release(nid)
    return order


def _calls_kept_together(order, paths):
    """Whether the nodes of each module call are one run of `order`."""
    left, previous = set(), ()  # the calls the sweep has left
    for nid in order:
        path = paths[nid]
        if path is not previous:  # (most nodes are in the call of the node before them)
            shared = len(_common_prefix(path, previous))
            left.update(previous[shared:])
            if not left.isdisjoint(path[shared:]):
                return False
            previous = path
    return True


def _creation_order(nodes, inputs):
    """When the forward made each node: the trace's count where it knows it; a node it does
    not know (a custom Function's) was made just after the last of its inputs, so that it
    stays beside them and does not split the module call around it. With no counts at all,
    the reverse of backward's order."""
    if all(n.seq is None for n in nodes):
        return {n.id: 2 * len(nodes) - i for i, n in enumerate(nodes)}
    made = {}
    for n in reversed(nodes):  # backward's order reversed: inputs first
        made[n.id] = n.seq if n.seq is not None else \
            max((made[c] for c in inputs[n.id] if c in made), default=-1) + 0.5
    return made


def _place_sources(order, sources, consumers, paths):
    """Put each node without inputs just before its first user, inside the innermost box it
    shares with that user (a parameter inside its module's box, an input outside all)."""
    pos = {nid: i for i, nid in enumerate(order)}
    max_depth = max((len(paths[n]) for n in order), default=0)
    # in_common[i]: how many calls the paths of order[i - 1] and order[i] share (a call's nodes
    # share one path: most neighbours' are one object)
    in_common, previous = [0], None
    for nid in order:
        path = paths[nid]
        if previous is not None:
            in_common.append(len(path) if path is previous else len(_common_prefix(path, previous)))
        previous = path
    run_start = []  # run_start[k][i]: where the run of path[:k+1] holding position i starts
    for k in range(max_depth):
        starts = []
        for i, n in enumerate(in_common):
            starts.append(starts[-1] if n > k else i)
        run_start.append(starts)
    before = {}
    for s in sources:
        users = [pos[c] for c in consumers[s] if c in pos]
        if not users:
            paths[s] = ()
            before.setdefault(len(order), []).append(s)
            continue
        first = min(users)
        user_path = paths[order[first]]
        shared = _common_prefix(paths[s], user_path)
        paths[s] = shared
        at = first if len(shared) == len(user_path) else run_start[len(shared)][first]
        before.setdefault(at, []).append(s)
    placed = []
    for i in range(len(order) + 1):
        if i in before:
            placed.extend(sorted(before[i], key=lambda s: len(paths[s])))
        if i < len(order):
            placed.append(order[i])
    return placed


def _common_prefix(a, b):
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return a[:n]


def _box_tree(order, paths, names, by_id):
    """Sweep the order with a stack of open boxes: one box per run of each module call."""
    root = Box("root", "root", "", 0)
    stack = [((), root)]
    runs = {}
    previous, innermost = (), root
    for nid in order:
        path = paths[nid]
        if path is not previous:  # (most nodes are in the call of the node before them)
            keep = 1
            while keep < len(stack) and keep <= len(path) and stack[keep][0] == path[:keep]:
                keep += 1
            del stack[keep:]
            for k in range(len(stack), len(path) + 1):
                call = path[k - 1]
                parent = stack[-1][1]
                box = Box("", "module", "", k, parent=parent)
                box.call = call
                runs.setdefault(call, []).append(box)
                parent.items.append(box)
                stack.append((path[:k], box))
            previous, innermost = path, stack[-1][1]
        innermost.items.append(nid)
        innermost.n_nodes += 1
        node = by_id[nid]
        innermost.names[node.name] += 1
    _add_up(root, by_id)
    calls_of_name = {}
    for call in sorted(runs):
        calls_of_name.setdefault(names[call][0], []).append(call)
    for call, boxes in runs.items():
        name, kind = names[call]
        for box in boxes:
            box.module = (name, kind, calls_of_name[name].index(call) + 1)
        same = calls_of_name[name]
        title = name + (f" ({kind})" if kind != name else "")
        if len(same) > 1:
            title += f" call {same.index(call) + 1}/{len(same)}"
        for i, box in enumerate(boxes):
            box.title = title + (f" part {i + 1}/{len(boxes)}" if len(boxes) > 1 else "")
    for i, box in enumerate(root.boxes()):
        box.key = f"b{i}"
    return root


def _add_up(box, by_id):
    """Each box's counts made those of all it holds (the sweep counted only the nodes directly
    in it: once per node, not once per node and box around it), and its first few sites."""
    sites = box.sites
    for item in box.items:
        if isinstance(item, Box):
            _add_up(item, by_id)
            box.n_nodes += item.n_nodes
            box.names.update(item.names)
            if len(sites) < 3:
                sites.extend(s for s in item.sites if s not in sites)
                del sites[3:]
        elif len(sites) < 3:
            site = by_id[item].site
            if site and site not in sites:
                sites.append(site)


def _group_repeats(root, by_id):
    """Runs of sibling module calls that repeat get a box of their own: calls alike side by
    side (the blocks of a stack, "model.blocks.0–23 (Block) ×24"), and calls of one module
    in a loop with a few nodes between them (a recurrent cell and the slices that feed it,
    "cell (Cell) calls 1–30 ×30"). Collapsed, it stands for all of them; open, it is drawn
    as what it holds. The run is consecutive items, so the drawing stays acyclic."""
    for box in [root, *root.boxes()]:
        items, out, i = box.items, [], 0
        while i < len(items):
            j = _repeat_end(items, i)
            if j is None:
                out.append(items[i])
                i += 1
                continue
            members = items[i:j]
            calls = [m for m in members if isinstance(m, Box)]
            group = Box(f"{calls[0].key}r", "repeat", _repeat_title(calls), calls[0].depth,
                        items=members, parent=box)
            for m in members:  # the calls, and the nodes between them in a loop
                if isinstance(m, Box):
                    m.parent = group
                    group.n_nodes += m.n_nodes
                    group.names.update(m.names)
                else:
                    group.n_nodes += 1
                    group.names[by_id[m].name] += 1
            group.sites = calls[0].sites
            group.loop = calls[0].module[0] == calls[-1].module[0]
            out.append(group)
            i = j
        box.items = out


LOOP_GAP = 8  # nodes between two calls of one module that still read as one loop


def _repeat_end(items, i):
    """Where the repeated run of calls starting at items[i] ends (exclusive), or None."""
    sig = _signature(items[i])
    if sig is None:
        return None
    j = i + 1
    while j < len(items) and _signature(items[j]) == sig:  # calls alike, side by side
        j += 1
    if j - i >= 2:
        return j
    module, end, k = items[i].module[0], None, i + 1
    while k < len(items):  # calls of one module with only a few loose nodes between
        gap = k
        while k < len(items) and not isinstance(items[k], Box) and k - gap < LOOP_GAP:
            k += 1
        if k < len(items) and _signature(items[k]) and items[k].module[0] == module:
            end = k = k + 1
        else:
            break
    return end


def _signature(item):
    if not isinstance(item, Box) or item.kind != "module":
        return None
    if item.signature is None:  # asked again and again while the runs are found
        # parameters shared by the calls sit in the first one: not part of the likeness
        item.signature = item.module[1], tuple(sorted(
            (k, v) for k, v in item.names.items() if k != "AccumulateGrad"))
    return item.signature


def _repeat_title(calls):
    (first, kind, n1), (last, _, n2) = calls[0].module, calls[-1].module
    if first == last:  # one module called again and again
        return f"{first} ({kind}) calls {n1}–{n2} ×{len(calls)}"
    head, _, _ = first.rpartition(".")
    tail = last[len(head) + 1:] if head and last.startswith(head + ".") else last
    return f"{first}–{tail} ({kind}) ×{len(calls)}"


def _chunk(box, readable, by_id):
    """A level with too many items to read gets them in consecutive chunks of CHUNK (of
    chunks, if need be): consecutive runs of the order, so still acyclic."""
    # leaves (inputs, parameters) stay in sight: nothing points at them, so no cycle can
    # pass through them
    leaves = [i for i in box.items if not isinstance(i, Box) and by_id[i].kind == "leaf"]
    if len(box.items) <= readable or len(leaves) > readable // 2:
        leaves = []
    keep = set(leaves)
    box.items = [i for i in box.items if isinstance(i, Box) or i not in keep]
    rounds = 0
    while len(box.items) > readable - len(leaves):
        rounds += 1
        chunks, first = [], 1
        for start in range(0, len(box.items), CHUNK):
            chunk = Box(f"{box.key}_{rounds}_{len(chunks)}", "chunk", "", box.depth,
                        items=box.items[start:start + CHUNK], parent=box)
            for item in chunk.items:
                if isinstance(item, Box):
                    item.parent = chunk
                    chunk.n_nodes += item.n_nodes
                    chunk.names.update(item.names)
                    chunk.sites.extend(s for s in item.sites if s not in chunk.sites)
                else:
                    node = by_id[item]
                    chunk.n_nodes += 1
                    chunk.names[node.name] += 1
                    if node.site and node.site not in chunk.sites:
                        chunk.sites.append(node.site)
            chunk.title = _chunk_title(chunk, first, box.n_nodes)
            first += chunk.n_nodes
            chunks.append(chunk)
        box.items = chunks
    box.items = leaves + box.items


def _chunk_title(chunk, first, total):
    """A chunk of nothing but calls of one module kind side by side (those in its repeats
    too), or of calls of one module in a loop with the few nodes between them, is named by
    them ("model.blocks.0–99 (Block) ×100", "cell (Cell) calls 1–40 ×40"); any other by its
    place ("nodes 1–100 of 20,000"), after the first and last calls in it: never by one call
    of many."""
    calls, loose = _calls_in(chunk)
    where = f"nodes {first:,}–{first + chunk.n_nodes - 1:,} of {total:,}"
    if not calls:
        return where
    names = [b.module[0] for b in calls]
    alike = len({b.module[1] for b in calls}) == 1 and (
        len(set(names)) == 1 or len({n.rpartition(".")[0] for n in names}) == 1)
    loop = len(set(names)) == 1 and 1 < len(calls) and loose <= LOOP_GAP * len(calls)
    if alike and (not loose or loop):
        return calls[0].title if len(calls) == 1 else _repeat_title(calls)
    if names[0] == names[-1]:
        return f"{where} with {names[0]} ({calls[0].module[1]})"
    return f"{names[0]} … {names[-1]} ({where})"


def _calls_in(box):
    """The outermost module calls inside a chunk or repeat, in order, and how many nodes sit
    beside them."""
    calls, loose = [], 0
    for item in box.items:
        if not isinstance(item, Box):
            loose += 1
        elif item.kind == "module":
            calls.append(item)
        else:
            inner, inner_loose = _calls_in(item)
            calls += inner
            loose += inner_loose
    return calls, loose


def _collapse(box, depth, readable):
    """Collapse boxes below `box`: with `depth`, module calls nested deeper than it (and every
    chunk); else, unless all of it is small enough to show open, the one folding rule (the
    page's "expand all" follows it too): open level by level, outermost first, and within a
    level the boxes of one kind (LayerNorm, Block, ...) together or not at all, in the order
    they come, while at most `readable` items stay in sight. Siblings alike are thus always
    drawn alike (every block's norms open, or none). Calls of one module in a loop stay one
    box xN, and chunks stay shut (the page opens them on a click)."""
    inner = list(box.boxes())
    if depth is not None:
        for b in inner:
            b.collapsed = b.kind == "chunk" or b.depth > depth
        return
    small = box.n_nodes <= readable and not any(b.kind == "chunk" for b in inner)
    for b in inner:
        b.collapsed = not small
    if small:
        return
    shown, level = len(box.items), [box]
    while level:
        opened = []
        for group in alike_groups(level):
            cost = sum(len(b.items) - 1 for b in group)
            if shown + cost <= readable:
                shown += cost
                opened += group
                for b in group:
                    b.collapsed = False
        level = opened


def alike_groups(level):
    """The boxes inside the boxes of `level` that may open, grouped by kind (a module's class;
    a repeat by what it repeats), each group in order and the groups in the order they come."""
    groups = {}
    for parent in level:
        for b in parent.items:
            if isinstance(b, Box) and b.kind != "chunk" and not b.loop:
                groups.setdefault(_kind_of(b), []).append(b)
    return list(groups.values())


def _kind_of(box):
    if box.kind == "module":
        return box.module[1]
    first = next(i for i in box.items if isinstance(i, Box))
    return box.kind, _kind_of(first)


def summary(box, limit=3):
    """The text of a collapsed box: title, node count, its most common node kinds."""
    lines = [box.title, f"{box.n_nodes:,} nodes"]
    top = sorted(box.names.items(), key=lambda kv: -kv[1])
    lines += [f"{name} ×{count:,}" for name, count in top[:limit] if count]
    if len(top) > limit:
        lines.append(f"… {len(top) - limit} more kinds")
    if box.sites:
        lines.append("at " + ", ".join(box.sites[:2]))
    return "\n".join(lines)
