"""mode, histograms, logical ops, movedim, masked_select, put/take, index_copy/index_fill,
unfold, logit, nansum/nanmean against torch (values, dtypes, refusals), with the programs of
tests/engine/test_selecting_ops.py. Tests marked parity, skipped without torch."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from tests.engine import test_selecting_ops as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _described(out):
    return [(tuple(o.shape), str(o.dtype).split(".")[-1], o.detach().numpy())
            if hasattr(o, "detach") else (tuple(o),) for o in out]


@pytest.mark.parametrize("name", [n for n in programs.PROGRAMS if n != "unfold_is_a_view"])
def test_values_are_torchs(name):
    ours, theirs = _described(programs.PROGRAMS[name](gt)), _described(
        programs.PROGRAMS[name](torch))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a[:-1] == b[:-1]
        np.testing.assert_allclose(a[-1], b[-1], rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)


def _grads(lib, fn, arrays):
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *inputs)
    grads = lib.autograd.grad(out.sum(), inputs, create_graph=True)
    total = sum((g * g).sum() for g in grads)
    second = lib.autograd.grad(total, inputs, allow_unused=True) if total.requires_grad else \
        [None] * len(inputs)
    return [out.detach().numpy()] + [g.detach().numpy() for g in grads] + [
        np.zeros(1) if g is None else g.detach().numpy() for g in second]


@pytest.mark.parametrize("name", programs.GRADIENTS)
def test_composites_gradients_are_torchs(name):
    fn, shapes = programs.GRADIENTS[name]
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in shapes]
    for a, b in zip(_grads(gt, fn, arrays), _grads(torch, fn, arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


# gather and the scatters given a wrongly shaped, out-of-range or mistyped index (`x`, `src`:
# float32 (3, 4)): torch's result, or its exception and words
SCATTER_GATHER_CALLS = [
    "x.gather(1, lib.tensor([[0], [1]]))", "x.gather(1, lib.tensor([0, 1]))",
    "x.gather(1, lib.zeros(4, 1, dtype=lib.int64))",
    "x.gather(1, lib.zeros(3, 5, dtype=lib.int64))",
    "x.gather(1, lib.tensor([[4]]))", "x.gather(1, lib.tensor([[-1]]))",
    "x.gather(1, lib.tensor([[0]], dtype=lib.int32))", "x.gather(1, lib.tensor([[0.0]]))",
    "x.gather(2, lib.tensor([[0]]))", "x.gather(0, lib.tensor(0))",
    "lib.arange(3.0).gather(0, lib.tensor([[0]]))", "lib.arange(3.0).gather(0, lib.tensor(2))",
    "x.scatter(1, lib.tensor([[0], [1]]), src)",
    "x.scatter(1, lib.tensor([[0, 1]] * 3), src[:2, :1])",
    "x.scatter(1, lib.tensor([0, 1]), src)", "x.scatter(1, lib.zeros(4, 1, dtype=lib.int64), src)",
    "x.scatter(1, lib.zeros(3, 5, dtype=lib.int64), lib.ones(3, 5))",
    "x.scatter(1, lib.tensor([[4]]), src)", "x.scatter(1, lib.tensor([[-1]]), src)",
    "x.scatter(1, lib.tensor([[0]], dtype=lib.int32), src)",
    "x.scatter(1, lib.tensor([[0.0]]), src)",
    "x.scatter(2, lib.tensor([[0]]), src)", "x.scatter(1, lib.tensor([[4]]), 1.0)",
    "x.scatter(1, lib.tensor([0]), 1.0)", "x.scatter(1, lib.zeros(4, 1, dtype=lib.int64), 1.0)",
    "x.scatter(1, lib.tensor([[0]]), src.double())", "x.scatter(1, lib.tensor([[0]]), src[0])",
    "x.scatter(1, lib.zeros(0, 7, dtype=lib.int64), src)",
    "x.scatter_add(1, lib.zeros(0, 7, dtype=lib.int64), src)",
    "x.scatter_reduce(1, lib.zeros(0, 7, dtype=lib.int64), src, 'amin')",
    "x.gather(1, lib.zeros(0, 7, dtype=lib.int64))",
    "x.scatter_add(1, lib.tensor([[0, 1]] * 3), src[:, :3])",
    "x.scatter_add(1, lib.tensor([0, 1]), src)",
    "x.scatter_add(1, lib.zeros(4, 1, dtype=lib.int64), src)",
    "x.scatter_add(1, lib.tensor([[4]]), src)",
    "x.scatter_add(1, lib.tensor([[0]], dtype=lib.int32), src)",
    "x.scatter_add(1, lib.tensor([[0.0]]), src)",
    "x.scatter_add(1, lib.tensor([[0, 1]] * 3), src[:2, :1])",
    "x.scatter_add(1, lib.tensor([[0]]), src.double())",
    "x.scatter_reduce(1, lib.tensor([[0]]), src, 'amax')",
    "x.scatter_reduce(1, lib.tensor([0]), src, 'amax')",
    "x.scatter_reduce(1, lib.zeros(4, 1, dtype=lib.int64), src, 'sum')",
    "x.scatter_reduce(1, lib.tensor([[4]]), src, 'sum')",
    "x.scatter_reduce(1, lib.tensor([[0]], dtype=lib.int32), src, 'sum')",
    "x.scatter_reduce(1, lib.tensor([[0.0]]), src, 'sum')",
    "x.scatter_reduce(1, lib.tensor([[0, 1]] * 3), src[:2, :1], 'sum')",
    "x.scatter_reduce(1, lib.tensor([[0]]), src.double(), 'sum')",
    "x.clone().scatter_(1, lib.tensor([[4]]), src)",
    "x.clone().scatter_(1, lib.tensor([[0]], dtype=lib.int32), src)",
    "x.clone().scatter_add_(1, lib.tensor([0]), src)",
    "x.clone().scatter_reduce_(1, lib.zeros(4, 1, dtype=lib.int64), src, 'prod')",
]


def _scatter_gather_outcome(lib, code, x=None, src=None):
    x = lib.arange(12.0).view(3, 4) if x is None else x
    src = lib.arange(12.0).view(3, 4) + 100 if src is None else src
    try:
        out = eval(code, {"lib": lib, "x": x, "src": src})
    except Exception as e:  # noqa: BLE001 (the outcome compared: type and words)
        return type(e).__name__, str(e).replace("gradtool.", "torch.")
    return str(out.dtype).split(".")[-1], out.tolist()


@pytest.mark.parametrize("code", SCATTER_GATHER_CALLS)
def test_scatter_and_gather_check_the_index_as_torch(code):
    assert _scatter_gather_outcome(gt, code) == _scatter_gather_outcome(torch, code)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=2),
       st.integers(-1, 1), st.integers(-2, 5), st.sampled_from(["gather", "scatter",
                                                                "scatter_add", "scatter_reduce"]))
def test_scatter_and_gather_with_random_index_shapes_and_values_are_torchs(shape, dim, seed,
                                                                           op):
    """An index of a random shape (fitting or not) and values (some out of range)."""
    values = np.random.default_rng(seed + 2).integers(-1, 5, size=shape)
    call = {"gather": "x.gather({dim}, i)", "scatter": "x.scatter({dim}, i, src)",
            "scatter_add": "x.scatter_add({dim}, i, src)",
            "scatter_reduce": "x.scatter_reduce({dim}, i, src, 'prod')"}[op].format(dim=dim)
    outcomes = []
    for lib in (gt, torch):
        code = call.replace("i", f"lib.tensor({values.tolist()}, dtype=lib.int64).view("
                                 f"{shape[0]}, {shape[1]})", 1)
        outcomes.append(_scatter_gather_outcome(lib, code))
    assert outcomes[0] == outcomes[1]


def _graph_names(node):
    """The names of the nodes behind `node`, depth first (torch's C++ prefix dropped)."""
    names, stack = [], [node]
    while stack:
        node = stack.pop()
        if node is not None:
            names.append(node.name().replace("torch::autograd::", ""))
            stack.extend(next_node for next_node, _ in node.next_functions)
    return names


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("q", [0.3, [0.0, 0.25, 1.0]], ids=["scalar_q", "vector_q"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_records_torchs_graph(name, q, dim, keepdim, interpolation):
    a = np.random.default_rng(0).standard_normal((3, 4, 5))
    a[1, 2, 3] = np.nan
    results = []
    for lib in (gt, torch):
        x = lib.tensor(a, requires_grad=True)
        q_arg = lib.tensor(q, dtype=lib.float64) if isinstance(q, list) else q
        y = getattr(lib, name)(x, q_arg, dim=dim, keepdim=keepdim, interpolation=interpolation)
        y.nansum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), _graph_names(y.grad_fn)))
    (ours, our_grad, our_graph), (theirs, their_grad, their_graph) = results
    assert our_graph == their_graph
    # (torch's lerp kernel rounds some of the values a last bit apart)
    np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=1e-16, equal_nan=True)
    np.testing.assert_array_equal(our_grad, their_grad)
