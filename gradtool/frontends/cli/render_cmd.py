"""gradtool render: the backward DAG drawn with Graphviz."""
import gc
from typing import Annotated, Optional

import typer

from ...report import formats
from . import common, interrupts

DrawingFormat = common.choices("DrawingFormat", *formats.names("graph"))
Renderer = common.choices("Renderer", "auto", "graphviz-pure", "dot")


def render(
    file: common.File,
    output: Annotated[str, typer.Option("-o", "--output", help="The file to write.")],
    fmt: Annotated[Optional[DrawingFormat], typer.Option(
        "--format", case_sensitive=False,
        help="The drawing's format (default: from the -o suffix, else svg).")] = None,
    renderer: Annotated[Renderer, typer.Option(
        "--renderer", help="auto, graphviz-pure or dot (the system Graphviz).")] = Renderer.auto,
    show_saved: Annotated[bool, typer.Option(
        "--show-saved", help="Draw saved tensors as their own nodes.")] = False,
    expand: Annotated[bool, typer.Option(
        "--expand", help="Draw every node, even in graphs too large to read.")] = False,
    depth: Annotated[Optional[int], typer.Option(
        "--depth", min=0, help="Open module boxes down to this nesting (0: every top-level "
                               "module call is one box); deeper ones collapse.")] = None,
    seed: common.Seed = 0,
    shape: common.Shape = ["3"],
    no_color: common.NoColor = False,
    timeout: common.Timeout = None,
    engine: common.EngineOption = common.Engine.gradtool,
    device: common.Device = None,
):
    """Draw the backward graph of the target(s): leaves blue, backward nodes grey, outputs
    green, saved tensors orange."""
    from ...engine.errors import GradtoolError
    from ...capture.loader import load, parse_shape, split_spec
    from ...report import output as output_file
    try:
        fmt = formats.choose(fmt and fmt.value, output, "graph")
        renderer_path = fmt.renderer(renderer.value)
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        # before the user's code can chdir
        output_path = output_file.resolve(output, keep=[split_spec(file)[0]])
        from ...checks.inspection import capture
        with common.on_engine(engine.value) as on:  # the user's code runs here
            place = common.placed_on(on, device)
            # what gradtool's imports made lives to the end: frozen, the full collections
            # the user's file triggers as it builds its model do not scan it again (0.2 s)
            gc.freeze()
            targets = load(file, shape_tuple)
            # no full collections while the graphs are made: each scans every object made so
            # far (a second of 20,000 nodes); young garbage is still collected
            thresholds = gc.get_threshold()
            gc.set_threshold(*thresholds[:2], 1_000_000)
            try:
                captures = [interrupts.run_target(t, capture, t, seed, shape_tuple, place, True,
                                                  timeout=timeout) for t in targets]
            finally:
                gc.set_threshold(*thresholds)
        for c in captures:
            c.let_run_go()
        # the captures live to the end: the collector need not scan them again and again
        # while the drawing makes its many small objects (a second on 20,000 nodes)
        gc.freeze()
        drawing = formats.Drawing(captures, show_saved, expand, depth)
        output_file.write_atomically(output_path, fmt.content(drawing, renderer=renderer_path))
    except GradtoolError as e:
        common.fail(e, no_color)
    from ...report.text import console
    nodes = sum(len(c.snapshot.nodes) for c in captures)
    console(no_color=no_color, stderr=True).print(
        f"wrote {output} ({fmt.name}, {nodes:,} graph nodes)")
