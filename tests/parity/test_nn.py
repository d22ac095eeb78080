"""nn layers against torch: embedding's node, saved values and double backward; BatchNorm,
LayerNorm and a weighted, smoothed cross entropy trained together (loss, input gradient,
running statistics). Tests marked parity, skipped without torch."""
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
