"""`gradtool gradcheck --html report.html`: for each (output, input) pair, heatmaps of the
numerical and analytical Jacobians and of their difference, the worst element marked, the
diagnoses below them. One self-contained page: the maps are PNGs inlined as data: URLs
(written here with zlib, one pixel per entry, drawn pixelated), no script needed but a small
one that reads an entry's values under the mouse."""
import base64
import functools
import html
import json
import re
import struct
import zlib

import numpy as np

from ..checks.result import worst_index
from ..engine.frames import location
from .numbers import fmt_num

HOVER_LIMIT = 40_000   # entries per map whose values the page carries for the mouse-over
_num = functools.partial(fmt_num, missing="?")  # a number the report lacks shows as ?


def page(file, results):
    """The page's bytes for gradcheck's results: a TargetCheck per target (a report per
    order checked), or the TargetError of a target that raised."""
    sections, hover = _sections(results)
    verdict = ("all passed" if all(getattr(r, "passed", False) for r in results)
               else "FAILED")
    return (_TEMPLATE.replace("%STYLE%", _STYLE)
            .replace("%TITLE%", html.escape(f"gradcheck {file}: {verdict}"))
            .replace("%BODY%", "".join(sections))
            .replace("%DATA%", json.dumps(hover, separators=(",", ":")))).encode()


def fragment(results):
    """The heatmaps inside a notebook's output: the page's sections in a div styled on its
    own (the notebook's styles untouched), without the mouse-over script."""
    sections, _ = _sections(results)
    scoped = re.sub(r"(^|})([^{}]+){", lambda m: m.group(1) + ",".join(
        ".gradtool-heatmaps" + ("" if sel.strip() == "body" else " " + sel.strip())
        for sel in m.group(2).split(",")) + "{", _STYLE)
    return f'<div class="gradtool-heatmaps"><style>{scoped}</style>{"".join(sections)}</div>'


def _sections(results):
    sections, hover = [], {}
    for result in results:
        if not hasattr(result, "reports"):  # the target raised: its error in its place
            target = result.target
            sections.append(f'<section><h2>{html.escape(target.name)} <span class="fail">'
                            f'ERROR</span></h2><p class="fail">{html.escape(str(result.error))}'
                            f'</p></section>')
            continue
        for report in result.reports:
            sections.append(_target_section(len(sections), result.target, report, hover))
        if getattr(result, "reference", None) is not None:
            sections.append(_reference_section(result.target, result.reference))
    return sections, hover


def _target_section(t, target, report, hover):
    status = "PASS" if report.passed else "FAIL"
    where = location(target.filename, target.lineno, relative=False)
    out = [f'<section><h2>{html.escape(target.name)} <span class="{status.lower()}">{status}'
           f'</span></h2><p class="where">{html.escape(where)}'
           f' · {report.mode} mode, order {report.order}</p>']
    if report.exception is not None:
        out.append(f'<p class="fail">{html.escape(type(report.exception).__name__)}: '
                   f'{html.escape(str(report.exception))}</p>')
    paired = {id(d) for pair in report.pairs for d in _of_pair(report.diagnoses, pair)}
    out.append(_diagnoses([d for d in report.diagnoses if id(d) not in paired]))
    for p, pair in enumerate(report.pairs):
        full = pair if pair.numerical is not None else pair.recheck
        name = report.input_label(pair)
        head = (f'<h3>{html.escape(report.output_label(pair))} w.r.t. {html.escape(name)} '
                f'<span class="{"pass" if pair.passed else "fail"}">'
                f'{"pass" if pair.passed else "FAIL"}</span></h3>'
                f'<p>max abs error {_num(pair.max_abs_error)}, max rel error '
                f'{_num(pair.max_rel_error)}{_worst_text(pair.worst)}</p>')
        if full is None or full.numerical is None:
            out.append(f'<div class="pair">{head}<p>fast mode compares random projections, '
                       f'not whole Jacobians: run without --fast for the heatmaps.</p></div>')
            continue
        key = f"t{t}p{p}"
        shape = next((i.get("shape") for i in report.inputs
                      if i.get("position") == pair.input_position), None)
        # the diagnoses below the three maps, not beside them: beside, they leave the maps a
        # third of the width and the maps wrap one under another (a failing pair 4x as tall)
        out.append(f'<div class="pair">{head}{_maps(key, full, hover, shape)}'
                   f'{_diagnoses(_of_pair(report.diagnoses, pair))}</div>')
    out.append("</section>")
    return "".join(out)


def _reference_section(target, report):
    """The reference check: per dtype and tensor, the target's error against the float64
    reference as a heatmap scaled to the tensor's tolerance (red beyond it), and the
    numbers the text report gives."""
    status = "PASS" if report.passed else "FAIL"
    out = [f'<section><h2>{html.escape(target.name)}: reference check <span class='
           f'"{status.lower()}">{status}</span></h2><p class="where">'
           f'{html.escape(report.target)} in {", ".join(report.dtypes)} against '
           f'{html.escape(report.reference)} in float64; allowed: {_num(report.factor)} x the '
           f"reference's own error + a few ulps</p>"]
    for c in report.comparisons:
        w = c.worst
        errors = np.asarray(c.errors, float).reshape(-1, c.shape[-1] if c.shape else 1)
        rows, cols = errors.shape
        width = max(120, min(360, 6 * cols))
        head = (f'<h3>{html.escape(c.name)} in {c.dtype} <span class="'
                f'{"pass" if c.passed else "fail"}">{"pass" if c.passed else "FAIL"}</span></h3>'
                f'<p>max abs error {_num(c.max_abs_error)}, the reference\'s own '
                f'{_num(c.reference_error)}, ratio {_num(c.ratio)}, allowed '
                f'{_num(c.tolerance)}; worst at {w["index"]}: target {_num(w["target"])}, '
                f'float64 reference {_num(w["reference"])}</p>')
        out.append(f'<div class="pair">{head}<figure><figcaption>|target − float64 reference|'
                   f'<br><small>red at the tolerance, {_num(c.tolerance)}</small></figcaption>'
                   f'<div class="map" style="width:{width}px;aspect-ratio:{cols}/{rows}">'
                   f'<img alt="error" src="{_png(errors, c.tolerance or 1.0, rows, cols)}"></div></figure>'
                   f'</div>')
    out.append("</section>")
    return "".join(out)


def _maps(key, pair, hover, input_shape):
    num, ana = np.asarray(pair.numerical, float), np.asarray(pair.analytical, float)
    diff = ana - num
    finite = np.concatenate([num[np.isfinite(num)], ana[np.isfinite(ana)], [0.0]])
    scale = float(np.max(np.abs(finite))) or 1.0
    dscale = float(np.max(np.abs(diff[np.isfinite(diff)]), initial=0.0)) or 1.0
    worst = worst_index(num, ana)  # the entry the table names, by largest absolute error
    n_in, n_out = num.shape
    if num.size <= HOVER_LIMIT:
        hover[key] = {"n": _listed(num), "a": _listed(ana)}
    grid = _grid(n_in, input_shape) if n_out == 1 and n_in > 1 else None
    rows, cols = (-(-n_in // grid), grid) if grid else (n_in, n_out)
    maps = []
    for title, values, s in (("numerical", num, scale), ("analytical", ana, scale),
                             ("analytical − numerical", diff, dscale)):
        mark = ""
        if worst is not None:  # a ring around the worst entry, in the map's own units
            r, c = divmod(worst, cols)
            k = max(1, -(-max(rows, cols) // 25))  # big enough to see on a large map
            mark = (f'<svg viewBox="0 0 {cols} {rows}" preserveAspectRatio="none">'
                    f'<rect x="{c - (k - 1) / 2:g}" y="{r - (k - 1) / 2:g}" width="{k}" '
                    f'height="{k}" fill="none" stroke="#000" stroke-width="2.5" '
                    f'vector-effect="non-scaling-stroke"/></svg>')
        cell = min(24, 360 / max(rows, cols))  # pixels per entry: at most 360 either way
        width = max(1, round(cell * cols))
        maps.append(f'<figure><figcaption>{title}<br><small>±{_num(s)}</small></figcaption>'
                    f'<div class="map" data-key="{key}" data-rows="{rows}" data-cols="{cols}" '
                    f'data-grid="{grid or 0}" style="width:{width}px;aspect-ratio:{cols}/{rows}">'
                    f'<img alt="{title}" src="{_png(values, s, rows, cols)}">{mark}'
                    f'</div></figure>')
    axes = (f"one output element: the input's {n_in} elements in rows of {grid} "
            f"(row-major; grey past the last)" if grid else
            f"rows: input elements ({n_in}), columns: output elements ({n_out})")
    return (f'<div><p class="axes">{axes}; blue negative, red positive; the worst entry ringed'
            f'</p><div class="maps">{"".join(maps)}</div><p class="hover" id="{key}-hover">'
            f'&nbsp;</p></div>')


def _grid(n, shape):
    """Row length for a one-column Jacobian drawn compactly: the input's last dimension
    when it is a matrix of sensible proportions, else about the square root of n."""
    shape = tuple(shape or ())
    if len(shape) == 2 and max(shape) <= 8 * min(shape):
        return shape[1]
    return max(1, int(np.ceil(np.sqrt(n))))


def _worst_text(worst):
    if not worst:
        return ""
    return (f"; worst: input element {tuple(worst.get('input_element', ()))} → output element "
            f"{tuple(worst.get('output_element', ()))}: numerical "
            f"{_num(worst.get('numerical'))}, analytical {_num(worst.get('analytical'))}")


def _of_pair(diagnoses, pair):
    """The diagnoses whose details name this pair."""
    out = []
    for d in diagnoses:
        details = getattr(d, "details", None) or {}
        if details.get("output_index") == pair.output_index and \
                details.get("input_index") == pair.input_index:
            out.append(d)
    return out


def _diagnoses(diagnoses):
    if not diagnoses:
        return ""
    items = "".join(f'<li class="{html.escape(d.severity)}"><b>{html.escape(d.kind)}</b> '
                    f'({html.escape(d.severity)}): {html.escape(d.message)}</li>'
                    for d in diagnoses)
    return f'<ul class="diagnoses">{items}</ul>'


def _listed(a):
    """The entries as the mouse-over shows them: 6 digits, nan and inf by name."""
    return [[fmt_num(v, 6) for v in row] for row in a]


def _png(values, scale, rows, cols):
    """A data: URL of an RGB PNG of rows x cols pixels, one per entry in row-major order:
    white at 0, red positive, blue negative, saturated at ±scale; NaN and Inf black; pixels
    past the last entry (a compact one-column map) grey."""
    flat = np.asarray(values, float).reshape(-1)
    v = np.clip(np.nan_to_num(flat / scale, nan=0.0, posinf=1.0, neginf=-1.0), -1, 1)
    pos, neg = np.clip(v, 0, 1), np.clip(-v, 0, 1)
    rgb = np.stack([1 - neg * 0.8, 1 - (pos + neg) * 0.8, 1 - pos * 0.8], axis=-1)
    rgb = (rgb * 255).round().astype(np.uint8)
    rgb[~np.isfinite(flat)] = 0
    rgb = np.concatenate([rgb, np.full((rows * cols - flat.size, 3), 200, np.uint8)])
    rgb = rgb.reshape(rows, cols, 3)
    raw = b"".join(b"\x00" + rgb[r].tobytes() for r in range(rows))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", cols, rows, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode()


_STYLE = """body{font:14px Helvetica,Arial,sans-serif;margin:20px;max-width:1200px}
.pass{color:#070}.fail{color:#c00}.where,.axes{color:#555}
.maps{display:flex;gap:16px;flex-wrap:wrap}figure{margin:0}figcaption{font-size:12px}
.map{position:relative;border:1px solid #999}.map img,.map svg{position:absolute;inset:0;width:100%;height:100%}
.map img{image-rendering:pixelated}.pair{border-top:1px solid #ddd;padding:6px 0}
.diagnoses{margin:0;padding-left:20px}
.diagnoses li.error{color:#c00}.diagnoses li.warning{color:#a60}
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>%TITLE%</title>
<style>
%STYLE%</style></head><body><h1>%TITLE%</h1>%BODY%
<script id="data" type="application/json">%DATA%</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
for (const map of document.querySelectorAll(".map")) {
  map.addEventListener("mousemove", ev => {  // the entry under the mouse, both values
    const d = D[map.dataset.key]; if (!d) return;
    const r = map.getBoundingClientRect();
    let i = Math.floor((ev.clientY - r.top) / r.height * map.dataset.rows);
    let j = Math.floor((ev.clientX - r.left) / r.width * map.dataset.cols);
    const grid = Number(map.dataset.grid);
    if (grid) { i = i * grid + j; j = 0; }  // a compact one-column map: row-major elements
    if (!d.n[i] || d.n[i][j] === undefined) return;
    document.getElementById(map.dataset.key + "-hover").textContent =
      `input element ${i}, output element ${j}: numerical ${d.n[i][j]}, analytical ${d.a[i][j]}`;
  });
}
</script></body></html>
"""
