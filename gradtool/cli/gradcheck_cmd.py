"""gradtool gradcheck: numerical against analytic gradients for every target."""
import enum

import typer

from ..report import text
from . import common


def gradcheck(
    file: str = common.FILE_ARG,
    eps: float = typer.Option(1e-6, "--eps", help="Step of the central differences."),
    atol: float = typer.Option(1e-5, "--atol", help="Absolute tolerance."),
    rtol: float = typer.Option(1e-3, "--rtol", help="Relative tolerance."),
    fast: bool = typer.Option(False, "--fast", help="torch's fast mode: random projections "
                                                    "(failures are rechecked in full)."),
    order: int = typer.Option(1, "--order", min=1, max=2,
                              help="1: gradcheck; 2: gradgradcheck (second derivatives)."),
    mode: "Mode" = typer.Option(None, "--mode", case_sensitive=False,
                             help="forward|reverse|both: which analytical Jacobian is checked "
                                  "(backward, jvp, or both). Default: reverse; both for an "
                                  "autograd.Function that defines jvp."),
    strict: bool = typer.Option(False, "--strict",
                                help="Exit 1 on warnings too (hazards torch lets pass)."),
    seed: int = common.SEED,
    shape: str = common.SHAPE,
    json_: bool = common.JSON,
    no_color: bool = common.NO_COLOR,
):
    """Compare central differences with the analytic gradients of each target, per input and
    output; on a failure, show both Jacobians and say why they differ."""
    from ..errors import GradtoolError
    from ..loader import load, parse_shape
    try:
        shape_tuple = parse_shape(shape)
        with common.user_prints_to_stderr(json_):
            targets = load(file)
            results = [_check(t, seed, shape_tuple, eps, atol, rtol, fast, order, json_,
                              no_color, _modes(t, mode)) for t in targets]
    except GradtoolError as e:
        common.fail(e, no_color)
    if json_:
        from ..report.json import dumps, gradcheck_document
        typer.echo(dumps(gradcheck_document(file, seed, shape_tuple, results)))
    else:
        con = text.console(no_color=no_color)
        for i, (target, report) in enumerate(results):
            if i:
                con.print()
            text.print_gradcheck(con, target, report)
    failed = any(not r.passed for _, r in results)
    warned = any(d.severity == "warning" for _, r in results for d in r.diagnoses)
    raise typer.Exit(common.EXIT_CHECK_FAILED if failed or (strict and warned)
                     else common.EXIT_OK)


class Mode(str, enum.Enum):
    forward = "forward"
    reverse = "reverse"
    both = "both"


_MODES = {"reverse": (False, True), "forward": (True, False), "both": (True, True)}


def _modes(target, mode):
    """(check_forward_ad, check_backward_ad) for a target: as asked, else reverse, and both
    for a custom Function that defines its own jvp."""
    if mode is None:
        from ..autograd.function import Function
        own_jvp = target.kind == "Function" and target.obj.jvp is not Function.jvp
        mode = "both" if own_jvp else "reverse"
    return _MODES[mode.value if isinstance(mode, Mode) else mode]


def _check(target, seed, shape, eps, atol, rtol, fast, order, quiet, no_color, modes):
    """One target's GradcheckReport. The user's forward raising is a user-code error."""
    import gradtool as gt

    from ..checks import gradcheck_report, gradgradcheck_report
    from ..loader import UserCodeError, make_inputs, user_error
    from ..snapshot.capture import flatten_outputs
    gt.manual_seed(seed)
    args, kwargs = make_inputs(target, seed, shape)
    positions = [i for i, a in enumerate(args) if isinstance(a, gt.Tensor)]
    if not any(args[i].requires_grad for i in positions):
        raise UserCodeError(f"target {target.name} ({target.filename}:{target.lineno}) has no "
                            f"input that requires grad: nothing to check.")

    def func(*tensors):
        call_args = list(args)
        for i, t in zip(positions, tensors):
            call_args[i] = t
        return target.call(*call_args, **kwargs)
    inputs = tuple(args[i] for i in positions)
    try:
        first = func(*inputs)
    except (Exception, SystemExit) as e:  # the user's forward raised (or exited)
        raise user_error(e, f"target {target.name}") from None
    if not flatten_outputs(first):
        raise UserCodeError(f"target {target.name} ({target.filename}:{target.lineno}) "
                            f"returned {type(first).__name__}, not a tensor: gradtool needs a "
                            f"tensor (or tensors) to differentiate.")
    n = sum(t.numel() for t in inputs if t.requires_grad)
    with text.evaluation_progress(2 * n + 1, f"{target.name}: {2 * n + 1:,} evaluations",
                                  enabled=not quiet and not fast and n >= 200,
                                  no_color=no_color) as tick:
        counted = _counting(func, tick)
        check = gradgradcheck_report if order == 2 else gradcheck_report
        try:
            report = check(counted, inputs, eps=eps, atol=atol, rtol=rtol, fast_mode=fast,
                           check_forward_ad=modes[0], check_backward_ad=modes[1])
        except (Exception, SystemExit) as e:  # the user's forward raised (or exited)
            raise user_error(e, f"target {target.name}") from None
    report.input_names = [target.param_names[i] if i < len(target.param_names) else f"arg{i}"
                          for i in positions]
    return target, report


def _counting(func, tick):
    def counted(*a):
        tick()
        return func(*a)
    return counted

