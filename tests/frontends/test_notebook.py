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
def executed():
    nb = nbformat.read(os.path.join(EXAMPLES, "tutorial.ipynb"), as_version=4)
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": EXAMPLES}}).execute()
    return nb


@pytest.fixture(scope="module")
def cells(executed):
    return {c.source: c.outputs for c in executed.cells if c.cell_type == "code"}


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
    """A graph's output is its SVG (shown where no script runs) and the explorer's data; the
    explorer's libraries travel once, with the first graph drawn."""
    shell = 'class="gradtool-explorer-shell"'
    first = _shown(_cell(cells, "gradtool.draw(loss)"))
    assert set(first) == {"text/html", "text/plain"}  # the SVG once, inside the HTML
    assert '<div class="gradtool-static"><svg' in first["text/html"]
    assert "ExpBackward0" in first["text/html"] and shell in first["text/html"]
    model = _shown(_cell(cells, "gradtool.draw(loss, params="))
    assert "model.0.weight" in model["text/html"] and shell not in model["text/html"]
    assert 'class="gradtool-data"' in model["text/html"]


def test_the_executed_tutorial_stays_small(executed):
    """Every graph once carried the explorer's 600 KB of libraries: 1.37 MB executed."""
    size = len(nbformat.writes(executed).encode())
    assert size < 300_000, f"the executed tutorial is {size:,} bytes"


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


CELLS = [
    "import gradtool\nimport gradtool as torch",
    # a wrong Function, a cut gradient: reports that name places in cells
    "class WrongCube(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n"
    "        return x ** 3\n\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad):\n"
    "        x, = ctx.saved_tensors\n"
    "        return grad * 2 * x ** 2\n",
    "x = torch.randn(3, dtype=torch.float64, requires_grad=True)\n"
    "gradtool.check(WrongCube, x)",
    "def scaled(x, w):\n"
    "    with torch.no_grad():\n"
    "        y = x * w\n"
    "    return y + x\n\n"
    "gradtool.inspect(scaled, (x, x.detach().clone().requires_grad_()))",
    "x32 = torch.randn(3, requires_grad=True)\n"
    "gradtool.check(lambda t: (t * t).sum(), x32).passed",
]


@pytest.fixture(scope="module")
def cell_outputs(tmp_path_factory):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", resources={
        "metadata": {"path": str(tmp_path_factory.mktemp("cells"))}}).execute()
    return [(c.execution_count, c.outputs) for c in nb.cells]


def test_places_in_cells_read_as_jupyter_numbers_them_without_escape_codes(cell_outputs):
    errors = [o for _, outputs in cell_outputs for o in outputs if o.output_type == "error"]
    assert not errors, errors
    defined, _ = cell_outputs[1]
    check = _shown(cell_outputs[2][1])["text/plain"]
    assert f"WrongCube  Function at cell [{defined}], line " in check and "FAIL" in check
    number, outputs = cell_outputs[3]
    inspect = " ".join(_shown(outputs)["text/plain"].split())
    assert f"(cell [{number}], line 3)" in inspect and "ipykernel_" not in inspect
    assert "\x1b[" not in check + inspect  # text/plain is plain text


def test_a_warning_of_a_check_points_at_the_users_cell(cell_outputs):
    number, outputs = cell_outputs[4]
    warned = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stderr")
    assert "Input #0 requires gradient and is not a double precision" in warned
    assert "notebook.py" not in warned and "gradtool" not in warned.split("UserWarning")[0]
    assert ".py:2: UserWarning" in warned  # the line of the cell that called the check
