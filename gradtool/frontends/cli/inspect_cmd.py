"""gradtool inspect: the backward DAG, saved tensors, leaves and diagnostics of each target."""
from typing import List

import typer

from . import common, interrupts


def inspect(
    file: str = common.FILE_ARG,
    seed: int = common.SEED,
    shape: List[str] = common.SHAPE,
    json_: bool = common.JSON,
    no_color: bool = common.NO_COLOR,
    quiet: bool = common.QUIET,
    timeout: float = common.TIMEOUT,
    engine: str = common.ENGINE,
    against: str = common.AGAINST,
    device: str = common.DEVICE,
    strict: bool = typer.Option(False, "--strict",
                                help="Exit 1 on warning diagnostics too."),
    all_saved: bool = typer.Option(False, "--all-saved",
                                   help="Show sizes and constants nodes save, too."),
    max_depth: int = typer.Option(None, "--max-depth", min=0,
                                  help="Show the tree this many nodes deep."),
):
    """Run each target forward and backward; print its graph, every saved tensor, its leaves
    and what looks wrong (grad modes, cut gradients, in-place changes, NaN, precision).
    Exit 1 when an error (✗) is found."""
    from ...engine.errors import GradtoolError
    from ...capture.loader import load, parse_shape
    from ...report import text
    try:
        common.check_engines(engine, against, device)
        common.check_quiet(quiet, json_)
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        if against is not None:
            common.run_against(file, seed, shape_tuple, 1, json_, no_color, timeout)
        with common.user_prints_to_stderr(json_), common.on_engine(engine) as on:
            place = common.placed_on(on, device)
            targets = load(file)
            from ...checks.inspection import capture
            results = common.run_each(targets, lambda t: capture(t, seed, shape_tuple, place,
                                                                  localize=True),
                                      no_color, timeout)
    except GradtoolError as e:
        common.fail(e, no_color)
    if json_:
        from ...report.json import chunks, inspect_document
        common.print_json(chunks(inspect_document(file, seed, shape_tuple, results)))
    else:
        con = text.console(no_color=no_color)
        for i, c in enumerate(results):
            if quiet:
                text.print_inspect_line(con, c)
                continue
            if i:
                con.print()
            if isinstance(c, common.TargetError):
                text.print_target_error(con, c.target, c.error)
            else:
                text.print_inspect(con, c, all_saved, max_depth)
    raise typer.Exit(common.exit_code(
        results, lambda c: any(d.severity == "error" for d in c.diagnostics),
        lambda c: any(d.severity == "warning" for d in c.diagnostics), strict))
