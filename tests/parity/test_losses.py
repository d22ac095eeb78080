"""The loss modules against torch: each module's value, input gradient and node name on a
3-D input, and cross_entropy with label smoothing op for op (graph, values, gradients).
Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine import test_losses as engine_losses

pytestmark = pytest.mark.parity


@pytest.mark.parametrize("make", [
    lambda nn: nn.BCELoss(weight=None), lambda nn: nn.BCEWithLogitsLoss(reduction="sum"),
    lambda nn: nn.L1Loss(), lambda nn: nn.SmoothL1Loss(beta=0.3), lambda nn: nn.HuberLoss(),
    lambda nn: nn.MSELoss(reduction="sum"), lambda nn: nn.NLLLoss(ignore_index=1),
    lambda nn: nn.CrossEntropyLoss(reduction="none")],
    ids=["BCELoss", "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "MSELoss",
         "NLLLoss", "CrossEntropyLoss"])
def test_loss_modules_match_torch(make):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 0.9, (2, 3, 4))
    labels = rng.integers(0, 3, (2, 4))
    results = []
    for lib in (gt, torch):
        module = make(lib.nn)
        xt = lib.tensor(x, requires_grad=True)
        classes = isinstance(module, (lib.nn.NLLLoss, lib.nn.CrossEntropyLoss))
        target = lib.tensor(labels) if classes else lib.tensor(rng.random(x.shape) if lib is gt
                                                               else results[0][3])
        out = module(xt, target)
        (g,) = lib.autograd.grad(out.sum(), xt)
        results.append((out.detach().numpy(), g.numpy(), out.grad_fn.name(),
                        None if classes else target.numpy()))
    (mine, theirs) = results
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12, atol=1e-14)
    assert mine[2] == theirs[2]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_label_smoothing_cross_entropy_is_torchs_graph_values_and_gradients(reduction,
                                                                          weighted):
    """torch's cross_entropy_loss_label_smoothing op for op: the smoothing term's in-place
    masked_fill of ignored targets, mul.Scalar (MulBackward1) for both weights."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    logits, target = rng.standard_normal((3, 10)), np.array([1, 3, -100])
    weight = np.linspace(0.5, 2, 10) if weighted else None

    def walk(node, out, seen):
        if node is not None and node not in seen:
            seen.add(node)
            out.append((node.name().rpartition("::")[2],
                        sorted(a for a in dir(node) if a.startswith("_saved"))))
            for child, _ in node.next_functions:
                walk(child, out, seen)
        return out
    seen = []
    for lib in (gt, torch):
        x = lib.tensor(logits, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(
            x, lib.tensor(target), label_smoothing=0.1, reduction=reduction,
            weight=None if weight is None else lib.tensor(weight))
        loss.sum().backward()
        seen.append((walk(loss.grad_fn, [], set()), loss.detach().numpy(), x.grad.numpy()))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-12)
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-12, atol=1e-15)


def _graph(node, seen):
    if node is None or node in seen:
        return []
    seen.add(node)
    names = [node.name().rpartition("::")[2]]
    for child, _ in node.next_functions:
        names += _graph(child, seen)
    return names


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,loss,inputs", engine_losses.LOSSES,
                         ids=[case[0] for case in engine_losses.LOSSES])
def test_margin_and_likelihood_losses_are_torchs(name, loss, inputs, reduction):
    """Values, gradients w.r.t. every input and the recorded graph, node for node."""
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        tensors = [lib.tensor(x, requires_grad=True) for x in inputs]
        out = loss(lib, reduction)(*tensors)
        grads = lib.autograd.grad(out.sum(), tensors)
        seen.append((out.detach().numpy(), [g.numpy() for g in grads],
                     _graph(out.grad_fn, set())))
    (mine, theirs) = seen
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12, atol=1e-14)
    for g_mine, g_theirs in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(g_mine, g_theirs, rtol=1e-10, atol=1e-13)
    assert mine[2] == theirs[2]


def test_loss_argument_errors_are_torchs():
    torch = pytest.importorskip("torch")
    mine, theirs = (engine_losses.loss_errors(lib) for lib in (gt, torch))
    assert mine == [None if e is None else (e[0], e[1].replace("torch.", "gradtool."))
                    for e in theirs]


def test_new_loss_modules_reprs_and_state_dicts_are_torchs():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        nn = lib.nn
        modules = [nn.CosineEmbeddingLoss(0.5), nn.HingeEmbeddingLoss(), nn.MarginRankingLoss(),
                   nn.TripletMarginLoss(swap=True), nn.PoissonNLLLoss(full=True),
                   nn.GaussianNLLLoss(full=True), nn.NLLLoss2d(weight=lib.ones(3)),
                   nn.MultiLabelSoftMarginLoss(weight=lib.ones(2)),
                   nn.TripletMarginWithDistanceLoss(distance_function=nn.CosineSimilarity()),
                   nn.SoftMarginLoss(), nn.MultiLabelMarginLoss(reduction="sum"),
                   nn.MultiMarginLoss(p=2, margin=0.5, weight=lib.ones(3))]
        seen.append([(repr(m), list(m.state_dict()), m.reduction) for m in modules])
    assert seen[0] == seen[1]


# ---- linear_cross_entropy (the reference path: linear then cross_entropy, torch's nodes)
def _node_names(node, seen):
    if node is None or node in seen:
        return []
    seen.add(node)
    names = [node.name().rpartition("::")[2]]
    for child, _ in node.next_functions:
        names += _node_names(child, seen)
    return names


LINEAR_CROSS_ENTROPY = {
    "bias": lambda F, t, x, w, w3, b, b3: F.linear_cross_entropy(x, w, t.tensor([1, 0, 4, 2]),
                                                                 linear_bias=b),
    "one_sample": lambda F, t, x, w, w3, b, b3: F.linear_cross_entropy(x[0], w, t.tensor(3)),
    "k_dimensional": lambda F, t, x, w, w3, b, b3: F.linear_cross_entropy(
        x, w3, t.tensor(engine_losses.LCE_TARGET), linear_bias=b3, reduction="none"),
    "probabilities_smoothed": lambda F, t, x, w, w3, b, b3: F.linear_cross_entropy(
        x, w, (x @ w.t()).detach().softmax(1), label_smoothing=0.1, reduction="sum"),
    "weight_ignore_index_smoothed": lambda F, t, x, w, w3, b, b3: F.linear_cross_entropy(
        x, w, t.tensor([1, 0, 4, 2]), weight=t.linspace(0.5, 2, 5, dtype=t.float64),
        ignore_index=4, label_smoothing=0.2),
    "ignore_index_none_is_minus_100": lambda F, t, x, w, w3, b, b3: F.linear_cross_entropy(
        x, w, t.tensor([1, -100, 2, 3]), reduction="none"),
}


@pytest.mark.parametrize("name", sorted(LINEAR_CROSS_ENTROPY))
def test_linear_cross_entropy_values_gradients_and_graph_are_torchs(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in ((4, 3), (5, 3), (5, 2, 3), (5,), (5, 2))]
    seen = []
    for lib in (gt, torch):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        loss = LINEAR_CROSS_ENTROPY[name](lib.nn.functional, lib, *inputs)
        grads = lib.autograd.grad(loss.sum(), inputs, allow_unused=True)
        seen.append((loss.detach().numpy(), [None if g is None else g.numpy() for g in grads],
                     _node_names(loss.grad_fn, set())))
    np.testing.assert_allclose(seen[0][0], seen[1][0], rtol=1e-12)
    for mine, theirs in zip(seen[0][1], seen[1][1]):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            np.testing.assert_allclose(mine, theirs, rtol=1e-11, atol=1e-14)
    assert seen[0][2] == seen[1][2]


def test_linear_cross_entropy_errors_module_and_options_are_torchs():
    torch = pytest.importorskip("torch")
    assert engine_losses.linear_cross_entropy_errors(gt) == \
        engine_losses.linear_cross_entropy_errors(torch)
    seen = []
    for lib in (gt, torch):
        module = lib.nn.LinearCrossEntropyLoss(3, 5, out_features=(2,), bias=True,
                                               ignore_index=3, label_smoothing=0.1,
                                               options=lib.nn.LinearCrossEntropyOptions(
                                                   batch_chunk_size=4))
        seen.append((repr(module).replace("torch.", "gradtool."), list(module.state_dict()),
                     repr(lib.nn.LinearCrossEntropyOptions())))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", [{}, {"batch_chunk_size": 4},
                                     {"chunking_method": "aspect_ratio:4"}],
                         ids=["auto", "batch_chunk_size", "aspect_ratio"])
def test_linear_cross_entropy_in_chunks_is_torchs(reduction, options):
    """options: torch's chunked ops (their nodes, their inputs' edges), the reference path's
    values and gradients; a batch of one row, its squeeze."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s) for s in ((6, 3), (5, 3), (5,))]
    cotangent = np.linspace(-1, 2, 6) if reduction == "none" else np.array(1.7)
    seen = []
    for lib in (gt, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        loss = lib.nn.functional.linear_cross_entropy(
            x, w, lib.tensor([1, 0, 4, 2, 1, -100]), linear_bias=b,
            weight=lib.tensor([0.5, 1.0, 2.0, 1.0, 1.5]), reduction=reduction,
            options=lib.nn.LinearCrossEntropyOptions(**options))
        grads = lib.autograd.grad(loss, (x, w, b), lib.tensor(cotangent))
        one = lib.nn.functional.linear_cross_entropy(
            x[0], w, lib.tensor(3), options=lib.nn.LinearCrossEntropyOptions())
        seen.append(([loss.detach().numpy()] + [g.numpy() for g in grads],
                     _node_names(loss.grad_fn, set()), _node_names(one.grad_fn, set()),
                     one.item()))
    for mine, theirs in zip(seen[0][0], seen[1][0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-11, atol=1e-14)
    assert seen[0][1:3] == seen[1][1:3]
    assert seen[0][3] == pytest.approx(seen[1][3], rel=1e-12)


def test_linear_cross_entropy_in_chunks_refusals_and_warning_are_torchs():
    """A second backward, a chunk size and method that disagree, a call the chunked path
    cannot take (its warning, then the reference path)."""
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=True)
        w, target = lib.ones(5, 3, dtype=lib.float64), lib.tensor([1, 0, 4, 2])
        options = lib.nn.LinearCrossEntropyOptions
        loss = lib.nn.functional.linear_cross_entropy(x, w, target, options=options())
        loss.backward()
        with pytest.raises(RuntimeError) as twice:
            loss.backward()
        with pytest.raises(ValueError) as disagree:
            lib.nn.functional.linear_cross_entropy(
                x, w, target, options=options(batch_chunk_size=3, chunking_method="aspect_ratio"))
        with pytest.warns(UserWarning) as warned:
            smoothed = lib.nn.functional.linear_cross_entropy(x, w, target, label_smoothing=0.1,
                                                              options=options())
        seen.append((str(twice.value), str(disagree.value),
                     str(warned[0].message).replace("torch.", "gradtool."),
                     smoothed.grad_fn.name()))
    assert seen[0] == seen[1]
