"""gradtool inspect: the backward DAG, saved tensors, leaves and diagnostics of each target."""
import typer

from . import common, interrupts


def inspect(
    file: str = common.FILE_ARG,
    seed: int = common.SEED,
    shape: str = common.SHAPE,
    json_: bool = common.JSON,
    no_color: bool = common.NO_COLOR,
    strict: bool = typer.Option(False, "--strict",
                                help="Exit 1 when any warning or error diagnostic is found."),
    timeout: float = common.TIMEOUT,
):
    """Run each target forward and backward; print its graph, every saved tensor, its leaves
    and what looks wrong (grad modes, in-place changes, NaN, precision)."""
    from ..errors import GradtoolError
    from ..loader import load, parse_shape
    from ..report import text
    try:
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        with common.user_prints_to_stderr(json_):
            targets = load(file)
            from ..snapshot import capture
            captures = [interrupts.run_target(t, capture, t, seed, shape_tuple, timeout=timeout)
                        for t in targets]
    except GradtoolError as e:
        common.fail(e, no_color)
    if json_:
        from ..report.json import dumps, inspect_document
        common.print_json(dumps(inspect_document(file, seed, shape_tuple, captures)))
    else:
        con = text.console(no_color=no_color)
        for i, c in enumerate(captures):
            if i:
                con.print()
            text.print_inspect(con, c)
    flagged = any(d.severity in ("warning", "error") for c in captures for d in c.diagnostics)
    raise typer.Exit(common.EXIT_CHECK_FAILED if strict and flagged else common.EXIT_OK)
