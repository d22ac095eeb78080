"""nn.utils beyond clipping by norm: fusing eval-mode batch norms into the layer before them,
get_total_norm and clip_grads_with_norm_, the parameters as a vector, memory formats,
skip_init; and nn.init's sparse_ and the old spellings of eye_, dirac_ and sparse_. The
programs take the library (gradtool or torch); tests/parity/test_nn_utils.py compares them
with torch's."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradtool as gt

RNG = np.random.default_rng(7)


def fused_layers(lib):
    """conv -> bn, conv_transpose -> bn and linear -> bn in eval mode, against their fused
    layer: both outputs, and the fused parameters."""
    nn, fusion = lib.nn, lib.nn.utils.fusion
    out = []
    pairs = [(nn.Conv2d(2, 3, 3, bias=False), nn.BatchNorm2d(3), False, (2, 2, 5, 5)),
             (nn.ConvTranspose2d(2, 3, 2), nn.BatchNorm2d(3), True, (1, 2, 3, 3)),
             (nn.Linear(4, 3), nn.BatchNorm1d(3), None, (5, 4))]
    for layer, bn, transpose, shape in pairs:
        layer.double().eval()
        bn.double().eval()
        with lib.no_grad():
            for p in list(layer.parameters()) + list(bn.parameters()):
                p.copy_(lib.tensor(RNG.standard_normal(tuple(p.shape))))
            bn.running_mean.copy_(lib.tensor(RNG.standard_normal(3)))
            bn.running_var.copy_(lib.tensor(RNG.uniform(0.5, 2.0, 3)))
        fused = (fusion.fuse_linear_bn_eval(layer, bn) if transpose is None
                 else fusion.fuse_conv_bn_eval(layer, bn, transpose=transpose))
        x = lib.tensor(RNG.standard_normal(shape))
        with lib.no_grad():
            out.append((bn(layer(x)).numpy(), fused(x).numpy(), fused.weight.detach().numpy(),
                        fused.bias.detach().numpy(), type(fused.weight).__name__,
                        fused is layer))
    with pytest.raises(AssertionError) as error:
        fusion.fuse_linear_bn_eval(nn.Linear(2, 2), nn.BatchNorm1d(2))
    out.append(str(error.value))
    with pytest.raises(AssertionError) as error:
        fusion.fuse_linear_bn_eval(nn.Linear(2, 2).eval(), nn.BatchNorm1d(3).eval())
    out.append(str(error.value))
    return out


def test_a_fused_layer_computes_what_the_pair_computed():
    *pairs, training, mismatch = fused_layers(gt)
    for before, after, _, _, kind, same in pairs:
        np.testing.assert_allclose(after, before, rtol=1e-12, atol=1e-12)
        assert kind == "Parameter" and not same
    assert training == "Fusion only for eval!"
    assert mismatch.startswith("To fuse, linear.out_features == bn.num_features")


def clipping(lib):
    """get_total_norm of the gradients, clip_grads_with_norm_ with it, clip_grad_norm_ of an
    empty generator, vector_to_parameters of a list."""
    u = lib.nn.utils
    params = [lib.nn.Parameter(lib.ones(3)), lib.nn.Parameter(lib.ones(2, 2))]
    params[0].grad = lib.tensor([3.0, 0.0, 4.0])
    params[1].grad = lib.tensor([[1.0, -2.0], [2.0, 0.0]])
    grads = [p.grad for p in params]
    totals = [u.get_total_norm(grads).item(), u.get_total_norm(grads, 1.0).item(),
              u.get_total_norm(grads, float("inf")).item(), u.get_total_norm([]).item()]
    u.clip_grads_with_norm_(params, 2.0, u.get_total_norm(grads))
    clipped = [p.grad.tolist() for p in params]
    with pytest.warns(UserWarning, match="empty generator"):
        u.clip_grad_norm_((p for p in []), 1.0)
    with pytest.raises(TypeError) as error:
        u.vector_to_parameters([1.0], params)
    with pytest.raises(RuntimeError) as nonfinite:
        u.get_total_norm([lib.tensor([float("inf")])], error_if_nonfinite=True)
    return (totals, clipped, str(error.value), str(nonfinite.value)[:40],
            u.clip_grad.clip_grad_norm_ is u.clip_grad_norm_,
            u.convert_parameters.parameters_to_vector is u.parameters_to_vector)


def test_total_norm_and_clipping_with_it():
    totals, clipped, vector_error, nonfinite, *paths = clipping(gt)
    assert totals == pytest.approx([np.sqrt(34.0), 12.0, 4.0, 0.0])
    scale = 2.0 / (np.sqrt(34.0) + 1e-6)
    np.testing.assert_allclose(clipped[0], np.array([3.0, 0.0, 4.0]) * scale, rtol=1e-6)
    assert vector_error == "expected torch.Tensor, but got: list"
    assert nonfinite == "The total norm of order 2.0 for gradient"
    assert all(paths)


def layouts_and_skip_init(lib):
    """convert_conv2d_weight_memory_format on a model; skip_init's module and errors."""
    model = lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.Sequential(lib.nn.Conv2d(4, 4, 2)),
                              lib.nn.Linear(2, 2))
    weight = model[0].weight
    lib.nn.utils.convert_conv2d_weight_memory_format(model, lib.channels_last)
    strides = [model[0].weight.stride(), model[1][0].weight.stride(), model[2].weight.stride()]
    skipped = lib.nn.utils.skip_init(lib.nn.Linear, 3, 2, bias=False)
    errors = []
    for call in (lambda: lib.nn.utils.skip_init(int), lambda: lib.nn.utils.skip_init(
            lib.nn.ReLU)):
        with pytest.raises(RuntimeError) as error:
            call()
        errors.append(str(error.value))
    return (strides, model[0].weight is weight, repr(skipped), tuple(skipped.weight.shape),
            errors)


def test_memory_format_conversion_and_skip_init():
    strides, same, text, shape, errors = layouts_and_skip_init(gt)
    assert strides == [(18, 1, 6, 2), (16, 1, 8, 4), (2, 1)] and same
    assert text == "Linear(in_features=3, out_features=2, bias=False)" and shape == (2, 3)
    assert errors == ["Expected a Module; got <class 'int'>",
                      "Module must support a 'device' arg to skip initialization"]


def init_spellings(lib):
    """sparse_'s zeros per column, its error; the old spellings' warnings and results."""
    lib.manual_seed(0)
    w = lib.nn.init.sparse_(lib.empty(10, 4), 0.3, std=0.5)
    zeros = (w == 0).sum(0).tolist()
    with pytest.raises(ValueError) as error:
        lib.nn.init.sparse_(lib.empty(3), 0.5)
    warned = []
    results = []
    for old, args in ((lib.nn.init.eye, (lib.empty(2, 3),)),
                      (lib.nn.init.dirac, (lib.empty(2, 2, 3),)),
                      (lib.nn.init.sparse, (lib.empty(4, 2), 0.5))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = old(*args)
        warned.append((str(caught[0].message), caught[0].category.__name__, old.__name__))
        results.append((result == 0).sum().item() if old.__name__ == "sparse"
                       else result.tolist())
    return zeros, str(error.value), warned, results


def test_sparse_init_and_the_old_spellings():
    zeros, error, warned, results = init_spellings(gt)
    assert zeros == [3, 3, 3, 3] and error == "Only tensors with 2 dimensions are supported"
    assert warned[0] == ("`nn.init.eye` is now deprecated in favor of `nn.init.eye_`.",
                         "FutureWarning", "eye")
    assert results[0] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] and results[2] == 4


def rnn_helpers(lib, permutation):
    """nn.utils.rnn.invert_permutation (of an int64 permutation, an int32 one, None, a float
    one) and bind: values, dtypes, torch's scatter errors."""
    R = lib.nn.utils.rnn

    def outcome(call):
        try:
            out = call()
        except RuntimeError as e:
            return type(e).__name__, str(e)
        return out if out is None else (out.tolist(), str(out.dtype).split(".")[-1])
    p = lib.tensor(permutation)
    return [outcome(lambda: R.invert_permutation(p)),
            outcome(lambda: R.invert_permutation(p.int())),
            outcome(lambda: R.invert_permutation(p.double())),
            outcome(lambda: R.invert_permutation(None)),
            R.bind(None, len), outcome(lambda: R.bind(p, lambda t: t * 2))]


@settings(max_examples=25, deadline=None)
@given(st.permutations(list(range(6))).flatmap(
    lambda p: st.integers(1, 6).map(lambda n: [i for i in p if i < n])))
def test_invert_permutation_inverts(permutation):
    inverse, as_int32, as_float, none, bound_none, doubled = rnn_helpers(gt, permutation)
    assert [permutation[i] for i in inverse[0]] == list(range(len(permutation)))
    assert inverse[1] == "int64" and none is None and bound_none is None
    assert as_int32 == ("RuntimeError", "scatter(): Expected self.dtype to be equal to "
                                        "src.dtype")
    assert as_float == ("RuntimeError", "scatter(): Expected dtype int32/int64 for index")
    assert doubled == ([2 * i for i in permutation], "int64")
