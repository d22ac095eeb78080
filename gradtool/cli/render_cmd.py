"""gradtool render: the backward DAG drawn with Graphviz."""
import os
import tempfile

import typer

from . import common


def render(
    file: str = common.FILE_ARG,
    output: str = typer.Option(..., "-o", "--output", help="The file to write."),
    fmt: str = typer.Option(None, "--format", help="svg, png, pdf, dot or html (default: from "
                                                   "the -o suffix, else svg)."),
    renderer: str = typer.Option("auto", "--renderer",
                                 help="auto, graphviz-pure or dot (the system Graphviz)."),
    show_saved: bool = typer.Option(False, "--show-saved",
                                    help="Draw saved tensors as their own nodes."),
    expand: bool = typer.Option(False, "--expand",
                                help="Draw every node, even in graphs too large to read."),
    depth: int = typer.Option(None, "--depth", min=0,
                              help="Open module boxes down to this nesting (0: every top-level "
                                   "module call is one box); deeper ones collapse."),
    seed: int = common.SEED,
    shape: str = common.SHAPE,
    no_color: bool = common.NO_COLOR,
):
    """Draw the backward graph of the target(s): leaves blue, backward nodes grey, outputs
    green, saved tensors orange."""
    from ..errors import GradtoolError
    from ..loader import load, parse_shape
    from ..report import dot
    try:
        fmt = (fmt or os.path.splitext(output)[1].lstrip(".") or "svg").lower()
        if fmt not in dot.FORMATS:
            raise GradtoolError(f"--format must be one of {', '.join(dot.FORMATS)} (got {fmt!r})")
        if renderer not in ("auto", "graphviz-pure", "dot"):
            raise GradtoolError(f"--renderer must be auto, graphviz-pure or dot (got "
                                f"{renderer!r})")
        renderer_path = None if fmt == "dot" else dot.find_renderer(renderer, fmt)
        shape_tuple = parse_shape(shape)
        targets = load(file)
        from ..snapshot import capture
        captures = [capture(t, seed, shape_tuple) for t in targets]
        if fmt == "html":
            from ..report import html
            data = html.page(captures, renderer_path, show_saved, expand, depth)
        elif len(captures) == 1:
            graph = dot.build(captures[0].snapshot, show_saved, expand, depth,
                              captures[0].diagnostics)
        else:
            graph = dot.combine([(c.target.name, c.snapshot, c.diagnostics) for c in captures],
                                show_saved, expand, depth)
        if fmt != "html":
            data = graph.source.encode() if fmt == "dot" else dot.render(graph, fmt,
                                                                         renderer_path)
        _write_atomically(output, data)
    except GradtoolError as e:
        common.fail(e, no_color)
    from ..report.text import console
    nodes = sum(len(c.snapshot.nodes) for c in captures)
    console(no_color=no_color, stderr=True).print(
        f"wrote {output} ({fmt}, {nodes:,} graph nodes)")


def _write_atomically(path, data):
    """Nothing half-written: the file appears whole or not at all."""
    from ..errors import GradtoolError
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gradtool-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as a plain open() would have made it
        os.replace(tmp, path)
    except OSError as e:
        raise GradtoolError(f"cannot write {path}: {e.strerror}") from None
