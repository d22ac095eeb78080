"""gradtool.testing: assertions for a project's own tests.

`assert_close` is the engine's torch.testing.assert_close (default tolerances from the dtype,
torch's messages). `assert_gradcheck` / `assert_gradgradcheck` run gradcheck / gradgradcheck and fail
with the report `gradtool gradcheck` prints: the per-pair table, the Jacobians with the
differing entries marked, and the diagnoses."""
import inspect

from ..engine.testing import assert_close

__all__ = ["assert_close", "assert_gradcheck", "assert_gradgradcheck", "GradcheckAssertionError",
           "assert_matches_reference", "ReferenceAssertionError"]

# ====================================== gradients ======================================
class GradcheckAssertionError(AssertionError):
    """assert_gradcheck failed: the message is the CLI's report, `.report` the
    GradcheckReport behind it."""
    __module__ = "gradtool.testing"  # where users import it from (pytest prints this name)

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


def assert_gradcheck(fn, inputs, **gradcheck_options):
    """Pass silently when gradcheck(fn, inputs, **gradcheck_options) passes; otherwise raise
    GradcheckAssertionError whose message is the report `gradtool gradcheck` prints (which
    input, the largest errors, the worst element, both Jacobians, and why they differ).
    Options are gradcheck's (eps, atol, rtol, fast_mode, nondet_tol, ...)."""
    __tracebackhide__ = True
    from ..checks import gradcheck, gradcheck_report
    _assert_check(gradcheck, gradcheck_report, fn, inputs, (), gradcheck_options)


def assert_gradgradcheck(fn, inputs, grad_outputs=None, **gradgradcheck_options):
    """assert_gradcheck for second derivatives: gradgradcheck(fn, inputs, grad_outputs,
    **options), failing with the report `gradtool gradcheck --order 2` prints."""
    __tracebackhide__ = True
    from ..checks import gradgradcheck, gradgradcheck_report
    _assert_check(gradgradcheck, gradgradcheck_report, fn, inputs, (grad_outputs,),
                  gradgradcheck_options)


def _assert_check(check, check_report, fn, inputs, extra, options):
    """Run the check as the CLI does (its report function, inputs named after fn's
    parameters) unless an option only the torch-signature function takes is given."""
    __tracebackhide__ = True
    from ..checks import GradcheckError
    from ..checks.gradcheck import _verdict
    options.pop("raise_exception", None)  # failing is what an assertion is for
    try:
        if set(options) <= set(inspect.signature(check_report).parameters):
            _verdict(check_report(fn, inputs, *extra, names=_input_names(fn, inputs),
                                  **options), raise_exception=True)
        else:
            check(fn, inputs, *extra, raise_exception=True, **options)
    except GradcheckError as e:
        raise GradcheckAssertionError(render_report(e.report, Checked.of(fn)),
                                      e.report) from None


class ReferenceAssertionError(AssertionError):
    """assert_matches_reference failed: the message is the CLI's reference report, `.report`
    the ReferenceReport behind it."""
    __module__ = "gradtool.testing"

    def __init__(self, message, report):
        super().__init__(message)
        self.report = report


def assert_matches_reference(fn, reference, inputs, *, dtypes=None, factor=2.0, seed=0,
                             parameters=()):
    """Pass silently when fn (a function, or a Function's .apply) run in each of `dtypes`
    (default: float32, or the inputs' own dtype when it is lower) matches `reference` (the
    same arguments, the plain code fn replaces) run in float64: each output and each input's
    gradient within `factor` times the reference's own error in that dtype, plus a few ulps.
    Otherwise raise ReferenceAssertionError with the report `gradtool gradcheck --dtypes`
    prints. Inputs are tensors of either engine (torch's for bfloat16); `parameters`:
    (name, tensor) of module parameters both read, cast with the inputs."""
    __tracebackhide__ = True
    from ..checks.reference import reference_report
    report = reference_report(fn, reference, inputs, dtypes=dtypes, factor=factor,
                              names=_input_names(fn, inputs), parameters=parameters, seed=seed)
    if not report.passed:
        raise ReferenceAssertionError(_render(lambda con: _text().print_reference(
            con, Checked.of(fn), report)), report)


def render_report(report, checked):
    """The text `gradtool gradcheck` prints for a GradcheckReport, as a plain string.
    `checked` says what was checked: `.name`, `.kind`, `.filename`, `.lineno`."""
    return _render(lambda con: _text().print_gradcheck(con, checked, report))


def _text():
    from ..report import text
    return text


def _render(print_to):
    """What print_to(console) prints, as a plain string."""
    from ..report.formats import rendered
    return rendered(print_to, width=150).rstrip("\n")


class Checked:
    """What a report shows of the thing checked: name, kind and where it is defined."""

    def __init__(self, name, kind, filename, lineno):
        self.name, self.kind, self.filename, self.lineno = name, kind, filename, lineno

    @classmethod
    def of(cls, fn):
        """A function, or the .apply of an autograd.Function subclass."""
        function_class = _function_class(fn)
        kind = "Function" if function_class is not None else "function"
        obj = function_class or inspect.unwrap(fn)
        name = getattr(obj, "__name__", type(obj).__name__)
        try:
            return cls(name, kind, inspect.getsourcefile(obj) or "<unknown>",
                       inspect.getsourcelines(obj)[1])
        except (TypeError, OSError):
            # a class made in a notebook cell has no file inspect can find: its forward's
            # code still knows the cell and the line
            code = getattr(inspect.unwrap(getattr(obj, "forward", obj)), "__code__", None)
            if code is None:
                return cls(name, kind, "<unknown>", 0)
            return cls(name, kind, code.co_filename, code.co_firstlineno)


def _input_names(fn, inputs):
    """fn's parameter names for its inputs, as the CLI names a target's inputs."""
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    from ..capture.loader import parameter_names
    params = parameter_names(fn)
    return [params[i] if i < len(params) else f"input {i}" for i in range(len(inputs))]


def _function_class(fn):
    """The autograd.Function subclass whose .apply `fn` is, if it is one."""
    from ..adapters import function_base
    owner = getattr(fn, "__self__", None)
    return owner if function_base(owner) is not None else None



def __getattr__(name):  # a torch.testing name gradtool lacks: torch's name in the error
    from ..engine import testing
    return getattr(testing, name)
