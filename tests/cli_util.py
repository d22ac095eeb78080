"""Helpers for tests/cli/test_cli.py: run the installed `gradtool` command as a user does (a
subprocess), and read what it wrote (JSON documents, SVG drawings, error paragraphs)."""
import base64
import concurrent.futures
import dataclasses
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")
PACKAGE_DIR = os.path.join(REPO, "gradtool")
GRADTOOL = os.path.join(os.path.dirname(sys.executable), "gradtool")
GRAPHVIZ_PURE = os.path.join(os.path.dirname(sys.executable), "graphviz-pure")

SVG_NS = "{http://www.w3.org/2000/svg}"
XLINK_TITLE = "{http://www.w3.org/1999/xlink}title"
ANSI = re.compile(r"\x1b\[")

# Settings of the caller's terminal that would change what gradtool prints.
_SCRUBBED_ENV = ("FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES", "TERM", "CLICOLOR",
                 "CLICOLOR_FORCE", "PY_COLORS", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


@dataclasses.dataclass
class Result:
    args: list
    returncode: int
    stdout: str
    stderr: str

    @property
    def command(self):
        return "gradtool " + " ".join(self.args)

    def json(self):
        """stdout as exactly one JSON document (no NaN/Infinity, nothing before or after)."""
        def no_constants(name):
            raise ValueError(f"JSON holds {name}, which is not JSON")
        try:
            return json.loads(self.stdout, parse_constant=no_constants)
        except ValueError as e:
            raise AssertionError(f"{self.command}: stdout is not one JSON document ({e}):\n"
                                 f"{self.stdout[:2000]}\nstderr:\n{self.stderr[-2000:]}")

    def __str__(self):
        return (f"{self.command} -> exit {self.returncode}\n--- stdout ---\n"
                f"{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}")


def env(**extra):
    """The environment gradtool runs in: the caller's, without terminal/colour settings."""
    e = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
    e.update({k: v for k, v in extra.items() if v is not None})
    return e


def run(*args, cwd=REPO, timeout=300, extra_env=None, executable=GRADTOOL):
    """Run `gradtool ARGS...` and return its Result."""
    args = [str(a) for a in args]
    done = subprocess.run([executable, *args], cwd=cwd, env=env(**(extra_env or {})),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return Result(args, done.returncode, done.stdout, done.stderr)


def run_many(arg_lists, cwd=REPO, timeout=300, extra_env=None):
    """Run several gradtool commands at once (one per core); Results in the same order."""
    workers = max(2, min(4, os.cpu_count() or 2))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(run, *args, cwd=cwd, timeout=timeout, extra_env=extra_env)
                   for args in arg_lists]
        return [f.result() for f in futures]


def flat(text):
    """Whitespace collapsed: rich wraps long messages at the console width."""
    return " ".join(text.split())


def assert_exit(result, code):
    assert result.returncode == code, f"expected exit {code}\n{result}"


def assert_clean_user_error(result, *mentions):
    """Contract §3/§4: exit 2, nothing on stdout, one short paragraph on stderr (plus the
    user's own frames), no traceback of gradtool's internals. `mentions` must all appear in
    the message (whitespace-insensitive)."""
    assert_exit(result, 2)
    assert result.stdout == "", f"stdout must stay empty on an error\n{result}"
    err = result.stderr
    assert err.strip(), f"no message on stderr\n{result}"
    assert "Traceback (most recent call last)" not in err, f"a raw traceback\n{result}"
    assert PACKAGE_DIR + os.sep not in err, f"gradtool's internal frames leak\n{result}"
    for internal in ("site-packages", "/typer/", "/click/", "importlib/", "<frozen"):
        assert internal not in err, f"internal frames ({internal}) leak\n{result}"
    assert "\n\n" not in err.strip(), f"more than one paragraph\n{result}"
    message = flat(err)
    for m in mentions:
        assert flat(str(m)) in message, f"the message does not mention {m!r}\n{result}"
    return message


def assert_target_error(result, name, *mentions):
    """Contract §4: a target that raises is reported in its place and the others still are;
    exit 2. With --json, stdout is the one document and the target's "error" holds the
    paragraph; else the paragraph is in the text report. Never gradtool's own traceback.
    Returns the error's text (whitespace collapsed)."""
    assert_exit(result, 2)
    both = result.stdout + result.stderr
    assert "Traceback (most recent call last)" not in both, f"a raw traceback\n{result}"
    assert PACKAGE_DIR + os.sep not in both, f"gradtool's internal frames leak\n{result}"
    if "--json" in result.args:
        doc = result.json()
        [target] = [t for t in doc["targets"] if t["name"] == name]
        error = target["error"]
        assert error and error["message"], f"{name}: no error in the document\n{result}"
        text = flat(error["message"] + " " + (error["location"] or "") + " " +
                    (error["traceback"] or ""))
    else:
        text = flat(result.stdout)
        assert name in text
    for m in mentions:
        assert flat(str(m)) in text, f"the error does not mention {m!r}\n{result}"
    return text


# ------------------------------------------------------------------ JSON documents

def check_inspect_document(doc, file_spec=None):
    """The invariants every `inspect --json` document keeps; returns {target name: target}."""
    assert doc["schema"] == "gradtool.inspect/2"
    if file_spec is not None:
        assert doc["file"] == file_spec
    assert isinstance(doc["seed"], int)
    assert isinstance(doc["shape"], list)
    assert doc["targets"], "no targets in the document"
    names = [t["name"] for t in doc["targets"]]
    assert len(names) == len(set(names)), f"target names repeat: {names}"
    for t in doc["targets"]:
        assert t["error"] is None, f"target {t['name']} raised: {t['error']}"
        for key in ("name", "kind", "location", "inputs", "outputs", "graph", "diagnostics"):
            assert key in t, f"target {t.get('name')} lacks {key!r}"
        assert t["kind"] in ("example", "function", "Function", "custom_op")
        assert re.search(r":\d+$", t["location"]), t["location"]
        graph = t["graph"]
        nodes = graph["nodes"]
        ids = [n["id"] for n in nodes]
        assert len(ids) == len(set(ids)), f"{t['name']}: node ids repeat"
        known = set(ids)
        for n in nodes:
            for key in ("id", "name", "kind", "next_functions", "saved", "outputs"):
                assert key in n, f"{t['name']}: node lacks {key!r}: {n}"
            for edge in n["next_functions"]:
                assert edge["node"] is None or edge["node"] in known, \
                    f"{t['name']}: {n['id']} -> {edge['node']} points at no node"
            if n["kind"] == "leaf":
                assert n["name"] == "AccumulateGrad"
                assert n["leaf"] and isinstance(n["leaf"]["shape"], list)
                assert n["next_functions"] == []
        for out in graph["outputs"]:
            assert out["node"] is None or out["node"] in known
        differentiable = [o for o in t["outputs"] if o.get("requires_grad")]
        if differentiable:
            assert any(n["kind"] == "leaf" for n in nodes), f"{t['name']}: no leaves"
            assert all(o["node"] in known for o in graph["outputs"] if o["requires_grad"])
        for d in t["diagnostics"]:
            assert d["severity"] in ("error", "warning", "info")
            assert re.fullmatch(r"[a-z_]+", d["kind"]), d["kind"]  # snake_case, as gradcheck's
            assert d["message"] and d["advice"]
    return {t["name"]: t for t in doc["targets"]}


def edges_of(target):
    """(child node id, parent node id) pairs of a target's graph, as render draws them."""
    return {(e["node"], n["id"]) for n in target["graph"]["nodes"]
            for e in n["next_functions"] if e["node"] is not None}


# ------------------------------------------------------------------ SVG drawings

@dataclasses.dataclass
class SvgNode:
    id: str            # the graphviz node id (the <title>)
    texts: list        # the label's lines
    tooltip: str       # xlink:title of the node's link, if any
    fills: list        # fill colours of its shapes

    @property
    def words(self):
        return set(self.texts) | {self.tooltip} - {""}


def parse_svg(path):
    """(root, nodes by id, edges as (tail, head) pairs) of an SVG file graphviz wrote."""
    tree = ET.parse(path)
    root = tree.getroot()
    assert root.tag == SVG_NS + "svg", f"{path}: root element is {root.tag}, not <svg>"
    nodes = {}
    edges = set()
    for g in root.iter(SVG_NS + "g"):
        cls = g.get("class")
        if cls not in ("node", "edge"):
            continue
        title = g.find(SVG_NS + "title")
        assert title is not None and title.text, f"{path}: a {cls} without a <title>"
        if cls == "edge":
            tail, _, head = title.text.partition("->")
            edges.add((tail, head))
            continue
        texts = [t.text or "" for t in g.iter(SVG_NS + "text")]
        link = next((a for a in g.iter(SVG_NS + "a") if a.get(XLINK_TITLE)), None)
        fills = [s.get("fill") for s in g.iter() if s.get("fill") not in (None, "none")]
        assert title.text not in nodes, f"{path}: node {title.text} drawn twice"
        nodes[title.text] = SvgNode(title.text, texts, link.get(XLINK_TITLE) if link else "",
                                    fills)
    return root, nodes, edges


def all_svg_words(nodes):
    return {w for n in nodes.values() for w in n.words}


def read_written(fmt, path):
    """Parse the file gradtool wrote in format `fmt` (a name in gradtool/report/formats.py)
    as a reader of that format would, failing if it cannot; the text it carries (names of
    targets or nodes), "" for a binary format."""
    with open(path, "rb") as f:
        data = f.read()
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[-8:-4] == b"IEND", data[:16]
        return ""
    if fmt == "pdf":
        assert data[:5] == b"%PDF-" and b"%%EOF" in data[-32:], data[:16]
        return ""
    text = data.decode("utf-8")
    if fmt == "text":
        assert text.strip() and not ANSI.search(text), text
        return text
    if fmt == "json":
        document = Result([], 0, text, "").json()
        assert document["schema"].startswith("gradtool."), document["schema"]
        return " ".join(t["name"] for t in document["targets"])
    if fmt == "svg":
        return " ".join(all_svg_words(parse_svg(path)[1]))
    if fmt == "dot":  # read back: Graphviz lays the source out again
        import graphviz
        from gradtool.report import dot
        svg = ET.fromstring(dot.render(graphviz.Source(text), "svg", dot.find_renderer()))
        return " ".join(t.text or "" for t in svg.iter(SVG_NS + "text"))
    if fmt == "html":  # the graph explorer: its data, unpacked as its script unpacks it
        from gradtool.report import html
        data = html.unpack(re.search(r'<script id="data" type="application/gzip;base64">'
                                     r'(.*?)</script>', text, re.S).group(1))
        return " ".join(t["name"] + " " + " ".join(n["name"] for n in t["nodes"])
                        for t in data["targets"])
    if fmt == "heatmap":  # every map a PNG that decodes, the targets' names as headings
        maps = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
        assert maps and all(base64.b64decode(m)[:8] == b"\x89PNG\r\n\x1a\n" for m in maps)
        return " ".join(re.findall(r"<h2>([^<]*)", text))
    raise AssertionError(f"no reader for the format {fmt!r}: add one to read_written")


def source_line(path, snippet):
    """The (1-based) line of `path` that contains `snippet`; exactly one must."""
    with open(path) as f:
        hits = [i for i, line in enumerate(f, 1) if snippet in line]
    assert len(hits) == 1, f"{snippet!r} found on lines {hits} of {path}"
    return hits[0]


def docstring(path):
    import ast
    with open(path) as f:
        return ast.get_docstring(ast.parse(f.read())) or ""
