"""True reasons where the Jacobians alone would say "wrong formula" or "kink": a float64
function that computes in float32 inside (the cast named with its line, rechecked with the
step suited to float32), deliberate surrogates (a clamp straight-through, a pass-through where
the forward is flat, a straight-through written with detach) named as such, also when
localisation finds them inside a target, a data-dependent initialisation under no_grad named
as a cut, and the engine's own Functions (torch.utils.checkpoint's) never blamed. In process,
and the CLI where the user's words matter."""
import os
import textwrap

import numpy as np
import pytest

import cli_util as cu
import gradtool as gt
from cli_util import assert_exit
from gradtool.checks import gradcheck_report
from gradtool.checks.reasons import classify

try:
    import torch
except ImportError:
    torch = None


def x64(n=5, seed=0, low=-2.0, high=2.0):
    data = np.random.default_rng(seed).uniform(low, high, n)
    return gt.tensor(data, dtype=gt.float64, requires_grad=True)


def kinds(report):
    return {d.kind: d for d in report.diagnoses}


# ------------------------------------------------------------------ float32 inside
def softplus_in_float32(x):
    xf = x.float()  # the cast the diagnosis names
    return gt.log1p(gt.exp(xf)).to(x.dtype)


class Float32Doubled(gt.autograd.Function):
    """Computes in float32 inside and has a wrong backward (a factor 2 too many)."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x.float() * x.float()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 4 * x


def test_a_float32_step_inside_is_precision_with_its_line_not_a_kink_or_a_formula():
    report = gradcheck_report(softplus_in_float32, (x64(),))
    assert not report.passed  # torch's verdict stays
    found = kinds(report)
    assert set(found) == {"precision"}, report.diagnoses
    d = found["precision"]
    line = softplus_in_float32.__code__.co_firstlineno + 1
    assert d.severity == "error" and d.location.endswith(f":{line}")
    assert "`xf = x.float()`" in d.message and "makes float32 from float64" in d.message
    assert "With a step of 4.9e-03 suited to float32" in d.message
    assert d.details["casts"][0] == {"op": d.details["casts"][0]["op"], "from": "float64",
                                     "to": "float32", "location": d.location}


def test_a_wrong_formula_computed_in_float32_stays_a_wrong_formula():
    report = gradcheck_report(Float32Doubled.apply, (x64(),), function=Float32Doubled)
    found = kinds(report)
    assert found["precision"].severity == "warning"
    assert "the mismatch remains" in found["precision"].message
    assert "wrong_gradient" in found and "non_differentiable_point" not in found


def test_the_trace_records_a_cast_with_its_site_and_nothing_for_a_widening():
    from gradtool.adapters import current
    E = current()
    x = x64()
    with E.trace(None) as trace:
        y = x.float()
        y.double() * x
    casts = [e for e in trace.events if e.cast is not None]
    assert [(e.cast, e.site[1]) for e in casts] == [
        (("float64", "float32"), test_the_trace_records_a_cast_with_its_site_and_nothing_for_a_widening.__code__.co_firstlineno + 5)]


# ------------------------------------------------------------------ surrogates
def test_a_clamp_straight_through_and_a_pass_through_are_surrogates():
    n = np.diag([1.0, 0.0, 0.0, 1.0])  # clamped at entries 1 and 2
    assert classify(n, np.eye(4), 1e-5, 1e-3, 1e-6)[0] == "straight_through"
    partly = np.diag([1.0, 1.0, 0.0, 1.0])  # passes at entry 1 only
    assert classify(n, partly, 1e-5, 1e-3, 1e-6)[0] == "pass_through"
    # a wrong value where the forward is flat, or where it is not, is no surrogate
    assert classify(n, np.diag([1.0, 0.5, 0.0, 1.0]), 1e-5, 1e-3, 1e-6) is None
    assert classify(n, np.diag([2.0, 1.0, 1.0, 1.0]), 1e-5, 1e-3, 1e-6) is None


# ------------------------------------------------------------------ the CLI's words
STE_IN_A_MODEL = "examples/broken_clamp_straight_through.py::quantised"
FLOAT32_IN_A_MODEL = textwrap.dedent("""\
    import gradtool
    import gradtool as torch


    class FusedSoftplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            xf = x.float()
            return torch.log1p(torch.exp(xf)).to(x.dtype)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return (grad.float() * torch.sigmoid(x.float())).to(x.dtype)


    @gradtool.example((5,), (5,))
    def model(x, w):
        return (FusedSoftplus.apply(x * w) * w).sum()
    """)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reasons")
    (folder / "fused.py").write_text(FLOAT32_IN_A_MODEL)
    commands = {"ste": ("gradcheck", "--json", STE_IN_A_MODEL),
                "ste_text": ("gradcheck", "--no-color", STE_IN_A_MODEL),
                "fused": ("gradcheck", "--json", str(folder / "fused.py")),
                "round_pass": ("gradcheck", "--json", "examples/broken_round_pass.py"),
                "data_init": ("gradcheck", "--json", "examples/broken_data_init.py")}
    return dict(zip(commands, cu.run_many(list(commands.values()))))


def diagnoses(result):
    return [d for t in result.json()["targets"] for r in t["reports"] for d in r["diagnoses"]]


def test_a_surrogate_found_by_localisation_is_the_targets_finding_and_advice(runs):
    r = runs["ste"]
    assert_exit(r, 1)
    [d] = [d for d in diagnoses(r) if d["severity"] == "error"]
    assert d["kind"] == "surrogate_gradient" and d["details"]["pattern"] == "straight_through"
    assert d["details"]["function"] == "ClampST" and d["details"]["node"]
    assert "@gradtool.surrogate" in d["advice"] and "fix its backward" in d["advice"]
    text = runs["ste_text"].stdout
    assert "wrong_node" not in text and "fix that Function's backward" not in text
    assert "a clamp straight-through estimator" in " ".join(text.split())


def test_a_float32_step_inside_a_function_in_a_model_is_precision_at_the_cast(runs):
    r = runs["fused"]
    assert_exit(r, 1)
    [model] = [t for t in r.json()["targets"] if t["name"] == "model"]
    found = model["reports"][0]["diagnoses"]
    assert [d["kind"] for d in found if d["severity"] == "error"] == ["precision"]
    assert found[0]["details"]["function"] == "FusedSoftplus"  # the node localisation found
    assert not {"wrong_node", "wrong_gradient", "non_differentiable_point"} & \
        {d["kind"] for d in found}
    assert found[0]["location"].endswith("fused.py:9")  # xf = x.float()


def test_round_pass_is_a_straight_through_and_actnorm_init_a_cut(runs):
    assert_exit(runs["round_pass"], 1)
    found = diagnoses(runs["round_pass"])
    assert {d["kind"] for d in found} == {"surrogate_gradient"}
    for d in found:  # the detach line, not a lost gradient
        assert d["details"]["cut"] == "detach" and d["location"].endswith("round_pass.py:13")
        assert '@gradtool.surrogate("straight_through")' in d["advice"]
    assert_exit(runs["data_init"], 1)
    cut = [d for d in diagnoses(runs["data_init"]) if d["severity"] == "error"]
    assert [d["kind"] for d in cut] == ["gradient_cut"]
    assert cut[0]["details"]["cut"] == "no_grad" and cut[0]["details"]["inputs"] == ["x"]


# ------------------------------------------------------------------ torch's own Functions
CHECKPOINTED = textwrap.dedent("""\
    import torch
    import torch.utils.checkpoint

    import gradtool

    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 3).double()


    def block(x):
        return torch.tanh(layer(x))


    @gradtool.example((2, 3))
    def checkpointed(x):
        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=True).sum()
    """)


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torchs_checkpoint_function_is_never_the_one_to_fix(tmp_path):
    user = tmp_path / "checkpointed.py"
    user.write_text(CHECKPOINTED)
    for command in ("gradcheck", "inspect"):
        result = cu.run(command, "--engine", "torch", "--json", str(user))
        doc = result.json()
        named = [d for t in doc["targets"]
                 for d in (t.get("diagnostics", []) +
                           [d for r in t.get("reports", []) for d in r["diagnoses"]])
                 if "CheckpointFunction" in d["message"] + d.get("advice", "")]
        assert named == [], (command, named)
