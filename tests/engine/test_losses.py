"""The embedding, margin and likelihood losses (cosine embedding, hinge embedding, margin
ranking, triplet margin with and without a distance function, Poisson and Gaussian NLL,
soft margin, multi-class and multi-label margin, multilabel soft margin, NLLLoss2d): gradients against central differences, the closed form
of a few, and torch's argument errors. LOSSES is shared with tests/parity/test_losses.py,
which compares values, gradients and graphs with torch's."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradcheck_util import check_grads

RNG = np.random.default_rng(3)
X1, X2, X3 = (RNG.standard_normal((4, 5)) for _ in range(3))
SIGNS = np.array([1, -1, 1, -1])
POSITIVE = RNG.uniform(0.2, 2.0, (4, 5))
COUNTS = RNG.integers(0, 5, (4, 5)).astype(float)
PROBS = RNG.uniform(0, 1, (4, 5))


def _cosine(lib, reduction):
    return lambda a, b: lib.nn.CosineEmbeddingLoss(margin=0.2, reduction=reduction)(
        a, b, lib.tensor(SIGNS))


def _hinge(lib, reduction):
    return lambda a: lib.nn.HingeEmbeddingLoss(margin=0.7, reduction=reduction)(
        a, lib.tensor(np.tile(SIGNS[:, None], (1, 5)), dtype=lib.float64))


def _ranking(lib, reduction):
    return lambda a, b: lib.nn.MarginRankingLoss(margin=0.3, reduction=reduction)(
        a[:, 0], b[:, 0], lib.tensor(SIGNS, dtype=lib.float64))


def _triplet(lib, reduction, swap=False, p=2.0):
    return lambda a, b, c: lib.nn.TripletMarginLoss(margin=1.5, p=p, swap=swap,
                                                    reduction=reduction)(a, b, c)


def _triplet_distance(lib, reduction):
    return lambda a, b, c: lib.nn.functional.triplet_margin_with_distance_loss(
        a, b, c, distance_function=lambda x, y: 1 - lib.nn.functional.cosine_similarity(x, y),
        margin=0.5, swap=True, reduction=reduction)


def _poisson(lib, reduction, log_input=True, full=False):
    return lambda a: lib.nn.PoissonNLLLoss(log_input=log_input, full=full,
                                           reduction=reduction)(a, lib.tensor(COUNTS))


def _gaussian(lib, reduction, full=False):
    return lambda a, var: lib.nn.GaussianNLLLoss(full=full, reduction=reduction)(
        a, lib.tensor(X3), var)


def _multilabel(lib, reduction):
    return lambda a: lib.nn.MultiLabelSoftMarginLoss(
        weight=lib.tensor(np.linspace(0.5, 1.5, 5)), reduction=reduction)(a, lib.tensor(PROBS))


CLASSES = np.array([0, 4, 2, 1])
LISTED = np.array([[3, 0, -1, 1, 2], [1, 2, 4, -1, 0], [0, -1, 1, 2, 3], [4, 3, 2, 1, 0]])


def _soft_margin(lib, reduction):
    return lambda a: lib.nn.SoftMarginLoss(reduction=reduction)(a, lib.tensor(np.sign(X2)))


def _multi_margin(lib, reduction):
    return lambda a: lib.nn.MultiMarginLoss(p=2, margin=0.5, weight=lib.tensor(
        np.linspace(0.5, 1.5, 5)), reduction=reduction)(a, lib.tensor(CLASSES))


def _multilabel_margin(lib, reduction):
    return lambda a: lib.nn.MultiLabelMarginLoss(reduction=reduction)(a, lib.tensor(LISTED))


# (name, loss given the library and a reduction, inputs)
LOSSES = [("cosine_embedding", _cosine, (X1, X2)), ("hinge_embedding", _hinge, (X1,)),
          ("margin_ranking", _ranking, (X1, X2)), ("triplet_margin", _triplet, (X1, X2, X3)),
          ("triplet_margin_swap_p1", lambda lib, r: _triplet(lib, r, swap=True, p=1.0),
           (X1, X2, X3)),
          ("triplet_margin_with_distance", _triplet_distance, (X1, X2, X3)),
          ("poisson_nll", _poisson, (X1,)),
          ("poisson_nll_rates_full", lambda lib, r: _poisson(lib, r, log_input=False,
                                                             full=True), (POSITIVE,)),
          ("gaussian_nll", _gaussian, (X1, POSITIVE)),
          ("gaussian_nll_full_homoscedastic", lambda lib, r: _gaussian(lib, r, full=True),
           (X1, POSITIVE[:, 0])),
          ("multilabel_soft_margin", _multilabel, (X1,)),
          ("soft_margin", _soft_margin, (X1,)), ("multi_margin", _multi_margin, (X1,)),
          ("multi_margin_one_sample", lambda lib, r: lambda a: lib.nn.functional.multi_margin_loss(
              a[0], lib.tensor(CLASSES[0]), reduction=r), (X1,)),
          ("multilabel_margin", _multilabel_margin, (X1,))]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,loss,inputs", LOSSES, ids=[case[0] for case in LOSSES])
def test_loss_gradients_match_central_differences(name, loss, inputs, reduction):
    tensors = [gt.tensor(x, requires_grad=True) for x in inputs]
    check_grads(loss(gt, reduction), tensors)


def test_closed_forms():
    """The losses' formulas written out in numpy, elementwise."""
    F = gt.nn.functional
    a, b = gt.tensor(X1), gt.tensor(X2)
    cos = (X1 * X2).sum(1) / np.sqrt((X1 ** 2).sum(1) * (X2 ** 2).sum(1))
    np.testing.assert_allclose(
        F.cosine_embedding_loss(a, b, gt.tensor(SIGNS), margin=0.1, reduction="none").numpy(),
        np.where(SIGNS == 1, 1 - cos, np.maximum(cos - 0.1, 0)), rtol=1e-10)
    np.testing.assert_allclose(
        F.margin_ranking_loss(a, b, gt.tensor(np.ones((4, 5))), margin=0.2, reduction="sum")
        .item(), np.maximum(-(X1 - X2) + 0.2, 0).sum())
    np.testing.assert_allclose(
        F.poisson_nll_loss(a, gt.tensor(COUNTS)).item(), (np.exp(X1) - COUNTS * X1).mean())
    var = POSITIVE
    np.testing.assert_allclose(
        F.gaussian_nll_loss(a, b, gt.tensor(var), full=True, reduction="none").numpy(),
        0.5 * (np.log(var) + (X1 - X2) ** 2 / var) + 0.5 * math.log(2 * math.pi))
    d_pos = np.linalg.norm(X1 - X2 + 1e-6, axis=1)
    d_neg = np.linalg.norm(X1 - X3 + 1e-6, axis=1)
    np.testing.assert_allclose(
        F.triplet_margin_loss(a, b, gt.tensor(X3), margin=2.0, reduction="none").numpy(),
        np.maximum(2.0 + d_pos - d_neg, 0))


def test_gaussian_nll_clamps_var_without_a_gradient_through_the_clamp():
    var = gt.tensor([1e-9, 0.5], dtype=gt.float64, requires_grad=True)
    gt.nn.functional.gaussian_nll_loss(gt.zeros(2, dtype=gt.float64),
                                       gt.ones(2, dtype=gt.float64), var).backward()
    assert var.grad[0].item() == pytest.approx(0.5 * (1 / 1e-6 - 1 / 1e-12) / 2)


def loss_errors(lib):
    """Each loss's argument errors: (exception type, message)."""
    F = lib.nn.functional
    t = lib.ones(3, 4)
    calls = [
        lambda: F.cosine_embedding_loss(t, t, lib.ones(3, 1)),
        lambda: F.cosine_embedding_loss(t, t, lib.ones(3)[0]),
        lambda: F.cosine_embedding_loss(t[0], t[0], lib.ones(3)),
        lambda: F.margin_ranking_loss(t, t[0], t),
        lambda: F.triplet_margin_loss(t, t, t[0]),
        lambda: F.triplet_margin_loss(t, t, t, margin=0),
        lambda: F.triplet_margin_with_distance_loss(t, t, t, reduction="avg"),
        lambda: F.triplet_margin_with_distance_loss(t, t, t, margin=-1.0),
        lambda: lib.nn.TripletMarginLoss(margin=0),
        lambda: lib.nn.TripletMarginWithDistanceLoss(margin=0),
        lambda: F.gaussian_nll_loss(t, t, -1.0),
        lambda: F.gaussian_nll_loss(t, t, -t),
        lambda: F.gaussian_nll_loss(t, t, lib.ones(2, 4)),
        lambda: F.gaussian_nll_loss(t, t, t, reduction="avg"),
        lambda: F.poisson_nll_loss(t, t, reduction="avg"),
        lambda: F.hinge_embedding_loss(t, t, reduction="avg"),
        lambda: F.multilabel_soft_margin_loss(t, t, reduction="avg"),
        lambda: F.soft_margin_loss(t, t[:2]),
        lambda: F.soft_margin_loss(t[0], t),
        lambda: F.multi_margin_loss(t, lib.tensor([1, 0, 5])),
        lambda: F.multi_margin_loss(t, lib.tensor([1, 0])),
        lambda: F.multi_margin_loss(t, lib.tensor([1, 0, 2]), p=3),
        lambda: F.multi_margin_loss(t, lib.tensor([1, 0, 2]), weight=lib.ones(2, 2)),
        lambda: F.multi_margin_loss(t, lib.tensor([1, 0, 2]), weight=lib.ones(3)),
        lambda: lib.nn.MultiMarginLoss(p=3),
        lambda: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
        lambda: F.multilabel_margin_loss(t, lib.tensor([[1, -1, 0, 0]])),
        lambda: F.multilabel_margin_loss(t, lib.tensor([[1, -1, 0, 4]] * 3)),
    ]
    out = []
    for call in calls:
        try:
            call()
            out.append(None)
        except Exception as e:  # noqa: BLE001 (the type is compared too)
            out.append((type(e).__name__, str(e)))
    return out


def test_loss_argument_errors():
    errors = loss_errors(gt)
    assert errors[0] == ("RuntimeError",
                         "0D or 1D target tensor expected, multi-target not supported")
    assert errors[5] == ("ValueError", "margin must be greater than 0, got 0")
    assert errors[8] == ("ValueError", "TripletMarginLoss: expected margin to be greater than 0, "
                                       "got 0 instead")
    assert errors[10] == errors[11] == ("ValueError", "var has negative entry/entries")
    assert errors[12] == ("ValueError", "var is of incorrect size")
    assert errors[19] == ("RuntimeError", "target out of range")
    assert errors[21] == ("ValueError", "only p == 1 and p == 2 supported")
    assert errors[27] == ("RuntimeError", "argument #2 'target' is out of range")
    assert all(error is not None for error in errors)


def test_nll_loss_2d_is_nll_loss_under_its_old_name():
    logp = gt.randn(2, 3, 4, 4, dtype=gt.float64).log_softmax(1)
    target = gt.randint(0, 3, (2, 4, 4))
    loss = gt.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(loss, gt.nn.NLLLoss) and loss.ignore_index == 1
    assert loss(logp, target).item() == gt.nn.NLLLoss(ignore_index=1)(logp, target).item()


# ---- CTC: its gradients are sweep cases (tests/engine/test_op_gradients.py); here what the
# loss means, its forms of targets and lengths, and torch's argument errors
def _ctc_inputs(lib, t=5, n=2, classes=4, seed=0):
    x = np.random.default_rng(seed).standard_normal((t, n, classes))
    return lib.tensor(x, requires_grad=True).log_softmax(2)


def test_ctc_loss_of_a_certain_alignment_is_zero_and_of_an_impossible_one_infinite():
    """One frame per label, each certain: p(target) = 1; a target longer than the frames
    has no alignment: infinite, or 0 with zero_infinity."""
    certain = gt.full((3, 1, 3), -1e9, dtype=gt.float64)
    for frame, label in enumerate([1, 0, 2]):
        certain[frame, 0, label] = 0.0
    loss = gt.nn.functional.ctc_loss(certain, gt.tensor([[1, 2]]), (3,), (2,), reduction="sum")
    assert loss.item() == 0.0
    log_probs = _ctc_inputs(gt)
    impossible = gt.nn.functional.ctc_loss(log_probs, gt.tensor([[1, 1, 1], [2, 3, 1]]), (4, 5),
                                           (3, 3), reduction="none")
    assert impossible[0].item() == math.inf and math.isfinite(impossible[1].item())
    zeroed = gt.nn.functional.ctc_loss(log_probs, gt.tensor([[1, 1, 1], [2, 3, 1]]), (4, 5),
                                       (3, 3), reduction="none", zero_infinity=True)
    assert zeroed[0].item() == 0.0 and zeroed[1].item() == impossible[1].item()


def test_ctc_loss_takes_targets_padded_or_concatenated_and_lengths_as_tensors_or_tuples():
    log_probs = _ctc_inputs(gt)
    padded, concatenated = gt.tensor([[1, 2, 2], [3, 0, 0]]), gt.tensor([1, 2, 2, 3])
    as_tuples, as_tensors = ((5, 4), (3, 1)), (gt.tensor([5, 4]), gt.tensor([3, 1], dtype=gt.int32))
    losses = [gt.nn.functional.ctc_loss(log_probs, targets, *lengths, reduction="none")
              for targets in (padded, concatenated) for lengths in (as_tuples, as_tensors)]
    assert all(loss.equal(losses[0]) for loss in losses)
    # the mean divides each loss by its target length, then averages over the batch
    mean = gt.nn.functional.ctc_loss(log_probs, padded, (5, 4), (3, 1))
    assert mean.item() == pytest.approx((losses[0][0] / 3 + losses[0][1] / 1).item() / 2)
    # one sample without a batch dim is the batch of that one sample
    alone = gt.nn.CTCLoss(reduction="none")(log_probs[:, 0], padded[0], (5,), (3,))
    assert alone.dim() == 0 and alone.item() == losses[0][0].item()


def ctc_errors(lib):
    """(type, message) of each bad call of ctc_loss (None where it does not raise); of
    torch's binding's TypeError, the first line (the types it got: the lines below show how
    its parser matched them against each signature)."""
    F = lib.nn.functional
    log_probs = _ctc_inputs(lib)
    targets, lengths = lib.tensor([[1, 2, 2], [3, 1, 1]]), (lib.tensor([5, 4]),
                                                           lib.tensor([3, 2]))
    calls = [
        lambda: F.ctc_loss(log_probs, targets, *lengths, blank=4),
        lambda: F.ctc_loss(log_probs, targets, *lengths, blank=-1),
        lambda: F.ctc_loss(log_probs, targets, lib.tensor([5, 4, 3]), lengths[1]),
        lambda: F.ctc_loss(log_probs, targets, lengths[0], lib.tensor([3])),
        lambda: F.ctc_loss(log_probs, targets, lib.tensor([6, 4]), lengths[1]),
        lambda: F.ctc_loss(log_probs, targets, lib.tensor([-1, 4]), lengths[1]),
        lambda: F.ctc_loss(log_probs, targets, lengths[0], lib.tensor([4, 2])),
        lambda: F.ctc_loss(log_probs, targets, lengths[0], lib.tensor([-1, 2])),
        lambda: F.ctc_loss(log_probs, targets[0], *lengths),
        lambda: F.ctc_loss(log_probs, targets[:1], *lengths),
        lambda: F.ctc_loss(log_probs, targets[None], *lengths),
        lambda: F.ctc_loss(log_probs[0, 0], targets, *lengths),
        lambda: F.ctc_loss(log_probs[None], targets, *lengths),
        lambda: F.ctc_loss(log_probs, targets, lengths[0].double(), lengths[1]),
        lambda: F.ctc_loss(log_probs, targets, lengths[0], (3, 2)),
        lambda: F.ctc_loss(log_probs, targets, (5.0, 4), (3, 2)),
        lambda: F.ctc_loss(log_probs, targets, *lengths, blank=1.0),
        lambda: F.ctc_loss(log_probs, targets, *lengths, zero_infinity=1),
        lambda: F.ctc_loss(log_probs, targets, *lengths, reduction="average"),
        lambda: F.ctc_loss(log_probs.detach().long(), targets, *lengths),
        lambda: F.ctc_loss(log_probs.half(), targets, *lengths),
    ]
    errors = []
    for call in calls:
        try:
            call()
            errors.append(None)
        except Exception as error:  # noqa: BLE001 (the error is what is compared)
            errors.append((type(error).__name__, str(error).split("\n")[0]))
    return errors


def test_ctc_loss_argument_errors():
    errors = ctc_errors(gt)
    assert all(error is not None for error in errors)
    assert errors[0] == ("RuntimeError", "blank must be in label range")
    assert errors[4] == ("RuntimeError", "Expected input_lengths to have value at most 5, but "
                         "got value 6 (while checking arguments for ctc_loss_allocate_outputs)")
    assert errors[13] == ("RuntimeError", "input_lengths must be integral")
    assert errors[19] == ("NotImplementedError", "\"ctc_loss_cpu\" not implemented for 'Long'")


def test_ctc_loss_refuses_a_label_out_of_the_classes_past_none_of_the_padding():
    """torch's kernel reads out of bounds for such a label (garbage): an error here instead;
    padding past a target's length is never read, whatever it holds."""
    log_probs = _ctc_inputs(gt)
    with pytest.raises(IndexError, match="target label 7 is out of range for 4 classes"):
        gt.nn.functional.ctc_loss(log_probs, gt.tensor([[1, 7], [2, 3]]), (5, 5), (2, 2))
    padded = gt.nn.functional.ctc_loss(log_probs, gt.tensor([[1, -1], [2, 3]]), (5, 5), (1, 2))
    assert padded.item() == gt.nn.functional.ctc_loss(
        log_probs, gt.tensor([[1, 0], [2, 3]]), (5, 5), (1, 2)).item()


# ---- linear_cross_entropy: torch's composition of linear and cross_entropy (their rows are
# sweep cases); here its meaning, its K-dimensional weight, its gradients and its errors
LCE_INPUT, LCE_WEIGHT = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 2, 3))
LCE_BIAS, LCE_TARGET = RNG.standard_normal((5, 2)), np.array([[1, 0], [4, 2], [0, 0], [3, 3]])


def test_linear_cross_entropy_is_cross_entropy_of_the_linear_logits_per_position():
    """A (C, d, in) weight: logits[n, c, j] = input[n] . weight[c, j] + bias[c, j]; the loss
    of each (n, j) is cross entropy over c."""
    x, w, b = (gt.tensor(a) for a in (LCE_INPUT, LCE_WEIGHT, LCE_BIAS))
    loss = gt.nn.functional.linear_cross_entropy(x, w, gt.tensor(LCE_TARGET), linear_bias=b,
                                                  reduction="none")
    logits = np.einsum("ni,cji->ncj", LCE_INPUT, LCE_WEIGHT) + LCE_BIAS
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    expected = -np.take_along_axis(log_softmax, LCE_TARGET[:, None], 1)[:, 0]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)


def test_linear_cross_entropy_gradients_with_smoothing_weights_and_an_ignored_class():
    def loss(x, w, b):
        return gt.nn.functional.linear_cross_entropy(
            x, w, gt.tensor(LCE_TARGET), linear_bias=b, weight=gt.tensor([0.5, 1, 2, 1, 1.5]),
            ignore_index=3, label_smoothing=0.2)
    check_grads(loss, [gt.tensor(a, requires_grad=True)
                       for a in (LCE_INPUT, LCE_WEIGHT, LCE_BIAS)], order=2)


def test_linear_cross_entropy_module_stores_its_weight_flat():
    module = gt.nn.LinearCrossEntropyLoss(3, 5, out_features=(2,), bias=True)
    assert tuple(module.linear.weight.shape) == (10, 3)
    assert tuple(module.linear.bias.shape) == (10,)
    x = gt.tensor(LCE_INPUT, dtype=gt.float32)
    loss = module(x, gt.tensor(LCE_TARGET))
    expected = gt.nn.functional.linear_cross_entropy(
        x, module.linear.weight.reshape(5, 2, 3), gt.tensor(LCE_TARGET),
        linear_bias=module.linear.bias.reshape(5, 2))
    assert loss.item() == expected.item()


def linear_cross_entropy_errors(lib):
    """(type, message) of each bad call of linear_cross_entropy, its module and its options."""
    F, x, w = lib.nn.functional, lib.tensor(LCE_INPUT), lib.tensor(LCE_WEIGHT)
    target = lib.tensor(LCE_TARGET)
    calls = [
        lambda: F.linear_cross_entropy(x[None], w, target),
        lambda: F.linear_cross_entropy(x, w[:, 0, 0], target),
        lambda: F.linear_cross_entropy(x[:, :2], w, target),
        lambda: F.linear_cross_entropy(x, w, target, linear_bias=lib.zeros(5)),
        lambda: F.linear_cross_entropy(x[0], w, target[0]),
        lambda: F.linear_cross_entropy(x, w, lib.ones(4, 5, 2) / 5, ignore_index=1),
        lambda: lib.nn.LinearCrossEntropyLoss(3, 5, weight=lib.ones(4)),
        lambda: lib.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=1.5),
        lambda: lib.nn.LinearCrossEntropyOptions(acc_policy="fast"),
        lambda: lib.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
        lambda: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
        lambda: lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.int64),
    ]
    errors = []
    for call in calls:
        try:
            call()
            errors.append(None)
        except Exception as error:  # noqa: BLE001 (the error is what is compared)
            errors.append((type(error).__name__, str(error).replace("torch.", "gradtool.")))
    return errors


def test_linear_cross_entropy_argument_errors():
    errors = linear_cross_entropy_errors(gt)
    assert all(error is not None for error in errors)
    assert errors[2] == ("RuntimeError", "expected equal input and linear_weight last dimensions "
                                         "(in_features), got 2 and 3, respectively")


@settings(max_examples=15, deadline=None, derandomize=True)
@given(chunk=st.integers(1, 7), reduction=st.sampled_from(["mean", "sum", "none"]),
       bias=st.booleans())
def test_linear_cross_entropy_in_chunks_is_the_reference_path(chunk, reduction, bias):
    """options: the loss a chunk of rows at a time (any size), the same values and
    gradients as linear then cross_entropy; a class weight and an ignored row included."""
    x, w = RNG.standard_normal((6, 3)), RNG.standard_normal((5, 3))
    b, target = RNG.standard_normal(5), gt.tensor([1, 0, 4, 2, 1, -100])
    results = []
    for options in (None, gt.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk)):
        inputs = [gt.tensor(a, requires_grad=True) for a in (x, w, b)]
        loss = gt.nn.functional.linear_cross_entropy(
            inputs[0], inputs[1], target, linear_bias=inputs[2] if bias else None,
            weight=gt.tensor([0.5, 1.0, 2.0, 1.0, 1.5]), reduction=reduction, options=options)
        cotangent = gt.linspace(-1, 2, 6, dtype=gt.float64) if reduction == "none" else None
        grads = gt.autograd.grad(loss, inputs[:3 if bias else 2], cotangent)
        results.append([loss.detach().numpy()] + [g.numpy() for g in grads])
    for chunked, reference in zip(*results[::-1]):
        np.testing.assert_allclose(chunked, reference, rtol=1e-12, atol=1e-14)


def test_linear_cross_entropy_in_chunks_backward_runs_once_unless_allowed():
    x = gt.randn(4, 3, dtype=gt.float64, requires_grad=True)
    w, target = gt.randn(5, 3, dtype=gt.float64, requires_grad=True), gt.tensor([1, 0, 4, 2])
    loss = gt.nn.functional.linear_cross_entropy(x, w, target,
                                                 options=gt.nn.LinearCrossEntropyOptions())
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="chunked backward called twice"):
        loss.backward()
    loss = gt.nn.functional.linear_cross_entropy(
        x, w, target, options=gt.nn.LinearCrossEntropyOptions(allow_retain_graph=True))
    loss.backward(retain_graph=True)
    loss.backward()
    grad, = gt.autograd.grad(loss, x, create_graph=True)  # (not differentiable again)
    assert not grad.requires_grad
