"""The command's start: `gradtool --help`, --version and a usage error only parse arguments,
so they import typer and gradtool's command modules and nothing of what a command runs. A
behaviour test (which modules a real process imported, read from `python -X importtime`),
not a timing: it holds the start lean on any machine."""
import subprocess
import sys

import pytest

import cli_util as cu
from cli_util import GRADTOOL, REPO


# What a start that only parses arguments must not import: numpy (and the engine behind it),
# rich and the report modules, the checks and the loader; they load when a command runs.
HEAVY_FOR_HELP = ("numpy", "rich", "graphviz", "gradtool.engine.namespace",
                  "gradtool.engine.autograd", "gradtool.report.text", "gradtool.checks",
                  "gradtool.capture")


def _heavy(modules):
    return sorted(m for m in modules for h in HEAVY_FOR_HELP if m == h or m.startswith(h + "."))


def _imported_by(*argv):
    """The modules a `python -X importtime ARGV...` process imported, and its result."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True,
                          text=True, cwd=REPO, env=cu.env(), timeout=60,
                          stdin=subprocess.DEVNULL)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    return imported, done


@pytest.mark.parametrize("argv", [
    [GRADTOOL, "--help"], ["-m", "gradtool", "--help"], [GRADTOOL, "inspect", "--help"],
    [GRADTOOL, "gradcheck", "-h"], [GRADTOOL, "render", "--help"], [GRADTOOL, "--version"]])
def test_help_imports_only_the_command_line(argv):
    imported, done = _imported_by(*argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(("Usage: ", "gradtool "))
    assert {"typer", "gradtool.frontends.cli"} <= imported  # the record is read right
    assert not _heavy(imported), f"`gradtool {' '.join(argv[1:])}` imports {_heavy(imported)}"


@pytest.mark.parametrize("argv, message", [
    (["gradcheck", "--no-such-option", "f.py"], "No such option: --no-such-option"),
    (["inspect", "--engine", "bogus", "f.py"], "'bogus' is not one of 'gradtool', 'torch'"),
    (["inspect"], "Missing argument 'PATH'"), (["frob"], "No such command 'frob'")])
def test_a_usage_error_is_one_paragraph_and_imports_only_the_command_line(argv, message):
    imported, done = _imported_by(GRADTOOL, *argv)
    result = cu.Result(argv, done.returncode, done.stdout, done.stderr)
    cu.assert_clean_user_error(result, message, "Usage: gradtool", "for help.")
    assert "gradtool.frontends.cli" in imported and not _heavy(imported)


def test_bare_gradtool_prints_the_help_and_exits_2():
    imported, done = _imported_by(GRADTOOL)
    assert done.returncode == 2 and done.stdout == ""
    assert "Usage: gradtool" in done.stderr and "gradcheck" in done.stderr
    assert not _heavy(imported)


def test_importing_the_cli_leaves_the_engine_unloaded():
    imported, done = _imported_by("-c", "import gradtool.cli")  # the old path, an alias
    assert done.returncode == 0, done.stderr
    assert "typer" in imported and not _heavy(imported)
