"""gradtool from Python: in a script, a REPL or a Jupyter notebook.

    gradtool.draw(loss, params=dict(model.named_parameters()))  # torchviz's make_dot
    gradtool.inspect(f, (x, w))   # what `gradtool inspect` prints, for one function
    gradtool.check(f, (x, w))     # what `gradtool gradcheck` prints, and the heatmaps

What they return prints as the CLI does (print(), str(), IPython's pretty printer) and shows
as HTML in Jupyter (`_repr_html_`): the graph as the interactive page, a report as its
coloured text with the Jacobian heatmaps. Tensors of real PyTorch work as gradtool's do."""
import contextlib
import io
import os
import re
import sys
import types
import warnings

from ..checks.numerical import as_tuple as _as_tuple
from ..engine import frames
from ..report import formats


def draw(output, params=None, *, show_saved=False, depth=None, expand=False):
    """The backward graph of `output` (a tensor, or a list or tuple of them), as a Graph:
    shown inline in Jupyter, `.save("g.svg")` (or .png, .pdf, .dot, .html), `.source` (DOT).
    `params` (torchviz's argument: name -> tensor, e.g. dict(model.named_parameters())) and
    the variables of the calling code name the leaves and outputs; modules found there group
    the nodes by module call. `show_saved`, `depth`, `expand`: as `gradtool render`'s."""
    return _draw(output, _caller_scope(), params, show_saved, depth, expand)


def _draw(output, scope, params=None, show_saved=False, depth=None, expand=False):
    from .. import adapters as engines
    from ..capture.loader import module_parameters, modules_in
    from ..capture.graph import take_snapshot
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    engine = engines.of(outputs)
    modules = modules_in(engine, scope)
    # later names win: the caller's variables, then parameters by their modules' names
    # (model.0.weight rather than params' 0.weight)
    named = dict(params or {})
    named.update({k: v for k, v in scope.items()
                  if engine.is_tensor(v) and not k.startswith("_")})
    named.update(module_parameters(modules))
    snapshot = take_snapshot(outputs, named, None,
                             {id(m): var for var, m in reversed(modules.items())}, engine)
    return Graph(snapshot, (), _name_of(outputs, scope), show_saved, depth, expand)


class Graph:
    """A drawing of one backward graph: `.svg()`, `.source` (DOT), `.save(path)`, and in
    Jupyter the SVG with a button to explore it (fold and open module boxes, search, click a
    node). It answers as graphviz.Digraph, which torchviz's make_dot returns: `.render()`,
    `.view()`, `.pipe()`, `.source`, `.format`, `.filename`, `.directory`."""

    def __init__(self, snapshot, diagnoses=(), name="graph", show_saved=False, depth=None,
                 expand=False):
        self.snapshot, self.diagnoses, self.name = snapshot, list(diagnoses), name
        drawn = types.SimpleNamespace(snapshot=snapshot, diagnostics=self.diagnoses,
                                      target=types.SimpleNamespace(name=name))
        self.drawing = formats.Drawing([drawn], show_saved, expand, depth)
        self._format = "pdf"  # graphviz's default: render() writes a PDF
        self.filename = f"{name}.gv"  # where render() and save() put the DOT source
        self.directory = ""
        self._svg = None

    def __repr__(self):
        return f"<gradtool.Graph {self.name}: {len(self.snapshot.nodes):,} nodes>"

    def _write(self, format):
        return formats.FORMATS[format].write(self.drawing)

    @property
    def format(self):
        """The format render() and pipe() write when not told (graphviz's attribute; `pdf`
        as there)."""
        return self._format

    @format.setter
    def format(self, value):
        self._format = _drawing_format(value).name

    @property
    def source(self):
        """The DOT source (Graphviz's language)."""
        return self._write("dot")

    def svg(self):
        if self._svg is None:  # shown twice in a notebook: as SVG, and inside the HTML
            self._svg = self._write("svg")
        return self._svg

    def page(self):
        """The self-contained HTML page of `gradtool render --format html`."""
        return self._write("html")

    def save(self, filename=None, directory=None, format=None):
        """Write the drawing to `filename` (in `directory`): in `format`, else the one its
        suffix names (svg, png, pdf, dot or gv, html); without a suffix, or without a
        filename (then `.filename`), the DOT source, as graphviz's save(). Returns the path."""
        path = self._path(filename, directory)
        has_suffix = bool(os.path.splitext(os.path.basename(path))[1])
        formats.save(path, self.drawing, format or (None if has_suffix else "dot"))
        return path

    def _path(self, filename, directory):
        """graphviz's path of the source: .filename in .directory unless given."""
        return _joined(self.directory if directory is None else directory,
                       self.filename if filename is None else filename)

    def pipe(self, format=None, encoding=None):
        """The drawing in `format` (else .format) as bytes, or as text in `encoding`
        (graphviz's pipe())."""
        fmt = _drawing_format(format or self.format)
        data = fmt.content(self.drawing)
        return data.decode(encoding) if encoding is not None else data

    def render(self, filename=None, directory=None, view=False, cleanup=False, format=None,
               outfile=None, **graphviz_options):
        """As graphviz's render(): the DOT source saved to `filename` (else .filename, in
        `directory`), the drawing written beside it as FILENAME.FORMAT (format: the argument,
        else .format), the source removed with `cleanup`, the drawing opened with `view`.
        `outfile` names the drawing itself (its suffix the format). Returns the drawing's
        path."""
        _refuse_unknown(graphviz_options)
        if outfile is not None:
            outfile = _joined("", outfile)
            stem, suffix = os.path.splitext(outfile)
            fmt = _drawing_format(format or suffix.lstrip(".") or self.format)
            source_path = (filename and _joined(directory, filename)) or stem + ".gv"
            output_path = outfile
        else:
            fmt = _drawing_format(format or self.format)
            source_path = self._path(filename, directory)
            output_path = f"{source_path}.{fmt.name}"
        formats.save(source_path, self.drawing, "dot")
        formats.save(output_path, self.drawing, fmt.name)
        if cleanup:
            os.remove(source_path)
        if view:
            open_in_viewer(output_path)
        return output_path

    def view(self, filename=None, directory=None, cleanup=False, **graphviz_options):
        """render(view=True): write the drawing and open it in the system's viewer."""
        return self.render(filename, directory, view=True, cleanup=cleanup,
                           **graphviz_options)

    # No _repr_svg_: Jupyter would keep the SVG twice, as image/svg+xml beside the HTML,
    # which holds it already (and shows it where scripts do not run)
    def _repr_html_(self):
        from ..report import html
        return html.notebook_output(self.svg(), html.title(self.drawing.captures),
                                    html.data(self.drawing.captures, self.drawing.show_saved,
                                              self.drawing.expand, self.drawing.depth),
                                    _carries_explorer())


def _drawing_format(name):
    """A drawing's Format from a name graphviz or gradtool uses for it (svg, png, pdf, dot or
    gv, html); ValueError for any other, as graphviz raises."""
    by_name = {n: formats.FORMATS[n] for n in formats.names("graph")}
    by_name.update({s: f for f in list(by_name.values()) for s in f.suffixes})
    fmt = by_name.get(str(name).lower().lstrip("."))
    if fmt is None:
        raise ValueError(f"gradtool draws a graph as {', '.join(by_name)}; "
                         f"not as {name!r}")
    return fmt


# graphviz's render() options that change nothing in what gradtool writes
_HARMLESS = {"quiet", "quiet_view", "engine", "renderer", "formatter", "neato_no_op",
             "overwrite_source", "raise_if_result_exists"}


def _refuse_unknown(options):
    unknown = sorted(set(options) - _HARMLESS)
    if unknown:
        raise TypeError(f"render() got an unexpected keyword argument {unknown[0]!r}")


def _joined(directory, filename):
    """directory/filename, the folder made if missing (as graphviz does)."""
    filename = os.fspath(filename)
    path = os.path.join(os.fspath(directory), filename) if directory else filename
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def open_in_viewer(path):
    """Open a file as a double-click would (graphviz's view=True)."""
    import subprocess
    if sys.platform == "darwin":
        subprocess.Popen(["open", path])
    elif sys.platform.startswith("win"):
        os.startfile(path)  # noqa: only on Windows
    else:
        subprocess.Popen(["xdg-open", path], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)


# Which output carries the explorer's libraries: the first graph shown since the kernel
# started, and again when the cell that carried it runs again (its new output replaces it).
_explorer_carrier = {"cell": None, "execution": None}


def _carries_explorer():
    """Whether this output carries the explorer's shell: always outside a kernel (a page
    written from Python is read alone); in a kernel, as _explorer_carrier says."""
    shell = _ipython_shell()
    if shell is None or getattr(shell, "kernel", None) is None:
        return True
    cell, execution = _cell_id(shell), getattr(shell, "execution_count", None)
    first = _explorer_carrier["execution"] is None
    rerun = (cell is not None and cell == _explorer_carrier["cell"]
             and execution != _explorer_carrier["execution"])
    if first or rerun:
        _explorer_carrier.update(cell=cell, execution=execution)
        return True
    return False


def _ipython_shell():
    IPython = sys.modules.get("IPython")
    return getattr(IPython, "get_ipython", lambda: None)() if IPython is not None else None


def _cell_id(shell):
    """The running cell's id, which Jupyter sends with each execution (None if unknown)."""
    try:
        parent = shell.kernel.get_parent("shell")
    except Exception:  # noqa: BLE001 - an older ipykernel, or none
        parent = getattr(shell, "parent_header", None)
    try:
        return parent["metadata"].get("cellId")
    except (TypeError, KeyError, AttributeError):
        return None


def inspect(target, inputs=(), *, seed=0):
    """What `gradtool inspect` finds, as an InspectReport. `target`: a function (or an
    autograd.Function, or its .apply) called with `inputs` (a tensor or a tuple; copied, so
    yours are left alone), run forward and backward under gradtool's trace; or an output
    tensor whose graph is already made, read as it is (no backward runs)."""
    from .. import adapters as engines
    if engines.of([target]).is_tensor(target) or isinstance(target, (list, tuple)):
        return _inspect_graph(target, _caller_scope())
    from ..checks.inspection import capture
    with engines.use(engines.of(_as_tuple(inputs))):
        return InspectReport(capture(_target(target, inputs), seed), seed)


def check(fn, inputs, *, order=1, eps=1e-6, atol=1e-5, rtol=1e-3, fast_mode=False,
          mode=None, seed=0):
    """What `gradtool gradcheck` reports for fn(*inputs), as a CheckReport: every input that
    requires grad and every parameter of the modules fn calls, checked numerically against
    the analytical gradients (`order=2`: second derivatives too; `mode`: "reverse",
    "forward" or "both"). It never raises for a wrong gradient: read `.passed`."""
    from .. import adapters as engines
    from ..checks.target import check_target
    from .cli.gradcheck_cmd import modes_for
    target = _target(fn, inputs)
    with engines.use(engines.of(_as_tuple(inputs))), _warnings_at(sys._getframe(1)):
        result = check_target(target, seed, (3,), eps=eps, atol=atol, rtol=rtol,
                              fast=fast_mode, order=order, modes=modes_for(target, mode))
    return CheckReport(result, seed)


class _Report:
    """Prints as the CLI does; shows in Jupyter as that text, coloured; `.save(path)` writes
    it (text, the CLI's JSON document, or a check's heatmap page)."""

    def __init__(self, command, result, seed):
        target = result.target
        self.findings = formats.Findings(command, f"{target.filename}::{target.name}",
                                         [result], seed)

    def text(self, width=formats.TEXT_WIDTH, color=False):
        """The report as the CLI prints it, `width` columns wide."""
        return formats.FORMATS["text"].write(self.findings, width=width,
                                             color=color).rstrip("\n")

    def save(self, path, format=None):
        """Write the report: the format from `format`, else from the file's suffix (txt,
        json; html: a check's Jacobian heatmaps). Returns the path."""
        formats.save(path, self.findings, format)
        return path

    def __str__(self):
        return self.text()

    def _repr_pretty_(self, printer, cycle):
        # coloured in IPython's terminal; a notebook's text/plain comes here too, and there
        # escape codes are noise
        printer.text(self.text(color=_on_terminal()) if not cycle else repr(self))

    def _repr_html_(self):
        from rich.console import Console
        con = Console(record=True, file=io.StringIO(), width=formats.TEXT_WIDTH,
                      force_jupyter=False, force_terminal=True, color_system="truecolor",
                      highlight=False)
        formats.print_text(con, self.findings)
        # rich repeats each colour as text-decoration-color, which is the text's colour
        # anyway: a notebook keeps every byte of its outputs
        return re.sub(r"; text-decoration-color: #[0-9a-f]{6}|text-decoration-color: #[0-9a-f]{6}; ",
                      "", con.export_html(inline_styles=True, code_format=_PRE))

    def __repr__(self):  # one line: what --quiet prints
        line = formats.FORMATS["text"].write(self.findings, width=10_000, quiet=True)
        return f"<{type(self).__name__} {line.strip()}>"


class InspectReport(_Report):
    """gradtool inspect of one target: `.capture` (snapshot, diagnostics, inputs, outputs),
    `.diagnostics`, `.graph` to draw it."""

    def __init__(self, capture, seed=0):
        super().__init__("inspect", capture, seed)
        self.capture = capture
        self.snapshot, self.diagnostics = capture.snapshot, capture.diagnostics

    @property
    def graph(self):
        return Graph(self.snapshot, self.diagnostics, self.capture.target.name)


class CheckReport(_Report):
    """gradtool gradcheck of one target: `.passed`, `.reports` (a GradcheckReport per order
    checked: pairs, failures, diagnoses), `.input_names`."""

    def __init__(self, result, seed=0):
        super().__init__("gradcheck", result, seed)
        self.result = result
        self.reports, self.input_names = result.reports, result.input_names

    @property
    def passed(self):
        return self.result.passed

    def _repr_html_(self):
        from ..report import heatmap
        return super()._repr_html_() + heatmap.fragment([self.result])


def _inspect_graph(output, scope):
    """inspect(y) of a graph already made: its snapshot, and what can be told from it alone."""
    from ..checks.inspection import Capture
    from ..checks.findings import diagnose_snapshot
    graph = _draw(output, scope)
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    name = _name_of(outputs, scope)
    leaves = {id(t): n.leaf.name for n, t in zip(graph.snapshot.leaves,
                                                 graph.snapshot.leaf_tensors)}
    inputs = [(leaves[id(t)] or f"leaf {i}", t)
              for i, t in enumerate(graph.snapshot.leaf_tensors)]
    frame = sys._getframe(2)
    where = types.SimpleNamespace(name=name, kind="graph", filename=frame.f_code.co_filename,
                                  lineno=frame.f_lineno)
    capture = Capture(where, inputs, outputs, graph.snapshot, None, [])
    capture.diagnostics = diagnose_snapshot(graph.snapshot)
    return InspectReport(capture)


def _target(fn, inputs):
    """A loader Target for a function (or Function, or custom op) called with these
    inputs."""
    import inspect

    from .. import adapters as engines
    from ..capture.loader import Target, parameter_names
    from .testing import Checked, _function_class
    if engines.is_custom_op(fn):  # checked with its opcheck, as the CLI checks it
        kernel = engines.op_kernel(fn)
        return Target(kernel.__name__, "custom_op", fn, _as_tuple(inputs), {},
                      list(inspect.signature(kernel).parameters), kernel.__code__.co_filename,
                      kernel.__code__.co_firstlineno, (fn._qualname,))
    cls = fn if isinstance(fn, type) else _function_class(fn)
    where = Checked.of(cls.apply if cls is not None else fn)
    return Target(where.name, "Function" if cls is not None else "example",
                  cls if cls is not None else fn, _as_tuple(inputs), {},
                  parameter_names(cls or fn), where.filename,
                  where.lineno)


def _on_terminal():
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


@contextlib.contextmanager
def _warnings_at(frame):
    """Warnings gradtool raises while it checks (torch's float32 warning), raised again at
    `frame`'s line, the user's call of gradtool: Python would show gradtool's own line."""
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        # (a check calls the function hundreds of times: each warning is raised again once)
        once = {(str(w.message), w.category, w.filename, w.lineno): w for w in caught}
        for w in once.values():
            if frames.is_gradtool(w.filename):
                scope = frame.f_globals
                warnings.warn_explicit(w.message, w.category, frame.f_code.co_filename,
                                       frame.f_lineno, module_globals=scope,
                                       registry=scope.setdefault("__warningregistry__", {}))
            else:  # the user's own warning: where it was raised
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _caller_scope():
    """The variables of the code that called gradtool (a notebook's are its globals)."""
    frame = sys._getframe(2)
    return {**frame.f_globals, **frame.f_locals}


def _name_of(outputs, scope):
    names = [k for t in outputs for k, v in scope.items() if v is t and not k.startswith("_")]
    return names[0] if names else "graph"


_PRE = ('<pre style="font-family:Menlo,Consolas,\'DejaVu Sans Mono\',monospace;font-size:12px;'
        'line-height:1.35;white-space:pre">{code}</pre>')


