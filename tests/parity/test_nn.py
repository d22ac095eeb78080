"""nn layers against torch: embedding's node, saved values and double backward; BatchNorm,
LayerNorm and a weighted, smoothed cross entropy trained together (loss, input gradient,
running statistics). Tests marked parity, skipped without torch."""
import warnings

import numpy as np
import pytest

import gradtool as gt

pytestmark = pytest.mark.parity


def test_embedding_nodes_saved_values_and_double_backward_are_torchs():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        w = lib.tensor(np.arange(15.0).reshape(5, 3), requires_grad=True)
        y = lib.nn.functional.embedding(lib.tensor([[1, 2], [0, 1]]), w, padding_idx=0)
        node = y.grad_fn
        g = lib.tensor(np.arange(12.0).reshape(2, 2, 3), requires_grad=True)
        gw, = lib.autograd.grad(y, w, g, create_graph=True)
        gg, = lib.autograd.grad((gw * gw).sum(), g)
        seen.append((node.name(), sorted(a for a in dir(node) if a.startswith("_saved")),
                     node._saved_indices.tolist(), node._saved_padding_idx,
                     node._saved_weight_sym_argsize_0, node._saved_sparse,
                     gw.grad_fn.name(), sorted(a for a in dir(gw.grad_fn)
                                              if a.startswith("_saved")),
                     gw.tolist(), gg.tolist()))
    assert seen[0] == seen[1]


def test_layers_and_losses_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)) * 2 + 1
    target = np.array([0, 3, 1, 3, 2, 1])
    weight = np.array([0.5, 2.0, 1.0, 1.5])

    def run(lib):
        lib.manual_seed(0)
        inp = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        bn, ln = lib.nn.BatchNorm1d(4).double(), lib.nn.LayerNorm(4).double()
        ce = lib.nn.CrossEntropyLoss(weight=lib.tensor(weight), ignore_index=2,
                                     label_smoothing=0.1)
        h = ln(bn(inp))
        bn.eval()
        loss = ce(h + bn(inp), lib.tensor(target)) + lib.nn.functional.mse_loss(h, inp)
        loss.backward()
        return [t.detach().numpy() for t in (loss, inp.grad, bn.running_mean, bn.running_var)]

    for ours, theirs in zip(run(gt), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


# ---- the modules added after the census of real files (docs/census.md)
ACTIVATION_MODULES = [("Hardtanh", (-0.5, 1.5)), ("ReLU6", ()), ("Hardsigmoid", ()),
                      ("Hardswish", ()), ("Mish", ()), ("SELU", ()), ("LogSigmoid", ()),
                      ("Softsign", ()), ("Tanhshrink", ()), ("Softmin", (1,)), ("GLU", (1,)),
                      ("PReLU", (4,)), ("PReLU", ()), ("CELU", (1.5,)), ("Threshold", (0.1, 2.0)),
                      ("Hardshrink", ()), ("Softshrink", (0.7,)), ("RReLU", (0.1, 0.3))]


@pytest.mark.parametrize("name, args", ACTIVATION_MODULES,
                         ids=[f"{n}{len(a)}" for n, a in ACTIVATION_MODULES])
def test_activation_modules_are_torchs(name, args):
    """Output, input gradient, parameters' gradients, node name and repr, as torch's."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((2, 4, 3)) * 3
    seen = []
    for lib in (gt, torch):
        module = getattr(lib.nn, name)(*args).double().eval()  # (RReLU: its mean slope)
        xt = lib.tensor(x, requires_grad=True)
        y = module(xt)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
        seen.append((y.grad_fn.name(), repr(module), y.detach().numpy(), xt.grad.numpy(),
                     [(n, p.grad.numpy()) for n, p in module.named_parameters()]))
    (name_a, repr_a, y_a, g_a, p_a), (name_b, repr_b, y_b, g_b, p_b) = seen
    assert (name_a, repr_a) == (name_b, repr_b)
    np.testing.assert_allclose(y_a, y_b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g_a, g_b, rtol=1e-12, atol=1e-14)
    assert [n for n, _ in p_a] == [n for n, _ in p_b]
    for (_, a), (_, b) in zip(p_a, p_b):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_parameter_containers_register_as_torchs():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        holder = lib.nn.Module()
        holder.plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.zeros(3)])
        holder.plist.append(lib.nn.Parameter(lib.ones(1)))
        holder.pdict = lib.nn.ParameterDict({"b": lib.ones(2), "a": lib.nn.Parameter(lib.ones(1))})
        seen.append(([n for n, _ in holder.named_parameters()], list(holder.state_dict()),
                     len(holder.plist), list(holder.pdict.keys()),
                     [type(p).__name__ for p in holder.plist], holder.plist[-1].shape[0]))
    assert seen[0] == seen[1]


def test_weight_norm_splits_and_joins_the_weight_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    w, x = rng.standard_normal((3, 2, 4)), rng.standard_normal((2, 2, 6))
    seen = []
    for lib in (gt, torch):
        conv = lib.nn.Conv1d(2, 3, 4, bias=False).double()
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(w))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch's: use parametrizations
            lib.nn.utils.weight_norm(conv)
        conv(lib.tensor(x)).pow(2).sum().backward()
        names = [n for n, _ in conv.named_parameters()]
        grads = [conv.weight_g.grad.numpy(), conv.weight_v.grad.numpy()]
        lib.nn.utils.remove_weight_norm(conv)
        seen.append((names, [n for n, _ in conv.named_parameters()], grads,
                     conv.weight.detach().numpy()))
    assert seen[0][:2] == seen[1][:2]
    for a, b in zip(seen[0][2], seen[1][2]):
        np.testing.assert_allclose(a, b, rtol=1e-11)
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=1e-13)


def test_data_parallel_without_cuda_and_checkpoint_are_the_plain_call():
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint  # noqa: F401 (torch's is a submodule to import)
    seen = []
    for lib in (gt, torch):
        inner = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            inner.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3)))
            inner.bias.copy_(lib.tensor([0.5, -1.0]))
        model = lib.nn.DataParallel(inner)
        x = lib.tensor(np.ones((4, 3)), requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
        y.sum().backward()
        seen.append((list(model.state_dict()), y.detach().numpy().tolist(), x.grad.tolist()))
    assert seen[0] == seen[1]


def test_module_type_casts_every_parameter_and_buffer_as_torch():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        weight = model[0].weight
        assert model.type(lib.float64) is model and model[0].weight is weight
        seen.append([(n, str(t.dtype).split(".")[-1], type(t).__name__)
                     for n, t in list(model.named_parameters()) + list(model.named_buffers())])
    assert seen[0] == seen[1]


@pytest.mark.parametrize("kwargs", [{}, {"affine": True}, {"track_running_stats": True}],
                         ids=["plain", "affine", "running_stats"])
def test_instance_norm_is_torchs(kwargs):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(7).standard_normal((2, 3, 4, 5)) * 2 + 1
    seen = []
    for lib in (gt, torch):
        norm = lib.nn.InstanceNorm2d(3, **kwargs).double()
        xt = lib.tensor(x, requires_grad=True)
        y = norm(xt)
        y.backward(lib.tensor(np.sin(np.arange(y.numel())).reshape(x.shape)))
        norm.eval()
        seen.append((repr(norm), y.grad_fn.name(), y.detach().numpy(), xt.grad.numpy(),
                     [t.detach().numpy() for _, t in norm.named_parameters()] +
                     [p.grad.numpy() for _, p in norm.named_parameters()] +
                     [t.numpy() for _, t in norm.named_buffers()],
                     norm(xt).detach().numpy()))
    assert seen[0][:2] == seen[1][:2]
    for a, b in zip(seen[0][2:], seen[1][2:]):
        for u, v in (zip(a, b) if isinstance(a, list) else [(a, b)]):
            np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)


POOLS_1D = {"avg": lambda lib: lib.nn.AvgPool1d(3, stride=2, padding=1),
            "avg_no_pad_count": lambda lib: lib.nn.AvgPool1d(2, padding=1, ceil_mode=True,
                                                             count_include_pad=False),
            "adaptive": lambda lib: lib.nn.AdaptiveAvgPool1d(3),
            "adaptive_to_1": lambda lib: lib.nn.AdaptiveAvgPool1d(1)}


@pytest.mark.parametrize("name", sorted(POOLS_1D))
def test_1d_average_pools_are_torchs(name):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((2, 3, 7))
    seen = []
    for lib in (gt, torch):
        pool = POOLS_1D[name](lib)
        xt = lib.tensor(x, requires_grad=True)
        y = pool(xt)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
        chain, node = [], y.grad_fn
        while node is not None and node.next_functions:
            chain.append(node.name())
            node = node.next_functions[0][0]
        seen.append((repr(pool), chain, y.detach().numpy(), xt.grad.numpy()))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-13)
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=1e-13)


# ---- the layers of the census's long tail: 3-d convolutions, pixel shuffles, 1-d max pools,
# RMSNorm, Unflatten, KL divergence, cosine similarity, SyncBatchNorm in one process
LONG_TAIL_MODULES = {
    "Conv3d": (lambda lib: lib.nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1),
               (2, 2, 4, 5, 3)),
    "Conv3d_groups": (lambda lib: lib.nn.Conv3d(2, 4, 2, dilation=(1, 2, 1), groups=2,
                                                bias=False), (1, 2, 3, 4, 4)),
    "ConvTranspose3d": (lambda lib: lib.nn.ConvTranspose3d(2, 4, 2, stride=2, groups=2),
                        (1, 2, 2, 3, 2)),
    "BatchNorm3d": (lambda lib: lib.nn.BatchNorm3d(3), (2, 3, 2, 3, 2)),
    "SyncBatchNorm": (lambda lib: lib.nn.SyncBatchNorm(3, momentum=None), (4, 3, 5)),
    "PixelShuffle": (lambda lib: lib.nn.PixelShuffle(2), (2, 8, 3, 2)),
    "PixelUnshuffle": (lambda lib: lib.nn.PixelUnshuffle(2), (2, 4, 6)),
    "MaxPool1d": (lambda lib: lib.nn.MaxPool1d(3, 2, padding=1, dilation=1, ceil_mode=True),
                  (2, 3, 8)),
    "AdaptiveMaxPool1d": (lambda lib: lib.nn.AdaptiveMaxPool1d(3), (2, 3, 7)),
    "RMSNorm": (lambda lib: lib.nn.RMSNorm((3, 4)), (2, 3, 4)),
    "RMSNorm_eps": (lambda lib: lib.nn.RMSNorm(4, eps=1e-3, elementwise_affine=False), (5, 4)),
    "Unflatten": (lambda lib: lib.nn.Unflatten(1, (2, 3)), (4, 6, 2)),
    "Unfold": (lambda lib: lib.nn.Unfold((2, 3), padding=1, stride=2), (2, 2, 5, 4)),
    "Fold": (lambda lib: lib.nn.Fold((4, 5), 2, dilation=(2, 1)), (8, 8)),
}


@pytest.mark.parametrize("name", sorted(LONG_TAIL_MODULES))
def test_long_tail_modules_are_torchs(name):
    """Output, input gradient, parameters' gradients, node name and repr, as torch's (torch's
    parameters copied into the engine's module)."""
    torch = pytest.importorskip("torch")
    build, shape = LONG_TAIL_MODULES[name]
    x = np.random.default_rng(4).standard_normal(shape)
    theirs = build(torch).double()
    ours = build(gt).double()
    with gt.no_grad():
        for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            p.copy_(gt.tensor(q.detach().numpy()))
    seen = []
    for lib, module in ((gt, ours), (torch, theirs)):
        xt = lib.tensor(x, requires_grad=True)
        y = module(xt)
        y.backward(lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
        seen.append((y.grad_fn.name(), repr(module), y.detach().numpy(), xt.grad.numpy(),
                     [(n, p.grad.numpy()) for n, p in module.named_parameters()],
                     [(n, b.numpy()) for n, b in module.named_buffers()]))
    (node_a, repr_a, *numbers_a), (node_b, repr_b, *numbers_b) = seen
    assert (node_a, repr_a) == (node_b, repr_b)
    np.testing.assert_allclose(numbers_a[0], numbers_b[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(numbers_a[1], numbers_b[1], rtol=1e-12, atol=1e-12)
    for (n, a), (m, b) in zip(numbers_a[2] + numbers_a[3], numbers_b[2] + numbers_b[3]):
        assert n == m
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


LONG_TAIL_FUNCTIONS = {
    "kl_div_batchmean": lambda F, a, b: F.kl_div(a.log_softmax(1), b.softmax(1),
                                                 reduction="batchmean"),
    "kl_div_log_target_sum": lambda F, a, b: F.kl_div(a, b, reduction="sum", log_target=True),
    "kl_div_none_zero_target": lambda F, a, b: F.kl_div(a, b.relu(), reduction="none"),
    "cosine_similarity": lambda F, a, b: F.cosine_similarity(a, b, dim=0),
    "cosine_similarity_broadcast": lambda F, a, b: F.cosine_similarity(a, b[:1], eps=1e-3),
    "rms_norm": lambda F, a, b: F.rms_norm(a, (4,), b[0]),
    "max_pool1d_indices": lambda F, a, b: F.max_pool1d(a.unsqueeze(0), 2, return_indices=True),
}


@pytest.mark.parametrize("name", sorted(LONG_TAIL_FUNCTIONS))
def test_long_tail_functions_are_torchs(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    seen = []
    for lib in (gt, torch):
        xa, xb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = LONG_TAIL_FUNCTIONS[name](lib.nn.functional, xa, xb)
        indices = None
        if isinstance(out, tuple):
            out, indices = out[0], out[1].tolist()
        grads = lib.autograd.grad(out.sum(), (xa, xb), allow_unused=True)
        seen.append((out.grad_fn.name(), indices, out.detach().numpy(),
                     [None if g is None else g.numpy() for g in grads]))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-12, atol=1e-14)
    for ours, theirs in zip(seen[0][3], seen[1][3]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_long_tail_errors_warnings_and_inits_are_torchs():
    torch = pytest.importorskip("torch")
    import torch.nn.parallel  # noqa: F401

    def outcome(call):
        try:
            result = call()
            return ("ok", None if result is None else np.asarray(result.detach()).tolist())
        except Exception as exc:  # noqa: BLE001 (the comparison is of the exceptions)
            return (type(exc).__name__, str(exc))
    seen = []
    for lib in (gt, torch):
        F = lib.nn.functional
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            F.kl_div(lib.zeros(2, 2), lib.ones(2, 2))
            F.gumbel_softmax(lib.zeros(2, 3), eps=1e-3)
        hard = F.gumbel_softmax(lib.randn(4, 5), tau=0.5, hard=True)
        seen.append(([str(w.message) for w in caught],
                     hard.sum(-1).tolist(), sorted(set(hard.flatten().tolist())),
                     outcome(lambda: F.pixel_shuffle(lib.ones(2, 3), 2)),
                     outcome(lambda: F.pixel_shuffle(lib.ones(1, 6, 2, 2), 2)),
                     outcome(lambda: F.pixel_unshuffle(lib.ones(1, 1, 3, 4), 2)),
                     outcome(lambda: lib.nn.init.dirac_(lib.empty(4, 2, 3, 3), groups=2)),
                     outcome(lambda: lib.nn.init.dirac_(lib.empty(3, 2))),
                     outcome(lambda: lib.nn.SyncBatchNorm(2)(lib.ones(2))),
                     repr(lib.nn.SyncBatchNorm.convert_sync_batchnorm(
                         lib.nn.Sequential(lib.nn.BatchNorm2d(3), lib.nn.ReLU()))),
                     repr(lib.nn.KLDivLoss(reduction="batchmean", log_target=True)),
                     repr(lib.nn.CosineSimilarity(0)),
                     outcome(lambda: F.rms_norm(lib.ones(2, 3), (4,)))))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("make", ["linear", "conv_transpose"])
def test_spectral_norm_is_torchs(make):
    """The power iteration's buffers, the normalised weight, outputs and gradients over a few
    training steps, an eval step and remove_spectral_norm, as torch's (torch's random u, v
    and weight copied into the engine's module)."""
    torch = pytest.importorskip("torch")
    build = {"linear": lambda lib: lib.nn.Linear(4, 3),
             "conv_transpose": lambda lib: lib.nn.ConvTranspose1d(2, 3, 2)}[make]
    shape = (2, 4) if make == "linear" else (1, 2, 5)
    theirs = torch.nn.utils.spectral_norm(build(torch).double(), n_power_iterations=2)
    ours = gt.nn.utils.spectral_norm(build(gt).double(), n_power_iterations=2)
    with gt.no_grad():
        for name, value in theirs.state_dict().items():
            getattr(ours, name).copy_(gt.tensor(value.numpy()))
    x = np.random.default_rng(6).standard_normal(shape)
    seen = []
    for lib, module in ((gt, ours), (torch, theirs)):
        steps = []
        for _ in range(3):
            xt = lib.tensor(x, requires_grad=True)
            module(xt).pow(2).sum().backward()
            steps.append([t.numpy().copy() for t in (  # (copies: .grad accumulates in place)
                module.weight.detach(), xt.grad, module.weight_orig.grad, module.weight_u)])
        module.eval()
        steps.append([module(lib.tensor(x)).detach().numpy()])
        names = sorted(module.state_dict())
        lib.nn.utils.remove_spectral_norm(module)
        seen.append((steps, names, sorted(module.state_dict()), module.weight.detach().numpy()))
    assert seen[0][1:3] == seen[1][1:3]
    for ours_step, theirs_step in zip(seen[0][0], seen[1][0]):
        for a, b in zip(ours_step, theirs_step):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=1e-10)


IN_PLACE_ACTIVATIONS = {"relu_": (), "hardtanh_": (-0.5, 0.5), "elu_": (1.5,), "selu_": (),
                        "celu_": (1.5,), "leaky_relu_": (0.2,), "rrelu_": (0.1, 0.3),
                        "threshold_": (0.1, 2.0)}


@pytest.mark.parametrize("name", IN_PLACE_ACTIVATIONS)
def test_in_place_activations_are_torchs(name):
    """nn.functional's in-place activations: the values written, the version bump, torch's node
    and gradient, and torch's refusal of a leaf that requires grad."""
    torch = pytest.importorskip("torch")
    args = IN_PLACE_ACTIVATIONS[name]
    x = np.random.default_rng(5).standard_normal((3, 4)) * 2
    seen = []
    for lib in (gt, torch):
        leaf = lib.tensor(x, requires_grad=True)
        h = leaf * 1.0
        out = getattr(lib.nn.functional, name)(h, *args)
        out.backward(lib.tensor(np.cos(np.arange(12.0)).reshape(3, 4)))
        with pytest.raises(RuntimeError) as refused:
            getattr(lib.nn.functional, name)(leaf, *args)
        seen.append((out is h, h._version, out.grad_fn.name(), str(refused.value),
                     out.detach().numpy(), leaf.grad.numpy()))
    assert seen[0][:4] == seen[1][:4]
    np.testing.assert_allclose(seen[0][4], seen[1][4], rtol=1e-14)
    np.testing.assert_allclose(seen[0][5], seen[1][5], rtol=1e-14)


def test_rrelu_in_training_and_the_activations_errors_are_torchs():
    """RReLU in training draws (other numbers than torch's generator): each slope within
    [lower, upper] and the gradient the drawn slope, on both; the argument errors as torch's."""
    torch = pytest.importorskip("torch")
    x = -np.linspace(0.5, 2.0, 50)
    for lib in (gt, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.RReLU(0.1, 0.3)(xt)
        y.sum().backward()
        slopes = (y / xt).detach().numpy()
        assert y.grad_fn.name() == "RreluWithNoiseBackward0"
        assert 0.1 <= slopes.min() and slopes.max() <= 0.3
        np.testing.assert_allclose(xt.grad.numpy(), slopes, rtol=1e-14)
    for call in (lambda lib: lib.nn.functional.softshrink(lib.ones(2), -1.0),
                 lambda lib: lib.nn.functional.softshrink(lib.ones(2, dtype=lib.float64), -2),
                 lambda lib: lib.nn.functional.rrelu(lib.ones(2), 0.5, 0.2),
                 lambda lib: lib.nn.functional.celu(lib.ones(2), 0.0)):
        errors = []
        for lib in (gt, torch):
            with pytest.raises(Exception) as caught:
                call(lib)
            errors.append((type(caught.value), str(caught.value)))
        assert errors[0] == errors[1]


# ---- Bilinear and the distances: values, gradients (inputs and parameters), nodes, repr and
# state_dict from the same weights
TWO_INPUT_LAYERS = {
    "bilinear": (lambda nn: nn.Bilinear(4, 3, 2).double(), [(5, 4), (5, 3)]),
    "bilinear_no_bias_batched": (lambda nn: nn.Bilinear(4, 3, 2, bias=False).double(),
                                 [(2, 5, 4), (2, 5, 3)]),
    "bilinear_unbatched": (lambda nn: nn.Bilinear(4, 3, 2).double(), [(4,), (3,)]),
    "pairwise_distance": (lambda nn: nn.PairwiseDistance(), [(5, 4), (5, 4)]),
    "pairwise_distance_p1_keepdim": (lambda nn: nn.PairwiseDistance(1.0, 1e-3, True),
                                     [(5, 4), (4,)]),
    "pairwise_distance_pinf": (lambda nn: nn.PairwiseDistance(float("inf")), [(5, 4), (5, 4)]),
}


@pytest.mark.parametrize("case", TWO_INPUT_LAYERS)
def test_two_input_layers_are_torchs(case):
    from tests.parity.test_recurrent_attention import _compare
    torch = pytest.importorskip("torch")
    make, shapes = TWO_INPUT_LAYERS[case]
    rng = np.random.default_rng(4)
    mine = _compare(torch, make, [rng.standard_normal(s) for s in shapes])
    assert repr(mine) == repr(make(torch.nn))


def test_bilinear_and_pdist_refuse_what_torch_refuses():
    torch = pytest.importorskip("torch")
    calls = [lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3), lib.ones(2, 4),
                                                    lib.ones(5, 3, 3)),
             lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3), lib.ones(3, 3),
                                                    lib.ones(5, 3, 3)),
             lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3), lib.ones(2, 2, 3),
                                                    lib.ones(5, 3, 3)),
             lambda lib: lib.nn.functional.bilinear(lib.ones(2, 4), lib.ones(2, 3),
                                                    lib.ones(5, 3, 3)),
             lambda lib: lib.nn.functional.bilinear(lib.ones(2, 3), lib.ones(2, 3),
                                                    lib.ones(5, 3, 3), lib.ones(4)),
             lambda lib: lib.nn.Bilinear(0, 2, 3),
             lambda lib: lib.nn.functional.pdist(lib.ones(2, 3, 4)),
             lambda lib: lib.nn.functional.pdist(lib.ones(2, 3), -1.0)]
    for call in calls:
        errors = []
        for lib in (gt, torch):
            with pytest.raises(Exception) as caught:
                call(lib)
            errors.append((type(caught.value), str(caught.value)))
        assert errors[0] == errors[1]


# ---- the lazy modules: before their first input (repr, state_dict), after it (the class they
# become, repr, state_dict), and then values and gradients from the same weights
LAZY_MODULES = {"LazyLinear": ((3,), (2, 5)), "LazyConv1d": ((4, 3), (2, 6, 7)),
                "LazyConv2d": ((4, 3, 1, 1, 1, 2), (2, 6, 5, 5)),
                "LazyConv3d": ((2, 2), (1, 3, 3, 3, 3)),
                "LazyConvTranspose1d": ((4, 3, 2), (2, 5, 4)),
                "LazyConvTranspose2d": ((4, 3), (5, 4, 4)),
                "LazyConvTranspose3d": ((2, 2), (1, 3, 2, 2, 2)),
                "LazyBatchNorm1d": ((), (4, 5)), "LazyBatchNorm2d": ((1e-3, 0.2), (2, 5, 3, 3)),
                "LazyBatchNorm3d": ((), (2, 3, 2, 2, 2)), "LazyInstanceNorm1d": ((), (2, 5, 4)),
                "LazyInstanceNorm2d": ((1e-5, 0.1, False, False), (2, 5, 3, 3))}


@pytest.mark.parametrize("name", LAZY_MODULES)
def test_lazy_modules_are_torchs(name):
    from tests.parity.test_recurrent_attention import _compare
    torch = pytest.importorskip("torch")
    args, shape = LAZY_MODULES[name]
    x = np.random.default_rng(6).standard_normal(shape)
    seen = []
    for lib in (gt, torch):
        module = getattr(lib.nn, name)(*args)
        before = (repr(module), [(k, repr(v)) for k, v in module.state_dict().items()],
                  module.has_uninitialized_params())
        module.double()(lib.tensor(x))
        seen.append((before, type(module).__name__, repr(module),
                     [(k, tuple(v.shape), str(v.dtype).split(".")[-1])
                      for k, v in module.state_dict().items()]))
    assert seen[0] == seen[1]

    def make(nn):
        module = getattr(nn, name)(*args).double()
        module(gt.tensor(x) if nn is gt.nn else torch.tensor(x))
        return module.eval() if "Norm" in name else module
    _compare(torch, make, [x], nodes=False)  # (nodes: the classes' own parity tests)


def test_uninitialized_parameters_and_buffers_are_torchs():
    torch = pytest.importorskip("torch")
    calls = [lambda lib: lib.nn.LazyLinear(3).weight.sum(),
             lambda lib: lib.nn.LazyLinear(3).weight.shape,
             lambda lib: lib.nn.LazyBatchNorm1d().running_mean.mul(2),
             lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5)),
             lambda lib: lib.nn.LazyLinear(3).weight.share_memory_()]
    for call in calls:
        errors = []
        for lib in (gt, torch):
            with pytest.raises(Exception) as caught:
                call(lib)
            errors.append((type(caught.value), str(caught.value)))
        assert errors[0] == errors[1]
    for lib in (gt, torch):  # loading a state_dict gives a lazy module its shapes
        layer = lib.nn.LazyLinear(3)
        layer.load_state_dict(lib.nn.Linear(4, 3).state_dict())
        assert (type(layer).__name__, tuple(layer.weight.shape)) == ("LazyLinear", (3, 4))
        module = lib.nn.Module()
        module.kept, module.scratch = lib.nn.Buffer(lib.ones(2)), lib.nn.Buffer(
            lib.ones(1), persistent=False)
        assert list(module.state_dict()) == ["kept"]
        assert [n for n, _ in module.named_buffers()] == ["kept", "scratch"]


def test_the_deprecated_container_warns_as_torchs():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (gt, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            container = lib.nn.Container(act=lib.nn.ReLU())
            type("Old", (lib.nn.Container,), {})
        seen.append(([(w.category, str(w.message)) for w in caught], repr(container)))
    assert seen[0] == seen[1]


# ---- EmbeddingBag: values, gradients (weight and per-sample weights), repr, the node's saved
# bags, from the same weights
EMBEDDING_BAGS = {
    "mean_offsets": (dict(), [np.array([0, 2, 2, 5, 1, 4]), np.array([0, 2, 2])]),
    "sum_2d_padding": (dict(mode="sum", padding_idx=-2), [np.array([[0, 4], [5, 4], [1, 1]])]),
    "max_last_offset": (dict(mode="max", include_last_offset=True),
                        [np.array([3, 2, 2, 5, 1]), np.array([0, 2, 2, 5])]),
    "sum_weighted": (dict(mode="sum"), [np.array([0, 2, 2, 5, 2]), np.array([0, 3]),
                                        np.linspace(0.5, 1.5, 5)]),
}


@pytest.mark.parametrize("case", EMBEDDING_BAGS)
def test_embedding_bag_is_torchs(case):
    from tests.parity.test_recurrent_attention import _compare
    torch = pytest.importorskip("torch")
    options, inputs = EMBEDDING_BAGS[case]
    make = (lambda nn: nn.EmbeddingBag(6, 3, **options).double())
    mine = _compare(torch, make, inputs)
    assert repr(mine) == repr(make(torch.nn))
    theirs = make(torch.nn)
    mine.load_state_dict({k: gt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    saved = []
    for lib, module in ((gt, mine), (torch, theirs)):
        node = module(*[lib.tensor(a) for a in inputs]).grad_fn
        saved.append([node.name()] + [getattr(node, f"_saved_result{k}").tolist()
                                      for k in (1, 2, 3)])
    assert saved[0] == saved[1]  # offset2bag, bag_size, max_indices


def test_embedding_bag_from_pretrained_and_its_errors_are_torchs():
    torch = pytest.importorskip("torch")
    for lib in (gt, torch):
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor([[1.0, 2.0], [3.0, 5.0]]),
                                                  mode="max")
        assert bag(lib.tensor([[0, 1]])).tolist() == [[3.0, 5.0]]
        assert not bag.weight.requires_grad
    w = np.ones((4, 2))
    calls = [lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[0, 1]]), lib.tensor(w),
                                                         lib.tensor([0])),
             lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.tensor(w)),
             lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.tensor(w),
                                                         lib.tensor([0]), mode="median"),
             lambda lib: lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.tensor(w),
                                                         lib.tensor([0]), mode="max",
                                                         scale_grad_by_freq=True),
             lambda lib: lib.nn.functional.embedding_bag(
                 lib.tensor([0, 1]), lib.tensor(w), lib.tensor([0]),
                 per_sample_weights=lib.ones(2, dtype=lib.float64)),
             lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[[0]]]), lib.tensor(w)),
             lambda lib: lib.nn.EmbeddingBag(3, 2, padding_idx=3)]
    for call in calls:
        errors = []
        for lib in (gt, torch):
            with pytest.raises(Exception) as caught:
                call(lib)
            errors.append((type(caught.value),
                           str(caught.value).replace("gradtool.Tensor", "torch.Tensor")))
        assert errors[0] == errors[1]


# ---- AdaptiveLogSoftmaxWithLoss: forward's (output, loss), log_prob and predict, gradients of
# the input and every parameter, repr and state_dict, from the same weights
@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_is_torchs(head_bias):
    from tests.parity.test_recurrent_attention import _compare
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((6, 8))
    target = np.array([0, 4, 9, 2, 7, 1])  # one row in the last cluster: a 0-d row index

    def make(nn):
        return nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0,
                                             head_bias=head_bias).double()
    mine = _compare(torch, make, [x, target], nodes=False)
    assert repr(mine) == repr(make(torch.nn))
    theirs = make(torch.nn)
    mine.load_state_dict({k: gt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    for method in ("log_prob", "predict"):
        np.testing.assert_allclose(getattr(mine, method)(gt.tensor(x)).detach().numpy(),
                                   getattr(theirs, method)(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-12)
    out = mine(gt.tensor(x[0]), gt.tensor(target[0]))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    for lib, module in ((gt, mine), (torch, theirs)):
        with pytest.raises(RuntimeError) as caught:
            module(lib.tensor(x), lib.tensor(target + 1))
        assert "Target values should be in [0, 9], but values in range [1, 10]" in str(
            caught.value)
