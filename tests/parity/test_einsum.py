"""einsum against torch: values and gradients for explicit and implicit outputs, three
operands, ellipses and outer products, and the whole backward graph node for node (names,
`_saved_*` names, diagonals included). Tests marked parity, skipped without torch. The op
sweep's einsum cases (tests/engine/test_op_gradients.py) are compared in test_parity_torch.py;
the equations here are others."""
import numpy as np
import pytest

import gradtool as gt

pytestmark = pytest.mark.parity


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk", ((2, 3), (3, 4))), ("ij,jk,k->i", ((2, 3), (3, 4), (4,))),
    ("bhqd,bhkd->bhqk", ((2, 2, 3, 4), (2, 2, 5, 4))), ("...i,...i->...", ((2, 3, 4), (3, 4))),
    ("ijk->kji", ((2, 3, 4),)), ("i,i", ((3,), (3,))), ("ij,kl->ijkl", ((2, 1), (3, 2)))])
def test_einsum_matches_torch(equation, shapes):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib in (gt, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.einsum(equation, *xs)
        v = lib.tensor(np.random.default_rng(5).standard_normal(tuple(out.shape)))
        grads = lib.autograd.grad(out, xs, v)
        results.append([out.detach().numpy()] + [g.numpy() for g in grads])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def _backward_nodes(fn):
    """Every node under fn, depth first: (name, its _saved_* names)."""
    out, stack = [], [fn]
    while stack:
        fn = stack.pop()
        if fn is not None:
            out.append((fn.name().removeprefix("torch::autograd::"),
                        sorted(a for a in dir(fn) if a.startswith("_saved_"))))
            stack.extend(f for f, _ in reversed(fn.next_functions))
    return out


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", ((2, 3), (3, 4))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
    ("i,i->", ((3,), (3,))), ("ij->ji", ((2, 3),)), ("ii->i", ((3, 3),)), ("ii->", ((3, 3),)),
    ("bii->bi", ((2, 3, 3),)), ("iij,jk->ik", ((3, 3, 2), (2, 4))), ("i,j->ij", ((2,), (3,))),
    ("...ij,jk->...ik", ((2, 3, 4), (4, 2))), ("bn,anm,bm->ba", ((2, 3), (4, 3, 5), (2, 5))),
    ("i...i", ((3, 2, 3),)), ("ij,kl->ijkl", ((2, 1), (3, 2)))])
def test_einsum_records_torchs_backward_nodes(equation, shapes):
    """The whole backward graph: the same nodes in the same order, with the same saved
    names, values and gradients, diagonals included."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib in (gt, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.einsum(equation, *xs)
        grads = lib.autograd.grad(out, xs, lib.ones_like(out))
        results.append((_backward_nodes(out.grad_fn), out.detach().numpy(),
                        [g.numpy() for g in grads]))
    (nodes, out, grads), (torch_nodes, torch_out, torch_grads) = results
    assert nodes == torch_nodes
    np.testing.assert_allclose(out, torch_out, rtol=1e-12)
    for g, tg in zip(grads, torch_grads):
        np.testing.assert_allclose(g, tg, rtol=1e-12)
