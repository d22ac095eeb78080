"""A display that cannot lie: every number a text report prints is the JSON's value rounded to
the digits shown (never cut), every line fits the width, and a table too wide leaves out
whole columns, named, never part of a token (a number, an index, a shape)."""
import json
import math
import re
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

import cli_util as cu
import display_util as du
import gradtool as gt
from gradtool.report import formats, text
from gradtool.report.numbers import fmt_num

MAGNITUDES = st.builds(lambda sign, e: sign * 10.0 ** e, st.sampled_from([1.0, -1.0]),
                       st.floats(-12, 12))
VALUES = st.one_of(MAGNITUDES, st.just(0.0), st.sampled_from([math.nan, math.inf, -math.inf]))
WIDTHS = st.integers(40, 200)


@given(st.one_of(VALUES, st.floats(allow_nan=True, allow_infinity=True)), st.integers(4, 9))
@example(5e-324, 4)  # the smallest subnormal: its last digit's unit underflows a float
@example(1.7976931348623157e308, 4)  # rounded, the text is beyond float's maximum
def test_a_number_is_rounded_to_the_digits_shown(value, digits):
    shown = fmt_num(value, digits)
    du.assert_rounded(shown, value)
    if math.isfinite(value):
        assert len(shown.lstrip("-").partition("e")[0].replace(".", "").lstrip("0")) <= digits


@pytest.mark.parametrize("cut", ["0.", "0.46", "0.000790", "1e-0", "0.00015"])
def test_the_checker_catches_a_cut_number(cut):
    value = {"0.": 0.5314, "0.46": 0.4670, "0.000790": 0.00079064, "1e-0": 1e-05,
             "0.00015": 0.0001552}[cut]
    with pytest.raises(AssertionError):
        du.assert_rounded(cut, value)


def _jacobians(a, b, input_shape):
    """A check whose numerical Jacobian is `a` (x @ a, x flattened) and analytical `b`."""
    ta, tb = gt.tensor(a), gt.tensor(b)

    class Linear(gt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.reshape(-1) @ ta

        @staticmethod
        def backward(ctx, grad):
            return (grad @ tb.T).reshape(input_shape)

    x = gt.tensor(np.ones(input_shape), requires_grad=True)
    return gt.check(Linear.apply, (x,))


@st.composite
def jacobian_pairs(draw):
    shape = draw(st.sampled_from([(1,), (3,), (9,), (2, 3), (3, 4), (12,)]))
    n_in, n_out = int(np.prod(shape)), draw(st.integers(1, 10))
    cells = st.lists(VALUES, min_size=n_in * n_out, max_size=n_in * n_out)
    a = np.array(draw(cells)).reshape(n_in, n_out)
    b = np.array(draw(cells)).reshape(n_in, n_out)
    return a, b, shape


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jacobian_pairs(), WIDTHS)
def test_every_number_of_a_gradcheck_report_is_its_json_value_rounded(pair, width):
    report = _jacobians(*pair)
    document = json.loads(formats.FORMATS["json"].write(report.findings))
    shown = report.text(width=width)
    du.check_report(shown, document, width)


TOKENS = st.one_of(
    st.builds(fmt_num, VALUES), st.builds(str, st.lists(st.integers(0, 99), max_size=3)),
    st.builds(lambda d, s: text.fmt_shape(s, d), st.sampled_from(["float32", "float64"]),
              st.lists(st.integers(1, 999), max_size=3)),
    st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=12))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text("abcdefgh ", min_size=1, max_size=16).filter(str.strip),
                          st.booleans(), st.booleans()), min_size=1, max_size=8,
                unique_by=lambda c: c[0].strip()),
       st.data(), WIDTHS)
def test_a_table_drops_whole_columns_and_never_splits_a_token(columns, data, width):
    from rich.console import Console
    import io
    grid = text.Grid(*(text.Column(h.strip(), right=r, prose=p) for h, r, p in columns))
    rows = data.draw(st.lists(st.lists(TOKENS, min_size=len(columns), max_size=len(columns))
                              .map(lambda cells: [" ".join(cells[:2])] + cells[1:]),
                              max_size=5))
    for row in rows:
        grid.add_row(*row)
    out = io.StringIO()
    con = Console(file=out, width=width, no_color=True, color_system=None)
    drop = [c.header for c in grid.columns[::2]]
    text.print_table(con, grid, drop)
    printed = out.getvalue()
    du.assert_fits(printed, width)
    gone = re.search(r"left out to fit \d+ columns: (.*) \(--json has them\)",
                     " ".join(printed.split()))  # (the caption wraps between words)
    gone = gone.group(1).split(", ") if gone else []
    words = set(printed.split())
    for row in rows:
        for column, cell in zip(grid.columns, row):
            if " ".join(column.header.split()) in gone:
                continue
            for token in text.TOKEN.findall(cell):  # each whole on one line
                assert token in printed.replace("\n", " \n "), (token, printed)
                if " " not in token:
                    assert token in words, (token, printed)


SIGMOID = """
    import gradtool as torch

    class Sigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            s = torch.sigmoid(x)
            ctx.save_for_backward(s)
            return s

        @staticmethod
        def backward(ctx, grad):
            s, = ctx.saved_tensors
            return grad * s  # should be grad * s * (1 - s)
    """

SCALED = """
    import gradtool as torch

    class Scaled(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y * 100

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y * 100, grad * x * 1e-3  # x's factor: 100
    """


@pytest.fixture(scope="module")
def wrong_functions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("display")
    runs = {}
    for name, source in (("sigmoid", SIGMOID), ("scaled", SCALED)):
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        args = ["gradcheck", str(path), "--shape", "2,3", "--no-color"]
        widths = (60, 80, 100, 120)
        results = [cu.run(*args, extra_env={"COLUMNS": str(w)}) for w in widths]
        document = json.loads(cu.run(*args, "--json").stdout)
        runs[name] = (document, dict(zip(widths, results)))
    return runs


@pytest.mark.parametrize("name", ["sigmoid", "scaled"])
def test_cli_prints_numbers_rounded_and_tokens_whole_at_every_width(wrong_functions, name):
    document, by_width = wrong_functions[name]
    for width, result in by_width.items():
        assert result.returncode == 1, result
        du.check_report(result.stdout, document, width)
        for line in result.stdout.splitlines():  # `[0, 2]`, `float64[2, 3]` on one line
            assert line.count("[") == line.count("]"), result.stdout
        assert "in \\ out" in result.stdout or "input element" in result.stdout


def test_cli_sigmoid_jacobian_side_by_side_at_120_columns(wrong_functions):
    document, by_width = wrong_functions["sigmoid"]
    out = by_width[120].stdout
    analytical = np.array(document["targets"][0]["reports"][0]["pairs"][0]["analytical"])
    for value in np.diag(analytical):
        assert re.search(rf"≠ {re.escape(fmt_num(value))}(\s|$)", out), out
    assert re.search(r"^ in \\ out +0 +1 +2 +3 +4 +5$", out, re.M), out
