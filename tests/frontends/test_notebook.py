"""examples/tutorial.ipynb run as Jupyter runs it (nbclient, an ipykernel), its outputs read:
graphs shown inline as SVG and as the explorer, reports as text and HTML, a failing
assertion's message whole."""
import os

import pytest

nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e "
                                                  "'.[test]')")
nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (pip install -e '.[test]')")

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


@pytest.fixture(scope="module")
def cells():
    nb = nbformat.read(os.path.join(EXAMPLES, "tutorial.ipynb"), as_version=4)
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": EXAMPLES}}).execute()
    return {c.source: c.outputs for c in nb.cells if c.cell_type == "code"}


def _cell(cells, start):
    return next(outputs for source, outputs in cells.items() if start in source)


def _shown(outputs):
    return next(o.data for o in outputs if o.output_type == "execute_result")


def _printed(outputs):
    return "".join(o.text for o in outputs if o.output_type == "stream")


def test_the_tutorial_runs_without_an_error(cells):
    errors = [o for outputs in cells.values() for o in outputs if o.output_type == "error"]
    assert not errors, errors


def test_a_graph_shows_as_svg_and_as_the_explorer(cells):
    shown = _shown(_cell(cells, "gradtool.draw(loss)"))
    assert "<svg" in shown["image/svg+xml"] and "ExpBackward0" in shown["image/svg+xml"]
    assert shown["text/html"].startswith("<iframe srcdoc=")
    model = _shown(_cell(cells, "gradtool.draw(loss, params="))
    assert "model.0.weight" in model["image/svg+xml"]


def test_reports_show_as_text_and_html(cells):
    inspect = _shown(_cell(cells, "report = gradtool.inspect(overwrites"))
    assert "modified in place" in inspect["text/plain"]
    assert "<pre" in inspect["text/html"] and "ExpBackward0" in inspect["text/html"]
    wrong = _cell(cells, "wrong = gradtool.check(Cube, x)")
    assert _printed(wrong).strip() == "False"
    assert "FAIL" in _shown(wrong)["text/html"] and "data:image/png" in _shown(wrong)["text/html"]
    fixed = _cell(cells, "fixed = gradtool.check(Cube, x)")
    assert _printed(fixed).strip() == "True" and "PASS" in _shown(fixed)["text/plain"]
    cut = _shown(_cell(cells, "def scaled(x, w):"))
    assert "input w requires grad but gets no gradient" in " ".join(cut["text/plain"].split())


def test_a_failing_assertion_keeps_its_whole_message_in_one_output(cells):
    outputs = _cell(cells, "assert_gradcheck(WrongCube.apply")
    # the message printed once, not the report as many displays (a loaded kernel may flush one
    # print in two stream messages, which Jupyter shows as one output)
    assert {o.output_type for o in outputs} == {"stream"}
    assert len({o.name for o in outputs}) == 1
    message = _printed(outputs)
    assert message.startswith("WrongCube  Function at ") and "<unknown>" not in message
    assert "FAIL" in message and "wrong_gradient" in message
