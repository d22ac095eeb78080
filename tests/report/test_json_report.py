"""The JSON writer (report/json.py): a graph's nodes one per line from json's C encoder, the
rest of the document indented; what a node line holds; the snapshot leaves the GC as it was."""
import dataclasses
import gc
import json

import pytest

import gradtool as gt
from gradtool.report.json import chunks, clean, inspect_document, node_line
from gradtool.capture.graph import take_snapshot


def _saved_graph():
    """Saved tensors whose stats are -0.0, 0.0 and NaN, and one constant saved again and again."""
    a = gt.tensor([-0.0, -0.0], dtype=gt.float64, requires_grad=True)
    b = gt.tensor([0.0, 0.0], dtype=gt.float64, requires_grad=True)
    c = gt.tensor([float("nan")] * 2, dtype=gt.float64, requires_grad=True)
    y = a * a + b * b + c * c  # a * a and b * b: saved records that differ only in 0.0 or -0.0
    for _ in range(3):
        y = y * 2.5
    return take_snapshot([y.sum()], {"a": a, "b": b, "c": c})


def _as_dataclasses_say(node):
    """The node's JSON values built the plain way: every field of its records, cleaned."""
    saved = []
    for s in node.saved:
        d = dataclasses.asdict(s)
        del d["array_id"]
        saved.append({**d, "modified": s.modified})
    return clean({
        "id": node.id, "name": node.name, "kind": node.kind, "label": node.label,
        "module": node.module, "site": node.site, "problem": node.problem,
        "parents": node.n_parents,
        "next_functions": [{"node": c, "output_nr": nr} for c, nr in node.edges],
        "outputs": {str(k): {"shape": list(v[0]), "dtype": v[1]}
                    for k, v in sorted(node.outputs.items())},
        "saved": saved, "leaf": None if node.leaf is None else dataclasses.asdict(node.leaf)})


def test_a_node_line_holds_every_saved_field_as_the_snapshot_has_it():
    snapshot = _saved_graph()
    stats = []
    for node in snapshot.nodes:
        line = node_line(node)
        assert "\n" not in line
        # as text with sorted keys: -0.0 and 0.0 are equal numbers, not equal JSON
        assert json.dumps(json.loads(line), sort_keys=True) == \
            json.dumps(_as_dataclasses_say(node), sort_keys=True)
        stats += [s["min"] for s in json.loads(line)["saved"] if s["is_tensor"]]
    assert "nan" in stats  # (NaN-aware stats: NaN only when every entry is)
    assert "-0.0" in map(str, stats) and "0.0" in map(str, stats)
    constants = [s for n in snapshot.nodes for s in json.loads(node_line(n))["saved"]
                 if s["name"] == "_saved_other" and not s["is_tensor"]]
    assert [s["value"] for s in constants] == ["2.5"] * 3


def test_the_document_is_indented_and_its_nodes_one_per_line():
    snapshot = _saved_graph()

    class Capture:  # what inspect_document reads of a capture
        target = type("Target", (), {"name": "f", "kind": "example", "filename": "f.py",
                                     "lineno": 1})()
        inputs, outputs, backward_error, diagnostics = [], [], None, []
    Capture.snapshot = snapshot
    text = "".join(chunks(inspect_document("f.py", 0, (3,), [Capture()])))
    doc = json.loads(text)
    assert doc["targets"][0]["graph"]["nodes"] == [json.loads(node_line(n))
                                                   for n in snapshot.nodes]
    lines = text.split("\n")
    assert lines[:3] == ["{", '  "schema": "gradtool.inspect/2",', '  "file": "f.py",']
    node_lines = [line for line in lines if line.lstrip().startswith('{"id": ')]
    assert len(node_lines) == len(snapshot.nodes)
    assert all(line.startswith(" " * 10) for line in node_lines)  # inside targets/graph/nodes


@pytest.mark.parametrize("enabled", [True, False])
def test_taking_a_snapshot_leaves_the_cyclic_gc_as_it_was(enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        _saved_graph()
        assert gc.isenabled() is enabled
        with pytest.raises(Exception):
            take_snapshot([object()])  # not a tensor: raises inside
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
