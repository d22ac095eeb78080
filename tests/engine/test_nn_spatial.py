"""nn's pooling, padding, dropout, normalisation and rearranging layers of the long tail on the
engine alone: the 3-d pools and pads, max unpooling, fractional max pooling, LPPool1d/2d/3d,
the channel dropouts and alpha dropouts, LocalResponseNorm and CrossMapLRN2d, InstanceNorm3d,
Softmax2d, ChannelShuffle, affine_grid, grid_sample and the deprecated upsampling names.
Gradients against central differences (the op rows' own closed forms are in
test_op_gradients.py), closed forms and the errors each raises; their comparison with torch is
in tests/parity/test_conv_pool.py."""
import math
import warnings

import numpy as np
import pytest

import gradtool as gt
from gradtool.engine import nn
from gradtool.engine.nn import functional as F

from gradcheck_util import check_grads


def f64(*shape, seed=0, positive=False):
    values = np.random.default_rng(seed).standard_normal(shape)
    return gt.tensor(np.abs(values) + 0.5 if positive else values, requires_grad=True)


def reseeded(fn):
    """fn with the generator reset before each call: one dropout mask for every evaluation."""
    def wrapped(*args):
        gt.manual_seed(0)
        return fn(*args)
    return wrapped


MODULES = {  # (module, input shape, whether its input must be positive)
    "MaxPool3d": (lambda: nn.MaxPool3d((2, 3, 2), (1, 2, 1), (1, 1, 0), ceil_mode=True),
                  (1, 2, 3, 4, 3), False),
    "AvgPool3d": (lambda: nn.AvgPool3d(2, 1, 1, count_include_pad=False), (2, 3, 2, 3), False),
    "AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d((2, None, 3)), (1, 2, 3, 2, 4), False),
    "AdaptiveMaxPool3d": (lambda: nn.AdaptiveMaxPool3d(2), (2, 3, 3, 3), False),
    "ReflectionPad3d": (lambda: nn.ReflectionPad3d((1, 0, 2, 1, 1, 1)), (1, 2, 3, 3, 2), False),
    "ReplicationPad3d": (lambda: nn.ReplicationPad3d(1), (2, 2, 2, 3), False),
    "CircularPad3d": (lambda: nn.CircularPad3d((1, 1, 0, 1, 1, 0)), (1, 1, 2, 3, 2), False),
    "ConstantPad3d": (lambda: nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5), (2, 2, 2, 2), False),
    "ZeroPad3d": (lambda: nn.ZeroPad3d(1), (1, 2, 2, 2), False),
    "FractionalMaxPool2d": (lambda: nn.FractionalMaxPool2d(
        (2, 3), (3, 2), _random_samples=gt.tensor([[[0.3, 0.8], [0.6, 0.1]]])), (1, 2, 5, 6),
        False),
    "FractionalMaxPool3d": (lambda: nn.FractionalMaxPool3d(
        2, output_ratio=0.6, _random_samples=gt.tensor([[[0.3, 0.8, 0.5]] * 2])), (2, 4, 5, 4),
        False),
    "LPPool1d": (lambda: nn.LPPool1d(3, 2, 1), (2, 3, 5), True),
    "LPPool2d": (lambda: nn.LPPool2d(2, (2, 3), ceil_mode=True), (1, 2, 5, 4), False),
    "LPPool3d": (lambda: nn.LPPool3d(1.5, 2), (1, 2, 2, 4, 2), True),
    "LPPool2d_inf": (lambda: nn.LPPool2d(math.inf, 2), (2, 4, 4), False),
    "LocalResponseNorm_3d": (lambda: nn.LocalResponseNorm(3, alpha=0.5, k=1.5), (2, 5, 3), False),
    "LocalResponseNorm_5d": (lambda: nn.LocalResponseNorm(2, alpha=0.3), (1, 4, 2, 2, 3), False),
    "InstanceNorm3d": (lambda: nn.InstanceNorm3d(2, affine=True), (2, 2, 2, 3, 2), False),
    "Softmax2d": (lambda: nn.Softmax2d(), (2, 3, 2, 2), False),
    "ChannelShuffle": (lambda: nn.ChannelShuffle(2), (2, 4, 3), False),
    "Dropout1d": (lambda: nn.Dropout1d(0.5), (3, 4, 5), False),
    "Dropout3d_unbatched": (lambda: nn.Dropout3d(0.3), (4, 2, 2, 2), False),
    "AlphaDropout": (lambda: nn.AlphaDropout(0.4), (3, 5), False),
    "FeatureAlphaDropout": (lambda: nn.FeatureAlphaDropout(0.4), (2, 4, 3), False),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_gradients_against_central_differences(name):
    """The input's gradient (and the parameters', where there are any)."""
    make, shape, positive = MODULES[name]
    module = make().double()
    x = f64(*shape, positive=positive)
    check_grads(reseeded(lambda *xs: module(xs[0])), [x, *module.parameters()], order=2)


@pytest.mark.parametrize("spatial", [1, 2, 3])
def test_max_unpool_puts_each_max_back_and_zeroes_the_rest(spatial):
    pool = getattr(nn, f"MaxPool{spatial}d")(2, return_indices=True)
    unpool = getattr(nn, f"MaxUnpool{spatial}d")(2)
    x = f64(*(2, 3, 4, 2, 4)[:2 + spatial])
    y = unpool(*pool(x)).detach().numpy()
    kept = y != 0
    np.testing.assert_array_equal(y[kept], x.detach().numpy()[kept])
    assert kept.sum() == pool(x)[0].numel()  # one per window
    check_grads(lambda t: unpool(*pool(t)), [x], order=2)
    larger = [n + 1 for n in x.shape[2:]]  # (within a stride of the pooled-from size)
    assert unpool(*pool(x), output_size=larger).shape == (2, 3, *larger)


def test_fractional_max_pool_draws_its_windows_unless_given_samples():
    """Without _random_samples each call draws new window starts (from manual_seed's
    generator); the output has the size asked for, and every output is one input value."""
    x = f64(2, 3, 9, 9)
    gt.manual_seed(0)
    first = F.fractional_max_pool2d(x, 2, output_size=(4, 5))
    gt.manual_seed(0)
    assert F.fractional_max_pool2d(x, 2, output_size=(4, 5)).equal(first)
    assert first.shape == (2, 3, 4, 5)
    assert np.isin(first.detach().numpy(), x.detach().numpy()).all()
    assert F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5)).shape == (2, 3, 4, 4)


def test_lp_pool_is_the_p_norm_of_each_window():
    x = np.abs(np.random.default_rng(1).standard_normal((2, 3, 4, 6)))
    out = F.lp_pool2d(gt.tensor(x), 3, (2, 3)).numpy()
    windows = x.reshape(2, 3, 2, 2, 2, 3)
    np.testing.assert_allclose(out, (windows ** 3).sum((3, 5)) ** (1 / 3))
    np.testing.assert_allclose(F.lp_pool1d(gt.tensor(-x[0]), math.inf, 3).numpy(),
                               x[0].reshape(3, 4, 2, 3).max(-1))


def test_local_response_norm_divides_by_the_channel_window_of_squares():
    x = np.random.default_rng(2).standard_normal((2, 5, 3))
    size, alpha, beta, k = 3, 0.7, 0.6, 1.2
    out = F.local_response_norm(gt.tensor(x), size, alpha, beta, k).numpy()
    padded = np.pad(x * x, ((0, 0), (size // 2, (size - 1) // 2), (0, 0)))
    mean = np.stack([padded[:, c:c + size].sum(1) / size for c in range(5)], 1)
    np.testing.assert_allclose(out, x / (k + alpha * mean) ** beta)


def test_cross_map_lrn2d_is_torchs_running_sum_over_channels():
    """Each channel divided by (k + alpha / size * its window's sum of squares)^beta, the
    windows as torch's running sum makes them: for size 3 the centred window, except that
    channel 0 is never dropped from it (the sum starts dropping one channel late)."""
    x = np.random.default_rng(6).standard_normal((2, 5, 2, 3))
    size, alpha, beta, k = 3, 0.5, 0.7, 1.5
    square = x * x
    padded = np.pad(square, ((0, 0), (1, 1), (0, 0), (0, 0)))
    sums = np.stack([padded[:, c:c + 3].sum(1) + (square[:, 0] if c >= 2 else 0)
                     for c in range(5)], 1)
    out = nn.CrossMapLRN2d(size, alpha, beta, k)(gt.tensor(x))
    np.testing.assert_allclose(out.numpy(), x / (k + alpha / size * sums) ** beta)
    assert out.grad_fn is None and nn.CrossMapLRN2d(3)(f64(1, 2, 1, 1)).grad_fn.name() == (
        "CrossMapLRN2dBackward")


def test_cross_map_lrn2d_keeps_torchs_backward_which_gradcheck_rejects():
    """torch's CrossMapLRN2d backward is not its forward's derivative (torch.autograd.gradcheck
    fails it; the parity test shows the engine's equals it): gradcheck here says so too."""
    x = f64(2, 5, 2, 3)
    lrn = nn.CrossMapLRN2d(3, alpha=0.4, beta=0.6, k=2)
    assert not gt.autograd.gradcheck(lrn, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match=r"start \(1\) \+ length \(5\) exceeds"):
        nn.CrossMapLRN2d(1)(x).sum().backward()


def test_channel_dropouts_zero_whole_channels_and_scale_the_rest():
    gt.manual_seed(3)
    for drop, shape in [(F.dropout1d, (40, 50, 6)), (F.dropout3d, (40, 50, 2, 3, 1)),
                        (F.dropout2d, (40, 50, 2, 3))]:
        y = drop(gt.ones(shape, dtype=gt.float64), 0.25).numpy()
        per_channel = y.reshape(40, 50, -1)
        assert (per_channel == per_channel[..., :1]).all()  # one value per (sample, channel)
        assert set(np.unique(per_channel)) == {0.0, 1 / 0.75}
        assert (per_channel[..., 0] == 0).mean() == pytest.approx(0.25, abs=0.03)
    x = gt.ones(3, 4, 2)
    assert F.dropout1d(x, 0.5, training=False) is x and F.dropout1d(x, 0.0) is x
    assert (F.dropout3d(gt.ones(2, 2, 1, 1, 1), 1.0).numpy() == 0).all()
    assert F.dropout1d(gt.ones(4, 3), 0.5).shape == (4, 3)  # unbatched (C, L)


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    """Dropped values become selu's saturation, then all are mapped a x + b, which keeps a
    standard normal input's mean and variance (the point of alpha dropout)."""
    gt.manual_seed(4)
    x = gt.tensor(np.random.default_rng(5).standard_normal((400, 500)))
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert y.mean() == pytest.approx(0.0, abs=0.01)
    assert y.var() == pytest.approx(1.0, abs=0.02)
    p, alpha = 0.2, 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    dropped = np.isclose(y, a * -alpha + alpha * a * p)
    assert dropped.mean() == pytest.approx(p, abs=0.01)
    np.testing.assert_allclose(y[~dropped], a * x.numpy()[~dropped] + alpha * a * p)
    features = F.feature_alpha_dropout(gt.zeros(300, 40, 5), 0.5, training=True).numpy()
    assert (features == features[..., :1]).all() and len(np.unique(features)) == 2
    assert F.alpha_dropout(x, 0.2) is x  # training defaults to False, as torch's
    assert (F.alpha_dropout(x, 1.0, training=True).numpy() == 0).all()


def test_channel_shuffle_interleaves_the_groups():
    x = gt.arange(6.0).reshape(1, 6, 1)
    assert F.channel_shuffle(x, 2).flatten().tolist() == [0, 3, 1, 4, 2, 5]
    assert F.channel_shuffle(F.channel_shuffle(x, 2), 3).equal(x)


def test_native_channel_shuffle_shuffles_as_channel_shuffle_and_refuses_backward():
    """torch's kernel-level twin: the same values, and no derivative (its node refuses)."""
    x = gt.arange(12.0).reshape(2, 6, 1).requires_grad_()
    out = F.native_channel_shuffle(x, 3)
    assert out.equal(F.channel_shuffle(x, 3)) and out.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::native_channel_shuffle is not "
                                           "implemented"):
        out.sum().backward()
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
        gt.native_channel_shuffle(x, 4)


def test_conv_tbc_convolves_over_time_with_zero_frames_at_each_end():
    """One input channel, one output channel, kernel (1, 2, 3), pad 1: each output frame is
    the dot of the kernel with the window of frames it covers, zeros past the ends."""
    frames = gt.tensor([1.0, 10.0, 100.0]).reshape(3, 1, 1)
    kernel = gt.tensor([1.0, 2.0, 3.0]).reshape(3, 1, 1)
    out = gt.conv_tbc(frames, kernel, gt.tensor([0.5]), 1)
    assert out.flatten().tolist() == [0.5 + 2 + 30, 0.5 + 1 + 20 + 300, 0.5 + 10 + 200]
    # a negative pad crops: the middle frame alone, by a kernel of one
    assert gt.conv_tbc(frames, kernel[:1], gt.zeros(1), -1).flatten().tolist() == [10.0]
    with pytest.raises(RuntimeError, match="Input dim 2 \\(input channels\\) is not == dim 1"):
        gt.conv_tbc(frames, kernel.expand(3, 2, 1), gt.zeros(1))


def test_affine_grid_of_the_identity_is_the_pixel_grid():
    """The identity map's grid: x across the width, y down the height, from -1 to 1 at the
    corner pixels' centres with align_corners, inside them (by (n - 1) / n) without."""
    identity = gt.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype=gt.float64)
    grid = F.affine_grid(identity, (1, 1, 2, 3), align_corners=True).numpy()
    np.testing.assert_allclose(grid[0, :, :, 0], [[-1, 0, 1]] * 2)
    np.testing.assert_allclose(grid[0, :, :, 1], [[-1] * 3, [1] * 3])
    inner = F.affine_grid(identity, (1, 1, 2, 3), align_corners=False).numpy()
    np.testing.assert_allclose(inner[0, 0, :, 0], [-2 / 3, 0, 2 / 3])
    theta = f64(2, 3, 4)
    check_grads(lambda t: F.affine_grid(t, (2, 1, 2, 3, 2), align_corners=False), [theta],
                order=2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(identity, (1, 1, 2, 3))


@pytest.mark.parametrize("spatial", [2, 3])
def test_grid_sample_on_the_identity_grid_returns_the_input(spatial):
    """affine_grid of the identity is each pixel's centre: every mode reads the input back."""
    x = f64(2, 3, *(4, 3, 5)[:spatial])
    identity = gt.cat([gt.eye(spatial, dtype=gt.float64), gt.zeros(spatial, 1,
                                                                   dtype=gt.float64)], 1)
    grid = F.affine_grid(identity.expand(2, spatial, spatial + 1), tuple(x.shape),
                         align_corners=False)
    for mode in ["bilinear", "nearest"] + (["bicubic"] if spatial == 2 else []):
        y = F.grid_sample(x, grid, mode, align_corners=False)
        np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_gradients_against_central_differences(mode, padding):
    """Of input and grid (bilinear to second order); grid positions inside and outside the
    input, away from the kinks of border and reflection (cell edges and the input's edges)."""
    x = f64(1, 2, 3, 4)
    grid = gt.tensor([[[[-0.71, 0.33], [1.37, -0.52]], [[0.12, -1.41], [-1.23, 0.91]]]],
                     dtype=gt.float64, requires_grad=True)
    check_grads(lambda a, g: F.grid_sample(a, g, mode, padding, align_corners=False),
                [x, grid], order=2 if mode == "bilinear" else 1)  # (bicubic's: the sweep's)


def test_deprecated_upsampling_names_warn_and_interpolate():
    x = f64(1, 2, 3, 3)
    with pytest.warns(UserWarning, match="upsample_nearest` is deprecated"):
        y = F.upsample_nearest(x, scale_factor=2)
    assert y.equal(F.interpolate(x, scale_factor=2))
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        y = F.upsample_bilinear(x, size=(5, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.equal(F.interpolate(x, (5, 4), mode="bilinear", align_corners=True))


def test_the_layers_import_from_torchs_module_files():
    from gradtool.nn.modules.channelshuffle import ChannelShuffle
    from gradtool.nn.modules.dropout import AlphaDropout
    from gradtool.nn.modules.instancenorm import InstanceNorm3d
    from gradtool.nn.modules.padding import ReflectionPad3d
    from gradtool.nn.modules.pooling import FractionalMaxPool2d, MaxPool2d, MaxPool3d
    assert (ChannelShuffle, AlphaDropout, InstanceNorm3d, ReflectionPad3d) == (
        nn.ChannelShuffle, nn.AlphaDropout, nn.InstanceNorm3d, nn.ReflectionPad3d)
    assert (FractionalMaxPool2d, MaxPool2d, MaxPool3d) == (
        nn.FractionalMaxPool2d, nn.MaxPool2d, nn.MaxPool3d)


ERRORS = {
    "max_pool3d of a 3-d input": (lambda: F.max_pool3d(gt.ones(2, 3, 4), 2), RuntimeError,
                                  "non-empty 4D or 5D"),
    "avg_pool3d kernel past the input": (lambda: F.avg_pool3d(gt.ones(1, 2, 2, 2), 3),
                                         RuntimeError, r"input image \(T: 2 H: 2 W: 2\)"),
    "adaptive_avg_pool3d of two sizes": (lambda: F.adaptive_avg_pool3d(gt.ones(1, 2, 2, 2),
                                                                       (1, 1)),
                                         RuntimeError, "output_size must be 3"),
    "reflection pad past the depth": (lambda: F.pad(gt.ones(1, 2, 2, 2), (0, 0, 0, 0, 2, 0),
                                                    mode="reflect"),
                                      RuntimeError, "Argument #8: Padding size"),
    "dropout1d of a 4-d input": (lambda: F.dropout1d(gt.ones(1, 2, 3, 4)), RuntimeError,
                                 "dropout1d: Expected 2D or 3D input"),
    "max_unpool2d index past the output": (lambda: F.max_unpool2d(
        gt.ones(1, 1, 2, 2), gt.full((1, 1, 2, 2), 16, dtype=gt.int64), 2), RuntimeError,
        r"Found an invalid max index: 16 \(output volumes are of size 4x4\)"),
    "max_unpool2d output size": (lambda: F.max_unpool2d(
        gt.ones(1, 1, 2, 2), gt.zeros(1, 1, 2, 2, dtype=gt.int64), 2, output_size=(6, 4)),
        ValueError, r"dim 0 must be between 2 and 6"),
    "max_unpool3d float indices": (lambda: F.max_unpool3d(
        gt.ones(1, 2, 2, 2), gt.zeros(1, 2, 2, 2), 2), RuntimeError,
        "elements in indices should be type int64 but got: Float"),
    "fractional pool past the input": (lambda: F.fractional_max_pool2d(
        gt.ones(1, 1, 4, 4), 3, output_size=3), RuntimeError,
        "pool height 3 too large relative to input height 4"),
    "fractional pool without a size": (lambda: nn.FractionalMaxPool3d(2), ValueError,
                                       "requires specifying either an output size"),
    "affine_grid of a 3-d size with 2-d matrices": (lambda: F.affine_grid(
        gt.ones(1, 2, 3), (1, 1, 2, 2, 2), False), ValueError,
        "Expected a batch of 3D affine matrices of shape Nx3x4"),
    "grid_sample of a bad mode": (lambda: F.grid_sample(gt.ones(1, 1, 2, 2),
                                                        gt.zeros(1, 1, 1, 2), "area"),
                                  ValueError, "expected mode to be 'bilinear', 'nearest' or"),
    "grid_sample of a grid of another batch": (lambda: F.grid_sample(
        gt.ones(2, 1, 2, 2), gt.zeros(1, 1, 1, 2), align_corners=False), RuntimeError,
        "expected grid and input to have same batch size"),
    "alpha dropout p": (lambda: F.alpha_dropout(gt.ones(2), 1.5), ValueError,
                        "dropout probability has to be between 0 and 1"),
    "feature alpha dropout of a vector": (lambda: F.feature_alpha_dropout(
        gt.ones(3), 0.5, True), RuntimeError, "Feature dropout requires at least 2 dimensions"),
    "channel shuffle of uneven groups": (lambda: F.channel_shuffle(gt.ones(1, 5, 2), 2),
                                         RuntimeError, "Got 5 channels and 2 groups"),
    "channel shuffle of a matrix": (lambda: F.channel_shuffle(gt.ones(4, 2), 2),
                                    RuntimeError, "expects input with > 2 dims"),
    "local response norm of a matrix": (lambda: F.local_response_norm(gt.ones(2, 3), 2),
                                        ValueError, "Expected 3D or higher"),
    "CrossMapLRN2d of a 3-d input": (lambda: nn.CrossMapLRN2d(3)(gt.ones(2, 3, 4)),
                                     ValueError, "Expected input to be 4D, got 3D"),
    "Softmax2d of a matrix": (lambda: nn.Softmax2d()(gt.ones(2, 3)), ValueError,
                              "expected input to be 3D or 4D, got 2D"),
    "InstanceNorm3d of a 3-d input": (lambda: nn.InstanceNorm3d(2)(gt.ones(2, 3, 4)),
                                      ValueError, "expected 4D or 5D input"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_arguments_raise_torchs_errors(name):
    call, kind, message = ERRORS[name]
    with pytest.raises(kind, match=message):
        call()
