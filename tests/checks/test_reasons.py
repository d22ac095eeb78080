"""Where a gradient goes wrong and why, through the `gradtool` command as a user runs it: the wrong
custom Function named inside a model (text, JSON, SVG), true reasons (random forward,
non-reentrant backward, surrogate gradients declared or not), None gradients judged by central
differences, input specs and per-parameter shapes, --against with a raising backward. Every
command runs once, all at once (`runs`)."""
import os
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cli_util as cu
from cli_util import assert_exit

FILES = {
    "ste_model.py": """\
        import gradtool
        import gradtool as torch
        from gradtool import nn


        @gradtool.surrogate("straight_through")
        class Declared(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.sign(x)

            @staticmethod
            def backward(ctx, g):
                return g


        class Undeclared(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.sign(x)

            @staticmethod
            def backward(ctx, g):
                return g


        torch.manual_seed(0)
        layer = nn.Linear(3, 2).double()


        @gradtool.example((2, 3))
        def declared(x):
            return (Declared.apply(layer(x)) * layer(x)).sum()


        @gradtool.example((2, 3))
        def undeclared(x):
            return (Undeclared.apply(layer(x)) * layer(x)).sum()
        """,
    "composed.py": """\
        import gradtool
        import gradtool as torch


        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2


        @gradtool.example(torch.tensor([0.0, 1.0, -2.0], dtype=torch.float64,
                                       requires_grad=True))
        def at_a_kink(x):
            return Double.apply(x).relu().sum()
        """,
    "nones.py": """\
        import gradtool
        import gradtool as torch


        @gradtool.example((3,), (3,))
        class IgnoresW(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None


        class BinaryQuantize(torch.autograd.Function):   # IR-Net's: k and t are numbers
            @staticmethod
            def forward(ctx, input, k, t):
                ctx.save_for_backward(input, k, t)
                return torch.sign(input)

            @staticmethod
            def backward(ctx, grad_output):
                input, k, t = ctx.saved_tensors
                return k * t * (1 - torch.tanh(input * t) ** 2) * grad_output, None, None
        """,
    "specs.py": """\
        import gradtool
        import gradtool as torch


        @gradtool.example(gradtool.positive((4,)), gradtool.uniform((2, 2), -1, 1),
                          gradtool.integers((3,), 4), gradtool.constant(2.5),
                          gradtool.no_grad((2,)))
        def uses_specs(x, u, idx, c, fixed):
            return x.log().sum() * c + (u * u).sum() + fixed.sum() + idx.sum()


        def pair(x, w):
            return (x @ w).sum()


        @gradtool.example(gradtool.positive((5,)))
        def relu_of_positive(x):
            return torch.relu(x).sum()
        """,
    "identity_layers.py": """\
        import gradtool as torch


        class ClipGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g.clamp(-0.5, 0.5)


        class WrongFactor(torch.autograd.Function):   # a wrong formula, not a scaling layer
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, g):
                x = g * 0 + 1
                return g * 3 * x
        """,
    "raising.py": """\
        import torch


        class Fine(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2


        class Raises(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def backward(ctx, g):
                raise ValueError("backward is broken here")
        """,
    "torch_ste.py": """\
        import torch


        class BinarySTE(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return torch.sign(x)

            @staticmethod
            def backward(ctx, g):
                return g


        class GradReverse(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return -0.5 * g
        """,
}

EX = "examples/"
COMMANDS = {
    "model": ("gradcheck", "--no-color", EX + "broken_model_function.py::loss"),
    "model_json": ("gradcheck", "--json", EX + "broken_model_function.py::loss"),
    "model_all": ("gradcheck", "--json", "--localize", "all",
                  EX + "broken_model_function.py::loss"),
    "model_ok": ("gradcheck", "--json", EX + "model_function_ok.py"),
    "model_inspect": ("inspect", "--json", EX + "broken_model_function.py::loss"),
    "model_svg": ("render", EX + "broken_model_function.py::loss", "-o", "{tmp}/model.svg"),
    "reentrant": ("gradcheck", "--json", EX + "broken_not_reentrant.py"),
    "random": ("gradcheck", "--json", EX + "broken_random_forward.py"),
    "ste": ("gradcheck", "--json", EX + "broken_straight_through.py"),
    "ste_ok": ("gradcheck", "--json", EX + "straight_through_ok.py"),
    "ste_inspect": ("inspect", "--json", EX + "broken_straight_through.py"),
    "reversal": ("gradcheck", "--json", EX + "broken_gradient_reversal.py"),
    "reversal_ok": ("gradcheck", "--no-color", EX + "gradient_reversal_ok.py"),
    "ste_model": ("gradcheck", "--json", "{tmp}/ste_model.py"),
    "composed": ("gradcheck", "--json", "{tmp}/composed.py::at_a_kink"),
    "ignores_w": ("gradcheck", "--json", "{tmp}/nones.py::IgnoresW"),
    "binary_quantize": ("gradcheck", "--no-color", "{tmp}/nones.py::BinaryQuantize"),
    "specs": ("inspect", "--json", "{tmp}/specs.py::uses_specs"),
    "specs_check": ("gradcheck", "--json", "{tmp}/specs.py::uses_specs"),
    "pair_shapes": ("gradcheck", "--json", "--shape", "x=2,3", "--shape", "w=3",
                    "{tmp}/specs.py::pair"),
    "pair_bad": ("gradcheck", "--no-color", "--shape", "4", "--shape", "w=3",
                 "{tmp}/specs.py::pair"),
    "one_branch": ("gradcheck", "--json", "{tmp}/specs.py::relu_of_positive"),
    "identity_layers": ("gradcheck", "--json", "{tmp}/identity_layers.py"),
}
TORCH_COMMANDS = {
    "against_raising": ("gradcheck", "--against", "torch", "--json", "{tmp}/raising.py"),
    "torch_ste": ("gradcheck", "--engine", "torch", "--json", "{tmp}/torch_ste.py"),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder holding FILES, for the commands of both fixtures below."""
    tmp = tmp_path_factory.mktemp("reasons")
    for name, source in FILES.items():
        (tmp / name).write_text(textwrap.dedent(source))
    return tmp


def _run_all(commands, tmp):
    keys = list(commands)
    results = cu.run_many([[a.format(tmp=tmp) for a in commands[k]] for k in keys])
    return dict(zip(keys, results), tmp=tmp)


@pytest.fixture(scope="module")
def runs(folder):
    return _run_all(COMMANDS, folder)


@pytest.fixture(scope="module")
def torch_runs(folder):
    """The torch commands apart: `make parity` runs only the tests that use them, and so none
    of COMMANDS' two dozen processes, which `make test` runs."""
    pytest.importorskip("torch")
    return _run_all(TORCH_COMMANDS, folder)


def diagnoses(doc, target=None):
    return [d for t in doc["targets"] if target in (None, t["name"])
            for rep in t["reports"] for d in rep["diagnoses"]]


def by_kind(doc, kind, target=None):
    found = [d for d in diagnoses(doc, target) if d["kind"] == kind]
    assert found, f"no {kind} in {[d['kind'] for d in diagnoses(doc, target)]}"
    return found[0]


# ------------------------------------------------------------------ localisation
def test_wrong_function_in_a_model_is_named_in_text(runs):
    r = runs["model"]
    assert_exit(r, 1)
    text = cu.flat(r.stdout)
    assert ("first wrong node in backward order: n2 SoftsignBackward (Softsign.apply at "
            "examples/broken_model_function.py:42 in model.3)") in text, text
    # one paragraph naming the node, not one wrong_gradient paragraph per parameter
    assert "wrong_gradient: the analytical" not in text.split("wrong_node")[0]
    assert text.count("✗ wrong_node") == 1


def test_wrong_function_in_a_model_is_in_the_json(runs):
    doc = runs["model_json"].json()
    report = doc["targets"][0]["reports"][0]
    located = report["localized"]
    assert located["node"] == "n2" and located["function"] == "Softsign"
    assert located["module"] == "model.3"
    assert located["location"] == "examples/broken_model_function.py:42"
    node_report = located["report"]
    assert node_report["passed"] is False
    (pair,) = node_report["pairs"]
    # the node's own Jacobian: Softsign' = 1 / (1 + |x|)^2 numerically, 1 / (1 + |x|) claimed
    n, a = np.array(pair["numerical"]), np.array(pair["analytical"])
    x = np.sqrt(np.diag(n) ** -1) - 1  # |x| from the true derivative
    assert np.allclose(np.diag(a), 1 / (1 + x), rtol=1e-5)
    assert {d["kind"] for d in report["diagnoses"]} >= {"wrong_node"}
    assert "wrong_gradient" not in {d["kind"] for d in report["diagnoses"]}


def test_localize_all_checks_built_in_nodes_too_and_still_names_the_wrong_function(runs):
    custom = runs["model_json"].json()["targets"][0]["reports"][0]["localized"]
    located = runs["model_all"].json()["targets"][0]["reports"][0]["localized"]
    assert located["node"] == "n2" and located["function"] == "Softsign"
    assert located["checked"] > custom["checked"]  # the built-in nodes before it, too


def test_localize_all_names_a_wrong_built_in_node_and_the_line_that_called_it(tmp_path,
                                                                            monkeypatch):
    """A row whose formula is wrong (planted here: sin's derivative scaled by 1.5) is found
    among the ops of a target by --localize all, with the op's name and the user's line."""
    import gradtool.adapters as engines
    from gradtool.engine.autograd.ops import derivatives as table
    from gradtool.checks.target import check_target
    from gradtool.capture.loader import load
    (tmp_path / "ops.py").write_text(textwrap.dedent("""\
        import gradtool as torch

        def loss(x):
            y = torch.tanh(x) * 2
            z = torch.sin(y)
            return (z * z).sum()
        """))
    (fn, params), = table.SIN.formula_list
    wrong = ((lambda grad, self: fn(grad, self) * 1.5), params)
    monkeypatch.setattr(table.SIN, "formula_list", (wrong,))
    monkeypatch.setattr(table.SIN, "grad_first", ((wrong[0], params[1:]),))
    target, = load(str(tmp_path / "ops.py"))
    with engines.use("gradtool"):
        report = check_target(target, 0, (3,), localize="all").reports[0]
    assert not report.passed
    located = report.localized
    assert located.name == "SinBackward0" and located.function == "sin", located
    assert located.location.endswith("ops.py:5"), located.location
    assert [d.kind for d in report.diagnoses][0] == "wrong_node"


def test_localize_all_on_torch_is_refused_before_anything_runs():
    r = cu.run("gradcheck", "--engine", "torch", "--localize", "all",
               EX + "broken_model_function.py::loss")
    assert_exit(r, 2)
    assert "--localize all" in cu.flat(r.stderr) and "--localize custom" in cu.flat(r.stderr)


def test_fixed_model_passes_without_localisation(runs):
    r = runs["model_ok"]
    assert_exit(r, 0)
    for t in r.json()["targets"]:
        assert t["reports"][0]["localized"] is None


def test_inspect_marks_the_wrong_node(runs):
    r = runs["model_inspect"]
    assert_exit(r, 1)  # a wrong backward is an error diagnostic
    (t,) = r.json()["targets"]
    problems = {n["id"]: n["problem"] for n in t["graph"]["nodes"] if n["problem"]}
    assert list(problems) == ["n2"] and "Softsign" in problems["n2"]
    assert t["diagnostics"][0]["kind"] == "wrong_node"


def test_render_draws_the_wrong_node_red(runs):
    assert_exit(runs["model_svg"], 0)
    root = ET.parse(runs["tmp"] / "model.svg").getroot()
    wrong = [g for g in root.iter(cu.SVG_NS + "g") if g.get("class") == "node" and any(
        "Softsign.backward is wrong" in (t.text or "") for t in g.iter(cu.SVG_NS + "text"))]
    assert len(wrong) == 1
    FAIL_COLOR = "#cd0000"  # dot.FAIL_COLOR, red3, as Graphviz writes it in SVG
    shapes = [s for s in wrong[0].iter() if s.tag in (cu.SVG_NS + "polygon", cu.SVG_NS + "path")]
    assert shapes and all(s.get("stroke") == FAIL_COLOR for s in shapes)
    others = [g for g in root.iter(cu.SVG_NS + "g") if g.get("class") == "node" and g not in wrong]
    assert not any(s.get("stroke") == FAIL_COLOR for g in others for s in g.iter())


def test_every_custom_function_passing_says_so(runs):
    doc = runs["composed"].json()
    assert doc["passed"] is False
    d = by_kind(doc, "custom_functions_pass")
    assert d["details"]["checked"] == 1
    assert doc["targets"][0]["reports"][0]["localized"]["node"] is None
    by_kind(doc, "non_differentiable_point")  # abs at 0: the true cause


# ------------------------------------------------------------------ true reasons
def test_non_reentrant_backward_names_the_in_place_line(runs):
    r = runs["reentrant"]
    assert_exit(r, 1)
    d = by_kind(r.json(), "backward_not_reentrant")
    assert d["severity"] == "error"
    assert d["location"] == "examples/broken_not_reentrant.py:21"
    assert "ctx.grad" in d["message"] and "the formula is right" in d["message"]
    assert "wrong_gradient" not in {x["kind"] for x in diagnoses(r.json())}


def test_random_forward_names_the_line_that_draws(runs):
    r = runs["random"]
    assert_exit(r, 1)
    doc = r.json()
    d = by_kind(doc, "random_forward")
    assert d["location"] == "examples/broken_random_forward.py:13"
    assert d["advice"].startswith("fix the seed")
    assert {x["kind"] for x in diagnoses(doc) if x["severity"] == "error"} == {"random_forward"}


def test_undeclared_straight_through_fails_saying_so(runs):
    r = runs["ste"]
    assert_exit(r, 1)
    d = by_kind(r.json(), "surrogate_gradient")
    assert d["details"]["pattern"] == "straight_through"
    assert '@gradtool.surrogate("straight_through")' in d["message"]
    assert d["location"] == "examples/broken_straight_through.py:11"


def test_inspect_flags_a_function_target_without_blaming_gradtools_frames(runs):
    r = runs["ste_inspect"]
    assert_exit(r, 1)
    # the surrogate localisation found is the finding (not a wrong node to fix), at the
    # user's class: gradtool made the call, and no line of gradtool's is named
    (d,) = [d for d in r.json()["targets"][0]["diagnostics"] if d["severity"] == "error"]
    assert d["kind"] == "surrogate_gradient" and d["details"]["node"]
    assert d["location"] == "examples/broken_straight_through.py:11"


def test_declared_straight_through_passes_as_declared(runs):
    r = runs["ste_ok"]
    assert_exit(r, 0)
    report = r.json()["targets"][0]["reports"][0]
    assert report["declared"] == "BinarySTE: straight-through: the gradient of the identity"
    (pair,) = report["pairs"]
    assert np.allclose(pair["numerical"], np.eye(3))  # the identity's Jacobian, not 0


def test_undeclared_reversal_names_the_constant(runs):
    r = runs["reversal"]
    assert_exit(r, 1)
    d = by_kind(r.json(), "surrogate_gradient")
    assert (d["details"]["pattern"], d["details"]["value"]) == ("scaled", -0.5)
    assert '@gradtool.surrogate("scaled", -0.5)' in d["message"]


def test_clipping_is_told_from_scaling_and_a_wrong_factor_stays_wrong(runs):
    doc = runs["identity_layers"].json()
    clip = by_kind(doc, "surrogate_gradient", "ClipGrad")["details"]
    assert (clip["pattern"], clip["value"]) == ("clipped", 0.5)
    kinds = {d["kind"] for d in diagnoses(doc, "WrongFactor") if d["severity"] == "error"}
    assert kinds == {"wrong_gradient"}


def test_declared_reversal_passes(runs):
    r = runs["reversal_ok"]
    assert_exit(r, 0)
    assert ("checked against the declared surrogate gradient (GradReverse: -0.5 x the true "
            "gradient)") in cu.flat(r.stdout)


def test_declared_surrogate_inside_a_model_is_checked_as_declared(runs):
    doc = runs["ste_model"].json()
    results = {t["name"]: t for t in doc["targets"]}
    assert results["declared"]["passed"] is True, results["declared"]
    assert "Declared: straight-through" in results["declared"]["reports"][0]["declared"]
    undeclared = results["undeclared"]
    assert undeclared["passed"] is False
    located = undeclared["reports"][0]["localized"]
    assert located["function"] == "Undeclared"
    assert "surrogate_gradient" in {d["kind"] for d in located["report"]["diagnoses"]}


def test_none_gradient_that_is_right_is_not_an_error(runs):
    r = runs["ignores_w"]
    assert_exit(r, 0)
    d = by_kind(r.json(), "grad_none_for_input")
    assert d["severity"] == "info" and d["details"]["numerical_max"] == 0


def test_function_on_numbers_asks_for_an_example(runs):
    r = runs["binary_quantize"]
    assert_exit(r, 2)
    text = cu.flat(r.stdout + r.stderr)
    assert "BinaryQuantize.backward returns None for `k`" in text
    assert "@gradtool.example((3,), 2.0, (3,)) on BinaryQuantize" in text


# ------------------------------------------------------------------ inputs that fit
def test_example_specs_make_the_inputs_asked_for(runs):
    r = runs["specs"]
    assert_exit(r, 0)
    inputs = {i["name"]: i for i in r.json()["targets"][0]["inputs"]}
    assert (inputs["x"]["shape"], inputs["x"]["requires_grad"]) == ([4], True)
    assert (inputs["u"]["shape"], inputs["u"]["dtype"]) == ([2, 2], "float64")
    assert (inputs["idx"]["dtype"], inputs["idx"]["requires_grad"]) == ("int64", False)
    assert inputs["fixed"]["requires_grad"] is False
    doc = runs["specs_check"].json()
    assert doc["passed"] is True  # log of positive inputs: no NaN
    (report,) = doc["targets"][0]["reports"]
    checked = {report["inputs"][p["input_position"]]["label"] for p in report["pairs"]}
    assert checked == {"x", "u"}  # only what requires grad is checked


def test_shape_per_parameter(runs):
    r = runs["pair_shapes"]
    assert_exit(r, 0)
    doc = r.json()
    assert doc["shapes"] == {"x": [2, 3], "w": [3]}
    shapes = [i["shape"] for i in doc["targets"][0]["reports"][0]["inputs"]]
    assert shapes == [[2, 3], [3]]


def test_shape_error_hints_per_parameter(runs):
    r = runs["pair_bad"]
    assert_exit(r, 2)
    text = cu.flat(r.stdout + r.stderr)
    assert "gradtool generated x [4], w [3] from --shape 4 --shape w=3" in text, text
    assert "--shape x=SIZES --shape w=SIZES" in text


def test_one_branch_is_info(runs):
    r = runs["one_branch"]
    assert_exit(r, 0)
    d = by_kind(r.json(), "one_branch")
    assert d["severity"] == "info" and "every input above 0" in d["message"]


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       low=st.floats(-5, 5), width=st.floats(0.01, 5), seed=st.integers(0, 2**32 - 1))
def test_specs_draw_inside_their_bounds(shape, low, width, seed):
    import gradtool
    rng = np.random.default_rng(seed)
    assert np.all(gradtool.positive(shape).draw(rng) > 0)
    u = gradtool.uniform(shape, low, low + width).draw(rng)
    assert u.shape == shape and np.all((low <= u) & (u < low + width))
    k = gradtool.integers(shape, 3).draw(rng)
    assert k.dtype.kind == "i" and np.all((0 <= k) & (k < 3))


@given(names=st.lists(st.sampled_from(["x", "w", "bias"]), unique=True),
       sizes=st.lists(st.integers(1, 9), min_size=1, max_size=3))
def test_shape_options_round_trip(names, sizes):
    from gradtool.capture.loader import parse_shape
    text = ",".join(map(str, sizes))
    shapes = parse_shape([text] + [f"{n}={text},1" for n in names])
    assert tuple(shapes) == tuple(sizes)
    for n in names:
        assert shapes.of(n) == tuple(sizes) + (1,)
    assert parse_shape(shapes.option().replace("--shape ", "").split()) == shapes


def test_gradtool_no_grad_is_still_torchs():
    import gradtool as gt
    x = gt.ones(2, requires_grad=True)
    with gt.no_grad():
        assert not (x * 2).requires_grad

    @gt.no_grad
    def double(t):
        return t * 2
    assert not double(x).requires_grad


# ------------------------------------------------------------------ --against
@pytest.mark.parity
def test_against_reports_a_raising_backward_in_place(torch_runs):
    r = torch_runs["against_raising"]
    assert_exit(r, 2)
    targets = {t["name"]: t for t in r.json()["targets"]}
    assert targets["Fine"]["agree"] is True  # still compared
    error = targets["Raises"]["error"]
    assert error["location"].endswith("raising.py:22")
    assert "backward is broken here" in error["message"]
    assert "Traceback (most recent call last)" not in r.stderr


@pytest.mark.parity
def test_surrogate_patterns_on_torch(torch_runs):
    doc = torch_runs["torch_ste"].json()
    found = {t["name"]: by_kind(doc, "surrogate_gradient", t["name"])["details"]
             for t in doc["targets"]}
    assert found["BinarySTE"]["pattern"] == "straight_through"
    assert (found["GradReverse"]["pattern"], found["GradReverse"]["value"]) == ("scaled", -0.5)


def test_inspect_says_which_dims_vmap_batched():
    """Per-sample gradients (vmap over grad of a functional_call): the finding names each
    argument of the mapped function and the dim vmap batched, at the user's vmap line."""
    from gradtool.capture.loader import load
    from gradtool.checks.inspection import capture
    path = os.path.join(cu.REPO, "examples", "func_per_sample_grads.py")
    [target] = load(path)
    [d] = [d for d in capture(target).diagnostics if d.kind == "vmap_batched"]
    assert d.severity == "info"
    assert d.message == ("vmap(_per_example_loss) ran 5 examples at once, batching x along "
                         "dim 0, y along dim 0; params the same for every example")
    with open(path) as f:
        line = next(i for i, text in enumerate(f, 1) if "vmap(grad(" in text)
    assert d.location.endswith(f"func_per_sample_grads.py:{line}")
    assert d.details == {"function": "_per_example_loss", "size": 5, "in_dims": [None, 0, 0]}


def test_a_sparse_conversion_is_no_cut_gradient(tmp_path):
    """to_sparse_csr passes the dense gradient on (as torch's ToSparseCsrBackward0): inspect
    finds nothing to say about it, no `.detach()` finding."""
    from gradtool.capture.loader import load
    from gradtool.checks.inspection import capture
    path = tmp_path / "csr_file.py"
    path.write_text(textwrap.dedent("""\
        import torch
        import gradtool


        @gradtool.example((2, 3), (3, 2))
        def csr_product(d, m):
            return (d.to_sparse_csr() @ m).sum() + d.to_sparse_csc().sin().values().sum()
        """))
    [target] = load(str(path))
    assert [d.kind for d in capture(target).diagnostics] == []
