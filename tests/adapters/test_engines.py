"""`--engine torch` and `--against torch` (every report on PyTorch's own graph, and the engine
compared with torch), and the engine adapter behind them (gradtool/adapters/). The torch runs are
parity tests: they skip without PyTorch. Without PyTorch, both options exit 2 saying so: tested
everywhere by hiding torch from a gradtool process."""
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import cli_util as cu
import gradtool as gt
from cli_util import assert_clean_user_error, assert_exit

try:
    import torch
except ImportError:
    torch = None

FILES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch_files")

DIFFERING = textwrap.dedent("""\
    import torch

    ON_TORCH = torch.__name__ == "torch"  # the file knows which engine runs it


    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * (2 if ON_TORCH else 2.5)


    def doubled(x):
        return (x * 2 if ON_TORCH else x + x).sum()


    def same(x):
        return torch.tanh(x).sum()
    """)

DIAGNOSED = textwrap.dedent("""\
    import torch


    def cut(x):
        y = x.detach() * 2
        return (y * x).sum()


    def modified(x):
        y = x.exp()
        y.add_(1)
        return y.sum()
    """)

BROKEN = textwrap.dedent("""\
    import torch


    class WrongSin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x.cos() * 1.1
    """)


def _torch_node_names(path, name, *args):
    """What torch itself records for a target of a file: node names in backward's order."""
    import importlib.util

    from gradtool.engine.autograd.walk import topological_order
    spec = importlib.util.spec_from_file_location("torch_oracle_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.dirname(path))
    out = getattr(module, name)(*args)
    return [n.name().rpartition("::")[2] for n in topological_order([out.grad_fn])]


# ------------------------------------------------------------------ --engine torch
@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("command", ["inspect", "gradcheck"])
def test_engine_torch_runs_the_file_on_torch_and_reports_torchs_graph(command):
    path = os.path.join(FILES, "nn_model.py")
    result = cu.run(command, "--engine", "torch", "--json", f"{path}::loss_of")
    assert_exit(result, 0)
    doc = result.json()
    [target] = doc["targets"]
    if command == "inspect":
        names = [n["name"] for n in target["graph"]["nodes"]]
        x = torch.tensor(np.random.default_rng(0).standard_normal(3), requires_grad=True)
        assert names == _torch_node_names(path, "loss_of", x)
        assert "AccumulateGrad" in names  # torch's name() says torch::autograd::AccumulateGrad
        saved = {s["name"] for n in target["graph"]["nodes"] for s in n["saved"]}
        assert "_saved_mat1" in saved  # torch's Addmm saves
    else:
        assert target["passed"] and target["input_names"][:1] == ["x"]
        assert "model.fc1.weight" in target["input_names"]


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_engine_torch_gradcheck_fails_a_wrong_custom_backward_with_the_report(tmp_path):
    user = tmp_path / "broken.py"
    user.write_text(BROKEN)
    result = cu.run("gradcheck", "--engine", "torch", "--json", user)
    assert_exit(result, 1)
    [target] = result.json()["targets"]
    [report] = target["reports"]
    assert target["name"] == "WrongSin" and not target["passed"]
    assert report["pairs"][0]["passed"] is False
    assert any(d["kind"] == "wrong_gradient" for d in report["diagnoses"])


RAISING = textwrap.dedent("""\
    import torch


    class Raises(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("not written yet")


    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.sum()[None].expand(5)
    """)


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_engine_torch_a_raising_backward_is_the_users_error_a_refused_gradient_a_failure(
        tmp_path):
    """The same rule on both engines: the user's backward raising is exit 2 with its line;
    torch refusing what backward returned is a failed check (exit 1) with the hazard named."""
    user = tmp_path / "raising.py"
    user.write_text(RAISING)
    raises, wrong = cu.run_many([("gradcheck", "--engine", "torch", f"{user}::Raises"),
                                 ("gradcheck", "--engine", "torch", "--json",
                                  f"{user}::WrongShape")])
    assert_exit(raises, 2)
    assert f"{user}:11" in cu.flat(raises.stdout) and "not written yet" in raises.stdout
    assert_exit(wrong, 1)
    [report] = wrong.json()["targets"][0]["reports"]
    assert "grad_wrong_shape" in {d["kind"] for d in report["diagnoses"]}


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_engine_torch_inspect_finds_cuts_and_in_place_changes_in_torchs_graph(tmp_path):
    user = tmp_path / "diagnosed.py"
    user.write_text(DIAGNOSED)
    result = cu.run("inspect", "--engine", "torch", "--json", user)
    assert_exit(result, 1)  # the in-place change is an error
    targets = {t["name"]: t for t in result.json()["targets"]}
    cut = {d["kind"]: d for d in targets["cut"]["diagnostics"]}["gradient_cut"]
    assert cut["details"]["cut"] == "detach" and cut["location"].endswith("diagnosed.py:5")
    kinds = {d["kind"] for d in targets["modified"]["diagnostics"]}
    assert {"saved_modified_in_place", "backward_failed"} <= kinds
    [saved] = [s for n in targets["modified"]["graph"]["nodes"] for s in n["saved"]
               if n["name"] == "ExpBackward0"]
    assert (saved["state"], saved["version_saved"], saved["version_now"]) == ("modified", 0, 1)


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_engine_torch_render_draws_torchs_nodes_grouped_by_module(tmp_path):
    svg, page = tmp_path / "model.svg", tmp_path / "model.html"
    target = os.path.join(FILES, "nn_model.py::loss_of")
    results = cu.run_many([("render", "--engine", "torch", target, "-o", svg),
                           ("render", "--engine", "torch", target, "-o", page)])
    for result in results:
        assert_exit(result, 0)
    text = ET.tostring(ET.parse(svg).getroot(), encoding="unicode")
    assert "AddmmBackward0" in text and "fc1 (Linear)" in text
    assert page.read_text().startswith("<!DOCTYPE html>")


# ------------------------------------------------------------------ --against torch
@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_against_torch_agrees_on_real_files_first_and_second_order():
    results = cu.run_many([
        ("gradcheck", "--against", "torch", "--json", "--order", "2",
         os.path.join(FILES, "nn_model.py::loss_of")),
        ("inspect", "--against", "torch", "--json", os.path.join(FILES, "extending.py::Exp")),
        ("gradcheck", "--against", "torch", "--json", "--order", "2",
         os.path.join(FILES, "extending.py::my_cube")),
        ("gradcheck", "--against", "torch", "--json",
         os.path.join(FILES, "extending.py::linear_layer")),
        ("gradcheck", "--against", "torch", "--json", "--order", "2", "--shape", "2,3,8",
         os.path.join(FILES, "transformer_block.py")),
        # data drawn with torch.randn at import: copied into gradtool's run, as the weights
        ("gradcheck", "--against", "torch", "--json",
         os.path.join(FILES, "resnet_block.py::loss"))])
    for result in results:
        assert_exit(result, 0)
        doc = result.json()
        assert doc["schema"] == "gradtool.against/1" and doc["agree"]
    model = results[0].json()["targets"][0]
    # x and the four parameters, at both orders; the same weights on both engines
    assert model["compared"]["gradients"] == 5 and model["compared"]["second_order"] == 5
    assert model["compared"]["nodes"] > 10 and model["differences"] == []
    gpt = {t["name"]: t for t in results[-2].json()["targets"]}
    # two attention blocks and a head: every node, saved name and second-order gradient
    assert gpt["loss"]["compared"]["nodes"] > 100 and gpt["loss"]["compared"]["gradients"] > 20
    assert set(gpt) == {"loss", "stats", "conv_like"}


LSTM_WITH_RANDOM_EXAMPLE = textwrap.dedent("""\
    import gradtool
    import torch

    lstm = torch.nn.LSTM(4, 3, num_layers=2, batch_first=True)


    @gradtool.example(torch.randn(2, 5, 4))
    def loss(x):
        out, (h, c) = lstm(x)
        return out[:, -1].pow(2).sum() + c.sum()
    """)


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_against_torch_uses_torchs_example_tensors_and_agrees_on_the_float32_lstm(tmp_path):
    """A tensor drawn in @gradtool.example(...) is torch's on both engines (as global data
    and weights are): without that copy the two runs start from different inputs and DIFFER
    falsely. The float32 LSTM is torch's oneDNN op on both, node and saved name alike."""
    user = tmp_path / "lstm_model.py"
    user.write_text(LSTM_WITH_RANDOM_EXAMPLE)
    result = cu.run("inspect", "--against", "torch", "--json", user)
    assert_exit(result, 0)
    [target] = result.json()["targets"]
    assert target["agree"] and target["differences"] == []
    assert target["compared"]["gradients"] == 8 and target["compared"]["nodes"] > 10


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_against_torch_lists_each_difference_with_both_values(tmp_path):
    user = tmp_path / "differing.py"
    user.write_text(DIFFERING)
    result, text = cu.run_many([("gradcheck", "--against", "torch", "--json", user),
                                ("gradcheck", "--against", "torch", "--no-color", user)])
    assert_exit(result, 1)
    assert_exit(text, 1)
    targets = {t["name"]: t for t in result.json()["targets"]}
    [gradient] = targets["Scale"]["differences"]
    assert (gradient["kind"], gradient["name"]) == ("gradient", "x")
    assert (gradient["gradtool"], gradient["torch"]) == (2.5, 2.0)
    nodes = {(d["name"], d["gradtool"], d["torch"]) for d in targets["doubled"]["differences"]}
    assert nodes == {("AddBackward0", 1, 0), ("MulBackward0", 0, 1)}
    assert targets["same"]["agree"] and targets["same"]["differences"] == []
    assert "DIFFER" in text.stdout and "AGREE" in text.stdout and "2.5" in text.stdout


# ------------------------------------------------------------------ without torch
HIDE_TORCH = textwrap.dedent("""\
    import sys


    from importlib.machinery import PathFinder

    find_spec = PathFinder.find_spec


    def no_torch(name, path=None, target=None):  # a machine without PyTorch
        return None if name.split(".")[0] == "torch" else find_spec(name, path, target)


    PathFinder.find_spec = no_torch
    sys.argv[0] = "gradtool"
    from gradtool.cli import main
    main()
    """)


def _gradtool_without_torch(*args):
    done = subprocess.run([sys.executable, "-c", HIDE_TORCH, *map(str, args)], cwd=cu.REPO,
                          env=cu.env(), capture_output=True, text=True, timeout=120)
    return cu.Result(list(map(str, args)), done.returncode, done.stdout, done.stderr)


def test_without_torch_the_torch_options_exit_2_saying_so_and_the_default_needs_no_torch(
        tmp_path):
    example = os.path.join(FILES, "extending.py::Exp")
    runs = [_gradtool_without_torch(command, option, "torch", example)
            for command, option in (("inspect", "--engine"), ("gradcheck", "--against"))]
    runs.append(_gradtool_without_torch("render", "--engine", "torch", example, "-o",
                                        tmp_path / "graph.svg"))
    for result in runs:
        assert_clean_user_error(result, "PyTorch is not installed here")
    assert_exit(_gradtool_without_torch("gradcheck", example), 0)  # gradtool's engine


def test_engine_options_are_checked():
    example = os.path.join(FILES, "extending.py::Exp")
    for args, says in ((("--engine", "jax"), ("--engine", "'jax'", "'gradtool'", "'torch'")),
                       (("--against", "numpy"), ("--against", "'numpy'", "'torch'")),
                       (("--engine", "torch", "--against", "torch"), ("drop --engine",))):
        assert_clean_user_error(cu.run("gradcheck", *args, example), *says)


# ------------------------------------------------------------------ the adapter, in-process
def test_the_engine_of_gradtool_tensors_is_gradtool_and_gradtool_needs_no_torch_import():
    import gradtool.adapters as engines
    x = gt.ones(2, requires_grad=True)
    assert engines.of((x, 1.0)).name == "gradtool"
    assert engines.current().name == "gradtool"
    E = engines.current()
    y = (x * 3).sum()
    node, nr = E.gradient_edge(y)
    assert (E.node_name(node), E.node_kind(node), nr) == ("SumBackward0", "op", 0)
    assert E.array(x) is x._data  # shared: gradcheck perturbs through it


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_gradtools_checks_take_torch_tensors_and_say_it_in_torchs_words(tmp_path):
    import importlib.util

    from gradtool.checks import GradcheckError
    from gradtool.frontends.testing import GradcheckAssertionError, assert_gradcheck
    user = tmp_path / "broken_torch.py"
    user.write_text(BROKEN)
    spec = importlib.util.spec_from_file_location("broken_torch", user)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # real torch: no gradtool alias here
    WrongSin = module.WrongSin

    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert gt.autograd.gradcheck(torch.sin, (x,), check_forward_ad=True)
    assert gt.autograd.gradgradcheck(torch.sin, (x,))
    with pytest.raises(GradcheckError) as caught:
        gt.autograd.gradcheck(WrongSin.apply, (x,))
    assert "dtype=torch.float64" in str(caught.value)  # torch's tensors, in torch's repr
    with pytest.raises(GradcheckAssertionError) as caught:
        assert_gradcheck(WrongSin.apply, (x,))
    assert "WrongSin  Function at" in str(caught.value) and "wrong_gradient" in str(caught.value)


def test_gradtools_engine_never_imports_torch_even_when_it_is_installed():
    """torch stays optional: on gradtool's engine (a file that says `import torch` included)
    the real torch is never imported."""
    script = textwrap.dedent("""\
        import sys
        sys.argv = ["gradtool", "gradcheck", sys.argv[1]]
        from gradtool.cli import main
        try:
            main()
        except SystemExit as e:
            print("exit", e.code, "torch imported:", "torch" in sys.modules, file=sys.stderr)
        """)
    done = subprocess.run([sys.executable, "-c", script, os.path.join(FILES, "extending.py::Exp")],
                          cwd=cu.REPO, env=cu.env(), capture_output=True, text=True, timeout=120)
    assert "exit 0 torch imported: False" in done.stderr, done.stderr


def test_torch_func_file_passes_gradcheck_on_the_engine():
    result = cu.run("gradcheck", "--json", "--shape", "x=4,3", os.path.join(FILES, "per_sample.py"))
    assert_exit(result, 0)
    assert result.json()["targets"][0]["passed"]


def test_the_trace_around_vmap_records_one_node_per_batched_op():
    """The trace reads every op's values (is it finite?) without reading a batched tensor's
    own, which would send vmap to run the function one example at a time: the graph around
    vmap(grad(...)) holds the batched ops (Bmm over the examples), not each example's
    (Select of each input row, Stack of the results)."""
    result = cu.run("inspect", "--json", os.path.join(cu.EXAMPLES, "func_per_sample_grads.py"))
    assert_exit(result, 0)
    names = [n["name"] for n in result.json()["targets"][0]["graph"]["nodes"]]
    assert "BmmBackward0" in names
    assert "StackBackward0" not in names and "SelectBackward0" not in names
    assert "one example at a time" not in result.stderr


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_engine_torch_traces_around_torch_func_transforms():
    """Inside torch.func's transforms torch's values are functorch wrappers that refuse
    .item(): the trace follows the graph around the transforms."""
    result = cu.run("gradcheck", "--engine", "torch", "--json", "--shape", "x=4,3",
                    os.path.join(FILES, "per_sample.py"))
    assert_exit(result, 0)
    assert result.json()["targets"][0]["passed"]
