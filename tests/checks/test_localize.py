"""Localisation never crashes, through the `gradtool` command as a user runs it: a Function
that modifies its input in place (ctx.mark_dirty) is checked on its own on a clone, a
Function whose replay raises is that node's finding with its reason, and the file's other
targets are checked and reported all the same. The same file on PyTorch itself (parity)."""
import textwrap

import pytest

import cli_util as cu
from cli_util import assert_exit

USER_FILE = textwrap.dedent("""\
    import torch


    class Quantize(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, inplace=True):
            ctx.mark_dirty(x)
            return x.mul_(4).round_().div_(4)

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None  # wrong: the straight-through gradient is grad


    def quantized(x):
        return Quantize.apply(x * 1.0, True) * 3


    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if x.requires_grad and x.grad_fn is None:
                raise ValueError("Scale takes an activation, not a leaf")
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3  # wrong: 2


    def scaled(x):
        return Scale.apply(x.tanh()).sum()


    def fine(x):
        return (x * x).sum()
    """)


NODE_FINDINGS = ("wrong_node", "surrogate_gradient")  # what localisation blames a node for


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("localize") / "inplace.py"
    path.write_text(USER_FILE)
    return path


def localized(doc, name):
    (target,) = [t for t in doc["targets"] if t["name"] == name]
    return target["reports"][0]["localized"], target["reports"][0]["diagnoses"]


def check_both(user_file, *engine):
    whole, = cu.run_many([["gradcheck", "--json", user_file, *engine]])
    assert_exit(whole, 2)  # Quantize and Scale as targets: torch refuses them on a leaf
    assert "Traceback" not in whole.stderr
    doc = whole.json()
    targets = {t["name"]: t for t in doc["targets"]}
    assert targets["fine"]["passed"] is True  # the other targets still run
    assert "leaf Variable" in targets["Quantize"]["error"]["message"]
    # the in-place Function, checked on its own on a clone: its backward is named, as the
    # surrogate it is (a flat forward, a gradient twice straight-through's)
    located, diagnoses = localized(doc, "quantized")
    assert located["function"] == "Quantize" and located["location"].endswith("inplace.py:16")
    assert located["report"]["passed"] is False
    wrong = [d for d in diagnoses if d["kind"] in NODE_FINDINGS]
    assert wrong and "Quantize.apply" in wrong[0]["message"]
    # a replay that raises: that node's finding, with the reason and the user's line
    located, diagnoses = localized(doc, "scaled")
    assert located["function"] == "Scale" and located["report"] is None
    (wrong,) = [d for d in diagnoses if d["kind"] == "wrong_node"]
    assert "replaying Scale.apply raised ValueError at" in wrong["message"]
    assert "inplace.py:23: Scale takes an activation, not a leaf" in wrong["message"]
    return doc


def test_an_in_place_function_and_a_replay_that_raises_are_findings(user_file):
    check_both(user_file)


def test_inspect_localises_an_in_place_function_without_a_crash(user_file):
    r = cu.run("inspect", "--json", f"{user_file}::quantized")
    assert_exit(r, 1)
    (target,) = r.json()["targets"]
    assert [d["kind"] for d in target["diagnostics"]][0] in NODE_FINDINGS
    assert any((n.get("problem") or "").startswith("✗ Quantize")
               for n in target["graph"]["nodes"])


@pytest.mark.parity
def test_the_same_findings_on_torch(user_file):
    pytest.importorskip("torch")
    ours, theirs = (check_both(user_file, *engine) for engine in ((), ("--engine", "torch")))

    def findings(doc):
        return {t["name"]: [d["message"] for d in t["reports"][0]["diagnoses"]
                            if d["kind"] in NODE_FINDINGS]
                for t in doc["targets"] if t.get("reports")}
    assert findings(ours) == findings(theirs)
