"""ctc_loss against torch itself: values, gradients and the nodes recorded over random
lengths, labels, blanks, reductions and dtypes (impossible alignments included, with and
without zero_infinity); the refusal of a second order and of forward AD in torch's words;
the saved values; nn.CTCLoss; torch's argument errors. (The sweep's cases compare float64
values, gradients and node names in test_parity_torch.py.)"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402
from tests.engine.test_losses import ctc_errors  # noqa: E402

pytestmark = pytest.mark.parity


def node_chain(out):
    """The names of the nodes from out's grad_fn down its first recorded input."""
    names, node = [], out.grad_fn
    while node is not None:
        names.append(node.name().rpartition("::")[2])
        node = next((child for child, _ in node.next_functions if child is not None), None)
    return names


@st.composite
def ctc_problems(draw):
    frames, batch, classes = draw(st.integers(1, 6)), draw(st.integers(1, 3)), draw(
        st.integers(2, 5))
    blank = draw(st.integers(0, classes - 1))
    labels = [c for c in range(classes) if c != blank]
    target_lengths = [draw(st.integers(0, 4)) for _ in range(batch)]
    targets = [[draw(st.sampled_from(labels)) for _ in range(n)] for n in target_lengths]
    input_lengths = [draw(st.integers(0, frames)) for _ in range(batch)]
    return dict(
        frames=frames, classes=classes, blank=blank, targets=targets,
        input_lengths=input_lengths, target_lengths=target_lengths,
        concatenated=draw(st.booleans()), lengths_as=draw(st.sampled_from(["tensor", "tuple"])),
        reduction=draw(st.sampled_from(["none", "mean", "sum"])),
        zero_infinity=draw(st.booleans()), dtype=draw(st.sampled_from(["float64", "float32"])),
        seed=draw(st.integers(0, 2 ** 16)))


def run(lib, problem):
    """The loss (of log_softmax of random logits), its gradient for a random cotangent, and
    the names of its nodes."""
    rng = np.random.default_rng(problem["seed"])
    logits = rng.standard_normal((problem["frames"], len(problem["targets"]),
                                  problem["classes"])) * 2
    x = lib.tensor(logits, dtype=getattr(lib, problem["dtype"]), requires_grad=True)
    if problem["concatenated"]:
        targets = lib.tensor([c for t in problem["targets"] for c in t], dtype=lib.int64)
    else:
        width = max(problem["target_lengths"], default=0)
        targets = lib.tensor([t + [problem["blank"]] * (width - len(t))
                              for t in problem["targets"]], dtype=lib.int64)
    lengths = (problem["input_lengths"], problem["target_lengths"])
    lengths = ([lib.tensor(v, dtype=lib.int64) for v in lengths]
               if problem["lengths_as"] == "tensor" else [tuple(v) for v in lengths])
    loss = lib.nn.functional.ctc_loss(x.log_softmax(2), targets, *lengths,
                                      blank=problem["blank"], reduction=problem["reduction"],
                                      zero_infinity=problem["zero_infinity"])
    cotangent = lib.tensor(rng.standard_normal(tuple(loss.shape)), dtype=loss.dtype)
    grad, = lib.autograd.grad(loss, x, cotangent)
    return (loss.detach().numpy(), grad.numpy(), str(loss.dtype).split(".")[-1],
            node_chain(loss))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(problem=ctc_problems())
def test_ctc_loss_values_gradients_and_nodes_are_torchs(problem):
    mine, theirs = run(gt, problem), run(torch, problem)
    rtol, atol = (1e-10, 1e-12) if problem["dtype"] == "float64" else (2e-5, 2e-6)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=rtol, atol=atol)  # (inf and NaN alike)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=rtol, atol=atol)
    assert mine[2:] == theirs[2:]


def _first_order(lib):
    rng = np.random.default_rng(1)
    log_probs = lib.tensor(rng.standard_normal((6, 2, 4)), requires_grad=True)
    loss = lib.nn.functional.ctc_loss(log_probs, lib.tensor([[1, 2, 2], [3, 1, 1]]), (6, 5),
                                      (3, 2))
    return log_probs, loss


def test_ctc_loss_gradient_is_recorded_by_a_node_that_refuses_a_second_backward_as_torchs():
    """create_graph works; the gradient's node is NotImplemented, and differentiating it
    raises torch's error then, not before."""
    seen = []
    for lib in (gt, torch):
        log_probs, loss = _first_order(lib)
        grad, = lib.autograd.grad(loss, log_probs, create_graph=True)
        with pytest.raises(RuntimeError) as error:
            grad.sum().backward()
        seen.append((grad.grad_fn.name().rpartition("::")[2], str(error.value)))
    assert seen[0] == seen[1] == ("NotImplemented",
                                  "derivative for aten::_ctc_loss_backward is not implemented")


def test_ctc_loss_refuses_forward_ad_as_torch():
    seen = []
    for lib in (gt, torch):
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(lib.randn(6, 2, 4, dtype=lib.float64),
                                                     lib.randn(6, 2, 4, dtype=lib.float64))
            with pytest.raises(NotImplementedError) as error:
                lib.nn.functional.ctc_loss(dual, lib.tensor([[1, 2], [3, 1]]), (6, 5), (2, 2))
        seen.append(str(error.value))
    assert seen[0] == seen[1]


def test_ctc_loss_node_saves_torchs_values():
    """Every input at full length: torch's log_alpha is then written everywhere it reads."""
    nodes = []
    for lib in (gt, torch):
        rng = np.random.default_rng(2)
        log_probs = lib.tensor(rng.standard_normal((5, 2, 3)), requires_grad=True)
        loss = lib.nn.functional.ctc_loss(log_probs.log_softmax(2), lib.tensor([[1, 2], [2, 2]]),
                                          lib.tensor([5, 5]), lib.tensor([2, 2]),
                                          reduction="none", blank=0)
        nodes.append(loss.grad_fn)
    names = [sorted(a for a in dir(node) if a.startswith("_saved_")) for node in nodes]
    assert names[0] == names[1]
    for name in names[0]:
        mine, theirs = (getattr(node, name) for node in nodes)
        if isinstance(theirs, torch.Tensor):
            np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                       rtol=1e-12, err_msg=name)
        else:
            assert mine == theirs, name


def test_ctc_loss_argument_errors_are_torchs():
    assert ctc_errors(gt) == ctc_errors(torch)


def test_ctc_loss_module_and_torch_ctc_loss_are_torchs():
    """nn.CTCLoss's attributes, repr and (empty) state; torch.ctc_loss's integer reduction,
    none by default (its binding's default)."""
    seen = []
    for lib in (gt, torch):
        module = lib.nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)
        rng = np.random.default_rng(3)
        log_probs = lib.tensor(rng.standard_normal((5, 2, 3))).log_softmax(2)
        targets, lengths = lib.tensor([[1, 0], [0, 1]]), (lib.tensor([5, 4]), lib.tensor([2, 1]))
        values = [module(log_probs, targets, *lengths), lib.ctc_loss(log_probs, targets, *lengths,
                                                                     2),
                  lib.ctc_loss(log_probs, targets, *lengths, 2, 1)]
        seen.append((repr(module), dict(module.state_dict()), module.blank, module.reduction,
                     module.zero_infinity,
                     [(tuple(v.shape), np.round(v.numpy(), 12).tolist()) for v in values]))
    assert seen[0] == seen[1]
