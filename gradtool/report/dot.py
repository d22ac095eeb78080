"""The backward DAG as Graphviz, in torchviz's colour language: grey backward nodes, blue
leaves, green outputs, orange saved tensors. Gradients flow upwards in the picture's
opposite direction: edges go from an input's node to the node that consumes it, as torchviz
draws them. Large graphs are grouped (modules, folded chains) rather than cut."""
import os
import shutil
import subprocess
import sysconfig

import graphviz

from ..errors import GradtoolError
from .text import fmt_bytes, fmt_shape

COLORS = {"op": "lightgrey", "custom": "lightgrey", "copy_slices": "lightgrey",
          "other": "lightgrey", "leaf": "lightblue", "output": "darkolivegreen1",
          "saved": "orange", "group": "lightgoldenrod1"}
READABLE_NODES = 150   # beyond this, graphs are grouped unless --expand (layout is
                       # superlinear: graphviz-pure takes seconds on a few hundred tangled nodes)
MIN_GROUP = 4          # a module call or a line of code with this many nodes becomes one box
CHAIN_FOLD = 6
FORMATS = ("svg", "png", "pdf", "dot")


class RendererNotFound(GradtoolError):
    pass


NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
             "ranksep": "0.1", "height": "0.2", "fontname": "monospace"}


def build(snapshot, show_saved=False, expand=False):
    """A graphviz.Digraph of the snapshot."""
    g = graphviz.Digraph("backward", node_attr=NODE_ATTR, graph_attr={"size": "12,12"})
    draw(g, snapshot, show_saved, expand)
    return g


def combine(named_snapshots, show_saved=False, expand=False):
    """Several targets in one drawing, each in its own frame, ids kept apart by a prefix."""
    g = graphviz.Digraph("targets", node_attr=NODE_ATTR)
    for i, (name, snapshot) in enumerate(named_snapshots):
        frame = graphviz.Digraph(f"cluster_target{i}", graph_attr={"label": name})
        draw(frame, snapshot, show_saved, expand, prefix=f"t{i}_")
        g.subgraph(frame)
    return g


def draw(g, snapshot, show_saved=False, expand=False, prefix=""):
    """Add the snapshot's nodes and edges to `g`; every id gets `prefix`."""
    groups = {k: prefix + v for k, v in _groups(snapshot, expand).items()}

    def box(node_id):  # the id of what stands for a node in the drawing
        return groups.get(node_id, prefix + node_id)
    drawn = set()
    clusters = {}
    for node in snapshot.nodes:
        if node.id in groups or box(node.id) in drawn:
            continue  # a group's box is drawn from its summary below
        drawn.add(box(node.id))
        target = g
        if node.module:
            target = clusters.setdefault(node.module, graphviz.Digraph(
                f"cluster_{prefix}{len(clusters)}",
                graph_attr={"label": node.module, "style": "dashed", "color": "gray50"}))
        target.node(box(node.id), _label(node), fillcolor=COLORS.get(node.kind, "lightgrey"),
                    tooltip=node.name)
    for summary_id, (label, members) in _group_summaries(snapshot, groups).items():
        g.node(summary_id, label, fillcolor=COLORS["group"], shape="box3d")
    for cluster in clusters.values():
        g.subgraph(cluster)
    edges = set()
    for node in snapshot.nodes:
        parent = box(node.id)
        for child, _ in node.edges:
            if child is not None and box(child) != parent and (box(child), parent) not in edges:
                edges.add((box(child), parent))
                g.edge(box(child), parent)
    for out in snapshot.outputs:
        if out.node is None:
            continue
        label = (out.name or f"output {out.index}") + "\n" + fmt_shape(out.shape, out.dtype)
        g.node(f"{prefix}out{out.index}", label, fillcolor=COLORS["output"])
        g.edge(box(out.node), f"{prefix}out{out.index}")
    if show_saved:
        _draw_saved(g, snapshot, box, prefix)


def _label(node):
    lines = [node.name]
    if node.label:
        lines.insert(0 if node.kind == "leaf" else 1, node.label)
    if node.kind == "leaf":
        lines.append(fmt_shape(node.leaf.shape, node.leaf.dtype))
    elif 0 in node.outputs:
        lines.append(fmt_shape(*node.outputs[0]))
    return "\n".join(lines)


def _draw_saved(g, snapshot, box, prefix):
    """Saved tensors as their own nodes, one per tensor (the same memory saved by several
    nodes is one node with several edges)."""
    seen = {}
    for node in snapshot.nodes:
        owner = box(node.id)
        for s in node.saved:
            if not s.is_tensor:
                continue
            key = s.array_id if s.array_id is not None else f"{node.id}:{s.name}"
            if key not in seen:
                seen[key] = f"{prefix}saved{len(seen)}"
                shape = fmt_shape(s.shape, s.dtype) if s.state == "live" else s.state
                extra = f"\n{fmt_bytes(s.nbytes)}" if s.state == "live" else ""
                g.node(seen[key], f"{s.name}\n{shape}{extra}", fillcolor=COLORS["saved"],
                       shape="note")
            g.edge(seen[key], owner, style="dashed", arrowhead="none", color="darkorange")


def _groups(snapshot, expand):
    """node id -> id of the box standing for it, when the graph is too large to read (and not
    --expand): the nodes of one nn.Module call form a box, so do the many nodes one line of
    the user's code made (a loop body), and long single-path chains fold into one box.
    Leaves stay visible."""
    if expand or len(snapshot.nodes) <= READABLE_NODES:
        return {}
    groups = {}
    per_key = {}
    for node in snapshot.nodes:
        if node.kind == "leaf":
            continue
        key = f"module {node.module}" if node.module else (f"line {node.site}" if node.site
                                                             else None)
        if key is not None:
            per_key.setdefault(key, []).append(node)
    for i, (key, members) in enumerate(per_key.items()):
        if len(members) >= MIN_GROUP:
            for member in members:
                groups[member.id] = f"group{i}"
    for node in snapshot.nodes:
        if node.id in groups:
            continue
        run = snapshot.chain_from(node, groups)
        if len(run) > CHAIN_FOLD:
            for member in run:
                groups[member.id] = f"chain_{node.id}"
    return groups


def _group_summaries(snapshot, groups):
    members = {}
    for node in snapshot.nodes:
        rep = groups.get(node.id)
        if rep is not None:
            members.setdefault(rep, []).append(node)
    out = {}
    for rep, nodes in members.items():
        counts = {}
        for n in nodes:
            counts[n.name] = counts.get(n.name, 0) + 1
        top = sorted(counts.items(), key=lambda kv: -kv[1])
        kinds = "\n".join(f"{name} ×{count:,}" for name, count in top[:4])
        if len(top) > 4:
            kinds += f"\n… {len(top) - 4} more kinds"
        first = nodes[0]
        title = (f"module {first.module}" if all(n.module == first.module for n in nodes)
                 and first.module else
                 f"line {first.site}" if all(n.site == first.site for n in nodes)
                 and first.site else "chain")
        out[rep] = (f"{title}\n{len(nodes):,} nodes\n{kinds}", nodes)
    return out


def find_renderer(choice="auto", fmt="svg"):
    """The path of the program that lays the graph out. graphviz-pure (a pip dependency,
    found in this Python environment's scripts folder) first, else `dot` on PATH; PDF needs
    the system `dot`."""
    pure = os.path.join(sysconfig.get_path("scripts"), "graphviz-pure")
    pure = pure if os.path.exists(pure) else shutil.which("graphviz-pure")
    system = shutil.which("dot")
    if choice == "graphviz-pure":
        candidates = [pure]
    elif choice == "dot":
        candidates = [system]
    else:
        candidates = [system] if fmt == "pdf" else [pure, system]
    if fmt == "pdf" and choice != "dot" and not system:
        raise RendererNotFound("PDF needs Graphviz's own `dot`, which is not on PATH (install "
                               "Graphviz, e.g. apt-get install graphviz); graphviz-pure writes "
                               "svg and png, and --format dot needs no renderer.")
    for path in candidates:
        if path:
            return path
    raise RendererNotFound(
        "No Graphviz renderer found: "
        + ("graphviz-pure is not installed in this environment (pip install graphviz-pure)"
           if choice != "dot" else "")
        + (" and " if choice == "auto" else "")
        + ("`dot` is not on PATH (install Graphviz, e.g. apt-get install graphviz)"
           if choice != "graphviz-pure" else "")
        + ". --format dot writes the graph's source without any renderer.")


def render(digraph, fmt, renderer_path, timeout=120):
    """Lay out and draw: the rendered bytes."""
    try:
        done = subprocess.run([renderer_path, f"-T{fmt}"], input=digraph.source.encode(),
                              capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise GradtoolError(f"the renderer {renderer_path} failed: {e}") from None
    if done.returncode != 0:
        raise GradtoolError(f"the renderer {renderer_path} failed (exit {done.returncode}): "
                            f"{done.stderr.decode(errors='replace').strip()[:500]}")
    if not done.stdout:  # never replace a drawing with an empty file
        raise GradtoolError(f"the renderer {renderer_path} exited 0 but wrote nothing "
                            f"(format {fmt}); no file written")
    return done.stdout
