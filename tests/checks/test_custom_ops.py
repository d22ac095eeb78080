"""`gradtool gradcheck` on custom ops (torch.library.custom_op) as a user runs it: each
opcheck mistake a finding of its own kind at the user's line and a failed check (exit 1),
also where torch itself raises; a right op passes; the functions registered to an op are not
targets of their own; the op is named by its Python name or its ns::op. The same with
--engine torch, where the findings come from torch's own opcheck (skipped without torch)."""
import json
import os
import textwrap

import pytest

import cli_util as cu
from cli_util import assert_exit

try:
    import torch
except ImportError:
    torch = None

EXAMPLES = os.path.join(cu.REPO, "examples")
# the torch runs are parity tests: `make parity` (CI) runs them, with torch installed
ENGINES = ["gradtool", pytest.param("torch", marks=[pytest.mark.parity, pytest.mark.skipif(
    torch is None, reason="torch is not installed")])]


def gradcheck(path, engine, *extra):
    r = cu.run("gradcheck", "--json", "--engine", engine, *extra, path)
    return r, r.json()


def findings(doc):
    return [d for t in doc["targets"] for rep in t["reports"] for d in rep["diagnoses"]]


def line_of(path, text):
    """The first line of the file that holds `text` (or is it, for a text ending in a line
    break)."""
    with open(path, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1)
                    if (line == text.lstrip() or line.lstrip() == text.lstrip()
                        if text.endswith("\n") else text in line))


# example, the kind it provokes, the text of the line the finding names (per engine: torch
# does not record where an in-place op ran, so there it is the kernel's decorator)
MISTAKES = {
    "broken_fake_shape.py": ("fake_kernel_mismatch", {"": "@total.register_fake"}),
    "broken_undeclared_mutation.py": ("undeclared_mutation", {
        "gradtool": "x.mul_(3.0)", "torch": "@torch.library.custom_op"}),
    "broken_no_autograd.py": ("no_autograd", {"": "@torch.library.custom_op"}),
    "broken_custom_op_backward.py": ("wrong_gradient", {"": "def backward"}),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_mistake_is_a_failed_check_with_its_finding_at_the_users_line(name, engine):
    kind, lines = MISTAKES[name]
    path = os.path.join(EXAMPLES, name)
    r, doc = gradcheck(path, engine)
    assert_exit(r, 1)
    found = [d for d in findings(doc) if d["kind"] == kind]
    assert found and found[0]["severity"] == "error", (kind, findings(doc))
    text = lines.get(engine, lines.get(""))
    assert found[0]["location"].endswith(f"{name}:{line_of(path, text)}"), found[0]
    assert doc["targets"][0]["kind"] == "custom_op"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["custom_op_backward_ok.py", "fake_shape_ok.py",
                                  "undeclared_mutation_ok.py", "no_autograd_ok.py"])
def test_right_ops_pass_and_their_registered_functions_are_no_targets(name, engine):
    r, doc = gradcheck(os.path.join(EXAMPLES, name), engine)
    assert_exit(r, 0)
    assert {t["kind"] for t in doc["targets"]} == {"custom_op"}
    assert not [d for d in findings(doc) if d["severity"] == "error"]


def test_an_op_that_mutates_and_returns_nothing_passes_on_its_opcheck_alone():
    r, doc = gradcheck(os.path.join(EXAMPLES, "undeclared_mutation_ok.py"), "gradtool")
    accumulate = next(t for t in doc["targets"] if t["name"] == "accumulate")
    assert accumulate["passed"] and accumulate["reports"][0]["mode"] == "opcheck"


OPS = textwrap.dedent("""\
    import torch
    from torch import Tensor


    @torch.library.custom_op("t::same", mutates_args=())
    def same(x: Tensor) -> Tensor:
        return x


    @torch.library.custom_op("t::double", mutates_args=("out",))
    def double(x: Tensor, out: Tensor) -> Tensor:
        return x * 2  # never writes into out


    @torch.library.custom_op("t::cube", mutates_args=())
    def cube(x: Tensor) -> Tensor:
        return x ** 3


    @cube.register_fake
    def _(x):
        return torch.empty_like(x)


    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x, output)  # output: backward never reads it


    def backward(ctx, grad):
        x, _ = ctx.saved_tensors
        return grad * 3 * x ** 2


    cube.register_autograd(backward, setup_context=setup_context)


    @torch.library.custom_op("t::square", mutates_args=())
    def square(x: Tensor) -> Tensor:
        return x * x


    @square.register_fake
    def _(x):
        return torch.empty_like(x)


    def square_backward(ctx, grad):
        return grad * 2 * ctx.x  # never saved: no setup_context


    square.register_autograd(square_backward)
    """)


@pytest.fixture(scope="module")
def ops_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("ops") / "ops.py"
    path.write_text(OPS)
    return str(path)


EXPECTED = {  # target: (kind, severity, the text of its line, whether the check fails)
    "same": ("output_aliases_input", "error", "        return x\n", True),
    "double": ("declared_mutation_unused", "warning", "@torch.library.custom_op(\"t::double\"",
               True),  # (and it has no fake kernel: an error)
    "cube": ("saved_unused", "warning", "def setup_context", False),
    "square": ("backward_reads_unsaved", "error", "return grad * 2 * ctx.x", True),
}


@pytest.mark.parametrize("engine", ENGINES)
def test_gradtools_own_probes_and_torchs_refusals(ops_file, engine):
    r, doc = gradcheck(ops_file, engine)
    assert_exit(r, 1)
    targets = {t["name"]: t for t in doc["targets"]}
    assert set(targets) == set(EXPECTED)  # setup_context, backward, the fakes: the ops'
    for name, (kind, severity, text, fails) in EXPECTED.items():
        found = [d for rep in targets[name]["reports"] for d in rep["diagnoses"]
                 if d["kind"] == kind]
        assert found and found[0]["severity"] == severity, (name, targets[name]["reports"])
        assert found[0]["location"].endswith(f":{line_of(ops_file, text)}"), found[0]
        assert targets[name]["passed"] is not fails, name


def test_an_op_is_named_by_its_python_name_or_its_qualified_name(ops_file):
    for spec in ("cube", "t::cube"):
        r, doc = gradcheck(f"{ops_file}::{spec}", "gradtool")
        assert [t["name"] for t in doc["targets"]] == ["cube"], spec
    r = cu.run("gradcheck", f"{ops_file}::setup_context")  # a registered function, by name
    assert r.returncode != 1 or "setup_context" in r.stdout + r.stderr


def test_inspect_shows_the_ops_node_and_its_saved_values():
    r = cu.run("inspect", "--json", os.path.join(EXAMPLES, "custom_op_backward_ok.py"))
    assert_exit(r, 0)
    (target,) = r.json()["targets"].values() if isinstance(r.json()["targets"], dict) else \
        r.json()["targets"]
    nodes = {n["name"] for n in target["graph"]["nodes"]}
    assert "GeneratedBackwardFor_examples_scaled_sin_defaultBackward" in nodes
    assert "saved_tensors[0]" in json.dumps(target["graph"])


REFERENCED = textwrap.dedent("""\
    import gradtool
    import torch
    from torch import Tensor


    def plain_sin(x):
        return torch.sin(x) * 2.0


    @gradtool.reference(plain_sin)
    @torch.library.custom_op("t::sin2", mutates_args=())
    def sin2(x: Tensor) -> Tensor:
        return (torch.sin(x.float()) * 2.0).double()


    sin2.register_fake(lambda x: torch.empty_like(x))
    sin2.register_autograd(lambda ctx, g: g * 2.0 * torch.cos(ctx.x),
                           setup_context=lambda ctx, inputs, output: setattr(ctx, "x",
                                                                             inputs[0]))
    """)


def test_reference_checks_apply_to_custom_ops(tmp_path):
    path = tmp_path / "referenced.py"
    path.write_text(REFERENCED)
    r = cu.run("gradcheck", "--json", "--reference-only", str(path))
    doc = r.json()
    assert doc["targets"][0]["kind"] == "custom_op"
    assert doc["targets"][0]["reference"] is not None, r


INSIDE = textwrap.dedent("""\
    import torch
    from torch import Tensor


    @torch.library.custom_op("t::cube_inside", mutates_args=())
    def cube(x: Tensor) -> Tensor:
        return x ** 3


    cube.register_fake(lambda x: torch.empty_like(x))


    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])


    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2 * x ** 2  # 3 x^2


    cube.register_autograd(backward, setup_context=setup_context)


    def model(x):
        return cube(x.sin()).sum() * 2
    """)


def test_a_wrong_op_inside_a_function_is_the_node_to_blame(tmp_path):
    path = tmp_path / "inside.py"
    path.write_text(INSIDE)
    r, doc = gradcheck(f"{path}::model", "gradtool")
    assert_exit(r, 1)
    (blamed,) = [d for d in findings(doc) if d["kind"] == "wrong_node"]
    assert "custom op t::cube_inside" in blamed["message"]
    assert blamed["location"].endswith(f":{line_of(str(path), 'return cube(x.sin())')}")
    r, doc = gradcheck(f"{path}::cube", "gradtool", "--mode", "both")
    (note,) = [d for d in findings(doc) if d["kind"] == "no_jvp"]
    assert "custom op t::cube_inside has no forward-mode AD" in note["message"]


def test_gradtool_check_runs_the_ops_opcheck_too():
    import gradtool
    from tests.engine.test_library import fake_of, scaled_sin, x64
    assert gradtool.check(scaled_sin(gradtool), (x64(gradtool, 3),)).passed
    wrong_fake = fake_of(gradtool, lambda x: x.new_empty((1,)))
    report = gradtool.check(wrong_fake, (x64(gradtool, 3),))
    assert not report.passed
    assert "fake_kernel_mismatch" in {d.kind for d in report.result.reports[0].diagnoses}


TRITON_OP = textwrap.dedent("""\
    import gradtool
    import torch
    from torch import Tensor


    def twice_sin(x):
        return torch.sin(x) * 2.0


    @gradtool.reference(twice_sin)
    @torch.library.triton_op("t::tsin", mutates_args=())
    def tsin(x: Tensor) -> Tensor:
        return torch.sin(x) * 2.0  # (a Triton launch, on a machine with a GPU)


    tsin.register_fake(lambda x: torch.empty_like(x))


    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])


    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 2.0 * torch.cos(x)


    tsin.register_autograd(backward, setup_context=setup_context)
    """)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_triton_op_is_a_custom_op_target_named_by_the_users_function(tmp_path, engine):
    """torch's triton_op wraps the user's function in one of torch's own: the target is
    still the user's, at its line, with its parameters, its reference checked."""
    path = tmp_path / "triton_ops.py"
    path.write_text(TRITON_OP)
    r, doc = gradcheck(str(path), engine)
    assert_exit(r, 0)
    [target] = doc["targets"]
    assert (target["name"], target["kind"]) == ("tsin", "custom_op")
    assert target["location"].endswith(f":{line_of(str(path), '@gradtool.reference')}")
    assert target["reference"]["passed"] is True


LIST_OP = textwrap.dedent("""\
    from typing import Sequence

    import torch


    @torch.library.custom_op("t::weighted_sum", mutates_args=())
    def weighted_sum(xs: Sequence[torch.Tensor], w: torch.Tensor) -> torch.Tensor:
        return sum(x * w for x in xs)


    @weighted_sum.register_fake
    def _(xs, w):
        return torch.empty_like(w)


    def setup_context(ctx, inputs, output):
        xs, w = inputs
        ctx.save_for_backward(w, *xs)


    def backward(ctx, grad):
        w, *xs = ctx.saved_tensors
        return [grad * w * (1 if i == 0 else WRONG) for i in range(len(xs))], grad * sum(xs)


    weighted_sum.register_autograd(backward, setup_context=setup_context)
    """)


@pytest.mark.parametrize("engine", ENGINES)
def test_each_tensor_of_a_list_argument_is_checked(tmp_path, engine):
    """A List[Tensor] argument is made of two tensors, each an input of its own (`xs[0]`,
    `xs[1]`): a gradient wrong for the second entry only fails that entry's pairs; the saved
    tensors backward reads for the list's gradients count as used."""
    path = tmp_path / "list_op.py"
    path.write_text(LIST_OP.replace("WRONG", "3"))
    r, doc = gradcheck(str(path), engine)
    assert_exit(r, 1)
    [report] = doc["targets"][0]["reports"]
    assert [i["label"] for i in report["inputs"]] == ["xs[0]", "xs[1]", "w"]
    assert {p["input_name"]: p["passed"] for p in report["pairs"]} == {
        "xs[0]": True, "xs[1]": False, "w": True}
    assert "saved_unused" not in [d["kind"] for d in report["diagnoses"]]
