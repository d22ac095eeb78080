"""gradtool gradcheck: numerical against analytic gradients for every target."""
import dataclasses
import enum
import os

import typer

from ..report import text
from . import common, interrupts


@dataclasses.dataclass
class GradcheckResult:
    """One target's checks: a GradcheckReport per order checked (1, then 2 with --order 2)."""
    target: object
    reports: list
    input_names: list

    @property
    def passed(self):
        return all(r.passed for r in self.reports)


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
    shape: str = common.SHAPE,
    json_: bool = common.JSON,
    no_color: bool = common.NO_COLOR,
    quiet: bool = common.QUIET,
    timeout: float = common.TIMEOUT,
    engine: str = common.ENGINE,
    against: str = common.AGAINST,
):
    """Compare central differences with the analytic gradients of each target, per input and
    output; on a failure, show both Jacobians and say why they differ."""
    from ..errors import GradtoolError
    from ..loader import load, parse_shape
    from ..report import output as output_file
    try:
        common.check_engines(engine, against)
        common.check_quiet(quiet, json_)
        _check_tolerances(eps, atol, rtol)
        shape_tuple = parse_shape(shape)
        interrupts.check_timeout(timeout)
        if against is not None:
            common.run_against(file, seed, shape_tuple, order, json_, no_color, timeout)
        html_path = html and output_file.resolve(html)  # before the user's code can chdir
        with common.user_prints_to_stderr(json_), common.on_engine(engine):
            targets = load(file)
            results = common.run_each(
                targets, lambda t: check_target(t, seed, shape_tuple, eps, atol, rtol, fast, order,
                                          json_ or quiet, no_color, modes_for(t, mode)),
                no_color, timeout)
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
            if quiet:
                text.print_gradcheck_line(con, r)
                continue
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


def _raised_in_user_code(exc):
    """Whether the user's own code raised (the innermost frame is not gradtool's: a custom
    backward or jvp that raises is a user-code error, exit 2), rather than the engine refusing
    what it returned (a wrong gradient: a failed check, exit 1)."""
    import traceback

    from ..engines import current
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and not os.path.abspath(frames[-1].filename).startswith(
        current().source_dirs)


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


def modes_for(target, mode):
    """(check_forward_ad, check_backward_ad) for a target: as asked, else reverse, and both
    for a custom Function that defines its own jvp."""
    if mode is None:
        from ..engines import current
        Function = current().Function
        own_jvp = target.kind == "Function" and target.obj.jvp is not Function.jvp
        mode = "both" if own_jvp else "reverse"
    return _MODES[mode.value if isinstance(mode, Mode) else mode]


def check_target(target, seed, shape, eps, atol, rtol, fast, order, quiet, no_color, modes):
    """One target's GradcheckResult: its forward (and backward) run once by the snapshot's
    capture, whose findings (cut gradients, detached saved tensors) explain failures; then
    gradcheck of every tensor input and every module parameter it reaches, by the
    analytical Jacobians `modes` names (check_forward_ad, check_backward_ad)."""
    from ..checks import gradcheck_report, gradgradcheck_report
    from ..loader import UserCodeError, user_error
    from ..snapshot import capture
    from ..snapshot.capture import backward_named_in
    c = capture(target, seed, shape)
    inputs = c.run.tensor_inputs + c.parameters
    names = [n for n, _ in inputs]
    tensors = tuple(t for _, t in inputs)
    if not any(t.requires_grad for t in tensors):
        raise UserCodeError(f"target {target.name} ({target.filename}:{target.lineno}) has no "
                            f"input that requires grad: nothing to check.",
                            location=(target.filename, target.lineno))
    n_args = len(c.run.tensor_inputs)
    call = c.run.function()

    def func(*ts):  # parameters are checked in place: the module holds them
        return call(*ts[:n_args])
    output_names = [o.name or f"output {o.index}" for o in c.snapshot.outputs
                    if o.requires_grad]
    n = sum(t.numel() for t in tensors if t.requires_grad)
    options = dict(eps=eps, atol=atol, rtol=rtol, fast_mode=fast, names=names,
                   causes=c.causes, check_forward_ad=modes[0], check_backward_ad=modes[1])
    reports = []
    with text.evaluation_progress(order * (2 * n + 1),
                                  f"{target.name}: {order * (2 * n + 1):,} evaluations",
                                  enabled=not quiet and not fast and n >= 200,
                                  no_color=no_color) as tick:
        counted = _counting(func, tick)
        try:
            reports.append(gradcheck_report(counted, tensors, **options))
            _needs_example(target, reports[0], c.run)
            if order == 2:
                reports.append(gradgradcheck_report(counted, tensors,
                                                    output_names=output_names, **options))
        except UserCodeError:
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the user's forward raised (or exited)
            raise user_error(e, f"target {target.name}") from None
    for report in reports:
        if report.exception is not None:
            error = report.user_error = user_error(report.exception, "backward")
            report.raised_in_user_code = _raised_in_user_code(report.exception)
            where = error.location or backward_named_in(str(error), c.custom_nodes)
            if error.location is None and where is not None:  # the engine refused its result
                error.location = where
                error.args = (f"{error.args[0]} ({where[0]}:{where[1]})",)
    return GradcheckResult(target, reports, names)


def _needs_example(target, report, run):
    """A Function's backward returns None for an input gradtool generated as a tensor, and
    forward kept that input as a plain ctx attribute (ctx.constant = constant), not through
    save_for_backward: the user meant a number there, which gradtool cannot guess. (A
    backward returning None for a tensor it saved is a real bug: grad_none_for_input.)"""
    from ..loader import GENERATED, UserCodeError, example_hint
    ctx = run.outputs[0].grad_fn if run.outputs else None
    if target.kind != "Function" or ctx is None:
        return
    kept = list(vars(ctx).values())
    for d in report.diagnoses_of("grad_none_for_input"):
        i = d.details.get("input")
        if i is not None and i < len(target.arg_specs) and target.arg_specs[i] is GENERATED \
                and any(v is run.args[i] for v in kept):
            name = target.param_names[i]
            raise UserCodeError(
                f"{target.name}.backward returns None for `{name}`, which gradtool generated "
                f"as a tensor that requires grad: if `{name}` is a number, give it with "
                f"{example_hint(target, number=name)} on {target.name} (or annotate it "
                f"`{name}: float`); "
                f"gradtool does not check a guess.",
                location=(target.filename, target.lineno))


def _counting(func, tick):
    def counted(*a):
        tick()
        return func(*a)
    return counted
