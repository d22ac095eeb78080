"""`gradtool render --format html`: one self-contained page to explore the backward graph,
drawn in the browser by cytoscape.js (vendored in report/vendor/ with its licences; no
network) and laid out by dagre, frame by frame, as the user folds and opens boxes. The page carries the plan
of layout.py (boxes, which are open, which open together), every node with what inspect
knows of it, and the edges with the shapes they carry; its script computes what is visible."""
import base64
import functools
import gzip
import html
import itertools
import json
import os
import re
import types
import uuid
import zlib

from ..capture.graph import collector_paused
from ..engine.frames import site_location
from . import dot, layout
from .numbers import fmt_num
from .text import fmt_bytes, fmt_shape

VENDOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor")
SCRIPTS = ("cytoscape.min.js", "dagre.min.js")


def page(captures, show_saved=False, expand=False, depth=None):
    """The page's bytes, for the captures (checks.inspection.Capture, or anything with
    .target.name, .snapshot and .diagnostics) of one file's targets."""
    return fill(shell(), title(captures), data(captures, show_saved, expand, depth)).encode()


def data(captures, show_saved=False, expand=False, depth=None):
    """What the page shows of these captures: its %DATA%, packed. Each target's boxes, edges
    and nodes are encoded and compressed a few hundred at a time as they are made: a
    20,000-node graph's data is 10 MB of JSON and three times that as Python objects (the
    encoder's pieces of one call on the boxes and edges alone: 20 MB), none of which need be
    held at once."""
    # (its boxes, rows and the encoder's pieces live until it is written: the collector's
    # passes over them, most of them full, were a third of a 20,000-node page's time)
    with collector_paused():
        return _packed(captures, show_saved, expand, depth)


def _packed(captures, show_saved, expand, depth):
    gz = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip stream, as DecompressionStream reads
    out = []

    def emit(text):
        out.append(gz.compress(text.encode()))
    emit('{"targets":[')
    for k, cap in enumerate(captures):
        plan = layout.make_plan(cap.snapshot, depth, expand)
        target = _target(cap, plan, show_saved)
        for i, (key, value) in enumerate(target.items()):
            emit(("," if k and not i else "") + ("{" if not i else ",") + _dumps(key) + ":")
            if not isinstance(value, (list, types.GeneratorType)):
                emit(_dumps(value))
                continue
            # one encoder call and one compression call for a few hundred items (per item,
            # those calls' own overhead was a third of the page's time)
            emit("[")
            items = iter(value)
            for j, batch in enumerate(iter(lambda: list(itertools.islice(items, 500)), [])):
                emit(("," if j else "") + _dumps(batch)[1:-1])
            emit("]")
        emit("}")
        plan.unlink()
    emit("]}")
    out.append(gz.flush())
    return base64.b64encode(b"".join(out)).decode()


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def title(captures):
    """The page's %TITLE%: the targets' names, escaped for HTML."""
    return html.escape(", ".join(c.target.name for c in captures))


@functools.lru_cache(maxsize=1)
def shell():
    """The page without a graph: the libraries, styles and script, with %TITLE% and %DATA%
    where a graph's title and data go. A notebook sends it once and fills it in the browser
    for each graph (the libraries are most of a page's bytes)."""
    # without indentation and comments (every notebook carries the shell): whole-line ones,
    # and those after code that ends a statement, a block or an argument
    compact = re.sub(r"^//.*\n", "", re.sub(r"^[ \t]+", "", _TEMPLATE, flags=re.M), flags=re.M)
    compact = re.sub(r"(?<=[;{},)(\]])[ \t]+//[^\n]*$", "", compact, flags=re.M)
    return compact.replace("%PAIR_COLUMNS%", json.dumps(PAIR_COLUMNS)).replace(
        "%VENDOR%", _vendor())


def fill(shell_text, title_text, data_text):
    """The page: the shell with a graph's title and data in their places (the first of each;
    the libraries' code never holds either placeholder)."""
    return shell_text.replace("%TITLE%", title_text, 1).replace("%DATA%", data_text, 1)


def unpack(text):
    """data's inverse (for tests and tools that read a page's data)."""
    return json.loads(gzip.decompress(base64.b64decode(text)))


def notebook_output(svg, title_text, data_text, carry_shell):
    """A graph as a notebook's HTML output: the static SVG, which shows wherever the notebook
    is read (untrusted, nbviewer, GitHub: no script needed), and, where scripts run, a button
    that replaces it with the explorer. The explorer's page is filled in the browser from the
    shell, which only the output with `carry_shell` holds (packed: the libraries are 600 KB);
    the others find it in the notebook's page, whichever output is shown first, and keep it
    in a window global."""
    uid = uuid.uuid4().hex
    shell_part = (f'<script type="application/gzip;base85" class="gradtool-explorer-shell">'
                  f'{_packed_shell()}</script>' if carry_shell else "")
    return (f'<div id="gradtool-{uid}" class="gradtool-graph">'
            f'<div class="gradtool-static">{_compact_svg(svg)}</div>'
            f'<script type="text/plain" class="gradtool-title">{title_text}</script>'
            f'<script type="application/gzip;base64" class="gradtool-data">{data_text}</script>'
            f'{shell_part}<script>{_notebook_script().replace("%ID%", uid)}</script></div>')


def _compact_svg(svg):
    """Graphviz's SVG as an HTML output holds it: no XML prologue or comments, no line breaks
    between elements (a notebook keeps every byte of its outputs)."""
    svg = svg[svg.find("<svg"):] if "<svg" in svg else svg
    return re.sub(r">\s+<", "><", re.sub(r"<!--.*?-->", "", svg, flags=re.S))


# base85 (Python's alphabet, `<` written `.`: no `</script` or `<!--` inside the script
# element): the shell is the notebook's largest output, and base64 would make it 7% larger
_B85 = ("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~")
_B85_IN_HTML = str.maketrans("<", ".")


@functools.lru_cache(maxsize=1)
def _packed_shell():
    """The shell gzipped, in base85 (the output's script decodes it)."""
    raw = gzip.compress(shell().encode(), compresslevel=9, mtime=0)
    return base64.b85encode(raw).decode().translate(_B85_IN_HTML)


@functools.lru_cache(maxsize=1)
def _notebook_script():
    return _NOTEBOOK_SCRIPT.replace("%B85%", _B85.translate(_B85_IN_HTML))


# An output's script: the button, and the shell found (in this output or another) and
# unpacked once per page. Without the shell (its output deleted, the kernel not restarted
# since), the SVG stays and a line says how to get the explorer.
_NOTEBOOK_SCRIPT = """(function () {
  const root = document.getElementById("gradtool-%ID%");
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  async function unpack(text) {  // base85 (html.py's _packed_shell) of gzipped text
    const digits = "%B85%";
    text = text.trim();
    const padding = (5 - text.length % 5) % 5;
    text += "~".repeat(padding);
    const bytes = new Uint8Array(text.length / 5 * 4);
    for (let i = 0, o = 0; i < text.length; i += 5, o += 4) {
      let n = 0;
      for (let k = 0; k < 5; k++) n = n * 85 + digits.indexOf(text[i + k]);
      bytes[o] = n >>> 24; bytes[o + 1] = (n >>> 16) & 255;
      bytes[o + 2] = (n >>> 8) & 255; bytes[o + 3] = n & 255;
    }
    const stream = new Blob([bytes.subarray(0, bytes.length - padding)]).stream()
      .pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).text();
  }
  function shell() {
    if (!window.gradtoolExplorerShell) {
      const carrier = document.querySelector("script.gradtool-explorer-shell");
      if (carrier) window.gradtoolExplorerShell = unpack(carrier.textContent);
    }
    return window.gradtoolExplorerShell;
  }
  shell();
  const button = document.createElement("button");
  button.className = "gradtool-explore";
  button.textContent = "explore: fold modules, search, click a node";
  button.onclick = async function () {
    const page = shell();
    if (!page) {
      button.replaceWith("The explorer comes with the first graph a kernel draws, and that " +
        "output is gone: restart the kernel and run again, or open graph.save('graph.html').");
      return;
    }
    const title = root.querySelector("script.gradtool-title").textContent;
    const data = root.querySelector("script.gradtool-data").textContent;
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.style.cssText = "width:100%;height:640px;border:1px solid #ccc";
    frame.srcdoc = (await page).replace("%TITLE%", () => title).replace("%DATA%", () => data);
    root.querySelector(".gradtool-static").replaceWith(frame);
    button.remove();
  };
  root.insertBefore(button, root.firstChild);
})();"""


def _vendor():
    """The libraries, inline, after their licences (a comment)."""
    with open(os.path.join(VENDOR, "LICENSES.txt"), encoding="utf-8") as f:
        parts = ["<!--\n" + f.read().replace("--", "- -") + "-->"]
    for name in SCRIPTS:
        with open(os.path.join(VENDOR, name), encoding="utf-8") as f:
            text = f.read().replace("</script", "<\\/script")
        # a source map the page does not carry: no request for it, even with devtools open
        text = "\n".join(line for line in text.split("\n")
                         if not line.startswith("//# sourceMappingURL="))
        parts.append(f"<script>{text}</script>")
    return "\n".join(parts)


def _target(cap, plan, show_saved):
    """One target's part of the page, drawn as `plan` (layout.make_plan of its snapshot):
    boxes, nodes, edges, outputs, cuts."""
    snap = cap.snapshot
    boxes = [plan.root, *plan.root.boxes()]
    index = {b: i for i, b in enumerate(boxes)}
    inner_open = _inner_open(plan, index)  # read before the views change the flags
    failing = dot.failing_nodes(snap)
    shapes = {}  # shape text -> its number in `shapes`, the same few for thousands of edges

    def shape_of(node_id, nr=0):
        node = snap.by_id[node_id]
        out = (node.leaf.shape, node.leaf.dtype) if node.leaf is not None else \
            node.outputs.get(nr)
        return -1 if out is None else shapes.setdefault(_shape(*out), len(shapes))
    edges = [[tail, n.id, shape_of(tail, nr)] for n in snap.nodes
             for tail, nr in dict.fromkeys((c, nr) for c, nr in n.edges if c is not None)]
    params, ins, outs = _box_facts(plan, boxes, index, snap, edges)
    box_rows = []
    for i, b in enumerate(boxes):
        row = {"title": b.title or cap.target.name, "kind": b.kind, "n": b.n_nodes,
               "parent": index[b.parent] if b.parent is not None else None,
               "open": not b.collapsed, "opens": inner_open.get(i, []),
               "summary": _box_summary(b, params[i], ins[i], outs[i], failing)}
        if b.kind == "module":
            row["module"] = b.module[0]
        if b.kind in ("module", "repeat"):  # boxes of one kind open together (the folding rule)
            row["alike"] = str(layout._kind_of(b))
        box_rows.append(row)
    located = getattr(cap, "localized", None)  # the node to blame, when localisation ran

    def nodes():  # made as they are packed (data)
        for nid in plan.order:
            data = _node_data(snap.by_id[nid], failing.get(nid, ()))
            data["box"] = index[plan.box_of[nid]]
            if located is not None and nid == located.node:
                data["wrong"] = _wrong_node(located)
            yield data
    outputs = [{"id": f"out{o.index}", "node": o.node,
                "text": (o.name or f"output {o.index}") + "\n" + fmt_shape(o.shape, o.dtype)
                + ("" if o.node is not None else "\nno grad")} for o in snap.outputs]
    return {"name": cap.target.name, "boxes": box_rows, "nodes": nodes(), "edges": edges,
            "shapes": list(shapes), "outputs": outputs, "show_saved": show_saved,
            "cuts": _cuts(snap, cap.diagnostics)}


def _inner_open(plan, index):
    """For each box collapsed in some view: the boxes inside it that open with it (as few
    levels collapsed as keep it readable, layout.views)."""
    out = {}
    for box in layout.views(plan):
        if box is not plan.root:
            out[index[box]] = [index[b] for b in box.boxes() if not b.collapsed]
    return out


def _box_facts(plan, boxes, index, snap, edges):
    """Per box: parameter count (the elements of the leaves inside: a module's parameters
    sit in its box), and the shapes of what comes in and goes out (edge index lists)."""
    params = [0] * len(boxes)
    holders = {}  # box -> the boxes holding it, itself included, innermost first
    for box in boxes:  # (a box's parent comes before it)
        holders[box] = [box] + (holders[box.parent] if box.parent is not None else [])
    for node in snap.nodes:
        if node.leaf is not None and node.leaf.requires_grad:
            n = 1
            for d in node.leaf.shape:
                n *= d
            for b in holders[plan.box_of[node.id]]:
                params[index[b]] += n
    ins, outs = [dict() for _ in boxes], [dict() for _ in boxes]
    for tail, head, shape in edges:
        tails = holders[plan.box_of[tail]]
        heads = holders[plan.box_of[head]]
        inside_tail = set(tails)
        for b in heads:
            if b in inside_tail:
                break
            ins[index[b]][shape] = ins[index[b]].get(shape, 0) + 1
        inside_head = set(heads)
        for b in tails:
            if b in inside_head:
                break
            outs[index[b]][shape] = outs[index[b]].get(shape, 0) + 1
    return params, ins, outs


def _box_summary(box, params, ins, outs, failing):
    """The text of a collapsed box: layout's summary, with its parameters and the shapes in
    and out (shape numbers; the page spells them)."""
    fails = sum(1 for n in box.node_ids() if n in failing) if failing else 0
    return {"text": layout.summary(box) + (f"\n✗ {fails} will fail in backward" if fails else ""),
            "params": params, "fails": fails,
            "ins": sorted(ins, key=lambda s: -ins[s])[:2],
            "outs": sorted(outs, key=lambda s: -outs[s])[:2]}


def _cuts(snap, diagnoses):
    """The cuts inspect found, each with the nodes (or outputs) that lost their gradient
    there, as dot.py draws them."""
    at_site = {}
    for node in snap.nodes:
        if node.site:
            at_site.setdefault(node.site, []).append(node.id)
    out = []
    for kind, message, location in dot.cut_diagnoses(diagnoses):
        heads = sorted(at_site.get(location, ())) if location else []
        if not heads:
            heads = [f"out{o.index}" for o in snap.outputs if o.node is None] or \
                [f"out{o.index}" for o in snap.outputs[:1]]
        text = message if len(message) <= 120 else message[:117] + "..."
        out.append({"text": "✂ " + text + (f"\n{location}" if location else ""),
                    "heads": heads})
    return out


def _node_data(node, fails):
    """What the page shows of a node; fields left out when empty (20,000 nodes add up)."""
    data = {"id": node.id, "name": node.name}
    if node.kind != "op":
        data["kind"] = node.kind
    saved = []
    for s in node.saved:
        if not s.is_tensor:
            saved.append(_plain_row(s.name, s.value))
            continue
        row = {"name": s.name}
        if s.state != "live":
            row["value"] = s.state
        else:
            row.update(shape=_shape(s.shape, s.dtype), dtype=s.dtype,
                       version=f"{s.version_saved} / {s.version_now}", bytes=_bytes(s.nbytes),
                       stats=f"min {fmt_num(s.min)}, mean {fmt_num(s.mean)}, "
                             f"max {fmt_num(s.max)}")
            if s.is_output:
                row["output"] = True
        if s.modified:
            row["modified"] = "modified in place" + (f" at {site_location(s.modified_at)}"
                                                     if s.modified_at else "")
        saved.append(row)
    if node.label:
        data["label"] = node.label
    if node.site:
        data["site"] = node.site
    if saved:
        data["saved"] = saved
    if node.outputs:
        data["out"] = [_shape(*node.outputs[k]) for k in sorted(node.outputs)]
    if node.metadata:
        data["metadata"] = node.metadata
    if fails:
        data["fails"] = list(fails)
    if node.leaf is not None:
        leaf = node.leaf
        data["leaf"] = {"shape": _shape(leaf.shape, leaf.dtype),
                        "requires_grad": leaf.requires_grad, "grad norm": fmt_num(leaf.grad_norm)}
    return data


@functools.lru_cache(maxsize=4096)
def _plain_row(name, value):
    """A saved value that is no tensor (a dim, an exponent): the same few rows for thousands
    of nodes, each made once (the encoder only reads them)."""
    return {"name": name, "value": value}


def _wrong_node(located):
    """What gradcheck prints of the node to blame (checks.localize.Localized): the call, its
    line and module, the inputs whose gradient is wrong, its own check's pair table, why."""
    report = located.report
    return {"call": located.called, "line": located.location, "module": located.module,
            "inputs": located.wrong_inputs(), "reason": located.reason(),
            "pairs": [] if report is None else [_pair_row(report, p) for p in report.pairs]}


PAIR_COLUMNS = ("output", "input", "max abs error", "max rel error",
                "there: numerical vs analytical", "result")  # the CLI's pair table


def _pair_row(report, pair):
    shown = pair.recheck or pair  # fast mode: the pair redone in full mode, if it was
    worst, where = shown.worst or {}, ""
    if worst:
        where = (f"in{list(worst.get('input_element', ()))} → "
                 f"out{list(worst.get('output_element', ()))}: "
                 f"{fmt_num(worst.get('numerical'))} vs {fmt_num(worst.get('analytical'))}")
    elif shown.projections:  # fast mode: the projection farthest from agreeing
        k, p = max(enumerate(shown.projections), key=lambda kp: kp[1]["ratio"])
        where = f"projection {k}: {fmt_num(p['numerical'])} vs {fmt_num(p['analytical'])}"
    described = next((i for i in report.inputs if i.get("position") == pair.input_position), {})
    shape = described.get("shape")
    label = report.input_label(pair) + (
        "" if shape is None else " " + _shape(shape, described.get("dtype", "")))
    return [report.output_label(pair), label, fmt_num(shown.max_abs_error),
            fmt_num(shown.max_rel_error), where, "ok" if shown.passed else "FAIL"]


def _shape(shape, dtype):
    return _shape_text(tuple(shape), dtype)


# the same few shapes, module paths and sizes come back for thousands of nodes
_shape_text = functools.lru_cache(maxsize=4096)(fmt_shape)
_bytes = functools.lru_cache(maxsize=4096)(fmt_bytes)


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data: blob:">
<title>gradtool: %TITLE%</title>
<style>
body{margin:0;font:13px Helvetica,Arial,sans-serif;display:flex;height:100vh;overflow:hidden}
#tree{width:280px;min-width:160px;max-width:70vw;border-right:1px solid #ccc;display:flex;
  flex-direction:column;min-height:0;resize:horizontal;overflow:hidden}
#tree .buttons{padding:6px;border-bottom:1px solid #eee;display:flex;gap:6px}
#note{padding:4px 6px;font-size:12px;background:#fff8dc;border-bottom:1px solid #eee}
#modules{overflow:auto;flex:1;padding:4px 0;font-size:12px}
#modules div{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;cursor:pointer;padding:1px 4px}
#modules div:hover{background:#eef}
#modules .on{font-weight:bold}#modules .count{color:#888;font-weight:normal}
#minimap{display:block;margin:6px auto;border:1px solid #999;background:#fff;cursor:crosshair;flex:none}
#main{flex:1;display:flex;flex-direction:column;min-width:0}
#bar{padding:6px 10px;border-bottom:1px solid #ccc;display:flex;gap:10px;align-items:center}
#targets a{color:#06c;cursor:pointer;margin-right:8px}#targets a.on{font-weight:bold;color:#000}
#search{width:280px;padding:3px}
#results{position:absolute;top:34px;right:340px;background:#fff;border:1px solid #ccc;
  max-height:50vh;overflow:auto;z-index:10;min-width:300px}
#results div{padding:3px 8px;cursor:pointer}#results div:hover{background:#eef}
#results i{color:#666}#results .what{color:#888;font-size:11px;margin-right:6px}
#canvas{flex:1;position:relative;background:#fafafa;min-height:0}
#cy{position:absolute;inset:0}
#side{width:330px;border-left:1px solid #ccc;padding:8px;overflow:auto}
#side table{border-collapse:collapse;width:100%}#side td{border-top:1px solid #eee;padding:2px 4px;vertical-align:top}
.bad{color:#c00}#status{color:#666;font-size:12px}
#side .pairs{font-size:11px;margin:6px 0}#side .pairs th{text-align:left;font-weight:normal;color:#666;vertical-align:bottom}
</style>
%VENDOR%
</head><body>
<div id="tree"><div class="buttons"><button id="expand-all">expand all</button>
<button id="collapse-all">collapse all</button></div><div id="note" hidden></div>
<div id="modules"></div><canvas id="minimap" title="the whole graph: click or drag to look there"></canvas></div>
<div id="main"><div id="bar"><span id="targets"></span><span id="status"></span>
<span style="flex:1"></span>
<input id="search" placeholder="search: node, variable or module" autocomplete="off">
<button id="fit">fit</button></div><div id="results" hidden></div>
<div id="canvas"><div id="cy"></div></div></div>
<div id="side"><b>Click a node</b> to see what it saved, with its inputs and consumers
highlighted; click a yellow box to open it, a dashed frame to fold it; the tree on the left
opens and folds modules too. Drag to pan, wheel to zoom.</div>
<script id="data" type="application/gzip;base64">%DATA%</script>
<script>
"use strict";
let D = null;
async function unpack(text) {  // the data: base64 of gzipped JSON (see html.py's pack)
  const bytes = Uint8Array.from(atob(text), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}
const PAIR_COLUMNS = %PAIR_COLUMNS%;
const MIN_TEXT_PX = 8, MIN_ZOOM = 0.8;  // labels are 10 px: never below 8 px at "fit"
const EXPAND_LIMIT = 600;  // "expand all" stops opening boxes past this many items in sight
                          // (cytoscape's styles and dagre: 1-2 s for 600 on a loaded 2-core machine, 6-11 s for 1,800)
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
let T = null, t = 0, cy = null, selected = null;

function load(k) {  // a target's data made ready: its boxes' ancestry, nodes by id
  t = k; T = D.targets[k];
  T.byId = {}; T.nodes.forEach((n, i) => { T.byId[n.id] = n; });
  T.boxes.forEach((b, i) => { b.index = i; b.children = []; });
  T.boxes.forEach(b => { if (b.parent !== null) T.boxes[b.parent].children.push(b.index); });
  T.boxes.forEach(b => { b.items = b.children.length; });  // what an open box puts in sight
  T.nodes.forEach(n => { T.boxes[n.box].items++; });
  T.openNow = T.boxes.map(b => b.open);
  document.getElementById("note").hidden = true;
  document.getElementById("targets").innerHTML = D.targets.length > 1 ?
    D.targets.map((x, i) => `<a data-t="${i}" class="${i === k ? "on" : ""}">${esc(x.name)}</a>`).join("") :
    `<b>${esc(T.name)}</b>`;
  selected = null;
  draw(true);
}

// what stands for node n: itself, or the outermost folded box holding it
function rep(n) {
  let shown = "n:" + n.id;
  for (let b = n.box; b !== 0; b = T.boxes[b].parent) if (!T.openNow[b]) shown = "b:" + b;
  return shown;
}
function openParent(b) {  // the frame an item of box b is drawn in (null: the top); an open
  // repeat or chunk is drawn as what it holds (fewer nested frames: dagre's time grows with them)
  for (; b !== 0; b = T.boxes[b].parent) if (T.openNow[b] && T.boxes[b].kind === "module") return b;
  return null;
}
function nodeText(n) {  // as dot.py labels it: name, variable, shape; a leaf's variable first
  const lines = n.kind === "leaf" ? [n.label, n.name, n.leaf && n.leaf.shape] :
    [n.name, n.label, n.out && n.out[0]];
  return lines.filter(Boolean).concat(n.fails || []).join("\n");
}
function moduleOf(n) {  // the module calls holding it, outermost first
  const names = [];
  for (let b = n.box; b !== 0; b = T.boxes[b].parent) if (T.boxes[b].module) names.unshift(T.boxes[b].module);
  return names.join(" › ") || null;
}
function boxLabel(b) {
  const s = b.summary, lines = s.text.split("\n");
  const facts = [];
  if (s.params) facts.push(`${s.params.toLocaleString("en")} params`);
  const shapes = list => list.map(i => i < 0 ? "?" : T.shapes[i]).join(", ");
  if (s.ins.length || s.outs.length) facts.push(`${shapes(s.ins) || "-"} → ${shapes(s.outs) || "-"}`);
  lines.splice(2, 0, ...facts);
  return lines.join("\n");
}

function elements() {
  const els = [], seen = new Set(), frames = new Set();
  const add = (id, data, classes) => { if (!seen.has(id)) { seen.add(id); els.push({group: "nodes", data: {id, ...data}, classes}); } };
  const frame = b => {  // an open box drawn as a frame, inside the frames around it
    if (b === null || frames.has(b)) return;
    frames.add(b); const box = T.boxes[b], up = openParent(box.parent);
    frame(up);
    add("b:" + b, {label: box.title, parent: up === null ? undefined : "b:" + up}, "frame " + box.kind);
  };
  const repOf = {};
  for (const n of T.nodes) {
    const r = repOf[n.id] = rep(n);
    if (seen.has(r)) continue;
    if (r[0] === "n") {
      const up = openParent(n.box); frame(up);
      add(r, {label: nodeText(n), parent: up === null ? undefined : "b:" + up},
          (n.fails ? "fails " : "") + (n.kind || "op"));
    } else {
      const b = Number(r.slice(2)), box = T.boxes[b], up = openParent(box.parent); frame(up);
      add(r, {label: boxLabel(box), parent: up === null ? undefined : "b:" + up},
          "folded" + (box.summary.fails ? " fails" : ""));
    }
  }
  const edges = new Map();
  for (const [tail, head, shape] of T.edges) {
    const a = repOf[tail], b = repOf[head];
    if (a === b) continue;
    const key = a + ">" + b, e = edges.get(key);
    if (!e) edges.set(key, {source: a, target: b, shapes: new Set([shape])});
    else e.shapes.add(shape);
  }
  for (const o of T.outputs) {
    add(o.id, {label: o.text}, o.node === null ? "output nograd" : "output");
    if (o.node !== null) edges.set(repOf[o.node] + ">" + o.id, {source: repOf[o.node], target: o.id, shapes: new Set()});
  }
  T.cuts.forEach((c, i) => {
    add("cut" + i, {label: c.text}, "cut");
    for (const h of c.heads) { const r = repOf[h] || h; edges.set("cut" + i + ">" + r, {source: "cut" + i, target: r, shapes: new Set(), cut: true}); }
  });
  if (T.show_saved) {
    for (const n of T.nodes) {
      if (repOf[n.id] !== "n:" + n.id) continue;
      (n.saved || []).forEach((s, i) => {
        if (!s.shape) return;
        const id = `s:${n.id}:${i}`, up = openParent(n.box);
        add(id, {label: `${s.name}\n${s.shape}\n${s.bytes}`, parent: up === null ? undefined : "b:" + up}, "saved" + (s.modified ? " fails" : ""));
        edges.set(id + ">" + n.id, {source: id, target: "n:" + n.id, shapes: new Set(), saved: true});
      });
    }
  }
  for (const [key, e] of edges) {
    const label = e.shapes.size === 1 ? [...e.shapes].map(i => i < 0 ? "" : T.shapes[i])[0] : "";
    els.push({group: "edges", data: {id: "e:" + key, source: e.source, target: e.target, label},
              classes: e.cut ? "cutedge" : e.saved ? "savededge" : ""});
  }
  return els;
}

const STYLE = [
  {selector: "node", style: {"shape": "round-rectangle", "background-color": "#d3d3d3", "label": "data(label)",
    "text-wrap": "wrap", "text-valign": "center", "text-halign": "center", "font-family": "Helvetica, Arial, sans-serif",
    "font-size": 10, "width": "label", "height": "label", "padding": 6, "border-width": 1, "border-color": "#777"}},
  {selector: "node.leaf", style: {"background-color": "#add8e6"}},
  {selector: "node.output", style: {"background-color": "#caff70"}},
  {selector: "node.nograd", style: {"background-color": "#fff", "border-style": "dashed"}},
  {selector: "node.saved", style: {"background-color": "#ffa500", "shape": "rectangle"}},
  {selector: "node.folded", style: {"background-color": "#ffec8b", "border-width": 2, "border-color": "#a08a00", "text-justification": "left"}},
  {selector: "node.fails", style: {"background-color": "#ffc0c0", "border-color": "#cd0000", "border-width": 2, "color": "#cd0000"}},
  {selector: "node.cut", style: {"background-color": "#fff", "border-color": "#cd0000", "border-style": "dashed", "color": "#cd0000", "shape": "rectangle"}},
  {selector: "node.frame", style: {"background-color": "#fff", "background-opacity": 0.6, "border-style": "dashed", "border-color": "#808080",
    "shape": "round-rectangle", "text-valign": "top", "text-halign": "center", "font-size": 11, "padding": 10, "color": "#333",
    "text-background-color": "#fafafa", "text-background-opacity": 1, "text-background-padding": 1}},
  {selector: "node.frame.repeat, node.frame.chunk", style: {"border-style": "dotted", "background-opacity": 0.3}},
  {selector: "edge", style: {"width": 1, "line-color": "#595959", "target-arrow-color": "#595959", "target-arrow-shape": "triangle",
    "arrow-scale": 0.7, "curve-style": "bezier", "label": "data(label)", "font-size": 10, "color": "#555",
    "text-background-color": "#fafafa", "text-background-opacity": 1, "text-background-padding": 1,
    "min-zoomed-font-size": MIN_TEXT_PX}},  // a shape too small to read is not drawn: zoom in for it
  {selector: "edge.cutedge", style: {"line-color": "#cd0000", "target-arrow-color": "#cd0000", "line-style": "dashed", "label": "cut", "color": "#cd0000"}},
  {selector: "edge.savededge", style: {"line-color": "#ff8c00", "line-style": "dashed", "target-arrow-shape": "none"}},
  {selector: ".faded", style: {"opacity": 0.25}},
  {selector: "node.hit", style: {"border-color": "#e00000", "border-width": 4, "opacity": 1}},
  {selector: ".near", style: {"opacity": 1}},
  {selector: "edge.near", style: {"width": 2.5, "line-color": "#e00000", "target-arrow-color": "#e00000"}},
];

function draw(fit, focus) {
  const t0 = performance.now(), tm = {};
  const els = elements(); tm.elements = performance.now() - t0;
  if (!cy) {  // one cytoscape for the page: a view is a new set of elements in it
    cy = cytoscape({container: document.getElementById("cy"), style: STYLE,
                    wheelSensitivity: 0.3, minZoom: 0.02, maxZoom: 4});
    cy.on("tap", "node", ev => tapped(ev.target));
    cy.on("tap", ev => { if (ev.target === cy) clearHighlight(); });
    cy.on("viewport", () => mapSoon());
    new ResizeObserver(() => { cy.resize(); mapSoon(); }).observe(document.getElementById("cy"));
    window.gradtool.cy = cy;
    skipStyleCacheClearing();
  }
  cy.batch(() => { cy.elements().remove(); cy.add(els); });
  tm.cy = performance.now() - t0;
  layOut();
  tm.layout = performance.now() - t0;
  placeTitles();
  tm.titles = performance.now() - t0; window.gradtool.tm = tm;
  if (focus && cy.getElementById(focus).length) center(cy.getElementById(focus));
  else if (fit) fitView();
  if (selected && cy.getElementById(selected).length) highlight(cy.getElementById(selected));
  tm.view = performance.now() - t0;
  document.getElementById("status").textContent = countsText();
  tm.counts = performance.now() - t0;
  tree();
  tm.tree = performance.now() - t0;
  mapData(); drawMap();
  window.gradtool.drawMs = tm.map = performance.now() - t0;
}

// cytoscape clears the style cache of an element, of its frames, of all they hold and of
// their edges, at every property it styles: with a frame of a thousand items, most of a
// view's time. That cache holds whether an element is visible, takes up space and reacts to
// the mouse, which no style of this page changes (nothing is hidden; faded is 25% opaque),
// so the page never clears it.
function skipStyleCacheClearing() {
  Object.getPrototypeOf(cy.collection()).dirtyStyleCache = function () { return this; };
}

// Each open box is laid out on its own by dagre, from the innermost out, the boxes inside it
// standing as one item of their laid-out size: a module as its frame, an open repeat or chunk
// as a group without one (1,500 blocks in 15 chunks are 15 small layouts, not one large one:
// dagre's time grows faster than its items). dagre's own nesting of clusters costs ten times
// more, and a box's inside does not move when something outside it changes.
// Boxes alike in structure (their items' kinds and sizes, the edges between them) share one
// layout, kept across draws: dagre runs once for 1,500 alike blocks. Widths are rounded up to
// SIZE_STEP so that labels a digit apart ("blocks.7", "blocks.1499") are alike too.
const FRAME_PAD = 12, FRAME_TITLE = 16, MAX_FAN_OUT = 3, SIZE_STEP = 12;
const layouts = new Map();  // a box's structure -> its items' places and its size
function unitOf(id) {  // the box whose layout places the item `id`
  const [kind, rest] = [id.slice(0, 2), id.slice(2)];
  if (kind === "n:") return T.byId[rest].box;
  if (kind === "s:") return T.byId[rest.slice(0, rest.lastIndexOf(":"))].box;
  if (kind === "b:") return T.boxes[Number(rest)].parent;
  return 0;  // outputs and cuts
}
function layOut() {
  const units = new Map([[0, []]]);  // open box -> the ids of its items
  const itemsOf = b => {
    if (!units.has(b)) { units.set(b, []); itemsOf(T.boxes[b].parent).push("b:" + b); }
    return units.get(b);
  };
  const up = {};  // item id -> the box it is laid out in
  cy.nodes().forEach(n => { if (!n.isParent()) { const u = unitOf(n.id()); up[n.id()] = u; itemsOf(u).push(n.id()); } });
  const chain = id => {  // [box, item of that box holding id], innermost first, up to the top
    const out = [];
    for (let b = up[id], item = id; ; item = "b:" + b, b = T.boxes[b].parent) { out.push([b, item]); if (b === 0) return out; }
  };
  const links = new Map();  // box -> its items' edges, as [tail item, head item]
  cy.edges().forEach(e => {
    const a = chain(e.source().id()), b = chain(e.target().id());
    const inB = new Map(b);
    for (const [box, item] of a) if (inB.has(box)) {
      if (item !== inB.get(box)) { if (!links.has(box)) links.set(box, []); links.get(box).push([item, inB.get(box)]); }
      break;
    }
  });
  const size = {}, place = {};
  const layBox = b => {  // places b's items; returns b's inside size
    const items = units.get(b);
    for (const id of items) {
      if (id.startsWith("b:") && units.has(Number(id.slice(2)))) {
        const inner = layBox(Number(id.slice(2))), framed = cy.getElementById(id).length;
        size[id] = framed ? {w: inner.w + 2 * FRAME_PAD, h: inner.h + 2 * FRAME_PAD + FRAME_TITLE} : inner;
      } else {
        const d = cy.getElementById(id).layoutDimensions({nodeDimensionsIncludeLabels: true});
        size[id] = {w: Math.ceil(d.w / SIZE_STEP) * SIZE_STEP, h: d.h};
      }
    }
    const index = new Map(items.map((id, i) => [id, i])), pairs = new Set();
    for (const [a, c] of links.get(b) || []) pairs.add(index.get(a) * items.length + index.get(c));
    const edges = [...pairs].sort((p, q) => p - q).map(p => [Math.floor(p / items.length), p % items.length]);
    const key = items.map(id => size[id].w + "x" + size[id].h).join(",") + "|" + edges.join(";");
    let laid = layouts.get(key);
    if (!laid) { laid = dagreLayout(items.map(id => size[id]), edges); layouts.set(key, laid); }
    items.forEach((id, i) => { place[id] = laid.at[i]; });
    return laid.size;
  };
  if (layouts.size > 20000) layouts.clear();  // a long session's alike layouts: memory bounded
  layBox(0);
  const at = {};
  const settle = (b, cx, cy0) => {  // absolute places, a frame's inside below its title
    for (const id of units.get(b)) {
      const p = {x: cx + place[id].x, y: cy0 + place[id].y}, inner = id.startsWith("b:") && Number(id.slice(2));
      if (inner !== false && units.has(inner)) settle(inner, p.x, p.y + (cy.getElementById(id).length ? FRAME_TITLE / 2 : 0));
      else at[id] = p;
    }
  };
  settle(0, 0, 0);
  cy.nodes().not(":parent").positions(n => at[n.id()]);
}
function dagreLayout(sizes, edges) {  // items' centres about the middle, and the whole's size
  window.gradtool.dagreRuns++;
  const g = new dagre.graphlib.Graph({multigraph: true});
  g.setGraph({rankdir: "TB", nodesep: 18, ranksep: 28, edgesep: 8});
  g.setDefaultEdgeLabel(() => ({}));
  sizes.forEach((s, i) => g.setNode(String(i), {width: s.w, height: s.h}));
  // a weight shared by 80 calls of a cell: its first few edges place it; the others, into
  // calls that other edges place, are drawn but not laid out (dagre would route each through
  // a chain of dummy nodes: ten times slower)
  const fanOut = {}, fanIn = {}, kept = {};
  for (const [a, c] of edges) { fanOut[a] = (fanOut[a] || 0) + 1; fanIn[c] = (fanIn[c] || 0) + 1; }
  for (const [a, c] of edges) {
    kept[a] = (kept[a] || 0) + 1;
    if (fanOut[a] <= MAX_FAN_OUT || kept[a] <= MAX_FAN_OUT || fanIn[c] === 1) g.setEdge(String(a), String(c));
  }
  dagre.layout(g);
  const gw = g.graph().width || 0, gh = g.graph().height || 0;
  return {at: sizes.map((s, i) => { const v = g.node(String(i)); return {x: v.x - gw / 2, y: v.y - gh / 2}; }),
          size: {w: gw, h: gh}};
}

function fitView() {  // the whole view, unless its text would be smaller than 8 px: then its top
  // (nodes' boxes only: edges lie between them, and their labels' boxes cost a second here)
  const bb = cy.nodes().boundingBox();
  cy.fit(cy.nodes(), 20);
  if (cy.zoom() > 1.5) { cy.zoom(1.5); cy.center(cy.nodes()); }
  if (cy.zoom() < MIN_ZOOM) {  // the top of the graph, centred on its first row
    const items = cy.nodes().not(":parent"), box = n => n.boundingBox({includeLabels: false});
    const top = items.min(n => box(n).y1).value;
    const row = items.filter(n => box(n).y1 < top + 40).boundingBox();
    cy.zoom(MIN_ZOOM);
    cy.pan({x: cy.width() / 2 - (row.x1 + row.x2) / 2 * MIN_ZOOM, y: 20 - bb.y1 * MIN_ZOOM});
  }
}
function center(el) { cy.zoom(Math.max(cy.zoom(), 1)); cy.center(el); }

function countsText() {  // what is in sight, in numbers that add up to the graph's nodes
  const fmt = k => k.toLocaleString("en");
  let nodes = 0, folded = 0, inside = 0;
  cy.nodes().not(".frame").forEach(n => {
    const id = n.id();
    if (id.startsWith("n:")) nodes++;
    else if (id.startsWith("b:")) { folded++; inside += T.boxes[Number(id.slice(2))].n; }
  });
  const total = T.nodes.length;
  if (!folded) return `in sight: ${fmt(nodes)} of ${fmt(total)} nodes`;
  return `in sight: ${fmt(nodes)} nodes + ${fmt(folded)} folded box${folded > 1 ? "es" : ""} ` +
    `holding ${fmt(inside)} = ${fmt(nodes + inside)} of ${fmt(total)} nodes`;
}

// A frame's title sits above its top edge, where edges into the frame or past it may cross
// it: it goes where none does, in the middle if it can, else as near it as a gap between
// them allows (the edges are straight: one per pair of items).
function placeTitles() {
  const frames = cy.nodes(".frame");
  if (!frames.length) return;
  const lines = cy.edges().map(e => {
    const p = e.source().position(), q = e.target().position(), text = e.data("label") || "";
    // its label, at its middle: about 6 px a character at 10 px (measuring costs a second)
    const label = text && {x: (p.x + q.x) / 2, y: (p.y + q.y) / 2, half: 3 * text.length + 3};
    return {p, q, y1: Math.min(p.y, q.y), y2: Math.max(p.y, q.y), label};
  });
  // innermost first, each moved before the next is measured: a title moved out past its
  // frame's side widens the frame around it (and a batch would read frames' old bounds)
  const depth = f => f.ancestors().length;
  frames.sort((f, g) => depth(g) - depth(f)).forEach(f => {
    const b = f.boundingBox({includeNodes: false, includeEdges: false, includeLabels: true});
    const shift = parseFloat(f.style("text-margin-x")) || 0;  // where it was: moved back
    const r = {x1: b.x1 - shift, x2: b.x2 - shift, y1: b.y1, y2: b.y2, w: b.w};
    const taken = [];  // x ranges where an edge crosses the title's band
    for (const {p, q, y1, y2, label} of lines) {
      if (label && label.y + 8 > r.y1 && label.y - 8 < r.y2) taken.push([label.x - label.half, label.x + label.half]);
      const lo = Math.max(y1, r.y1), hi = Math.min(y2, r.y2);
      if (lo > hi || p.y === q.y) continue;
      const xa = p.x + (q.x - p.x) * (lo - p.y) / (q.y - p.y), xb = p.x + (q.x - p.x) * (hi - p.y) / (q.y - p.y);
      taken.push([Math.min(xa, xb) - 3, Math.max(xa, xb) + 3]);
    }
    const mid = (r.x1 + r.x2) / 2, half = r.w / 2;
    const free = x => taken.every(([a, b]) => x + half < a || x - half > b);
    const tries = [mid];
    for (const [a, b] of taken) tries.push(a - half - 1, b + half + 1);
    const best = tries.filter(free).sort((a, b) => Math.abs(a - mid) - Math.abs(b - mid))[0];
    f.style("text-margin-x", best === undefined ? 0 : best - mid);
  });
}

// The minimap: the graph drawn small in the tree's column (so it never hides the graph),
// at its own aspect ratio where that leaves it at least MAP_MIN px either way, else stretched
// along its short side, like a scroll bar; hidden while the whole graph is in sight.
const MAP_MAX = 220, MAP_MIN = 40;
let map = null, mapQueued = false;
function mapData() {
  const bb = cy.nodes().boundingBox({includeLabels: false});  // (labels' boxes: a second more)
  const rects = [];
  cy.nodes().forEach(n => {
    const b = n.boundingBox({includeLabels: false});
    rects.push([b.x1, b.y1, b.w, b.h, n.isParent() ? 0 : n.hasClass("folded") ? 2 : 1]);
  });
  map = {bb, rects};
}
function mapSoon() {
  if (!mapQueued) { mapQueued = true; requestAnimationFrame(() => { mapQueued = false; drawMap(); }); }
}
function drawMap() {
  const canvas = document.getElementById("minimap");
  if (!map || !map.rects.length) { canvas.hidden = true; return; }
  const bb = map.bb, ext = cy.extent();
  const whole = ext.x1 <= bb.x1 && ext.y1 <= bb.y1 && ext.x2 >= bb.x2 && ext.y2 >= bb.y2;
  canvas.hidden = whole;
  if (whole) return;
  const room = Math.min(MAP_MAX, canvas.parentElement.clientWidth - 14);
  const k = Math.min(room / Math.max(bb.w, 1), MAP_MAX / Math.max(bb.h, 1));
  const w = Math.max(MAP_MIN, Math.min(room, bb.w * k)), h = Math.max(MAP_MIN, Math.min(MAP_MAX, bb.h * k));
  const sx = w / Math.max(bb.w, 1), sy = h / Math.max(bb.h, 1), dpr = window.devicePixelRatio || 1;
  canvas.style.width = w + "px"; canvas.style.height = h + "px";
  canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const colors = ["#999", "#c8c8c8", "#e0c800"];
  for (const [x, y, rw, rh, c] of map.rects) {
    const X = (x - bb.x1) * sx, Y = (y - bb.y1) * sy;
    if (c === 0) { g.strokeStyle = colors[0]; g.lineWidth = 0.5; g.strokeRect(X, Y, rw * sx, rh * sy); }
    else { g.fillStyle = colors[c]; g.fillRect(X, Y, Math.max(rw * sx, 1), Math.max(rh * sy, 1)); }
  }
  g.strokeStyle = "#e00000"; g.lineWidth = 1.5;  // what the graph's pane shows
  g.strokeRect((ext.x1 - bb.x1) * sx, (ext.y1 - bb.y1) * sy, Math.max(ext.w * sx, 3), Math.max(ext.h * sy, 3));
  map.sx = sx; map.sy = sy;
}
function lookAtMap(ev) {  // the point of the minimap under the mouse to the middle of the pane
  if (!map || !map.sx) return;
  const r = document.getElementById("minimap").getBoundingClientRect();
  const x = map.bb.x1 + (ev.clientX - r.left) / map.sx, y = map.bb.y1 + (ev.clientY - r.top) / map.sy;
  cy.pan({x: cy.width() / 2 - x * cy.zoom(), y: cy.height() / 2 - y * cy.zoom()});
}
{
  const canvas = document.getElementById("minimap");
  let dragging = false;
  canvas.addEventListener("mousedown", ev => { dragging = true; lookAtMap(ev); });
  window.addEventListener("mousemove", ev => { if (dragging) lookAtMap(ev); });
  window.addEventListener("mouseup", () => { dragging = false; });
}


function tapped(el) {
  const id = el.id();
  if (id.startsWith("b:")) {
    const b = Number(id.slice(2));
    if (el.hasClass("frame")) fold(b); else open(b, true);
    return;
  }
  selected = id; highlight(el);
  if (id.startsWith("n:")) details(T.byId[id.slice(2)]);
}
function open(b, focus) {
  T.openNow[b] = true;
  for (const i of T.boxes[b].opens) T.openNow[i] = true;
  // an open repeat or chunk is drawn as what it holds: look at the first of it
  const box = T.boxes[b], first = box.kind === "module" ? b : box.children[0];
  draw(false, focus && first !== undefined ? "b:" + first : null);
}
function fold(b) { T.openNow[b] = false; draw(false, "b:" + b); }

function clearHighlight() { cy.elements().removeClass("faded near hit"); }
function highlight(el) {  // the node, its inputs and its consumers
  clearHighlight();
  cy.elements().not(".frame").addClass("faded");
  el.removeClass("faded").addClass("hit");
  el.incomers().add(el.outgoers()).removeClass("faded").addClass("near");
}

function details(n) {
  let h = `<h3>${esc(n.name)}</h3><table>`;
  const row = (k, v) => { if (v !== null && v !== undefined && v !== "") h += `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`; };
  row("variable", n.label); row("module", moduleOf(n)); row("line", n.site);
  row("output", (n.out || []).join(", ")); row("id", n.id);
  if (n.leaf) for (const k in n.leaf) row(k, n.leaf[k]);
  for (const k in n.metadata || {}) row(`metadata[${k}]`, n.metadata[k]);
  const ins = T.edges.filter(e => e[1] === n.id).map(e => T.byId[e[0]].name);
  const outs = T.edges.filter(e => e[0] === n.id).map(e => T.byId[e[1]].name);
  row("inputs", ins.join(", ")); row("consumers", outs.join(", "));
  h += "</table>";
  for (const f of n.fails || []) h += `<p class="bad">${esc(f)}</p>`;
  if (n.wrong) h += wrongNode(n.wrong);
  if (n.saved) {
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

function wrongNode(w) {  // the node to blame: what gradcheck prints of its own check
  let h = `<div id="wrong"><h4 class="bad">checked on its own at the inputs it received</h4><table>`;
  const rows = [["call", w.call], ["line", w.line], ["module", w.module], ["wrong for", w.inputs.join(", ")]];
  for (const [k, v] of rows) if (v) h += `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`;
  h += "</table>";
  if (w.pairs.length) {
    h += `<table class="pairs"><tr>${PAIR_COLUMNS.map(c => `<th>${esc(c)}</th>`).join("")}</tr>`;
    const cell = (c, i) => `<td class="${i === 5 && c === "FAIL" ? "bad" : ""}">${esc(c)}</td>`;
    for (const r of w.pairs) h += "<tr>" + r.map(cell).join("") + "</tr>";
    h += "</table>";
  }
  if (w.reason) h += `<p class="bad">${esc(w.reason)}</p>`;
  return h + "</div>";
}
function reveal(b) { for (let p = b; p !== 0 && p !== null; p = T.boxes[p].parent) T.openNow[p] = true; }
function showNode(n) {  // open what holds it, draw, select it
  reveal(n.box); selected = "n:" + n.id; draw(false, selected); details(n);
}
function showBox(b) {
  reveal(T.boxes[b].parent); T.openNow[b] = false; draw(false, "b:" + b);
  highlight(cy.getElementById("b:" + b));
}

function tree() {  // the module tree: every box, open ones in bold; a click opens or folds it
  const rows = [];
  const walk = (b, depth) => {
    for (const c of T.boxes[b].children) {
      const box = T.boxes[c];
      rows.push(`<div data-b="${c}" class="${T.openNow[c] ? "on" : ""}" style="padding-left:${4 + 12 * depth}px" ` +
                `title="${esc(box.title)}: ${box.n.toLocaleString("en")} nodes">` +
                `${box.children.length ? (T.openNow[c] ? "▾" : "▸") : "·"} ${esc(box.title)} <span class="count">${box.n.toLocaleString("en")}</span></div>`);
      if (T.openNow[c] && rows.length < 3000) walk(c, depth + 1);
    }
  };
  walk(0, 0);
  document.getElementById("modules").innerHTML = rows.join("");
}
document.getElementById("modules").addEventListener("click", ev => {
  const d = ev.target.closest("[data-b]"); if (!d) return;
  const b = Number(d.dataset.b);
  if (T.openNow[b]) fold(b); else { reveal(T.boxes[b].parent); open(b, true); }
});
// "expand all": the folding rule (layout.py) with the page's larger budget: level by level,
// the boxes of one kind together or not at all, while at most EXPAND_LIMIT items are in sight;
// then it says where it stopped and why.
function inSightOpen(b) {  // the items box b puts in sight when it opens: boxes inside it
  // keep their own open or folded state (open ones show what they hold)
  let k = T.boxes[b].items - T.boxes[b].children.length;
  for (const c of T.boxes[b].children) k += T.openNow[c] ? inSightOpen(c) : 1;
  return k;
}
function expandAll() {
  const t0 = performance.now(), fmt = k => k.toLocaleString("en");
  let shown = cy.nodes().not(".frame").length, level = [0], stopped = null;
  while (level.length) {
    const groups = new Map(), next = [];
    for (const p of level) for (const c of T.boxes[p].children) {
      const box = T.boxes[c], key = box.kind === "chunk" ? "chunk" : box.alike || box.kind;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(c);
    }
    for (const group of groups.values()) {
      const shut = group.filter(b => !T.openNow[b]);
      const cost = shut.reduce((sum, b) => sum + inSightOpen(b) - 1, 0);
      if (shown + cost > EXPAND_LIMIT) {
        if (!stopped) stopped = {box: shut[0], count: shut.length, would: shown + cost};
        next.push(...group.filter(b => T.openNow[b]));  // what was open already goes on
        continue;
      }
      shown += cost; shut.forEach(b => { T.openNow[b] = true; }); next.push(...group);
    }
    level = next;
  }
  selected = null;  // no fading left from a node clicked before
  draw(true);
  const note = document.getElementById("note");
  if (stopped) {
    const title = T.boxes[stopped.box].title, more = stopped.count - 1;
    note.textContent = `Expanded as far as ${fmt(EXPAND_LIMIT)} items in sight, the most the page ` +
      `lays out quickly: "${title}"` + (more ? ` and ${fmt(more)} more like it` : "") +
      ` stay folded (opening ${more ? "them" : "it"} would put ${fmt(stopped.would)} items in sight). ` +
      `Click a folded box to open it.`;
  } else note.textContent = `Everything is open: ${fmt(cy.nodes().not(".frame").length)} items in sight.`;
  note.hidden = false;
  window.gradtool.expandMs = performance.now() - t0;
}
document.getElementById("expand-all").addEventListener("click", expandAll);
document.getElementById("collapse-all").addEventListener("click", () => {
  T.openNow = T.boxes.map((b, i) => i === 0); document.getElementById("note").hidden = true; draw(true);
});
document.getElementById("fit").addEventListener("click", () => fitView());
document.getElementById("targets").addEventListener("click", ev => {
  const a = ev.target.closest("[data-t]"); if (a) load(Number(a.dataset.t));
});
const search = document.getElementById("search"), results = document.getElementById("results");
search.addEventListener("input", () => {
  const q = search.value.trim().toLowerCase();
  if (!q) { results.hidden = true; return; }
  const hits = [];
  T.boxes.forEach((b, i) => { if (i && hits.length < 20 && b.title.toLowerCase().includes(q)) hits.push(["b", i]); });
  for (const n of T.nodes) {
    if (hits.length >= 60) break;
    if ([n.name, n.label, moduleOf(n), n.id].some(s => s && s.toLowerCase().includes(q))) hits.push(["n", n.id]);
  }
  results.innerHTML = hits.map(([k, v]) => {
    if (k === "b") return `<div data-b="${v}"><span class="what">module</span>${esc(T.boxes[v].title)}</div>`;
    const n = T.byId[v];
    return `<div data-n="${esc(v)}"><span class="what">node</span>${esc(n.name)} ${esc(n.label || "")} <i>${esc(moduleOf(n) || "")}</i></div>`;
  }).join("") || "<div>no match</div>";
  results.hidden = false;
});
results.addEventListener("click", ev => {
  const d = ev.target.closest("[data-b],[data-n]"); if (!d) return;
  results.hidden = true;
  if (d.dataset.b !== undefined) showBox(Number(d.dataset.b)); else showNode(T.byId[d.dataset.n]);
});
window.gradtool = {load, open, fold, showNode, showBox, fitView, expandAll, countsText, layouts, dagreRuns: 0,
                  get T() { return T; }, get D() { return D; }};
unpack(document.getElementById("data").textContent).then(data => { D = data; load(0); });
</script></body></html>
"""
