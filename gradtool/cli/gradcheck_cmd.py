"""gradtool gradcheck: numerical against analytic gradients for every target."""
import enum
from typing import List

import typer

from ..report import text
from . import common, interrupts


def gradcheck(
    file: str = common.FILE_ARG,
    eps: float = typer.Option(1e-6, "--eps", help="Step of the central differences (> 0)."),
    atol: float = typer.Option(1e-5, "--atol", help="Absolute tolerance (>= 0)."),
    rtol: float = typer.Option(1e-3, "--rtol", help="Relative tolerance (>= 0)."),
    fast: bool = typer.Option(False, "--fast", help="torch's fast mode: random projections "
                                                    "(failures are rechecked in full)."),
    order: int = typer.Option(1, "--order", min=1, max=2,
                              help="1: gradcheck; 2: gradgradcheck too (second derivatives)."),
    mode: "Mode" = typer.Option(None, "--mode", case_sensitive=False,
                             help="forward|reverse|both: which analytical Jacobian is checked "
                                  "(backward, jvp, or both). Default: reverse; both for an "
                                  "autograd.Function that defines jvp."),
    strict: bool = typer.Option(False, "--strict",
                                help="Exit 1 on warnings too (hazards torch lets pass)."),
    html: str = typer.Option(None, "--html", help="Also write a page of Jacobian heatmaps "
                                                  "(numerical, analytical, difference)."),
    seed: int = common.SEED,
    shape: List[str] = common.SHAPE,
    json_: bool = common.JSON,
    no_color: bool = common.NO_COLOR,
    timeout: float = common.TIMEOUT,
    engine: str = common.ENGINE,
    against: str = common.AGAINST,
    localize: str = typer.Option("custom", "--localize", metavar="custom|off",
                                 help="On a failure, check each custom Function call on its "
                                      "own and name the first wrong one (custom, the "
                                      "default), or not (off)."),
):
    """Compare central differences with the analytic gradients of each target, per input and
    output; on a failure, show both Jacobians and say why they differ."""
    from ..errors import GradtoolError
    from ..loader import load, parse_shape
    from ..report import output as output_file
    try:
        common.check_engines(engine, against)
        _check_tolerances(eps, atol, rtol)
        if localize not in ("custom", "off"):
            raise GradtoolError(f"--localize must be custom or off (got {localize!r})")
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        if against is not None:
            common.run_against(file, seed, shape_tuple, order, json_, no_color, timeout)
        html_path = html and output_file.resolve(html)  # before the user's code can chdir
        with common.user_prints_to_stderr(json_), common.on_engine(engine):
            targets = load(file)
            results = common.run_each(targets, lambda t: _check(
                t, seed, shape_tuple, json_, no_color, eps=eps, atol=atol, rtol=rtol, fast=fast,
                order=order, modes=_modes(t, mode), localize=localize), no_color, timeout)
        if html:
            from ..report import heatmap
            output_file.write_atomically(html_path, heatmap.page(file, results))
    except GradtoolError as e:
        common.fail(e, no_color)
    if json_:
        from ..report.json import dumps, gradcheck_document
        common.print_json(dumps(gradcheck_document(file, seed, shape_tuple, results)))
    else:
        con = text.console(no_color=no_color)
        for i, r in enumerate(results):
            if i:
                con.print()
            if isinstance(r, common.TargetError):
                text.print_target_error(con, r.target, r.error)
                continue
            for k, report in enumerate(r.reports):
                text.print_gradcheck(con, r.target, report, heading=k == 0)
    raise typer.Exit(common.exit_code(
        results, lambda r: not r.passed,
        lambda r: any(d.severity == "warning" for rep in r.reports for d in rep.diagnoses),
        strict, raised=lambda r: any(getattr(rep, "raised_in_user_code", False)
                                     for rep in r.reports)))


def _check(target, seed, shape, quiet, no_color, **options):
    """check_target, with a progress bar for long full-mode checks."""
    from ..checks.target import check_target

    def progress(evaluations, n):
        return text.evaluation_progress(evaluations, f"{target.name}: {evaluations:,} "
                                        f"evaluations", no_color=no_color,
                                        enabled=not quiet and not options["fast"] and n >= 200)
    return check_target(target, seed, shape, progress=progress, **options)


def _check_tolerances(eps, atol, rtol):
    from ..errors import GradtoolError
    for option, value, ok, rule in (("--eps", eps, eps > 0, "> 0"),
                                    ("--atol", atol, atol >= 0, ">= 0"),
                                    ("--rtol", rtol, rtol >= 0, ">= 0")):
        if not ok or value != value or value == float("inf"):
            raise GradtoolError(f"{option} must be a finite number {rule} (got {value})")


class Mode(str, enum.Enum):
    forward = "forward"
    reverse = "reverse"
    both = "both"


_MODES = {"reverse": (False, True), "forward": (True, False), "both": (True, True)}


def _modes(target, mode):
    """(check_forward_ad, check_backward_ad) for a target: as asked, else reverse, and both
    for a custom Function that defines its own jvp."""
    if mode is None:
        from ..engines import current
        Function = current().Function
        own_jvp = target.kind == "Function" and target.obj.jvp is not Function.jvp
        mode = "both" if own_jvp else "reverse"
    return _MODES[mode.value if isinstance(mode, Mode) else mode]
