"""gradtool render: the backward DAG drawn with Graphviz."""
import gc
from typing import List

import typer

from . import common, interrupts


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
    shape: List[str] = common.SHAPE,
    no_color: bool = common.NO_COLOR,
    timeout: float = common.TIMEOUT,
    engine: str = common.ENGINE,
    device: str = common.DEVICE,
):
    """Draw the backward graph of the target(s): leaves blue, backward nodes grey, outputs
    green, saved tensors orange."""
    from ...engine.errors import GradtoolError
    from ...capture.loader import load, parse_shape, split_spec
    from ...report import dot, output as output_file
    try:
        common.check_engines(engine, None)
        fmt = output_file.output_format(fmt, output, dot.FORMATS)
        if renderer not in ("auto", "graphviz-pure", "dot"):
            raise GradtoolError(f"--renderer must be auto, graphviz-pure or dot (got "
                                f"{renderer!r})")
        renderer_path = None if fmt in ("dot", "html") else dot.find_renderer(renderer, fmt)
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        # before the user's code can chdir
        output_path = output_file.resolve(output, keep=[split_spec(file)[0]])
        from ...checks.inspection import capture
        with common.on_engine(engine) as on:  # the user's code runs here
            place = common.placed_on(on, device)
            targets = load(file)
            # no full collections while the graphs are made: each scans every object made so
            # far (a second of 20,000 nodes); young garbage is still collected
            thresholds = gc.get_threshold()
            gc.set_threshold(*thresholds[:2], 1_000_000)
            try:
                captures = [interrupts.run_target(t, capture, t, seed, shape_tuple, place, True,
                                                  timeout=timeout) for t in targets]
            finally:
                gc.set_threshold(*thresholds)
        # the captures live to the end: the collector need not scan them again and again
        # while the drawing makes its many small objects (a second on 20,000 nodes)
        gc.freeze()
        if fmt == "html":
            from ...report import html
            data = html.page(captures, show_saved, expand, depth)
        elif len(captures) == 1:
            graph = dot.build(captures[0].snapshot, show_saved, expand, depth,
                              captures[0].diagnostics)
        else:
            graph = dot.combine([(c.target.name, c.snapshot, c.diagnostics) for c in captures],
                                show_saved, expand, depth)
        if fmt != "html":
            data = graph.source.encode() if fmt == "dot" else dot.render(graph, fmt,
                                                                         renderer_path)
        output_file.write_atomically(output_path, data)
    except GradtoolError as e:
        common.fail(e, no_color)
    from ...report.text import console
    nodes = sum(len(c.snapshot.nodes) for c in captures)
    console(no_color=no_color, stderr=True).print(
        f"wrote {output} ({fmt}, {nodes:,} graph nodes)")

