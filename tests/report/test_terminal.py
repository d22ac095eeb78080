"""What the commands print in a terminal: at 80 columns no word or number is split across
lines (columns are left out instead, and the caption says which), and --quiet prints one
line per target for CI logs. The CLI runs as a user runs it, COLUMNS set as a terminal sets
it."""
import re

import pytest

import cli_util as cu

NARROW = [["inspect", cu.EXAMPLES + "/model.py"],
          ["inspect", cu.EXAMPLES + "/inplace_trouble.py"],
          ["gradcheck", cu.EXAMPLES + "/broken_wrong_gradient.py"],
          ["gradcheck", cu.EXAMPLES + "/model.py"],
          ["gradcheck", cu.EXAMPLES + "/higher_order.py", "--order", "2"]]


@pytest.fixture(scope="module")
def narrow_and_wide():
    runs = cu.run_many([[*a, "--no-color"] for a in NARROW], extra_env={"COLUMNS": "80"})
    wide = cu.run_many([[*a, "--no-color"] for a in NARROW], extra_env={"COLUMNS": "400"})
    return list(zip(NARROW, runs, wide))


def _words(text):
    """Words, their trailing punctuation aside; rules (────) are drawn to the width."""
    return {w.rstrip(";,.") for w in text.split() if set(w) != {"─"}}


def test_at_80_columns_no_word_or_number_is_split(narrow_and_wide):
    for args, narrow, wide in narrow_and_wide:
        assert narrow.returncode == wide.returncode, str(narrow)
        lines = narrow.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80, str(narrow)
        # every word of the narrow output is a word of the wide one (a split token such as
        # `PowBac|kward0` or `0.0912|1` would be two new words), the note on what was left
        # out aside
        notes = {w for line in re.findall(r"left out to fit 80 columns:[^(]*\(--json has them\)",
                                         " ".join(lines)) for w in line.split()}
        new = _words(narrow.stdout) - _words(wide.stdout) - notes
        assert not new, f"{args}: split into {sorted(new)}\n{narrow.stdout}"


def test_columns_left_out_are_named_and_the_verdict_kept(narrow_and_wide):
    inspect_model = narrow_and_wide[0][1]
    assert "left out to fit 80 columns: mean, min, max" in cu.flat(inspect_model.stdout)
    assert "_saved_mat1" in inspect_model.stdout and "float64[2, 4]" in inspect_model.stdout
    failing = narrow_and_wide[2][1]
    assert failing.returncode == 1 and "FAIL" in failing.stdout
    assert "1.23 ≠ 0.8203" in failing.stdout  # the Jacobians side by side still fit


def test_quiet_prints_one_line_per_target(tmp_path):
    gradcheck, inspect_, both = cu.run_many([
        ["gradcheck", cu.EXAMPLES + "/broken_wrong_gradient.py", "-q"],
        ["inspect", cu.EXAMPLES + "/inplace_trouble.py", "--quiet"],
        ["gradcheck", cu.EXAMPLES + "/basics.py", "-q", "--json"]], extra_env={"COLUMNS": "80"})
    assert gradcheck.returncode == 1 and len(gradcheck.stdout.splitlines()) == 1
    assert re.match(r"FAIL  Cube  examples/broken_wrong_gradient\.py:8  1 pair, max abs error "
                    r"0\.4101 .*wrong_gradient: ", gradcheck.stdout), gradcheck.stdout
    lines = inspect_.stdout.splitlines()
    assert inspect_.returncode == 1 and len(lines) == 3, inspect_.stdout
    assert lines[0].startswith("ERROR overwrites_saved_output  examples/inplace_trouble.py:9  ")
    assert "backward through ExpBackward0 will fail (examples/inplace_trouble.py:12)" in lines[0]
    assert lines[1].startswith("OK    out_of_place  ")
    assert both.returncode == 2 and "--quiet and --json" in cu.flat(both.stderr)
