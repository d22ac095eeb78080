"""`gradtool gradcheck PATH...` and `gradtool inspect PATH...` over several files and folders,
as a user runs them: which files run, in what order, isolated from each other (a file that
ends its process is that file's error), the summary, the exit code and the run's JSON."""
import json
import os
import signal
import subprocess
import textwrap
import time

import pytest

import cli_util as cu
from cli_util import EXAMPLES, GRADTOOL, assert_clean_user_error, assert_exit, run

# each test runs gradtool as separate processes (several files, worker processes): `make test-slow`
pytestmark = pytest.mark.slow

SQUARE = """\
    import torch

    class {name}(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return {factor} * x * g
    """


def write(path, source):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def project(tmp_path):
    """A folder of good and bad files, and folders whose Python files must not run."""
    root = tmp_path / "project"
    write(root / "good.py", SQUARE.format(name="Square", factor=2))
    write(root / "sub" / "wrong.py", SQUARE.format(name="WrongSquare", factor=3))
    write(root / "syntax.py", "def f(x:\n    return x\n")
    write(root / "exits.py", "import os\nprint('leaving now')\nos._exit(3)\n")
    write(root / "constants.py", "SCALE = 2.0\n")  # no targets: skipped in a folder
    for skipped in (".hidden/found.py", ".venv/lib/found.py", "venv/found.py",
                    "myenv/found.py", "__pycache__/found.py", "node_modules/pkg/found.py",
                    "lib/site-packages/found.py"):
        write(root / skipped, "raise SystemExit('this file must not run')\n")
    (root / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return root


RUN_ORDER = ["exits.py", "good.py", "sub/wrong.py", "syntax.py"]  # sorted; constants.py skipped


def headings(stdout, root):
    """The files whose report is headed in a text run, in order, relative to `root`."""
    found = []
    for line in stdout.splitlines():
        name = line.split(" ", 1)[0]
        if name.startswith(str(root)) and line.rstrip().endswith("─"):
            found.append(os.path.relpath(name, root))
    return found


def test_a_folder_runs_every_file_with_targets_in_order_with_two_jobs(project):
    r = run("gradcheck", project, "-j", "2", "--no-color")
    assert_exit(r, 2)  # the worst: files that could not run
    assert headings(r.stdout, project) == RUN_ORDER
    assert "this file must not run" not in r.stdout + r.stderr
    assert "constants.py" not in r.stdout  # silently skipped
    out = cu.flat(r.stdout)
    assert "leaving now" in out  # the file's own output, above its report
    assert "the process running" in out and "exit status 3" in out and "os._exit(3)" in out
    assert "syntax error" in out
    assert "Square Function at" in out and "WrongSquare Function at" in out
    assert cu.flat(r.stdout.strip().splitlines()[-1]) == (
        "gradcheck: 1 passed, 1 failed, 2 errors in 4 files; 1 file without targets skipped")
    assert "Traceback (most recent call last)" not in r.stdout + r.stderr


def test_one_json_document_for_the_run(project):
    r = run("gradcheck", project, "--json", "-j", "2")
    assert_exit(r, 2)
    doc = r.json()
    assert doc["schema"] == "gradtool.files/1" and doc["command"] == "gradcheck"
    assert doc["summary"] == {"files": 4, "passed": 1, "failed": 1, "errors": 2, "skipped": 1,
                              "interrupted": 0, "exit_code": 2}
    assert doc["passed"] is False
    assert doc["skipped"] == [str(project / "constants.py")]
    files = [os.path.relpath(d["file"], project) for d in doc["documents"]]
    assert files == RUN_ORDER
    by_name = dict(zip(RUN_ORDER, doc["documents"]))
    for d in doc["documents"]:
        assert d["schema"] == "gradtool.gradcheck/3"
    assert by_name["good.py"]["error"] is None and by_name["good.py"]["passed"] is True
    assert [t["name"] for t in by_name["good.py"]["targets"]] == ["Square"]
    assert by_name["sub/wrong.py"]["passed"] is False
    assert by_name["exits.py"]["targets"] == [] and by_name["exits.py"]["passed"] is False
    assert "exit status 3" in by_name["exits.py"]["error"]["message"]
    assert "syntax error" in by_name["syntax.py"]["error"]["message"]
    assert by_name["syntax.py"]["error"]["location"].endswith("syntax.py:1")
    assert "leaving now" in r.stderr  # the user's output never goes into the document


def test_a_file_alone_keeps_its_document_and_it_is_the_same_in_a_run(project):
    alone = run("gradcheck", project / "good.py", "--json")
    assert_exit(alone, 0)
    single = alone.json()
    assert single["schema"] == "gradtool.gradcheck/3" and "error" not in single
    both = run("gradcheck", project / "good.py", project / "sub" / "wrong.py", "--json")
    assert_exit(both, 1)
    first = both.json()["documents"][0]
    assert first == {**single, "error": None}


def test_quiet_prints_one_line_per_target_then_per_file(project):
    r = run("gradcheck", project, "-q", "-j", "2")
    assert_exit(r, 2)
    lines = r.stdout.splitlines()
    per_file = [line.split()[:2] for line in lines[-5:-1]]  # then the total
    assert per_file == [[verdict, str(project / f)] for verdict, f in
                        zip(("ERROR", "PASS", "FAIL", "ERROR"), RUN_ORDER)]
    assert any(line.startswith("PASS  Square") for line in lines)
    assert any(line.startswith("FAIL  WrongSquare") for line in lines)


def test_paths_run_in_the_order_given_files_and_names_mixed(project):
    r = run("inspect", project / "sub" / "wrong.py", f"{project / 'good.py'}::Square",
            project / "constants.py", "--no-color", "-j", "2")
    assert_exit(r, 2)  # constants.py named on its own: no targets is an error
    assert headings(r.stdout, project) == ["sub/wrong.py", "good.py::Square", "constants.py"]
    assert "No targets found" in cu.flat(r.stdout)
    assert cu.flat(r.stdout.strip().splitlines()[-1]) == (
        "inspect: 1 passed, 1 failed, 1 error in 3 files")


def test_a_crash_or_a_stack_overflow_is_that_files_error(tmp_path):
    write(tmp_path / "a_ok.py", SQUARE.format(name="Square", factor=2))
    write(tmp_path / "b_segfault.py", "import ctypes\nctypes.string_at(0)\n")
    # recursion in C (repr of nested lists), the limit lifted: the C stack overflows
    write(tmp_path / "c_c_stack.py", """\
        import sys
        sys.setrecursionlimit(10 ** 8)
        nested = []
        for _ in range(10 ** 6):
            nested = [nested]
        repr(nested)
        """)
    write(tmp_path / "d_recursion.py", """\
        def deeper(n):
            return deeper(n + 1) + 1

        deeper(0)
        """)
    r = run("gradcheck", tmp_path, "--json", "-j", "2", timeout=120)
    assert_exit(r, 2)
    doc = r.json()
    assert doc["summary"]["passed"] == 1 and doc["summary"]["errors"] == 3
    segfault, c_stack, recursion = doc["documents"][1:]
    assert "killed by SIGSEGV" in segfault["error"]["message"]
    assert "the process running" in c_stack["error"]["message"]
    assert "RecursionError" in recursion["error"]["message"]


def test_wrong_paths_and_options_are_refused_before_anything_runs(project, tmp_path):
    assert_clean_user_error(run("gradcheck", project, tmp_path / "missing.py"),
                            "No such file or folder", "missing.py")
    (tmp_path / "empty").mkdir()
    assert_clean_user_error(run("inspect", tmp_path / "empty"), "without Python files")
    assert_clean_user_error(run("gradcheck", project, "-j", "0"), "-j must be")
    assert_clean_user_error(run("gradcheck", project, "--html", tmp_path / "maps.html"),
                            "--html writes one page", "give one file")
    assert not (tmp_path / "maps.html").exists()


def test_a_folder_of_examples_runs(tmp_path):
    """`gradtool inspect examples/` used to say "Not a Python file". A few of the examples
    (every one of them runs alone in tests/cli/test_cli.py's sweep), with a script that
    has no targets (train_mlp.py), as a folder."""
    import shutil
    for name in ("basics.py", "broken_wrong_gradient.py", "grad_modes.py", "train_mlp.py"):
        shutil.copy(os.path.join(EXAMPLES, name), tmp_path / name)
    r = run("inspect", str(tmp_path), "-q", "-j", "2", timeout=600)
    assert r.returncode in (0, 1, 2)
    last = cu.flat(r.stdout.strip().splitlines()[-1])
    assert last.startswith("inspect: ") and "train_mlp.py" not in r.stdout, last
    assert "3 files" in last and "skipped" in last, last  # train_mlp.py: no targets


def test_ctrl_c_stops_the_workers_and_prints_what_finished(tmp_path):
    write(tmp_path / "a_fast.py", SQUARE.format(name="Square", factor=2))
    write(tmp_path / "b_slow.py", """\
        import time

        def slow(x):
            time.sleep(120)
            return x
        """)
    proc = subprocess.Popen(  # SIGINT as a terminal delivers it (not ignored, as in `cmd &`)
        [GRADTOOL, "gradcheck", str(tmp_path), "-j", "2", "--no-color"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=cu.env(), start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        seen, deadline = "", time.monotonic() + 120
        while "Square" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()
        assert "Square" in seen, "the finished file was not reported while the other ran"
        time.sleep(0.5)  # the slow file is inside its target by now
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:  # a run that did not stop: never leave it (or its workers) behind
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    out = seen + stdout
    assert proc.returncode == 130, out + stderr
    assert "interrupted: 1 file not finished" in cu.flat(out)
    assert "1 passed in 1 file" in cu.flat(out)
    assert "SIGINT received while running" in stderr and "b_slow.py" in stderr
    assert "Traceback" not in stderr
