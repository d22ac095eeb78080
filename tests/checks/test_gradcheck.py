"""gradcheck and gradgradcheck: torch's verdicts and messages, the GradcheckReport behind
them, every diagnosis provoked by its broken example in examples/ and absent from the
correct counterpart, and what a check costs in evaluations of the function."""
import importlib.util
import json
import pathlib
import warnings

import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.autograd import Function, GradcheckError, gradcheck, gradgradcheck
from gradtool.checks import gradcheck_report, gradgradcheck_report

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load(stem):
    """Import examples/<stem>.py afresh (a user file, not a package): new module-level
    tensors every time, so a test that modifies them in place affects no other."""
    spec = importlib.util.spec_from_file_location(f"example_{stem}", EXAMPLES / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def randn(*shape, seed=0, dtype=gt.float64):
    data = np.random.default_rng(seed).standard_normal(shape)
    return gt.tensor(data, dtype=dtype, requires_grad=True)


def callable_of(target):
    return target.apply if isinstance(target, type) else target


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x ** 2


# ============================ every diagnosis, broken and correct ============================
# (example stem, target, diagnosis, order, torch's verdict on the broken one, inputs)
# Inputs: a module attribute name, or None for what the CLI generates (float64 randn of
# shape 3 per forward parameter).
CASES = [
    ("wrong_gradient", "Cube", "wrong_gradient", 1, "fails", None),
    ("jvp", "Cube", "wrong_jvp", 1, "fails", None),
    ("float32", "tanh", "precision", 1, "fails", None),
    ("float32_inside", "FusedSoftplus", "precision", 1, "fails", None),
    ("kink", "relu", "non_differentiable_point", 1, "fails", "AT_ZERO"),
    ("kink", "column_max", "non_differentiable_point", 1, "fails", "WITH_TIE"),
    ("nondeterministic", "JitteryCube", "nondeterministic_backward", 1, "fails", None),
    ("ignores_grad_output", "Square", "ignores_grad_output", 1, "fails", None),
    ("ignores_grad_output", "sum_of_squares", "ignores_grad_output", 1, "fails", None),
    ("grad_dtype", "Square", "grad_wrong_dtype", 1, "passes", None),
    ("grad_shape", "Square", "grad_wrong_shape", 1, "passes", None),
    ("grad_shape", "SumSquares", "grad_wrong_shape", 1, "raises", None),
    ("none_grad", "Mul", "grad_none_for_input", 1, "fails", None),
    ("ctx_storage", "Exp", "ctx_stored_tensor", 1, "passes", None),
    ("mark_dirty", "AddOne", "input_modified_in_forward", 1, "fails", None),
    ("once_differentiable", "Cube", "once_differentiable", 2, "fails", None),
    ("detached_backward", "Cube", "backward_detaches", 2, "fails", None),
    ("complex_conj", "Square", "wrong_gradient", 1, "fails", "Z"),
]
CASE_IDS = [f"{stem}-{target}" for stem, target, *_ in CASES]


def run_case(module, target, order, inputs_attr):
    obj = getattr(module, target)
    if inputs_attr is not None:
        inputs = (getattr(module, inputs_attr),)
    else:  # as the CLI generates them: one per parameter (after ctx, for a Function)
        code = (obj.forward if isinstance(obj, type) else obj).__code__
        n = code.co_argcount - isinstance(obj, type)
        inputs = tuple(randn(3, seed=k) for k in range(n))
    gt.manual_seed(0)  # gradgradcheck draws its grad_outputs from gradtool's generator
    check = gradcheck_report if order == 1 else gradgradcheck_report
    # a Function with its own jvp is checked in forward mode too, as the CLI does
    own_jvp = isinstance(obj, type) and obj.jvp is not gt.autograd.Function.jvp
    return check(callable_of(obj), inputs, check_forward_ad=own_jvp)


def kinds(report, severities=("error", "warning")):
    return {d.kind for d in report.diagnoses if d.severity in severities}


@pytest.mark.parametrize("stem,target,kind,order,verdict,inputs", CASES, ids=CASE_IDS)
def test_broken_example_triggers_its_diagnosis(stem, target, kind, order, verdict, inputs):
    report = run_case(load(f"broken_{stem}"), target, order, inputs)
    assert kind in kinds(report), [d.message for d in report.diagnoses]
    assert report.passed == (verdict == "passes")
    assert (report.exception is not None) == (verdict == "raises")
    if not report.passed:  # whatever made it fail is explained as an error
        assert kind in kinds(report, ("error",))


@pytest.mark.parametrize("stem,target,kind,order,verdict,inputs", CASES, ids=CASE_IDS)
def test_correct_counterpart_passes_without_diagnosis(stem, target, kind, order, verdict,
                                                     inputs):
    report = run_case(load(f"{stem}_ok"), target, order, inputs)
    assert report.passed, report.message()
    assert kinds(report) == set(), [d.message for d in report.diagnoses]


# Diagnoses found by the forward trace of the gradtool commands, or by checking a target as
# the commands do (checks.target: a Function on its own, localisation); their CLI tests and
# tests/checks/test_reasons.py cover them.
TRACE_CASES = {"gradient_cut", "saved_detached", "not_reentrant", "random_forward",
               "straight_through", "gradient_reversal", "model_function",
               "clamp_straight_through", "round_pass", "pass_through", "data_init"}


def test_broken_examples_all_have_a_correct_counterpart():
    from tests.checks.test_custom_ops import MISTAKES  # custom ops: with their opcheck
    custom_ops = {name[len("broken_"):-len(".py")] for name in MISTAKES}
    broken = {p.stem[len("broken_"):] for p in EXAMPLES.glob("broken_*.py")}
    assert broken == {stem for stem, *_ in CASES} | TRACE_CASES | custom_ops
    assert all((EXAMPLES / f"{stem}_ok.py").exists() for stem in broken)


# ---------------- what the diagnoses say ----------------
def test_kink_reports_the_one_sided_derivatives_and_the_convention():
    module = load("broken_kink")
    report = gradcheck_report(module.relu, (module.AT_ZERO,))
    (d,) = report.diagnoses_of("non_differentiable_point")
    point = d.details["points"][0]
    assert point["input_element"] == (1,)
    assert (point["left"], point["right"]) == pytest.approx((0.0, 1.0))
    assert point["numerical"] == pytest.approx(0.5)
    assert point["side"] == "left"  # relu'(0) = 0, torch's convention
    assert not report.diagnoses_of("wrong_gradient")


def test_kink_within_eps_of_the_input_is_found_too():
    x = gt.tensor(np.array([1e-7, 0.5]), dtype=gt.float64, requires_grad=True)
    report = gradcheck_report(lambda x: x.abs(), (x,))
    assert not report.passed
    (d,) = report.diagnoses_of("non_differentiable_point")
    assert d.severity == "error" and d.details["points"][0]["side"] == "right"


def test_passing_check_at_a_kink_is_noted_not_failed():
    x = gt.tensor(np.array([0.0, 0.5]), dtype=gt.float64, requires_grad=True)
    report = gradcheck_report(lambda x: x.abs(), (x,))  # abs'(0) = 0 = the central difference
    assert report.passed
    (d,) = report.diagnoses_of("non_differentiable_point")
    assert d.severity == "info"


def test_strong_curvature_is_not_mistaken_for_a_kink():
    x = gt.tensor(np.array([1e-3, 0.3, 1.0]), dtype=gt.float64, requires_grad=True)
    for f in (lambda x: 1 / x, lambda x: (20 * x).exp(), lambda x: x.sin() * x):
        report = gradcheck_report(f, (x,))
        assert report.passed and not report.diagnoses


@pytest.mark.filterwarnings("ignore:Input #0 requires gradient")
def test_wrong_formula_in_float32_is_not_blamed_on_precision():
    report = gradcheck_report(WrongCube.apply, (randn(4, dtype=gt.float32),))
    assert "wrong_gradient" in kinds(report, ("error",))
    assert report.diagnoses_of("precision")[0].severity == "warning"


def test_float32_inputs_to_a_right_formula_blame_precision():
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        report = gradcheck_report(Cube.apply, (randn(4, dtype=gt.float32),))
    assert not report.passed
    assert kinds(report) == {"precision"}


def test_ignoring_grad_output_names_the_function():
    report = gradcheck_report(load("broken_ignores_grad_output").sum_of_squares, (randn(3),))
    (d,) = report.diagnoses_of("ignores_grad_output")
    assert d.details["function"] == "Square"
    assert report.failures[0].message == "backward not multiplied by grad_output"


def test_none_gradient_names_function_and_input():
    report = gradcheck_report(load("broken_none_grad").Mul.apply, (randn(3), randn(3, seed=1)))
    (d,) = report.diagnoses_of("grad_none_for_input")
    assert d.details == {"function": "Mul", "input": 1}
    assert [(p.input_index, p.passed) for p in report.pairs] == [(0, True), (1, False)]


def test_input_modified_in_forward_is_found_by_its_version_counter():
    x = randn(3)
    report = gradcheck_report(load("broken_mark_dirty").AddOne.apply, (x,))
    (d,) = report.diagnoses_of("input_modified_in_forward")
    assert d.details["functions"] == ["AddOne"]
    assert d.details["version_before"] == 0 and d.details["version_after"] > 0


def test_marked_dirty_in_place_on_an_intermediate_is_fine():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.add_(1.0)

        @staticmethod
        def backward(ctx, grad):
            return grad

    report = gradcheck_report(lambda x: AddOneInPlace.apply(x * 2), (randn(3),))
    assert report.passed and not report.diagnoses


def test_shape_error_of_a_backward_propagates_as_in_torch_with_the_diagnosis_noted():
    x = randn(3)
    with pytest.raises(RuntimeError, match="returned an invalid gradient") as info:
        gradcheck(load("broken_grad_shape").SumSquares.apply, (x,))
    assert "grad_wrong_shape" in "".join(getattr(info.value, "__notes__", []))


def test_once_differentiable_fails_as_in_torch_and_says_why():
    gt.manual_seed(0)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0") as info:
        gradgradcheck(load("broken_once_differentiable").Cube.apply, (randn(3),))
    assert not np.any(info.value.report.pairs[0].analytical)  # what torch prints, all zero
    assert "Cube.backward is decorated @once_differentiable" in str(info.value)
    assert not info.value.report.diagnoses_of("wrong_gradient")


def test_detached_backward_explains_the_all_zero_jacobian():
    gt.manual_seed(0)
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(load("broken_detached_backward").Cube.apply, (randn(3),))
    report = info.value.report
    failing = [p for p in report.pairs if not p.passed]
    assert failing and not np.any(failing[0].analytical)
    assert "does not differentiate through saved tensor(s) [0]" in str(info.value)
    assert not report.diagnoses_of("wrong_gradient")


def test_backward_returning_untracked_tensors_is_named_in_gradgradcheck():
    class NumpyCube(Cube):
        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return gt.from_numpy(grad.detach().numpy() * 3 * x.detach().numpy() ** 2)

    gt.manual_seed(0)
    report = gradgradcheck_report(NumpyCube.apply, (randn(3),))
    assert report.failures[0].message == "Numerical gradient for function expected to be zero"
    (d,) = report.diagnoses_of("backward_detaches")
    assert d.details == {"function": "NumpyCube", "inputs": [0]}


def test_nondeterministic_backward_passes_within_nondet_tol():
    module = load("broken_nondeterministic")
    with pytest.raises(GradcheckError, match="Backward is not reentrant") as info:
        gradcheck(module.JitteryCube.apply, (randn(3),))
    (d,) = info.value.report.diagnoses_of("nondeterministic_backward")
    assert d.details["function"] == "JitteryCube" and d.severity == "error"
    assert gradcheck(module.JitteryCube.apply, (randn(3),), nondet_tol=1e-9)


# ================================ torch's verdicts and messages ================================
def test_right_gradients_pass():
    x, y = randn(3), randn(2, 3, seed=1)
    assert gradcheck(lambda x, y: (x * y).tanh().sum(0) + x.exp(), (x, y))
    assert gradcheck(Cube.apply, x)  # a single Tensor is an input too
    assert gradgradcheck(lambda x, y: (x * y).sin(), (x, y))


def test_mismatch_message_is_torchs():
    x = gt.zeros(2, dtype=gt.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda x: x.relu() * 2, (x,))
    assert str(info.value).startswith(
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[1., 0.],\n        [0., 1.]], dtype=gradtool.float64)\n"
        "analytical:tensor([[0., 0.],\n        [0., 0.]], dtype=gradtool.float64)\n")
    assert "non_differentiable_point" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_raise_exception_false_returns_false():
    assert gradcheck(WrongCube.apply, (randn(3),), raise_exception=False) is False
    detached = load("broken_detached_backward").Cube.apply
    assert gradgradcheck(detached, (randn(3),), raise_exception=False) is False


def test_indices_count_differentiable_outputs_and_inputs_only():
    const, x = gt.tensor(np.ones(3)), randn(3)
    with pytest.raises(GradcheckError, match="for output 0 with respect to input 0,"):
        gradcheck(lambda c, x: (c.argmax(), WrongCube.apply(x) + c), (const, x))


def test_input_checks_as_torch():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x * 2, (gt.ones(3, dtype=gt.float64),))
    expanded = gt.ones(1, dtype=gt.float64).expand(3).detach().requires_grad_()
    with pytest.raises(RuntimeError, match="0th input has a dimension with stride 0"):
        gradcheck(lambda x: x * 2, (expanded,))


def test_no_differentiable_output_needs_zero_numerical_gradient():
    x = randn(3)
    assert gradcheck(lambda x: (x * 0).detach(), (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be"):
        gradcheck(lambda x: x.detach() * 2, (x,))


def test_every_pair_is_reported_not_only_the_first_failure():
    x, y = randn(3), randn(3, seed=1)
    report = gradcheck_report(lambda x, y: (WrongCube.apply(x) * y, x + y), (x, y))
    assert [(p.output_index, p.input_index, p.passed) for p in report.pairs] == [
        (0, 0, False), (0, 1, True), (1, 0, True), (1, 1, True)]
    worst = report.pairs[0].worst
    assert worst["input_element"] == worst["output_element"]  # the Jacobian is diagonal
    assert worst["analytical"] == pytest.approx(2 / 3 * worst["numerical"], rel=1e-6)
    assert report.pairs[0].max_rel_error == pytest.approx(1 / 3, rel=1e-6)


def test_report_is_json_with_small_jacobians_whole_and_large_ones_as_differences():
    from gradtool.report.json import gradcheck_report_dict
    small = gradcheck_report_dict(gradcheck_report(WrongCube.apply, (randn(3),)))
    assert json.loads(json.dumps(small, allow_nan=False)) == small
    assert len(small["pairs"][0]["numerical"]) == 3
    large = gradcheck_report_dict(gradcheck_report(WrongCube.apply, (randn(30),)))
    pair = large["pairs"][0]
    assert pair["numerical"] is None and pair["jacobian_shape"] == [30, 30]
    assert pair["n_differing"] == 30 and len(pair["differing"]) == 30
    assert pair["differing_omitted"] == 0
    many = gradcheck_report_dict(gradcheck_report(WrongCube.apply, (randn(60),)))["pairs"][0]
    assert many["n_differing"] == 60 and len(many["differing"]) + \
        many["differing_omitted"] == 60  # the JSON says how many it leaves out
    assert large["evaluations"]["numerical"] == 60  # kink probes come on top: "diagnosis"
    assert large["passed"] is False and large["failures"][0]["kind"] == "jacobian_mismatch"


def test_undefined_output_gradient_must_be_handled_when_not_materialized():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            if grad is None:
                raise RuntimeError("expected a gradient")
            return grad * 2

    with pytest.raises(GradcheckError, match="Expected backward function to handle undefined"):
        gradcheck(Double.apply, (randn(3),))
    assert gradcheck(Double.apply, (randn(3),), check_undefined_grad=False)


# ==================================== fast mode ====================================
def test_fast_mode_fails_with_the_pair_rechecked_in_full():
    with pytest.raises(GradcheckError, match="recompute numerical and analytical jacobians "
                                             "in slow mode") as info:
        gradcheck(WrongCube.apply, (randn(5),), fast_mode=True)
    pair = info.value.report.pairs[0]
    assert pair.mode == "fast" and len(pair.projections) == 1  # torch's one projection
    assert pair.recheck.mode == "full" and pair.recheck.numerical.shape == (5, 5)


class OneWrongEntry(Function):
    """x**2 with the gradient of element 7 off by 1e-3 (where x is 0): a bug that random
    projections dilute below their tolerance."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        bump = np.zeros(x.shape)
        bump[7] = 1e-3
        return grad * 2 * x + grad * gt.from_numpy(bump)


def one_wrong_entry_input():
    data = np.random.default_rng(3).standard_normal(50)
    data[7] = 0.0
    return data


def test_fast_mode_rechecks_a_near_pass_in_full_and_finds_the_hidden_bug():
    x = gt.tensor(one_wrong_entry_input(), dtype=gt.float64, requires_grad=True)
    report = gradcheck_report(OneWrongEntry.apply, (x,), fast_mode=True)
    pair = report.pairs[0]
    assert max(p["ratio"] for p in pair.projections) < 1  # the projections alone pass
    assert not pair.passed and not pair.recheck.passed
    assert pair.recheck.worst["input_element"] == (7,)
    assert "full-mode recheck" in report.failures[0].message


# ============================= what a check costs =============================
class Counted:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)


@pytest.mark.parametrize("n", [1, 7, 40])
def test_full_mode_costs_two_evaluations_per_input_element(n):
    f = Counted(lambda x, y: (x.sin() * y.sum(), y.exp()))
    x, y = randn(n), randn(2, seed=1)
    assert gradcheck(f, (x, y))
    assert f.calls == 2 * (n + 2) + 1  # central differences + the one forward with a graph


@pytest.mark.parametrize("n", [1, 7, 40, 1000])
def test_fast_mode_cost_does_not_depend_on_input_size(n):
    """torch.autograd.gradcheck's fast mode evaluates as torch's does: one projection, 2
    evaluations per input; gradtool's own checks take 3 projections."""
    f = Counted(lambda x, y: (x.sin() * y.sum(), y.exp()))
    assert gradcheck(f, (randn(n), randn(2, seed=1)), fast_mode=True)
    assert f.calls == 1 + 2 * 1 * 2
    f.calls = 0
    assert gradcheck_report(f, (randn(n), randn(2, seed=1)), fast_mode=True).passed
    assert f.calls == 1 + 2 * 3 * 2


def test_gradgradcheck_costs_two_evaluations_per_element_of_inputs_and_grad_outputs():
    f = Counted(lambda x: x.sin() * x)
    gt.manual_seed(0)
    assert gradgradcheck(f, (randn(5),))
    assert f.calls == 1 + 1 + 2 * (5 + 5)  # grad_output shapes, graph, differences


# ================================ against torch itself ================================
def _torch_cases(T):
    """The same functions for gradtool and torch (T is the module)."""
    class Cube_(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    class Wrong(Cube_):
        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x ** 2

    class Ignores(Cube_):
        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2

    class Once(Cube_):
        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    class NoneUnhandled(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            if grad is None:
                raise RuntimeError("expected a gradient")
            return grad * 2

    return {
        "smooth": (lambda x: (x.sin() * x).exp(), {}),
        "undefined_grad": (NoneUnhandled.apply, {}),
        "relu_at_0": (lambda x: (x * 0).relu() + x.relu(), {}),
        "cube": (Cube_.apply, {}),
        "wrong": (Wrong.apply, {}),
        "wrong_fast": (Wrong.apply, {"fast_mode": True}),
        "ignores_scalar": (lambda x: Ignores.apply(x).sum(), {}),
        "ignores": (Ignores.apply, {}),
        "detached": (lambda x: x.detach() * 2, {}),
        "no_grad_output": (lambda x: (x * 0).detach(), {}),
        "gradgrad_cube": (Cube_.apply, {"order": 2}),
        "gradgrad_wrong": (lambda x: Wrong.apply(x) * 1.0, {"order": 2}),
        "gradgrad_once": (Once.apply, {"order": 2}),
    }


def _outcome(T, fn, kwargs, data):
    kwargs = dict(kwargs)
    check = T.autograd.gradgradcheck if kwargs.pop("order", 1) == 2 else T.autograd.gradcheck
    x = T.tensor(data, dtype=T.float64, requires_grad=True)
    try:
        with warnings.catch_warnings():  # torch warns along with its undefined-grad error
            warnings.simplefilter("ignore")
            return check(fn, (x,), **kwargs), ""
    except RuntimeError as e:  # GradcheckError is a RuntimeError in both
        return type(e).__name__, str(e).splitlines()[0]


@pytest.mark.parity
@pytest.mark.parametrize("case", list(_torch_cases(gt)))
def test_verdicts_and_first_message_lines_match_torch(case):
    torch = pytest.importorskip("torch")
    data = np.array([0.5, 0.0, -1.25, 2.0])
    torch.manual_seed(0)
    gt.manual_seed(0)
    ours = _outcome(gt, *_torch_cases(gt)[case], data)
    theirs = _outcome(torch, *_torch_cases(torch)[case], data)
    assert ours == theirs


@pytest.mark.parity
def test_torch_fast_mode_misses_the_bug_that_the_recheck_finds():
    torch = pytest.importorskip("torch")

    class TorchOneWrongEntry(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            bump = torch.zeros_like(x)
            bump[7] = 1e-3
            return grad * 2 * x + grad * bump

    data = one_wrong_entry_input()
    x = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(TorchOneWrongEntry.apply, (x,), fast_mode=True)
    assert not torch.autograd.gradcheck(TorchOneWrongEntry.apply, (x,), raise_exception=False)
    ours = gt.tensor(data, dtype=gt.float64, requires_grad=True)
    assert not gradcheck(OneWrongEntry.apply, (ours,), fast_mode=True, raise_exception=False)


def test_warning_for_non_double_inputs_as_torch_pointing_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcheck(lambda x: x * 2, (randn(3, dtype=gt.float32),), raise_exception=False)
    (w,) = caught
    assert "Input #0 requires gradient and is not a double precision" in str(w.message)
    assert w.filename == __file__


def test_analytical_jacobian_rows_across_batched_passes():
    """The analytical Jacobian is built ROWS_PER_PASS one-hot rows per backward pass: rows in
    every pass (the last one partial) land in their own columns."""
    from gradtool.checks import analytical
    x = gt.tensor(np.linspace(-1, 1, 150), dtype=gt.float64, requires_grad=True)
    y = (x.sin() * x).reshape(10, 15)
    import gradtool.adapters as engines
    (jac,), sizes_ok, types_ok = analytical.jacobian_rows(engines.current(), y, [x])
    assert analytical.ROWS_PER_PASS < 150 and sizes_ok and types_ok
    x0 = x.detach().numpy()
    np.testing.assert_allclose(jac, np.diag(np.cos(x0) * x0 + np.sin(x0)), rtol=1e-12)


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e308], ids=["inf", "nan", "huge"])
@pytest.mark.parametrize("options", [{}, {"fast_mode": True}, {"check_forward_ad": True},
                                     {"check_forward_ad": True, "fast_mode": True}],
                         ids=["full", "fast", "forward", "fast-forward"])
def test_non_finite_inputs_leak_no_numpy_warning(value, options):
    """An input holding inf or NaN makes central differences inf - inf: gradtool reports
    that (non_finite_output, a failed pair), and numpy's RuntimeWarnings stay inside."""
    x = gt.tensor([1.0, value, -value], dtype=gt.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in (lambda x: x * 2, lambda x: (x.sin() * x).sum()):
            first = gradcheck_report(f, (x,), **options)
            assert not first.passed  # inf - inf is NaN; 1e308 * 2 overflows
            first.message()  # torch's message prints the Jacobians: huge values, no overflow
            gradgradcheck_report(f, (x,), **options).message()
