"""The registry of formats (gradtool/report/formats.py): which format a file is written in,
and the error that lists the formats when none fits, from the registry itself."""
import pytest

from gradtool.engine.errors import GradtoolError
from gradtool.report import dot
from gradtool.report.formats import FORMATS, choose, names


@pytest.mark.parametrize("path, fmt, kind, chosen", [
    ("g.svg", None, "graph", "svg"), ("G.PNG", None, "graph", "png"), ("g", None, "graph", "svg"),
    ("g.gv", None, "graph", "dot"), ("g.html", None, "graph", "html"),
    ("g.out", "PDF", "graph", "pdf"), ("g.gv", "dot", "graph", "dot"),
    ("r.html", None, "gradcheck", "heatmap"), ("r", None, "inspect", "text"),
    ("r.json", None, "inspect", "json"), ("r.log", "json", "inspect", "json"),
])
def test_the_format_comes_from_its_name_else_the_suffix_else_the_first_of_its_kind(
        path, fmt, kind, chosen):
    assert choose(fmt, path, kind) is FORMATS[chosen]


def test_an_unknown_suffix_lists_every_suffix_and_format_of_the_kind():
    with pytest.raises(GradtoolError) as e:
        choose(None, "out.jpg", "graph")
    suffixes = [f".{s}" for n in names("graph") for s in FORMATS[n].suffixes]
    assert ".html" in suffixes and ".gv" in suffixes
    assert f"{', '.join(suffixes[:-1])} or {suffixes[-1]}" in str(e.value)
    assert f"one of {', '.join(names('graph'))}" in str(e.value)
    with pytest.raises(GradtoolError, match="cannot tell the format from .html"):
        choose(None, "r.html", "inspect")  # inspect's reports have no page
    with pytest.raises(GradtoolError, match=r"--format must be one of text, json, heatmap "
                                            r"\(got 'gif'\)"):
        choose("gif", "r.txt", "gradcheck")


def test_a_format_name_that_contradicts_the_suffix_is_refused():
    with pytest.raises(GradtoolError, match=r"--format svg contradicts -o g.png \(a .png file\): "
                                            r"drop --format, or name the file .svg"):
        choose("svg", "g.png", "graph")


def test_each_format_asks_for_the_renderer_it_needs(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no system `dot`
    assert {n: f.renderer() for n, f in FORMATS.items() if not f.graphviz} == dict.fromkeys(
        n for n, f in FORMATS.items() if not f.graphviz)
    with pytest.raises(dot.RendererNotFound) as e:
        FORMATS["pdf"].renderer()
    pure = [n for n, f in FORMATS.items() if f.graphviz and not f.needs_dot]
    assert "PDF needs Graphviz's own `dot`" in str(e.value)
    assert f"graphviz-pure writes {' and '.join(pure)}" in str(e.value)
    with pytest.raises(dot.RendererNotFound, match="`dot` is not on PATH"):
        FORMATS["svg"].renderer("dot")
