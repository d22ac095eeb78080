"""gradcheck of one target of a user's file, as `gradtool gradcheck` runs it: the target's
forward captured once (whose findings explain failures), the checked function built over its
tensor arguments and the module parameters it reaches, gradcheck (and gradgradcheck), and on
a failure the node to blame (localize.py). User-code errors raise UserCodeError with the
user's line."""
import contextlib
import dataclasses
import inspect

from ..engine import frames
from ..capture.loader import GENERATED, UserCodeError, example_hint, user_error
from .inspection import capture
from .inspection import backward_named_in
from .localize import declared_numerical, localize as localize_calls
from .hazards import custom_op_name
from .gradcheck import gradcheck_report, gradgradcheck_report


@dataclasses.dataclass
class TargetCheck:
    """One target's checks: a GradcheckReport per order checked (1, then 2 with order 2)."""
    target: object
    reports: list
    input_names: list
    reference: object = None  # the ReferenceReport, when the target has a reference
    reference_error: object = None  # the UserCodeError that stopped its reference check

    @property
    def passed(self):
        return all(r.passed for r in self.reports) and self.reference_error is None and (
            self.reference is None or self.reference.passed)


def check_target(target, seed, shape, *, eps=1e-6, atol=1e-5, rtol=1e-3, fast=False, order=1,
                 modes=(False, True), localize="custom", progress=None, device=None):
    """TargetCheck of a target: gradcheck of every tensor input and every module parameter it
    reaches, by the analytical Jacobians `modes` names (check_forward_ad, check_backward_ad).
    `progress(evaluations, n_elements)`: a context manager giving a function called once per
    evaluation of the target (a progress bar). `device`: where generated inputs go."""
    from ..adapters import current, device_name
    op_check = None
    if target.kind == "custom_op":  # opcheck's findings; torch may refuse the op outright
        from .custom_ops import check_op
        op_check = check_op(target, seed, shape, device)
        if op_check.blocks_gradcheck:
            return TargetCheck(target, [op_check.report(target.param_names)],
                               list(target.param_names))
    c = capture(target, seed, shape, device, record_ops=localize == "all")
    inputs = c.run.tensor_inputs + c.parameters
    tensors = tuple(t for _, t in inputs)
    where = frames.location(target.filename, target.lineno, relative=False)
    if not any(t.requires_grad for t in tensors):
        raise UserCodeError(f"target {target.name} ({where}) has no "
                            f"input that requires grad: nothing to check.",
                            location=(target.filename, target.lineno))
    blank = next((n for n, t in inputs if not current().has_values(t)), None)
    if blank is not None:
        raise UserCodeError(f"target {target.name} ({where}): "
                            f"`{blank}` is on the {device_name(dict(inputs)[blank])} device, "
                            f"which holds no values, and central differences need values: "
                            f"inspect and render work there, gradcheck does not",
                            location=(target.filename, target.lineno))
    n = sum(t.numel() for t in tensors if t.requires_grad)
    with progress(order * (2 * n + 1), n) if progress else contextlib.nullcontext() as tick:
        result = _check(target, c, inputs, tensors, tick, eps=eps, atol=atol, rtol=rtol,
                        fast=fast, order=order, modes=modes, localize=localize)
    if op_check is not None:
        op_check.add_to(result.reports[0], target.obj)
    return result


def _check(target, c, inputs, tensors, tick, *, eps, atol, rtol, fast, order, modes,
           localize):
    names = [n for n, _ in inputs]
    func = _over_tensors(c.run, len(c.run.tensor_inputs), tick)
    numerical, declared = declared_numerical(func, c.trace.function_calls)
    output_names = [o.name or f"output {o.index}" for o in c.snapshot.outputs
                    if o.requires_grad]
    modes, skipped_forward = _forward_checkable(modes, c.custom_nodes)
    tolerances = dict(eps=eps, atol=atol, rtol=rtol, fast_mode=fast)
    options = dict(tolerances, names=names, causes=c.causes, check_forward_ad=modes[0],
                   check_backward_ad=modes[1])
    function = target.obj if target.kind == "Function" else None
    reports = []
    try:
        reports.append(gradcheck_report(func, tensors, function=function,
                                        numerical_func=numerical, declared=declared, **options))
        _needs_example(target, reports[0], c.run)
        if order == 2:
            reports.append(gradgradcheck_report(func, tensors, output_names=output_names,
                                                **options))
        first = reports[0]
        every_node = localize == "all"
        if localize != "off" and not first.passed and first.exception is None and modes[1] \
                and (every_node or not ((function is not None or target.kind == "custom_op")
                                        and len(c.trace.function_calls) == 1)):
            first.localized = localize_calls(c, every_node, **tolerances)
            _blame(first)
    except (UserCodeError, KeyboardInterrupt):
        raise
    except BaseException as e:  # noqa: BLE001 - the user's forward raised (or exited)
        if not frames.user_frames(e.__traceback__):
            raise  # not the user's code: a bug of gradtool's, shown as one
        raise user_error(e, f"target {target.name}") from None
    reports[0].diagnoses += [d for d in c.diagnostics if d.kind == "one_branch"]
    for report in reports:
        if report.exception is not None:
            _locate_backward_error(report, c.custom_nodes)
        if skipped_forward is not None:
            report.diagnoses.append(skipped_forward)
    return TargetCheck(target, reports, names)


def _forward_checkable(modes, custom_nodes):
    """(modes, a note or None): a forward check needs every custom Function on the way to
    define jvp. Without one, --mode forward is a usage error (exit 2) naming it; --mode both
    checks the backward alone, with a note."""
    from .diagnoses import Diagnosis
    from ..adapters import current
    check_forward, check_backward = modes
    base = current().Function.jvp
    lacking = {n._forward_cls for n in custom_nodes if n._forward_cls.jvp is base} \
        if check_forward else ()
    if not lacking:
        return modes, None
    cls = sorted(lacking, key=lambda c: c.__name__)[0]
    op = custom_op_name(cls)
    try:
        where = (inspect.getsourcefile(cls), inspect.getsourcelines(cls)[1]) if op is None \
            else None
    except (OSError, TypeError):  # a class made without source
        where = None
    if op is not None:  # torch.library has no forward-mode formula to register for an op
        message = (f"custom op {op} has no forward-mode AD (torch.library registers a backward "
                   f"only), so its Jacobian cannot be checked in forward mode")
        fix, advice = "check", "check custom ops with --mode reverse"
    else:
        message = (f"{cls.__name__} defines no jvp, so its Jacobian cannot be checked in "
                   f"forward mode (the jvp is what --mode forward checks)")
        fix = f"define {cls.__name__}.jvp(ctx, *tangents), or check"
        advice = f"define {cls.__name__}.jvp(ctx, *tangents) to check forward mode too"
    if not check_backward:
        raise UserCodeError(f"{message}: {fix} the backward with --mode reverse.",
                            location=where)
    return (False, True), Diagnosis(
        "no_jvp", "info", f"{message}; only the backward was checked.",
        advice=advice, location=frames.site_location(where))


def _over_tensors(run, n_args, tick):
    """The target as a function of its tensor arguments and then the module parameters it
    reaches (checked in place: the module holds them, so they are not passed on)."""
    call = run.function()

    def func(*tensors):
        if tick is not None:
            tick()
        return call(*tensors[:n_args])
    return func


def _blame(report):
    """The node to blame replaces the target's per-pair `wrong_gradient` paragraphs (and its
    own finding of the node's kind), which all repeat what that one node's check says
    better."""
    located = report.localized
    if located is None:
        return
    if located.node is not None:
        blamed = located.as_diagnosis()  # (a surrogate or rounding: says it for the target)
        report.diagnoses = [d for d in report.diagnoses
                            if d.kind not in ("wrong_gradient", blamed.kind)]
        report.diagnoses.insert(0, blamed)
    else:
        report.diagnoses.append(located.as_diagnosis())


def _locate_backward_error(report, custom_nodes):
    """The user's backward raised (exit 2), or the engine refused what it returned (a failed
    check, exit 1): either way the error names the user's line."""
    from ..adapters import current
    error = report.user_error = user_error(report.exception, "backward")
    report.raised_in_user_code = frames.raised_in_user_code(report.exception,
                                                            also=current().own_dirs)
    where = error.location or backward_named_in(str(error), custom_nodes)
    if error.location is None and where is not None:  # the engine refused its result
        error.location = where
        error.args = (f"{error.args[0]} ({frames.site_location(where, relative=False)})",)


def _needs_example(target, report, run):
    """A Function's backward returns None for an input gradtool generated as a tensor whose
    true gradient is 0 too (central differences say so), or that forward kept as a plain ctx
    attribute (ctx.k = k): the user meant a number or a constant there, whose value gradtool
    cannot guess. (None for an input whose true gradient is not 0 is a real bug:
    grad_none_for_input.)"""
    ctx = run.outputs[0].grad_fn if run.outputs else None
    if target.kind != "Function" or ctx is None:
        return
    kept = list(vars(ctx).values())
    for d in report.diagnoses_of("grad_none_for_input"):
        i = d.details.get("input")
        if i is None or i >= len(target.arg_specs) or target.arg_specs[i] is not GENERATED:
            continue
        if d.severity == "info" or any(v is run.args[i] for v in kept):
            name = target.param_names[i]
            raise UserCodeError(
                f"{target.name}.backward returns None for `{name}`, which gradtool generated "
                f"as a tensor that requires grad: if `{name}` is a number or a constant, give "
                f"it with {example_hint(target, number=name)} on {target.name} (or annotate "
                f"it `{name}: float`); gradtool does not check a guess.",
                location=(target.filename, target.lineno))
