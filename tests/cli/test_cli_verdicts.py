"""Verdicts a user can trust and errors in the user's words, through the installed `gradtool`
command as a user runs it: exit codes, the JSON documents, the text.

Every command here runs once, all of them at once (`runs`), and the tests read the results."""
import os
import re
import textwrap

import pytest

import cli_util as cu
from cli_util import assert_clean_user_error, assert_exit

FILES = {
    "signs.py": """\
        import gradtool


        class ThreeX(gradtool.autograd.Function):  # x * x with the derivative 3 x (wrong)
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x * g


        def right(x):
            return (x * x).sum()
        """,
    "non_finite.py": """\
        import gradtool


        @gradtool.example(gradtool.tensor([1.0, float("inf"), 2.0], dtype=gradtool.float64,
                                          requires_grad=True))
        def doubled(x):
            return x * 2
        """,
    "cuts.py": """\
        import gradtool
        import gradtool as torch


        @gradtool.example((3,), (3,))
        def by_item(x, w):
            s = (x * w).sum()
            return x * w / s.item()


        @gradtool.example((3,))
        def by_detach(x):
            y = x.exp()
            return (y * y.detach()).sum()


        @gradtool.example((3,))
        def by_no_grad(x):
            with torch.no_grad():
                m = x.max()
            return (x - m).exp().sum()


        @gradtool.example((3,))
        def by_data(x):
            return (x * x.data).sum()


        @gradtool.example((3,))
        def by_numpy(x):
            y = torch.tensor(x.detach().numpy() ** 2)
            return (x * y).sum()


        @gradtool.example((3,))
        def logged(x):
            print(x.detach())  # a detached copy that reaches no output: no cut
            return (x * x).sum()
        """,
    "redefined.py": """\
        import gradtool as gt


        class Cube(gt.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                return g


        class Cube(gt.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 3 * x ** 2
        """,
    "named.py": """\
        import gradtool


        class WrongSquare(gradtool.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return g * a  # should be 2 * a


        @gradtool.example((3,), (3,))
        def weighted(x, w):
            loss = (x.exp() * WrongSquare.apply(w)).sum()
            return loss
        """,
    "numbers.py": """\
        import gradtool
        from gradtool.autograd import Function


        class MulConstant(Function):
            @staticmethod
            def forward(ctx, tensor, constant):
                ctx.constant = constant
                return tensor * constant

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.constant, None


        class MulFloat(Function):
            @staticmethod
            def forward(ctx, tensor, constant: float):
                ctx.constant = constant
                return tensor * constant

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.constant, None


        class MulDefault(Function):
            @staticmethod
            def forward(ctx, tensor, constant=3.0):
                ctx.constant = constant
                return tensor * constant

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.constant, None


        class MulTimes(Function):
            @staticmethod
            def forward(ctx, tensor, times: int):
                return tensor * times

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, None


        @gradtool.example((3,), 2.5)
        class MulExample(Function):
            @staticmethod
            def forward(ctx, tensor, constant):
                ctx.constant = constant
                return tensor * constant

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.constant, None


        class Linear(Function):
            @staticmethod
            def forward(input, weight, bias=None):
                output = input.mm(weight.t())
                if bias is not None:
                    output += bias.unsqueeze(0).expand_as(output)
                return output

            @staticmethod
            def setup_context(ctx, inputs, output):
                input, weight, bias = inputs
                ctx.save_for_backward(input, weight, bias)

            @staticmethod
            def backward(ctx, grad_output):
                input, weight, bias = ctx.saved_tensors
                grad_bias = grad_output.sum(0) if bias is not None else None
                return grad_output.mm(weight), grad_output.t().mm(input), grad_bias


        @gradtool.example((2, 3), (4, 3), (4,))
        class LinearExample(Linear):
            pass
        """,
    "multi_output.py": """\
        import gradtool as torch


        class MyCube(torch.autograd.Function):  # the docs' example: saves output 1
            @staticmethod
            def forward(x):
                return x ** 3, 3 * x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, = inputs
                result, dx = output
                ctx.save_for_backward(x, dx)

            @staticmethod
            def backward(ctx, grad_output, grad_dx):
                x, dx = ctx.saved_tensors
                return grad_output * dx + grad_dx * 6 * x


        class SavesFirstOutput(torch.autograd.Function):
            @staticmethod
            def forward(x):
                return x.exp(), x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(output[0])

            @staticmethod
            def backward(ctx, g0, g1):
                e, = ctx.saved_tensors
                return g0 * e + g1 * 2


        class SavesBothOutputs(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                e, s = x.exp(), x.sin()
                ctx.save_for_backward(e, s, x)
                return e, s

            @staticmethod
            def backward(ctx, g0, g1):
                e, s, x = ctx.saved_tensors
                return g0 * e + g1 * x.cos()


        class NonDifferentiableSecond(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax()
                ctx.mark_non_differentiable(idx)
                ctx.save_for_backward(x)
                return x * 2, idx

            @staticmethod
            def backward(ctx, g, g_idx):
                return g * 2
        """,
    "worst.py": """\
        import gradtool


        class WrongExp(gradtool.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                y, = ctx.saved_tensors
                return g * y * 1.5
        """,
    "tolerances.py": """\
        import gradtool


        @gradtool.example(gradtool.tensor([1.0, 2.0, 3.0], dtype=gradtool.float64,
                                          requires_grad=True))
        def exact(x):
            return x.sum() * 2


        @gradtool.example((3,))
        def offset(x):
            return x.sum() + 1e9


        @gradtool.example(gradtool.tensor([-1.0, 2.0], dtype=gradtool.float64,
                                          requires_grad=True))
        def logs(x):
            y = x.log()
            return y.sum()
        """,
    "user_errors.py": """\
        import gradtool


        class Oops(Exception):
            def __str__(self):
                raise RuntimeError("no words")


        @gradtool.example((3,), (3,))
        def two_examples_one_param(x):
            return x.sum()


        @gradtool.example((3,))
        def generator_exit(x):
            raise GeneratorExit()


        @gradtool.example((3,))
        def unprintable(x):
            raise Oops()


        class BackwardRaises(gradtool.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                raise ValueError("backward broke")


        class BackwardArray(gradtool.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g.numpy() * 2


        class BackwardString(gradtool.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return "gradient"


        @gradtool.example((3,))
        def numpy_memory_error(x):
            import numpy
            numpy.ones(1 << 50)  # numpy's own Python frames raise it
            return x.sum()
        """,
    "negative_shape.py": """\
        import gradtool


        @gradtool.example((-3,))
        def f(x):
            return x.sum()
        """,
    "loops.py": """\
        import gradtool


        @gradtool.example((3,))
        def forever(x):
            while True:
                try:
                    x = x * 1.0
                except Exception:
                    pass


        @gradtool.example((3,))
        def quick(x):
            return x.sum()
        """,
    "null_bytes.py": "x = 1\0\n",
    "float32_model.py": """\
        import gradtool as torch

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        x = torch.randn(5, 4)


        def loss_of_batch():  # no arguments: a target only when named
            return model(x).pow(2).mean()
        """,
}
DOUBLE_COLON = os.path.join("a::b", "f.py")
FILES[DOUBLE_COLON] = FILES["tolerances.py"]

EXACT = ["--atol", "0", "--rtol", "0", "--eps", repr(2.0 ** -20)]  # h exact in binary
COMMANDS = {
    "cuts_inspect": ["inspect", "--json", "cuts.py"],
    "cuts_gradcheck": ["gradcheck", "--json", "cuts.py"],
    "redefined": ["gradcheck", "--json", "redefined.py"],
    "named_order2": ["gradcheck", "--json", "--order", "2", "named.py::weighted"],
    "named_text": ["gradcheck", "--no-color", "--order", "2", "named.py::weighted"],
    "numbers": ["gradcheck", "--json", "numbers.py"],
    "numbers_text": ["gradcheck", "--no-color", "numbers.py"],
    "multi_inspect": ["inspect", "--json", "multi_output.py"],
    "multi_gradcheck": ["gradcheck", "--json", "multi_output.py"],
    "worst": ["gradcheck", "--json", "--shape", "60", "worst.py"],
    "worst_text": ["gradcheck", "--no-color", "--shape", "60", "worst.py"],
    "model": ["gradcheck", "--json", "examples/model.py"],
    "exact": ["gradcheck", "--json", *EXACT, "tolerances.py::exact"],
    "tolerances": ["gradcheck", "--json", "tolerances.py"],
    "user_errors": ["gradcheck", "--json", "user_errors.py"],
    "user_errors_text": ["gradcheck", "--no-color", "user_errors.py"],
    "user_errors_inspect": ["inspect", "--json", "user_errors.py"],
    "negative_shape": ["inspect", "negative_shape.py"],
    "timeout": ["inspect", "--json", "--timeout", "0.5", "loops.py"],
    "null_bytes": ["inspect", "null_bytes.py"],
    "fifo": ["inspect", "fifo.py"],
    "double_colon": ["gradcheck", "--json", DOUBLE_COLON + "::exact"],
    "inspect_concise": ["inspect", "--no-color", "examples/basics.py::weighted_loss"],
    "inspect_all_saved": ["inspect", "--no-color", "--all-saved", "--max-depth", "1",
                          "examples/basics.py::weighted_loss"],
    "narrow_gradcheck": ["gradcheck", "examples/broken_wrong_gradient.py"],
    "narrow_inspect": ["inspect", "examples/inplace_trouble.py"],
    "non_finite": ["gradcheck", "--order", "2", "non_finite.py"],
    "signs": ["gradcheck", "--no-color", "--seed", "1", "signs.py::ThreeX"],
    "signs_long": ["gradcheck", "--no-color", "--shape", "12", "signs.py::ThreeX"],
    "signs_fast": ["gradcheck", "--no-color", "--fast", "signs.py::right"],
    "help": ["gradcheck", "--help"],
    "non_finite_fast": ["gradcheck", "--fast", "--mode", "both", "non_finite.py"],
    "float32_model": ["gradcheck", "--json", "float32_model.py::loss_of_batch"],
    "float32_model_unnamed": ["gradcheck", "float32_model.py"],
}
BAD_OPTIONS = {  # (args, what the message must name)
    "shape_space": (["inspect", "--shape", "2 3"], "--shape"),
    "shape_letter": (["inspect", "--shape", "2,x"], "--shape"),
    "shape_empty": (["inspect", "--shape", "2,,3"], "--shape"),
    "shape_zero": (["inspect", "--shape", "0"], "--shape"),
    "shape_superscript": (["inspect", "--shape", "²"], "--shape"),
    "shape_huge": (["gradcheck", "--shape", "100000,100000"], "--shape"),
    "eps_zero": (["gradcheck", "--eps", "0"], "--eps"),
    "atol_negative": (["gradcheck", "--atol", "-1"], "--atol"),
    "rtol_negative": (["gradcheck", "--rtol", "-0.1"], "--rtol"),
    "seed_negative": (["inspect", "--seed", "-1"], "--seed"),
}


def _repo_path(args):
    return [os.path.join(cu.REPO, a) if a.startswith("examples/") else a for a in args]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{key: Result} for COMMANDS, BAD_OPTIONS (on examples/basics.py) and the render
    format checks, all run at once in a folder holding FILES."""
    folder = tmp_path_factory.mktemp("verdicts")
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    os.mkfifo(folder / "fifo.py")
    jobs = {k: _repo_path(v) for k, v in COMMANDS.items()}
    basics = os.path.join(cu.REPO, "examples", "basics.py")
    for key, (args, _) in BAD_OPTIONS.items():
        jobs[key] = args + [basics]
    jobs["render_jpg"] = ["render", basics, "-o", folder / "g.jpg"]
    jobs["render_contradiction"] = ["render", basics, "-o", folder / "g.png", "--format", "svg"]
    narrow = {"narrow_gradcheck", "narrow_inspect"}
    results = dict(zip([k for k in jobs if k not in narrow],
                       cu.run_many([v for k, v in jobs.items() if k not in narrow],
                                   cwd=folder)))
    results.update(zip(sorted(narrow), cu.run_many([jobs[k] for k in sorted(narrow)],
                                                   cwd=folder, extra_env={"COLUMNS": "80"})))
    results["folder"] = folder
    # typer finds the shell among gradtool's parents, as from a user's prompt: run it from bash
    results["completion"] = cu.run("-c", f"{cu.GRADTOOL} --show-completion bash; exit $?",
                                   executable="bash")
    results["completion_words"] = cu.run(extra_env={
        "_GRADTOOL_COMPLETE": "complete_bash", "COMP_WORDS": "gradtool gradch",
        "COMP_CWORD": "1"})
    results["no_color_env"] = cu.run("inspect", os.path.join(cu.REPO, "examples",
                                                             "grad_modes.py"),
                                     extra_env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    return results


def _targets(result):
    return {t["name"]: t for t in result.json()["targets"]}


def _diagnoses(target, kind=None):
    return [d for rep in target["reports"] for d in rep["diagnoses"]
            if kind is None or d["kind"] == kind]


def _line(folder, name, snippet):
    return cu.source_line(folder / name, snippet)


# ====================================================== verdicts and exit codes

def test_order_2_checks_and_reports_first_order_too(runs):
    r = runs["named_order2"]
    assert_exit(r, 1)
    [t] = r.json()["targets"]
    assert [rep["order"] for rep in t["reports"]] == [1, 2]
    assert "order 1:" in runs["named_text"].stdout and "order 2:" in runs["named_text"].stdout


def test_a_redefined_class_is_the_one_the_module_binds(runs):
    r = runs["redefined"]
    assert_exit(r, 0)  # the first Cube's backward is wrong; the second one is checked
    [t] = r.json()["targets"]
    line = _line(runs["folder"], "redefined.py", "ctx.save_for_backward(x)") - 3
    assert t["location"].endswith(f"redefined.py:{line}"), t["location"]


# ====================================================== finding the cause

CUT_LINES = {"by_item": ("item", "return x * w / s.item()"),
             "by_detach": ("detach", "return (y * y.detach()).sum()"),
             "by_no_grad": ("no_grad", "m = x.max()"),
             "by_data": ("data", "return (x * x.data).sum()"),
             "by_numpy": ("numpy", "y = torch.tensor(x.detach().numpy() ** 2)")}


def test_inspect_reports_each_partial_cut_with_its_kind_and_line(runs):
    r = runs["cuts_inspect"]
    assert_exit(r, 0)  # warnings only
    targets = cu.check_inspect_document(r.json())
    for name, (kind, snippet) in CUT_LINES.items():
        [d] = [d for d in targets[name]["diagnostics"] if d["kind"] == "gradient_cut"]
        assert d["details"]["cut"] == kind and d["details"]["partial"] is True, d
        assert d["severity"] == "warning"
        assert d["location"] == f"cuts.py:{_line(runs['folder'], 'cuts.py', snippet)}", d
    assert not targets["logged"]["diagnostics"]  # a detached copy only printed is no cut


def test_gradcheck_names_the_cut_instead_of_a_wrong_formula(runs):
    r = runs["cuts_gradcheck"]
    assert_exit(r, 1)
    targets = _targets(r)
    for name, (kind, snippet) in CUT_LINES.items():
        t = targets[name]
        assert t["passed"] is False
        assert not _diagnoses(t, "wrong_gradient"), name
        [d] = _diagnoses(t, "gradient_cut")
        assert d["severity"] == "error" and d["details"]["cut"] == kind
        assert d["location"].endswith(f":{_line(runs['folder'], 'cuts.py', snippet)}")
    assert targets["by_item"]["input_names"] == ["x", "w"]
    assert set(_diagnoses(targets["by_item"], "gradient_cut")[0]["details"]["inputs"]) == \
        {"x", "w"}
    assert targets["logged"]["passed"] is True


def test_inputs_are_named_after_the_users_parameters(runs):
    [t] = runs["named_order2"].json()["targets"]
    first, second = t["reports"]
    assert [i["label"] for i in first["inputs"]] == ["x", "w"]
    assert [i["label"] for i in second["inputs"]] == ["x", "w", "grad of loss"]
    # the wrong Function, localised, is checked on its own: its input is named after its own
    # parameter (and its paragraph replaces the target's per-pair wrong_gradient ones)
    assert not _diagnoses({"reports": [first]}, "wrong_gradient")
    [wrong] = _diagnoses({"reports": [first]}, "wrong_node")
    assert "WrongSquare.apply at" in wrong["message"]
    assert "with respect to a " in wrong["message"]
    assert "w float64[3]" in runs["named_text"].stdout
    assert "input 1" not in runs["named_text"].stdout


def test_module_parameters_are_checked_as_inputs(runs):
    r = runs["model"]
    assert_exit(r, 0)
    [t] = r.json()["targets"]
    assert t["input_names"] == ["x", "model.0.weight", "model.0.bias", "model.2.weight",
                                "model.2.bias"]
    assert {p["input_index"] for p in t["reports"][0]["pairs"]} == set(range(5))


# ====================================================== targets that are not plain tensor functions

def test_functions_taking_numbers_never_fail_when_correct(runs):
    r = runs["numbers"]
    assert_exit(r, 2)  # two targets need an @example: no FAIL anywhere
    targets = _targets(r)
    for name in ("MulFloat", "MulDefault", "MulExample", "LinearExample"):
        assert targets[name]["passed"] is True and targets[name]["error"] is None, name
    assert "`times` is annotated int" in targets["MulTimes"]["error"]["message"]
    for name in ("MulConstant", "Linear", "MulTimes"):
        assert "reports" not in targets[name]
        assert "@gradtool.example(" in targets[name]["error"]["message"], name
    assert "`constant`" in targets["MulConstant"]["error"]["message"]
    assert "@gradtool.example((3,), 2.0)" in targets["MulConstant"]["error"]["message"]
    assert "FAIL" not in runs["numbers_text"].stdout


def test_multi_output_functions_and_setup_context(runs):
    for key in ("multi_inspect", "multi_gradcheck"):
        assert_exit(runs[key], 0)
    targets = cu.check_inspect_document(runs["multi_inspect"].json())
    assert set(targets) == {"MyCube", "SavesFirstOutput", "SavesBothOutputs",
                            "NonDifferentiableSecond"}
    for t in targets.values():
        assert t["backward_error"] is None
        saved = [s for n in t["graph"]["nodes"] for s in n["saved"] if s["is_tensor"]]
        assert saved, t["name"]
    assert all(t["passed"] for t in runs["multi_gradcheck"].json()["targets"])


# ====================================================== honest numbers

def test_worst_element_is_the_max_abs_error_and_json_counts_what_it_leaves_out(runs):
    r = runs["worst"]
    assert_exit(r, 1)
    [t] = r.json()["targets"]
    [pair] = t["reports"][0]["pairs"]
    w = pair["worst"]
    assert abs(w["analytical"] - w["numerical"]) == pytest.approx(pair["max_abs_error"])
    assert pair["n_differing"] == 60
    assert len(pair["differing"]) + pair["differing_omitted"] == 60
    assert pair["differing_omitted"] > 0
    text = cu.flat(runs["worst_text"].stdout)
    assert f"--json lists the first {len(pair['differing'])}" in text


# ====================================================== options and terminal

@pytest.mark.parametrize("key", sorted(BAD_OPTIONS))
def test_bad_option_values_are_usage_errors(runs, key):
    assert_clean_user_error(runs[key], BAD_OPTIONS[key][1])


def test_render_says_which_option_is_wrong(runs):
    assert_clean_user_error(runs["render_jpg"], "-o", ".jpg")
    assert_clean_user_error(runs["render_contradiction"], "--format svg", "-o", ".png")
    assert not list(runs["folder"].glob("g.*"))


def test_no_color_environment_is_honoured(runs):
    r = runs["no_color_env"]
    assert_exit(r, 0)
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-9])[;m]", r.stdout), \
        "NO_COLOR: no colour codes (bold and dim are allowed)"


def test_narrow_terminal_keeps_headers_and_verdicts(runs):
    gc, ins = runs["narrow_gradcheck"], runs["narrow_inspect"]
    assert_exit(gc, 1)
    assert_exit(ins, 1)
    for r in (gc, ins):
        assert max(len(line) for line in r.stdout.splitlines()) <= 80, r.stdout
        assert "…" not in r.stdout, r.stdout
    assert "FAIL" in gc.stdout and "result" in gc.stdout
    for header in ("node", "name", "value", "version", "bytes"):
        assert header in ins.stdout


def test_inspect_is_concise_unless_asked(runs):
    concise, every = runs["inspect_concise"], runs["inspect_all_saved"]
    assert_exit(concise, 0)
    assert_exit(every, 0)
    assert "_saved_self_sym_sizes" not in concise.stdout and "_saved_alpha" not in \
        concise.stdout
    assert "3 sizes and constants hidden (--all-saved)" in cu.flat(concise.stdout)
    assert "_saved_self_sym_sizes" in every.stdout and "_saved_alpha" in every.stdout
    assert "more below (--max-depth 1)" in every.stdout
    assert "AccumulateGrad" not in every.stdout.split("saved for backward")[0]


def test_shell_completion(runs):
    assert_exit(runs["completion"], 0)
    assert "_GRADTOOL_COMPLETE" in runs["completion"].stdout
    assert runs["completion_words"].stdout.split() == ["gradcheck"]


# ====================================================== errors in the user's words

def test_each_user_error_names_the_users_line(runs):
    folder = runs["folder"]
    r = runs["user_errors"]
    for name, mentions in {
            "two_examples_one_param": ["TypeError", "user_errors.py:9"],
            "generator_exit": ["GeneratorExit", f"user_errors.py:{_line(folder, 'user_errors.py', 'raise GeneratorExit')}"],
            "unprintable": ["Oops", "__str__ raised"],
            "numpy_memory_error": [
                "MemoryError", "Unable to allocate",
                f"user_errors.py:{_line(folder, 'user_errors.py', 'numpy.ones(1 << 50)')}"],
    }.items():
        text = cu.assert_target_error(r, name, *mentions)
        assert "numpy" + os.sep not in text, text  # numpy's own frames are hidden
    targets = _targets(r)
    raises = targets["BackwardRaises"]
    assert raises["passed"] is False
    line = _line(folder, "user_errors.py", 'raise ValueError("backward broke")')
    assert f"user_errors.py:{line}" in raises["reports"][0]["error"]
    assert f"user_errors.py:{line}" in cu.flat(runs["user_errors_text"].stdout)
    for name in ("BackwardArray", "BackwardString"):
        assert targets[name]["passed"] is False
        error = targets[name]["reports"][0]["error"]
        assert "expected a Tensor or None" in error
        line = _line(folder, "user_errors.py", f"class {name}(") + 6  # its def backward
        assert f"user_errors.py:{line}" in error, error
    inspected = _targets(runs["user_errors_inspect"])
    assert inspected["BackwardArray"]["backward_error"]


def test_errors_before_any_target_runs(runs):
    assert_clean_user_error(runs["negative_shape"], "negative_shape.py:4", "(-3,)")
    assert_clean_user_error(runs["null_bytes"], "null_bytes.py", "null bytes")
    assert_clean_user_error(runs["fifo"], "fifo.py", "not a regular file")


def test_a_folder_named_with_double_colons(runs):
    r = runs["double_colon"]
    assert_exit(r, 0)
    assert [t["name"] for t in r.json()["targets"]] == ["exact"]


def test_timeout_stops_a_target_and_the_others_still_run(runs):
    r = runs["timeout"]
    assert_exit(r, 2)
    targets = _targets(r)
    error = targets["forever"]["error"]
    assert "--timeout 0.5" in error["message"]
    # the line the loop was on when the alarm rang: any line of the loop (a race)
    first = _line(runs['folder'], 'loops.py', 'while True:')
    last = _line(runs['folder'], 'loops.py', 'pass')
    where, _, line = error["location"].rpartition(":")
    assert where.endswith("loops.py") and first <= int(line) <= last, error["location"]
    assert targets["quick"]["error"] is None


def test_interrupt_names_the_running_target_and_exits_130(tmp_path):
    import signal
    import subprocess
    user = tmp_path / "loops.py"
    user.write_text(textwrap.dedent(FILES["loops.py"]))
    user.write_text(textwrap.dedent(FILES["loops.py"]).replace(
        "    while True:", "    print('started', flush=True)\n    while True:"))
    proc = subprocess.Popen(  # SIGINT as a terminal delivers it (not ignored, as in `cmd &`)
        [cu.GRADTOOL, "inspect", "--json", str(user)], env=cu.env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stderr.readline().strip() == "started"  # --json sends the prints here
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:  # a run that did not stop loops on, filling memory: never leave it behind
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "forever" in err and "Traceback" not in err


# ====================================================== tolerances and diagnoses

def test_zero_tolerances_on_an_exact_function(runs):
    r = runs["exact"]
    assert_exit(r, 0)
    [t] = r.json()["targets"]
    [pair] = t["reports"][0]["pairs"]
    assert pair["n_differing"] == 0 and pair["max_abs_error"] == 0
    assert not _diagnoses(t)


def test_round_off_and_nan_are_named_not_called_kinks(runs):
    r = runs["tolerances"]
    assert_exit(r, 1)
    targets = _targets(r)
    offset = targets["offset"]
    assert {d["kind"] for d in _diagnoses(offset)} == {"round_off"}
    assert "--eps" in _diagnoses(offset)[0]["message"]
    assert "its own float64 rounding error" in _diagnoses(offset)[0]["message"]
    logs = targets["logs"]
    kinds = {d["kind"] for d in _diagnoses(logs)}
    assert "non_finite_output" in kinds
    assert not kinds & {"wrong_gradient", "non_differentiable_point"}
    [nan] = _diagnoses(logs, "non_finite_output")
    assert nan["location"].endswith(
        f":{_line(runs['folder'], 'tolerances.py', 'y = x.log()')}")


def test_a_backward_that_raises_is_a_user_code_error_and_a_refused_gradient_a_failed_check(
        tmp_path):
    """A custom backward raising in the user's code exits 2 (the user's error), naming its line; the
    engine refusing a gradient of the wrong shape is a failed check, exit 1."""
    user = tmp_path / "raises.py"
    user.write_text(textwrap.dedent("""\
        import gradtool


        class Raises(gradtool.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                raise ValueError("backward broke")
        """))
    raised, refused = cu.run_many([["gradcheck", "--no-color", user],
                                   ["gradcheck", cu.EXAMPLES + "/broken_grad_shape.py"]])
    assert_exit(raised, 2)
    assert "raises.py:11" in cu.flat(raised.stdout) and "backward broke" in raised.stdout, raised
    # headed as an error, as any target that raised, not as a failed check
    assert raised.stdout.splitlines()[0].rstrip().endswith("ERROR"), raised
    assert "FAIL" not in raised.stdout and "order 1" not in raised.stdout, raised
    assert_exit(refused, 1)


def test_an_input_holding_inf_fails_the_check_without_numpys_warnings(runs):
    for key in ("non_finite", "non_finite_fast"):
        r = runs[key]
        assert_exit(r, 1)
        assert "non_finite_output" in r.stdout
        assert "RuntimeWarning" not in r.stderr and "invalid value" not in r.stderr, r


def test_pairs_are_named_in_json_and_order_2_names_each_gradient(runs):
    [t] = runs["named_order2"].json()["targets"]
    first, second = t["reports"]
    assert [(p["output_name"], p["input_name"]) for p in first["pairs"]] == [
        ("output 0", "x"), ("output 0", "w")]
    # gradgradcheck's outputs are the gradients of loss with respect to x and w
    assert [(p["output_name"], p["input_name"]) for p in second["pairs"]] == [
        (f"grad w.r.t. {o}", i) for o in ("x", "w") for i in ("x", "w", "grad of loss")]
    text = runs["named_text"].stdout
    assert "grad w.r.t. w   grad of loss" in text and "output 1" not in text


def test_jacobian_entries_show_no_negative_zero(runs):
    r = runs["signs"]
    assert_exit(r, 1)
    assert "0 | 0" in r.stdout
    assert not re.search(r"(^|\s)-0(\s|$)", r.stdout), r.stdout  # 3 * x * 0 for x < 0 is -0


def test_a_list_of_differing_entries_says_its_order(runs):
    r = runs["signs_long"]
    assert_exit(r, 1)
    text = cu.flat(r.stdout)
    assert "12 differing entries, the farthest beyond the tolerance first" in text
    listed = re.findall(r"\[(\d+)\]\s+\[\d+\]\s+(-?[\d.e+-]+)\s+(-?[\d.e+-]+)", r.stdout)
    # |a - n| / (atol + rtol |n|) is 0.5 |n| / (1e-5 + 1e-3 |n|) here: it grows with |n|
    # (the entries are printed to 4 digits, too few to recompute the ratios in order)
    magnitudes = [abs(float(n)) for _, n, _ in listed]
    assert len(magnitudes) == 12 and magnitudes == sorted(magnitudes, reverse=True)


def test_fast_mode_fills_the_there_column_with_the_worst_projection(runs):
    r = runs["signs_fast"]
    assert_exit(r, 0)
    assert re.search(r"projection \d: (-?[\d.]+) vs \1 ", r.stdout), r.stdout


def test_boolean_options_show_as_flags_in_help(runs):
    r = runs["help"]
    assert_exit(r, 0)
    assert "--fast" in r.stdout and "--strict" in r.stdout
    assert "<bool>" not in r.stdout and "BOOLEAN" not in r.stdout


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_no_color_in_a_terminal_means_no_escape_code_at_all(tmp_path):
    """NO_COLOR (or --no-color) on a terminal: not even bold or dim (rich keeps those)."""
    import subprocess
    import pty  # noqa: F401  (os.openpty is enough; pty documents the platform)

    def in_terminal(args, **env):
        master, slave = os.openpty()
        done = subprocess.run([cu.GRADTOOL, *args], stdin=slave, stdout=slave,
                              stderr=slave, env=cu.env(TERM="xterm-256color", **env),
                              timeout=120)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed: all read
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        return done.returncode, out.decode()
    target = os.path.join(cu.REPO, "examples", "broken_wrong_gradient.py")
    code, styled = in_terminal(["gradcheck", target])
    assert code == 1 and "\x1b[" in styled  # a terminal gets styles by default
    for code, out in (in_terminal(["gradcheck", target], NO_COLOR="1"),
                      in_terminal(["gradcheck", "--no-color", target])):
        assert code == 1 and "FAIL" in out
        assert "\x1b[" not in out, repr(out[:300])


def test_float32_parameters_fail_for_precision_checked_at_their_float64_values(runs):
    """A zero-argument loss over a float32 model, named on the command line: the parameters
    are the inputs; central differences in float32 see nothing, and the precision diagnosis
    rechecks with the parameters themselves cast to float64 (the model reads them, not
    copies; here the file's float32 data refuses them, so with the step suited to float32):
    it agrees, so the cause is precision, not the formula. No warning per input."""
    r = runs["float32_model"]
    assert_exit(r, 1)
    [target] = r.json()["targets"]
    assert [i["label"] for i in target["reports"][0]["inputs"]] == [
        "model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"]
    [precision] = [d for d in target["reports"][0]["diagnoses"] if d["kind"] == "precision"]
    assert precision["severity"] == "error" and "precision, not the formula" in \
        precision["message"] and precision["details"]["max_abs_error"] < 1e-4
    assert "double precision" not in r.stderr
    assert_clean_user_error(runs["float32_model_unnamed"], "No targets found")
