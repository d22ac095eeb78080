"""How long `gradtool render` takes on large graphs (default grouping): a residual model
with repeated blocks (examples/resnet_like.py) at about 5,000 and 20,000 nodes, and a plain
20,000-op chain. Prints, per graph and phase, the median of a few runs in seconds:

    capture   forward under the trace, snapshot, backward, diagnostics (inspect does this too)
    svg       grouping (layout.py) + DOT + graphviz-pure's layout and SVG
    html      the same for every view of the page, and the page itself
    cli       the whole `gradtool render -o graph.html` as a user runs it

    .venv/bin/python benchmarks/render_bench.py [--repeat 3]
Targets (issue 14): 5,000 nodes within 3 s and 20,000 within 10 s on 2 cores, HTML included.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

MODEL = textwrap.dedent("""\
    import gradtool
    import gradtool as torch
    from resnet_like import ResNetLike

    torch.manual_seed(0)
    model = ResNetLike(width=8, depth={blocks}, steps={steps}).double()

    @gradtool.example((2, 4))
    def big(x):
        return model(x)
    """)
CHAIN = textwrap.dedent("""\
    import gradtool

    @gradtool.example((3,))
    def chain(x):
        y = x
        for _ in range({ops}):
            y = y * 1.0000001
        return y.sum()
    """)


def timed(fn, repeat):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    from gradtool.loader import load
    from gradtool.report import dot, html
    from gradtool.snapshot import capture
    renderer = dot.find_renderer("auto", "svg")
    cases = {"model ~5,000 nodes": MODEL.format(blocks=180, steps=20),
             "model ~20,000 nodes": MODEL.format(blocks=720, steps=80),
             "chain 20,000 ops": CHAIN.format(ops=20_000)}
    print(f"{'graph':<22}{'nodes':>8}{'capture':>10}{'svg':>8}{'html':>8}{'cli html':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for name, source in cases.items():
            path = os.path.join(folder, f"case{len(os.listdir(folder))}.py")
            with open(path, "w") as f:
                f.write(source)
            sys.path.insert(0, os.path.join(REPO, "examples"))
            target = load(path)[0]
            t_capture, cap = timed(lambda: capture(target), args.repeat)
            t_svg, _ = timed(lambda: dot.render(dot.build(cap.snapshot, diagnoses=cap.diagnostics),
                                                "svg", renderer), args.repeat)
            t_html, _ = timed(lambda: html.page([cap], renderer), args.repeat)
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "examples"))
            gradtool = os.path.join(os.path.dirname(sys.executable), "gradtool")
            t_cli, _ = timed(lambda: subprocess.run(
                [gradtool, "render", path, "-o", os.path.join(folder, "out.html")], env=env,
                check=True, capture_output=True), args.repeat)
            print(f"{name:<22}{len(cap.snapshot.nodes):>8,}{t_capture:>10.2f}{t_svg:>8.2f}"
                  f"{t_html:>8.2f}{t_cli:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
