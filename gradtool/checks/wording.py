"""Counts as words: `1 entry`, `3 entries`. Every message and report that prints a count
says it through count(), so that no message reads "1 differing entries"."""

_IRREGULAR = {"entry": "entries", "this": "these", "differs": "differ", "is": "are",
              "was": "were", "has": "have"}


def plural(n, noun):
    """`noun` as it goes with the number n (of a phrase, its last word: `differing entry`)."""
    if n == 1:
        return noun
    head, _, last = noun.rpartition(" ")
    many = _IRREGULAR.get(last) or (last + "es" if last.endswith(("s", "x", "ch", "sh"))
                                    else last + "s")
    return f"{head} {many}" if head else many


def count(n, noun, *, grouped=True):
    """`n noun` with the noun agreeing with n; thousands separated (`1,200 entries`) unless
    not `grouped`."""
    return f"{n:,} {plural(n, noun)}" if grouped else f"{n} {plural(n, noun)}"
