"""`gradtool render --format html`: one self-contained page to explore the backward graph.
Graphviz lays out every view at render time: the top view as the static drawing groups it,
and one view per collapsed box, opened; views drawn alike (the blocks of a stack) are laid out
once (_Layouts). The page only shows SVG,
pans, zooms, switches views and reads the node data embedded as JSON: no layout library, no
network."""
import concurrent.futures
import functools
import html
import json
import os
import re

import graphviz

from . import dot, layout
from .text import fmt_bytes, fmt_num, fmt_shape

_SVG = re.compile(rb"<svg\b.*?</svg>", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_FONT_ATTRS = ' font-family="Helvetica,sans-Serif" font-size="10.00"' 


def page(captures, renderer_path, show_saved=False, expand=False, depth=None, reuse=True):
    """The page's bytes, for the captures (snapshot.capture.Capture) of one file's targets.
    `reuse`: views drawn alike (ids aside, digits aside) are laid out once (see _Layouts)."""
    views, nodes = [], {}
    pool = concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1)
    try:
        layouts = _Layouts(pool, renderer_path, reuse)
        _draw_views(captures, show_saved, expand, depth, layouts, views, nodes)
        nodes = {k: _node_data(*args) for k, args in nodes.items()}  # the renderer runs meanwhile
        roots = [v for v, view in enumerate(views) if view["parent"] is None]
        data = _script_json({"targets": [c.target.name for c in captures], "roots": roots,
                             "views": views, "nodes": nodes})
        svgs = layouts.svgs()
    finally:
        pool.shutdown(cancel_futures=True)
    body = "".join(f'<div class="view" id="view{v}" hidden>{svg}</div>'
                   for v, svg in enumerate(svgs))
    title = html.escape(", ".join(c.target.name for c in captures))
    return (_TEMPLATE.replace("%TITLE%", title).replace("%VIEWS%", body)
            .replace("%DATA%", data)).encode()


def _draw_views(captures, show_saved, expand, depth, layouts, views, nodes):
    """Every view drawn (and handed to `layouts`), its data appended to `views`, and what
    `nodes` will show of each node (its arguments to _node_data)."""
    for t, cap in enumerate(captures):
        snap = cap.snapshot
        plan = layout.make_plan(snap, depth, expand)
        failing = dot.failing_nodes(snap)
        opens = {}  # box -> index of the view that opens it
        first = len(views)
        for box in layout.views(plan):
            v = len(views)
            opens[box] = v
            prefix = f"t{t}v{v}_"
            g = _Recorder("view")
            dot.draw(g, snap, show_saved, prefix=prefix, plan=plan, within=box,
                     diagnoses=cap.diagnostics, failing=failing, tooltips=False)
            layouts.add(_Drawing(g))
            parent = box.parent
            while parent is not None and parent not in opens:
                parent = parent.parent
            clusters, shown = {}, []
            _open_inside(box, prefix, clusters, shown)
            views.append({"target": t, "title": box.title or cap.target.name,
                          "parent": opens.get(parent, None) if box is not plan.root else None,
                          "prefix": prefix,
                          "collapsed": {prefix + b.key: b for b in layout.collapsed_within(box)},
                          "clusters": clusters})
            for n in shown:
                nodes[f"t{t}:{n}"] = (snap.by_id[n], v, prefix + n, failing.get(n, ()))
        for v in range(first, len(views)):  # a collapsed box opens the view laid out for it
            views[v]["collapsed"] = {k: opens[b] for k, b in views[v]["collapsed"].items()}


def _open_inside(box, prefix, clusters, shown):
    """What a view of `box` draws in each open frame inside it: `clusters` gets frame id ->
    ids of its nodes and collapsed boxes (those of frames inside it too), in the order of the
    graph; `shown` gets the nodes the view draws themselves. Returns box's own such ids."""
    out = []
    for item in box.items:
        if not isinstance(item, layout.Box):
            out.append(prefix + item)
            shown.append(item)
        elif item.collapsed:
            out.append(prefix + item.key)
        else:
            key = prefix + item.key
            clusters[key] = None  # the frames in the order Box.boxes() gives them
            clusters[key] = _open_inside(item, prefix, clusters, shown)
            out.extend(clusters[key])
    return out


class _Layouts:
    """Every view's SVG. Views drawn alike (the same DOT once ids are numbered in order and
    digits set to 0: the blocks of a stack, the steps of a loop) are laid out once and the
    SVG reused with each view's own ids and texts; Helvetica's digits all have one width, so
    the layout is the one the view would get on its own. Each new likeness is laid out as
    soon as it is drawn, by the renderer in its own process, while the page is drawn on."""

    def __init__(self, pool, renderer_path, reuse=True):
        self.pool, self.renderer_path, self.reuse = pool, renderer_path, reuse
        self.drawings, self.model, self.first, self.templates = [], [], {}, {}

    def add(self, drawing):
        i = len(self.drawings)
        self.drawings.append(drawing)
        self.model.append(self.first.setdefault(drawing.key if self.reuse else i, i))
        if self.model[i] == i:
            self.templates[i] = self._lay_out(drawing)

    def _lay_out(self, drawing):
        return self.pool.submit(_template, drawing.source, self.renderer_path)

    def svgs(self):
        templates = {i: t.result() for i, t in self.templates.items()}
        svgs = [templates[m].fill(self.drawings[m], d) for d, m in zip(self.drawings, self.model)]
        redo = {i: self._lay_out(self.drawings[i])  # texts the SVG spells otherwise
                for i, svg in enumerate(svgs) if svg is None}
        for i, template in redo.items():
            svgs[i] = template.result().fill(self.drawings[i], self.drawings[i])
        return svgs


def _template(source, renderer_path):
    svg = _SVG.search(dot.render(_Source(source), "svg", renderer_path))
    if svg is None:
        raise dot.GradtoolError(f"the renderer {renderer_path} wrote no SVG for a view")
    return _Template(_COMMENT.sub("", svg.group(0).decode()).replace(_FONT_ATTRS, ""))


class _Source:
    def __init__(self, source):
        self.source = source


class _Recorder:
    """Stands for a graphviz.Digraph in dot.draw: keeps the calls (quoting every attribute
    as it goes was most of the page's time); _Drawing writes them as DOT."""

    def __init__(self, name, graph_attr=None):
        self.name, self.graph_attr, self.body = name, graph_attr or {}, []

    def node(self, name, label, **attrs):
        self.body.append(("node", name, label, attrs))

    def edge(self, tail, head, **attrs):
        self.body.append(("edge", tail, head, attrs))

    def subgraph(self, frame):
        self.body.append(("frame", frame))


class _Drawing:
    """A view as DOT with its ids numbered in order of appearance ("@3@"), so that views
    drawn alike have one source; `key` also sets the labels' digits to 0."""

    def __init__(self, recorder):
        self.ids, self.labels = {}, []  # real id -> number; label texts in order
        self._parts, self._label_at = [], []
        self._write(recorder, top=True)
        self.source = "".join(self._parts)
        for i in self._label_at:
            self._parts[i] = _DIGITS.sub("0", self._parts[i])
        self.key = "".join(self._parts)
        self.ids = list(self.ids)
        self.lines = "\n".join(self.labels).split("\n")  # as the SVG's <text>s hold them
        del self._parts, self._label_at

    def _id(self, name, before=""):
        return f'"{before}@{self.ids.setdefault(name, len(self.ids))}@"'

    def _attrs(self, attrs, label=None):
        out = self._parts
        if label is None:
            label = attrs.get("label")
            attrs = {k: v for k, v in attrs.items() if k != "label"}
        if label is not None:
            self.labels.append(label)
            out.append(" label=")
            self._label_at.append(len(out))
            out.append(_quote_label(label))
        if attrs:
            out.append(_attr_list(tuple(attrs.items())))

    def _write(self, g, top=False):
        out = self._parts
        if top:
            out.append("digraph view {\n")
            for kind, attrs in (("graph", dot.GRAPH_ATTR), ("node", dot.NODE_ATTR),
                                ("edge", dot.EDGE_ATTR)):
                out.append(kind + " [")
                self._attrs(attrs)
                out.append("]\n")
        else:
            out.append(f'subgraph {self._id(g.name[len("cluster_"):], "cluster_")} {{\ngraph [')
            self._attrs(g.graph_attr)
            out.append("]\n")
        for entry in g.body:
            if entry[0] == "node":
                _, name, label, attrs = entry
                out.append(self._id(name) + " [")
                self._attrs(attrs, label)
                out.append("]\n")
            elif entry[0] == "edge":
                _, tail, head, attrs = entry
                out.append(f"{self._id(tail)} -> {self._id(head)} [")
                self._attrs(attrs)
                out.append("]\n")
            else:
                self._write(entry[1])
        out.append("}\n")


class _Template:
    """A laid-out view's SVG cut where views drawn alike differ: the ids in <title>s and the
    texts; fill() puts in another view's."""

    def __init__(self, svg):
        self.parts, self.texts, at = [], set(), 0
        for m in _SLOT.finditer(svg):
            title, text = m.group(1), m.group(2)
            start = m.start(1) if title is not None else m.start(2)
            self.parts.append(svg[at:start])
            if title is not None:
                for i, piece in enumerate(_ID.split(title)):  # text, id number, text, ...
                    self.parts.append(int(piece) if i % 2 else piece)
                at = m.end(1)
            else:
                self.parts.append((text,))
                self.texts.add(text)
                at = m.end(2)
        self.parts.append(svg[at:])

    def fill(self, model, drawing):
        """The SVG for `drawing`, laid out as `model` (drawn alike); None if the texts that
        differ cannot be told apart (one line of the model's is two different lines of the
        drawing's) or are not found as the renderer spelled them."""
        texts = {}
        if drawing is not model:
            pairs = set(zip(model.lines, drawing.lines))
            if len(pairs) != len(set(model.lines)):
                return None
            texts = {_svg_text(a): _svg_text(b) for a, b in pairs if a != b}
            if not texts.keys() <= self.texts:
                return None
        ids, out = drawing.ids, []
        for part in self.parts:
            if part.__class__ is str:
                out.append(part)
            elif part.__class__ is int:
                out.append(ids[part])
            else:
                out.append(texts.get(part[0], part[0]))
        return "".join(out)


@functools.lru_cache(maxsize=1 << 16)
def _svg_text(text):
    """A text as Graphviz writes it in SVG."""
    for a, b in _SVG_ESCAPES:
        text = text.replace(a, b)
    return text


_SVG_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#39;"),
                ("-", "&#45;"))
_DIGITS = re.compile(r"\d")
_ID = re.compile(r"@(\d+)@")
_SLOT = re.compile(r"<title>(.*?)</title>|<text\b[^>]*>(.*?)</text>", re.S)


def _quote_label(text):
    """graphviz's quoting (HTML-like labels kept, quotes escaped), quick for plain text."""
    if '"' in text or "\\" in text or text[:1] == "<":
        return graphviz.quoting.quote(text)
    return f'"{text}"'


@functools.lru_cache(maxsize=1024)
def _attr_list(attrs):
    """ k=v ... for the few attribute sets that come back (colours, styles)."""
    return "".join(f" {k}={graphviz.quoting.quote(v)}" for k, v in attrs)


def _node_data(node, view, element, fails):
    saved = []
    for s in node.saved:
        row = {"name": s.name}
        if not s.is_tensor:
            row["value"] = s.value
        elif s.state != "live":
            row["value"] = s.state
        else:
            row.update(shape=_shape(s.shape, s.dtype), dtype=s.dtype,
                       version=f"{s.version_saved} / {s.version_now}", bytes=fmt_bytes(s.nbytes),
                       stats=f"min {fmt_num(s.min)}, mean {fmt_num(s.mean)}, "
                             f"max {fmt_num(s.max)}")
            if s.is_output:
                row["output"] = True
        if s.modified:
            row["modified"] = "modified in place" + (f" at {dot._site(s.modified_at)}"
                                                     if s.modified_at else "")
        saved.append(row)
    data = {"id": node.id, "name": node.name, "kind": node.kind, "label": node.label,
            "module": _module_text(node.module_path),
            "site": node.site, "view": view, "el": element, "saved": saved,
            "outputs": [_shape(*node.outputs[k]) for k in sorted(node.outputs)],
            "metadata": node.metadata, "fails": list(fails)}
    if node.leaf is not None:
        leaf = node.leaf
        data["leaf"] = {"shape": _shape(leaf.shape, leaf.dtype),
                        "requires_grad": leaf.requires_grad, "grad norm": fmt_num(leaf.grad_norm)}
    return data


def _shape(shape, dtype):
    return _shape_text(tuple(shape), dtype)


# the same few shapes and module paths come back for thousands of nodes
_shape_text = functools.lru_cache(maxsize=4096)(fmt_shape)


@functools.lru_cache(maxsize=4096)
def _module_text(module_path):
    return " › ".join(name for _, name, _ in module_path) or None


def _script_json(data):
    """JSON safe inside <script>: no `</` can end the element early."""
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>gradtool: %TITLE%</title>
<style>
body{margin:0;font:13px Helvetica,Arial,sans-serif;display:flex;height:100vh;overflow:hidden}
#main{flex:1;display:flex;flex-direction:column;min-width:0}
#bar{padding:6px 10px;border-bottom:1px solid #ccc;display:flex;gap:10px;align-items:center}
#crumbs a{color:#06c;cursor:pointer}
#search{width:260px;padding:3px}
#results{position:absolute;top:34px;right:330px;background:#fff;border:1px solid #ccc;
  max-height:50vh;overflow:auto;z-index:2}
#results div{padding:3px 8px;cursor:pointer}#results div:hover{background:#eef}
#canvas{flex:1;overflow:hidden;position:relative;cursor:grab;background:#fafafa}
#stage{transform-origin:0 0;position:absolute}
#side{width:320px;border-left:1px solid #ccc;padding:8px;overflow:auto}
#side table{border-collapse:collapse;width:100%}#side td{border-top:1px solid #eee;padding:2px 4px;vertical-align:top}
.node text{font:10px Helvetica,sans-serif}.node,.cluster{cursor:pointer}.hit polygon,.hit path{stroke:#e00;stroke-width:4}
.folded>polygon{fill:#ffeaa0}.gone{display:none}.bad{color:#c00}
</style></head><body>
<div id="main"><div id="bar"><span id="crumbs"></span><span style="flex:1"></span>
<input id="search" placeholder="search: node, variable or module" autocomplete="off">
<button id="fit">fit</button></div><div id="results" hidden></div>
<div id="canvas"><div id="stage">%VIEWS%</div></div></div>
<div id="side"><b>Click a node</b> to see what it saved; click a grey-yellow box to open it,
a dashed frame to fold it; drag to pan, wheel to zoom.</div>
<script id="data" type="application/json">%DATA%</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
for (const g of document.querySelectorAll(".node,.cluster"))  // Graphviz titles them by id
  g.id = g.querySelector("title").textContent.replace(/^cluster_/, "");
const byEl = {};  // SVG element id -> node key
for (const k in D.nodes) byEl[D.nodes[k].el] = k;
let current = 0, scale = 1, x = 0, y = 0;
const stage = document.getElementById("stage"), canvas = document.getElementById("canvas");
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
function place() { stage.style.transform = `translate(${x}px,${y}px) scale(${scale})`; }
function fit() {
  const svg = document.querySelector(`#view${current} svg`);
  const w = svg.width.baseVal.value, h = svg.height.baseVal.value;
  scale = Math.min(1, canvas.clientWidth / w, canvas.clientHeight / h);
  x = (canvas.clientWidth - w * scale) / 2; y = 10; place();
}
function show(v) {
  document.getElementById(`view${current}`).hidden = true;
  current = v; document.getElementById(`view${v}`).hidden = false;
  const trail = [], link = p => `<a data-view="${p}">${esc(D.views[p].title)}</a>`;
  for (let p = v; p !== null; p = D.views[p].parent) trail.unshift(p);
  const targets = D.roots.length > 1 ?  // every target's top, the current one in bold
    D.roots.map(r => r === trail[0] ? `<b>${link(r)}</b>` : link(r)).join(" | ") : link(trail[0]);
  document.getElementById("crumbs").innerHTML = [targets, ...trail.slice(1).map(link)].join(" › ");
  fit();
}
function details(key) {
  const n = D.nodes[key];
  let h = `<h3>${esc(n.name)}</h3><table>`;
  const row = (k, v) => { if (v !== null && v !== undefined && v !== "") h += `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`; };
  row("variable", n.label); row("module", n.module); row("line", n.site);
  row("output", n.outputs.join(", ")); row("id", n.id);
  if (n.leaf) for (const k in n.leaf) row(k, n.leaf[k]);
  for (const k in n.metadata) row(`metadata[${k}]`, n.metadata[k]);
  h += "</table>";
  for (const f of n.fails) h += `<p class="bad">${esc(f)}</p>`;
  if (n.saved.length) {
    h += "<h4>saved for backward</h4>";
    for (const s of n.saved) {
      h += `<table class="saved"><tr><td colspan=2><b>${esc(s.name)}</b></td></tr>`;
      for (const k of ["value", "shape", "dtype", "version", "bytes", "stats"]) if (s[k] !== undefined) {
        h += `<tr><td>${k === "version" ? "version saved / now" : k}</td><td>${esc(s[k])}</td></tr>`;
      }
      if (s.output) h += "<tr><td colspan=2>the node's own output</td></tr>";
      if (s.modified) h += `<tr><td colspan=2 class="bad">${esc(s.modified)}</td></tr>`;
      h += "</table>";
    }
  }
  document.getElementById("side").innerHTML = h;
}
function fold(cluster) {  // an open frame folds in place: its inside and inner edges hidden
  const inside = new Set(D.views[current].clusters[cluster.id]);
  const folded = cluster.classList.toggle("folded");
  const view = document.getElementById(`view${current}`);
  for (const id of inside) { const e = document.getElementById(id); if (e) e.classList.toggle("gone", folded); }
  for (const e of view.querySelectorAll(".edge")) {
    const [a, b] = e.querySelector("title").textContent.split("->");
    if (inside.has(a) && inside.has(b)) e.classList.toggle("gone", folded);
  }
}
function focus(key) {
  const n = D.nodes[key];
  show(n.view);
  for (const e of document.querySelectorAll(".hit")) e.classList.remove("hit");
  const el = document.getElementById(n.el); el.classList.add("hit");
  const box = el.getBBox(), svg = el.ownerSVGElement, m = el.getCTM(), r = svg.getCTM();
  scale = 1;
  const cx = (m.e - r.e) + (box.x + box.width / 2) * m.a, cy = (m.f - r.f) + (box.y + box.height / 2) * m.d;
  x = canvas.clientWidth / 2 - cx; y = canvas.clientHeight / 2 - cy; place();
  details(key);
}
stage.addEventListener("click", ev => {
  const g = ev.target.closest(".node,.cluster");
  if (!g) return;
  const view = D.views[current];
  if (g.id in view.collapsed) show(view.collapsed[g.id]);
  else if (g.id in byEl) details(byEl[g.id]);
  else if (g.id in view.clusters) fold(g);
});
document.getElementById("crumbs").addEventListener("click", ev => {
  const v = ev.target.dataset.view; if (v !== undefined) show(Number(v));
});
document.getElementById("fit").addEventListener("click", fit);
const search = document.getElementById("search"), results = document.getElementById("results");
search.addEventListener("input", () => {
  const q = search.value.trim().toLowerCase();
  if (!q) { results.hidden = true; return; }
  const hits = [];
  for (const k in D.nodes) {
    const n = D.nodes[k];
    if ([n.name, n.label, n.module, n.id].some(t => t && t.toLowerCase().includes(q))) hits.push(k);
    if (hits.length >= 50) break;
  }
  results.innerHTML = hits.map(k => { const n = D.nodes[k];
    return `<div data-key="${esc(k)}">${esc(n.name)} ${esc(n.label || "")} <i>${esc(n.module || "")}</i></div>`; }).join("") || "<div>no match</div>";
  results.hidden = false;
});
results.addEventListener("click", ev => {
  const d = ev.target.closest("[data-key]"); if (d) { results.hidden = true; focus(d.dataset.key); }
});
canvas.addEventListener("wheel", ev => {
  ev.preventDefault();
  const k = Math.exp(-ev.deltaY / 500), r = canvas.getBoundingClientRect();
  const px = ev.clientX - r.left, py = ev.clientY - r.top;
  x = px - (px - x) * k; y = py - (py - y) * k; scale *= k; place();
}, {passive: false});
let drag = null;
canvas.addEventListener("mousedown", ev => { drag = [ev.clientX - x, ev.clientY - y]; });
window.addEventListener("mousemove", ev => { if (drag) { x = ev.clientX - drag[0]; y = ev.clientY - drag[1]; place(); } });
window.addEventListener("mouseup", () => { drag = null; });
show(0);
</script></body></html>
"""
