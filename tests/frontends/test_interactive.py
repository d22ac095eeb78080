"""gradtool from Python (gradtool/frontends/notebook.py): draw, inspect and check return objects that
print as the CLI prints and show as HTML in Jupyter. Compared with the CLI run on the same
file; on real PyTorch tensors where torch is installed (parity)."""
import os
import re
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import cli_util as cu
import gradtool
import gradtool as gt
from gradtool.engine import nn
from gradtool.report.formats import FORMATS

try:
    import torch
except ImportError:
    torch = None


class Cube(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 2 * x ** 2  # wrong: 3 x^2


def test_draw_names_leaves_by_params_and_modules_and_groups_by_module_call(tmp_path):
    gt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    x = gt.randn(3, 4, dtype=gt.float64, requires_grad=True)
    loss = model(x).pow(2).mean()
    graph = gradtool.draw(loss, params=dict(model.named_parameters()))
    assert repr(graph) == "<gradtool.Graph loss: 12 nodes>"
    source = graph.source
    assert '>model.0 (Linear)</td>' in source  # the module's frame, titled
    for name in ("model.0.weight", "model.2.bias", "x"):  # the user's names on the leaves
        assert f'label="{name}\n' in source, name
    svg = ET.fromstring(graph.svg())
    texts = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert "model.0.weight" in texts and "MeanBackward0" in texts
    shown = graph._repr_html_()  # the SVG, and the explorer's data for its button
    assert '<div class="gradtool-static"><svg' in shown and "model.0.weight" in shown
    assert 'class="gradtool-data"' in shown
    assert not hasattr(graph, "_repr_svg_")  # Jupyter would keep the SVG twice
    for suffix in ("svg", "dot", "html"):
        path = graph.save(tmp_path / f"g.{suffix}")
        assert os.path.getsize(path) > 500
    assert (tmp_path / "g.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    with pytest.raises(gradtool.errors.GradtoolError, match="cannot tell the format from .txt"):
        graph.save(tmp_path / "g.txt")


def test_the_explorer_travels_with_the_first_graph_and_again_when_its_cell_reruns(
        monkeypatch):
    """In a kernel, one output carries the explorer's libraries: the first graph's, and the
    new output of that cell when it runs again (it replaces the one that carried them)."""
    import types
    from gradtool.frontends import notebook
    shell = types.SimpleNamespace(cell="a", execution_count=1)
    shell.kernel = types.SimpleNamespace(
        get_parent=lambda channel=None: {"metadata": {"cellId": shell.cell}})
    monkeypatch.setattr(notebook, "_ipython_shell", lambda: shell)
    monkeypatch.setattr(notebook, "_explorer_carrier", {"cell": None, "execution": None})
    x = gt.tensor([0.5, -1.0], dtype=gt.float64, requires_grad=True)
    graph = gradtool.draw((x * x).sum())

    def carries():
        return 'class="gradtool-explorer-shell"' in graph._repr_html_()
    assert carries() and not carries()  # a second graph of the same run of the cell
    shell.cell, shell.execution_count = "b", 2
    assert not carries()
    shell.cell, shell.execution_count = "a", 3
    assert carries()
    monkeypatch.setattr(notebook, "_ipython_shell", lambda: None)  # no kernel: a page alone
    assert carries() and carries()


def test_draw_answers_torchvizs_graphviz_habits(tmp_path, monkeypatch):
    """make_dot returns a graphviz.Digraph; what its users call on it works on a Graph, with
    graphviz's paths and return values."""
    from gradtool.frontends import notebook
    x = gt.tensor([0.5, -1.0, 2.0], dtype=gt.float64, requires_grad=True)
    loss = (x * x).sin().sum()
    dot = gradtool.draw(loss)
    monkeypatch.chdir(tmp_path)
    assert dot.format == "pdf" and dot.filename == "loss.gv"  # graphviz's default format
    # render(filename, format=): the DOT source at `filename`, the drawing beside it
    assert dot.render("attached", format="png") == "attached.png"
    assert cu.read_written("png", "attached.png") == ""
    assert "MulBackward0" in (tmp_path / "attached").read_text()  # the source, as graphviz
    assert dot.render("g", directory="out", format="svg", cleanup=True) == \
        os.path.join("out", "g.svg")
    assert "MulBackward0" in cu.read_written("svg", tmp_path / "out" / "g.svg")
    assert not (tmp_path / "out" / "g").exists()  # cleanup: the source removed
    assert dot.render(outfile="drawn.svg") == "drawn.svg" and (tmp_path / "drawn.gv").exists()
    # .format chooses what render() and pipe() write when not told
    dot.format = "svg"
    assert dot.render() == "loss.gv.svg" and (tmp_path / "loss.gv").exists()
    assert dot.pipe().startswith(b"<?xml") or dot.pipe().lstrip().startswith(b"<svg")
    assert dot.pipe(format="png")[:8] == b"\x89PNG\r\n\x1a\n"
    assert dot.pipe(format="dot", encoding="utf-8") == dot.source
    assert dot.source.startswith("digraph") and "MulBackward0" in dot.source
    with pytest.raises(ValueError, match="jpg"):
        dot.format = "jpg"
    assert dot.format == "svg"
    # save(): the DOT source at .filename, as graphviz's; with a suffix, that format
    assert dot.save() == "loss.gv" and (tmp_path / "loss.gv").read_text() == dot.source
    assert dot.save("again.gv", directory="out") == os.path.join("out", "again.gv")
    # view(): rendered, then opened as a double-click would
    opened = []
    monkeypatch.setattr(notebook, "open_in_viewer", opened.append)
    assert dot.view("seen") == "seen.svg" and opened == ["seen.svg"]
    assert dot.render("twice", view=True, format="png") == "twice.png" and \
        opened[-1] == "twice.png"
    with pytest.raises(TypeError, match="bogus"):
        dot.render("x", bogus=1)


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_is_written_from_python(name, tmp_path):
    """Each format of the registry, from a Graph's or a report's save(): from the file's
    suffix and from format=, read back by a reader of that format."""
    fmt = FORMATS[name]
    if fmt.needs_dot and shutil.which("dot") is None:
        pytest.skip(f"{name} needs the system Graphviz `dot`, which is not on PATH")
    x = gt.tensor([0.5, -1.0, 2.0], dtype=gt.float64, requires_grad=True)
    if "graph" in fmt.of:
        savers, expected = {"graph": gradtool.draw((x * x).sin().sum())}, "MulBackward0"
    else:
        savers = {kind: report for kind, report in (("inspect", gradtool.inspect(Cube, x)),
                                                    ("gradcheck", gradtool.check(Cube, x)))
                  if kind in fmt.of}
        assert savers, f"no object of the Python API writes the format {name}"
        expected = "Cube"
    for kind, saver in savers.items():
        paths = [saver.save(tmp_path / f"{kind}.{suffix}") for suffix in fmt.suffixes]
        paths.append(saver.save(tmp_path / f"{kind}.out", format=name))
        for path in paths:
            text = cu.read_written(name, path)
            assert fmt.binary or expected in text, (path, text[:500])


def test_check_report_prints_what_the_cli_prints(tmp_path):
    x = gt.tensor(np.random.default_rng(0).standard_normal(3), requires_grad=True)  # the CLI's
    report = gradtool.check(Cube, x)
    assert not report.passed
    text = str(report)
    # the CLI's report of the same Function in a file
    (tmp_path / "cube.py").write_text(
        "import gradtool as torch\n\n\nclass Cube(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
        "        return x ** 3\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
        "        x, = ctx.saved_tensors\n        return grad_output * 2 * x ** 2\n")
    cli = cu.run("gradcheck", tmp_path / "cube.py", "--no-color", extra_env={"COLUMNS": "100"})
    assert cli.returncode == 1
    def drop_heading(text):  # (where Cube is defined differs; a long path wraps its line)
        lines = text.splitlines()
        return lines[next(i for i, line in enumerate(lines) if line.startswith("order ")):]
    assert [line.rstrip() for line in drop_heading(cli.stdout)] == drop_heading(text)
    assert text.splitlines()[0].startswith(f"Cube  Function at {os.path.relpath(__file__)}:")
    assert "wrong_gradient" in text and "1.23 ≠ 0.8203" in text
    assert repr(report).startswith("<CheckReport FAIL  Cube  ") and "\n" not in repr(report)
    html = report._repr_html_()
    assert "FAIL" in html and html.count("data:image/png;base64,") == 3  # the heatmaps
    assert '<div class="gradtool-heatmaps">' in html and "<script" not in html


def test_check_covers_the_parameters_of_the_modules_a_function_calls():
    gt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh()).double()
    report = gradtool.check(lambda batch: model(batch).sum(), gt.randn(2, 4, dtype=gt.float64))
    assert report.passed
    assert report.input_names == ["batch", "model.0.weight", "model.0.bias"]


def test_inspect_runs_a_function_as_the_cli_does_and_reads_a_graph_already_made():
    def overwrites(x):
        y = x.exp()
        y.add_(1)
        return y.sum()
    report = gradtool.inspect(overwrites, gt.randn(3, dtype=gt.float64, requires_grad=True))
    kinds = [d.kind for d in report.diagnostics]
    assert "saved_modified_in_place" in kinds and "backward_failed" in kinds
    assert repr(report).startswith("<InspectReport ERROR overwrites  ")
    assert "_saved_result" in str(report) and "ExpBackward0" in str(report)
    # a graph already made: read as it is, no backward run (the leaf keeps no .grad)
    x = gt.randn(3, dtype=gt.float64, requires_grad=True)
    y = x.exp()
    y.mul_(2)
    loss = y.sum()
    read = gradtool.inspect(loss)
    assert x.grad is None
    assert [d.kind for d in read.diagnostics] == ["saved_modified_in_place"]
    assert read.text().splitlines()[0].startswith(f"loss  graph at {os.path.relpath(__file__)}:")


def test_a_failing_assertion_in_a_notebook_keeps_its_message(monkeypatch):
    """Inside Jupyter rich displays what it prints instead of writing it to the buffer the
    message is read from: the message was empty there."""
    import rich.console
    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)
    from gradtool.frontends.testing import assert_gradcheck
    with pytest.raises(AssertionError) as caught:
        assert_gradcheck(Cube.apply, (gt.randn(3, dtype=gt.float64, requires_grad=True),))
    message = str(caught.value)
    assert message.startswith("Cube  Function at ") and "<unknown>" not in message
    assert "wrong_gradient" in message


@pytest.mark.parity
@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_draw_and_check_work_on_torch_tensors():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh()).double()
    x = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    loss = model(x).sum()
    graph = gradtool.draw(loss, params=dict(model.named_parameters()))
    names = [n.name for n in graph.snapshot.nodes]
    assert names[0] == "SumBackward0" and "AddmmBackward0" in names
    assert re.search(r'label="0\.weight|label="model\.0\.weight', graph.source)

    class TorchCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * 2 * x ** 2
    report = gradtool.check(TorchCube, torch.randn(3, dtype=torch.float64, requires_grad=True))
    assert not report.passed and "wrong_gradient" in str(report)
    assert gradtool.check(lambda t: model(t).sum(), x).passed
