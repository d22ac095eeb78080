"""gradtool's pytest plugin (entry point pytest11, installed with gradtool), run in pytest's own
`pytester`: the example test file passes, failures show the CLI's gradcheck report, the
`gradcheck` fixture takes its options from the `gradcheck` marker."""
import os
import textwrap

# in-process pytester runs drop the modules they import when they end: import these before,
# since numpy cannot be imported twice in one process
import gradtool.checks  # noqa: F401
import gradtool.report.text  # noqa: F401
import gradtool.frontends.testing  # noqa: F401

pytest_plugins = ["pytester"]

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "test_my_functions.py")

WRONG_CUBE = textwrap.dedent("""\
    import pytest

    import gradtool as gt
    from gradtool.testing import assert_gradcheck


    class WrongCube(gt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2.9 * x ** 2  # 2.9, not 3: 3% off


    def x3():
        gt.manual_seed(0)
        return gt.randn(3, dtype=gt.float64, requires_grad=True)
    """)


def test_example_test_file_passes_with_the_installed_plugin(pytester):
    """examples/test_my_functions.py, as a user's project runs it: a separate pytest process
    that finds the plugin through its entry point (there is no conftest here)."""
    with open(EXAMPLE) as f:
        pytester.makepyfile(test_my_functions=f.read())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(passed=5)


def test_failing_assert_gradcheck_shows_the_report_at_the_users_line(pytester):
    pytester.makepyfile(test_cube=WRONG_CUBE + textwrap.dedent("""\


        def test_cube():
            assert_gradcheck(WrongCube.apply, (x3(),))
        """))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        ">       assert_gradcheck(WrongCube.apply, (x3(),))",
        "E       gradtool.testing.GradcheckAssertionError: WrongCube  Function at "
        "test_cube.py:7",
        "E       order 1:  FAIL",
        "E        output 0   x float64?3? * FAIL",  # ? for [ ]: fnmatch reads [3] as a set
        "E       Jacobian of output 0 w.r.t. x float64?3?: numerical | analytical, "
        "3 differing entries marked ≠",
        "E        ✗ wrong_gradient: *",
    ])
    out = result.stdout.str()
    assert "gradtool/frontends/testing.py" not in out  # gradtool's frames are hidden: the user's line shows


def test_gradcheck_fixture_takes_options_from_the_marker_and_the_call(pytester):
    pytester.makepyfile(test_cube=WRONG_CUBE + textwrap.dedent("""\


        def test_default_tolerance_fails(gradcheck):
            gradcheck(WrongCube.apply, x3())


        @pytest.mark.gradcheck(rtol=0.05)
        def test_loose_marker_passes(gradcheck):
            gradcheck(WrongCube.apply, x3())


        @pytest.mark.gradcheck(rtol=0.05)
        def test_call_option_wins_over_marker(gradcheck):
            gradcheck(WrongCube.apply, x3(), rtol=1e-3)


        @pytest.mark.gradcheck(rtol=0.05)
        class TestNearestMarkerWins:
            @pytest.mark.gradcheck(rtol=1e-3)
            def test_method_marker(self, gradcheck):
                gradcheck(WrongCube.apply, x3())

            def test_class_marker(self, gradcheck):
                gradcheck(WrongCube.apply, x3())


        def test_gradgrad(gradcheck):
            gradcheck.gradgrad(lambda x: (x ** 3).sum(), x3())
        """))
    result = pytester.runpytest("-p", "no:cacheprovider", "--strict-markers", "-rfp")
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines_random([
        "FAILED test_cube.py::test_default_tolerance_fails - *",
        "PASSED test_cube.py::test_loose_marker_passes",
        "FAILED test_cube.py::test_call_option_wins_over_marker - *",
        "FAILED test_cube.py::TestNearestMarkerWins::test_method_marker - *",
        "PASSED test_cube.py::TestNearestMarkerWins::test_class_marker",
        "PASSED test_cube.py::test_gradgrad",
    ])


def test_plain_gradcheck_error_gets_the_report_as_a_section(pytester):
    """gradcheck() raising GradcheckError (torch's terse message) in a test: the plugin adds
    the whole report below it."""
    pytester.makepyfile(test_cube=WRONG_CUBE + textwrap.dedent("""\


        def test_cube():
            gt.autograd.gradcheck(WrongCube.apply, (x3(),))
        """))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E *.GradcheckError: Jacobian mismatch for output 0 with respect to input 0,",
        "*- gradtool gradcheck report -*",
        "test_cube  test at test_cube.py:24",
        "order 1:  FAIL",
        " output 0   input 0 float64?3? * FAIL",
    ])


def test_marker_is_registered(pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.gradcheck(**options): *"])


def test_reference_check_fixture_passes_a_right_kernel_and_shows_a_wrong_ones_report(pytester):
    pytester.makepyfile(test_softmax=textwrap.dedent("""\
        import gradtool as gt


        def reference(x):
            return gt.softmax(x, -1)


        def fused(x):
            e = (x - x.amax(-1, keepdim=True)).exp()
            return e / e.sum(-1, keepdim=True)


        def x():
            gt.manual_seed(0)
            return gt.randn(4, 8, dtype=gt.float64, requires_grad=True)


        def test_right(reference_check):
            reference_check(fused, reference, (x(),), dtypes=["float32", "float16"])


        def test_wrong(reference_check):
            reference_check(lambda x: fused(x) * 1.001, reference, (x(),))
        """))
    result = pytester.runpytest("-p", "no:cacheprovider", "-rfp")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["E       gradtool.testing.ReferenceAssertionError: *",
                                 "E       reference check:  FAIL",
                                 "*✗ output 0 in float32: *"])
