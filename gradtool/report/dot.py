"""The backward DAG as Graphviz, in torchviz's colour language: grey backward nodes, blue
leaves, green outputs, orange saved tensors. Gradients flow upwards in the picture's
opposite direction: edges go from an input's node to the node that consumes it, as torchviz
draws them. Nodes are grouped by module call (layout.py); large graphs collapse boxes rather than shrink."""
import html
import math
import os
import shutil
import subprocess
import sysconfig
import textwrap

import graphviz

from ..engine.errors import GradtoolError
from ..engine.frames import site_location
from . import layout
from .text import fmt_bytes, fmt_shape

COLORS = {"op": "lightgrey", "custom": "lightgrey", "copy_slices": "lightgrey",
          "other": "lightgrey", "leaf": "lightblue", "output": "darkolivegreen1",
          "saved": "orange", "group": "lightgoldenrod1", "fails": "#ffc0c0"}
FAIL_COLOR = "red3"
FONT = "Helvetica"     # one family for every label, clusters and edges included
WRAP_LEAVES = 8        # more leaves than this side by side are wrapped into rows of this many


class RendererNotFound(GradtoolError):
    pass


GRAPH_ATTR = {"fontname": FONT, "fontsize": "11", "nodesep": "0.25", "ranksep": "0.35",
              "pad": "0.2"}
NODE_ATTR = {"style": "filled", "shape": "box", "fontname": FONT, "fontsize": "10",
             "margin": "0.12,0.06", "height": "0.3", "fillcolor": COLORS["op"]}
EDGE_ATTR = {"fontname": FONT, "fontsize": "9", "arrowsize": "0.7", "color": "gray35"}

# Graphviz sizes text with Helvetica's widths; a viewer without Helvetica (or Arial, or
# Liberation Sans) draws it in a wider fallback, DejaVu Sans or Verdana. Boxes are made wide
# enough for those: em per character, at least their width for each class of character.
_NARROW, _WIDE = set(" .,:;'\"|!ilIjft()[]{}r-`"), set("mwMW@%")


def text_width(line, fontsize):
    """Points a line of text takes at most in the common sans-serif fonts."""
    return fontsize * sum(
        0.46 if c in _NARROW else 1.0 if c in _WIDE or ord(c) > 126
        else 0.8 if c.isupper() or c in "#&+<=>^~" else 0.64 for c in line)


def _node(g, name, label, **attrs):
    """A node whose box fits its label in any of those fonts (width is Graphviz's least)."""
    size = float(attrs.get("fontsize", NODE_ATTR["fontsize"]))
    margin = float(NODE_ATTR["margin"].split(",")[0])
    widest = max(text_width(line, size) for line in label.split("\n"))
    g.node(name, label, width=f"{widest / 72 + 2 * margin + 0.1:.2f}", **attrs)


def _frame_label(title, fontsize=float(GRAPH_ATTR["fontsize"])):
    """A frame's title in a cell as wide as it is in those fonts, its text from the left
    edge: Graphviz widens the frame to the cell, whatever font draws it."""
    return (f'<<table border="0" cellpadding="0" cellspacing="0"><tr><td width="'
            f'{math.ceil(text_width(title, fontsize))}" fixedsize="true" align="left">'
            f'{html.escape(title)}</td></tr></table>>')


def build(snapshot, show_saved=False, expand=False, depth=None, diagnoses=()):
    """A graphviz.Digraph of the snapshot, grouped by module call (see layout.py); never
    scaled down: Graphviz draws it at its natural size."""
    g = graphviz.Digraph("backward", graph_attr=GRAPH_ATTR, node_attr=NODE_ATTR,
                         edge_attr=EDGE_ATTR)
    draw(g, snapshot, show_saved, expand, depth=depth, diagnoses=diagnoses)
    return g


def combine(named_snapshots, show_saved=False, expand=False, depth=None):
    """Several targets in one drawing, each in its own frame, ids kept apart by a prefix.
    `named_snapshots`: (name, snapshot) or (name, snapshot, diagnoses)."""
    g = graphviz.Digraph("targets", graph_attr=GRAPH_ATTR, node_attr=NODE_ATTR,
                         edge_attr=EDGE_ATTR)
    for i, (name, snapshot, *diagnoses) in enumerate(named_snapshots):
        frame = graphviz.Digraph(f"cluster_target{i}", graph_attr={"label": _frame_label(name)})
        draw(frame, snapshot, show_saved, expand, prefix=f"t{i}_", depth=depth,
             diagnoses=diagnoses[0] if diagnoses else ())
        g.subgraph(frame)
    return g


def draw(g, snapshot, show_saved=False, expand=False, prefix="", depth=None, diagnoses=(),
         plan=None, within=None, failing=None, tooltips=True):
    """Add the snapshot's nodes and edges to `g` (every id gets `prefix`): open boxes as
    frames, collapsed boxes as one node each. `within`: draw only that box's inside."""
    plan = plan or layout.make_plan(snapshot, depth, expand)
    within = within or plan.root
    failing = failing_nodes(snapshot) if failing is None else failing

    def ident(item):
        return prefix + (item.key if isinstance(item, layout.Box) else item)
    _draw_items(g, within, snapshot, ident, failing, tooltips)
    for tail, head in plan.edges(within):
        names = []
        for end, other in ((tail, head), (head, tail)):
            if not isinstance(end, tuple):
                names.append(ident(end))
                continue
            # a node outside the view: a label beside each end inside, so that no edge
            # crosses the whole view (many consumers of one input, as an RNN's steps)
            stub = f"{prefix}{end[0]}_{end[1]}_{ident(other)}"
            outside = plan.visible(end[1])
            title = outside.title if isinstance(outside, layout.Box) else \
                snapshot.by_id[end[1]].name
            _node(g, stub, ("from " if end[0] == "in" else "to ") + title, shape="plaintext",
                   style="", fontcolor="gray30")
            names.append(stub)
        g.edge(names[0], names[1])
    if within is plan.root:
        _draw_outputs(g, snapshot, plan, ident, prefix)
        _draw_cuts(g, snapshot, plan, ident, prefix, diagnoses)
    if show_saved:
        _draw_saved(g, snapshot, plan, within, ident, prefix)
    return plan


def failing_nodes(snapshot):
    """node id -> the lines saying why backward through it will fail (a saved tensor was
    modified in place after it was saved) or is wrong (its own check failed)."""
    out = {}
    for node in snapshot.nodes:
        if node.problem:
            out.setdefault(node.id, []).append(node.problem)
        for s in node.saved:
            if s.modified:
                where = f" at {site_location(s.modified_at)}" if s.modified_at else ""
                out.setdefault(node.id, []).append(f"✗ {s.name} modified in place{where}")
    return out


def _draw_items(g, box, snapshot, ident, failing, tooltips):
    sources = []
    for item in box.items:
        if isinstance(item, layout.Box):
            if item.collapsed:
                fails = sum(1 for n in item.node_ids() if n in failing)
                label = layout.summary(item) + (f"\n✗ {fails} will fail in backward"
                                                 if fails else "")
                _node(g, ident(item), label, shape="box3d",
                       fillcolor=COLORS["fails"] if fails else COLORS["group"],
                       **({"color": FAIL_COLOR, "fontcolor": FAIL_COLOR} if fails else {}))
            elif item.kind == "repeat":  # open, it is only its members
                _draw_items(g, item, snapshot, ident, failing, tooltips)
            else:
                # a frame of g's own kind: html.py draws into a lighter recorder
                frame = type(g)(f"cluster_{ident(item)}", graph_attr={
                    "label": _frame_label(item.title), "style": "dashed,rounded",
                    "color": "gray50", "margin": "10"})
                _draw_items(frame, item, snapshot, ident, failing, tooltips)
                g.subgraph(frame)
            continue
        node = snapshot.by_id[item]
        fill = COLORS.get(node.kind, COLORS["op"])
        attrs = {} if fill == COLORS["op"] else {"fillcolor": fill}  # grey is the default
        lines = failing.get(item, [])
        if lines:
            attrs.update(fillcolor=COLORS["fails"], color=FAIL_COLOR, penwidth="2",
                         fontcolor=FAIL_COLOR)
        if tooltips:
            attrs["tooltip"] = node.name
        _node(g, ident(item), "\n".join([_label(node)] + lines), **attrs)
        if node.kind == "leaf":
            sources.append(ident(item))
    # a long row of leaves becomes rows of WRAP_LEAVES (invisible edges stack them)
    for a, b in zip(sources, sources[WRAP_LEAVES:]):
        g.edge(a, b, style="invis")


def _label(node):
    lines = [node.name]
    if node.label:
        lines.insert(0 if node.kind == "leaf" else 1, node.label)
    if node.kind == "leaf":
        lines.append(fmt_shape(node.leaf.shape, node.leaf.dtype))
    elif 0 in node.outputs:
        lines.append(fmt_shape(*node.outputs[0]))
    return "\n".join(lines)


def _draw_outputs(g, snapshot, plan, ident, prefix):
    for out in snapshot.outputs:
        label = (out.name or f"output {out.index}") + "\n" + fmt_shape(out.shape, out.dtype)
        if out.node is None:  # cut off from the graph: drawn so its cut can point at it
            _node(g, f"{prefix}out{out.index}", label + "\nno grad", fillcolor="white",
                   style="dashed")
            continue
        _node(g, f"{prefix}out{out.index}", label, fillcolor=COLORS["output"])
        g.edge(ident(plan.visible(out.node)), f"{prefix}out{out.index}")


def cut_diagnoses(diagnoses):
    """The diagnoses that report a cut in the graph (no_grad, detach, inference_mode, an
    input without gradient), read by kind whatever the spelling (output-no-grad, grad_cut)."""
    out = []
    for d in diagnoses:
        get = d.get if isinstance(d, dict) else (lambda k, d=d: getattr(d, k, None))
        kind = str(get("kind") or get("code") or "").replace("_", "-")
        if "no-grad" in kind or "cut" in kind or "detach" in kind:
            out.append((kind, str(get("message") or ""), get("location")))
    return out


def _draw_cuts(g, snapshot, plan, ident, prefix, diagnoses):
    """Each cut as a marker with a dashed red edge to what lost its gradient there: the nodes
    made at the cut's line, else the outputs without grad (or the first output)."""
    at_site = {}
    for node in snapshot.nodes:
        if node.site:
            at_site.setdefault(node.site, []).append(node.id)
    for i, (kind, message, location) in enumerate(cut_diagnoses(diagnoses)):
        marker = f"{prefix}cut{i}"
        text = message if len(message) <= 120 else message[:117] + "..."
        _node(g, marker, "✂ " + textwrap.fill(text, 44)
               + (f"\n{location}" if location else ""), shape="note", fillcolor="white",
               color=FAIL_COLOR, fontcolor=FAIL_COLOR, style="filled,dashed")
        heads = {ident(plan.visible(n)) for n in at_site.get(location, ())} if location else set()
        if not heads:
            heads = {f"{prefix}out{o.index}" for o in snapshot.outputs if o.node is None} or \
                {f"{prefix}out{o.index}" for o in snapshot.outputs[:1]}
        for head in sorted(heads):
            g.edge(marker, head, style="dashed", color=FAIL_COLOR, fontcolor=FAIL_COLOR,
                   label="cut")


def _draw_saved(g, snapshot, plan, within, ident, prefix):
    """Saved tensors of the visible nodes as their own nodes, one per tensor (the same memory
    saved by several nodes is one node with several edges)."""
    seen = {}
    for node_id in within.node_ids():
        owner = plan.visible(node_id, within)
        if isinstance(owner, layout.Box):
            continue
        for s in snapshot.by_id[node_id].saved:
            if not s.is_tensor:
                continue
            key = s.array_id if s.array_id is not None else f"{node_id}:{s.name}"
            if key not in seen:
                seen[key] = f"{prefix}saved{len(seen)}"
                shape = fmt_shape(s.shape, s.dtype) if s.state == "live" else s.state
                extra = f"\n{fmt_bytes(s.nbytes)}" if s.state == "live" else ""
                red = {"color": FAIL_COLOR, "penwidth": "2", "fontcolor": FAIL_COLOR,
                       "fillcolor": COLORS["fails"]} if s.modified else {}
                where = f"\n✗ modified in place at {site_location(s.modified_at)}" \
                    if s.modified and s.modified_at else ""
                _node(g, seen[key], f"{s.name}\n{shape}{extra}{where}",
                       **{"fillcolor": COLORS["saved"], "shape": "note", **red})
            g.edge(seen[key], ident(owner), style="dashed", arrowhead="none",
                   color="darkorange")


def find_renderer(choice="auto"):
    """The path of the program that lays the graph out (`choice`: auto, graphviz-pure or
    dot). graphviz-pure (a pip dependency, found in this Python environment's scripts
    folder) first, else `dot` on PATH."""
    pure = os.path.join(sysconfig.get_path("scripts"), "graphviz-pure")
    pure = pure if os.path.exists(pure) else shutil.which("graphviz-pure")
    candidates = {"graphviz-pure": [pure], "dot": [shutil.which("dot")]}.get(
        choice, [pure, shutil.which("dot")])
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
