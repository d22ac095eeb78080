"""Drawings that never mislabel (report/layout.py, dot.py, html.py): every box named, counted
and given parameters by the module calls that own what it holds, in the DOT source, the SVG
and the explorer's data; every text inside its box in a wider font than Graphviz measures."""
import functools
import html as htmltext
import os
import re
import struct
import subprocess
import xml.etree.ElementTree as ET

import pytest

from gradtool.capture.loader import load
from gradtool.checks.inspection import capture
from gradtool.report import dot, html, layout

MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")
SVG = "{http://www.w3.org/2000/svg}"


@functools.lru_cache(maxsize=None)
def model_capture(name):
    [target] = load(os.path.join(MODELS, name))
    return capture(target)


# ---------------------------------------------------------------- what the drawings show
def held_calls(box):
    """The outermost module calls a box holds (through chunks and repeats), and whether any
    node sits beside them."""
    calls, loose = [], False
    for item in box.items:
        if not isinstance(item, layout.Box):
            loose = True
        elif item.kind == "module":
            calls.append(item)
        else:
            inner, inner_loose = held_calls(item)
            calls, loose = calls + inner, loose or inner_loose
    return calls, loose


def dot_frames(source):
    """node id -> the titles of the frames around it in a DOT source, outermost first; and
    the first line of every node's label."""
    frames, stack, firsts = {}, [], {}
    for line in source.splitlines():
        if re.match(r"\s*subgraph cluster_", line):
            stack.append(None)
        elif re.match(r"\s*}", line) and stack:
            stack.pop()
        elif stack and stack[-1] is None and re.match(r"\s*graph \[", line):
            title = re.search(r'label=(?:"([^"]*)"|<.*?>([^<>]*)</td>)', line)
            stack[-1] = htmltext.unescape(title.group(1) or title.group(2))
        elif m := re.match(r'\s*(\w+) \[label="([^"\n]*)', line):
            frames[m.group(1)], firsts[m.group(1)] = list(stack), m.group(2)
    return frames, firsts


def page_data(cap, **options):
    """The explorer's data for one capture, read back from its page."""
    text = html.page([cap], **options).decode()
    return html.unpack(re.search(r'<script id="data" type="application/gzip;base64">(.*?)'
                                 r'</script>', text, re.S).group(1))["targets"][0]


def test_a_loop_over_a_sequential_draws_each_block_as_itself():
    cap = model_capture("looped_blocks.py")
    frames, firsts = dot_frames(dot.build(cap.snapshot).source)
    titles = {t for ts in frames.values() for t in ts} | {  # frames', folded boxes' titles
        first for ident, first in firsts.items() if ident.startswith("b")}
    assert {f"model.{i} (Residual)" for i in range(12)} <= titles
    assert {t for t in titles if "model.12" in t} == {"model.12 (Linear)"}
    plan = layout.make_plan(cap.snapshot)  # as dot.build plans it
    for node in cap.snapshot.nodes:  # each in its own call's frame, or folded into its box
        if not node.module_path:
            continue
        shown = plan.visible(node.id)
        ident = shown.key if isinstance(shown, layout.Box) else shown
        around = frames[ident] + ([firsts[ident]] if isinstance(shown, layout.Box) else [])
        call, kind = node.module_path[0][1:]
        assert f"{call} ({kind})" in around
        assert [t for t in around if "(Residual)" in t or "(Linear)" in t][0] == \
            f"{call} ({kind})", around


@pytest.mark.parametrize("readable", [2, 3, 5, 10, 20, 40, layout.READABLE])
def test_no_box_is_named_by_one_call_of_the_many_it_holds(readable):
    """However tightly the drawing folds, a box named by module calls holds those calls, as
    many as it says, and nothing beside them; one that holds more is named by its nodes."""
    plan = layout.make_plan(model_capture("looped_blocks.py").snapshot, readable=readable)
    for box in plan.root.boxes():
        if box.kind == "module":
            continue
        calls, loose = held_calls(box)
        if box.title.startswith("nodes "):
            continue
        names = [c.module[0] for c in calls]
        if "…" in box.title:  # "model.0 … model.12 (nodes 1–211 of 212)"
            assert box.title.startswith(f"{names[0]} … {names[-1]} (nodes ")
            continue
        assert not loose, box.title
        count = re.search(r"×(\d+)$", box.title)
        assert count and int(count.group(1)) == len(calls) > 1, box.title
        assert len({c.module[1] for c in calls}) == 1 and f"({calls[0].module[1]})" in box.title


def test_attention_parameters_sit_in_their_attention_and_count_there():
    """MultiheadAttention uses its out_proj's weight and bias without calling out_proj: they
    are drawn in the attention's frame, and its 1,088 parameters count them."""
    cap = model_capture("attention.py")
    out_proj = {n.id: n.label for n in cap.snapshot.nodes if "out_proj" in (n.label or "")}
    assert len(out_proj) == 4
    for expand in (False, True):
        frames, _ = dot_frames(dot.build(cap.snapshot, expand=expand).source)
        for node_id, label in out_proj.items():
            layer = label.split(".")[1]
            assert frames[node_id] == ["model (Sequential)", f"model.{layer} (Layer)",
                                       f"model.{layer}.attn (MultiheadAttention)"]
    target = page_data(cap)
    boxes = target["boxes"]
    for layer in "01":
        at = next(i for i, b in enumerate(boxes)
                  if b["title"] == f"model.{layer}.attn (MultiheadAttention)")
        assert boxes[at]["summary"]["params"] == 3 * 16 * 16 + 3 * 16 + 16 * 16 + 16 == 1088
        assert {n["box"] for n in target["nodes"] if n["id"] in out_proj
                and out_proj[n["id"]].startswith(f"model.{layer}.")} == {at}
    layer = next(b for b in boxes if b["title"] == "model.0 (Layer)")
    assert layer["summary"]["params"] == 1088 + 2 * 16
    folded = page_data(cap, depth=2)["boxes"]  # folded, the same count
    assert [b["summary"]["params"] for b in folded if not b["open"]
            and b["title"].endswith(".attn (MultiheadAttention)")] == [1088, 1088]


# ---------------------------------------------------------------- legible in any font


@functools.lru_cache(maxsize=None)
def dejavu_widths():
    """Advance width in em of each character DejaVu Sans has (its TTF's cmap and hmtx)."""
    path = subprocess.run(["fc-match", "-f", "%{file}", "DejaVu Sans"], capture_output=True,
                          text=True, check=True).stdout
    assert "DejaVuSans" in path, f"DejaVu Sans is not installed (fc-match gave {path!r})"
    data = open(path, "rb").read()
    tables = {}
    for i in range(struct.unpack(">H", data[4:6])[0]):
        tag, _, offset, _ = struct.unpack(">4sIII", data[12 + 16 * i:28 + 16 * i])
        tables[tag.decode()] = offset
    units = struct.unpack(">H", data[tables["head"] + 18:tables["head"] + 20])[0]
    n_metrics = struct.unpack(">H", data[tables["hhea"] + 34:tables["hhea"] + 36])[0]
    advance = [struct.unpack(">H", data[tables["hmtx"] + 4 * i:tables["hmtx"] + 4 * i + 2])[0]
               for i in range(n_metrics)]
    cmap = tables["cmap"]
    for i in range(struct.unpack(">H", data[cmap + 2:cmap + 4])[0]):
        sub = cmap + struct.unpack(">I", data[cmap + 8 + 8 * i:cmap + 12 + 8 * i])[0]
        if struct.unpack(">H", data[sub:sub + 2])[0] == 4:  # the BMP's segment map
            break
    n = struct.unpack(">H", data[sub + 6:sub + 8])[0] // 2
    ends, starts, deltas, offsets = (struct.unpack(f">{n}{t}", data[at:at + 2 * n]) for at, t in (
        (sub + 14, "H"), (sub + 16 + 2 * n, "H"), (sub + 16 + 4 * n, "h"), (sub + 16 + 6 * n, "H")))
    widths = {}
    for k in range(n):
        for code in range(starts[k], ends[k] + 1 if ends[k] != 0xFFFF else ends[k]):
            if offsets[k]:
                at = sub + 16 + 6 * n + 2 * k + offsets[k] + 2 * (code - starts[k])
                glyph = struct.unpack(">H", data[at:at + 2])[0]
                glyph = (glyph + deltas[k]) & 0xFFFF if glyph else 0
            else:
                glyph = (code + deltas[k]) & 0xFFFF
            if glyph:
                widths[chr(code)] = advance[min(glyph, n_metrics - 1)] / units
    return widths


def width(text, size):
    """Points the text takes in DejaVu Sans (a character it lacks counts as 1 em)."""
    widths = dejavu_widths()
    return size * sum(widths.get(c, 1.0) for c in text)


def svg_boxes(svg_text):
    """Each node and frame of an SVG drawing: its id, the bounds (x0, y0, x1, y1) of the
    shapes drawn for it (None for a plaintext node), and each text with its left and right
    ends in DejaVu Sans."""
    out = {}
    for group in ET.fromstring(svg_text).iter(SVG + "g"):
        if group.get("class") not in ("node", "cluster"):
            continue
        points = []
        for el in group.iter():  # (a node with a tooltip draws inside a link)
            if el.tag in (SVG + "polygon", SVG + "polyline"):
                points += [tuple(map(float, p.split(","))) for p in el.get("points").split()]
            elif el.tag == SVG + "path":
                numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", el.get("d"))]
                points += list(zip(numbers[0::2], numbers[1::2]))
        box = (min(x for x, _ in points), min(y for _, y in points),
               max(x for x, _ in points), max(y for _, y in points)) if points else None
        texts = []
        for text in group.iter(SVG + "text"):
            w, x = width(text.text or "", float(text.get("font-size"))), float(text.get("x"))
            left = {"start": x, "middle": x - w / 2, "end": x - w}[text.get("text-anchor")]
            texts.append((text.text, left, left + w))
        out[group.findtext(SVG + "title")] = (box, texts)
    return out


RENDERERS = ["graphviz-pure"] + (["dot"] if os.path.exists("/usr/bin/dot") else [])


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("name, depth", [("looped_blocks.py", None), ("attention.py", None),
                                         ("attention.py", 2)])
def test_every_text_stays_inside_its_box_in_dejavu_sans(name, depth, renderer):
    """Graphviz measures labels in Helvetica; a viewer without it draws DejaVu Sans, wider
    (a folded box's "at transformer.py:29, transformer.py:30" overflowed). Every text of
    every node and frame, measured in DejaVu Sans, stays inside its shape, and the frames
    still say who they are."""
    cap = model_capture(name)
    svg = dot.render(dot.build(cap.snapshot, depth=depth), "svg",
                     dot.find_renderer(renderer)).decode()
    boxes = svg_boxes(svg)
    for ident, (box, texts) in boxes.items():
        for text, left, right in texts:
            if box is not None:
                assert box[0] <= left and right <= box[2], (ident, text)
    texts = {t for _, ts in boxes.values() for t, _, _ in ts}
    if name == "attention.py":
        assert {"model.0.attn (MultiheadAttention)", "model.1.attn (MultiheadAttention)"} <= texts
        if depth is None:  # out_proj's parameters inside the attention's frame
            for ident, (box, texts) in boxes.items():
                if any(t and t.endswith("attn.out_proj.weight") for t, _, _ in texts):
                    layer = next(t for t, _, _ in texts if t).split(".")[1]
                    frame = next(b for b, ts in boxes.values() if any(
                        t == f"model.{layer}.attn (MultiheadAttention)" for t, _, _ in ts))
                    assert frame[0] <= box[0] and box[2] <= frame[2]
                    assert frame[1] <= box[1] and box[3] <= frame[3]
    else:
        assert {f"model.{i} (Residual)" for i in range(12)} <= texts
