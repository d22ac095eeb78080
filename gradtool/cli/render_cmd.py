"""gradtool render: the backward DAG drawn with Graphviz."""
import os

import typer

from . import common, interrupts


def render(
    file: str = common.FILE_ARG,
    output: str = typer.Option(..., "-o", "--output", help="The file to write."),
    fmt: str = typer.Option(None, "--format", help="svg, png, pdf or dot (default: from the "
                                                   "-o suffix, else svg)."),
    renderer: str = typer.Option("auto", "--renderer",
                                 help="auto, graphviz-pure or dot (the system Graphviz)."),
    show_saved: bool = typer.Option(False, "--show-saved",
                                    help="Draw saved tensors as their own nodes."),
    expand: bool = typer.Option(False, "--expand",
                                help="Draw every node, even in graphs too large to read."),
    seed: int = common.SEED,
    shape: str = common.SHAPE,
    no_color: bool = common.NO_COLOR,
    timeout: float = common.TIMEOUT,
):
    """Draw the backward graph of the target(s): leaves blue, backward nodes grey, outputs
    green, saved tensors orange."""
    from ..errors import GradtoolError
    from ..loader import load, parse_shape, split_spec
    from ..report import dot, output as output_file
    try:
        fmt = (fmt or os.path.splitext(output)[1].lstrip(".") or "svg").lower()
        if fmt not in dot.FORMATS:
            raise GradtoolError(f"--format must be one of {', '.join(dot.FORMATS)} (got {fmt!r})")
        if renderer not in ("auto", "graphviz-pure", "dot"):
            raise GradtoolError(f"--renderer must be auto, graphviz-pure or dot (got "
                                f"{renderer!r})")
        renderer_path = None if fmt == "dot" else dot.find_renderer(renderer, fmt)
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        # before the user's code can chdir
        output_path = output_file.resolve(output, keep=[split_spec(file)[0]])
        targets = load(file)
        from ..snapshot import capture
        captures = [interrupts.run_target(t, capture, t, seed, shape_tuple, timeout=timeout)
                    for t in targets]
        if len(captures) == 1:
            graph = dot.build(captures[0].snapshot, show_saved, expand)
        else:
            graph = dot.combine([(c.target.name, c.snapshot) for c in captures],
                                show_saved, expand)
        data = graph.source.encode() if fmt == "dot" else dot.render(graph, fmt, renderer_path)
        output_file.write_atomically(output_path, data)
    except GradtoolError as e:
        common.fail(e, no_color)
    from ..report.text import console
    nodes = sum(len(c.snapshot.nodes) for c in captures)
    console(no_color=no_color, stderr=True).print(
        f"wrote {output} ({fmt}, {nodes:,} graph nodes)")

