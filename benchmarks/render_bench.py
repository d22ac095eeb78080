"""How long `gradtool render` takes on large graphs (default grouping): a residual model
with repeated blocks (examples/resnet_like.py) at about 5,000 and 20,000 nodes, and a plain
20,000-op chain. Prints, per graph and phase, the median of a few runs in seconds:

    capture   forward under the trace, snapshot, backward, diagnostics (inspect does this too)
    svg       grouping (layout.py) + DOT + graphviz-pure's layout and SVG
    html      the explorer page: grouping, what opens with each box, the nodes' data
    cli svg   the whole `gradtool render -o graph.svg` as a user runs it (Python's start,
              the user's file, capture, drawing, writing)
    cli html  the whole `gradtool render -o graph.html`; then the page's size

    .venv/bin/python benchmarks/render_bench.py [--repeat 3]
Targets: 5,000 nodes within 3 s and 20,000 within 10 s on 2 cores, HTML included.
"""
import argparse
import gc
import os
import resource
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


def cpu():
    """CPU seconds of this process and its finished children: on a shared machine, what the
    work costs; wall time says what it took with the load there was."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, repeat):
    """(median wall seconds, median CPU seconds, last result)."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), cpu()
        result = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu() - start_cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    from gradtool.capture.loader import load
    from gradtool.report import dot, html
    from gradtool.checks.inspection import capture
    renderer = dot.find_renderer("auto")
    cases = {"model ~5,000 nodes": MODEL.format(blocks=375, steps=20),
             "model ~20,000 nodes": MODEL.format(blocks=1500, steps=80),
             "chain 20,000 ops": CHAIN.format(ops=20_000)}
    print("seconds, wall / CPU (CPU counts the renderer subprocesses too)")
    print(f"{'graph':<22}{'nodes':>8}{'capture':>14}{'svg':>14}{'html':>14}{'cli svg':>14}"
          f"{'cli html':>14}{'page':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for name, source in cases.items():
            path = os.path.join(folder, f"case{len(os.listdir(folder))}.py")
            with open(path, "w") as f:
                f.write(source)
            sys.path.insert(0, os.path.join(REPO, "examples"))
            target = load(path)[0]
            # the first capture is drawn: a target captured again in the same process groups
            # differently (module boxes split into parts), not as the CLI draws it
            cap = capture(target)
            t_capture = timed(lambda: capture(target), args.repeat)
            gc.collect()
            gc.freeze()  # as `gradtool render` does once its captures are made
            t_svg = timed(lambda: dot.render(dot.build(cap.snapshot, diagnoses=cap.diagnostics),
                                             "svg", renderer), args.repeat)
            t_html = timed(lambda: html.page([cap]), args.repeat)
            # this checkout's gradtool, whatever the venv has installed
            env = dict(os.environ,
                       PYTHONPATH=os.pathsep.join([REPO, os.path.join(REPO, "examples")]))
            t_cli = {fmt: timed(lambda: subprocess.run(
                [sys.executable, "-m", "gradtool", "render", path, "-o",
                 os.path.join(folder, f"out.{fmt}")], env=env, check=True, capture_output=True),
                args.repeat) for fmt in ("svg", "html")}
            cells = "".join(f"{f'{t[0]:.2f} / {t[1]:.2f}':>14}"
                            for t in (t_capture, t_svg, t_html, t_cli["svg"], t_cli["html"]))
            size = os.path.getsize(os.path.join(folder, "out.html")) / 1e6
            print(f"{name:<22}{len(cap.snapshot.nodes):>8,}{cells}{f'{size:.1f} MB':>9}",
                  flush=True)
            gc.unfreeze()


if __name__ == "__main__":
    main()
