"""Terminal reports (rich). Everything here reads snapshots and check reports; nothing
computes."""
import collections
import dataclasses
import re

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ..adapters import device_name, dtype_name
from ..engine.frames import location
from .numbers import fmt_num

CHAIN_FOLD = 8        # a linear chain longer than this shows its ends and a count
MAX_TREE_LINES = 400  # beyond this the tree is cut with a note (the JSON has everything)

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
SEVERITY_MARK = {"error": "✗", "warning": "!", "info": "i"}


def console(no_color=False, stderr=False):
    """A rich Console. --no-color, or NO_COLOR set (no-color.org: non-empty), means plain
    text: no colours and no bold, dim or underline either (rich alone keeps those under
    NO_COLOR); else rich's own detection decides (FORCE_COLOR, a terminal).
    Pipes and CI logs get 150 columns unless COLUMNS says otherwise."""
    import os
    options = dict(stderr=stderr, highlight=False, soft_wrap=False)
    if no_color or os.environ.get("NO_COLOR"):
        options.update(no_color=True, color_system=None)
    con = Console(**options)
    if not con.is_terminal and not os.environ.get("COLUMNS", "").strip().isdigit():
        con = Console(width=150, **options)
    return con


# a token is never split across lines: a run of non-spaces, brackets holding spaces included
# (`[0, 2]`, `float64[2, 3]`, `in[0, 2]`)
TOKEN = re.compile(r"(?:\[[^\]\n]*\]|\S)+")


def _wrap(text, width):
    """A Text's lines, each at most `width` cells, broken only between tokens (a token
    longer than the width alone on its line); its own newlines kept."""
    out = []
    for part in text.split("\n", allow_blank=True):
        plain, starts, first = part.plain, [], 0
        for m in TOKEN.finditer(plain):
            if m.start() > first and cell_len(plain[first:m.end()]) > width:
                starts.append(m.start())
                first = m.start()
        for piece in part.divide(starts):
            piece.rstrip()
            out.append(piece)
    return out


def say(con, text):
    """Print prose to the console's width, wrapped only between tokens."""
    for line in _wrap(text, con.width):
        con.print(line)


@dataclasses.dataclass
class Column:
    header: str
    right: bool = False          # numbers are right-justified
    prose: bool = True           # wraps between its tokens; else a cell stays on one line
    whole_header: bool = False   # the header is one token too (`in \ out`)

    def cells(self, table):
        k = table.columns.index(self)
        return [row[k] for row in table.rows]

    def least(self, table):
        """The narrowest it can be: its longest token (a whole cell unless prose)."""
        header = [self.header] if self.whole_header else TOKEN.findall(self.header)
        cells = [t for c in self.cells(table) for t in TOKEN.findall(c.plain)] if self.prose \
            else [c.plain for c in self.cells(table)]
        return max(map(cell_len, header + cells), default=1)

    def most(self, table, header=True):
        return max([cell_len(self.header) if header else 1] +
                   [c.cell_len for c in self.cells(table)])


class Grid:
    """A table laid out by print_table: its widths decided on the cells' strings, as shown."""

    def __init__(self, *columns, title=None, caption=None, left_out_hint="--json has them"):
        self.columns = [c if isinstance(c, Column) else Column(c) for c in columns]
        self.title, self.caption, self.left_out_hint = title, caption, left_out_hint
        self.rows = []

    def add_row(self, *cells):
        self.rows.append([c if isinstance(c, Text) else Text(str(c)) for c in cells])

    def fits(self, con):
        """Whether it fits the console whole, each cell on one line."""
        return sum(c.most(self) for c in self.columns) + 3 * len(self.columns) - 1 <= con.width


def print_table(con, table, drop=()):
    """Print a Grid that fits the console, no token (number, index, shape, name) split:
    when it is too wide, the columns named in `drop` are left out, in that order, then
    whole columns from the right, a `…` in their place, until every column is as wide as
    its longest token; the room left goes to the prose columns, wrapped between tokens.
    The caption says what was left out."""
    columns = list(table.columns)
    gone, elided = [], False
    while True:
        room = con.width - 2 - 3 * (len(columns) - 1) - (4 if elided else 0)
        least = [c.least(table) for c in columns]
        most = [c.most(table) for c in columns]
        if sum(most) <= room:
            widths = most
            break
        if sum(least) <= room or len(columns) == 1:
            widths = _share_room(least, [c.most(table, header=False) for c in columns],
                                 most, room)
            break
        name = next((n for n in drop if any(c.header == n for c in columns)), None)
        column = next(c for c in columns if c.header == name) if name else columns[-1]
        columns.remove(column)
        gone.append(column.header)
        elided = elided or name is None
    caption = table.caption
    if gone:
        note = (f"left out to fit {con.width} columns: {', '.join(gone)} "
                f"({table.left_out_hint})")
        caption = f"{caption}; {note}" if caption else note
    if table.title:
        say(con, Text(table.title, style="italic"))
    if elided:
        columns.append(Column("…"))
        widths.append(1)
    lines = _header_lines(columns, widths)
    lines.append(Text("─" * (sum(widths) + 3 * (len(widths) - 1) + 2)))
    for row in table.rows:
        cells = [row[table.columns.index(c)] if c.header != "…" else Text("…")
                 for c in columns]
        lines.extend(_row_lines(columns, widths, cells))
    for line in lines:
        line.rstrip()
        con.print(line)
    if caption:
        say(con, Text(caption, style="dim"))


def _share_room(least, cells, most, room):
    """Each column its longest token; the rest of the room shared by what they lack, the
    cells first (a wrapped cell costs a line, a wrapped header does not)."""
    widths = list(least)
    for goal in (cells, most):
        lack = [max(0, g - w) for g, w in zip(goal, widths)]
        spare = max(0, room - sum(widths))
        if sum(lack) <= spare:
            widths = [w + n for w, n in zip(widths, lack)]
            continue
        for i, need in enumerate(lack):
            widths[i] += need * spare // sum(lack)
        break
    return widths


def _header_lines(columns, widths):
    headers = [[Text(c.header)] if c.whole_header else _wrap(Text(c.header), w)
               for c, w in zip(columns, widths)]
    height = max(len(h) for h in headers)
    # headers sit on the rule, as rich draws them
    headers = [[Text("")] * (height - len(h)) + h for h in headers]
    return [_joined(columns, widths, [h[k] for h in headers]) for k in range(height)]


def _row_lines(columns, widths, cells):
    wrapped = [_wrap(cell, w) if c.prose else [cell] for c, w, cell in zip(columns, widths, cells)]
    height = max(len(w) for w in wrapped)
    wrapped = [w + [Text("")] * (height - len(w)) for w in wrapped]
    return [_joined(columns, widths, [w[k] for w in wrapped]) for k in range(height)]


def _joined(columns, widths, pieces):
    line = Text(" ")
    for k, (column, width, piece) in enumerate(zip(columns, widths, pieces)):
        if k:
            line.append("   ")
        pad = " " * max(0, width - piece.cell_len)
        if column.right:
            line.append(pad)
        line.append_text(piece)
        if not column.right:
            line.append(pad)
    return line


def fmt_shape(shape, dtype, device="cpu"):
    """float64[2, 3], with the device when it is not the CPU: float32[4] cuda:0."""
    text = f"{dtype}[{', '.join(str(n) for n in shape)}]"
    return text if device in ("cpu", None) else f"{text} {device}"


def fmt_bytes(n):
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def node_title(node):
    text = Text(node.name, style="bold" if node.kind != "leaf" else "bold blue")
    if node.label:
        text.append(f" ({node.label})", style="green")
    if node.module:
        text.append(f" in {node.module}", style="magenta")
    out = node.outputs.get(0)
    if out is not None:
        text.append(f"  {fmt_shape(*out)}", style="dim")
    if node.problem:
        text.append(f"  {node.problem}", style="bold red")
    return text


def tree_lines(snapshot, max_depth=None):
    """The backward DAG as (prefix, node, note) lines, depth first from the outputs, each
    node shown once (later references say where it was), long chains folded, nothing below
    max_depth (the outputs' nodes are depth 0). Iterative."""
    lines = []
    shown = set()
    roots = []
    for out in snapshot.outputs:
        if out.node is not None and out.node not in roots:
            roots.append(out.node)
    stack = [(snapshot.by_id[r], "", "", True, 0) for r in reversed(roots)]
    while stack:
        if len(lines) >= MAX_TREE_LINES:
            lines.append(("", None, f"… tree cut at {MAX_TREE_LINES} lines; --json has every node"))
            break
        node, prefix, branch, is_root, depth = stack.pop()
        if max_depth is not None and depth > max_depth:
            lines.append((prefix + branch, None, f"… more below (--max-depth {max_depth})"))
            continue
        if node.id in shown:
            lines.append((prefix + branch, node, f"↑ shared: {node.id}, shown above"))
            continue
        shown.add(node.id)
        node, folded = _fold_chain(snapshot, node, shown)
        if folded:
            lines.append((prefix + branch, None, folded))
            prefix = prefix + ("" if is_root else ("    " if branch.startswith("└") else "│   "))
            branch = "└── "
        note = f"{node.id}" + (f", used {node.n_parents}x" if node.n_parents > 1 else "")
        lines.append((prefix + branch, node, note))
        children = [snapshot.by_id[c] for c, _ in node.edges if c is not None]
        child_prefix = prefix + ("" if is_root and not branch else
                                 ("    " if branch.startswith("└") else "│   "))
        for i, child in reversed(list(enumerate(children))):
            last = i == len(children) - 1
            stack.append((child, child_prefix, "└── " if last else "├── ", False, depth + 1))
    return lines


def _fold_chain(snapshot, node, shown):
    """Skip through a run of single-input, single-use nodes longer than CHAIN_FOLD."""
    run = snapshot.chain_from(node, shown)
    if len(run) <= CHAIN_FOLD:
        return node, None
    skipped = run[:-1]
    shown.update(n.id for n in skipped)
    counts = collections.Counter(n.name for n in skipped)
    summary = ", ".join(f"{name} ×{count:,}" for name, count in counts.items())
    return run[-1], f"… a chain of {len(skipped):,} nodes from {node.id} ({summary})"


def _heading(con, target, badge=""):
    """A target's name, kind and where it is defined, then `badge` (a verdict)."""
    say(con, Text(target.name, style="bold underline") + Text(
        f"  {target.kind} at {location(target.filename, target.lineno)}  ", style="dim") + badge)


def _badge(word, good):
    """A verdict in a box: PASS, FAIL, ERROR, ..."""
    return Text(f" {word} ", style="bold black on green" if good else "bold white on red")


def print_inspect(con, capture, all_saved=False, max_depth=None):
    snap = capture.snapshot
    _heading(con, capture.target)
    io_drop = ("tangent", "grad_fn", "requires_grad")
    print_table(con, _io_table("inputs", [(n, v) for n, v in capture.inputs]), io_drop)
    print_table(con, _io_table("outputs", [(o.name or f"output {o.index}", t)
                                           for o, t in zip(snap.outputs, capture.outputs)],
                               tangents=[o.tangent for o in snap.outputs]), io_drop)
    if not snap.nodes:
        say(con, Text("No backward graph: no output requires grad.", style="yellow"))
    else:
        say(con, Text(f"Backward graph: {len(snap.nodes):,} nodes (backward runs them from "
                       f"the top)", style="bold"))
        for prefix, node, note in tree_lines(snap, max_depth):
            line = Text(prefix, style="dim")
            if node is None:
                line.append(note, style="dim italic")
            else:
                line.append_text(node_title(node))
                line.append(f"  {note}", style="dim")
            say(con, line)
        print_table(con, saved_table(snap, all_saved),
                    ("mean", "min", "max", "bytes", "output", "version"))
        print_table(con, leaves_table(snap), ("requires_grad", "node"))
    print_diagnostics(con, capture.diagnostics)


def _io_table(title, pairs, tangents=None):
    """Inputs or outputs; a `tangent` column (forward mode) when an output is a dual tensor."""
    dual = tangents is not None and any(tangents)
    table = Grid("name", "value", "requires_grad", "grad_fn", *(("tangent",) if dual else ()),
                 title=title)
    for k, (name, value) in enumerate(pairs):
        tangent = ()
        if dual:
            t = tangents[k]
            tangent = (f"{fmt_shape(tuple(t['shape']), t['dtype'])} |t|={fmt_num(t['norm'])}"
                       if t else "",)
        if hasattr(value, "shape"):
            fn = value.grad_fn
            table.add_row(name, fmt_shape(tuple(value.shape), dtype_name(value),
                                          device_name(value)),
                          str(value.requires_grad), fn.name() if fn is not None else "",
                          *tangent)
        else:
            table.add_row(name, repr(value), "", "", *tangent)
    return table


def is_bookkeeping(saved):
    """Sizes, strides and alpha/beta of 1 that nodes keep: hidden unless --all-saved."""
    name = saved.name
    return not saved.is_tensor and (
        name.endswith(("_sym_sizes", "_sym_strides", "_sizes", "_strides", "_sym_numel",
                       "_options")) or (name in ("_saved_alpha", "_saved_beta")
                                        and saved.value == "1"))


def saved_table(snap, all_saved=False):
    table = Grid("node", "name", "value", "output", "version",
                 *(Column(c, right=True, prose=False) for c in ("bytes", "min", "mean", "max")),
                 title="saved for backward")
    rows = hidden = 0
    for node in snap.nodes:
        for s in node.saved:
            if not all_saved and is_bookkeeping(s):
                hidden += 1
                continue
            rows += 1
            if rows > 200:
                continue
            if s.is_tensor:
                value = (fmt_shape(s.shape, s.dtype) if s.state == "live" else s.state)
                version = f"{s.version_saved}/{s.version_now}"
                style = "bold red" if s.modified else None
                table.add_row(f"{node.id} {node.name}", s.name, value,
                              "yes" if s.is_output else "", Text(version, style=style),
                              fmt_bytes(s.nbytes) if s.state == "live" else "",
                              fmt_num(s.min), fmt_num(s.mean), fmt_num(s.max))
            else:
                table.add_row(f"{node.id} {node.name}", s.name, s.value, "", "", "", "", "", "")
    if rows > 200:
        table.add_row(f"… {rows - 200:,} more rows in --json", "", "", "", "", "", "", "", "")
    table.caption = (f"version: the tensor's version when saved / now (different: it was "
                     f"modified in place after being saved); total saved-tensor memory: "
                     f"{fmt_bytes(snap.saved_total_bytes)}" +
                     (f"; {hidden} sizes and constants hidden (--all-saved)" if hidden else ""))
    return table


def leaves_table(snap):
    table = Grid("node", "name", "value", "requires_grad", Column("grad norm", right=False),
                 title="leaves")
    for node in snap.leaves:
        leaf = node.leaf
        norm = "none" if leaf.grad_norm is None else fmt_num(leaf.grad_norm)
        table.add_row(node.id, leaf.name or "", fmt_shape(leaf.shape, leaf.dtype, leaf.device),
                      str(leaf.requires_grad), norm)
    return table


def print_diagnostics(con, diagnostics):
    if not diagnostics:
        say(con, Text("✓ no diagnostics", style="green"))
        return
    say(con, Text("diagnostics", style="bold"))
    for d in diagnostics:
        say(con, _diagnosis_line(d))
        say(con, Text(f"   → {d.advice}", style="dim"))


def _diagnosis_line(d, kind=False):
    """Its severity's mark, (its kind,) its message and where."""
    line = Text(f" {SEVERITY_MARK[d.severity]} ", style=SEVERITY_STYLE[d.severity])
    if kind:
        line.append(f"{d.kind}: ", style="bold")
    line.append(d.message)
    if d.location:
        line.append(f"  ({d.location})", style="dim")
    return line


def _line(con, verdict, style, target, finding):
    """One target on one line (--quiet): verdict, name, where it is defined, what was found;
    never wrapped, so that a CI log has one line per target."""
    con.print(Text(f"{verdict:<5} ", style=style) + Text(target.name, style="bold")
              + Text(f"  {location(target.filename, target.lineno)}  ", style="dim")
              + Text(" ".join(str(finding).split())), soft_wrap=True)


def _count(n, noun, grouped=True):
    # imported here: the checks package loads numpy, and `gradtool --help` imports this module
    from ..checks.wording import count
    return count(n, noun, grouped=grouped)


def _evaluations(total):
    return "? evaluations" if total is None else _count(total, "evaluation", grouped=False)


def print_inspect_line(con, capture):
    """inspect --quiet: ERROR, WARN or OK, and the first error or warning."""
    error = getattr(capture, "error", None)
    if error is not None:  # the target raised (a TargetError)
        return _line(con, "ERROR", "bold red", capture.target, error)
    found = {sev: [d for d in capture.diagnostics if d.severity == sev]
             for sev in ("error", "warning")}
    counts = (f"{_count(len(capture.snapshot.nodes), 'node')}, "
              f"{_count(len(found['error']), 'error')}, "
              f"{_count(len(found['warning']), 'warning')}")
    first = (found["error"] or found["warning"] or [None])[0]
    verdict = "ERROR" if found["error"] else "WARN" if found["warning"] else "OK"
    _line(con, verdict, SEVERITY_STYLE.get(first.severity, "green") if first else "green",
          capture.target, counts + (f"; {first.message}" + (f" ({first.location})"
                                                              if first.location else "")
                                    if first else ""))


def print_gradcheck_line(con, result):
    """gradcheck --quiet: PASS, FAIL or ERROR, and the worst pair's errors or why."""
    error = getattr(result, "error", None)
    if error is not None:
        return _line(con, "ERROR", "bold red", result.target, error)
    pairs = [(report, pair.recheck or pair) for report in result.reports
             for pair in report.pairs]
    failing = [(r, p) for r, p in pairs if not p.passed]
    worst = max(failing or pairs, key=lambda rp: rp[1].max_abs_error, default=None)
    finding = _count(len(pairs), "pair")
    if worst is not None:
        report, pair = worst
        finding += (f", max abs error {fmt_num(pair.max_abs_error)} (order {report.order}, "
                    f"{_input_label(report, pair)})")
    broken = next((r for r in result.reports if not r.passed), None)
    if broken is not None:
        cause = next(iter(broken.diagnoses), None) or (broken.failures or [None])[0]
        if broken.exception is not None:
            cause = getattr(broken, "user_error", None) or broken.exception
        if cause is not None:
            kind = getattr(cause, "kind", None)
            finding += f"; {kind + ': ' if kind else ''}{getattr(cause, 'message', cause)}"
    _line(con, "PASS" if result.passed else "FAIL", "green" if result.passed else "bold red",
          result.target, finding)


# ---------------------------------- gradcheck ----------------------------------
JACOBIAN_SIDE_BY_SIDE = 8   # Jacobians up to this many rows and columns are shown whole


class evaluation_progress:
    """A progress bar on stderr for long checks; `tick()` advances it by one evaluation."""

    def __init__(self, total, description, enabled, no_color=False):
        self.total, self.description, self.enabled = total, description, enabled
        self.no_color = no_color

    def __enter__(self):
        if not self.enabled:
            return lambda: None
        from rich.progress import Progress
        self._progress = Progress(console=console(self.no_color, stderr=True), transient=True)
        self._progress.start()
        task = self._progress.add_task(self.description, total=self.total)
        return lambda: self._progress.advance(task)

    def __exit__(self, *exc):
        if self.enabled:
            self._progress.stop()
        return False


def print_target_error(con, target, error):
    """A target that raised, in its place among the others: the paragraph and the user's
    frames."""
    _heading(con, target, _badge("ERROR", False))
    print_user_error(con, error)


def print_user_error(con, error):
    """The paragraph of a UserCodeError, and the user's frames."""
    say(con, Text(f"✗ {error}", style="red"))
    details = getattr(error, "details", "")
    if details:
        title = getattr(error, "details_title", "Traceback (your code only)")
        say(con, Text(f"{title}:\n" + details.rstrip(), style="dim"))


def print_against(con, result):
    """One target compared across engines (--against torch): what agrees, or each
    difference with both values."""
    _heading(con, result.target, _badge("AGREE", True) if result.passed else
             _badge("DIFFER", False))
    n = result.compared
    say(con, Text(f"gradtool vs torch: {n['outputs']} output(s), {n['gradients']} gradient(s)"
                   + (f", {n['second_order']} second-order gradient(s)" if n["second_order"]
                      else "") + f", {n['nodes']} backward nodes, {n['saved']} saved names",
                   style="dim"))
    if result.passed:
        return
    table = Grid("what", "where", "gradtool", "torch", "detail")
    for d in result.differences:
        table.add_row(*(Text(v) for v in (d.kind, d.name, _plain(d.gradtool), _plain(d.torch),
                                          d.detail)))
    print_table(con, table, ("detail",))
    say(con, Text(f"✗ {len(result.differences)} difference(s)", style="red"))


def _plain(value):
    if isinstance(value, float):
        return fmt_num(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value) or "(none)"
    return "(none)" if value is None else str(value)


def print_gradcheck(con, target, report, heading=True):
    """One GradcheckReport of a target; heading=False for the second order after the
    first (the target's name is already shown)."""
    # a backward (or jvp) that raised ended the check: an error, as a target that raised
    # is headed (print_target_error), not a verdict
    error = _badge("ERROR", False) if report.exception is not None else None
    verdict = _badge("PASS", True) if report.passed else error or _badge("FAIL", False)
    if heading:
        _heading(con, target, error or "")
    if not (heading and error):
        say(con, Text(f"order {report.order}: ", style="bold") + verdict)
    mode = f"{'gradgradcheck' if report.order == 2 else 'gradcheck'}, {report.mode} mode"
    opts = report.options
    if report.mode == "opcheck":  # a custom op whose gradients cannot (or need not) be checked
        say(con, Text("opcheck only: no gradient was checked", style="dim"))
    else:
        evaluations = _evaluations(report.evaluations.get("total"))
        say(con, Text(f"{mode}, eps={opts.get('eps')}, atol={opts.get('atol')}, "
                       f"rtol={opts.get('rtol')}; {evaluations}", style="dim"))
    names = getattr(report, "input_names", [])
    table = _pair_table(report, names)
    if report.pairs:
        print_table(con, table, _PAIR_DROPS)
    _rest_of_gradcheck(con, report, names)


_PAIR_DROPS = ("max rel error", "there: numerical vs analytical")  # first left out at 80 columns


def _pair_table(report, names):
    """The table of (output, input) pairs: errors, the worst entry, the verdict."""
    table = Grid(Column("output", prose=False), "input",
                 Column("max abs error", right=True), Column("max rel error", right=True),
                 "there: numerical vs analytical", Column("result", prose=False))
    for pair in report.pairs:
        shown = pair.recheck or pair
        worst = shown.worst or {}
        where = ""
        if worst:
            where = (f"in{list(worst.get('input_element', ()))} → "
                     f"out{list(worst.get('output_element', ()))}: "
                     f"{fmt_num(worst.get('numerical'))} vs {fmt_num(worst.get('analytical'))}")
        elif shown.projections:  # fast mode: the projection v^T J u farthest from agreeing
            k, p = max(enumerate(shown.projections), key=lambda kp: kp[1]["ratio"])
            where = (f"projection {k}: {fmt_num(p['numerical'])} vs "
                     f"{fmt_num(p['analytical'])}")
        table.add_row(_output_label(report, pair), _input_label(report, pair),
                      fmt_num(shown.max_abs_error), fmt_num(shown.max_rel_error), where,
                      Text("ok", style="green") if shown.passed else Text("FAIL", style="red"))
    return table


def _rest_of_gradcheck(con, report, names):
    if report.exception is not None:
        error = getattr(report, "user_error", None)
        say(con, Text(f"✗ {error or report.exception}", style="red"))
        if error is not None and error.details:
            say(con, Text(f"{error.details_title}:\n" + error.details.rstrip(),
                           style="dim"))
    for failure in report.failures:
        if failure.kind != "jacobian_mismatch":  # mismatches are shown as Jacobians below
            say(con, Text(f"✗ {failure.message.strip()}", style="red"))
    for pair in report.pairs:
        shown = pair.recheck or pair
        if not shown.passed and shown.numerical is not None:
            by = " (forward mode: jvp)" if pair.ad == "forward" else ""
            shown_whole = max(shown.numerical.shape) <= JACOBIAN_SIDE_BY_SIDE
            differing = _count(shown.n_differing, "differing entry", grouped=False)
            how = (f"numerical | analytical, {differing} marked ≠" if shown_whole else
                   f"{differing}, the farthest beyond the tolerance first (|analytical"
                   " - numerical| / (atol + rtol * |numerical|))")
            say(con, Text(f"Jacobian{by} of {_output_label(report, shown)} w.r.t. "
                           f"{_input_label(report, shown)}: " + how, style="bold"))
            print_table(con, _jacobians(report, shown, con))
    if report.declared:
        say(con, Text(f"checked against the declared surrogate gradient ({report.declared}), "
                       f"not the true gradient", style="dim"))
    located = report.localized
    if located is not None and located.report is not None:
        where = f" at {located.location}" if located.location else ""
        inside = f" in {located.module}" if located.module else ""
        say(con, Text(f"first wrong node in backward order: {located.node} {located.name} "
                       f"({located.called}{where}{inside}), checked on its own at the "
                       f"inputs it received:", style="bold red"))
        print_table(con, _pair_table(located.report, getattr(located.report, "input_names", [])),
                    _PAIR_DROPS)
    for d in report.diagnoses:
        say(con, _diagnosis_line(d, kind=True))


def _output_label(report, pair):
    """The output's label (gradgradcheck's: the gradient it is); with both modes checked,
    each row names its analytical side: backward or jvp."""
    label = report.output_label(pair)
    if any(p.ad == "forward" for p in report.pairs):
        return f"{label} ({'jvp' if pair.ad == 'forward' else 'backward'})"
    return label


def _input_label(report, pair):
    info = next((i for i in report.inputs if i.get("position") == pair.input_position), {})
    shape = info.get("shape")
    text = report.input_label(pair)
    return (f"{text} {fmt_shape(shape, info.get('dtype', ''), info.get('device'))}"
            if shape is not None else text)


def _jacobians(report, pair, con):
    """Numerical and analytical Jacobians side by side (rows: input elements, columns:
    output elements), differing entries in red; large ones, and those too wide for the
    console, as their differing entries."""
    import numpy as np
    num, ana = pair.numerical, pair.analytical
    violation = np.abs(ana - num) > report.options["atol"] + report.options["rtol"] * np.abs(num)
    violation |= np.isnan(ana) != np.isnan(num)
    if max(num.shape) <= JACOBIAN_SIDE_BY_SIDE:
        table = Grid(Column("in \\ out", prose=False, whole_header=True),
                     *(Column(str(j), right=True, prose=False) for j in range(num.shape[1])))
        for i in range(num.shape[0]):
            cells = []
            for j in range(num.shape[1]):
                differs = violation[i, j]  # marked in the text too, for --no-color
                cells.append(Text(f"{fmt_num(num[i, j])} {'≠' if differs else '|'} "
                                  f"{fmt_num(ana[i, j])}",
                                  style="bold red" if differs else None))
            table.add_row(str(i), *cells)
        if table.fits(con):
            return table
    table = Grid(*(Column(c, right=True, prose=False) for c in (
        "input element", "output element", "numerical", "analytical")))
    for e in pair.differing[:20]:
        table.add_row(str(list(e["input_element"])), str(list(e["output_element"])),
                      fmt_num(e["numerical"]), Text(fmt_num(e["analytical"]), style="red"))
    if pair.n_differing > 20:
        listed = len(pair.differing)  # what --json lists; it says how many it leaves out
        table.caption = f"… {pair.n_differing - 20:,} more" + (
            " in --json" if listed == pair.n_differing else f"; --json lists the first {listed}")
    return table


# ---------------------------------- reference check ----------------------------------
def print_reference(con, target, report, heading=True):
    """A ReferenceReport: per dtype and tensor, the target's error against the float64
    reference, the reference's own error in that dtype, their ratio and the verdict."""
    if heading:
        _heading(con, target)
    say(con, Text("reference check: ", style="bold") + _badge("PASS" if report.passed else "FAIL",
                                                             report.passed))
    say(con, Text(f"{report.target} in {', '.join(report.dtypes)} against "
                   f"{report.reference} in float64; allowed: {fmt_num(report.factor)} x the "
                   f"reference's own error in that dtype + {_floor_ulps()} ulps; "
                   f"{report.evaluations.get('total', '?')} runs", style="dim"))
    table = Grid("dtype", "tensor", *(Column(c, right=True) for c in (
        "max abs error", "reference's error", "ratio")), "worst: target vs float64",
                 Column("result", prose=False))
    for c in report.comparisons:
        w = c.worst
        where = (f"{w['index']}: {fmt_num(w['target'], 7)} vs {fmt_num(w['reference'], 7)}"
                 if w["target"] is not None else "")
        table.add_row(c.dtype, f"{c.name} [{', '.join(str(n) for n in c.shape)}]",
                      fmt_num(c.max_abs_error), fmt_num(c.reference_error), fmt_num(c.ratio),
                      where, Text("ok", style="green") if c.passed else Text("FAIL", style="red"))
    print_table(con, table, ("worst: target vs float64",))
    for c in report.failed:
        say(con, Text(f"✗ {c.name} in {c.dtype}: error {fmt_num(c.max_abs_error)} at "
                       f"{c.worst['index']} is {fmt_num(c.ratio)} x the reference's own "
                       f"{c.dtype} error ({fmt_num(c.reference_error)}); allowed "
                       f"{fmt_num(c.tolerance)}", style="red"))


def _floor_ulps():
    from ..checks.reference import FLOOR_ULPS
    return FLOOR_ULPS


# ------------------------------------------------------------------ runs over several files

def console_settings(con):
    """What a console prints like, for a worker process to print as it would."""
    return {"width": con.width, "color_system": con.color_system,
            "terminal": con.is_terminal, "no_color": con.no_color}


def console_like(settings, file):
    """A console that writes to `file` as the console of console_settings() would."""
    return Console(file=file, width=settings["width"], force_terminal=settings["terminal"],
                   color_system=settings["color_system"], no_color=settings["no_color"],
                   force_jupyter=False, highlight=False, soft_wrap=False)


FILE_VERDICTS = {0: ("PASS", "green"), 1: ("FAIL", "bold red"), 2: ("ERROR", "bold red")}


def print_file_heading(con, spec):
    """The line above one file's report when a run covers several."""
    con.rule(Text(spec, style="bold"), align="left", style="dim")


def print_file_error(con, spec, message, details="", quiet=False):
    """A file that could not be run (it did not import, has no targets, its process died),
    in its place among the others."""
    if quiet:
        con.print(Text("ERROR ", style="bold red") + Text(spec, style="bold") + Text("  ")
                  + Text(" ".join(message.split())), soft_wrap=True)
        return
    say(con, Text(f"✗ {message}", style="red"))
    if details:
        say(con, Text("Traceback (your code only):\n" + details.rstrip(), style="dim"))


def print_run_summary(con, command, files, summary, quiet=False):
    """The end of a run over several files: with --quiet one line per file (its verdict and
    counts), then the totals as pytest gives them, and what an interrupt left undone.
    files: (spec, exit code, counts or None for a file that could not run) per file run."""
    if quiet:
        for spec, code, counts in files:
            verdict, style = FILE_VERDICTS[code]
            what = ("could not run" if counts is None else
                    _count(sum(counts.values()), "target") + ": " + _tally(counts))
            con.print(Text(f"{verdict:<5} ", style=style) + Text(spec, style="bold")
                      + Text(f"  {what}"), soft_wrap=True)
    else:
        con.print()
    verdict, style = FILE_VERDICTS[summary["exit_code"]]
    line = Text(f"{command}: ", style="bold") + Text(_tally(summary), style=style)
    line += Text(f" in {_count(summary['files'], 'file')}")
    if summary["skipped"]:
        line += Text(f"; {_count(summary['skipped'], 'file')} without targets skipped",
                     style="dim")
    if summary["interrupted"]:
        line += Text(f"; interrupted: {_count(summary['interrupted'], 'file')} not finished",
                     style="yellow")
    con.print(line, soft_wrap=True)


def _tally(counts):
    """`5 passed, 1 failed, 2 errors`: the counts that are not zero (`0 passed` alone)."""
    parts = [f"{counts['passed']:,} passed"] * bool(counts["passed"]) + \
        [f"{counts['failed']:,} failed"] * bool(counts["failed"]) + \
        [_count(counts["errors"], "error")] * bool(counts["errors"])
    return ", ".join(parts) or "0 passed"
