"""gradtool inspect: the backward DAG, saved tensors, leaves and diagnostics of each target."""
from typing import Annotated, Optional

import typer

from . import common, interrupts


def inspect(
    file: common.File,
    seed: common.Seed = 0,
    shape: common.Shape = ["3"],
    json_: common.Json = False,
    no_color: common.NoColor = False,
    quiet: common.Quiet = False,
    timeout: common.Timeout = None,
    engine: common.EngineOption = common.Engine.gradtool,
    against: common.AgainstOption = None,
    device: common.Device = None,
    strict: Annotated[bool, typer.Option("--strict",
                                         help="Exit 1 on warning diagnostics too.")] = False,
    all_saved: Annotated[bool, typer.Option(
        "--all-saved", help="Show sizes and constants nodes save, too.")] = False,
    max_depth: Annotated[Optional[int], typer.Option(
        "--max-depth", min=0, help="Show the tree this many nodes deep.")] = None,
):
    """Run each target forward and backward; print its graph, every saved tensor, its leaves
    and what looks wrong (grad modes, cut gradients, in-place changes, NaN, precision).
    Exit 1 when an error (✗) is found."""
    from ...engine.errors import GradtoolError
    from ...capture.loader import load, parse_shape
    from ...report.formats import Findings
    try:
        common.check_engines(engine, against, device)
        common.check_quiet(quiet, json_)
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        if against is not None:
            common.run_against(file, seed, shape_tuple, 1, json_, no_color, timeout)
        with common.user_prints_to_stderr(json_), common.on_engine(engine.value) as on:
            place = common.placed_on(on, device)
            targets = load(file, shape_tuple)
            from ...checks.inspection import capture
            results = common.run_each(targets, lambda t: capture(t, seed, shape_tuple, place,
                                                                  localize=True),
                                      no_color, timeout)
    except GradtoolError as e:
        common.fail(e, no_color)
    common.report(Findings("inspect", file, results, seed, shape_tuple), json_, no_color, quiet,
                  all_saved=all_saved, max_depth=max_depth)
    raise typer.Exit(common.exit_code(
        results, lambda c: any(d.severity == "error" for d in c.diagnostics),
        lambda c: any(d.severity == "warning" for d in c.diagnostics), strict))
