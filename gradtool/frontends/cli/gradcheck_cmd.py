"""gradtool gradcheck: numerical against analytic gradients for every target."""
import dataclasses
import warnings
from typing import Annotated, Optional

import typer

from ...engine.errors import GradtoolError
from ...engine.frames import location
from . import common, interrupts


Mode = common.choices("Mode", "forward", "reverse", "both")
Localize = common.choices("Localize", "custom", "all", "off")


def gradcheck(
    paths: common.Paths,
    eps: Annotated[float, typer.Option("--eps", help="Step of the central differences "
                                                     "(> 0).")] = 1e-6,
    atol: Annotated[float, typer.Option("--atol", help="Absolute tolerance (>= 0).")] = 1e-5,
    rtol: Annotated[float, typer.Option("--rtol", help="Relative tolerance (>= 0).")] = 1e-3,
    fast: Annotated[bool, typer.Option("--fast", help="torch's fast mode: random projections "
                                                      "(failures are rechecked in full).")] = False,
    order: Annotated[int, typer.Option("--order", min=1, max=2, help="1: gradcheck; 2: "
                                       "gradgradcheck too (second derivatives).")] = 1,
    mode: Annotated[Optional[Mode], typer.Option(
        "--mode", case_sensitive=False, help="forward|reverse|both: which analytical Jacobian "
                                             "is checked (backward, jvp, or both). Default: "
                                             "reverse; both for an autograd.Function that "
                                             "defines jvp.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too (hazards "
                                                          "torch lets pass).")] = False,
    html: Annotated[Optional[str], typer.Option(
        "--html", metavar="FILE", help="Also write a page of Jacobian heatmaps (numerical, "
                                       "analytical, difference).")] = None,
    reference: Annotated[Optional[str], typer.Option(
        "--reference", metavar="FILE::NAME", help="Check each target against this function in "
                                                  "low precision (as @gradtool.reference "
                                                  "does).")] = None,
    reference_only: Annotated[bool, typer.Option(
        "--reference-only", help="Run only the reference check, not gradcheck.")] = False,
    dtypes: Annotated[Optional[str], typer.Option(
        "--dtypes", metavar="float32,bfloat16,float16",
        help="The dtypes of the reference check (default: float32, or the example's own "
             "dtype when it is lower).")] = None,
    factor: Annotated[float, typer.Option(
        "--factor", help="Reference check: allow this many times the reference's own error "
                         "in each dtype.")] = 2.0,
    seed: common.Seed = 0,
    shape: common.Shape = ["3"],
    json_: common.Json = False,
    no_color: common.NoColor = False,
    quiet: common.Quiet = False,
    timeout: common.Timeout = None,
    engine: common.EngineOption = common.Engine.gradtool,
    against: common.AgainstOption = None,
    device: common.Device = None,
    localize: Annotated[Localize, typer.Option(
        "--localize", help="On a failure, check each custom Function call on its own and name "
                           "the first wrong one (custom, the default), every node of the graph "
                           "(all), or none (off).")] = Localize.custom,
    jobs: common.Jobs = "1",
):
    """Compare central differences with the analytic gradients of each target, per input and
    output; on a failure, show both Jacobians and say why they differ. A target with a
    reference (@gradtool.reference, --reference) is also checked against it in low
    precision."""
    options = common.plain(locals())
    del options["paths"], options["jobs"]
    common.run_paths("gradcheck", paths, jobs, options, check_options, check_file)


def check_options(eps, atol, rtol, reference, reference_only, dtypes, factor, shape, json_,
                  quiet, timeout, engine, against, device, localize, **_):
    """Refuse wrong options before any user code runs; the reference check's, parsed."""
    from ...capture.loader import parse_shape
    if localize == "all" and "torch" in (engine, against):
        raise GradtoolError("--localize all re-runs every op of the graph on its own, which "
                            "gradtool does on its own engine only: with --engine torch, "
                            "--localize custom checks each custom Function call")
    common.check_engines(engine, against, device)
    common.check_quiet(quiet, json_)
    _check_tolerances(eps, atol, rtol)
    asked = _reference_options(reference, reference_only, dtypes, factor, against)
    parse_shape(shape)
    interrupts.check_timeout(timeout)
    return asked


def check_file(spec, eps, atol, rtol, fast, order, mode, strict, html, reference,
               reference_only, dtypes, factor, seed, shape, json_, no_color, quiet, timeout,
               engine, against, device, localize, progress=True):
    """gradcheck the targets of one file (FILE or FILE::NAME), and write its --html page:
    its Outcome."""
    from ...capture.loader import load, parse_shape
    from ...report import formats, output as output_file
    asked = check_options(eps, atol, rtol, reference, reference_only, dtypes, factor, shape,
                          json_, quiet, timeout, engine, against, device, localize)
    shape_tuple = parse_shape(shape)
    if against is not None:
        return common.against_outcome(spec, seed, shape_tuple, order, json_, timeout)
    html_path = html and output_file.resolve(html)  # before the user's code can chdir
    with common.user_prints_to_stderr(json_), common.on_engine(engine) as on:
        place = common.placed_on(on, device)
        reference_fn = asked.load()
        targets = load(spec, shape_tuple)
        results = common.run_each(
            targets, lambda t: _check_target(
                t, seed, shape_tuple, place, asked, reference_fn,
                lambda: _check(t, seed, shape_tuple, not progress or json_ or quiet, no_color,
                               eps=eps, atol=atol, rtol=rtol, fast=fast, order=order,
                               modes=modes_for(t, mode), localize=localize,
                               device=place)), timeout=timeout)
    findings = formats.Findings("gradcheck", spec, results, seed, shape_tuple)
    if html:
        output_file.write_atomically(html_path, formats.FORMATS["heatmap"].content(findings))
    return common.Outcome(findings, common.exit_codes(
        results, lambda r: not r.passed,
        lambda r: any(d.severity == "warning" for rep in r.reports for d in rep.diagnoses),
        strict, raised=lambda r: r.reference_error is not None or any(
            getattr(rep, "raised_in_user_code", False) for rep in r.reports)))


def _check(target, seed, shape, quiet, no_color, **options):
    """check_target, with a progress bar for long full-mode checks."""
    from ...checks.target import check_target
    from ...report import text

    def progress(evaluations, n):
        return text.evaluation_progress(evaluations, f"{target.name}: {evaluations:,} "
                                        f"evaluations", no_color=no_color,
                                        enabled=not quiet and not options["fast"] and n >= 200)
    with warnings.catch_warnings():
        # torch's warning, once per input: the report's precision diagnosis says it with the
        # cause, and the warning would name gradtool's line, not the user's
        warnings.filterwarnings("ignore", r"Input #\d+ requires gradient and is not a double")
        return check_target(target, seed, shape, progress=progress, **options)


def _check_tolerances(eps, atol, rtol):
    from ...engine.errors import GradtoolError
    for option, value, ok, rule in (("--eps", eps, eps > 0, "> 0"),
                                    ("--atol", atol, atol >= 0, ">= 0"),
                                    ("--rtol", rtol, rtol >= 0, ">= 0")):
        if not ok or value != value or value == float("inf"):
            raise GradtoolError(f"{option} must be a finite number {rule} (got {value})")


_MODES = {"reverse": (False, True), "forward": (True, False), "both": (True, True)}


def modes_for(target, mode):
    """(check_forward_ad, check_backward_ad) for a target: as asked, else reverse, and both
    for a custom Function that defines its own jvp."""
    if mode is None:
        from ...adapters import current
        Function = current().Function
        own_jvp = target.kind == "Function" and target.obj.jvp is not Function.jvp
        mode = "both" if own_jvp else "reverse"
    return _MODES[mode.value if isinstance(mode, Mode) else mode]


@dataclasses.dataclass
class _ReferenceOptions:
    """--reference, --reference-only, --dtypes, --factor, checked before any code runs."""
    spec: str
    only: bool
    dtypes: list
    factor: float

    def load(self):
        """The --reference function (its file imported as the target's is), or None."""
        if self.spec is None:
            return None
        from ...capture.loader import UserCodeError, import_user_file, split_spec
        path, name = split_spec(self.spec)
        if name is None:
            raise UserCodeError(f"--reference {self.spec}: name the function, as "
                                f"--reference {path}::NAME")
        module = import_user_file(path)
        fn = getattr(module, name, None)
        if not callable(fn):
            raise UserCodeError(f"--reference {self.spec}: {path} has no function {name!r}")
        return fn


def _reference_options(spec, only, dtypes, factor, against):
    from ...checks.reference import parse_dtypes
    from ...engine.errors import GradtoolError
    if not (factor > 0 and factor != float("inf")):
        raise GradtoolError(f"--factor must be a finite number > 0 (got {factor})")
    if against is not None and (spec or only or dtypes):
        raise GradtoolError("--against torch compares engines; the reference check runs on "
                            "one engine: drop --against")
    return _ReferenceOptions(spec, only, parse_dtypes(dtypes) if dtypes else None, factor)


def _check_target(target, seed, shape, device, asked, reference_fn, gradcheck):
    """gradcheck (unless --reference-only), then the reference check when the target has a
    reference (--reference, else its @gradtool.reference)."""
    from ...checks import reference as ref
    from ...capture.loader import UserCodeError
    from ...checks.target import TargetCheck
    result = TargetCheck(target, [], []) if asked.only else gradcheck()
    reference_fn = reference_fn or ref.declared(target.obj)
    if reference_fn is None:
        if asked.only:
            raise UserCodeError(
                f"target {target.name} "
                f"({location(target.filename, target.lineno, relative=False)}) has no reference "
                f"to check against: add @gradtool.reference(reference_fn) above it, or give "
                f"--reference FILE::NAME", location=(target.filename, target.lineno))
        if result.reports:
            _suggest_reference(target, result.reports[0])
        return result
    try:
        result.reference = _reference_check(target, seed, shape, device, asked, reference_fn)
    except UserCodeError as e:
        if asked.only:
            raise
        result.reference_error = e  # reported after the gradcheck that did run
    return result


def _reference_check(target, seed, shape, device, asked, reference_fn):
    """The ReferenceReport of one target: its seeded inputs in each dtype, the parameters of
    the modules its file holds."""
    import functools

    from ...checks import reference as ref
    from ...adapters import current
    from ...capture.loader import UserCodeError, make_inputs
    from ...capture.loader import file_modules, module_parameters
    E = current()
    args, kwargs = make_inputs(target, seed, shape, device)
    parameters = [(n, p) for n, p in module_parameters(file_modules(E, target)).items()
                  if p.requires_grad]
    try:
        return ref.reference_report(
            functools.partial(target.call, **kwargs), functools.partial(reference_fn, **kwargs),
            args, dtypes=asked.dtypes, factor=asked.factor, names=target.argument_names(len(args)),
            parameters=parameters, seed=seed,
            where=(target.name, target.filename, target.lineno))
    except ref.ReferenceError as e:
        raise UserCodeError(f"target {target.name}: reference check: {e}", e.details,
                            e.location) from None
    except GradtoolError as e:  # a dtype the engine lacks
        raise UserCodeError(f"target {target.name}: reference check: {e}",
                            location=(target.filename, target.lineno)) from None


def _suggest_reference(target, report):
    """A failed low-precision gradcheck that the float64 recheck could not clear: the
    reference check is the tool; say so with the line to add."""
    from ...checks.diagnose import REFERENCE_ADVICE
    for d in report.diagnoses_of("precision"):
        if not report.passed and REFERENCE_ADVICE in d.message:
            name = getattr(target.obj, "__name__", None) or target.name  # (an op has none)
            low = dict.fromkeys(i["dtype"] for i in report.inputs
                                if i.get("dtype") in ("float32", "bfloat16", "float16"))
            d.message = d.message.replace(REFERENCE_ADVICE, (
                f"A kernel meant for this precision is judged against a float64 reference: "
                f"add `@gradtool.reference(reference_{name.lower()})` above {name} "
                f"({location(target.filename, target.lineno)}), "
                f"reference_{name.lower()} being the plain code it replaces (same arguments), "
                f"and run gradtool gradcheck --dtypes {','.join(low) or 'float32'}."))
