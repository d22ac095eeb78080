"""gradtool render's drawing, in process: grouping by module call (report/layout.py), the DOT
it makes (report/dot.py) and the HTML page's data (report/html.py). The CLI itself is tested
in test_cli.py; the page in a real browser in test_render_browser.py."""
import os
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradtool as gt
from gradtool.engine import nn
from gradtool.capture.loader import load
from gradtool.report import dot, html, layout
from gradtool.checks.inspection import capture
from gradtool.capture.graph import GraphSnapshot, LeafInfo, NodeInfo, OutputInfo, take_snapshot

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


def ex(spec):
    return os.path.join(EXAMPLES, spec)


def one_capture(spec):
    path, _, name = spec.partition("::")
    return next(capture(t) for t in load(path) if not name or t.name == name)


# ---------------------------------------------------------------- acyclic, whatever the groups
def _acyclic(edges):
    succ = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    state = {}
    for start in list(succ):
        stack = [(start, iter(succ.get(start, ())))]
        if state.get(start):
            continue
        state[start] = 1  # on the path
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return False
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(succ.get(nxt, ()))))
    return True


@st.composite
def random_graphs(draw):
    """A random DAG as a snapshot (n0 the output, edges to lower-numbered... inputs) whose
    nodes carry random module paths: calls nested at random, interleaved at random, so that
    many module calls cannot be contiguous."""
    n = draw(st.integers(2, 40))
    calls = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=n,
                          max_size=n))
    nodes = []
    for i in range(n):
        inputs = draw(st.lists(st.integers(i + 1, n - 1), max_size=3)) if i < n - 1 else []
        outer, inner = calls[i]
        path = ()
        if outer:
            path = ((outer, f"m{outer}", "Block"),)
            if inner:
                path += ((10 * outer + inner, f"m{outer}.c{inner}", "Linear"),)
        kind = "leaf" if not inputs and draw(st.booleans()) else "op"
        nodes.append(NodeInfo(f"n{i}", "AccumulateGrad" if kind == "leaf" else f"Op{i % 3}",
                              kind, [(f"n{j}", 0) for j in inputs], {}, [], module_path=path,
                              seq=draw(st.one_of(st.none(), st.integers(0, 3 * n))),
                              leaf=LeafInfo(None, (2,), "float64", True, False)
                              if kind == "leaf" else None))
    return GraphSnapshot(nodes, [OutputInfo(0, "y", (), "float64", True, False, "n0", 0, True)])


def _ident(item):
    return item.key if isinstance(item, layout.Box) else item


@settings(max_examples=150, deadline=None)
@given(random_graphs(), st.sampled_from([None, 0, 1, 2]), st.integers(3, 12))
def test_grouped_graph_is_always_a_dag(snapshot, depth, readable):
    plan = layout.make_plan(snapshot, depth, readable=readable)
    for node in snapshot.nodes:  # every node is drawn once: as itself or in a collapsed box
        assert plan.visible(node.id) is not None
    edges = [(_ident(a), _ident(b)) for a, b in plan.edges()]
    assert _acyclic(edges), edges
    # each box is one run of the forward order, which is topological (leaves, which nothing
    # points at, may stand outside a chunk)
    pos = {nid: i for i, nid in enumerate(plan.order)}
    assert sorted(pos) == sorted(n.id for n in snapshot.nodes)
    for node in snapshot.nodes:
        assert all(pos[c] < pos[node.id] for c, _ in node.edges)
    ops = [nid for nid in plan.order if snapshot.by_id[nid].kind != "leaf"]
    pos = {nid: i for i, nid in enumerate(ops)}
    for box in plan.root.boxes():
        inside = sorted(pos[n] for n in box.node_ids() if n in pos)
        if not inside:
            continue
        assert inside == list(range(inside[0], inside[0] + len(inside))), box
    # and the DOT drawn from it too (an edge into an open frame is an edge to a node)
    source = dot.build(snapshot, depth=depth).source
    dot_edges = re.findall(r"^\s*(\w+) -> (\w+)", source, re.M)
    assert _acyclic(dot_edges)


@settings(max_examples=40, deadline=None)
@given(random_graphs())
def test_every_view_of_the_page_is_a_dag_and_shows_each_node_once(snapshot):
    plan = layout.make_plan(snapshot, readable=4)
    shown = {}
    for box in layout.views(plan):
        edges = [(_ident(a), _ident(b)) for a, b in plan.edges(box)]
        assert _acyclic(edges)
        for n in box.node_ids():
            if plan.visible(n, box) == n:
                shown[n] = shown.get(n, 0) + 1
    assert shown == {n.id: 1 for n in snapshot.nodes}


@settings(max_examples=80, deadline=None)
@given(random_graphs(), st.booleans())
def test_the_order_the_forward_made_is_taken_when_it_keeps_each_call_together(snapshot, made):
    """A forward that ran each module call's ops one after another (the usual case) made its
    nodes in the order Kahn's algorithm over the calls gives: the plan takes it as it is.
    With `made`, the graph is made so (each node after its inputs, each call's nodes side by
    side); either way the order is the one the algorithm gives."""
    import contextlib
    import dataclasses
    from unittest import mock
    if made:  # the forward makes n(k-1) first, n0 (the output) last; calls side by side
        n = len(snapshot.nodes)
        paths = sorted((node.module_path for node in snapshot.nodes),
                       key=lambda path: [call for call, _, _ in path])
        snapshot = GraphSnapshot(
            [dataclasses.replace(node, seq=n - i, module_path=paths[n - 1 - i])
             for i, node in enumerate(snapshot.nodes)], snapshot.outputs)
    unused = mock.patch.object(layout, "_ready_order", side_effect=AssertionError("not taken"))
    with unused if made else contextlib.nullcontext():
        order = layout.make_plan(snapshot).order
    with mock.patch.object(layout, "_calls_kept_together", return_value=False):
        assert layout.make_plan(snapshot).order == order


def _levels(view):
    """The boxes in sight in a view (those whose every holder up to the view is open), with
    their level below it: [(level, box)]."""
    out, stack = [], [(1, b) for b in view.items if isinstance(b, layout.Box)]
    while stack:
        level, b = stack.pop()
        out.append((level, b))
        if not b.collapsed:
            stack.extend((level + 1, c) for c in b.items if isinstance(c, layout.Box))
    return out


def assert_siblings_alike_fold_alike(plan, readable=layout.READABLE):
    """The folding rule, in every view of the page: boxes in sight at one level and of one
    kind are all open or all folded, and a view keeps to the budget unless it is all open."""
    for view in layout.views(plan):
        states = {}
        for level, b in _levels(view):
            if b.kind != "chunk" and not b.loop:
                states.setdefault((level, layout._kind_of(b)), set()).add(b.collapsed)
        assert all(len(s) == 1 for s in states.values()), (view, states)
        in_sight = {_ident(plan.visible(n, view)) for n in view.node_ids()}
        assert len(in_sight) <= readable or not layout.collapsed_within(view), view


@settings(max_examples=60, deadline=None)
@given(random_graphs(), st.integers(3, 12))
def test_one_folding_rule_siblings_of_one_kind_fold_alike(snapshot, readable):
    plan = layout.make_plan(snapshot, readable=readable)
    states = {}
    for level, b in _levels(plan.root):
        if b.kind != "chunk" and not b.loop:
            states.setdefault((level, layout._kind_of(b)), set()).add(b.collapsed)
    assert all(len(s) == 1 for s in states.values()), states


class NormBlock(nn.Module):
    """The issue's stack: every block a LayerNorm and two Linears."""
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(3)
        self.fc1 = nn.Linear(3, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        return x + self.fc2(self.fc1(self.ln(x)).relu())


def test_blocks_of_a_stack_and_of_a_transformer_fold_alike_in_every_view():
    model = nn.Sequential(*[NormBlock() for _ in range(40)])
    snapshot = take_snapshot([model(gt.randn(2, 3)).sum()],
                             module_names={id(m): f"model.{k}" if k else "model"
                                           for k, m in model.named_modules()})
    plan = layout.make_plan(snapshot)
    assert_siblings_alike_fold_alike(plan)
    titles = dict(_titles(plan))
    assert titles["model.0.ln (LayerNorm)"] == titles["model.39.ln (LayerNorm)"]
    cap = one_capture(os.path.join(MODELS, "transformer_rnn.py"))
    plan = layout.make_plan(cap.snapshot)
    assert_siblings_alike_fold_alike(plan)
    for view in layout.views(plan):  # a block opened in the page: both its norms alike
        if view.title == "model.blocks.3 (Block)":
            norms = [b.collapsed for b in view.boxes() if "norm" in b.title]
            assert len(norms) == 2 and len(set(norms)) == 1


# ---------------------------------------------------------------- module calls, nested
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x).tanh()


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(self.block(x)).sum()


def test_each_module_call_is_its_own_box_nested_with_parameters_inside():
    model = Twice()
    out = model(gt.randn(2, 3))
    snapshot = take_snapshot([out], {f"model.{k}": p for k, p in model.named_parameters()},
                             module_names={id(m): f"model.{k}" if k else "model"
                                           for k, m in model.named_modules()})
    plan = layout.make_plan(snapshot, expand=True)
    titles = [b.title for b in plan.root.boxes()]
    assert "model.block (Block) calls 1–2 ×2" in titles  # identical calls: summarised
    assert titles.count("model (Twice)") == 1
    assert "model.block (Block) call 1/2" in titles and "model.block (Block) call 2/2" in titles
    assert "model.block.fc (Linear) call 1/2" in titles
    weight = next(n for n in snapshot.nodes if n.label == "model.block.fc.weight")
    # the parameter sits in the first call of its module, nested in the model's box
    box = plan.box_of[weight.id]
    assert box.title == "model.block.fc (Linear) call 1/2"
    assert box.parent.title == "model.block (Block) call 1/2"
    assert box.parent.parent.title == "model.block (Block) calls 1–2 ×2"
    assert box.parent.parent.parent.title == "model (Twice)"


def test_a_model_run_again_groups_its_parameters_as_the_first_time():
    """A parameter's AccumulateGrad (and its module tag) outlives a forward pass: a second
    target running the same model (the first one's graph still held) must put each
    parameter in its module's call of this run, not of the first."""
    model = Twice()
    names = {f"model.{k}": p for k, p in model.named_parameters()}
    modules = {id(m): f"model.{k}" if k else "model" for k, m in model.named_modules()}
    plans, held = [], []
    for _ in range(2):
        held.append(model(gt.randn(2, 3)))
        snapshot = take_snapshot([held[-1]], names, module_names=modules)
        plans.append((snapshot, layout.make_plan(snapshot, expand=True)))
    for snapshot, plan in plans:
        weight = next(n for n in snapshot.nodes if n.label == "model.block.fc.weight")
        assert plan.box_of[weight.id].title == "model.block.fc (Linear) call 1/2"
    first, again = ([b.title for b in plan.root.boxes()] for _, plan in plans)
    assert first == again


def test_depth_collapses_deeper_module_calls_and_expand_opens_everything():
    cap = one_capture(ex("resnet_like.py"))
    shallow = layout.make_plan(cap.snapshot, depth=0)
    assert [b.title for b in layout.collapsed_within(shallow.root)] == ["model (ResNetLike)"]
    one = layout.make_plan(cap.snapshot, depth=1)
    collapsed = [b.title for b in layout.collapsed_within(one.root)]
    assert "model.blocks (Sequential)" in collapsed and "model.head (Linear)" in collapsed
    assert "model.cell (Cell) calls 1–3 ×3" in collapsed  # three calls, the same nodes
    full = layout.make_plan(cap.snapshot, expand=True)
    assert not layout.collapsed_within(full.root)
    source = dot.build(cap.snapshot, depth=1).source
    assert "model.blocks (Sequential)" in source and "shape=box3d" in source
    assert "model.blocks.0.norm" not in source


def test_large_graph_collapses_to_a_readable_number_of_boxes():
    model = nn.Sequential(*[Block() for _ in range(60)])
    out = model(gt.randn(2, 3)).sum()
    snapshot = take_snapshot([out])
    assert len(snapshot.nodes) > 300
    plan = layout.make_plan(snapshot)
    visible = {_ident(plan.visible(n.id)) for n in snapshot.nodes}
    assert len(visible) <= layout.READABLE
    assert _acyclic([(_ident(a), _ident(b)) for a, b in plan.edges()])


def test_a_long_chain_is_chunked_with_its_input_in_sight():
    x = gt.randn(3, requires_grad=True)
    y = x
    for _ in range(1000):
        y = y * 1.001
    snapshot = take_snapshot([y.sum()], {"x": x})
    plan = layout.make_plan(snapshot)
    assert any(item == next(n.id for n in snapshot.nodes if n.label == "x")
               for item in plan.root.items)
    chunks = layout.collapsed_within(plan.root)
    assert chunks and all(b.kind == "chunk" for b in chunks)
    assert "MulBackward0 ×" in layout.summary(chunks[0])


MODELS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")


def _titles(plan):
    """Every box's title and whether it is collapsed, outermost first."""
    return [(b.title, b.collapsed) for b in plan.root.boxes()]


def test_a_custom_function_inside_a_module_does_not_split_the_next_module_call():
    caps = {t.name: capture(t) for t in load(os.path.join(MODELS, "mlp_custom.py"))}
    custom = _titles(layout.make_plan(caps["with_custom"].snapshot))
    plain = _titles(layout.make_plan(caps["with_tanh"].snapshot))
    assert [t.replace("custom", "plain") for t, _ in custom] == [t for t, _ in plain] == [
        "plain (MLP)", "plain.fc1 (Linear)", "plain.fc2 (Linear)"]


def test_default_view_of_a_mixed_model_shows_the_blocks_and_folds_the_loop():
    cap = one_capture(os.path.join(MODELS, "transformer_rnn.py"))
    plan = layout.make_plan(cap.snapshot)
    shown = layout.collapsed_within(plan.root)
    # the twelve blocks are each in sight, in their model's open frames
    blocks = [b.title for b in shown if b.title.startswith("model.blocks.")]
    assert blocks == [f"model.blocks.{i} (Block)" for i in range(12)]
    for title in ("model (TinyTransformer)", "model.blocks (Sequential)",
                  "model.blocks.0–11 (Block) ×12"):
        assert (title, False) in _titles(plan)
    # the thirty calls of the cell are one box, not thirty fanned out
    loop = [b for b in shown if b.title.startswith("cell")]
    assert [b.title for b in loop] == ["cell (Cell) calls 1–30 ×30"]
    assert loop[0].n_nodes > 150 and len({_ident(plan.visible(n.id))
                                          for n in cap.snapshot.nodes}) <= layout.READABLE
    # opened in the page, the loop shows its calls
    for box in layout.views(plan):
        if box is loop[0]:
            assert len([b for b in box.items if isinstance(b, layout.Box)]) == 30


def test_chunks_of_a_long_stack_are_named_by_their_calls():
    model = nn.Sequential(*[Block() for _ in range(250)])
    snapshot = take_snapshot([model(gt.randn(2, 3)).sum()],
                             module_names={id(m): f"model.{k}" if k else "model"
                                           for k, m in model.named_modules()})
    plan = layout.make_plan(snapshot)
    repeat = next(b for b in plan.root.boxes() if b.kind == "repeat")
    assert [c.title for c in repeat.items] == [
        "model.0–99 (Block) ×100", "model.100–199 (Block) ×100", "model.200–249 (Block) ×50"]


# ---------------------------------------------------------------- legible
def test_drawing_is_never_scaled_down_and_uses_one_font_with_margins():
    cap = one_capture(ex("resnet_like.py"))
    source = dot.build(cap.snapshot, True, diagnoses=cap.diagnostics).source
    assert not re.search(r"[\[ ]size=", source)
    assert set(re.findall(r"fontname=(\w+)", source)) == {dot.FONT}
    assert 'margin="0.12,0.06"' in source


def test_many_leaves_side_by_side_wrap_into_rows():
    xs = [gt.randn(2, requires_grad=True) for _ in range(20)]
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    source = dot.build(take_snapshot([total.sum()])).source
    assert len(re.findall(r"-> \w+ \[style=invis\]", source)) == 20 - dot.WRAP_LEAVES


# ---------------------------------------------------------------- what inspect knows
def _statement(source, node_id):
    """The attributes of one node statement of a DOT source (labels span lines)."""
    return re.search(rf"\t{node_id} \[(.*?)\]\n(?=\t|}})", source, re.S).group(1)


def test_saved_tensor_modified_in_place_and_its_node_are_red_with_the_line():
    cap = one_capture(ex("inplace_trouble.py::overwrites_saved_output"))
    source = dot.build(cap.snapshot, show_saved=True, diagnoses=cap.diagnostics).source
    exp = next(n for n in cap.snapshot.nodes if n.name == "ExpBackward0")
    block = _statement(source, exp.id)
    assert f"fillcolor=\"{dot.COLORS['fails']}\"" in block and dot.FAIL_COLOR in block
    assert "modified in place at examples/inplace_trouble.py:12" in block
    saved_id = re.search(r"\t(saved\d+) \[label=\"_saved_result", source).group(1)
    saved = _statement(source, saved_id)
    assert dot.FAIL_COLOR in saved and "inplace_trouble.py:12" in saved


def test_cuts_found_by_inspect_are_marked_on_an_edge():
    cap = one_capture(ex("grad_modes.py::scaled_under_no_grad"))
    source = dot.build(cap.snapshot, diagnoses=cap.diagnostics).source
    assert "✂ input w requires grad but gets no gradient" in source.replace("\n", " ")
    assert re.search(r"cut0 -> out0 \[[^]]*label=cut[^]]*style=dashed", source)
    detached = one_capture(ex("grad_modes.py::through_detach"))
    source = dot.build(detached.snapshot, diagnoses=detached.diagnostics).source
    assert "a detach() cut it off" in source.replace("\n", " ")
    assert "no grad" in source  # the output that lost its graph is drawn, dashed


def test_cut_diagnoses_are_read_by_kind_whatever_the_spelling():
    found = dot.cut_diagnoses([{"kind": "grad_cut", "message": "x: detach", "location": "f:1"},
                               {"code": "output-no-grad", "message": "y", "location": None},
                               {"kind": "wrong_gradient", "message": "z"}])
    assert [k for k, _, _ in found] == ["grad-cut", "output-no-grad"]


# ---------------------------------------------------------------- the page's data
def _page_data(text):
    return html.unpack(re.search(r'<script id="data" type="application/gzip;base64">(.*?)</script>',
                                 text, re.S).group(1))


def test_html_page_is_self_contained_and_carries_saved_values():
    cap = one_capture(ex("resnet_like.py"))
    text = html.page([cap], depth=1).decode()
    assert "<script src" not in text and "<link" not in text
    assert "Copyright (c) 2016-2026, The Cytoscape Consortium." in text  # the licences
    assert "Chris Pettitt" in text and "cytoscape-navigator" not in text  # the minimap is ours
    [target] = _page_data(text)["targets"]
    boxes = target["boxes"]
    assert boxes[0]["kind"] == "root" and boxes[0]["parent"] is None
    folded = [b for b in boxes if not b["open"]]
    assert {b["title"] for b in folded} >= {"model.blocks (Sequential)", "model.head (Linear)"}
    for b in boxes[1:]:  # a box's parent comes before it, and what opens with it is inside it
        assert b["parent"] < boxes.index(b)
        for i in b["opens"]:
            parent = boxes[i]["parent"]
            while parent != boxes.index(b):
                parent = boxes[parent]["parent"]
                assert parent is not None
    head = next(b for b in boxes if b["title"] == "model.head (Linear)")
    assert head["summary"]["params"] == 9 and head["module"] == "model.head"
    assert [target["shapes"][i] for i in head["summary"]["ins"]] == ["float64[2, 8]"]
    addmm = next(n for n in target["nodes"] if n["name"] == "AddmmBackward0")
    saved = {s["name"]: s for s in addmm["saved"]}
    assert saved["_saved_mat1"]["version"] == "0 / 0"
    assert saved["_saved_mat1"]["dtype"] == "float64" and "mean" in saved["_saved_mat1"]["stats"]
    assert addmm["site"].startswith("examples/")
    ids = {n["id"] for n in target["nodes"]}
    assert ids == {n.id for n in cap.snapshot.nodes}
    for tail, head_id, shape in target["edges"]:  # every edge between nodes, with its shape
        assert tail in ids and head_id in ids and (shape == -1 or target["shapes"][shape])


def test_page_of_a_20000_node_model_is_small(tmp_path):
    """The page carries every node, gzipped: far below the 36 MB of one SVG per view."""
    cap = _stack_capture(tmp_path, blocks=300, steps=20)
    assert len(cap.snapshot.nodes) > 3_900
    text = html.page([cap])
    assert len(text) < 1_000_000  # 4,000 nodes; 20,000 make about 1.3 MB
    assert len(_page_data(text.decode())["targets"][0]["nodes"]) == len(cap.snapshot.nodes)


@pytest.mark.slow
def test_page_of_a_20000_node_model_is_sane(tmp_path):
    """The page of resnet_like's model at 19,832 nodes: its size, every node once, every
    box after its parent, a first view of a readable number of items, the boxes' counts
    adding up to the nodes (the page's status line sums them)."""
    cap = _stack_capture(tmp_path, blocks=1500, steps=80)
    text = html.page([cap])
    assert len(text) < 2_500_000  # 1.3 MB, of which the libraries are 0.5
    [target] = _page_data(text.decode())["targets"]
    nodes, boxes = target["nodes"], target["boxes"]
    assert len(nodes) == len(cap.snapshot.nodes) > 19_000
    assert len({n["id"] for n in nodes}) == len(nodes)
    assert all(b["parent"] < i for i, b in enumerate(boxes) if i)
    direct = [0] * len(boxes)
    for n in nodes:
        direct[n["box"]] += 1
    held = list(direct)  # each box's nodes, those of the boxes inside it too
    for i in range(len(boxes) - 1, 0, -1):
        held[boxes[i]["parent"]] += held[i]
    assert [b["n"] for b in boxes] == held
    def in_sight(i):  # what box i shows (open boxes show what they hold)
        if not boxes[i]["open"]:
            return 1
        return direct[i] + sum(in_sight(k) for k, b in enumerate(boxes) if b["parent"] == i)
    assert in_sight(0) <= layout.READABLE


def test_a_drawing_needs_nothing_of_the_live_run_and_letting_it_go_frees_it():
    """`gradtool render` lets each capture's run go before it draws, so that the drawing
    reuses that memory: the page and the SVG's graph are the same without it, and the
    graph is freed at once (no reference cycle left for the cyclic GC), and so are the
    gradients backward left on the model's parameters, which outlive the run."""
    import gc
    import weakref
    cap = one_capture(ex("resnet_like.py"))
    page, digraph = html.page([cap]), dot.build(cap.snapshot, diagnoses=cap.diagnostics).source
    output_node = weakref.ref(cap.outputs[0].grad_fn)
    parameters = [t for _, t in cap.parameters]
    assert parameters and all(p.grad is not None for p in parameters)
    gc.disable()
    try:
        cap.let_run_go()
        assert output_node() is None
    finally:
        gc.enable()
    assert all(p.grad is None for p in parameters)
    assert html.page([cap]) == page
    assert dot.build(cap.snapshot, diagnoses=cap.diagnostics).source == digraph


def test_the_page_leaves_the_garbage_collector_as_it_found_it_with_nothing_to_collect():
    """The page pauses the cyclic collector while it is made and leaves it on or off as it
    was, when the page fails too; the page is the same either way. What it made is freed
    when it is done, with no reference cycle left for the collector's next pass."""
    import gc
    cap = one_capture(ex("resnet_like.py"))
    assert gc.isenabled()
    page = html.page([cap])
    assert gc.isenabled()
    with pytest.raises(AttributeError):
        html.data([object()])
    assert gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        data = html.data([cap])
        assert not gc.isenabled()
        assert gc.collect() == 0
        assert html.page([cap]) == page and html.unpack(data) == _page_data(page.decode())
    finally:
        gc.enable()


def _stack_capture(tmp_path, blocks, steps):
    """examples/resnet_like.py's model with `blocks` residual blocks and `steps` cell calls."""
    path = tmp_path / "stack.py"
    path.write_text(f"import sys\nsys.path.insert(0, {EXAMPLES!r})\n"
                    "import gradtool\nfrom resnet_like import ResNetLike\n"
                    f"gradtool.manual_seed(0)\nmodel = ResNetLike(depth={blocks}, "
                    f"steps={steps}).double()\n\n\n@gradtool.example((2, 4))\n"
                    "def stack(x):\n    return model(x)\n")
    return one_capture(str(path))


def test_saved_tensor_stats_skip_nans_and_are_nan_when_all_are():
    x = gt.tensor([1.0, float("nan"), 3.0, -2.0], requires_grad=True)
    y = gt.tensor([float("nan")] * 2, requires_grad=True)
    snap = take_snapshot([(x.exp().sum() + y.exp().sum())])
    stats = {n.saved[0].shape: (n.saved[0].min, n.saved[0].mean, n.saved[0].max)
             for n in snap.nodes if n.name == "ExpBackward0"}
    # exp saves its result: exp(x) of the numbers, the NaN left out
    assert stats[(4,)] == pytest.approx((np.exp(-2), (np.exp(1) + np.exp(3) + np.exp(-2)) / 3,
                                         np.exp(3)))
    assert all(np.isnan(v) for v in stats[(2,)])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e150, 1e150),
                          st.sampled_from([float("nan"), float("inf"), float("-inf")])),
                max_size=6))
def test_leaf_gradient_norm_skips_nans_and_finite_says_whether_every_element_is(grad):
    """What inspect shows of a leaf's gradient: the norm of its numbers (NaNs left out, an
    inf makes it inf) and whether all of it is finite."""
    import math
    from types import SimpleNamespace
    import gradtool.adapters as engines
    from gradtool.checks.inspection import _backward
    x = gt.ones(len(grad), dtype=gt.float64, requires_grad=True)
    out = x * gt.tensor(grad, dtype=gt.float64)  # backward of ones: x.grad is `grad`
    result = SimpleNamespace(outputs=[out], snapshot=take_snapshot([out]), warnings=[])
    _backward(engines.current(), result)
    [leaf] = [n.leaf for n in result.snapshot.leaves]
    assert leaf.grad_finite == all(math.isfinite(g) for g in grad)
    expected = math.sqrt(math.fsum(g * g for g in grad if not math.isnan(g)))
    assert leaf.grad_norm == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- through the CLI
def _pngs(text):
    """(width, height) of every inline PNG of a page."""
    import base64
    import struct
    sizes = []
    for b64 in re.findall(r'src="data:image/png;base64,([^"]+)"', text):
        data = base64.b64decode(b64)
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        sizes.append(struct.unpack(">II", data[16:24]))
    return sizes


def test_cli_gradcheck_html_draws_three_heatmaps_per_pair_with_worst_and_diagnoses(tmp_path):
    import cli_util as cu
    page_path = tmp_path / "report.html"
    (tmp_path / "two.py").write_text(
        "import gradtool\n\n\n@gradtool.example((4,), (3,))\n"
        "def outer(x, y):\n    return x[:, None] * y[None, :]\n")
    failing, passing = cu.run_many([
        ["gradcheck", ex("broken_wrong_gradient.py"), "--html", page_path],
        ["gradcheck", tmp_path / "two.py", "--html", tmp_path / "two.html"]])
    assert failing.returncode == 1, str(failing)  # the verdict is unchanged by --html
    text = page_path.read_text()
    assert _pngs(text) == [(3, 3)] * 3  # numerical, analytical, difference: one pixel each
    assert "wrong_gradient" in text and "central differences give 1.23042" in text
    # the worst entry (input 2, output 2) ringed in each map
    assert text.count('<rect x="2" y="2" width="1" height="1"') == 3
    assert "http" not in text.replace("http-equiv", "")
    assert passing.returncode == 0, str(passing)
    two = (tmp_path / "two.html").read_text()
    # one pair per input: rows are the input's elements, columns the output's
    assert _pngs(two) == [(12, 4)] * 3 + [(12, 3)] * 3
    assert "output 0 w.r.t. x" in two and "output 0 w.r.t. y" in two


def test_heatmaps_ring_the_entry_the_report_names_worst():
    from types import SimpleNamespace
    from gradtool.report import heatmap
    # largest absolute error at (0, 0); furthest outside the tolerance at (1, 1)
    pair = SimpleNamespace(numerical=np.array([[100.0, 0.0], [0.0, 0.001]]),
                           analytical=np.array([[101.0, 0.0], [0.0, 0.01]]))
    text = heatmap._maps("k", pair, {}, (2,))
    assert text.count('<rect x="0" y="0" width="1" height="1"') == 3


def _map_sizes(text):
    """(width, height) in CSS pixels of every heatmap of a page."""
    return [(int(w), int(w) * int(r) / int(c)) for w, c, r in
            re.findall(r'style="width:(\d+)px;aspect-ratio:(\d+)/(\d+)"', text)]


def test_scalar_output_heatmaps_are_compact(tmp_path):
    import cli_util as cu
    (tmp_path / "mlp.py").write_text(
        "import gradtool\nimport gradtool as torch\nfrom gradtool import nn\n"
        "torch.manual_seed(0)\nmodel = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), "
        "nn.Linear(32, 1)).double()\n\n\n@gradtool.example((3, 4))\n"
        "def loss(x):\n    return model(x).pow(2).mean()\n")
    r = cu.run("gradcheck", tmp_path / "mlp.py", "--html", tmp_path / "mlp.html")
    assert r.returncode == 0, str(r)
    text = (tmp_path / "mlp.html").read_text()
    sizes = _map_sizes(text)
    assert len(sizes) == 3 * 5  # x and four parameters, three maps each
    assert all(w <= 360 and h <= 361 for w, h in sizes), sizes
    # the (32, 4) weight's 128 entries as its own rows of 4, the 32-element bias in rows of 6
    assert "the input's 128 elements in rows of 4" in text
    assert "the input's 32 elements in rows of 6" in text


def test_cli_render_html_writes_one_page(tmp_path):
    import cli_util as cu
    r = cu.run("render", ex("model.py"), "-o", tmp_path / "g.html")
    assert r.returncode == 0 and r.stdout == "", str(r)
    assert "wrote" in r.stderr and "(html," in r.stderr
    text = (tmp_path / "g.html").read_text()
    assert text.startswith("<!DOCTYPE html>") and len(_page_data(text)["targets"]) == 1
    assert os.listdir(tmp_path) == ["g.html"]


def test_page_carries_a_nodes_own_metadata_beside_its_module():
    from types import SimpleNamespace
    x = gt.randn(3, requires_grad=True)
    y = x.exp()
    y.grad_fn.metadata["note"] = "set by the user"
    cap = SimpleNamespace(snapshot=take_snapshot([y.sum()]), diagnostics=[],
                          target=SimpleNamespace(name="f"))
    data = _page_data(html.page([cap]).decode())
    exp = next(n for n in data["targets"][0]["nodes"] if n["name"] == "ExpBackward0")
    assert exp["metadata"] == {"note": "'set by the user'"}
