"""The gradtool command as a user runs it (what runs in a file, the commands, their options and
output): the installed `gradtool` executable in a subprocess, checked by its exit code, its
stdout/stderr, the JSON it prints and the SVG it writes.

Each subprocess costs ~0.3-0.7 s, so the runs over every example are made once, in parallel
(`sweep`), and shared by the tests that read them."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

import cli_util as cu
from cli_util import EXAMPLES, GRADTOOL, REPO, assert_clean_user_error, assert_exit, run

# each test runs gradtool as separate processes, over every example: `make test-slow`
pytestmark = pytest.mark.slow

ALL_EXAMPLES = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))
# Scripts of the gallery run with `python examples/FILE`: no target the CLI could run.
SCRIPTS = {"train_mlp.py"}
TARGET_EXAMPLES = [f for f in ALL_EXAMPLES if f not in SCRIPTS]

# What each broken example's docstring promises from `gradtool gradcheck`: the diagnosis
# kind, the order it shows at, and whether the check fails (exit 1) or passes with a warning
# (exit 0; exit 1 under --strict).
BROKEN = {
    "broken_ctx_storage.py": dict(kind="ctx_stored_tensor", order=1, fails=False),
    "broken_detached_backward.py": dict(kind="backward_detaches", order=2, fails=True),
    "broken_float32.py": dict(kind="precision", order=1, fails=True),
    "broken_grad_dtype.py": dict(kind="grad_wrong_dtype", order=1, fails=False),
    "broken_grad_shape.py": dict(kind="grad_wrong_shape", order=1, fails=True),
    "broken_ignores_grad_output.py": dict(kind="ignores_grad_output", order=1, fails=True),
    "broken_jvp.py": dict(kind="wrong_jvp", order=1, fails=True),
    "broken_kink.py": dict(kind="non_differentiable_point", order=1, fails=True),
    "broken_mark_dirty.py": dict(kind="input_modified_in_forward", order=1, fails=True),
    "broken_nondeterministic.py": dict(kind="nondeterministic_backward", order=1, fails=True),
    "broken_none_grad.py": dict(kind="grad_none_for_input", order=1, fails=True),
    "broken_once_differentiable.py": dict(kind="once_differentiable", order=2, fails=True),
    "broken_wrong_gradient.py": dict(kind="wrong_gradient", order=1, fails=True),
    "broken_gradient_cut.py": dict(kind="gradient_cut", order=1, fails=True),
    "broken_saved_detached.py": dict(kind="saved_detached", order=2, fails=True),
    "broken_not_reentrant.py": dict(kind="backward_not_reentrant", order=1, fails=True),
    "broken_random_forward.py": dict(kind="random_forward", order=1, fails=True),
    "broken_straight_through.py": dict(kind="surrogate_gradient", order=1, fails=True),
    "broken_gradient_reversal.py": dict(kind="surrogate_gradient", order=1, fails=True),
    "broken_model_function.py": dict(kind="wrong_node", order=1, fails=True),
    "broken_complex_conj.py": dict(kind="wrong_gradient", order=1, fails=True),
    "broken_float32_inside.py": dict(kind="precision", order=1, fails=True),
    "broken_clamp_straight_through.py": dict(kind="surrogate_gradient", order=1, fails=True),
    "broken_round_pass.py": dict(kind="surrogate_gradient", order=1, fails=True),
    "broken_pass_through.py": dict(kind="surrogate_gradient", order=1, fails=True),
    "broken_data_init.py": dict(kind="gradient_cut", order=1, fails=True),
    "broken_custom_op_backward.py": dict(kind="wrong_gradient", order=1, fails=True),
    "broken_fake_shape.py": dict(kind="fake_kernel_mismatch", order=1, fails=True),
    "broken_undeclared_mutation.py": dict(kind="undeclared_mutation", order=1, fails=True),
    "broken_no_autograd.py": dict(kind="no_autograd", order=1, fails=True),
}
PASSING = sorted([f for f in ALL_EXAMPLES if f.endswith("_ok.py")]
                 + ["basics.py", "model.py", "higher_order.py", "saved_hooks.py",
                    "test_my_functions.py", "attention.py", "layernorm_reference.py",
                    "complex_conj_ok.py"])
ORDER2_PASSING = ["detached_backward_ok.py", "once_differentiable_ok.py", "higher_order.py",
                  "saved_detached_ok.py", "attention.py", "complex_conj_ok.py"]


def ex(name):
    return f"examples/{name}"  # relative: gradtool runs in the repository, as a user would


def _sweep_commands():
    cmds = []
    for f in ALL_EXAMPLES:
        cmds.append(("inspect", "--json", ex(f)))
        cmds.append(("gradcheck", "--json", ex(f)))
    for f, b in BROKEN.items():
        if b["order"] == 2:
            cmds.append(("gradcheck", "--json", "--order", "2", ex(f)))
        if not b["fails"]:
            cmds.append(("gradcheck", "--json", "--strict", ex(f)))
    for f in ORDER2_PASSING:
        cmds.append(("gradcheck", "--json", "--order", "2", ex(f)))
    for f in ("grad_modes.py", "inplace_trouble.py", "basics.py"):  # text, and exit codes
        cmds.append(("inspect", "--strict", "--no-color", ex(f)))
    for mode in ("forward", "reverse", "both"):
        cmds.append(("gradcheck", "--json", "--mode", mode, ex("broken_jvp.py")))
    cmds.append(("gradcheck", "--no-color", ex("broken_jvp.py")))
    cmds.append(("gradcheck", "--json", "--mode", "forward", ex("model.py")))
    cmds.append(("gradcheck", "--json", "--mode", "forward", ex("basics.py")))
    cmds.append(("gradcheck", "--json", "--mode", "both", ex("basics.py")))
    cmds.append(("gradcheck", "--json", "--mode", "both", "--order", "2", ex("higher_order.py")))
    return cmds


CHAIN_100K = textwrap.dedent("""\
    import gradtool


    @gradtool.example((2,))
    def chain(x):
        y = x
        for _ in range(100_000):
            y = y * 1.0000001
        return y.sum()
    """)


@pytest.fixture(scope="module")
def chain_100k(tmp_path_factory):
    """`gradtool render` of a 100,000-op chain, started at once in the background (it is the
    longest single run; it overlaps the others): (Popen, user file, output path)."""
    folder = tmp_path_factory.mktemp("chain100k")
    user = folder / "long_chain.py"
    user.write_text(CHAIN_100K)
    out = folder / "chain.svg"
    proc = subprocess.Popen([GRADTOOL, "render", str(user), "-o", str(out)], cwd=REPO,
                            env=cu.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    yield proc, user, out
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


@pytest.fixture(scope="module")
def chain_100k_json(tmp_path_factory):
    """`gradtool inspect --json` of the same chain, its document written to a file, also
    started at once in the background: (Popen, the document's path, stderr's path)."""
    folder = tmp_path_factory.mktemp("chain100k_json")
    user = folder / "long_chain.py"
    user.write_text(CHAIN_100K)
    document, stderr = folder / "chain.json", folder / "stderr.txt"
    with open(document, "w") as out, open(stderr, "w") as err:
        proc = subprocess.Popen([GRADTOOL, "inspect", "--json", str(user)], cwd=folder,
                                env=cu.env(), stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    yield proc, document, stderr
    if proc.returncode is None:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def sweep(request):
    """Every example through the real CLI, run once and in parallel: {args tuple: Result}."""
    assert os.path.exists(GRADTOOL), (
        f"the installed gradtool command is missing at {GRADTOOL}: `pip install -e .` "
        f"into the environment running the tests")
    names = {item.name for item in request.session.items}
    if "test_render_100k_op_chain" in names:
        request.getfixturevalue("chain_100k")  # start it now, to overlap with the sweep
    if "test_inspect_json_of_a_100k_op_chain" in names:
        request.getfixturevalue("chain_100k_json")
    cmds = _sweep_commands()
    return dict(zip(cmds, cu.run_many(cmds)))


# ============================================================== 1. every example, every command

def test_every_example_is_covered_by_a_classification():
    for f in ALL_EXAMPLES:
        if f.startswith("broken_"):
            assert f in BROKEN, f"{f}: add it to BROKEN with the diagnosis its docstring names"
    for f, b in BROKEN.items():
        assert f in ALL_EXAMPLES, f
        assert f"`{b['kind']}`" in cu.docstring(os.path.join(EXAMPLES, f)), \
            f"{f}'s docstring does not name the diagnosis `{b['kind']}`"
    for f in ALL_EXAMPLES:
        if f.endswith("_ok.py"):
            assert "broken_" + f[:-len("_ok.py")] + ".py" in ALL_EXAMPLES, f


@pytest.mark.parametrize("name", TARGET_EXAMPLES)
def test_inspect_json_on_every_example(sweep, name):
    r = sweep[("inspect", "--json", ex(name))]
    targets = cu.check_inspect_document(r.json(), ex(name))
    errors = [d for t in targets.values() for d in t["diagnostics"] if d["severity"] == "error"]
    assert_exit(r, 1 if errors else 0)  # an error (✗) is a failed check
    node_lines = [line for line in r.stdout.splitlines() if line.lstrip().startswith('{"id": ')]
    assert len(node_lines) == sum(len(t["graph"]["nodes"]) for t in targets.values())  # 1 a line
    for t in targets.values():
        path, _, line = t["location"].rpartition(":")
        assert os.path.samefile(path if os.path.isabs(path) else os.path.join(REPO, path),
                                os.path.join(EXAMPLES, name))
        assert int(line) >= 1
        # leaves are labelled with the user's names, and every input that requires grad and
        # is not reported as getting no gradient is one of them
        leaves = {n["leaf"]["name"] for n in t["graph"]["nodes"] if n["kind"] == "leaf"}
        for n in t["graph"]["nodes"]:
            if n["kind"] == "leaf":
                assert n["label"] == n["leaf"]["name"], n
        if t["backward_error"] is None and any(o["requires_grad"] for o in t["outputs"]):
            assert leaves, t["name"]
            no_grad = " ".join(d["message"] for d in t["diagnostics"]
                               if d["kind"] == "input_no_grad")
            for i in t["inputs"]:
                if i.get("requires_grad") and f"input {i['name']} " not in no_grad:
                    assert i["name"] in leaves, (t["name"], i["name"], leaves)


@pytest.mark.parametrize("name", PASSING)
def test_gradcheck_passes_on_correct_examples(sweep, name):
    r = sweep[("gradcheck", "--json", ex(name))]
    assert_exit(r, 0)
    doc = r.json()
    assert doc["schema"] == "gradtool.gradcheck/3"
    assert doc["passed"] is True
    assert doc["targets"]
    for t in doc["targets"]:
        assert t["passed"] is True, t["name"]
        assert t["reports"][-1]["order"] == 1
        assert not [d for d in t["reports"][-1]["diagnoses"] if d["severity"] == "error"]


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_gradcheck_diagnoses_every_broken_example(sweep, name):
    b = BROKEN[name]
    args = ("gradcheck", "--json") + (("--order", "2") if b["order"] == 2 else ()) + (ex(name),)
    r = sweep[args]
    doc = r.json()
    assert doc["schema"] == "gradtool.gradcheck/3"
    kinds = {d["kind"] for t in doc["targets"] for rep in t["reports"] for d in rep["diagnoses"]}
    assert b["kind"] in kinds, f"{name}: diagnosis {b['kind']} missing (got {kinds})\n{r}"
    if b["fails"]:
        assert_exit(r, 1)
        assert doc["passed"] is False
        failing = [t for t in doc["targets"] if not t["passed"]]
        assert failing
        for t in failing:
            assert t["reports"][-1]["order"] == b["order"]
    else:  # passes with a warning torch would not give: --strict makes it a failure
        assert_exit(r, 0)
        assert doc["passed"] is True
        severities = {d["severity"] for t in doc["targets"] for d in t["reports"][-1]["diagnoses"]
                      if d["kind"] == b["kind"]}
        assert severities == {"warning"}
        strict = sweep[("gradcheck", "--json", "--strict", ex(name))]
        assert_exit(strict, 1)
        assert strict.json()["schema"] == "gradtool.gradcheck/3"
    if b["order"] == 2:  # the first derivative is right: order 1 passes
        assert_exit(sweep[("gradcheck", "--json", ex(name))], 0)


@pytest.mark.parametrize("name", ORDER2_PASSING)
def test_gradcheck_order_2_passes_on_correct_examples(sweep, name):
    r = sweep[("gradcheck", "--json", "--order", "2", ex(name))]
    assert_exit(r, 0)
    doc = r.json()
    assert doc["passed"] is True
    assert all(t["reports"][-1]["order"] == 2 for t in doc["targets"])


def test_gradcheck_on_grad_modes_and_inplace_examples(sweep):
    """Outputs cut from the graph and a backward that cannot run are check failures."""
    r = sweep[("gradcheck", "--json", ex("grad_modes.py"))]
    assert_exit(r, 1)
    passed = {t["name"]: t["passed"] for t in r.json()["targets"]}
    assert passed == {"scaled_under_no_grad": False, "everything_under_no_grad": False,
                      "through_detach": False, "inference": False, "unused_input": True}
    r = sweep[("gradcheck", "--json", ex("inplace_trouble.py"))]
    assert_exit(r, 1)
    targets = {t["name"]: t for t in r.json()["targets"]}
    assert targets["overwrites_saved_output"]["passed"] is False
    assert "inplace" in targets["overwrites_saved_output"]["reports"][-1]["error"]
    assert targets["out_of_place"]["passed"] and targets["write_through_a_view"]["passed"]


def test_gradcheck_names_the_parts_of_complex_values(sweep):
    """A complex Function that forgets its conj fails; the JSON's pairs are the real and
    imaginary parts of the complex input and output (JSON has no complex numbers), and the
    failures say which parts disagree, in torch's words."""
    r = sweep[("gradcheck", "--json", ex("broken_complex_conj.py"))]
    assert_exit(r, 1)
    report = r.json()["targets"][0]["reports"][-1]
    assert [i["label"] for i in report["inputs"]] == ["real part of z", "imaginary part of z"]
    # (torch's order: its first pass checks the imaginary parts)
    assert [o["label"] for o in report["outputs"]] == ["imaginary part of output 0",
                                                        "real part of output 0"]
    failing = {(p["output_name"], p["input_name"]) for p in report["pairs"] if not p["passed"]}
    assert failing == {("real part of output 0", "imaginary part of z"),
                       ("imaginary part of output 0", "real part of z")}
    assert report["failures"][0]["message"].startswith(
        "While considering the imaginary part of complex outputs only, Jacobian mismatch for "
        "output 0 with respect to input 0 (real part of z)")


COMPLEX_INSIDE = textwrap.dedent("""\
    import gradtool
    import gradtool as torch


    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, grad_output):
            z, = ctx.saved_tensors
            return grad_output * 2 * z


    @gradtool.example((3,))
    def loss(x):
        z = torch.polar(x.abs() + 1, x)
        return (Square.apply(z).exp() * z.conj()).real.sum()
    """)


def test_gradcheck_localizes_a_wrong_complex_function_inside_a_real_loss(tmp_path):
    """A real loss of a real input fails; localisation checks the complex Function call on
    its own, part by part, and names it and its line (not "each node passes")."""
    user = tmp_path / "complex_inside.py"
    user.write_text(COMPLEX_INSIDE)
    r = run("gradcheck", "--json", str(user))
    assert_exit(r, 1)
    targets = {t["name"]: t for t in r.json()["targets"]}
    assert targets["Square"]["passed"]  # on its own, at real inputs, its backward is right
    report = targets["loss"]["reports"][-1]
    (wrong,) = [d for d in report["diagnoses"] if d["kind"] == "wrong_node"]
    assert "SquareBackward" in wrong["message"]
    assert "imaginary part of output 0 with respect to real part of z" in wrong["message"]
    assert wrong["location"].endswith("complex_inside.py:20")


def test_gradcheck_text_says_why_a_check_failed():
    """A FAIL with no pair to tabulate (no output requires grad) still gives its reason."""
    args = ["gradcheck", ex("grad_modes.py::everything_under_no_grad")]
    text, js = cu.run_many([args + ["--no-color"], args + ["--json"]])
    assert_exit(text, 1)
    assert_exit(js, 1)
    failures = js.json()["targets"][0]["reports"][-1]["failures"]
    assert failures
    assert "FAIL" in text.stdout
    for f in failures:
        assert cu.flat(f["message"]) in cu.flat(text.stdout), \
            f"the text report does not say why the check failed ({f['message']!r})\n{text}"


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_gallery_scripts_have_no_targets(sweep, name):
    """train_mlp.py is a script (`python examples/train_mlp.py`): its only function takes
    keyword-only options, so the CLI finds no target and says so (exit 2, §3)."""
    for cmd in ("inspect", "gradcheck"):
        r = sweep[(cmd, "--json", ex(name))]
        assert_clean_user_error(r, "No targets found", ex(name))


def test_pytest_test_functions_are_not_targets(sweep):
    """examples/test_my_functions.py is a pytest file: its Function and helper are targets,
    its test functions (whose parameters are fixtures) are not."""
    doc = sweep[("inspect", "--json", ex("test_my_functions.py"))].json()
    assert [t["name"] for t in doc["targets"]] == ["SmoothAbs", "smooth_l1"]


# ---------------------------------------------------------------- render

def _render(tmp_path, spec, out="graph.svg", *options, extra_env=None):
    path = tmp_path / out
    r = run("render", spec, "-o", path, *options, extra_env=extra_env)
    return r, path


def test_render_svg_matches_the_inspected_graph(sweep, rendered):
    r, path = rendered["plain"]
    assert_exit(r, 0)
    assert r.stdout == ""
    root, nodes, edges = cu.parse_svg(path)
    target = cu.check_inspect_document(sweep[("inspect", "--json", ex("basics.py"))].json())[
        "weighted_loss"]
    graph_ids = {n["id"] for n in target["graph"]["nodes"]}
    assert set(nodes) == graph_ids | {"out0"}
    assert edges == cu.edges_of(target) | {("n0", "out0")}
    for n in target["graph"]["nodes"]:
        assert n["name"] in nodes[n["id"]].words, (n, nodes[n["id"]])
        if n["label"]:
            assert n["label"] in nodes[n["id"]].texts
    words = cu.all_svg_words(nodes)
    for name in ("MulBackward0", "ExpBackward0", "PowBackward0", "AddBackward0",
                 "SumBackward0", "AccumulateGrad", "x", "w", "h", "loss"):
        assert name in words, name
    # torchviz's colours: leaves one colour, backward nodes another, the output a third
    leaf_fill = {nodes[n["id"]].fills[0] for n in target["graph"]["nodes"] if n["kind"] == "leaf"}
    op_fill = {nodes[n["id"]].fills[0] for n in target["graph"]["nodes"] if n["kind"] == "op"}
    out_fill = {nodes["out0"].fills[0]}
    assert len(leaf_fill) == len(op_fill) == 1
    assert len(leaf_fill | op_fill | out_fill) == 3
    assert not any(t.startswith("_saved_") for t in words)


def test_render_writes_its_file_like_any_other(rendered):
    """The -o file gets the user's usual permissions (umask honoured, not those of a private
    temporary file), and no temporary is left next to it."""
    r, path = rendered["plain"]
    assert_exit(r, 0)
    umask = os.umask(0)
    os.umask(umask)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o666 & ~umask, f"{path} written with mode {oct(mode)}"
    assert not [f for f in os.listdir(path.parent) if not f.endswith(".svg")]


def test_render_show_saved_draws_each_saved_tensor_once(rendered):
    r, path = rendered["saved"]
    assert_exit(r, 0)
    _, nodes, edges = cu.parse_svg(path)
    saved = {i: n for i, n in nodes.items() if n.texts and n.texts[0].startswith("_saved_")}
    # x (saved by PowBackward0 and MulBackward0), w (MulBackward0), exp's result
    assert sorted(n.texts[0] for n in saved.values()) == [
        "_saved_other", "_saved_result", "_saved_self"]
    by_name = {n.id: n.tooltip for n in nodes.values()}
    owners = {s: sorted(by_name[h] for t, h in edges if t == s) for s in saved}
    assert sorted(owners.values()) == [["ExpBackward0"], ["MulBackward0"],
                                       ["MulBackward0", "PowBackward0"]]
    saved_fill = {n.fills[0] for n in saved.values()}
    other_fills = {n.fills[0] for i, n in nodes.items() if i not in saved}
    assert len(saved_fill) == 1 and not saved_fill & other_fills


RENDERED = ["basics.py", "model.py", "inplace_trouble.py", "higher_order.py", "saved_hooks.py"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """Renders of a few examples, made in parallel: {key: (Result, svg path)}. Keys: each of
    RENDERED (with --show-saved), "plain" and "saved" (basics.py::weighted_loss without and
    with --show-saved)."""
    folder = tmp_path_factory.mktemp("rendered")
    jobs = {name: [ex(name), "--show-saved"] for name in RENDERED}
    jobs["plain"] = [ex("basics.py::weighted_loss")]
    jobs["saved"] = [ex("basics.py::weighted_loss"), "--show-saved"]
    paths = {key: folder / f"{key.replace('.', '_')}.svg" for key in jobs}
    results = cu.run_many([["render", spec, "-o", paths[key], *rest]
                           for key, (spec, *rest) in jobs.items()])
    return {key: (r, paths[key]) for key, r in zip(jobs, results)}


@pytest.mark.parametrize("name", RENDERED)
def test_render_examples(sweep, rendered, name):
    r, path = rendered[name]
    assert_exit(r, 0)
    assert r.stdout == ""
    root, nodes, _ = cu.parse_svg(path)
    assert nodes
    words = cu.all_svg_words(nodes)
    assert any(w.startswith("_saved_") for w in words)
    targets = cu.check_inspect_document(sweep[("inspect", "--json", ex(name))].json())
    for t in targets.values():
        for n in t["graph"]["nodes"]:
            assert n["name"] in words, (t["name"], n["name"])
            if n["kind"] == "leaf":
                assert n["leaf"]["name"] in words, (t["name"], n["leaf"]["name"])
    if name == "model.py":  # module calls drawn as labelled clusters
        clusters = [" ".join(x.text or "" for x in g.iter(cu.SVG_NS + "text"))
                    for g in root.iter(cu.SVG_NS + "g") if g.get("class") == "cluster"]
        assert any("Linear" in c for c in clusters), clusters
        assert any("CrossEntropyLoss" in c for c in clusters), clusters
        assert {"model.0.weight", "model.2.bias", "logits"} <= words


def test_render_dot_format_needs_no_renderer(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    no_path = {"PATH": str(empty)}
    spec = ex("basics.py")
    outs = tmp_path / "outs"
    outs.mkdir()
    from_suffix, explicit, svg_no_dot, pure_by_path = cu.run_many([
        ["render", spec, "-o", outs / "g.dot", "--renderer", "dot"],
        ["render", spec, "-o", outs / "g.gv", "--format", "dot", "--renderer", "dot"],
        ["render", spec, "-o", outs / "g.svg", "--renderer", "dot"],
        ["render", spec, "-o", outs / "pure.svg", "--renderer", "graphviz-pure"],
    ], extra_env=no_path)
    for r, f in ((from_suffix, "g.dot"), (explicit, "g.gv")):
        assert_exit(r, 0)
        source = (outs / f).read_text()
        assert source.lstrip().startswith("digraph")
        for word in ("MulBackward0", "AccumulateGrad", "LegendrePolynomial3Backward", "->"):
            assert word in source, word
    # an SVG with the system dot asked for, and no dot on PATH: a clear error, no file
    message = assert_clean_user_error(svg_no_dot)
    assert "dot" in message and "install" in message.lower()
    assert "--format dot" in message
    assert not (outs / "g.svg").exists()
    # graphviz-pure is found in the environment's scripts folder, not on PATH
    if os.path.exists(cu.GRAPHVIZ_PURE):
        assert_exit(pure_by_path, 0)
        cu.parse_svg(outs / "pure.svg")
    assert sorted(os.listdir(outs)) == sorted(
        ["g.dot", "g.gv"] + (["pure.svg"] if os.path.exists(cu.GRAPHVIZ_PURE) else []))


def test_render_pdf_without_system_dot_says_what_is_missing(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    r, path = _render(tmp_path, ex("basics.py"), "graph.pdf", extra_env={"PATH": str(empty)})
    message = assert_clean_user_error(r)
    assert "dot" in message and "Graphviz" in message and "install" in message.lower()
    if os.path.exists(cu.GRAPHVIZ_PURE):  # it is installed: the error must not say otherwise
        assert "graphviz-pure is not installed" not in message, message
    assert not path.exists()


@pytest.mark.skipif(shutil.which("dot") is None, reason="no system Graphviz `dot` on PATH")
def test_render_pdf_with_system_dot(tmp_path):
    path = tmp_path / "graph.pdf"
    r = run("render", ex("basics.py"), "-o", path)
    assert_exit(r, 0)
    assert path.read_bytes()[:5] == b"%PDF-"


def test_render_png(tmp_path):
    p1, p2 = tmp_path / "graph.png", tmp_path / "graph.img"
    r1, r2 = cu.run_many([["render", ex("basics.py"), "-o", p1],
                          ["render", ex("model.py"), "-o", p2, "--format", "png"]])
    for r, p in ((r1, p1), (r2, p2)):
        assert_exit(r, 0)
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_collects_the_users_reference_cycles_while_the_users_code_runs(tmp_path):
    """render keeps the collector from scanning gradtool's own long-lived objects, but the
    cycles the user's file makes, as it loads and as its target runs, are still collected
    then (each says so from a finalizer that does not run at exit)."""
    (tmp_path / "cycles.py").write_text(textwrap.dedent("""\
        import sys
        import weakref

        import gradtool


        class Cycle:
            def __init__(self, when):
                self.me = self
                weakref.finalize(self, print, "collected", when, file=sys.stderr).atexit = False


        def churn():  # enough new objects for the young generations' collections to run
            return [[] for _ in range(20_000)]


        Cycle("at import")
        churn()


        @gradtool.example((3,))
        def target(x):
            Cycle("in the forward")
            churn()
            return (x * 2).sum()
        """))
    r, path = _render(tmp_path, str(tmp_path / "cycles.py"), "g.html")
    assert_exit(r, 0)
    said = r.stderr.splitlines()
    wrote = next(i for i, line in enumerate(said) if line.startswith("wrote "))
    assert said[:wrote] == ["collected at import", "collected in the forward"], r
    assert path.stat().st_size > 0


def test_render_several_targets_keeps_them_apart(tmp_path):
    """Several targets in one drawing: each target's boxes stay its own, and user names that
    look like node ids are left as they are."""
    (tmp_path / "two_big.py").write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example((3,))
        def first(x):
            y = x
            for _ in range(200):
                y = y.sin() + y
            return y.sum()


        @gradtool.example((3,))
        def second(x):
            y = x
            for _ in range(200):
                y = y.cos() * y
            return y.sum()
        """))
    (tmp_path / "names.py").write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example((3,), (3,))
        def f(n1, out0):
            return (n1 * out0).sum()


        @gradtool.example((3,))
        def g(x):
            return x.exp().sum()
        """))
    big, names = cu.run_many([
        ["render", tmp_path / "two_big.py", "-o", tmp_path / "big.svg"],
        ["render", tmp_path / "names.py", "-o", tmp_path / "names.svg"],
    ])
    assert_exit(big, 0)
    _, nodes, _ = cu.parse_svg(tmp_path / "big.svg")
    text = " ".join(" ".join(n.texts) for n in nodes.values())
    # each target's loop (400 nodes, beyond a readable size) is grouped into its own box
    assert "two_big.py:8" in text and "two_big.py:16" in text, \
        f"one target's group box is missing (group ids collide across targets): {text}"
    assert_exit(names, 0)
    _, nodes, _ = cu.parse_svg(tmp_path / "names.svg")
    words = cu.all_svg_words(nodes)
    assert {"n1", "out0", "x"} <= words, words
    assert not [w for w in words if w.startswith("t0_") or w.startswith("t1_")], words


# ============================================================== 2. diagnostics of inspect

def _diags(target, code):
    return [d for d in target["diagnostics"] if d["kind"] == code]


def _assert_at(diag, path, line, cwd=REPO):
    """The diagnostic points at `path`:`line` (a relative path is relative to where gradtool
    ran)."""
    loc = diag["location"]
    assert loc, f"no location: {diag}"
    file, _, at = loc.rpartition(":")
    assert int(at) == line, f"{diag} should point at line {line}"
    assert os.path.samefile(os.path.join(cwd, file), path), f"{diag} should name {path}"


def test_inspect_grad_modes_diagnostics(sweep):
    path = os.path.join(EXAMPLES, "grad_modes.py")
    t = cu.check_inspect_document(sweep[("inspect", "--json", ex("grad_modes.py"))].json())

    [d] = _diags(t["scaled_under_no_grad"], "input_no_grad")
    assert "w" in d["message"].split() and d["severity"] == "warning"
    _assert_at(d, path, cu.source_line(path, "scale = (w * 2).sum()"))
    assert not _diags(t["scaled_under_no_grad"], "output_no_grad")

    no_grad_line = cu.source_line(path, "y = x.exp()")
    [d] = _diags(t["everything_under_no_grad"], "output_no_grad")
    assert "no_grad" in d["message"]
    _assert_at(d, path, no_grad_line)
    [d] = _diags(t["everything_under_no_grad"], "input_no_grad")
    _assert_at(d, path, no_grad_line)

    [d] = _diags(t["through_detach"], "output_no_grad")
    assert "detach" in d["message"]
    _assert_at(d, path, cu.source_line(path, "y = x.sin().detach()"))

    [d] = _diags(t["inference"], "output_no_grad")
    assert "inference" in d["message"]
    _assert_at(d, path, cu.source_line(path, "y = x * 3"))

    [d] = _diags(t["unused_input"], "input_no_grad")
    assert "w" in d["message"].split()
    assert not _diags(t["unused_input"], "output_no_grad")

    # the text report shows every diagnostic with its line of advice
    text = sweep[("inspect", "--strict", "--no-color", ex("grad_modes.py"))]
    flat = cu.flat(text.stdout)
    for target in t.values():
        for d in target["diagnostics"]:
            assert cu.flat(d["advice"]) in flat, d
            if d["location"]:
                assert d["location"] in flat, d


def test_inspect_inplace_trouble_diagnostics(sweep):
    path = os.path.join(EXAMPLES, "inplace_trouble.py")
    r = sweep[("inspect", "--json", ex("inplace_trouble.py"))]
    assert_exit(r, 1)  # backward fails: an error
    t = cu.check_inspect_document(r.json())
    line = cu.source_line(path, "y += 1")
    bad = t["overwrites_saved_output"]
    [d] = _diags(bad, "saved_modified_in_place")
    assert d["severity"] == "error"
    assert "ExpBackward0" in d["message"] and "_saved_result" in d["message"]
    _assert_at(d, path, line)
    [d] = _diags(bad, "backward_failed")
    assert d["severity"] == "error"
    assert f"inplace_trouble.py:{line}" in (d["location"] or "") + d["message"], d
    assert bad["backward_error"]
    # the saved value itself records the versions
    saved = [s for n in bad["graph"]["nodes"] for s in n["saved"] if s["modified"]]
    assert [(s["name"], s["version_saved"], s["version_now"]) for s in saved] == [
        ("_saved_result", 0, 1)]
    for name in ("out_of_place", "write_through_a_view"):
        assert t[name]["diagnostics"] == [], t[name]["diagnostics"]
        assert t[name]["backward_error"] is None
    assert any(n["name"] == "CopySlices" for n in t["write_through_a_view"]["graph"]["nodes"])


def test_inspect_strict(sweep):
    """Warnings (!) exit 1 only under --strict; errors (✗) always."""
    for name, strict, plain in (("grad_modes.py", 1, 0), ("inplace_trouble.py", 1, 1),
                                ("basics.py", 0, 0)):
        assert_exit(sweep[("inspect", "--strict", "--no-color", ex(name))], strict)
        assert_exit(sweep[("inspect", "--json", ex(name))], plain)


def test_inspect_text_report(sweep):
    r = sweep[("inspect", "--strict", "--no-color", ex("basics.py"))]
    assert_exit(r, 0)
    out = r.stdout
    for word in ("weighted_loss", "LegendrePolynomial3", "MulBackward0", "AccumulateGrad",
                 "_saved_self", "_saved_result", "72 B"):
        assert word in out, word
    # x feeds two nodes: drawn once, and marked as shared where it is met again
    x_lines = [line for line in out.splitlines() if "AccumulateGrad (x)" in line]
    assert len(x_lines) == 2 and sum("shared" in line for line in x_lines) == 1, x_lines


def test_inspect_other_diagnostics(tmp_path):
    user = tmp_path / "hazards.py"
    user.write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example(gradtool.tensor([-1.0, 2.0], dtype=gradtool.float64,
                                          requires_grad=True))
        def logs(x):
            y = x.log()
            return y.sum()


        @gradtool.example((3,))
        def reads_grad(x):
            h = x * 2
            out = h.sum()
            _ = h.grad
            return out


        @gradtool.example(gradtool.ones(3, dtype=gradtool.float32, requires_grad=True))
        def single(x):
            return (x * x).sum()
        """))
    r, strict = cu.run_many([["inspect", "--json", user], ["inspect", "--strict", user]],
                            cwd=tmp_path)
    assert_exit(r, 1)  # NaN in an output is an error
    assert_exit(strict, 1)
    t = cu.check_inspect_document(r.json())
    [d] = _diags(t["logs"], "non_finite_output")
    _assert_at(d, user, cu.source_line(user, "y = x.log()"), cwd=tmp_path)
    [d] = _diags(t["reads_grad"], "non_leaf_grad")
    _assert_at(d, user, cu.source_line(user, "_ = h.grad"), cwd=tmp_path)
    assert _diags(t["single"], "precision")


# ============================================================== 3. errors

def test_missing_file(tmp_path):
    missing = tmp_path / "nowhere.py"
    for r in cu.run_many([["inspect", missing], ["gradcheck", "--json", missing],
                          ["render", missing, "-o", tmp_path / "g.svg"]]):
        assert_clean_user_error(r, "nowhere.py")
    assert not (tmp_path / "g.svg").exists()


def test_syntax_error(tmp_path):
    user = tmp_path / "broken_syntax.py"
    user.write_text("import gradtool\n\n\ndef f(x):\n    return x *\n")
    for r in cu.run_many([["inspect", user], ["gradcheck", "--json", user],
                          ["render", user, "-o", tmp_path / "g.svg"]]):
        message = assert_clean_user_error(r, f"{user}:5")
        assert "syntax" in message.lower()
        assert "return x *" in r.stderr
    assert not (tmp_path / "g.svg").exists()


def test_import_that_raises_shows_the_users_frames_only(tmp_path):
    (tmp_path / "user_helpers.py").write_text(textwrap.dedent("""\
        def load_config():
            raise ValueError("config missing")
        """))
    user = tmp_path / "raises_on_import.py"
    user.write_text(textwrap.dedent("""\
        import gradtool
        import user_helpers

        CONFIG = user_helpers.load_config()


        def f(x):
            return x.sum()
        """))
    for r in cu.run_many([["inspect", user], ["gradcheck", "--json", user]]):
        message = assert_clean_user_error(r, "ValueError", "config missing",
                                          f"{tmp_path / 'user_helpers.py'}:2")
        assert "raises_on_import.py" in message
        # both user frames, in order, and nothing else
        frames = re.findall(r'File "([^"]+)", line (\d+)', r.stderr)
        assert frames == [(str(user), "4"), (str(tmp_path / "user_helpers.py"), "2")], frames


def test_import_that_exits(tmp_path):
    user = tmp_path / "exits_on_import.py"
    user.write_text("import sys\nsys.exit('bye')\n")
    assert_clean_user_error(run("inspect", user), f"{user}:2", "SystemExit")


def test_no_targets(tmp_path):
    user = tmp_path / "nothing_here.py"
    user.write_text(textwrap.dedent("""\
        from gradtool import exp  # imported, not defined here: not a target

        RATE = 0.1


        def _private(x):
            return x


        def main():
            return RATE
        """))
    for r in cu.run_many([["inspect", user], ["gradcheck", "--json", user],
                          ["render", user, "-o", tmp_path / "g.svg"]]):
        assert_clean_user_error(r, "No targets", "nothing_here.py")
    assert not (tmp_path / "g.svg").exists()


def test_target_that_raises(tmp_path):
    user = tmp_path / "target_raises.py"
    user.write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example((3,))
        def fine(x):
            return x.sum()


        @gradtool.example((3,))
        def explodes(x):
            y = x * 2
            raise RuntimeError("target exploded")


        @gradtool.example((3,))
        def bad_reshape(x):
            return x.reshape(5).sum()  # raised inside gradtool's engine
        """))
    out = tmp_path / "g.svg"
    out.write_text("<svg>an older drawing</svg>")
    runs = cu.run_many([["inspect", user], ["inspect", "--json", user],
                        ["gradcheck", "--json", user], ["gradcheck", user],
                        ["render", user, "-o", out],
                        ["inspect", f"{user}::bad_reshape"],
                        ["gradcheck", "--json", f"{user}::bad_reshape"]])
    inspect_text, inspect_json, gradcheck_json, gradcheck_text, render, *only = runs
    # every target is reported, the failing ones in their place, as pytest goes on
    for r in (inspect_text, inspect_json, gradcheck_json, gradcheck_text):
        cu.assert_target_error(r, "explodes", f"{user}:12", "RuntimeError",
                               "target exploded", "line 12, in explodes")
        cu.assert_target_error(r, "bad_reshape", f"{user}:17", "reshape")
    assert [t["error"] is None for t in inspect_json.json()["targets"]] == [True, False, False]
    doc = gradcheck_json.json()
    assert [t["passed"] for t in doc["targets"]] == [True, False, False]
    assert doc["passed"] is False
    assert "PASS" in gradcheck_text.stdout and "fine" in gradcheck_text.stdout
    # render draws all or nothing
    assert_clean_user_error(render, "explodes", f"{user}:12", "RuntimeError",
                            "target exploded")
    assert 'line 12, in explodes' in render.stderr
    for r in only:
        cu.assert_target_error(r, "bad_reshape", f"{user}:17", "reshape")
    assert out.read_text() == "<svg>an older drawing</svg>"  # nothing half-written
    assert sorted(os.listdir(tmp_path)) == ["g.svg", "target_raises.py"]


def test_target_that_calls_sys_exit(tmp_path):
    """SystemExit from a target is the user's code failing, like any other exception."""
    user = tmp_path / "target_exits.py"
    user.write_text(textwrap.dedent("""\
        import sys

        import gradtool


        @gradtool.example((3,))
        def quits(x):
            sys.exit(3)
        """))
    for r in cu.run_many([["inspect", user], ["gradcheck", "--json", user]]):
        cu.assert_target_error(r, "quits", f"{user}:8", "SystemExit")


def test_target_returning_no_tensor(tmp_path):
    user = tmp_path / "returns_none.py"
    user.write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example((3,))
        def forgot_return(x):
            x.sum()
        """))
    inspect, gradcheck, render = cu.run_many([["inspect", user], ["gradcheck", "--json", user],
                                              ["render", user, "-o", tmp_path / "g.svg"]])
    for r in (inspect, gradcheck):
        cu.assert_target_error(r, "forgot_return", "returns_none.py", "not a tensor")
    assert_clean_user_error(render, "forgot_return", "returns_none.py")


def test_unknown_target_name():
    r, partial = cu.run_many([["inspect", ex("basics.py::nope")],
                              ["gradcheck", "--json", ex("basics.py::weighted")]])
    assert_clean_user_error(r, "nope", "basics.py", "weighted_loss", "LegendrePolynomial3")
    assert_clean_user_error(partial, "weighted")


def test_bad_options_are_usage_errors(tmp_path):
    out = tmp_path / "g.gif"
    runs = cu.run_many([
        ["inspect", "--shape", "2,a", ex("basics.py")],
        ["gradcheck", "--json", "--shape", "2,a", ex("basics.py")],
        ["inspect", "--shape", "-1", ex("basics.py")],
        ["render", ex("basics.py"), "-o", out],
        ["render", ex("basics.py"), "-o", tmp_path / "g.svg", "--format", "gif"],
        ["render", ex("basics.py"), "-o", tmp_path / "g.svg", "--renderer", "cairo"],
        ["inspect", "--bogus", ex("basics.py")],
        ["gradcheck", "--order", "3", ex("basics.py")],
        ["inspect", "--seed", "abc", ex("basics.py")],
        ["render", ex("basics.py")],  # -o is required
        ["frobnicate", ex("basics.py")],
        ["render", ex("basics.py"), "-o", tmp_path / "no" / "such" / "dir" / "g.svg"],
    ])
    shape1, shape2, shape3, gif, gif2, renderer, bogus, order, seed, no_o, cmd, nodir = runs
    for r in (shape1, shape2):
        assert_clean_user_error(r, "--shape", "2,a")
    assert_clean_user_error(shape3, "--shape")
    for r in (gif, gif2):
        assert_clean_user_error(r, "--format", "gif", "svg")
    assert_clean_user_error(renderer, "--renderer", "cairo")
    assert_clean_user_error(bogus, "--bogus")
    assert_clean_user_error(order, "--order")
    assert_clean_user_error(seed, "--seed")
    assert_clean_user_error(no_o, "-o")
    assert_clean_user_error(cmd, "frobnicate")
    assert_clean_user_error(nodir, "cannot write")
    assert sorted(os.listdir(tmp_path)) == []


def test_a_directory_is_not_a_user_file(tmp_path):
    assert_clean_user_error(run("inspect", tmp_path), str(tmp_path))


# ============================================================== 4. options

def test_seed_makes_runs_reproducible(sweep):
    spec = ex("basics.py")
    a, ga = sweep[("inspect", "--json", spec)], sweep[("gradcheck", "--json", ex("model.py"))]
    b, c, gb = cu.run_many([
        ["inspect", "--json", "--seed", "0", spec], ["inspect", "--json", "--seed", "7", spec],
        ["gradcheck", "--json", "--seed", "0", ex("model.py")]])
    for r in (a, b, c, ga, gb):
        assert_exit(r, 0)
    assert a.stdout == b.stdout
    assert ga.stdout == gb.stdout
    da, dc = a.json(), c.json()
    assert (da["seed"], dc["seed"]) == (0, 7)

    def stats(doc):
        return [(s["name"], s["min"], s["mean"], s["max"]) for n in
                doc["targets"][0]["graph"]["nodes"] for s in n["saved"] if s["is_tensor"]]

    def grad_norms(doc):
        return sorted((n["leaf"]["name"], n["leaf"]["grad_norm"]) for n in
                      doc["targets"][0]["graph"]["nodes"] if n["kind"] == "leaf")
    assert [s[0] for s in stats(da)] == [s[0] for s in stats(dc)]
    assert stats(da) != stats(dc)
    assert grad_norms(da) != grad_norms(dc)


def test_shape_shapes_generated_inputs():
    text, js, gc = cu.run_many([
        ["inspect", "--no-color", "--shape", "2,3", ex("basics.py::LegendrePolynomial3")],
        ["inspect", "--json", "--shape", "2,3", ex("basics.py")],
        ["gradcheck", "--json", "--shape", "2,3", ex("basics.py::LegendrePolynomial3")]])
    assert_exit(text, 0)
    assert "float64[2, 3]" in text.stdout
    doc = js.json()
    assert doc["shape"] == [2, 3]
    t = cu.check_inspect_document(doc)
    # generated inputs (a custom Function's) take --shape; @example shapes are the example's
    assert [i["shape"] for i in t["LegendrePolynomial3"]["inputs"]] == [[2, 3]]
    assert [i["shape"] for i in t["weighted_loss"]["inputs"]] == [[3], [3]]
    assert [n["leaf"]["shape"] for n in t["LegendrePolynomial3"]["graph"]["nodes"]
            if n["kind"] == "leaf"] == [[2, 3]]
    assert_exit(gc, 0)
    assert gc.json()["targets"][0]["reports"][-1]["inputs"][0]["shape"] == [2, 3]


def test_file_name_selects_targets(tmp_path):
    user = tmp_path / "several.py"
    user.write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example((2,))
        @gradtool.example((4,))
        def f(x):
            return (x * x).sum()


        def g(a, b):
            return (a * b).sum()


        class Twice(gradtool.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
        """))
    every, f, f1, g, twice, gc = cu.run_many([
        ["inspect", "--json", user], ["inspect", "--json", f"{user}::f"],
        ["inspect", "--json", f"{user}::f[1]"], ["inspect", "--json", f"{user}::g"],
        ["inspect", "--json", f"{user}::Twice"], ["gradcheck", "--json", f"{user}::f"]])

    def shapes(r):
        assert_exit(r, 0)
        t = cu.check_inspect_document(r.json())
        return {name: [i["shape"] for i in x["inputs"]] for name, x in t.items()}
    assert list(shapes(every)) == ["f[0]", "f[1]", "g", "Twice"]  # source order
    assert shapes(f) == {"f[0]": [[2]], "f[1]": [[4]]}
    assert shapes(f1) == {"f[1]": [[4]]}
    assert shapes(g) == {"g": [[3], [3]]}
    assert shapes(twice) == {"Twice": [[3]]}
    assert_exit(gc, 0)
    assert [t["name"] for t in gc.json()["targets"]] == ["f[0]", "f[1]"]


def test_order_2_and_fast():
    o2, fast_ok, fast_bad = cu.run_many([
        ["gradcheck", "--json", "--order", "2", ex("higher_order.py")],
        ["gradcheck", "--json", "--fast", ex("basics.py")],
        ["gradcheck", "--json", "--fast", ex("broken_wrong_gradient.py")]])
    assert_exit(o2, 0)
    assert [t["reports"][-1]["order"] for t in o2.json()["targets"]] == [2, 2]
    assert_exit(fast_ok, 0)
    assert all(t["reports"][-1]["options"]["fast_mode"] for t in fast_ok.json()["targets"])
    assert all(t["reports"][-1]["mode"] == "fast" for t in fast_ok.json()["targets"])
    assert_exit(fast_bad, 1)
    assert "wrong_gradient" in {d["kind"] for t in fast_bad.json()["targets"]
                                for d in t["reports"][-1]["diagnoses"]}


def test_eps_atol_rtol_are_honoured(sweep):
    f32, wrong, ok = ex("broken_float32.py"), ex("broken_wrong_gradient.py"), \
        ex("wrong_gradient_ok.py")
    default = sweep[("gradcheck", "--json", f32)]           # float32 noise: fails
    runs = cu.run_many([
        ["gradcheck", "--json", "--eps", "1e-3", f32],       # a step suited to float32
        ["gradcheck", "--json", "--atol", "1e-2", f32],      # a tolerance suited to float32
        ["gradcheck", "--json", "--atol", "1e-2", wrong],    # a wrong formula stays wrong
        ["gradcheck", "--json", "--rtol", "0.5", wrong],     # ... unless 50% is tolerated
        ["gradcheck", "--json", "--atol", "0", "--rtol", "0", ok],  # no room for rounding
    ])
    eps, atol, wrong_atol, wrong_rtol, exact = runs
    assert_exit(default, 1)
    assert_exit(eps, 0)
    assert_exit(atol, 0)
    assert_exit(wrong_atol, 1)
    assert_exit(wrong_rtol, 0)
    assert_exit(exact, 1)

    def options(r):
        return r.json()["targets"][0]["reports"][-1]["options"]
    assert options(default)["eps"] == 1e-6
    assert options(eps)["eps"] == 1e-3
    assert options(atol)["atol"] == 1e-2
    assert options(wrong_rtol)["rtol"] == 0.5
    assert (options(exact)["atol"], options(exact)["rtol"]) == (0, 0)
    # with the tolerances honoured, float32's result is a warning, not a failure
    assert {d["severity"] for t in atol.json()["targets"] for d in t["reports"][-1]["diagnoses"]
            if d["kind"] == "precision"} <= {"warning", "info"}


def test_no_color_means_no_escape_codes(tmp_path):
    """--no-color gives plain text even where the terminal would take colours
    (FORCE_COLOR stands in for a terminal)."""
    tty = {"FORCE_COLOR": "1"}
    colored, plain, plain_gc, plain_err, render_plain = cu.run_many([
        ["inspect", ex("grad_modes.py")],
        ["inspect", "--no-color", ex("grad_modes.py")],
        ["gradcheck", "--no-color", ex("broken_wrong_gradient.py")],
        ["inspect", "--no-color", tmp_path / "missing.py"],
        ["render", "--no-color", ex("basics.py"), "-o", tmp_path / "g.svg"],
    ], extra_env=tty)
    assert_exit(colored, 0)
    assert cu.ANSI.search(colored.stdout), "FORCE_COLOR should have given colours"
    for r, code in ((plain, 0), (plain_gc, 1), (plain_err, 2), (render_plain, 0)):
        assert_exit(r, code)
        assert not cu.ANSI.search(r.stdout), f"escape codes on stdout\n{r}"
        assert not cu.ANSI.search(r.stderr), f"escape codes on stderr\n{r}"


def test_json_stdout_is_only_the_document(tmp_path):
    """What the user's code prints must not end up inside the --json document."""
    user = tmp_path / "chatty.py"
    user.write_text(textwrap.dedent("""\
        import gradtool

        print("loading chatty")


        @gradtool.example((3,))
        def f(x):
            print("f called")
            return (x * 2).sum()
        """))
    for r in cu.run_many([["inspect", "--json", user], ["gradcheck", "--json", user]]):
        assert_exit(r, 0)
        assert r.json()["targets"][0]["name"] == "f"


def test_progress_bar_for_long_checks(tmp_path):
    user = tmp_path / "long_check.py"
    user.write_text("def f(x):\n    return (x.sin() * x).sum()\n")
    text, js = cu.run_many([["gradcheck", "--shape", "300", user],
                            ["gradcheck", "--json", "--shape", "300", user]],
                           extra_env={"FORCE_COLOR": "1"})
    assert_exit(text, 0)
    assert "601 evaluations" in text.stderr  # the bar lives on stderr ...
    assert_exit(js, 0)
    assert js.json()["passed"] is True       # ... and never in the JSON


def test_version_and_python_m(sweep):
    import importlib.metadata
    version = importlib.metadata.version("gradtool")
    r = run("--version")
    assert_exit(r, 0)
    assert r.stdout.strip() == f"gradtool {version}"
    installed = sweep[("inspect", "--json", ex("basics.py"))]
    assert_exit(installed, 0)
    via_m = run("-m", "gradtool", "inspect", "--json", ex("basics.py"), executable=sys.executable)
    assert_exit(via_m, 0)
    assert via_m.stdout == installed.stdout


HELP = {
    None: ["--version", "--help", "inspect", "gradcheck", "render"],
    "inspect": ["--seed", "--shape", "--json", "--no-color", "--strict", "--help",
                "--timeout", "--all-saved", "--max-depth", "PATH", "--jobs"],
    "gradcheck": ["--eps", "--atol", "--rtol", "--fast", "--order", "--strict", "--seed",
                  "--shape", "--json", "--no-color", "--timeout", "--help", "PATH", "--jobs"],
    "render": ["--output", "-o", "--format", "--renderer", "--show-saved", "--expand",
               "--seed", "--shape", "--no-color", "--help", "FILE[::NAME]"],
}


def test_help_lists_every_option():
    cmds = [[c, "--help"] if c else ["--help"] for c in HELP] + [["inspect", "-h"]]
    results = cu.run_many(cmds)
    for (cmd, words), r in zip(HELP.items(), results):
        assert_exit(r, 0)
        assert r.stderr == ""
        for w in words:
            assert re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", r.stdout), \
                f"`gradtool {cmd or ''} --help` does not list {w}\n{r.stdout}"
    assert_exit(results[-1], 0)
    assert "--strict" in results[-1].stdout


# ============================================================== 5. scale

def test_render_100k_op_chain(chain_100k):
    proc, user, out = chain_100k
    stdout, stderr = proc.communicate(timeout=600)
    r = cu.Result(["render", str(user), "-o", str(out)], proc.returncode, stdout, stderr)
    assert_exit(r, 0)
    assert "RecursionError" not in r.stderr and "recursion" not in r.stderr.lower()
    _, nodes, _ = cu.parse_svg(out)
    words = cu.all_svg_words(nodes)
    assert "x" in words and "AccumulateGrad" in words
    assert len(nodes) < 200  # grouped, not 100,000 boxes
    text = " ".join(" ".join(n.texts) for n in nodes.values())
    assert "MulBackward0" in text


def test_inspect_json_of_a_100k_op_chain(chain_100k_json):
    """The whole document, valid, within 1 GiB (it was 1.59 GiB, then 0.91 GiB): a 100,000-node
    graph must not hold its document in memory."""
    proc, document, stderr = chain_100k_json
    _, status, usage = os.wait4(proc.pid, 0)  # (its own peak memory, not the other children's)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, stderr.read_text()
    assert stderr.read_text() == ""
    assert usage.ru_maxrss < 1 << 20, f"peak memory {usage.ru_maxrss / 1024:.0f} MB"  # (KB)
    text = document.read_text()
    doc = json.loads(text)
    target = cu.check_inspect_document(doc)["chain"]
    nodes = target["graph"]["nodes"]
    assert len(nodes) == 100_002  # the sum, 100,000 muls, x's AccumulateGrad
    assert [n["name"] for n in nodes[:2]] == ["SumBackward0", "MulBackward0"]
    assert all(n["name"] == "MulBackward0" and n["site"] == "long_chain.py:8"
               and n["next_functions"][0]["node"] == f"n{i + 1}" for i, n in
               enumerate(nodes[1:-1], start=1))
    assert nodes[50_000]["saved"][0] == {
        "name": "_saved_other", "is_tensor": False, "state": "live", "shape": None,
        "dtype": None, "is_output": False, "version_saved": None, "version_now": None,
        "modified_at": None, "nbytes": 0, "min": None, "mean": None, "max": None,
        "value": "1.0000001", "modified": False}
    leaf = nodes[-1]
    assert leaf["kind"] == "leaf" and leaf["label"] == "x"
    assert leaf["leaf"]["grad_finite"] and leaf["leaf"]["grad_norm"] > 0
    assert text.count("\n") < 100_100  # one line per node


def test_render_5000_node_graphs(tmp_path):
    (tmp_path / "tangled.py").write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example((4,))
        def tangled(x):
            ys = [x]
            for i in range(1700):
                a = ys[-1]
                b = ys[max(0, len(ys) - 7)]
                ys.append(a * 0.5 + b * 0.5)
            return ys[-1].sum()
        """))
    (tmp_path / "chain5k.py").write_text(textwrap.dedent("""\
        import gradtool


        @gradtool.example((2,))
        def chain(x):
            y = x
            for _ in range(5000):
                y = y * 1.0000001
            return y.sum()
        """))
    tangled, expanded = cu.run_many([
        ["render", tmp_path / "tangled.py", "-o", tmp_path / "tangled.svg"],
        ["render", tmp_path / "chain5k.py", "-o", tmp_path / "chain.svg", "--expand"]],
        timeout=600)
    assert_exit(tangled, 0)  # 1,700 x 3 ops + the sum + the leaf: 5,102 graph nodes
    _, nodes, _ = cu.parse_svg(tmp_path / "tangled.svg")
    assert "x" in cu.all_svg_words(nodes)
    assert_exit(expanded, 0)
    _, nodes, _ = cu.parse_svg(tmp_path / "chain.svg")
    assert len(nodes) >= 5000  # --expand draws every node
    assert sum("MulBackward0" in n.words for n in nodes.values()) == 5000


# ============================================================== 6. start-up

# in test_start.py (quick, so in the default suite): what --help and argument parsing import


# ============================================================== forward mode (--mode)

def _ad_modes(doc):
    return {(t["name"], p["ad"], p["passed"]) for t in doc["targets"]
            for report in t["reports"] for p in report["pairs"]}


def test_gradcheck_mode_names_the_mode_that_disagrees(sweep):
    """broken_jvp.py: right backward, wrong jvp. By default (a Function with a jvp) both are
    checked and only the jvp rows fail; --mode reverse passes; --mode forward fails."""
    default = sweep[("gradcheck", "--json", ex("broken_jvp.py"))]
    assert_exit(default, 1)
    assert _ad_modes(default.json()) == {("Cube", "reverse", True), ("Cube", "forward", False)}
    report = default.json()["targets"][0]["reports"][0]
    assert report["failures"][0]["message"].startswith(
        "Jacobian computed with forward mode mismatch for output 0 with respect to input 0")
    assert_exit(sweep[("gradcheck", "--json", "--mode", "reverse", ex("broken_jvp.py"))], 0)
    forward = sweep[("gradcheck", "--json", "--mode", "forward", ex("broken_jvp.py"))]
    assert_exit(forward, 1)
    assert _ad_modes(forward.json()) == {("Cube", "forward", False)}
    both = sweep[("gradcheck", "--json", "--mode", "both", ex("broken_jvp.py"))]
    assert _ad_modes(both.json()) == _ad_modes(default.json())
    text_out = sweep[("gradcheck", "--no-color", ex("broken_jvp.py"))]
    assert_exit(text_out, 1)
    assert "output 0 (jvp)" in text_out.stdout and "output 0 (backward)" in text_out.stdout
    assert "Jacobian (forward mode: jvp) of output 0" in text_out.stdout


def test_gradcheck_forward_mode_on_plain_functions_and_second_order(sweep):
    """Every op a model uses has a jvp: --mode forward passes on model.py (its parameters,
    which the module reads in place, get their tangents too), and --order 2
    --mode both checks forward-over-reverse (check_fwd_over_rev)."""
    r = sweep[("gradcheck", "--json", "--mode", "forward", ex("model.py"))]
    assert_exit(r, 0)
    assert {ad for _, ad, _ in _ad_modes(r.json())} == {"forward"}
    r2 = sweep[("gradcheck", "--json", "--mode", "both", "--order", "2", ex("higher_order.py"))]
    assert_exit(r2, 0)
    assert {ad for _, ad, _ in _ad_modes(r2.json())} == {"forward", "reverse"}


def test_gradcheck_forward_mode_on_a_function_without_jvp_names_it(sweep):
    """basics.py has a custom Function without jvp: --mode forward cannot check it, and says
    so for that target (exit 2, the Function and its line named), the others still checked;
    --mode both checks its backward and notes that the jvp is missing (exit 0)."""
    r = sweep[("gradcheck", "--json", "--mode", "forward", ex("basics.py"))]
    assert_exit(r, 2)
    targets = {t["name"]: t for t in r.json()["targets"]}
    error = targets["LegendrePolynomial3"]["error"]
    assert "LegendrePolynomial3 defines no jvp" in error["message"]
    assert "--mode reverse" in error["message"] and "backward raised" not in error["message"]
    assert error["location"].endswith("basics.py:18")
    assert targets["weighted_loss"]["passed"]
    both = sweep[("gradcheck", "--json", "--mode", "both", ex("basics.py"))]
    assert_exit(both, 0)
    target = {t["name"]: t for t in both.json()["targets"]}["LegendrePolynomial3"]
    [report] = target["reports"]
    assert {p["ad"] for p in report["pairs"]} == {"reverse"}
    [note] = [d for d in report["diagnoses"] if d["kind"] == "no_jvp"]
    assert note["severity"] == "info" and note["location"].endswith("basics.py:18")


def test_gradcheck_mode_rejects_an_unknown_mode():
    r = run("gradcheck", "--mode", "sideways", ex("jvp_ok.py"))
    assert_exit(r, 2)
    assert "sideways" in r.stderr


def test_inspect_shows_the_tangent_of_a_dual_output(sweep):
    """jvp_ok.py's directional_derivative returns a dual tensor: inspect reports its tangent
    (shape, dtype, norm) next to the output; outputs of other targets have none."""
    r = sweep[("inspect", "--json", ex("jvp_ok.py"))]
    assert_exit(r, 0)
    targets = {t["name"]: t for t in r.json()["targets"]}
    (out,) = targets["directional_derivative"]["graph"]["outputs"]
    assert out["tangent"]["shape"] == [3] and out["tangent"]["dtype"] == "float64"
    assert out["tangent"]["norm"] > 0
    assert targets["Cube"]["graph"]["outputs"][0]["tangent"] is None
    text_out = run("inspect", "--no-color", ex("jvp_ok.py") + "::directional_derivative")
    assert_exit(text_out, 0)
    assert "tangent" in text_out.stdout and "|t|=" in text_out.stdout
