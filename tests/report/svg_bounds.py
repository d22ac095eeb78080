"""Where an SVG drawing's texts would overflow their boxes when a viewer draws them in DejaVu
Sans (the usual fallback for Helvetica): each text measured with DejaVu Sans' own advance
widths, read from the installed font, against the bounds of the shape it labels."""
import functools
import re
import struct
import subprocess
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


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


def _bounds(group):
    """x extent of the shapes drawn in an SVG group (polygons, polylines, paths)."""
    xs = []
    for el in group:
        if el.tag in (SVG + "polygon", SVG + "polyline"):
            xs += [float(p.split(",")[0]) for p in el.get("points").split()]
        elif el.tag == SVG + "path":
            numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", el.get("d"))]
            xs += numbers[0::2]
    return (min(xs), max(xs)) if xs else None


def overflows(svg_text):
    """(title of the group, text) for each text of a node or frame reaching past its box."""
    out = []
    for group in ET.fromstring(svg_text).iter(SVG + "g"):
        if group.get("class") not in ("node", "cluster"):
            continue
        box = _bounds(group)
        if box is None:  # a plaintext node: no box to leave
            continue
        for text in group.iter(SVG + "text"):
            w, x = width(text.text or "", float(text.get("font-size"))), float(text.get("x"))
            left = {"start": x, "middle": x - w / 2, "end": x - w}[text.get("text-anchor")]
            if left < box[0] or left + w > box[1]:
                out.append((group.findtext(SVG + "title"), text.text))
    return out
