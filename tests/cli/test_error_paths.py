"""What the `gradtool` command says when the user's code or options are wrong, run as a user
runs it: the generated-inputs hint only beside errors that other inputs could avoid, a
--shape naming no parameter refused, and a backward that can run only once the same error
with the same exit code on both engines."""
import textwrap

import pytest

import cli_util as cu
from cli_util import assert_exit

HINT = "gradtool called it with generated inputs"

ERRORS = textwrap.dedent("""\
    import math

    import torch


    def missing(x):
        return math.not_a_function(x)


    def in_torch(x):
        return torch.load("/nonexistent/weights.pt") * x


    def asserts(x):
        assert (x > 0).all(), "x must be positive"
        return x.sum()


    def dtypes(x):
        return torch.mm(x.reshape(3, 1), torch.ones(1, 3, dtype=torch.float32)).sum()


    def pair(x, y):
        return (x.reshape(3, 1) @ y).sum()
    """)

ONCE = textwrap.dedent("""\
    import torch


    class Checkpoint(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.inputs = x.detach()
            return x.sin()

        @staticmethod
        def backward(ctx, grad):
            x = ctx.inputs
            del ctx.inputs  # frees its input: a backward that can run once
            return grad * x.cos()


    def f(x):
        return Checkpoint.apply(x * 2)
    """)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("errors")
    for name, source in (("errors.py", ERRORS), ("once.py", ONCE)):
        (folder / name).write_text(source)
    return folder


def errors_of(result):
    return {t["name"]: t["error"]["message"] for t in result.json()["targets"]}


def test_the_inputs_hint_only_beside_errors_inputs_can_cause(files):
    r = cu.run("gradcheck", "--json", files / "errors.py")
    assert_exit(r, 2)
    errors = errors_of(r)
    assert HINT not in errors["missing"]  # a name the code lacks
    assert HINT not in errors["in_torch"]  # a failure inside torch's code, not the inputs'
    assert HINT in errors["asserts"] and "@gradtool.example((3,)) on asserts" in errors["asserts"]
    assert HINT in errors["dtypes"]  # a dtype error
    assert "a shape error" in errors["pair"]


def test_a_shape_error_quotes_the_shapes_as_given(files):
    r = cu.run("gradcheck", "--json", "--shape", "y=2,4", f"{files / 'errors.py'}::pair")
    assert_exit(r, 2)
    message = errors_of(r)["pair"]
    assert "gradtool generated x [3], y [2, 4] from --shape y=2,4 and the default shape 3" \
        in message
    assert "--shape 3" not in message


@pytest.mark.parametrize("command", ["gradcheck", "inspect", "render"])
def test_a_shape_for_a_parameter_no_target_has_is_refused(files, tmp_path, command):
    out = ["-o", tmp_path / "g.svg"] if command == "render" else []
    r = cu.run(command, "--shape", "z=2,4", f"{files / 'errors.py'}::pair", *out)
    cu.assert_clean_user_error(r, "--shape z=", "pair(x, y)")
    whole = cu.run("inspect", "--shape", "z=2", files / "errors.py")
    cu.assert_clean_user_error(whole, "missing(x)", "pair(x, y)")


def test_a_backward_that_runs_once_is_an_error_in_the_users_code(files):
    r = cu.run("gradcheck", "--json", files / "once.py")
    assert_exit(r, 2)
    for target in r.json()["targets"]:
        error = target["reports"][0]["error"]
        assert error.startswith("backward raised AttributeError at") and "once.py:12" in error


@pytest.mark.parity
def test_a_backward_that_runs_once_is_the_same_error_on_torch(files):
    pytest.importorskip("torch")
    ours, theirs = cu.run_many([["gradcheck", "--json", files / "once.py"],
                                ["gradcheck", "--json", "--engine", "torch", files / "once.py"]])
    assert (ours.returncode, theirs.returncode) == (2, 2), (str(ours), str(theirs))

    def findings(result):
        return [(t["name"], t["reports"][0]["error"],
                 [d["kind"] for d in t["reports"][0]["diagnoses"]])
                for t in result.json()["targets"]]
    assert findings(ours) == findings(theirs)


def test_an_error_no_layer_caught_is_gradtools_bug_exit_3_with_its_traceback(tmp_path):
    """Not typer's traceback and exit 1 (a failed check's code): one line naming it as
    gradtool's bug, the plea to report it, gradtool's traceback to report, exit 3."""
    import subprocess
    import sys
    user = tmp_path / "plain.py"
    user.write_text("def f(x):\n    return (x * 2).sum()\n")
    broken = textwrap.dedent(f"""\
        import sys
        from gradtool.report import formats

        def print_text(*args, **kwargs):
            raise RuntimeError("a report that cannot be printed")

        formats.print_text = print_text  # gradtool's own code failing, as a bug would
        from gradtool.frontends.cli import main
        sys.argv = ["gradtool", "gradcheck", {str(user)!r}]
        main()
        """)
    done = subprocess.run([sys.executable, "-c", broken], capture_output=True, text=True,
                          env=cu.env(), timeout=300)
    assert done.returncode == 3, done.stderr
    first, plea = done.stderr.splitlines()[:2]
    assert first == ("gradtool: internal error: RuntimeError: a report that cannot be "
                     "printed")
    assert "bug in gradtool, not in your code" in plea and "report it" in plea
    assert "Traceback (most recent call last)" in done.stderr
