"""Reference checks for low-precision code, which gradcheck cannot judge: a target in float32,
bfloat16 or float16 against its reference in float64, allowed `factor` x the reference's own
error in that dtype. On gradtool's engine (float32, float16) in-process and through the CLI; on
torch CPU (float32, bfloat16, float16) as parity tests."""
import json
import os
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cli_util as cu
import gradtool as gt
from cli_util import assert_clean_user_error, assert_exit
from gradtool.checks import reference as ref
from gradtool.frontends.testing import ReferenceAssertionError, assert_matches_reference

try:
    import torch
except ImportError:
    torch = None

# Three fused LayerNorms and their reference: right; a backward missing the 1e-5 of the
# variance (5e-6 relative: inside float64 gradcheck's rtol, far above float32's rounding); a
# forward whose epsilon is 1e-3 (its backward agrees with it: gradcheck cannot see it).
LAYER_NORMS = textwrap.dedent("""\
    import torch

    import gradtool


    def layer_norm_reference(x, w, b):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / (var + 1e-5).sqrt() * w + b


    def _fused(eps_forward, eps_backward):
        class LayerNorm(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w, b):
                xc = x - x.mean(-1, keepdim=True)
                var = (xc * xc).mean(-1, keepdim=True)
                xhat = xc / (var + eps_forward).sqrt()
                ctx.save_for_backward(xhat, var, w)
                return xhat * w + b

            @staticmethod
            def backward(ctx, g):
                xhat, var, w = ctx.saved_tensors
                rstd = 1 / (var + eps_backward).sqrt()
                gx = g * w
                dx = rstd * (gx - gx.mean(-1, keepdim=True)
                             - xhat * (gx * xhat).mean(-1, keepdim=True))
                return dx, (g * xhat).sum(0), g.sum(0)
        return LayerNorm


    Right = _fused(1e-5, 1e-5)
    MissingTerm = _fused(1e-5, 0.0)
    WrongForward = _fused(1e-3, 1e-3)
    """)


def _load(tmp_path, engine_module):
    """The LAYER_NORMS module on gradtool's engine (`torch` is gradtool) or on torch."""
    namespace = {}
    code = LAYER_NORMS.replace("import torch\n", "") if engine_module is gt else LAYER_NORMS
    exec(compile(code, str(tmp_path / "layer_norms.py"), "exec"),
         {"torch": engine_module, **namespace}, namespace)
    return namespace


def _inputs(engine_module, rows=8, cols=64, seed=0):
    rng = np.random.default_rng(seed)
    make = lambda a: engine_module.tensor(a, dtype=engine_module.float64,  # noqa: E731
                                          requires_grad=True)
    return (make(rng.standard_normal((rows, cols))), make(1 + 0.1 * rng.standard_normal(cols)),
            make(0.1 * rng.standard_normal(cols)))


def _failed(report):
    return {(c.dtype, c.name) for c in report.failed}


# ------------------------------------------------------------------ gradtool's engine
@pytest.fixture(scope="module")
def norms(tmp_path_factory):
    return _load(tmp_path_factory.mktemp("ln"), gt)


def test_a_right_fused_kernel_passes_in_float32_and_float16(norms):
    report = ref.reference_report(norms["Right"].apply, norms["layer_norm_reference"],
                                  _inputs(gt), dtypes=["float32", "float16"],
                                  names=["x", "w", "b"])
    assert report.passed, [(c.dtype, c.name, c.ratio) for c in report.comparisons]
    assert {c.name for c in report.comparisons} == {"output 0", "grad of x", "grad of w",
                                                    "grad of b"}
    # one float64 reference run, then one run of each side per dtype
    assert report.evaluations == {"reference float64": 1, "target float32": 1,
                                  "reference float32": 1, "target float16": 1,
                                  "reference float16": 1, "total": 5}


def test_a_backward_bug_below_gradchecks_noise_fails_in_float32_only(norms):
    x, w, b = _inputs(gt, 4, 16)
    sloppy = norms["MissingTerm"].apply
    assert gt.autograd.gradcheck(sloppy, (x, w, b))  # float64 gradcheck cannot see it
    report = ref.reference_report(sloppy, norms["layer_norm_reference"], (x, w, b),
                                  dtypes=["float32", "float16"], names=["x", "w", "b"])
    assert _failed(report) == {("float32", "grad of x")}
    [bad] = report.failed
    assert bad.ratio > 20 and bad.max_abs_error > bad.tolerance
    assert bad.worst["index"] == list(np.unravel_index(np.argmax(bad.errors), (4, 16)))


def test_a_forward_bug_fails_the_outputs(norms):
    report = ref.reference_report(norms["WrongForward"].apply, norms["layer_norm_reference"],
                                  _inputs(gt), dtypes=["float32"], names=["x", "w", "b"])
    assert ("float32", "output 0") in _failed(report)


def test_default_dtype_is_float32_or_the_inputs_lower_one(norms):
    assert ref.default_dtypes(_inputs(gt)) == ["float32"]
    half = tuple(t.detach().to(gt.float16).requires_grad_() for t in _inputs(gt))
    assert ref.default_dtypes(half) == ["float16"]
    report = ref.reference_report(norms["Right"].apply, norms["layer_norm_reference"], half)
    assert report.dtypes == ["float16"] and report.passed


def test_assert_matches_reference_fails_with_the_report(norms):
    assert_matches_reference(norms["Right"].apply, norms["layer_norm_reference"], _inputs(gt))
    with pytest.raises(ReferenceAssertionError) as caught:
        assert_matches_reference(norms["MissingTerm"].apply, norms["layer_norm_reference"],
                                 _inputs(gt, 4, 16))
    text = str(caught.value)
    assert "reference check:  FAIL" in text and "grad of x" in text and "LayerNorm" in text
    assert not caught.value.report.passed


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 12), seed=st.integers(0, 2**31),
       dtype=st.sampled_from(["float32", "float16"]))
def test_the_reference_against_itself_passes_and_a_drift_fails(norms, rows, cols, seed, dtype):
    """The rule's two ends, for any inputs: the reference as its own target makes exactly the
    reference's error (ratio 1, or 0 where exact); a target off by 64 ulps fails."""
    reference = norms["layer_norm_reference"]
    inputs = _inputs(gt, rows, cols, seed)
    same = ref.reference_report(reference, reference, inputs, dtypes=[dtype])
    assert same.passed and all(c.ratio in (0.0, 1.0) for c in same.comparisons)
    drift = 1 + 64 * ref._ulp_epsilon(dtype)
    off = ref.reference_report(lambda x, w, b: reference(x, w, b) * drift + 1.0, reference,
                               inputs, dtypes=[dtype])
    assert ("%s" % dtype, "output 0") in _failed(off)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(-6e4, 6e4, allow_nan=False), min_size=1, max_size=20),
       dtypes=st.sets(st.sampled_from(ref.LOW_DTYPES), min_size=1))
def test_the_common_point_is_exact_in_every_dtype(values, dtypes):
    grid = ref._on_grid(np.array(values), sorted(dtypes))
    for d in dtypes:
        assert np.array_equal(ref._round_to(grid, d), grid), d


def test_bad_inputs_are_named(norms):
    """A different structure or shape, a reference that raises, NaN in the reference:
    ReferenceError naming the target, tensor and line."""
    inputs, right = _inputs(gt, 2, 4), norms["Right"].apply
    reference = norms["layer_norm_reference"]
    cases = [
        (lambda x, w, b: (reference(x, w, b), x), "returns 2 in float64"),
        (lambda x, w, b: reference(x, w, b).sum(), "has shape [2, 4]"),
        (lambda x, w, b: 1 / 0, "ZeroDivisionError"),
        (lambda x, w, b: reference(x, w, b) * float("nan"), "gives nan for output 0"),
    ]
    for bad, words in cases:
        with pytest.raises(ref.ReferenceError) as caught:
            ref.reference_report(right, bad, inputs)
        assert words in str(caught.value), (words, str(caught.value))
        assert caught.value.location[0].endswith("test_reference.py")
    report = ref.reference_report(right, reference, inputs, dtypes=["bfloat16"])  # the engine's
    assert report.passed and {c.dtype for c in report.comparisons} == {"bfloat16"}


def test_nan_from_the_target_fails_its_tensor(norms):
    reference = norms["layer_norm_reference"]

    def nan_at_one(x, w, b):
        y = reference(x, w, b)
        return y * gt.where(x > 1e9, 0.0, 1.0) + gt.where(x == x.max(), float("nan"), 0.0)
    report = ref.reference_report(nan_at_one, reference, _inputs(gt, 2, 4), dtypes=["float32"])
    bad = {c.name: c for c in report.failed}
    assert "output 0" in bad and bad["output 0"].max_abs_error == float("inf")
    assert np.isnan(bad["output 0"].worst["target"])


# ------------------------------------------------------------------ the CLI
@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ref_cli")
    user = folder / "norms.py"
    user.write_text(LAYER_NORMS + textwrap.dedent("""

        gradtool.reference(layer_norm_reference)(Right)
        gradtool.reference(layer_norm_reference)(MissingTerm)
        for cls in (Right, MissingTerm, WrongForward):
            gradtool.example((4, 16), (16,), (16,))(cls)
        Right.__name__, MissingTerm.__name__, WrongForward.__name__ = (
            "Right", "MissingTerm", "WrongForward")


        def _raises(x, w, b):
            raise ValueError("no reference today")
        """))
    html = folder / "report.html"
    runs = {
        "all": ("gradcheck", "--json", "--dtypes", "float32,float16", user),
        "text": ("gradcheck", "--no-color", f"{user}::MissingTerm", "--html", html),
        "only": ("gradcheck", "--json", "--reference-only", f"{user}::Right"),
        "option": ("gradcheck", "--json", "--reference-only", "--reference",
                   f"{user}::layer_norm_reference", f"{user}::WrongForward"),
        "none": ("gradcheck", "--reference-only", f"{user}::WrongForward"),
        "raises": ("gradcheck", "--reference-only", "--reference", f"{user}::_raises",
                   f"{user}::Right"),
        "bf16": ("gradcheck", "--json", "--dtypes", "float32,bfloat16", user),
        "dtypes": ("gradcheck", "--dtypes", "float8", user),
        "factor": ("gradcheck", "--factor", "0", user),
        "oracle": ("gradcheck", "--json", f"{user}::layer_norm_reference"),
    }
    results = dict(zip(runs, cu.run_many(list(runs.values()))))
    results["html"] = html
    return results


def test_cli_checks_declared_references_and_exits_1_on_the_planted_bug(cli_runs):
    r = cli_runs["all"]
    assert_exit(r, 1)
    doc = r.json()
    assert doc["schema"] == "gradtool.gradcheck/3"
    targets = {t["name"]: t for t in doc["targets"]}
    right, sloppy, wrong = targets["Right"], targets["MissingTerm"], targets["WrongForward"]
    assert right["passed"] and right["reference"]["passed"]
    assert right["reference"]["dtypes"] == ["float32", "float16"]
    assert sloppy["reports"][0]["passed"] and not sloppy["passed"]  # gradcheck passes it
    failed = [(t["dtype"], t["name"]) for t in sloppy["reference"]["tensors"] if not t["passed"]]
    assert failed == [("float32", "grad of x")]
    tensor = next(t for t in sloppy["reference"]["tensors"] if not t["passed"])
    assert tensor["ratio"] > 20 and set(tensor["worst"]) == {"index", "target", "reference",
                                                              "reference_low"}
    assert wrong["reference"] is None and wrong["passed"]  # no reference declared
    assert set(targets) == {"Right", "MissingTerm", "WrongForward"}  # the oracle is not one


def test_a_reference_function_is_a_target_only_when_named(cli_runs):
    r = cli_runs["oracle"]
    assert_exit(r, 0)
    assert [t["name"] for t in r.json()["targets"]] == ["layer_norm_reference"]


def test_cli_text_and_html_show_the_reference_check(cli_runs):
    r = cli_runs["text"]
    assert_exit(r, 1)
    assert "reference check:  FAIL" in r.stdout and "reference's error" in r.stdout
    assert "✗ grad of x in float32" in r.stdout
    page = cli_runs["html"].read_text()
    assert "MissingTerm: reference check" in page and "grad of x in float32" in page


def test_cli_reference_only_and_the_reference_option(cli_runs):
    only = cli_runs["only"]
    assert_exit(only, 0)
    [target] = only.json()["targets"]
    assert target["reports"] == [] and target["reference"]["evaluations"]["total"] == 3
    option = cli_runs["option"]
    assert_exit(option, 1)
    [target] = option.json()["targets"]
    assert not target["reference"]["passed"]
    assert any(t["name"] == "output 0" and not t["passed"]
               for t in target["reference"]["tensors"])


def test_cli_reference_check_in_bfloat16_on_the_engine(cli_runs):
    """The engine's bfloat16 (float32 inside, rounded once per op, as torch's CPU kernels):
    the right kernel passes in both dtypes, the planted bug fails in float32 only, the verdict
    --engine torch gives (tests/checks: test_engines_agree_on_the_bfloat16_reference_check)."""
    r = cli_runs["bf16"]
    assert_exit(r, 1)
    targets = {t["name"]: t for t in r.json()["targets"]}
    assert targets["Right"]["reference"]["passed"]
    tensors = targets["MissingTerm"]["reference"]["tensors"]
    assert {t["dtype"] for t in tensors} == {"float32", "bfloat16"}
    assert [(t["dtype"], t["name"]) for t in tensors if not t["passed"]] == [
        ("float32", "grad of x")]
    assert targets["MissingTerm"]["reference"]["dtypes"] == ["float32", "bfloat16"]


def _assert_target_error(result, *mentions):
    """A target's error, reported in its place (stdout), exit 2, no gradtool frames."""
    assert_exit(result, 2)
    assert "ERROR" in result.stdout and "Traceback (most recent" not in result.stdout + \
        result.stderr and cu.PACKAGE_DIR + os.sep not in result.stdout, str(result)
    for words in mentions:
        assert words in cu.flat(result.stdout), (words, str(result))


def test_cli_bad_reference_input_exits_2_naming_it(cli_runs):
    _assert_target_error(cli_runs["none"], "WrongForward", "has no reference",
                         "@gradtool.reference")
    _assert_target_error(cli_runs["raises"], "_raises in float64 raised ValueError",
                         "no reference today", "norms.py")
    assert_clean_user_error(cli_runs["dtypes"], "--dtypes", "float8")
    assert_clean_user_error(cli_runs["factor"], "--factor")


def test_a_float32_gradcheck_failure_points_to_the_reference_check(tmp_path):
    """Item 3: a float32 gradcheck that the float64 recheck clears (precision), and one
    whose kernel cannot run in float64 at all: both name the @gradtool.reference line."""
    user = tmp_path / "kernels.py"
    user.write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example(gradtool.randn(5, dtype=gradtool.float32, requires_grad=True))
        def fused_tanh(x):
            return x.tanh()


        @gradtool.example(gradtool.randn(5, dtype=gradtool.float32, requires_grad=True))
        def float32_kernel(x):
            if x.dtype == gradtool.float64:
                raise TypeError("this kernel is compiled for float32 only")
            return x.tanh()
        """))
    r = cu.run("gradcheck", "--json", user)
    assert_exit(r, 1)
    for target in r.json()["targets"]:
        [d] = [d for d in target["reports"][0]["diagnoses"] if d["kind"] == "precision"]
        name = target["name"]
        assert f"@gradtool.reference(reference_{name})" in d["message"], d["message"]
        assert "--dtypes float32" in d["message"]
    kernel = r.json()["targets"][1]["reports"][0]["diagnoses"]
    assert any("cannot run in float64" in d["message"] for d in kernel)


# ------------------------------------------------------------------ torch (parity)
needs_torch = [pytest.mark.parity,
               pytest.mark.skipif(torch is None, reason="torch is not installed")]


@pytest.fixture(scope="module")
def torch_norms(tmp_path_factory):
    return _load(tmp_path_factory.mktemp("ln_torch"), torch)


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_torch_right_kernel_passes_in_every_dtype(torch_norms, dtype):
    report = ref.reference_report(torch_norms["Right"].apply,
                                  torch_norms["layer_norm_reference"], _inputs(torch),
                                  dtypes=[dtype])
    assert report.passed, [(c.name, c.ratio) for c in report.comparisons]


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_bugs_are_found_where_torch_gradcheck_passes(torch_norms):
    reference = torch_norms["layer_norm_reference"]
    x, w, b = _inputs(torch, 4, 16)
    sloppy, drift = torch_norms["MissingTerm"].apply, torch_norms["WrongForward"].apply
    assert torch.autograd.gradcheck(sloppy, (x, w, b))
    assert torch.autograd.gradcheck(drift, (x, w, b))
    dtypes = ["float32", "bfloat16", "float16"]
    report = ref.reference_report(sloppy, reference, (x, w, b), dtypes=dtypes,
                                  names=["x", "w", "b"])
    assert _failed(report) == {("float32", "grad of x")}
    report = ref.reference_report(drift, reference, (x, w, b), dtypes=dtypes,
                                  names=["x", "w", "b"])
    assert ("float32", "output 0") in _failed(report)


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_bfloat16_rounding_is_torchs():
    values = np.random.default_rng(1).standard_normal(1000) * 10.0 ** np.arange(-5, 5).repeat(100)
    ours = ref._round_to(values, "bfloat16")
    theirs = torch.tensor(values).to(torch.bfloat16).to(torch.float64).numpy()
    assert np.array_equal(ours, theirs)


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_cli_reference_check_in_bfloat16(tmp_path):
    user = tmp_path / "norms.py"
    user.write_text(LAYER_NORMS + textwrap.dedent("""
        gradtool.reference(layer_norm_reference)(MissingTerm)
        gradtool.example((4, 16), (16,), (16,))(MissingTerm)
        """))
    r = cu.run("gradcheck", "--engine", "torch", "--json", "--reference-only", "--dtypes",
               "float32,bfloat16,float16", f"{user}::MissingTerm")
    assert_exit(r, 1)
    [target] = r.json()["targets"]
    tensors = target["reference"]["tensors"]
    assert {t["dtype"] for t in tensors} == {"float32", "bfloat16", "float16"}
    assert [(t["dtype"], t["name"]) for t in tensors if not t["passed"]] == [
        ("float32", "grad of x")]


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_engines_agree_on_the_bfloat16_reference_check(cli_runs):
    """examples/layernorm_reference.py's kernel and the planted bug, in bfloat16, on each
    engine: the same verdict per tensor, and errors of the same size (each engine rounds its
    own float32 computations once per op)."""
    user = cli_runs["html"].parent / "norms.py"
    verdicts = {}
    for engine in ("gradtool", "torch"):
        r = cu.run("gradcheck", "--engine", engine, "--json", "--dtypes",
                   "float32,bfloat16", user)
        assert_exit(r, 1)
        verdicts[engine] = {(t["name"], c["dtype"], c["name"]): (c["passed"], c["max_abs_error"])
                            for t in r.json()["targets"] if t["reference"]
                            for c in t["reference"]["tensors"]}
    mine, theirs = verdicts["gradtool"], verdicts["torch"]
    assert set(mine) == set(theirs) and any(key[1] == "bfloat16" for key in mine)
    for key, (passed, error) in theirs.items():
        assert mine[key][0] == passed, key
        if key[1] == "bfloat16":
            assert mine[key][1] == pytest.approx(error, rel=0.5, abs=2.0 ** -8), key
