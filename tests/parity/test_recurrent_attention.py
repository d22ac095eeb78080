"""Recurrent layers and attention, as real model files use them, against torch: the same parameter
names and shapes, the same outputs and gradients from the same weights, and the same backward
graph node for node (the gates split by unsafe_chunk, UnsafeSplitBackward0, as torch's). Tests
marked parity run the same code on torch, in float64, where torch's CPU LSTM is the composition
too; its float32 LSTM is one oneDNN op per layer and direction (MkldnnRnnLayerBackward0), and so
is gradtool's (the float32 tests below)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradtool as gt

parity = pytest.mark.parity


def _torch():
    return pytest.importorskip("torch")


def _nodes(*outputs):
    """Every backward node under the outputs, depth first through next_functions."""
    out, stack, seen = [], [o.grad_fn for o in reversed(outputs)], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:  # the node itself: torch's wrappers die, ids repeat
            continue
        seen.add(fn)
        name = fn.name().removeprefix("torch::autograd::")
        out.append(name)
        stack.extend(f for f, _ in reversed(fn.next_functions))
    return out


def _same_module(torch, make):
    """The module made on both engines, gradtool's holding torch's weights."""
    theirs = make(torch.nn)
    mine = make(gt.nn)
    state = {k: gt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in state.items()]
    mine.load_state_dict(state)
    return mine, theirs


def _flat(outputs):
    if isinstance(outputs, (tuple, list)):
        return [t for o in outputs for t in _flat(o)]
    return [] if outputs is None else [outputs]


def _compare(torch, make, inputs, call=lambda m, *xs: m(*xs), rtol=1e-10, nodes=True,
             constants=0, atol=1e-12):
    """Outputs, gradients (inputs and parameters, weighted by fixed random cotangents) and
    backward nodes of a module on both engines; the last `constants` inputs (masks) need no
    gradient."""
    mine, theirs = _same_module(torch, make)
    results = []
    for lib, module in ((gt, mine), (torch, theirs)):
        xs = [None if a is None else lib.tensor(a, requires_grad=a.dtype.kind == "f" and
                                                i < len(inputs) - constants)
              for i, a in enumerate(inputs)]
        outs = _flat(call(module, *xs))
        rng = np.random.default_rng(9)
        loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs)
        wrt = [x for x in xs if x is not None and x.requires_grad] + list(module.parameters())
        grads = lib.autograd.grad(loss, wrt, allow_unused=True)
        results.append(([o.detach().numpy() for o in outs],
                        [None if g is None else g.numpy() for g in grads],
                        _nodes(*outs) if nodes else None))
    (mo, mg, mn), (to, tg, tn) = results
    assert len(mo) == len(to)
    for a, b in zip(mo + mg, to + tg):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert mn == tn
    return mine


RNN_CASES = {
    "default": dict(), "two_layers": dict(num_layers=2), "bidirectional": dict(bidirectional=True),
    "batch_first": dict(batch_first=True), "no_bias": dict(bias=False),
    "deep_bidirectional_batch_first": dict(num_layers=2, bidirectional=True, batch_first=True),
}


@parity
@pytest.mark.parametrize("kind, case", [(kind, case) for kind in ("RNN", "GRU", "LSTM")
                                        for case in sorted(RNN_CASES)]
                         + [("RNN_relu", "default"), ("RNN_relu", "bidirectional")])
def test_recurrent_layer_matches_torch(kind, case):
    torch = _torch()
    options = dict(RNN_CASES[case], dtype=torch.float64)
    name, _, nonlinearity = kind.partition("_")

    def make(nn):
        extra = {"nonlinearity": nonlinearity} if nonlinearity else {}
        if nn is gt.nn:
            options["dtype"] = gt.float64
        return getattr(nn, name)(3, 4, **extra, **options)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    _compare(torch, make, [x])


@parity
@pytest.mark.parametrize("case", sorted(RNN_CASES) + ["three_layers", "unbatched_given_state"])
@pytest.mark.parametrize("onednn", [True, False])
def test_float32_lstm_is_torchs_onednn_op_per_layer(case, onednn):
    """In float32 torch's CPU LSTM is oneDNN's: one MkldnnRnnLayerBackward0 per layer and
    direction (the input made contiguous, zero biases without them); with
    torch.backends.mkldnn.enabled = False, the composition. gradtool's graph is torch's either
    way, node for node, with the same values to float32 rounding."""
    torch = _torch()
    options = dict(RNN_CASES.get(case, dict(num_layers=3 if case == "three_layers" else 2)))

    def make(nn):
        return nn.LSTM(3, 4, **options)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    inputs, call = [x], lambda m, x: m(x)
    if case == "unbatched_given_state":  # (L, H_in), states (layers, H)
        inputs = [x[:, 0], *rng.standard_normal((2, 2, 4)).astype(np.float32)]
        call = lambda m, x, h, c: m(x, (h, c))  # noqa: E731
    previous = gt.backends.mkldnn.enabled, torch.backends.mkldnn.enabled
    try:
        gt.backends.mkldnn.enabled = torch.backends.mkldnn.enabled = onednn
        mine = _compare(torch, make, inputs, call=call, rtol=1e-4, atol=1e-6)
        out = call(mine, *(gt.tensor(a, requires_grad=True) for a in inputs))[0]
        assert ("MkldnnRnnLayerBackward0" in _nodes(out)) == onednn
    finally:
        gt.backends.mkldnn.enabled, torch.backends.mkldnn.enabled = previous


@parity
def test_float32_lstm_node_saves_what_torchs_saves():
    """MkldnnRnnLayerBackward0's _saved_* names, and each input, weight, state, argument and
    output it saves, as torch's (the workspace, result3, is each engine's own layout)."""
    torch = _torch()
    mine, theirs = _same_module(torch, lambda nn: nn.LSTM(3, 4, bias=False, batch_first=True))
    rng = np.random.default_rng(3)
    x, h, c = (rng.standard_normal(s).astype(np.float32) for s in ((2, 5, 3), (1, 2, 4), (1, 2, 4)))
    nodes = []
    for lib, module in ((gt, mine), (torch, theirs)):
        state = (lib.tensor(h, requires_grad=True), lib.tensor(c, requires_grad=True))
        out = module(lib.tensor(x, requires_grad=True), state)[0]
        nodes.append(out.grad_fn.next_functions[0][0])
    node, theirs_node = nodes
    assert node.name() == theirs_node.name() == "MkldnnRnnLayerBackward0"
    names = sorted(n for n in dir(theirs_node) if n.startswith("_saved_"))
    assert sorted(n for n in dir(node) if n.startswith("_saved_")) == names
    for name in names:
        a, b = getattr(node, name), getattr(theirs_node, name)
        if name == "_saved_result3":
            continue
        if hasattr(b, "detach"):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=name)
        else:
            assert a == b, name


@parity
def test_float32_lstm_gradients_of_gradients_match_torch():
    """Second order through the oneDNN op: its backward recomputes the steps from the
    inputs when recording (as torch's differentiable backward), so gradients of gradients
    are torch's; forward mode refuses, as torch's does."""
    torch = _torch()
    mine, theirs = _same_module(torch, lambda nn: nn.LSTM(3, 4, num_layers=2))
    x = np.random.default_rng(4).standard_normal((4, 2, 3)).astype(np.float32)
    results = []
    for lib, module in ((gt, mine), (torch, theirs)):
        xt = lib.tensor(x, requires_grad=True)
        out, (h, c) = module(xt)
        assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"
        (g,) = lib.autograd.grad((out.sum() + h.sum() + c.pow(2).sum()), xt, create_graph=True)
        results.append([t.detach().numpy() for t in lib.autograd.grad(
            g.pow(2).sum(), [xt] + list(module.parameters()))])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
    with gt.autograd.forward_ad.dual_level():
        dual = gt.autograd.forward_ad.make_dual(gt.tensor(x), gt.ones(4, 2, 3))
        with pytest.raises(NotImplementedError, match="forward AD with mkldnn_rnn_layer"):
            mine(dual)


def test_float32_lstm_op_agrees_with_the_composition():
    """The oneDNN op's hand-written steps (first order reads its workspace) against the
    same LSTM composed of the engine's ops (torch.backends.mkldnn.enabled = False): outputs
    and every gradient, bidirectional and two layers deep, with given states."""
    gt.manual_seed(0)
    lstm = gt.nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(5)
    x, h, c = (rng.standard_normal(s).astype(np.float32) for s in ((6, 2, 3), (4, 2, 5), (4, 2, 5)))
    results = []
    for onednn in (True, False):
        gt.backends.mkldnn.enabled = onednn
        try:
            inputs = [gt.tensor(a, requires_grad=True) for a in (x, h, c)]
            out, (hn, cn) = lstm(inputs[0], tuple(inputs[1:]))
        finally:
            gt.backends.mkldnn.enabled = True
        assert ("MkldnnRnnLayerBackward0" in _nodes(out)) == onednn
        loss = (out * out).sum() + hn.sum() - cn.sum()
        grads = gt.autograd.grad(loss, inputs + list(lstm.parameters()))
        results.append([t.detach().numpy() for t in [out, hn, cn, *grads]])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@parity
@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_recurrent_layer_with_given_hidden_state_and_unbatched_input(kind):
    torch = _torch()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3))  # unbatched: (L, H_in)
    h = rng.standard_normal((2, 5))  # (layers * directions, H)

    def make(nn):
        return getattr(nn, kind)(3, 5, num_layers=2, dtype=gt.float64 if nn is gt.nn
                                 else torch.float64)
    if kind == "LSTM":
        _compare(torch, make, [x, h, h * 0.5], call=lambda m, x, h, c: m(x, (h, c)))
    else:
        _compare(torch, make, [x, h])


@parity
@pytest.mark.parametrize("kind", ["RNNCell", "GRUCell", "LSTMCell"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given_hidden", [True, False])
def test_recurrent_cell_matches_torch(kind, batched, given_hidden):
    torch = _torch()
    rng = np.random.default_rng(2)
    shape = (3,) if not batched else (2, 3)
    x = rng.standard_normal(shape)
    h = rng.standard_normal(shape[:-1] + (4,))

    def make(nn):
        return getattr(nn, kind)(3, 4, dtype=gt.float64 if nn is gt.nn else torch.float64)
    if not given_hidden:
        _compare(torch, make, [x])
    elif kind == "LSTMCell":
        _compare(torch, make, [x, h, -h], call=lambda m, x, h, c: m(x, (h, c)))
    else:
        _compare(torch, make, [x, h])


@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 4), st.booleans(), st.booleans())
@settings(max_examples=15, deadline=None)
def test_lstm_shapes_follow_torchs_rules(seq, batch, hidden, bidirectional, batch_first):
    lstm = gt.nn.LSTM(2, hidden, num_layers=2, bidirectional=bidirectional,
                      batch_first=batch_first)
    x = gt.randn(*((batch, seq) if batch_first else (seq, batch)), 2)
    out, (h, c) = lstm(x)
    d = 2 if bidirectional else 1
    assert out.shape == (*((batch, seq) if batch_first else (seq, batch)), d * hidden)
    assert h.shape == c.shape == (2 * d, batch, hidden)
    # the last step's output of the top forward layer is its final hidden state
    last = out[:, -1] if batch_first else out[-1]
    np.testing.assert_allclose(last[..., :hidden].detach().numpy(), h[-d].detach().numpy())


def test_recurrent_layers_refuse_bad_input_as_torch():
    lstm = gt.nn.LSTM(3, 4)
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        lstm(gt.zeros(1, 2, 3, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        lstm(gt.zeros(2, 1, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 1, 4\)"):
        lstm(gt.zeros(2, 1, 3), (gt.zeros(1, 2, 4), gt.zeros(1, 1, 4)))
    from gradtool.engine.errors import NotInEngineError
    with pytest.raises(NotInEngineError, match="LSTM\\(proj_size=...\\)"):
        gt.nn.LSTM(3, 4, proj_size=2)


# ---------------------------------- attention ----------------------------------
def _mask(kind, shape):
    rng = np.random.default_rng(4)
    if kind == "bool":
        m = rng.random(shape) > 0.3
        m[..., 0] = True  # no fully masked row
        return m
    if kind == "bool_row_masked":  # torch's _safe_softmax: zeros there, and zero gradients
        m = rng.random(shape) > 0.3
        m[..., 0] = True
        m[1] = False
        return m
    if kind == "float":
        return rng.standard_normal(shape)
    return None


@parity
@pytest.mark.parametrize("mask", [None, "bool", "bool_row_masked", "float", "causal"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_scaled_dot_product_attention_matches_torch(mask, scale):
    torch = _torch()
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 4, 6)))
    m = _mask(mask, (4, 4))
    results = []
    for lib in (gt, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = lib.nn.functional.scaled_dot_product_attention(
            *xs, attn_mask=None if m is None else lib.tensor(m), is_causal=mask == "causal",
            scale=scale)
        grads = lib.autograd.grad(out, xs, lib.tensor(np.cos(np.arange(out.numel())).reshape(
            tuple(out.shape))))
        results.append([out.detach().numpy()] + [g.numpy() for g in grads])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


MHA_CASES = {
    "self": dict(), "batch_first": dict(batch_first=True), "kdim_vdim": dict(kdim=3, vdim=2),
    "no_bias": dict(bias=False),
}


@parity
@pytest.mark.parametrize("case", sorted(MHA_CASES))
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", [False, True])
def test_multihead_attention_matches_torch(case, need_weights, masks):
    """With need_weights (the default) the graph is torch's node for node (a mask added by
    one BaddbmmBackward0, as torch's); without, torch runs a fused
    attention kernel, so only values and gradients are compared."""
    torch = _torch()
    options = MHA_CASES[case]
    rng = np.random.default_rng(5)
    batch_first = options.get("batch_first", False)
    q = rng.standard_normal((2, 4, 6) if batch_first else (4, 2, 6))
    kv_dims = (options.get("kdim", 6), options.get("vdim", 6))
    source = 3
    k = rng.standard_normal((2, source, kv_dims[0]) if batch_first else (source, 2, kv_dims[0]))
    v = rng.standard_normal((2, source, kv_dims[1]) if batch_first else (source, 2, kv_dims[1]))
    attn_mask = rng.random((4, source)) > 0.7 if masks else None
    padding = np.array([[False, False, True], [False, False, False]]) if masks else None

    def make(nn):
        return nn.MultiheadAttention(6, 2, dtype=gt.float64 if nn is gt.nn else _torch().float64,
                                     **options)

    def call(m, q, k, v, attn_mask, padding):
        return m(q, k, v, attn_mask=attn_mask, key_padding_mask=padding,
                 need_weights=need_weights)
    _compare(torch, make, [q, k, v, attn_mask, padding], call=call,
             nodes=need_weights, constants=2)


@parity
def test_self_attention_graph_is_torchs():
    torch = _torch()
    x = np.random.default_rng(6).standard_normal((4, 2, 6))

    def make(nn):
        return nn.MultiheadAttention(6, 3, dtype=gt.float64 if nn is gt.nn else torch.float64)
    _compare(torch, make, [x], call=lambda m, x: m(x, x, x))


@parity
@pytest.mark.parametrize("options", [dict(), dict(norm_first=True, batch_first=True),
                                     dict(activation="gelu")], ids=["post_norm", "pre_norm",
                                                                    "gelu"])
@pytest.mark.parametrize("masked", [False, True])
def test_transformer_encoder_matches_torch(options, masked):
    torch = _torch()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 8))
    mask = np.triu(np.full((4, 4) if options.get("batch_first") else (3, 3), -np.inf), 1) \
        if masked else None

    def make(nn):
        dtype = gt.float64 if nn is gt.nn else torch.float64
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=dtype, **options)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    _compare(torch, make, [x, mask], call=lambda m, x, mask: m(x, mask=mask), nodes=False,
             constants=1)


DECODER_OPTIONS = {"post_norm": dict(), "pre_norm_batch_first": dict(norm_first=True,
                                                                     batch_first=True),
                   "gelu_string": dict(activation="gelu"),
                   "callable_activation": dict(activation=lambda x: x.tanh(), bias=False)}


@parity
@pytest.mark.parametrize("options", DECODER_OPTIONS.values(), ids=DECODER_OPTIONS)
@pytest.mark.parametrize("masks", ["none", "causal", "causal_hint_and_padding"])
def test_transformer_decoder_matches_torch(options, masks):
    """Values and gradients of the target, the memory and every parameter; the target's causal
    mask given, detected, or with key padding masks."""
    torch = _torch()
    rng = np.random.default_rng(8)
    batch_first = options.get("batch_first", False)
    tgt = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    memory = rng.standard_normal((2, 5, 8) if batch_first else (5, 2, 8))
    mask = np.triu(np.full((4, 4), -np.inf), 1) if masks != "none" else None
    tgt_padding = np.array([[False] * 3 + [True], [False] * 4])
    memory_padding = np.array([[False] * 5, [False] * 3 + [True] * 2])
    padded = masks == "causal_hint_and_padding"

    def make(nn):
        dtype = gt.float64 if nn is gt.nn else torch.float64
        layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, dtype=dtype, **options)
        return nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(8, dtype=dtype))

    def call(m, tgt, memory, mask, tgt_padding, memory_padding):
        return m(tgt, memory, tgt_mask=mask, tgt_key_padding_mask=tgt_padding,
                 memory_key_padding_mask=memory_padding, tgt_is_causal=True if padded else None)
    _compare(torch, make, [tgt, memory, mask, tgt_padding if padded else None,
                           memory_padding if padded else None], call=call, constants=3,
             nodes=False)  # (torch's CPU attention here: one fused flash-attention node)


@parity
@pytest.mark.parametrize("options", [dict(), dict(norm_first=True, batch_first=True)],
                         ids=["post_norm", "pre_norm_batch_first"])
def test_transformer_matches_torch_end_to_end(options):
    """nn.Transformer from the same weights: its output, the gradients of source, target and
    all parameters, its repr and state_dict keys (_compare loads torch's)."""
    torch = _torch()
    rng = np.random.default_rng(9)
    src, tgt = rng.standard_normal((5, 2, 8)), rng.standard_normal((4, 2, 8))
    if options.get("batch_first"):
        src, tgt = src.transpose(1, 0, 2), tgt.transpose(1, 0, 2)
    mask = np.triu(np.full((4, 4), -np.inf), 1)

    def make(nn):
        dtype = gt.float64 if nn is gt.nn else torch.float64
        return nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, dtype=dtype, **options)
    mine = _compare(torch, make, [src, tgt, mask], constants=1, nodes=False,
                    call=lambda m, src, tgt, mask: m(src, tgt, tgt_mask=mask))
    one_layer_each = [lib.nn.Transformer(8, 2, 1, 1, 16, **options) for lib in (gt, torch)]
    assert repr(one_layer_each[0]) == repr(one_layer_each[1])  # (one: ModuleList's repr of
    # repeated blocks, "(0-1): 2 x ...", is ModuleList's own concern)
    for lib in (gt, torch):
        with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
            make(lib.nn)(lib.zeros(3, 2, 8, dtype=lib.float64), lib.zeros(3, 2, 6))
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.nn.TransformerDecoderLayer(8, 2, activation="tanh")


@parity
def test_generate_square_subsequent_mask_matches_torch():
    torch = _torch()
    np.testing.assert_array_equal(gt.nn.Transformer.generate_square_subsequent_mask(4).numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())


# ---- packed sequences: nn.utils.rnn's packing and the recurrent layers over a packed batch
def test_packing_and_padding_are_torchs():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.rnn  # noqa: F401
    x = np.random.default_rng(8).standard_normal((3, 4, 2))  # (B, T, *), batch first

    def outcome(call):
        try:
            call()
            return "ok"
        except Exception as exc:  # noqa: BLE001 (the comparison is of the exceptions)
            return (type(exc).__name__, str(exc))
    seen, grads = [], []
    for lib in (gt, torch):
        rnn = lib.nn.utils.rnn
        xt = lib.tensor(x, requires_grad=True)
        packed = rnn.pack_padded_sequence(xt, lib.tensor([2, 4, 1]), batch_first=True,
                                          enforce_sorted=False)
        padded, lengths = rnn.pad_packed_sequence(packed, batch_first=True, padding_value=-1.0,
                                                  total_length=5)
        (padded * padded).sum().backward()
        grads.append(xt.grad.numpy())
        stacked = rnn.pack_sequence([lib.ones(3, 2), lib.ones(2, 2), lib.ones(1, 2)])
        seen.append((type(packed).__name__, packed.data.tolist(), packed.batch_sizes.tolist(),
                     packed.sorted_indices.tolist(), packed.unsorted_indices.tolist(),
                     padded.tolist(), lengths.tolist(), stacked.batch_sizes.tolist(),
                     stacked.sorted_indices,
                     outcome(lambda: rnn.pack_padded_sequence(xt, [2, 4, 1], True)),
                     outcome(lambda: rnn.pack_padded_sequence(xt, [4, 0, 0], True)),
                     outcome(lambda: rnn.pad_packed_sequence(packed, total_length=2))))
    assert seen[0] == seen[1]
    np.testing.assert_allclose(grads[0], grads[1])


@pytest.mark.parametrize("mode, dtype", [("LSTM", "float64"), ("GRU", "float64"),
                                         ("RNN", "float64"), ("LSTM", "float32")])
def test_recurrent_layers_over_a_packed_batch_are_torchs(mode, dtype):
    """Outputs, last hidden states (each sequence's own last step, in the caller's order) and
    the gradients of input, initial state and weights, as torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x, h0 = rng.standard_normal((5, 3, 2)), rng.standard_normal((4, 3, 3))
    results = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        layer = getattr(lib.nn, mode)(2, 3, num_layers=2, bidirectional=True).to(
            getattr(lib, dtype))
        for p in layer.parameters():
            with lib.no_grad():
                p.copy_(lib.tensor(np.cos(np.arange(p.numel()) + p.numel()).reshape(
                    tuple(p.shape))))
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        ht = lib.tensor(h0, dtype=getattr(lib, dtype), requires_grad=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(xt, [3, 5, 2], enforce_sorted=False)
        out, hidden = layer(packed, (ht, ht * 0.5) if mode == "LSTM" else ht)
        h_n = hidden[0] if mode == "LSTM" else hidden
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        (padded.sum() + (h_n * h_n).sum()).backward()
        results.append([padded.detach().numpy(), h_n.detach().numpy(), xt.grad.numpy(),
                        ht.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()])
        assert type(out).__name__ == "PackedSequence"
    tolerance = 1e-5 if dtype == "float32" else 1e-11
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance)
