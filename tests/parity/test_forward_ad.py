"""Forward-mode AD against torch: tangents of ops, activations, losses, scans, sorts,
diagonals, einsum and p-norms (zeros and ties included), forward-over-reverse, in place
through a view, the errors, and the behaviour of the API around them (repr, inference mode,
a custom Function's jvp, gradcheck's fast mode). Tests marked parity, skipped without torch."""
import numpy as np
import pytest

import gradtool as gt
from tests.engine.test_forward_ad import V, X

pytestmark = pytest.mark.parity


def test_forward_ad_matches_torch():
    """The same program through both engines: tangents, forward-over-reverse, the errors."""
    torch = pytest.importorskip("torch")
    results = {}
    for T in (gt, torch):
        fw = T.autograd.forward_ad
        x = T.tensor([[0.5, -1.2, 2.0], [0.3, 0.0, -0.7]], dtype=T.float64, requires_grad=True)
        v = T.tensor([[1.0, 0.5, -2.0], [0.1, 1.0, 0.4]], dtype=T.float64)
        w = T.tensor([[0.2, -0.1], [0.4, 0.3], [-0.5, 0.6]], dtype=T.float64)
        out = []
        with fw.dual_level():
            d = fw.make_dual(x, v)
            for y in (d.relu(), d.abs(), d.softmax(1), d.logsumexp(1), (d @ w).tanh(),
                      d.var(0), d.std(1), d.prod(1), d.norm(), d.amax(1), d.max(1).values,
                      d[:, 1:].t().reshape(-1), T.cat([d, d * 2], 0), d.clamp(-1, 1),
                      T.where(d > 0, d, d * d), d.pow(3), d.sigmoid() / (d.exp() + 1)):
                out.append(fw.unpack_dual(y).tangent.detach().numpy().copy())
            (g,) = T.autograd.grad((d.sin() * d).sum(), x, create_graph=True)
            out.append(fw.unpack_dual(g).tangent.detach().numpy().copy())
            z = d * 1
            z[0].mul_(3)
            out.append(fw.unpack_dual(z).tangent.detach().numpy().copy())
        results[T] = out
    for k, (a, b) in enumerate(zip(results[gt], results[torch])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"case {k}")


def test_forward_ad_of_activations_losses_scans_and_sorts_matches_torch():
    """The rows integ added (one node each, as torch's) carry torch's tangents."""
    torch = pytest.importorskip("torch")
    results = {}
    for T in (gt, torch):
        fw, nnf = T.autograd.forward_ad, T.nn.functional
        x = T.tensor([[0.5, -1.2, 2.0], [0.3, 0.1, -0.7]], dtype=T.float64)
        v = T.tensor([[1.0, 0.5, -2.0], [0.1, 1.0, 0.4]], dtype=T.float64)
        target = T.tensor([[0.2, 0.9, 0.4], [0.6, 0.1, 0.3]], dtype=T.float64)
        labels = T.tensor([2, 0])
        out = []
        with fw.dual_level():
            d = fw.make_dual(x, v)
            p = d.sigmoid()
            for y in (nnf.gelu(d), nnf.gelu(d, approximate="tanh"), nnf.silu(d),
                      nnf.softplus(d), nnf.leaky_relu(d, 0.1), nnf.elu(d), d.erf(),
                      nnf.mse_loss(d, target), nnf.smooth_l1_loss(d, target, beta=0.5),
                      nnf.huber_loss(d, target, reduction="sum"),
                      nnf.binary_cross_entropy(p, target),
                      nnf.binary_cross_entropy_with_logits(d, target, reduction="none"),
                      nnf.cross_entropy(d, labels), nnf.nll_loss(d, labels, reduction="none"),
                      nnf.layer_norm(d, (3,)), T.var_mean(d, 1)[0], T.std_mean(d, 0)[0],
                      d.cumsum(1), d.cumprod(1), d.flip(0), d.roll(1, 1), d.repeat(2, 1),
                      d.triu(), d.sort(1).values, d.topk(2, 1).values,
                      d.index_select(1, T.tensor([2, 0])),
                      T.zeros(2, 4, dtype=T.float64).index_add(1, T.tensor([0, 3, 0]), d)):
                out.append(fw.unpack_dual(y).tangent.detach().numpy().copy())
        results[T] = out
    for k, (a, b) in enumerate(zip(results[gt], results[torch])):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"case {k}")


def test_forward_ad_of_diagonals_and_einsum_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, v, w = rng.standard_normal((3, 3)), rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    results = {}
    for T in (gt, torch):
        fw = T.autograd.forward_ad
        out = []
        with fw.dual_level():
            d = fw.make_dual(T.tensor(x), T.tensor(v))
            for y in (d.diagonal(), d.diagonal(1), T.einsum("ii->i", d), T.einsum("ii->", d),
                      T.einsum("ii,ij->ij", d, T.tensor(w)), T.einsum("ij,jk->ik", d, d)):
                out.append(fw.unpack_dual(y).tangent.numpy().copy())
        results[T] = out
    for k, (a, b) in enumerate(zip(results[gt], results[torch])):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"case {k}")


def test_forward_ad_of_p_norms_matches_torch():
    """Tangents of every order of norm, zeros and ties included (torch's subgradients)."""
    torch = pytest.importorskip("torch")
    x = [[0.0, -2.0, 2.0], [1.0, 0.0, -0.5]]
    v = [[1.0, 0.5, -2.0], [0.1, 1.0, 0.4]]
    results = {}
    for T in (gt, torch):
        fw = T.autograd.forward_ad
        out = []
        with fw.dual_level():
            d = fw.make_dual(T.tensor(x, dtype=T.float64), T.tensor(v, dtype=T.float64))
            for p in (1, 2, 3, 0.5, 1.5, 0, -1, float("inf"), -float("inf")):
                for y in (d.norm(p), d.norm(p, dim=1), T.linalg.vector_norm(d, p, 0, True)):
                    out.append(fw.unpack_dual(y).tangent.numpy().copy())
            for y in (T.linalg.norm(d, 1), T.linalg.norm(d, float("inf")),
                      T.nn.functional.normalize(d, p=1), T.nn.functional.normalize(d, p=3, dim=0)):
                out.append(fw.unpack_dual(y).tangent.numpy().copy())
        results[T] = out
    for k, (a, b) in enumerate(zip(results[gt], results[torch])):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"case {k}")


def test_forward_ad_errors_match_torch():
    torch = pytest.importorskip("torch")
    messages = {}
    for T in (gt, torch):
        fw = T.autograd.forward_ad
        got = []
        for attempt in (lambda: fw.make_dual(T.ones(3, dtype=T.float64),
                                             T.ones(3, dtype=T.float64)),):
            try:
                attempt()
            except Exception as e:  # noqa: BLE001
                got.append((type(e).__name__, str(e)))
        with fw.dual_level():
            for attempt in (lambda: fw.make_dual(T.ones(3, dtype=T.float64),
                                                 T.ones(2, dtype=T.float64)),
                            lambda: fw.make_dual(T.ones(3, dtype=T.float64),
                                                 T.ones(3, dtype=T.int64)),
                            lambda: fw.enter_dual_level()):
                try:
                    attempt()
                except Exception as e:  # noqa: BLE001
                    got.append((type(e).__name__, str(e)))
        messages[T] = got
    # (dtypes print as gradtool.int64 / torch.int64)
    assert [(k, m.replace("gradtool.", "torch.")) for k, m in messages[gt]] == messages[torch]


def _forward_mode_behaviour(lib):
    """What each forward-mode behaviour gives on lib (gradtool or torch), comparable."""
    fw = lib.autograd.forward_ad
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    v = lib.tensor(V, dtype=lib.float64)
    got = {}
    with fw.dual_level():
        dual = fw.make_dual(x.detach(), v)
        got["repr"] = repr(dual).replace("gradtool.", "torch.")
        with lib.inference_mode():
            got["inference"] = fw.unpack_dual(dual * 2).tangent
        dual = fw.make_dual(x, v)
        (g,) = lib.autograd.grad((dual.sin() * dual).sum(), x)
        got["fwd_over_rev"] = fw.unpack_dual(g).tangent.numpy().tolist()

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

        @staticmethod
        def jvp(ctx, a_t):
            return a_t * 2
    with fw.dual_level(), pytest.raises(RuntimeError) as error:
        Two.apply(fw.make_dual(x.detach(), v))
    got["jvp_count"] = str(error.value)

    class Wrong(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, a_t):
            return a_t * 3
    with pytest.raises(RuntimeError) as error:  # (GradcheckError, as torch)
        lib.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True,
                               check_backward_ad=False, fast_mode=True)
    got["fast_mode_head"] = str(error.value).split(",")[0]
    got["fast_mode_note"] = "in fast mode" in str(error.value)
    return got


def test_forward_mode_behaviour_matches_torch():
    torch = pytest.importorskip("torch")
    mine, theirs = _forward_mode_behaviour(gt), _forward_mode_behaviour(torch)
    np.testing.assert_allclose(mine.pop("fwd_over_rev"), theirs.pop("fwd_over_rev"))
    assert mine == theirs
