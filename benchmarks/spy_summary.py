"""Summarise a py-spy `--format raw` profile (collapsed stacks): inclusive and self time per
function, and self time per source line (numpy's C time shows on the line that calls it).

    .venv/bin/py-spy record -r 1000 -f raw -o /tmp/w1.txt -- \\
        .venv/bin/python benchmarks/profile_w1.py --loop 15
    .venv/bin/python benchmarks/spy_summary.py /tmp/w1.txt --within step --per 1000
"""
import argparse
import collections
import re

FRAME = re.compile(r"^(?P<fn>.*) \((?P<file>[^():]*):(?P<line>\d+)\)$")


def parse(path):
    for raw in open(path):
        raw = raw.rstrip("\n")
        if not raw:
            continue
        stack, _, count = raw.rpartition(" ")
        frames = []
        for f in stack.split(";"):
            m = FRAME.match(f)
            frames.append((m["fn"], m["file"].split("site-packages/")[-1], int(m["line"]))
                          if m else (f, "", 0))
        yield frames, int(count)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path")
    p.add_argument("--within", default=None,
                   help="keep only samples under a frame of this function (e.g. step)")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    incl = collections.Counter()
    self_fn = collections.Counter()
    self_line = collections.Counter()
    total = 0
    for frames, n in parse(args.path):
        if args.within:
            idx = [i for i, f in enumerate(frames) if f[0] == args.within]
            if not idx:
                continue
            frames = frames[idx[0]:]
        total += n
        seen = set()
        for fn, file, _ in frames:
            key = f"{fn} ({file})"
            if key not in seen:
                seen.add(key)
                incl[key] += n
        fn, file, line = frames[-1]
        self_fn[f"{fn} ({file})"] += n
        self_line[f"{fn} ({file}:{line})"] += n
    print(f"{total} samples{' under ' + args.within if args.within else ''}\n")
    for title, counter in (("inclusive", incl), ("self, per function", self_fn),
                           ("self, per line", self_line)):
        print(f"-- {title}")
        for key, n in counter.most_common(args.top):
            print(f"{100 * n / total:6.1f}%  {key}")
        print()


if __name__ == "__main__":
    main()
