"""How long `gradtool inspect --json` takes on a long chain (tests/cli/test_cli.py's CHAIN_100K:
`y = y * 1.0000001` 100,000 times on a (2,) input, then `.sum()`), and its peak memory.
The goal: under 10 s and 1 GiB. Per run, as a user starts it (a subprocess):

    wall, CPU (user + system), max RSS      of `gradtool inspect --json chain.py > file`
    nodes, MB                                the document parsed back: complete and valid

and, in this process, the CPU seconds of its phases: capture (forward under the trace,
snapshot, backward, diagnostics) and the document (built and written to /dev/null). `--commands` also times
`inspect` (text) and `render -o chain.svg` of the same file.

    .venv/bin/python benchmarks/inspect_json_bench.py [--ops 100000] [--repeat 3] [--commands]
On a shared machine read CPU seconds beside wall time, and note the load average printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GRADTOOL = os.path.join(os.path.dirname(sys.executable), "gradtool")

CHAIN = textwrap.dedent("""\
    import gradtool


    @gradtool.example((2,))
    def chain(x):
        y = x
        for _ in range({ops}):
            y = y * 1.0000001
        return y.sum()
    """)


def run_cli(args, stdout):
    """(wall s, CPU s, max RSS MB) of one gradtool run, its stdout to the file `stdout`."""
    start = time.perf_counter()
    with open(stdout, "w") as out:
        proc = subprocess.Popen([GRADTOOL, *args], stdout=out, stderr=subprocess.PIPE,
                                cwd=os.path.dirname(args[1]))
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"gradtool {' '.join(args)} exited {code}:\n{stderr}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def phases(user):
    """(capture, document) CPU seconds in this process (one thread: CPU is its work)."""
    sys.path.insert(0, REPO)
    import gradtool.adapters as engines
    from gradtool.capture import loader
    from gradtool.report.json import chunks, inspect_document
    from gradtool.checks.inspection import capture
    with engines.use("gradtool") as engine, engine.importing():
        targets = loader.load(user)
        start = time.process_time()
        results = [capture(t, 0, (3,), None, localize=True) for t in targets]
    captured = time.process_time()
    with open(os.devnull, "w") as out:
        for piece in chunks(inspect_document(user, 0, (3,), results)):
            out.write(piece)
    return captured - start, time.process_time() - captured


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commands", action="store_true",
                        help="also time `inspect` (text) and `render -o chain.svg`")
    parser.add_argument("--no-phases", action="store_true")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="gradtool_inspect_bench_")
    user = os.path.join(folder, "chain.py")
    with open(user, "w") as f:
        f.write(CHAIN.format(ops=args.ops))
    print(f"{args.ops:,}-op chain; load average {os.getloadavg()[0]:.2f} at the start")
    commands = {"inspect --json": ["inspect", user, "--json"]}
    if args.commands:
        commands["inspect"] = ["inspect", user]
        commands["render -o chain.svg"] = ["render", user, "-o",
                                           os.path.join(folder, "chain.svg")]
    runs = {name: [] for name in commands}
    out = os.path.join(folder, "out")
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            runs[name].append(run_cli(cmd, out))
            if name == "inspect --json":
                size = os.path.getsize(out)
                with open(out) as f:
                    nodes = len(json.load(f)["targets"][0]["graph"]["nodes"])
                assert nodes == args.ops + 2, nodes  # the muls, the sum, x's AccumulateGrad
    for name, samples in runs.items():
        wall, cpu, rss = (statistics.median(s) for s in zip(*samples))
        print(f"{name:22} wall {wall:6.2f} s  CPU {cpu:6.2f} s  max RSS {rss:6.0f} MB"
              f"  (runs: {', '.join(f'{w:.1f}' for w, _, _ in samples)} s wall)")
    print(f"document: {nodes:,} nodes, {size / 1e6:.0f} MB")
    if not args.no_phases:
        capture_s, document_s = phases(user)
        print(f"in process, CPU: capture {capture_s:.2f} s, document built and written "
              f"{document_s:.2f} s")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
