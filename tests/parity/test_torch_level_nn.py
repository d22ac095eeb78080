"""torch's top-level versions of nn.functional (torch.conv2d, torch.batch_norm, torch.dropout,
torch.lstm_cell, ...), called with aten's positional arguments, against torch: values, the
gradients of every input, the node recorded, random ops' statistics, and the errors. Tests
marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _leaf(lib, *shape, scale=1.0, shift=0.0):
    n = int(np.prod(shape))
    values = np.sin(np.arange(1.0, n + 1) * 1.7).reshape(shape) * scale + shift
    return lib.tensor(values, requires_grad=True)


# name: f(lib) -> (the result, the leaves whose gradients are compared)
CASES = {
    "conv1d": lambda lib: (lambda x, w, b: (lib.conv1d(x, w, b, 2, 1, 1, 1), [x, w, b]))(
        _leaf(lib, 2, 3, 7), _leaf(lib, 4, 3, 3), _leaf(lib, 4)),
    "conv2d": lambda lib: (lambda x, w: (lib.conv2d(x, w, None, 1, "same", 2, 2), [x, w]))(
        _leaf(lib, 1, 4, 5, 5), _leaf(lib, 2, 2, 3, 3)),
    "conv3d": lambda lib: (lambda x, w: (lib.conv3d(x, w, padding=1), [x, w]))(
        _leaf(lib, 1, 2, 3, 3, 3), _leaf(lib, 2, 2, 2, 2, 2)),
    "conv_transpose1d": lambda lib: (lambda x, w: (
        lib.conv_transpose1d(x, w, None, 2, 1, 1, 1, 1), [x, w]))(
        _leaf(lib, 2, 3, 4), _leaf(lib, 3, 2, 3)),
    "conv_transpose2d": lambda lib: (lambda x, w, b: (
        lib.conv_transpose2d(x, w, b, 2, 0, 1), [x, w, b]))(
        _leaf(lib, 1, 2, 3, 3), _leaf(lib, 2, 3, 2, 2), _leaf(lib, 3)),
    "conv_transpose3d": lambda lib: (lambda x, w: (lib.conv_transpose3d(x, w), [x, w]))(
        _leaf(lib, 1, 2, 2, 2, 2), _leaf(lib, 2, 1, 2, 2, 2)),
    "convolution": lambda lib: (lambda x, w: (
        lib.convolution(x, w, None, [1, 2], [1, 0], [1, 1], False, [0, 0], 1), [x, w]))(
        _leaf(lib, 1, 2, 4, 5), _leaf(lib, 3, 2, 3, 3)),
    "convolution_transposed": lambda lib: (lambda x, w, b: (
        lib.convolution(x, w, b, [2], [1], [1], True, [1], 1), [x, w, b]))(
        _leaf(lib, 1, 2, 4), _leaf(lib, 2, 3, 3), _leaf(lib, 3)),
    "avg_pool1d": lambda lib: (lambda x: (lib.avg_pool1d(x, 3, 2, 1, True, False), [x]))(
        _leaf(lib, 2, 3, 8)),
    "max_pool1d": lambda lib: (lambda x: (lib.max_pool1d(x, 3, [], 1), [x]))(_leaf(lib, 2, 9)),
    "max_pool2d": lambda lib: (lambda x: (lib.max_pool2d(x, [2, 2], [1, 2], 0, 1, True), [x]))(
        _leaf(lib, 1, 2, 5, 5)),
    "max_pool1d_with_indices": lambda lib: (lambda x: (
        lib.max_pool1d_with_indices(x, 2, 1, 0, 2), [x]))(_leaf(lib, 1, 2, 7)),
    "adaptive_avg_pool1d": lambda lib: (lambda x: (lib.adaptive_avg_pool1d(x, 3), [x]))(
        _leaf(lib, 2, 7)),
    "adaptive_max_pool1d": lambda lib: (lambda x: (lib.adaptive_max_pool1d(x, [3]), [x]))(
        _leaf(lib, 2, 2, 7)),
    "batch_norm_training": lambda lib: (lambda x, w, b: (
        lib.batch_norm(x, w, b, lib.zeros(3, dtype=lib.float64),
                       lib.ones(3, dtype=lib.float64), True, 0.3, 1e-3, False), [x, w, b]))(
        _leaf(lib, 4, 3, 2), _leaf(lib, 3, shift=1.0), _leaf(lib, 3)),
    "batch_norm_running": lambda lib: (lambda x, w: (
        lib.batch_norm(x, w, None, lib.tensor([0.5, -1.0], dtype=lib.float64),
                       lib.tensor([2.0, 0.5], dtype=lib.float64), False, 0.1, 1e-5, True),
        [x, w]))(_leaf(lib, 3, 2), _leaf(lib, 2)),
    "batch_norm_no_statistics": lambda lib: (lambda x: (
        lib.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False), [x]))(
        _leaf(lib, 3, 2, 4)),
    "instance_norm": lambda lib: (lambda x, w, b: (
        lib.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False), [x, w, b]))(
        _leaf(lib, 2, 3, 5), _leaf(lib, 3), _leaf(lib, 3)),
    "layer_norm": lambda lib: (lambda x, w, b: (
        lib.layer_norm(x, [2, 3], w, b, 1e-3, False), [x, w, b]))(
        _leaf(lib, 4, 2, 3), _leaf(lib, 2, 3), _leaf(lib, 2, 3)),
    "layer_norm_defaults": lambda lib: (lambda x: (lib.layer_norm(x, (3,)), [x]))(
        _leaf(lib, 2, 3)),
    "group_norm": lambda lib: (lambda x, w, b: (
        lib.group_norm(x, 2, w, b, 1e-4, True), [x, w, b]))(
        _leaf(lib, 2, 4, 3), _leaf(lib, 4), _leaf(lib, 4)),
    "rms_norm": lambda lib: (lambda x, w: (lib.rms_norm(x, [3], w, 1e-6), [x, w]))(
        _leaf(lib, 2, 3), _leaf(lib, 3)),
    "pixel_shuffle": lambda lib: (lambda x: (lib.pixel_shuffle(x, 2), [x]))(
        _leaf(lib, 1, 8, 2, 3)),
    "pixel_unshuffle": lambda lib: (lambda x: (lib.pixel_unshuffle(x, 2), [x]))(
        _leaf(lib, 1, 2, 4, 2)),
    "prelu": lambda lib: (lambda x, w: (lib.prelu(x, w), [x, w]))(
        _leaf(lib, 2, 3, 4), _leaf(lib, 3, scale=0.3)),
    "selu": lambda lib: (lambda x: (lib.selu(x * 2), [x]))(_leaf(lib, 3, 4)),
    "selu_": lambda lib: (lambda x: (lib.selu_(x * 2), [x]))(_leaf(lib, 3, 4)),
    "binary_cross_entropy_with_logits": lambda lib: (lambda x, w, pw: (
        lib.binary_cross_entropy_with_logits(x, lib.tensor([[0.0, 1.0, 0.3]] * 2,
                                                           dtype=lib.float64), w, pw, 1), [x]))(
        _leaf(lib, 2, 3, scale=3.0), _leaf(lib, 3, shift=1.5).detach(),
        _leaf(lib, 3, shift=2.0).detach()),
    "binary_cross_entropy_with_logits_default": lambda lib: (lambda x: (
        lib.binary_cross_entropy_with_logits(x, lib.ones(2, 3, dtype=lib.float64) / 2), [x]))(
        _leaf(lib, 2, 3)),
    "binary_cross_entropy_with_logits_none": lambda lib: (lambda x: (
        lib.binary_cross_entropy_with_logits(x, lib.ones(2, 3, dtype=lib.float64),
                                             reduction=0), [x]))(_leaf(lib, 2, 3)),
    "kl_div_mean": lambda lib: (lambda x: (
        lib.kl_div(x, lib.tensor([[0.2, 0.0, 0.8]] * 2, dtype=lib.float64), 1), [x]))(
        _leaf(lib, 2, 3)),
    "kl_div_default": lambda lib: (lambda x: (
        lib.kl_div(x, lib.tensor([[0.2, 0.0, 0.8]] * 2, dtype=lib.float64)), [x]))(
        _leaf(lib, 2, 3)),
    "kl_div_sum_log_target": lambda lib: (lambda x, t: (
        lib.kl_div(x, t, 2, log_target=True), [x, t]))(_leaf(lib, 2, 3), _leaf(lib, 2, 3)),
    "kl_div_none": lambda lib: (lambda x: (
        lib.kl_div(x, lib.ones(2, 3, dtype=lib.float64) / 3, reduction=0), [x]))(
        _leaf(lib, 2, 3)),
    "lstm_cell": lambda lib: (lambda x, h, c, wi, wh, bi, bh: (
        lib.lstm_cell(x, [h, c], wi, wh, bi, bh), [x, h, c, wi, wh, bi, bh]))(
        _leaf(lib, 2, 3), _leaf(lib, 2, 2), _leaf(lib, 2, 2), _leaf(lib, 8, 3), _leaf(lib, 8, 2),
        _leaf(lib, 8), _leaf(lib, 8)),
    "gru_cell": lambda lib: (lambda x, h, wi, wh, bi: (
        lib.gru_cell(x, h, wi, wh, bi), [x, h, wi, wh, bi]))(
        _leaf(lib, 2, 3), _leaf(lib, 2, 2), _leaf(lib, 6, 3), _leaf(lib, 6, 2), _leaf(lib, 6)),
    "rnn_tanh_cell": lambda lib: (lambda x, h, wi, wh: (
        lib.rnn_tanh_cell(x, h, wi, wh), [x, h, wi, wh]))(
        _leaf(lib, 2, 3), _leaf(lib, 2, 2), _leaf(lib, 2, 3), _leaf(lib, 2, 2)),
    "rnn_relu_cell": lambda lib: (lambda x, h, wi, wh, bi, bh: (
        lib.rnn_relu_cell(x, h, wi, wh, bi, bh), [x, h, wi, wh, bi, bh]))(
        _leaf(lib, 2, 3), _leaf(lib, 2, 2), _leaf(lib, 2, 3), _leaf(lib, 2, 2), _leaf(lib, 2),
        _leaf(lib, 2)),
    "dropout_not_training": lambda lib: (lambda x: (lib.dropout(x * 1, 0.5, False), [x]))(
        _leaf(lib, 3, 4)),
    "dropout_p_zero": lambda lib: (lambda x: (lib.dropout(x * 1, 0.0, True), [x]))(
        _leaf(lib, 3, 4)),
    "dropout_p_one": lambda lib: (lambda x: (lib.dropout(x * 1, 1.0, True), [x]))(
        _leaf(lib, 3, 4)),
    "dropout_in_place_p_one": lambda lib: (lambda x: (lib.dropout_(x * 1, 1.0, True), [x]))(
        _leaf(lib, 3, 4)),
    "feature_dropout_p_one": lambda lib: (lambda x: (lib.feature_dropout(x * 1, 1.0, True),
                                                     [x]))(_leaf(lib, 2, 3, 4)),
    "feature_dropout_not_training_1d": lambda lib: (lambda x: (
        lib.feature_dropout(x * 1, 0.5, False), [x]))(_leaf(lib, 4)),
    "feature_dropout_in_place_p_zero": lambda lib: (lambda x: (
        lib.feature_dropout_(x * 1, 0.0, True), [x]))(_leaf(lib, 2, 3)),
}


def _outputs(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _run(lib, name):
    result, leaves = CASES[name](lib)
    outs = _outputs(result)
    floats = [o for o in outs if o.dtype == lib.float64]
    total = sum((o * lib.arange(1.0, o.numel() + 1, dtype=lib.float64).view(o.shape)).sum()
                for o in floats)
    grads = lib.autograd.grad(total, leaves, allow_unused=True)
    return ([(tuple(o.shape), str(o.dtype).split(".")[-1]) for o in outs],
            [o.detach().numpy().copy() for o in outs],
            [None if g is None else g.numpy().copy() for g in grads],
            type(floats[0].grad_fn).__name__ if floats[0].grad_fn is not None else None)


@pytest.mark.parametrize("name", CASES)
def test_values_gradients_and_node_match_torch(name):
    (shapes, values, grads, node), (t_shapes, t_values, t_grads, t_node) = (
        _run(gt, name), _run(torch, name))
    assert shapes == t_shapes
    assert node == t_node
    for mine, theirs in zip(values, t_values):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    for mine, theirs in zip(grads, t_grads):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_batch_norm_updates_the_running_statistics_as_torch():
    seen = []
    for lib in (gt, torch):
        mean, var = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        x = lib.tensor(np.arange(24.0).reshape(4, 3, 2) ** 1.5)
        lib.batch_norm(x, None, None, mean, var, True, 0.25, 1e-5, False)
        seen.append((mean.numpy().copy(), var.numpy().copy()))
    np.testing.assert_allclose(seen[0][0], seen[1][0], rtol=1e-12)
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-12)


def test_dropout_keeps_the_input_itself_when_not_training_as_torch():
    for lib in (gt, torch):
        x = lib.ones(3)
        assert lib.dropout(x, 0.5, False) is x
        assert lib.feature_dropout(x, 0.5, False) is x


ERRORS = {
    "dropout_p": lambda lib: lib.dropout(lib.ones(2), 1.5, False),
    "dropout__p": lambda lib: lib.dropout_(lib.ones(2), -0.1, True),
    "feature_dropout_p": lambda lib: lib.feature_dropout(lib.ones(2, 2), 2.0, False),
    "feature_dropout_rank": lambda lib: lib.feature_dropout(lib.ones(3), 0.5, True),
    "convolution_weight_rank": lambda lib: lib.convolution(
        lib.ones(1, 3, 4), lib.ones(2, 3), None, [1], [0], [1], False, [0], 1),
    "conv2d_channels": lambda lib: lib.conv2d(lib.ones(1, 3, 4, 4), lib.ones(2, 2, 1, 1)),
    "layer_norm_shape": lambda lib: lib.layer_norm(lib.ones(2, 3), [2]),
    "group_norm_groups": lambda lib: lib.group_norm(lib.ones(2, 3, 4), 2),
    "pixel_shuffle_channels": lambda lib: lib.pixel_shuffle(lib.ones(1, 3, 2, 2), 2),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    raised = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib)
        raised.append((type(info.value).__name__, str(info.value)))
    assert raised[0] == raised[1]
