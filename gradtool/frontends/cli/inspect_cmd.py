"""gradtool inspect: the backward DAG, saved tensors, leaves and diagnostics of each target."""
from typing import Annotated, Optional

import typer

from . import common, interrupts


def inspect(
    paths: common.Paths,
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
    jobs: common.Jobs = "1",
):
    """Run each target forward and backward; print its graph, every saved tensor, its leaves
    and what looks wrong (grad modes, cut gradients, in-place changes, NaN, precision).
    Exit 1 when an error (✗) is found."""
    options = common.plain(locals())
    del options["paths"], options["jobs"]
    common.run_paths("inspect", paths, jobs, options, check_options, check_file)


def check_options(seed, shape, json_, quiet, timeout, engine, against, device, **_):
    """Refuse wrong options before any user code runs."""
    from ...capture.loader import parse_shape
    common.check_engines(engine, against, device)
    common.check_quiet(quiet, json_)
    parse_shape(shape)
    interrupts.check_timeout(timeout)


def check_file(spec, seed, shape, json_, no_color, quiet, timeout, engine, against, device,
               strict, all_saved, max_depth, progress=True):
    """Inspect the targets of one file (FILE or FILE::NAME): its Outcome."""
    from ...capture.loader import load, parse_shape
    from ...report.formats import Findings
    check_options(seed, shape, json_, quiet, timeout, engine, against, device)
    shape_tuple = parse_shape(shape)
    if against is not None:
        return common.against_outcome(spec, seed, shape_tuple, 1, json_, timeout)
    with common.user_prints_to_stderr(json_), common.on_engine(engine) as on:
        place = common.placed_on(on, device)
        targets = load(spec, shape_tuple)
        from ...checks.inspection import capture
        results = common.run_each(targets, lambda t: capture(t, seed, shape_tuple, place,
                                                              localize=True), timeout=timeout)
    return common.Outcome(
        Findings("inspect", spec, results, seed, shape_tuple),
        common.exit_codes(results, lambda c: any(d.severity == "error" for d in c.diagnostics),
                          lambda c: any(d.severity == "warning" for d in c.diagnostics), strict),
        dict(all_saved=all_saved, max_depth=max_depth))
