"""Reading a gradcheck text report back: every number it prints checked against the JSON
document's value (the number shown must be that value rounded to the digits shown), every
line against the width. Used by tests/report (the CLI, in process) and tests/frontends (the
notebook API)."""
import decimal
import math
import re

# what the report's formatter writes: no cut mantissa (`0.`), no cut exponent (`1e-0`)
NUMBER = re.compile(r"-?(?:\d+(?:\.\d+)?(?:e[+-]\d\d+)?|inf)|nan")
PAIR_COLUMNS = ["output", "input", "max abs error", "max rel error",
                "there: numerical vs analytical", "result"]
LIST_ROW = re.compile(r" +(\[[^\]]*\]) +(\[[^\]]*\])((?: +\S+)*)$")


def assert_rounded(shown, value):
    """`shown` is `value` (a JSON number, or "nan", "inf", "-inf") rounded to the digits
    shown, at least 4 significant ones."""
    value = float(value)
    assert NUMBER.fullmatch(shown), f"{shown!r} is not a whole number (for {value!r})"
    if math.isnan(value) or math.isinf(value):
        assert shown == str(value), (shown, value)
        return
    mantissa, _, exponent = shown.lstrip("-").partition("e")
    # all in decimal: the unit of the last digit of a subnormal (4.941e-324) underflows a
    # float, and the rounded text of a value near float's maximum (1.798e+308) is beyond it
    D = decimal.Decimal
    last = D(1).scaleb(int(exponent or 0) - len(mantissa.partition(".")[2]))
    error = abs(D(shown) - D(value))
    slack = D("1.000000001")
    assert error <= last / 2 * slack, f"{shown} is not {value!r} rounded (cut?)"
    assert error <= D("5e-4") * abs(D(value)) * slack, f"{shown}: fewer than 4 digits of {value!r}"


def assert_fits(text, width):
    for line in text.splitlines():
        assert len(line) <= width, f"{len(line)} > {width} columns: {line!r}\n{text}"


def _is_rule(line):
    return bool(line.strip()) and set(line.strip()) == {"─"}


def _cells(line):
    """(start, text) of each cell of a table line: cells are 3 or more spaces apart."""
    return [(m.start(), m.group()) for m in re.finditer(r"\S+(?: {1,2}\S+)*", line)]


def _left_out(lines, start):
    """The columns a table's caption says were left out."""
    caption = " ".join(lines[start:start + 4])
    m = re.search(r"left out to fit \d+ columns: (.*?) \(--json has them\)", caption)
    return m.group(1).split(", ") if m else []


def check_report(text, document, width):
    """Every line of `text` (the text report of one gradcheck target, one order) fits `width`;
    every number of its pair table and Jacobians is the JSON document's value rounded.
    Returns how many numbers were checked."""
    assert_fits(text, width)
    lines = text.splitlines()
    (target,) = document["targets"]
    (report,) = target["reports"]
    checked = 0
    rules = [k for k, line in enumerate(lines) if _is_rule(line)]
    pair_rule = rules[0]
    # the pair table: one row per pair, its first line starting with the output's name
    rows, k = [], pair_rule + 1
    while k < len(lines) and lines[k].startswith(" ") and not lines[k].lstrip()[:1] in "✗!i":
        if not lines[k].startswith("    "):
            rows.append([])
        rows[-1].append(lines[k])
        k += 1
    assert len(rows) == len(report["pairs"]), text
    gone = _left_out(lines, k)
    columns = [c for c in PAIR_COLUMNS if c not in gone]
    for pair, row in zip(report["pairs"], rows):
        cells = _cells(row[0])
        by_name = dict(zip(columns, cells))
        for name, key in (("max abs error", "max_abs_error"), ("max rel error", "max_rel_error")):
            if name in by_name:
                assert_rounded(by_name[name][1], pair[key])
                checked += 1
        there = by_name.get("there: numerical vs analytical")
        if there is not None and pair["worst"]:
            end = by_name["result"][0] if "result" in by_name else None
            prose = " ".join(line[there[0]:end].strip() for line in row)
            m = re.fullmatch(r"in(\[[^\]]*\]) → out(\[[^\]]*\]): (\S+) vs (\S+)", prose.strip())
            assert m, prose
            worst = pair["worst"]
            assert m.group(1) == str(worst["input_element"]), prose
            assert m.group(2) == str(worst["output_element"]), prose
            assert_rounded(m.group(3), worst["numerical"])
            assert_rounded(m.group(4), worst["analytical"])
            checked += 2
    # the Jacobians of the failing pairs, after their headings
    failing = [p for p in report["pairs"] if not p["passed"] and p["numerical"] is not None]
    for pair, rule in zip(failing, rules[1:]):
        header = lines[rule - 1]
        body = []
        for line in lines[rule + 1:]:
            if not line.startswith(" ") or line.lstrip()[:1] in "✗!":
                break
            body.append(line)
        if "in \\ out" in header:  # side by side: row index, then `numerical ≠|| analytical`
            shown = [int(j) for j in header.split()[3:]]
            assert shown == list(range(len(pair["numerical"][0]))), header
            for line in body:
                i = int(line.split()[0])
                cells = re.findall(r"(\S+) ([≠|]) (\S+)", line)
                assert len(cells) == len(shown), line
                for j, (num, _, ana) in zip(shown, cells):
                    assert_rounded(num, pair["numerical"][i][j])
                    assert_rounded(ana, pair["analytical"][i][j])
                    checked += 2
        else:  # the differing entries, in the JSON's order
            gone = _left_out(lines, rule + 1 + len(body))
            values = [c for c in ("numerical", "analytical") if c not in gone]
            assert len(body) == min(20, len(pair["differing"])), text
            for line, entry in zip(body, pair["differing"]):
                m = LIST_ROW.fullmatch(line)
                assert m, line
                assert m.group(1) == str(entry["input_element"]), line
                assert m.group(2) == str(entry["output_element"]), line
                numbers = m.group(3).split()
                for name, shown in zip(values, numbers):
                    assert_rounded(shown, entry[name])
                    checked += 1
    return checked
