"""gradtool's pytest plugin, installed with gradtool (entry point `pytest11`).

- the `gradcheck` fixture: `gradcheck(fn, inputs, **options)` asserts that gradcheck passes and
  `gradcheck.gradgrad(fn, inputs, grad_outputs=None, **options)` that gradgradcheck does,
  failing with the report `gradtool gradcheck` prints; gradtool's generator is seeded per test;
- the `reference_check` fixture: `reference_check(fn, reference, inputs, dtypes=..., factor=...)`
  asserts fn in low precision matches its float64 reference
  (gradtool.testing.assert_matches_reference);
- the `gradcheck` marker: `@pytest.mark.gradcheck(atol=1e-6, fast_mode=True)` sets the
  fixture's default options for a test, class or module;
- a test failing with gradcheck's GradcheckError (torch's terse message) gets that report as a
  section of its failure output.
Importing this module costs nothing beyond pytest: gradtool loads when a test uses it."""
import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gradcheck(**options): default gradcheck options (eps, atol, rtol, "
                   "fast_mode, ...) for the `gradcheck` fixture of gradtool")


class GradcheckFixture:
    """Call it as gradtool.testing.assert_gradcheck; `.gradgrad` as assert_gradgradcheck.
    Options given in the call win over the marker's."""

    def __init__(self, defaults):
        self.defaults = defaults

    def __call__(self, fn, inputs, **options):
        __tracebackhide__ = True
        from gradtool.frontends.testing import assert_gradcheck
        assert_gradcheck(fn, inputs, **{**self.defaults, **options})

    def gradgrad(self, fn, inputs, grad_outputs=None, **options):
        __tracebackhide__ = True
        from gradtool.frontends.testing import assert_gradgradcheck
        assert_gradgradcheck(fn, inputs, grad_outputs, **{**self.defaults, **options})


@pytest.fixture
def gradcheck(request):
    """Assert gradients right: `gradcheck(fn, inputs, **options)`, `gradcheck.gradgrad(...)`."""
    from ..engine import manual_seed
    manual_seed(0)  # gradgradcheck's random grad_outputs: the same on every run
    options = {}
    for mark in reversed(list(request.node.iter_markers("gradcheck"))):  # nearest wins
        if mark.args:
            raise TypeError("@pytest.mark.gradcheck takes keyword options only, like "
                            "@pytest.mark.gradcheck(atol=1e-6)")
        options.update(mark.kwargs)
    return GradcheckFixture(options)


@pytest.fixture
def reference_check():
    """Assert a low-precision kernel right: `reference_check(fn, reference, inputs,
    dtypes=["float32", "float16"], factor=2)`."""
    from gradtool.frontends.testing import assert_matches_reference
    return assert_matches_reference


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.excinfo is None or call.when != "call":
        return
    import sys
    checks = sys.modules.get("gradtool.checks.gradcheck")  # loaded if gradcheck ever ran
    if checks is None or not isinstance(call.excinfo.value, checks.GradcheckError):
        return
    from gradtool.frontends.testing import Checked, render_report
    path, lineno, name = item.location
    checked = Checked(name, "test", str(item.path), (lineno or 0) + 1)
    outcome.get_result().sections.append(
        ("gradtool gradcheck report", render_report(call.excinfo.value.report, checked)))
