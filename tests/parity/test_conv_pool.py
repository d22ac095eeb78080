"""nn's convolution, pooling, padding, resampling and normalisation layers against torch
(tests marked parity): every module and option side by side on the same weights and inputs
(outputs, gradients, node names, running statistics), random convolution shapes with
hypothesis, torch's choices at ties, NaN and -inf in max pooling, and torch's messages for
bad arguments. The op table's own sweep (tests/engine/test_op_gradients.py) proves each row's
derivatives."""
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402

pytestmark = pytest.mark.parity


def _both(make, x, train=True):
    """The module made on each engine (gradtool's with torch's weights and buffers), run on x
    (float64) and backward with a fixed cotangent: [(output, input grad, param grads, names,
    buffers)] for gradtool and torch."""
    theirs = make(torch.nn).double()
    ours = make(gt.nn).double()
    ours.load_state_dict({k: gt.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    results = []
    for lib, module in ((gt, ours), (torch, theirs)):
        module.train(train)
        inp = lib.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = module(inp)
        out = out[0] if isinstance(out, tuple) else out
        cot = np.random.default_rng(1).standard_normal(tuple(out.shape))
        out.backward(lib.tensor(cot))
        names = out.grad_fn and (out.grad_fn.name().removeprefix("torch::autograd::"),
                                 [f.name().removeprefix("torch::autograd::") if f else None
                                  for f, _ in out.grad_fn.next_functions])
        results.append((out.detach().numpy(), inp.grad.numpy(),
                        [p.grad.numpy() for p in module.parameters()], names,
                        {k: v.numpy() for k, v in module.state_dict().items()}))
    return results


def _assert_alike(results):
    (out, gx, gp, names, buffers), (t_out, t_gx, t_gp, t_names, t_buffers) = results
    np.testing.assert_allclose(out, t_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx, t_gx, rtol=1e-10, atol=1e-12)
    assert len(gp) == len(t_gp)
    for a, b in zip(gp, t_gp):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert names == t_names
    for key in t_buffers:
        np.testing.assert_allclose(buffers[key], t_buffers[key], rtol=1e-12, err_msg=key)


IMAGE = np.random.default_rng(0).standard_normal((2, 4, 7, 6))
MODULES = {
    "conv2d": lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=1),
    "conv2d_groups_dilation_nobias": lambda nn: nn.Conv2d(4, 4, (3, 2), dilation=(2, 1),
                                                          groups=2, bias=False),
    "conv2d_same_even": lambda nn: nn.Conv2d(4, 3, (2, 4), padding="same"),
    "conv2d_valid": lambda nn: nn.Conv2d(4, 3, 3, padding="valid"),
    "conv2d_reflect": lambda nn: nn.Conv2d(4, 3, 3, padding=(1, 2), padding_mode="reflect"),
    "conv2d_replicate_same": lambda nn: nn.Conv2d(4, 3, 4, padding="same",
                                                  padding_mode="replicate"),
    "conv2d_circular": lambda nn: nn.Conv2d(4, 3, 3, padding=1, padding_mode="circular"),
    "conv_transpose2d": lambda nn: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1,
                                                      output_padding=1, groups=1),
    "conv_transpose2d_groups": lambda nn: nn.ConvTranspose2d(4, 6, (2, 3), stride=(1, 2),
                                                             groups=2, dilation=(2, 1)),
    "max_pool2d": lambda nn: nn.MaxPool2d(3, 2, 1, ceil_mode=True),
    "max_pool2d_indices": lambda nn: nn.MaxPool2d(2, return_indices=True),
    "avg_pool2d": lambda nn: nn.AvgPool2d((3, 2), 2, (1, 1), count_include_pad=False),
    "adaptive_avg": lambda nn: nn.AdaptiveAvgPool2d((None, 4)),
    "adaptive_avg_1": lambda nn: nn.AdaptiveAvgPool2d(1),
    "adaptive_max": lambda nn: nn.AdaptiveMaxPool2d((5, 4)),
    "upsample_nearest": lambda nn: nn.Upsample(scale_factor=(1.5, 2)),
    "upsample_bilinear": lambda nn: nn.Upsample(size=(9, 4), mode="bilinear"),
    "upsampling_bilinear2d": lambda nn: nn.UpsamplingBilinear2d(scale_factor=2),
    "reflection_pad": lambda nn: nn.ReflectionPad2d((2, 0, 1, 3)),
    "replication_pad": lambda nn: nn.ReplicationPad2d(2),
    "zero_pad": lambda nn: nn.ZeroPad2d((1, 2, 0, 1)),
    "constant_pad": lambda nn: nn.ConstantPad2d((1, 1, 2, 0), 3.5),
    "circular_pad": lambda nn: nn.CircularPad2d((1, 2, 2, 1)),
    "batch_norm2d": lambda nn: nn.BatchNorm2d(4),
    "batch_norm2d_cumulative": lambda nn: nn.BatchNorm2d(4, momentum=None, affine=False),
    "batch_norm2d_untracked": lambda nn: nn.BatchNorm2d(4, track_running_stats=False),
    "group_norm": lambda nn: nn.GroupNorm(2, 4),
    "group_norm_no_affine": lambda nn: nn.GroupNorm(4, 4, affine=False),
    "dropout2d_p0": lambda nn: nn.Dropout2d(0.0),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_torch(name):
    _assert_alike(_both(MODULES[name], IMAGE))


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_batch_norm1d_and_eval_mode_match_torch(train):
    x = np.random.default_rng(2).standard_normal((5, 3, 4))
    _assert_alike(_both(lambda nn: nn.BatchNorm1d(3, momentum=0.3), x, train))
    _assert_alike(_both(lambda nn: nn.BatchNorm2d(4), IMAGE, train))


def test_one_dimensional_layers_and_unbatched_inputs_match_torch():
    x = np.random.default_rng(3).standard_normal((2, 4, 9))
    _assert_alike(_both(lambda nn: nn.Conv1d(4, 2, 3, stride=2, padding=2, dilation=2), x))
    _assert_alike(_both(lambda nn: nn.ConvTranspose1d(4, 2, 3, stride=3, output_padding=2), x))
    _assert_alike(_both(lambda nn: nn.Upsample(scale_factor=2.5), x))
    _assert_alike(_both(lambda nn: nn.ReflectionPad1d((3, 1)), x))
    _assert_alike(_both(lambda nn: nn.Conv2d(4, 2, 3, padding=1), IMAGE[0]))  # (C, H, W)
    _assert_alike(_both(lambda nn: nn.MaxPool2d(2), IMAGE[0]))


def test_conv_transpose_output_size_matches_torch():
    def make(nn):
        class WithSize(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)

            def forward(self, x):
                return self.up(x, output_size=[14, 12])
        return WithSize()
    results = _both(make, IMAGE)
    _assert_alike(results)
    assert results[0][0].shape == (2, 2, 14, 12)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(data=st.data())
def test_random_convolutions_match_torch(data):
    """Random shapes, strides, paddings, dilations, groups, transposed or not: outputs, input
    weight and bias gradients, and second-order gradients equal torch's."""
    groups = data.draw(st.sampled_from([1, 2]))
    c_in, c_out = groups * data.draw(st.integers(1, 2)), groups * data.draw(st.integers(1, 2))
    spatial = data.draw(st.sampled_from([1, 2]))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(spatial))
    dilation = tuple(data.draw(st.integers(1, 2)) for _ in range(spatial))
    padding = tuple(data.draw(st.integers(0, k // 2 + 1)) for k in kernel)
    transposed = data.draw(st.booleans())
    sizes = tuple(data.draw(st.integers(d * (k - 1) + 1, 7)) for k, d in zip(kernel, dilation))
    output_padding = tuple(data.draw(st.integers(0, max(s, d) - 1)) if transposed else 0
                           for s, d in zip(stride, dilation))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    x = rng.standard_normal((2, c_in) + sizes)
    w = rng.standard_normal(((c_in, c_out // groups) if transposed else (c_out, c_in // groups))
                            + kernel)
    b = rng.standard_normal(c_out)
    name = ("conv_transpose" if transposed else "conv") + f"{spatial}d"
    results = []
    for lib in (gt, torch):
        xs, ws, bs = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
        fn = getattr(lib.nn.functional, name)
        try:
            out = (fn(xs, ws, bs, stride, padding, output_padding, groups, dilation) if transposed
                   else fn(xs, ws, bs, stride, padding, dilation, groups))
        except RuntimeError as e:  # (an output too small: both refuse)
            results.append(type(e))
            continue
        first = lib.autograd.grad((out * out).sum(), (xs, ws, bs), create_graph=True)
        second = lib.autograd.grad(sum((g.sin()).sum() for g in first), (xs, ws))
        results.append([out.detach().numpy()] + [g.detach().numpy() for g in first + second])
    if not isinstance(results[1], list):
        assert results[0] is results[1]
        return
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_max_pool_ties_nan_and_minus_inf_follow_torch():
    """Ties go to the first in row-major order, a NaN wins (the last NaN of its window), and
    a window of -inf (with padding) points at its first cell inside the input."""
    x = np.array([[[[1.0, 1.0, 0.0, 2.0],
                    [1.0, 0.0, np.nan, np.nan],
                    [-np.inf, -np.inf, 5.0, 5.0],
                    [-np.inf, -np.inf, 5.0, 1.0]]]])
    for args in [(2,), (3, 1, 1), (2, 2, 1, 1, True)]:
        results = []
        for lib in (gt, torch):
            xs = lib.tensor(x, requires_grad=True)
            out, idx = lib.nn.functional.max_pool2d(xs, *args, return_indices=True)
            out.backward(lib.ones_like(out))
            results.append((out.detach().numpy(), idx.numpy(), xs.grad.numpy()))
        for a, b in zip(*results):
            np.testing.assert_array_equal(a, b)
        out, idx = gt.nn.functional.adaptive_max_pool2d(gt.tensor(x), 3, return_indices=True)
        t_out, t_idx = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), 3,
                                                               return_indices=True)
        np.testing.assert_array_equal(out.numpy(), t_out.numpy())
        np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


BAD_CALLS = {
    "conv_dtype": lambda lib, x: lib.nn.functional.conv2d(x, lib.ones(2, 4, 3, 3)),
    "conv_channels": lambda lib, x: lib.nn.functional.conv2d(x[:, :3], x.new_ones(2, 4, 3, 3)),
    "conv_groups": lambda lib, x: lib.nn.functional.conv2d(x, x.new_ones(3, 2, 3, 3), groups=2),
    "conv_kernel_too_big": lambda lib, x: lib.nn.functional.conv2d(x, x.new_ones(2, 4, 8, 3)),
    "conv_dims": lambda lib, x: lib.nn.functional.conv2d(x[0, 0], x.new_ones(2, 4, 3, 3)),
    "conv_bias": lambda lib, x: lib.nn.functional.conv2d(x, x.new_ones(2, 4, 3, 3),
                                                         x.new_ones(3)),
    "conv_same_strided": lambda lib, x: lib.nn.functional.conv2d(
        x, x.new_ones(2, 4, 3, 3), padding="same", stride=2),
    "conv_padding_string": lambda lib, x: lib.nn.functional.conv2d(
        x, x.new_ones(2, 4, 3, 3), padding="full"),
    "conv_transpose_output_padding": lambda lib, x: lib.nn.functional.conv_transpose2d(
        x, x.new_ones(4, 2, 3, 3), output_padding=1),
    "pool_padding": lambda lib, x: lib.nn.functional.max_pool2d(x, 3, padding=2),
    "pool_too_small": lambda lib, x: lib.nn.functional.avg_pool2d(x[..., :2, :2], 3),
    "pad_reflect_too_big": lambda lib, x: lib.nn.functional.pad(x, (6, 0), mode="reflect"),
    "pad_odd": lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1)),
    "interpolate_both": lambda lib, x: lib.nn.functional.interpolate(x, size=3, scale_factor=2),
    "interpolate_corners": lambda lib, x: lib.nn.functional.interpolate(x, size=3,
                                                                        align_corners=True),
    "group_norm_groups": lambda lib, x: lib.nn.functional.group_norm(x, 3),
    "batch_norm_dims": lambda lib, x: lib.nn.BatchNorm2d(4).double()(x[0]),
    "batch_norm_eval_without_stats": lambda lib, x: lib.nn.functional.batch_norm(x, None, None),
    "conv_groups_module": lambda lib, x: lib.nn.Conv2d(3, 4, 3, groups=2),
    "conv_padding_mode": lambda lib, x: lib.nn.Conv2d(3, 4, 3, padding_mode="zero"),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_arguments_raise_torchs_error(name):
    errors = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            BAD_CALLS[name](lib, lib.tensor(IMAGE))
        # (a set in a message prints in an order that changes from run to run)
        message = re.sub(r"\{[^}]*\}", lambda m: str(sorted(m.group(0)[1:-1].split(", "))),
                         str(info.value))
        errors.append((type(info.value).__name__, message))
    assert errors[0] == errors[1]


# ---- the 3-d pools and pads: the same modules over (D, H, W)
VOLUME = np.random.default_rng(6).standard_normal((2, 3, 4, 5, 6))
VOLUME_MODULES = {
    "max_pool3d": lambda nn: nn.MaxPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0), ceil_mode=True),
    "max_pool3d_dilation": lambda nn: nn.MaxPool3d(2, dilation=(1, 2, 2), return_indices=True),
    "avg_pool3d": lambda nn: nn.AvgPool3d((3, 2, 3), 2, (1, 1, 0), ceil_mode=True,
                                          count_include_pad=False),
    "avg_pool3d_divisor": lambda nn: nn.AvgPool3d(2, 1, divisor_override=5),
    "adaptive_avg_pool3d": lambda nn: nn.AdaptiveAvgPool3d((3, None, 4)),
    "adaptive_avg_pool3d_1": lambda nn: nn.AdaptiveAvgPool3d(1),
    "adaptive_max_pool3d": lambda nn: nn.AdaptiveMaxPool3d((3, 2, 4), return_indices=True),
    "reflection_pad3d": lambda nn: nn.ReflectionPad3d((1, 2, 3, 0, 2, 1)),
    "replication_pad3d": lambda nn: nn.ReplicationPad3d(2),
    "circular_pad3d": lambda nn: nn.CircularPad3d((1, 0, 2, 1, 1, 2)),
    "constant_pad3d": lambda nn: nn.ConstantPad3d((1, 0, 2, 1, 0, 1), -2.5),
    "zero_pad3d": lambda nn: nn.ZeroPad3d(1),
}


@pytest.mark.parametrize("name", sorted(VOLUME_MODULES))
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_3d_pools_and_pads_match_torch(name, batched):
    """Output, input gradient, node names and repr, batched (N, C, D, H, W) and (C, D, H, W)."""
    x = VOLUME if batched else VOLUME[0]
    _assert_alike(_both(VOLUME_MODULES[name], x))
    assert repr(VOLUME_MODULES[name](gt.nn)) == repr(VOLUME_MODULES[name](torch.nn))


@pytest.mark.parametrize("pool", ["max_pool3d", "adaptive_max_pool3d"])
def test_3d_max_pool_indices_ties_and_nan_follow_torch(pool):
    """Indices into the flattened (D, H, W) block; ties go to the first, a NaN wins."""
    x = np.round(VOLUME * 2) / 2  # (many ties)
    x[0, 1, 2, 3, 4] = x[1, 2, 0, 0, 0] = np.nan
    x[0, 0, 1] = -np.inf
    args = (2, 2, 1) if pool == "max_pool3d" else ((3, 4, 5),)
    seen = []
    for lib in (gt, torch):
        xs = lib.tensor(x, requires_grad=True)
        out, idx = getattr(lib.nn.functional, pool)(xs, *args, return_indices=True)
        out.backward(lib.ones_like(out))
        seen.append((out.detach().numpy(), idx.numpy(), xs.grad.numpy()))
    for a, b in zip(*seen):
        np.testing.assert_array_equal(a, b)


VOLUME_BAD_CALLS = {
    "max_pool3d_dims": lambda F, x: F.max_pool3d(x[0, 0], 2),
    "avg_pool3d_dims": lambda F, x: F.avg_pool3d(x[0, 0], 2),
    "max_pool3d_padding": lambda F, x: F.max_pool3d(x, 2, padding=2),
    "avg_pool3d_padding": lambda F, x: F.avg_pool3d(x, 2, padding=2),
    "max_pool3d_too_small": lambda F, x: F.max_pool3d(x, 5),
    "avg_pool3d_too_small": lambda F, x: F.avg_pool3d(x, 5),
    "avg_pool3d_divisor_zero": lambda F, x: F.avg_pool3d(x, 2, divisor_override=0),
    "adaptive_avg_pool3d_dims": lambda F, x: F.adaptive_avg_pool3d(x[0, 0], 2),
    "adaptive_max_pool3d_dims": lambda F, x: F.adaptive_max_pool3d(x[0, 0], 2),
    "adaptive_avg_pool3d_size": lambda F, x: F.adaptive_avg_pool3d(x, (2, 2)),
    "adaptive_max_pool3d_size": lambda F, x: F.adaptive_max_pool3d(x, (2, 2)),
    "pad_reflect3d_too_high": lambda F, x: F.pad(x, (1, 1, 5, 1, 1, 1), mode="reflect"),
    "pad_reflect3d_too_deep": lambda F, x: F.pad(x, (1, 1, 1, 1, 4, 1), mode="reflect"),
    "pad_replicate3d_dims": lambda F, x: F.pad(x[0, 0], (1,) * 6, mode="replicate"),
}


@pytest.mark.parametrize("name", sorted(VOLUME_BAD_CALLS))
def test_3d_pool_and_pad_errors_are_torchs(name):
    errors = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            VOLUME_BAD_CALLS[name](lib.nn.functional, lib.tensor(VOLUME))
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


# ---- the layers torch composes in Python (lp pools, local response norms) and the small
# ones of the long tail: outputs, gradients, node names and repr as torch's
COMPOSED_MODULES = {
    "lp_pool1d": (lambda nn: nn.LPPool1d(3, 2, 1), (2, 3, 7)),
    "lp_pool2d": (lambda nn: nn.LPPool2d(2, (2, 3), ceil_mode=True), (2, 3, 5, 7)),
    "lp_pool2d_inf": (lambda nn: nn.LPPool2d(float("inf"), 2), (3, 4, 4)),
    "lp_pool3d": (lambda nn: nn.LPPool3d(1.5, 2, (1, 2, 1)), (1, 2, 3, 4, 3)),
    "local_response_norm_3d": (lambda nn: nn.LocalResponseNorm(3, 0.5, 0.6, 1.5), (2, 5, 4)),
    "local_response_norm_4d": (lambda nn: nn.LocalResponseNorm(4, 0.3), (2, 6, 3, 2)),
    "local_response_norm_5d": (lambda nn: nn.LocalResponseNorm(2), (1, 4, 2, 2, 3)),
    "cross_map_lrn2d": (lambda nn: nn.CrossMapLRN2d(3, 0.4, 0.6, 2), (2, 5, 2, 3)),
    "cross_map_lrn2d_even": (lambda nn: nn.CrossMapLRN2d(4, 0.4), (2, 6, 2, 2)),
    "instance_norm3d": (lambda nn: nn.InstanceNorm3d(3, affine=True), (2, 3, 2, 3, 2)),
    "instance_norm3d_unbatched": (lambda nn: nn.InstanceNorm3d(3), (3, 2, 3, 2)),
    "softmax2d": (lambda nn: nn.Softmax2d(), (2, 3, 2, 2)),
    "channel_shuffle": (lambda nn: nn.ChannelShuffle(3), (2, 6, 2, 1)),
    "dropout1d_eval": (lambda nn: nn.Dropout1d(0.5).eval(), (2, 3, 4)),
    "alpha_dropout_p0": (lambda nn: nn.AlphaDropout(0.0), (2, 3)),
    "feature_alpha_dropout_eval": (lambda nn: nn.FeatureAlphaDropout(0.3).eval(), (2, 3, 2)),
}


@pytest.mark.parametrize("name", sorted(COMPOSED_MODULES))
def test_composed_layers_match_torch(name):
    make, shape = COMPOSED_MODULES[name]
    x = np.abs(np.random.default_rng(7).standard_normal(shape)) + 0.1
    if "lp_pool" not in name:
        x = np.random.default_rng(7).standard_normal(shape)
    _assert_alike(_both(make, x, train="eval" not in name))
    assert repr(make(gt.nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("name", ["upsample_nearest", "upsample_bilinear"])
def test_deprecated_upsampling_names_warn_as_torch(name):
    seen = []
    for lib in (gt, torch):
        x = lib.tensor(IMAGE, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.functional, name)(x, scale_factor=2)
        out.backward(lib.ones_like(out))
        seen.append(([str(w.message) for w in caught], out.grad_fn.name(),
                     out.detach().numpy(), x.grad.numpy()))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-12)
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=1e-12)


DROPOUTS = {  # (function, input shape, the dims one mask value covers)
    "dropout1d": ("dropout1d", (30, 40, 5), (2,)),
    "dropout1d_unbatched": ("dropout1d", (40, 5), (1,)),
    "dropout3d": ("dropout3d", (30, 40, 2, 2, 2), (2, 3, 4)),
    "dropout3d_unbatched": ("dropout3d", (40, 2, 2, 3), (1, 2, 3)),
    "alpha_dropout": ("alpha_dropout", (300, 40), ()),
    "feature_alpha_dropout": ("feature_alpha_dropout", (30, 40, 4), (2,)),
}


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_dropouts_behave_as_torchs(name, p):
    """Random masks differ between the engines; what they do is compared: the shape, the
    set of values a one input takes, masks constant over each channel, the share dropped
    (within sampling error), the node of the result, and eval mode's identity."""
    fn, shape, channel_dims = DROPOUTS[name]
    seen = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        out = getattr(lib.nn.functional, fn)(x, p, training=True)
        values = out.detach().numpy()
        constant = bool((values == values.max(axis=channel_dims, keepdims=True)).all()) if (
            channel_dims) else True
        dropped = float((values == values.min()).mean()) if len(np.unique(values)) > 1 else (
            float(p == 1.0))
        eval_out = getattr(lib.nn.functional, fn)(x, p, training=False)
        seen.append((tuple(out.shape), sorted(np.round(np.unique(values), 12).tolist()),
                     constant, out.grad_fn.name() if out.grad_fn else None,
                     eval_out is x, dropped))
    assert seen[0][:5] == seen[1][:5]
    assert seen[0][5] == pytest.approx(seen[1][5], abs=0.08)


DROPOUT_ERRORS = {
    "dropout1d_4d": lambda F, x: F.dropout1d(x.reshape(1, 2, 3, 4)),
    "dropout1d_p": lambda F, x: F.dropout1d(x.reshape(2, 12), 1.5),
    "dropout3d_p": lambda F, x: F.dropout3d(x, -0.1),
    "alpha_dropout_p": lambda F, x: F.alpha_dropout(x, 2.0),
    "feature_alpha_dropout_1d": lambda F, x: F.feature_alpha_dropout(x.flatten(), 0.5, True),
    "channel_shuffle_groups": lambda F, x: F.channel_shuffle(x.reshape(1, 3, 8), 2),
    "channel_shuffle_dims": lambda F, x: F.channel_shuffle(x.reshape(4, 6), 2),
    "channel_shuffle_zero_groups": lambda F, x: F.channel_shuffle(x.reshape(1, 4, 6), 0),
    "local_response_norm_dims": lambda F, x: F.local_response_norm(x.reshape(4, 6), 2),
    "lp_pool2d_too_small": lambda F, x: F.lp_pool2d(x.reshape(1, 2, 3, 4), 2, 4),
}


@pytest.mark.parametrize("name", sorted(DROPOUT_ERRORS))
def test_dropout_shuffle_and_lrn_errors_are_torchs(name):
    errors = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            DROPOUT_ERRORS[name](lib.nn.functional, lib.ones(2, 3, 4, dtype=lib.float64))
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("module", ["CrossMapLRN2d", "Softmax2d", "InstanceNorm3d"])
def test_module_errors_are_torchs(module):
    errors = []
    for lib in (gt, torch):
        layer = getattr(lib.nn, module)(*(() if module == "Softmax2d" else (3,)))
        with pytest.raises(Exception) as info:
            layer(lib.ones(2, 3, dtype=lib.float64))
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


# ---- max unpooling: max pooling's indices written back, as torch's
UNPOOLS = {
    "max_unpool1d": (lambda nn: (nn.MaxPool1d(3, 2, 1, return_indices=True),
                                 nn.MaxUnpool1d(3, 2, 1)), (2, 3, 8), (2, 3, 8)),
    "max_unpool1d_size": (lambda nn: (nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)),
                          (3, 7), [7]),
    "max_unpool2d": (lambda nn: (nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)),
                     (2, 3, 5, 6), (2, 3, 5, 6)),
    "max_unpool2d_stride": (lambda nn: (nn.MaxPool2d((3, 2), 1, (1, 0), return_indices=True),
                                        nn.MaxUnpool2d((3, 2), 1, (1, 0))), (3, 4, 5), None),
    "max_unpool3d": (lambda nn: (nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)),
                     (2, 2, 4, 5, 4), [5, 5, 4]),
    "max_unpool3d_unbatched": (lambda nn: (nn.MaxPool3d(2, 1, return_indices=True),
                                           nn.MaxUnpool3d(2, 1)), (2, 3, 3, 4), None),
}


@pytest.mark.parametrize("name", sorted(UNPOOLS))
def test_max_unpool_matches_torch(name):
    make, shape, output_size = UNPOOLS[name]
    x = np.random.default_rng(8).standard_normal(shape)
    seen = []
    for lib in (gt, torch):
        pool, unpool = make(lib.nn)
        xs = lib.tensor(x, requires_grad=True)
        out, indices = pool(xs)
        y = unpool(out, indices, output_size)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
        seen.append((repr(unpool), y.grad_fn.name(), y.detach().numpy(), xs.grad.numpy()))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_array_equal(seen[0][2], seen[1][2])
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=1e-12, atol=1e-14)


UNPOOL_BAD_CALLS = {
    "invalid_index": lambda F, x, i: F.max_unpool2d(x, i * 10, 2),
    "invalid_index_3d": lambda F, x, i: F.max_unpool3d(x.unsqueeze(0), i.unsqueeze(0) * 10, 2),
    "output_size_range": lambda F, x, i: F.max_unpool2d(x, i, 2, output_size=(9, 9)),
    "output_size_length": lambda F, x, i: F.max_unpool2d(x, i, 2, output_size=[9]),
    "indices_shape": lambda F, x, i: F.max_unpool2d(x, i[:, :, :1], 2),
    "indices_dtype": lambda F, x, i: F.max_unpool2d(x, i.double(), 2),
    "dims": lambda F, x, i: F.max_unpool2d(x[0, 0], i[0, 0], 2),
    "dims_3d": lambda F, x, i: F.max_unpool3d(x[0], i[0], 2),
}


@pytest.mark.parametrize("name", sorted(UNPOOL_BAD_CALLS))
def test_max_unpool_errors_are_torchs(name):
    errors = []
    for lib in (gt, torch):
        x, i = lib.nn.functional.max_pool2d(lib.tensor(IMAGE), 2, return_indices=True)
        with pytest.raises(Exception) as info:
            UNPOOL_BAD_CALLS[name](lib.nn.functional, x, i)
        # (which of several invalid indices torch names depends on its threads' order)
        errors.append((type(info.value).__name__,
                       re.sub(r"invalid max index: \d+", "invalid max index: N", str(info.value))))
    assert errors[0] == errors[1]


# ---- fractional max pooling: with the same _random_samples the windows are torch's
FRACTIONAL = {
    "2d_size": (2, (2, 3, 7, 9), dict(kernel_size=(2, 3), output_size=(4, 5))),
    "2d_ratio_unbatched": (2, (3, 8, 8), dict(kernel_size=3, output_ratio=(0.5, 0.7))),
    "2d_one": (2, (2, 2, 5, 5), dict(kernel_size=2, output_size=1)),
    "2d_dense": (2, (1, 2, 7, 9), dict(kernel_size=2, output_size=(6, 8))),
    "3d_size": (3, (2, 2, 5, 6, 7), dict(kernel_size=(2, 2, 3), output_size=(3, 4, 2))),
    "3d_ratio_unbatched": (3, (2, 4, 5, 6), dict(kernel_size=2, output_ratio=0.5)),
}


@pytest.mark.parametrize("name", sorted(FRACTIONAL))
def test_fractional_max_pool_matches_torch(name):
    """Values, indices, gradients, node names and the module's repr and state_dict."""
    spatial, shape, kwargs = FRACTIONAL[name]
    rng = np.random.default_rng(9)
    x = rng.standard_normal(shape)
    samples = rng.random((1 if len(shape) == spatial + 1 else shape[0], shape[-spatial - 1],
                          spatial))
    seen = []
    for lib in (gt, torch):
        module = getattr(lib.nn, f"FractionalMaxPool{spatial}d")(
            return_indices=True, _random_samples=lib.tensor(samples), **kwargs)
        xs = lib.tensor(x, requires_grad=True)
        out, indices = module(xs)
        grad, = lib.autograd.grad(out, xs, lib.tensor(np.cos(np.arange(out.numel())).reshape(
            tuple(out.shape))), create_graph=True)
        seen.append((repr(module), sorted(module.state_dict()), out.grad_fn.name(),
                     grad.grad_fn.name(), out.detach().numpy(), indices.numpy(),
                     grad.detach().numpy()))
    assert seen[0][:4] == seen[1][:4]
    for a, b in zip(seen[0][4:], seen[1][4:]):
        np.testing.assert_array_equal(a, b)


FRACTIONAL_BAD_CALLS = {
    "no_size": lambda F, x, s: F.fractional_max_pool2d(x, 2),
    "too_large": lambda F, x, s: F.fractional_max_pool2d(x, 5, output_size=4),
    "too_large_3d": lambda F, x, s: F.fractional_max_pool3d(x.unsqueeze(0), (2, 2, 8),
                                                            output_size=(1, 2, 2)),
    "float_ratio_2d": lambda F, x, s: F.fractional_max_pool2d(x, 2, output_ratio=0.5),
    "samples_batch": lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3,
                                                             _random_samples=s[:1]),
    "samples_channels": lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3,
                                                                _random_samples=s[:, :2]),
    "samples_dims": lambda F, x, s: F.fractional_max_pool2d(
        x, 2, output_size=3, _random_samples=s.repeat(1, 1, 2)),
    "samples_dtype": lambda F, x, s: F.fractional_max_pool2d(x, 2, output_size=3,
                                                             _random_samples=s.float()),
    "kernel_length": lambda F, x, s: F.fractional_max_pool2d(x, (2, 2, 2), output_size=3),
}
FRACTIONAL_BAD_MODULES = {
    "no_size": lambda nn: nn.FractionalMaxPool2d(2),
    "both": lambda nn: nn.FractionalMaxPool3d(2, 3, 0.5),
    "ratio_range": lambda nn: nn.FractionalMaxPool2d(2, output_ratio=1.5),
    "kernel_3d": lambda nn: nn.FractionalMaxPool3d((2, 0, 2), output_ratio=0.5),
}


@pytest.mark.parametrize("name", sorted(FRACTIONAL_BAD_CALLS))
def test_fractional_max_pool_errors_are_torchs(name):
    errors = []
    for lib in (gt, torch):
        samples = lib.tensor(np.random.default_rng(1).random((2, 3, 2)))
        with pytest.raises(Exception) as info:
            FRACTIONAL_BAD_CALLS[name](lib.nn.functional, lib.tensor(IMAGE[:, :3]), samples)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name", sorted(FRACTIONAL_BAD_MODULES))
def test_fractional_max_pool_module_arguments_are_checked_as_torchs(name):
    errors = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            FRACTIONAL_BAD_MODULES[name](lib.nn)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


# ---- affine_grid: one AffineGridGeneratorBackward0 node, as torch's
@pytest.mark.parametrize("size, align_corners", [
    ((2, 3, 4, 5), False), ((2, 3, 4, 5), True), ((2, 1, 3, 4, 2), False),
    ((1, 1, 1, 3), True), ((2, 3, 1, 1, 1), False), ((1, 2, 3, 2, 4), True)])
def test_affine_grid_matches_torch(size, align_corners):
    """Grid values, theta's gradient and second-order gradient, node name and saved size."""
    theta = np.random.default_rng(10).standard_normal((size[0], len(size) - 2, len(size) - 1))
    seen = []
    for lib in (gt, torch):
        t = lib.tensor(theta, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grid = lib.nn.functional.affine_grid(t, size, align_corners=align_corners)
        cot = lib.tensor(np.cos(np.arange(grid.numel())).reshape(tuple(grid.shape)))
        first, = lib.autograd.grad((grid * grid * cot).sum(), t, create_graph=True)
        second, = lib.autograd.grad(first.sin().sum(), t)
        seen.append(([str(w.message) for w in caught], grid.grad_fn.name(),
                     tuple(grid.grad_fn._saved_size), grid.detach().numpy(),
                     first.detach().numpy(), second.numpy()))
    assert seen[0][:3] == seen[1][:3]
    for a, b in zip(seen[0][3:], seen[1][3:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


AFFINE_GRID_BAD_CALLS = {
    "theta_shape": lambda F, t: F.affine_grid(t[:, :, :2], (2, 3, 4, 5), False),
    "theta_shape_3d": lambda F, t: F.affine_grid(t, (2, 3, 4, 5, 6), False),
    "size_length": lambda F, t: F.affine_grid(t, (2, 3, 4), False),
    "empty_size": lambda F, t: F.affine_grid(t, (2, 3, 0, 5), False),
    "integer_theta": lambda F, t: F.affine_grid(t.long(), (2, 3, 4, 5), False),
}


@pytest.mark.parametrize("name", sorted(AFFINE_GRID_BAD_CALLS))
def test_affine_grid_errors_are_torchs(name):
    errors = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            AFFINE_GRID_BAD_CALLS[name](lib.nn.functional, lib.ones(2, 2, 3, dtype=lib.float64))
        # (a shape or dtype prints as gradtool's on the engine, as its repr does everywhere)
        errors.append((type(info.value).__name__, str(info.value).replace("torch.", "gradtool.")))
    assert errors[0] == errors[1]


# ---- grid_sample: every mode, padding and align_corners, 4-d and 5-d, as torch's
GRID_SAMPLES = [(spatial, mode, padding, align) for spatial in (2, 3)
                for mode in ("bilinear", "nearest", "bicubic")
                for padding in ("zeros", "border", "reflection") for align in (False, True)
                if not (spatial == 3 and mode == "bicubic")]


@pytest.mark.parametrize("spatial, mode, padding, align_corners", GRID_SAMPLES)
def test_grid_sample_matches_torch(spatial, mode, padding, align_corners):
    """Output, the gradients of input and grid (positions inside and well outside the
    input) and their second-order gradients, node names."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3) + ((4, 5) if spatial == 2 else (3, 4, 5)))
    g = rng.uniform(-1.6, 1.6, (2,) + ((3, 4) if spatial == 2 else (2, 3, 2)) + (spatial,))
    seen = []
    for lib in (gt, torch):
        xs, gs = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        y = lib.nn.functional.grid_sample(xs, gs, mode, padding, align_corners)
        cot = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
        gx, gg = lib.autograd.grad((y * y * cot).sum(), (xs, gs), create_graph=True)
        second = lib.autograd.grad((gx.sin().sum() + gg.sin().sum()), (xs, gs),
                                   allow_unused=True)
        seen.append((y.grad_fn.name(), [a.detach().numpy() for a in (y, gx, gg)],
                     [None if s is None else s.numpy() for s in second]))
    assert seen[0][0] == seen[1][0]
    for a, b in zip(seen[0][1], seen[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(seen[0][2], seen[1][2]):
        if a is None or b is None:  # (an unused input: None on one, zeros on the other)
            assert not np.any(a if a is not None else b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


GRID_SAMPLE_BAD_CALLS = {
    "mode": lambda F, x, g: F.grid_sample(x, g, "area", align_corners=False),
    "padding": lambda F, x, g: F.grid_sample(x, g, padding_mode="wrap", align_corners=False),
    "batch": lambda F, x, g: F.grid_sample(x, g[:1], align_corners=False),
    "last_dim": lambda F, x, g: F.grid_sample(x, g[..., :1], align_corners=False),
    "dims": lambda F, x, g: F.grid_sample(x[:, :, 0], g[:, 0], align_corners=False),
    "bicubic_3d": lambda F, x, g: F.grid_sample(x.unsqueeze(2), g.unsqueeze(1).expand(
        -1, 1, -1, -1, -1)[..., :1].expand(-1, -1, -1, -1, 3), "bicubic", align_corners=False),
    "dtype": lambda F, x, g: F.grid_sample(x, g.float(), align_corners=False),
}


@pytest.mark.parametrize("name", sorted(GRID_SAMPLE_BAD_CALLS))
def test_grid_sample_errors_are_torchs(name):
    errors = []
    for lib in (gt, torch):
        x, g = lib.ones(2, 3, 4, 5, dtype=lib.float64), lib.zeros(2, 3, 4, 2, dtype=lib.float64)
        with pytest.raises(Exception) as info:
            GRID_SAMPLE_BAD_CALLS[name](lib.nn.functional, x, g)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


def test_grid_sample_warns_of_the_align_corners_default_as_torch():
    seen = []
    for lib in (gt, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
        seen.append([str(w.message) for w in caught])
    assert seen[0] == seen[1] and len(seen[0]) == 1


# ---- conv_tbc and native_channel_shuffle (their gradients: sweep cases for conv_tbc; torch
# does not differentiate native_channel_shuffle)
def _refusal(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value).__name__, str(info.value)


TBC_ERRORS = {
    "input_dims": lambda t, x, w, b: t.conv_tbc(x[0], w, b),
    "weight_dims": lambda t, x, w, b: t.conv_tbc(x, w[0], b),
    "bias_dims": lambda t, x, w, b: t.conv_tbc(x, w, b[None]),
    "in_channels": lambda t, x, w, b: t.conv_tbc(x, w[:, :2], b),
    "out_channels": lambda t, x, w, b: t.conv_tbc(x, w, b[:3]),
    "negative_length": lambda t, x, w, b: t.conv_tbc(x, w, b, -2),
    "kernel_longer_than_input": lambda t, x, w, b: t.conv_tbc(x, w[:1].expand(7, 3, 4), b),
    "mixed_dtypes": lambda t, x, w, b: t.conv_tbc(x.float(), w, b),
    "native_shuffle_groups": lambda t, x, w, b: t.native_channel_shuffle(x.reshape(1, 6, 5), 4),
    "native_shuffle_dims": lambda t, x, w, b: t.nn.functional.native_channel_shuffle(x[0], 2),
    "native_shuffle_zero_groups": lambda t, x, w, b: t.native_channel_shuffle(x, 0),
}


def _tbc_operands(lib, dtype="float64"):
    rng = np.random.default_rng(4)
    return [lib.tensor(rng.standard_normal(shape), dtype=getattr(lib, dtype))
            for shape in ((5, 2, 3), (3, 3, 4), (4,))]


@pytest.mark.parametrize("name", sorted(TBC_ERRORS))
def test_conv_tbc_and_native_channel_shuffle_errors_are_torchs(name):
    mine, theirs = (_refusal(lambda: TBC_ERRORS[name](lib, *_tbc_operands(lib)))
                    for lib in (gt, torch))
    assert mine == theirs


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_conv_tbc_of_float32_and_integers_is_torchs(dtype):
    """(float32: its frames' products summed in another order: a few ulps)"""
    mine, theirs = (lib.conv_tbc(*_tbc_operands(lib, dtype), 1) for lib in (gt, torch))
    assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_native_channel_shuffle_is_channel_shuffle_that_torch_does_not_differentiate():
    """The same values as channel_shuffle (torch.channel_shuffle and F's are one function);
    its node is NotImplemented, whose backward raises, and forward AD is refused, in torch's
    words."""
    seen = []
    for lib in (gt, torch):
        x = lib.tensor(np.arange(24.0).reshape(2, 6, 2), requires_grad=True)
        out = lib.native_channel_shuffle(x, 3)
        assert out.equal(lib.nn.functional.channel_shuffle(x, 3))
        assert lib.channel_shuffle(x, 3).grad_fn.name() == "ChannelShuffleBackward0"
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(x.detach(), lib.ones(2, 6, 2))
            forward = _refusal(lambda: lib.nn.functional.native_channel_shuffle(dual, 3))
        seen.append((out.grad_fn.name().rpartition("::")[2], out.tolist(),
                     _refusal(lambda: out.sum().backward()), forward,
                     lib.native_channel_shuffle(lib.arange(12).reshape(1, 6, 2), 2).tolist()))
    assert seen[0] == seen[1]
