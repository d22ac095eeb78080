"""Never destroy, never run what was not asked for: render -o writes only regular files (through
symlinks, whole or not at all), signals end gradtool and its renderer child, the user's file
leaves no __pycache__ and cannot move -o or corrupt --json, save_on_disk's files stay private."""
import gc
import os
import re
import signal
import stat
import subprocess
import textwrap
import time

import numpy as np
import pytest

import cli_util as cu
import gradtool as gt
from cli_util import GRADTOOL, REPO, assert_clean_user_error, assert_exit, run
from gradtool.engine.errors import GradtoolError
from gradtool.report import output

BASICS = os.path.join(cu.EXAMPLES, "basics.py") + "::weighted_loss"


def _leftovers(folder):
    return [f for f in os.listdir(folder) if f.startswith(".gradtool-")]


def _fake_renderer(tmp_path, script):
    """A `dot` on PATH that runs `script` (sh): gradtool's --renderer dot picks it."""
    folder = tmp_path / "fakebin"
    folder.mkdir()
    dot = folder / "dot"
    dot.write_text("#!/bin/sh\n" + textwrap.dedent(script))
    dot.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


# ------------------------------------------------------------------ render -o

def test_render_writes_through_a_symlink_to_its_target(tmp_path):
    target = tmp_path / "real" / "graph.dot"
    target.parent.mkdir()
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.dot"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.dot"
    dangling.symlink_to(tmp_path / "real" / "new.dot")
    for r in cu.run_many([["render", BASICS, "-o", link], ["render", BASICS, "-o", dangling]]):
        assert_exit(r, 0)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().startswith("digraph")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640, "the target's permissions changed"
    assert dangling.is_symlink() and (tmp_path / "real" / "new.dot").read_text().startswith(
        "digraph")
    assert not _leftovers(tmp_path) and not _leftovers(target.parent)


def test_render_refuses_a_directory_a_fifo_or_the_users_file_before_running_it(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent(f"""\
        import pathlib
        pathlib.Path({str(tmp_path / "ran")!r}).touch()


        def f(x):
            return (x * x).sum()
        """))
    folder = tmp_path / "out"
    folder.mkdir()
    fifo = tmp_path / "pipe.dot"
    os.mkfifo(fifo)
    fifo_link = tmp_path / "to_pipe.dot"
    fifo_link.symlink_to(fifo)
    user_link = tmp_path / "user_link.py"
    user_link.symlink_to(user)
    source = user.read_text()
    *results, itself = cu.run_many([["render", user, "-o", path, "--format", "dot"]
                                    for path in (folder, fifo, fifo_link, user_link)],
                                   timeout=120)
    for r, kind in zip(results, ("a directory", "a FIFO", "a FIFO")):
        assert_clean_user_error(r, "refusing to write", kind, "not a regular file")
    assert_clean_user_error(itself, "refusing to write", "it is the file being run")
    assert user.read_text() == source
    assert not (tmp_path / "ran").exists(), "the user's file ran although -o was refused"
    assert folder.is_dir() and os.listdir(folder) == []
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and fifo_link.is_symlink()
    assert not _leftovers(tmp_path)


def test_write_atomically_leaves_nothing_behind_when_it_fails(tmp_path, monkeypatch):
    path = tmp_path / "graph.svg"
    path.write_bytes(b"old")

    def fail_replace(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", fail_replace)
    with pytest.raises(GradtoolError, match="cannot write .*No space left on device"):
        output.write_atomically(str(path), b"new")

    def interrupted_replace(src, dst):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        output.write_atomically(str(path), b"new")
    assert sorted(os.listdir(tmp_path)) == ["graph.svg"]
    assert path.read_bytes() == b"old"


def test_renderer_with_empty_output_does_not_replace_the_old_file(tmp_path):
    env = _fake_renderer(tmp_path, "cat > /dev/null\nexit 0\n")
    out = tmp_path / "graph.svg"
    out.write_text("<svg>old</svg>")
    r = run("render", BASICS, "-o", out, "--renderer", "dot", extra_env=env)
    assert_clean_user_error(r, "wrote nothing")
    assert out.read_text() == "<svg>old</svg>"
    assert not _leftovers(tmp_path)


def test_sigterm_ends_the_renderer_child_with_gradtool(tmp_path):
    pidfile = tmp_path / "renderer.pid"
    env = _fake_renderer(tmp_path, f"echo $$ > {pidfile}.tmp\nmv {pidfile}.tmp {pidfile}\n"
                                   "exec sleep 600\n")
    out = tmp_path / "graph.svg"
    proc = subprocess.Popen([GRADTOOL, "render", BASICS, "-o", out, "--renderer", "dot"],
                            cwd=REPO, env=cu.env(**env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = None
    try:
        for _ in range(1200):  # until the renderer runs (a poll, not a timing assertion)
            if pidfile.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert pidfile.exists(), f"the fake renderer never started: {proc.communicate()}"
        child = int(pidfile.read_text())
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, stderr)
        assert "SIGTERM" in stderr and "Traceback" not in stderr, stderr
        with pytest.raises(ProcessLookupError):  # ended and reaped by gradtool, not orphaned
            os.kill(child, 0)
        child = None
        assert not out.exists() and not _leftovers(tmp_path)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if child is not None:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass


# ------------------------------------------------------------------ the user's file

def test_no_pycache_is_written_beside_the_users_files(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # as on a user's machine
    (tmp_path / "helper.py").write_text("def square(x):\n    return x * x\n")
    user = tmp_path / "user.py"
    user.write_text("from helper import square\n\n\ndef f(x):\n    return square(x).sum()\n")
    assert_exit(run("inspect", user), 0)
    assert "__pycache__" not in os.listdir(tmp_path)


def test_relative_output_is_resolved_before_the_users_file_changes_directory(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    user = tmp_path / "user.py"
    user.write_text(f"import os\nos.chdir({str(elsewhere)!r})\n\n\n"
                    "def f(x):\n    return (x * x).sum()\n")
    r = run("render", "user.py", "-o", "graph.dot", cwd=tmp_path)
    assert_exit(r, 0)
    assert (tmp_path / "graph.dot").read_text().startswith("digraph")
    assert os.listdir(elsewhere) == []


def test_json_stdout_survives_atexit_and_low_level_writes(tmp_path):
    user = tmp_path / "noisy.py"
    user.write_text(textwrap.dedent("""\
        import atexit
        import os
        import sys

        atexit.register(print, "bye from atexit")
        atexit.register(lambda: sys.stdout.write("more at exit\\n"))
        os.write(1, b"raw write to fd 1\\n")


        def f(x):
            os.system("echo from a child process")
            return (x * x).sum()
        """))
    for r in cu.run_many([["inspect", "--json", user], ["gradcheck", "--json", user]]):
        assert_exit(r, 0)
        assert r.json()["targets"][0]["name"] == "f"
        for noise in ("bye from atexit", "more at exit", "raw write to fd 1",
                      "from a child process"):
            assert noise in r.stderr, f"{noise!r} lost\n{r}"


# ------------------------------------------------------------------ save_on_disk

def test_save_on_disk_files_are_private_and_removed(tmp_path):
    x = gt.tensor(np.linspace(0.5, 1.5, 4), requires_grad=True)
    with gt.autograd.graph.save_on_disk(directory=str(tmp_path)):
        y = (x.exp() * x).sum()
    spilled = list(tmp_path.iterdir())
    assert spilled, "nothing was spilled to disk"
    for f in spilled:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f"{f.name} is readable by others"
    y.backward()
    assert list(tmp_path.iterdir()) == [], "backward left spilled tensors on disk"
    xs = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xs) * (1 + xs))

    with gt.autograd.graph.save_on_disk(directory=str(tmp_path)):
        y = (x.sin() * x).sum()
    assert list(tmp_path.iterdir())
    del y
    gc.collect()
    assert list(tmp_path.iterdir()) == [], "a graph dropped without backward left its files"


# ------------------------------------------------------------------ Ctrl-C and --timeout

_LOOPS = """\
import pathlib

import gradtool


@gradtool.example((3,))
def quick(x):
    return (x * 2).sum()


@gradtool.example((3,))
def forever(x):
    pathlib.Path(__file__).with_name("started").touch()
    while True:
        x = x * 1.0  # the loop
"""


def _loop_lines(user):
    """A pattern for either line of the endless loop (the signal lands on one of them)."""
    return (f"({cu.source_line(user, 'while True:')}|"
            f"{cu.source_line(user, '# the loop')})")


def test_ctrl_c_names_the_running_target_and_exits_130(tmp_path):
    user = tmp_path / "loops.py"
    user.write_text(_LOOPS)
    proc = subprocess.Popen(  # SIGINT as a terminal delivers it (not ignored, as in `cmd &`)
        [GRADTOOL, "inspect", user], cwd=REPO, env=cu.env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for _ in range(1200):  # until the loop runs (a poll, not a timing assertion)
            if (tmp_path / "started").exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert (tmp_path / "started").exists(), proc.communicate()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, stderr)
    said = cu.flat(stderr)
    assert "SIGINT received while running target forever (loops.py:" in said, stderr
    where = f"\\) at {re.escape(str(user))}:{_loop_lines(user)}; stopped\\."
    assert re.search(where, said), stderr
    assert "Traceback" not in stderr and "Aborted" not in stderr, stderr


def test_timeout_stops_a_target_that_loops_forever(tmp_path):
    user = tmp_path / "loops.py"
    user.write_text(_LOOPS)
    stuck, quick, zero, nan = cu.run_many([
        ["gradcheck", "--timeout", "2", user], ["inspect", "--timeout", "60", f"{user}::quick"],
        ["inspect", "--timeout", "0", user], ["render", user, "-o", tmp_path / "g.svg",
                                              "--timeout", "nan"]])
    # the stuck target's error is reported in its place (the others go on), exit 2
    assert_exit(stuck, 2)
    message = cu.flat(stuck.stdout)
    assert "target forever (loops.py:" in message and "did not finish within --timeout 2 s; "\
        "it was at" in message, stuck
    assert re.search(f"it was at {re.escape(cu.flat(str(user)))}:{_loop_lines(user)}\\.",
                     message), stuck
    assert re.search(f'File "{re.escape(str(user))}", line {_loop_lines(user)}, in forever',
                     stuck.stdout), stuck
    assert "dataclasses" not in message and "numpy" not in message, stuck
    assert_exit(quick, 0)
    assert_clean_user_error(zero, "--timeout must be a positive number of seconds")
    assert_clean_user_error(nan, "--timeout must be a positive number of seconds")


def test_signals_the_caller_ignores_stay_ignored():
    """Under nohup (SIGHUP ignored) gradtool must not start dying on a hang-up."""
    import sys
    probe = ("import signal; from gradtool.cli import interrupts; interrupts.install(); "
             "print(signal.getsignal(signal.SIGHUP) is signal.SIG_IGN, "
             "signal.getsignal(signal.SIGTERM) is interrupts._raise_terminated)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, preexec_fn=lambda: signal.signal(signal.SIGHUP,
                                                                        signal.SIG_IGN))
    assert done.stdout.split() == ["True", "True"], done


def test_render_refuses_a_character_device(tmp_path):
    """A private copy of /dev/null (mknod needs root; /dev/null itself is never risked)."""
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    r = run("render", BASICS, "-o", device, "--format", "dot")
    assert_clean_user_error(r, "refusing to write", "a character device")
    assert stat.S_ISCHR(os.stat(device).st_mode) and not _leftovers(tmp_path)
