"""Every format gradtool writes, in one registry: its suffixes, what it shows, what writes it,
whether Graphviz lays it out. The CLI (render, --json, gradcheck --html, the text report) and
the notebook API (Graph.save, the reports' save) write through it only, so a format added here
is one both can write. Light to import (`gradtool --help` lists --format's choices from it)."""
import dataclasses
import io
import os
import shutil
from typing import Callable

from ..engine.errors import GradtoolError
from . import output

GRAPH = ("graph",)
COMMANDS = ("inspect", "gradcheck", "against")
TEXT_WIDTH = 100  # columns of a text report written to a file or shown in a notebook


@dataclasses.dataclass
class Drawing:
    """What the graph formats draw: the captures of one file's targets (anything with
    .target.name, .snapshot and .diagnostics), and how (as `gradtool render`'s options)."""
    captures: list
    show_saved: bool = False
    expand: bool = False
    depth: int = None
    kind = "graph"

    def digraph(self):
        from . import dot
        if len(self.captures) == 1:
            c = self.captures[0]
            return dot.build(c.snapshot, self.show_saved, self.expand, self.depth, c.diagnostics)
        return dot.combine([(c.target.name, c.snapshot, c.diagnostics) for c in self.captures],
                           self.show_saved, self.expand, self.depth)


@dataclasses.dataclass
class Findings:
    """What a command (`kind`: inspect, gradcheck, against) found: the file and options it ran
    with, and a result per target (one with an .error in place of a target that raised)."""
    kind: str
    file: str
    results: list
    seed: int = 0
    shape: tuple = (3,)
    order: int = 1


@dataclasses.dataclass(frozen=True)
class Format:
    name: str             # as --format and save(format=...) spell it
    suffixes: tuple       # the file suffixes that mean it, the one to suggest first
    of: tuple             # the kinds of subject it shows: "graph" (a Drawing), or commands
    writer: Callable      # (format, subject, **options) -> its text, or bytes when binary
    binary: bool = False
    graphviz: bool = False   # laid out by a Graphviz program (graphviz-pure or `dot`)
    needs_dot: bool = False  # Graphviz's own `dot` only

    def write(self, subject, **options):  # its text, or its bytes when binary
        return self.writer(self, subject, **options)

    def content(self, subject, **options):  # the file's bytes
        data = self.write(subject, **options)
        return data if self.binary else data.encode()

    def renderer(self, choice="auto"):
        """The Graphviz program that lays this format out (`choice`: auto, graphviz-pure or
        dot), found before any work is done; None for a format that needs none."""
        if not self.graphviz:
            return None
        from . import dot
        if self.needs_dot and choice != "dot" and not shutil.which("dot"):
            pure = " and ".join(n for n, f in FORMATS.items() if f.graphviz and not f.needs_dot)
            raise dot.RendererNotFound(
                f"{self.name.upper()} needs Graphviz's own `dot`, which is not on PATH "
                f"(install Graphviz, e.g. apt-get install graphviz); graphviz-pure writes "
                f"{pure}, and --format dot needs no renderer.")
        return dot.find_renderer("dot" if self.needs_dot and choice == "auto" else choice)


def print_text(con, findings, quiet=False, all_saved=False, max_depth=None):
    """The text report of what a command found, on a rich console, as the CLI prints it
    (quiet: one line per target)."""
    from . import text
    for i, r in enumerate(findings.results):
        error = getattr(r, "error", None)
        if quiet:
            inspect = findings.kind == "inspect"
            (text.print_inspect_line if inspect else text.print_gradcheck_line)(con, r)
            continue
        if i:
            con.print()
        if error is not None:
            text.print_target_error(con, r.target, error)
        elif findings.kind == "inspect":
            text.print_inspect(con, r, all_saved, max_depth)
        elif findings.kind == "against":
            text.print_against(con, r)
        else:
            for k, report in enumerate(r.reports):
                text.print_gradcheck(con, r.target, report, heading=k == 0)
            if r.reference is not None:
                text.print_reference(con, r.target, r.reference, heading=not r.reports)
            if r.reference_error is not None:
                text.print_user_error(con, r.reference_error)


def json_document(findings):
    """The JSON document of what a command found (its schema: report/json.py), as pieces of
    text written as they are made (a 100,000-node graph is never held whole as text)."""
    from . import json
    f = findings
    if f.kind == "against":
        return json.chunks(json.against_document(f.file, f.seed, f.shape, f.order, f.results))
    document = json.inspect_document if f.kind == "inspect" else json.gradcheck_document
    return json.chunks(document(f.file, f.seed, f.shape, f.results))


def rendered(print_to, width=TEXT_WIDTH, color=False):
    """What print_to(console) prints on a console `width` columns wide, as text."""
    from rich.console import Console
    buffer = io.StringIO()
    # never Jupyter's display (rich would send the text there, not to the buffer)
    con = Console(file=buffer, width=width, force_jupyter=False, force_terminal=color,
                  no_color=not color, color_system="truecolor" if color else None,
                  highlight=False, soft_wrap=False)
    print_to(con)
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().rstrip().splitlines())


def _text(fmt, findings, width=TEXT_WIDTH, color=False, **options):
    return rendered(lambda con: print_text(con, findings, **options), width, color)


def _graphviz(fmt, drawing, renderer=None):
    from . import dot
    data = dot.render(drawing.digraph(), fmt.name, renderer or fmt.renderer())
    return data if fmt.binary else data.decode()


def _explorer(fmt, drawing, renderer=None):
    from . import html
    return html.page(drawing.captures, drawing.show_saved, drawing.expand,
                     drawing.depth).decode()


def _heatmaps(fmt, findings):
    from . import heatmap
    return heatmap.page(findings.file, findings.results).decode()


FORMATS = {f.name: f for f in (
    Format("text", ("txt",), COMMANDS, _text),
    Format("json", ("json",), COMMANDS, lambda fmt, f: "".join(json_document(f)) + "\n"),
    Format("svg", ("svg",), GRAPH, _graphviz, graphviz=True),
    Format("png", ("png",), GRAPH, _graphviz, binary=True, graphviz=True),
    Format("pdf", ("pdf",), GRAPH, _graphviz, binary=True, graphviz=True, needs_dot=True),
    Format("dot", ("dot", "gv"), GRAPH, lambda fmt, d, renderer=None: d.digraph().source),
    Format("html", ("html",), GRAPH, _explorer),  # the explorer of the graph
    # gradcheck's Jacobians, numerical, analytical and their difference, as heatmaps
    Format("heatmap", ("html",), ("gradcheck",), _heatmaps),
)}


def names(kind):
    """The formats that show a subject of this kind ("graph", or a command), in order."""
    return [name for name, f in FORMATS.items() if kind in f.of]


def choose(name, path, kind):
    """The format a file of this kind is written in: `name` (--format), else the path's
    suffix, else the kind's first format; an error names the option that is wrong."""
    fit = {n: FORMATS[n] for n in names(kind)}
    by_suffix = {s: f for f in fit.values() for s in f.suffixes}
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    if name is not None:
        fmt = fit.get(name.lower())
        if fmt is None:
            raise GradtoolError(f"--format must be one of {', '.join(fit)} (got {name!r})")
        if suffix in by_suffix and suffix not in fmt.suffixes:
            raise GradtoolError(f"--format {fmt.name} contradicts -o {path} (a .{suffix} "
                                f"file): drop --format, or name the file .{fmt.suffixes[0]}")
        return fmt
    if suffix and suffix not in by_suffix:
        files = [f".{s}" for s in by_suffix]
        raise GradtoolError(f"-o {path}: gradtool cannot tell the format from .{suffix}; "
                            f"name the file {', '.join(files[:-1])} or {files[-1]}, or give "
                            f"--format (one of {', '.join(fit)})")
    return by_suffix.get(suffix) or next(iter(fit.values()))


def save(path, subject, format=None, **options):
    """Write `subject` (a Drawing, or a command's Findings) to the file `path`, in `format`,
    else the one its suffix names. Returns the Format written."""
    fmt = choose(format, str(path), subject.kind)
    output.write_atomically(str(path), fmt.content(subject, **options))
    return fmt
