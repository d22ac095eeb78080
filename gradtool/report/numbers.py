"""Numbers as every report shows them: rounded once, here, to the digits shown. A report lays
its columns out on these strings and leaves whole columns out rather than cut one (text.py),
so what is printed is always the value rounded, never truncated."""
import math

DIGITS = 4  # significant digits of a number in a report (the JSON has all of them)


def fmt_num(x, digits=DIGITS, missing=""):
    """x rounded to `digits` significant digits (0.4670 -> 0.467, 0.00079064 -> 0.0007906,
    1e12 -> 1e+12); nan, inf and -inf by name; `missing` for None. -0 shows as 0: the sign
    of a zero is noise here."""
    if x is None:
        return missing
    x = float(x)
    if not math.isfinite(x):
        return str(x)  # "nan", "inf" or "-inf"
    return f"{x + 0.0:.{digits}g}"
