"""Every format of the registry (gradtool/report/formats.py) written from the command line as a
user asks for it, and read back by a reader of that format; the options whose values are
choices refuse any other, naming them, and --help lists them."""
import os
import shutil

import pytest

import cli_util as cu
from cli_util import assert_clean_user_error, assert_exit
from gradtool.frontends.cli import common, gradcheck_cmd, render_cmd
from gradtool.report.formats import FORMATS

BASICS = os.path.join(cu.EXAMPLES, "basics.py")
# How the command line writes the formats that are not drawings (a drawing: render -o)
NOT_DRAWN = {"text": ["gradcheck", "--no-color", BASICS], "json": ["gradcheck", "--json", BASICS],
             "heatmap": ["gradcheck", BASICS, "--html"]}


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_is_written_from_the_command_line(name, tmp_path):
    fmt = FORMATS[name]
    if fmt.needs_dot and shutil.which("dot") is None:
        pytest.skip(f"{name} needs the system Graphviz `dot`, which is not on PATH")
    if "graph" in fmt.of:  # from the -o suffix, and from --format
        paths = [tmp_path / f"g.{suffix}" for suffix in fmt.suffixes] + [tmp_path / "g.out"]
        runs = cu.run_many([["render", BASICS, "-o", p] for p in paths[:-1]]
                           + [["render", BASICS, "-o", paths[-1], "--format", name.upper()]])
        expected = "MulBackward0"
    else:
        assert name in NOT_DRAWN, f"the command line cannot write the format {name}"
        paths = [tmp_path / f"out.{fmt.suffixes[0]}"]
        args = NOT_DRAWN[name] + ([paths[0]] if name == "heatmap" else [])
        runs = [cu.run(*args)]
        if args[-1] != paths[0]:  # what it writes on stdout
            paths[0].write_text(runs[0].stdout)
        expected = "LegendrePolynomial3"
    for r, path in zip(runs, paths):
        assert_exit(r, 0)
        text = cu.read_written(name, path)
        assert fmt.binary or expected in text, (path, text[:500])


CHOICES = [("inspect", "--engine", common.Engine), ("gradcheck", "--against", common.Against),
           ("gradcheck", "--localize", gradcheck_cmd.Localize),
           ("gradcheck", "--mode", gradcheck_cmd.Mode),
           ("render", "--format", render_cmd.DrawingFormat),
           ("render", "--renderer", render_cmd.Renderer)]


def test_a_choice_not_offered_exits_2_naming_the_choices_that_help_lists(tmp_path):
    out = ["-o", tmp_path / "g.svg"]
    runs = cu.run_many([[cmd, option, "bogus", BASICS, *(out if cmd == "render" else [])]
                        for cmd, option, _ in CHOICES]
                       + [[cmd, "--help"] for cmd in ("inspect", "gradcheck", "render")])
    helps = dict(zip(("inspect", "gradcheck", "render"), runs[len(CHOICES):]))
    for (cmd, option, choices), r in zip(CHOICES, runs):
        values = [c.value for c in choices]
        assert_clean_user_error(r, option, "bogus", *(repr(v) for v in values))
        assert_exit(helps[cmd], 0)
        assert "<" + "|".join(values) + ">" in helps[cmd].stdout, (option, helps[cmd].stdout)
    assert not list(tmp_path.iterdir())
