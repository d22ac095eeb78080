"""Every format of the registry (gradtool/report/formats.py) written from the command line as a
user asks for it, and read back by a reader of that format; the options whose values are
choices refuse any other, naming them, and --help lists them."""
import os
import re
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


def test_an_unknown_suffix_names_every_suffix_the_registry_writes(tmp_path):
    r = cu.run("render", BASICS, "-o", tmp_path / "out.jpg")
    from gradtool.report.formats import names
    suffixes = [f".{s}" for n in names("graph") for s in FORMATS[n].suffixes]
    message = assert_clean_user_error(r, "cannot tell the format from .jpg", *suffixes,
                                      "--format (one of " + ", ".join(names("graph")))
    assert ".html" in message
    assert not list(tmp_path.iterdir())


ONE_WRONG_ENTRY = '''\
import torch


class AlmostSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad * torch.tensor([1.5, 1.0, 1.0], dtype=x.dtype)  # wrong at [0]
'''


def test_counts_agree_with_their_nouns(tmp_path):
    """`1 differing entry`, `1 entry differs`, `1 more such entry`: never `1 ... entries`."""
    (tmp_path / "almost.py").write_text(ONE_WRONG_ENTRY)
    one, kink = cu.run_many([["gradcheck", tmp_path / "almost.py", "--no-color"],
                             ["gradcheck", os.path.join(cu.EXAMPLES, "broken_kink.py"), "-q"]])
    assert_exit(one, 1)
    text = cu.flat(one.stdout)
    assert "numerical | analytical, 1 differing entry marked ≠" in text
    assert "(1 entry differs)" in text
    assert_exit(kink, 1)
    assert "(1 more such entry)" in kink.stdout
    for r in (one, kink):
        assert not re.search(r"\b1 (differing |more such )?entries", r.stdout), r.stdout
