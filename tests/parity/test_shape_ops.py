"""torch's composite shape ops (ravel, unflatten, tensor_split, broadcast_tensors, tensordot,
kron, block_diag, cartesian_prod, combinations, tril/triu_indices, vander, diff, trace)
against torch itself: values, dtypes, gradients for a random cotangent, the nodes recorded,
and the errors for bad arguments."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402

pytestmark = pytest.mark.parity


def _both(arrays, grad=True):
    """The same arrays as gradtool and torch tensors (float ones requiring grad)."""
    mine = [gt.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    theirs = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    return mine, theirs


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare(fn, *arrays, seed=0, graph=True, rtol=1e-14):
    """fn(gt, *inputs) and fn(torch, *inputs): values, dtypes, shapes, and (with `graph`) node
    names and the inputs' gradients for one random cotangent per float output."""
    mine, theirs = _both(arrays, grad=graph)
    ours, torchs = _outputs(fn(gt, *mine)), _outputs(fn(torch, *theirs))
    assert len(ours) == len(torchs)
    rng = np.random.default_rng(seed)
    our_loss, torch_loss = 0, 0
    for o, t in zip(ours, torchs):
        assert str(o.dtype).split(".")[1] == str(t.dtype).split(".")[1]
        assert tuple(o.shape) == tuple(t.shape)
        # (tensordot's mm sums in another order than torch's: a last bit apart)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=rtol)
        assert (o.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:
            assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
            v = rng.standard_normal(tuple(t.shape))
            our_loss = our_loss + (o * gt.tensor(v, dtype=o.dtype)).sum()
            torch_loss = torch_loss + (t * torch.tensor(v, dtype=t.dtype)).sum()
    if isinstance(torch_loss, torch.Tensor):
        our_loss.backward()
        torch_loss.backward()
        for m, t in zip(mine, theirs):
            if t.requires_grad:
                want = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
                got = m.grad.numpy() if m.grad is not None else np.zeros(m.shape)
                np.testing.assert_allclose(got, want, rtol=max(rtol, 1e-12), atol=rtol)


def refuses_as_torch(fn, *arrays):
    mine, theirs = _both(arrays, grad=False)
    with pytest.raises(Exception) as torch_error:
        fn(torch, *theirs)
    with pytest.raises(type(torch_error.value)) as our_error:
        fn(gt, *mine)
    assert str(our_error.value) == str(torch_error.value)


R = np.random.default_rng(0)
X34, X24, V3 = R.standard_normal((3, 4)), R.standard_normal((2, 4)), R.standard_normal(3)
X234 = R.standard_normal((2, 3, 4))
I3 = np.array([3, -1, 4])

CASES = {
    "ravel": (lambda t, x: x.ravel(), X34),
    "ravel_transposed": (lambda t, x: t.ravel(x.t()), X34),
    "unflatten": (lambda t, x: x.unflatten(1, (2, 2)), X34),
    "unflatten_minus_one": (lambda t, x: t.unflatten(x, -1, (2, -1)), X234),
    "tensor_split_sections": (lambda t, x: t.tensor_split(x, 3, dim=1), X34),
    "tensor_split_indices": (lambda t, x: x.tensor_split([1, 5, 2], 1), X34),
    "tensor_split_negative_indices": (lambda t, x: x.tensor_split([-3, -1], 1), X34),
    "tensor_split_tensor_sections": (lambda t, x: x.tensor_split(t.tensor(2)), X34),
    "tensor_split_tensor_indices": (lambda t, x: x.tensor_split(t.tensor([0, 2]), dim=-1), X34),
    "broadcast_tensors": (lambda t, x, y: t.broadcast_tensors(x, y), X34, V3[:1]),
    "broadcast_tensors_list": (lambda t, x, y: t.broadcast_tensors(x[:, None], y), V3, X24[0]),
    "broadcast_shapes": (lambda t, x: t.zeros(t.broadcast_shapes((3, 1), 4, (2, 1, 1))), V3),
    "tensordot_int": (lambda t, x, y: t.tensordot(x, y, 1), X234, X34.T.copy()),
    "tensordot_lists": (lambda t, x, y: t.tensordot(x, y, ([0, 2], [0, 1])), X234, X24),
    "tensordot_zero": (lambda t, x, y: t.tensordot(x, y, 0), V3, X24),
    "kron": (lambda t, x, y: t.kron(x, y), X24, V3),
    "kron_method": (lambda t, x, y: x.kron(y), X34, X24),
    "kron_int_float": (lambda t, x, y: t.kron(x, y), I3, X24),
    "block_diag": (lambda t, x, y, z: t.block_diag(x, y, z), X24, V3, np.array(2.5)),
    "block_diag_int_float": (lambda t, x, y: t.block_diag(x, y), I3, X24),
    "block_diag_none": (lambda t, x: t.block_diag(), V3),
    "cartesian_prod": (lambda t, x, y: t.cartesian_prod(x, y), V3, X24[0]),
    "cartesian_prod_one": (lambda t, x: t.cartesian_prod(x), V3),
    "combinations": (lambda t, x: t.combinations(x), X24[0]),
    "combinations_3_replacement": (lambda t, x: t.combinations(x, 3, True), V3),
    "combinations_r0": (lambda t, x: t.combinations(x, 0), V3),
    "combinations_int": (lambda t, x: t.combinations(x), I3),
    "tril_indices": (lambda t, x: t.tril_indices(3, 4, 1), V3),
    "triu_indices": (lambda t, x: t.triu_indices(4, 3, -1, dtype=t.int32), V3),
    "vander": (lambda t, x: t.vander(x), V3),
    "vander_n_increasing": (lambda t, x: t.vander(x, 5, increasing=True), V3),
    "vander_int": (lambda t, x: t.vander(x, 2), I3),
    "vander_bool": (lambda t, x: t.vander(x > 0), I3),
    "vander_zero_columns": (lambda t, x: t.vander(x, 0), V3),
    "diff": (lambda t, x: t.diff(x), X34),
    "diff_twice_dim0": (lambda t, x: x.diff(2, 0), X234),
    "diff_prepend_append": (lambda t, x, p, a: t.diff(x, dim=1, prepend=p, append=a), X34,
                            X34[:, :2].copy(), X34[:, :1].copy()),
    "diff_number_prepend": (lambda t, x: t.diff(x, prepend=t.tensor([1.5]).expand(3, 1)), X34),
    "diff_beyond_length": (lambda t, x: t.diff(x, 5), X34),
    "diff_bool": (lambda t, x: t.diff(x > 0), I3),
    "diff_int": (lambda t, x: t.diff(x), I3),
    "trace": (lambda t, x: t.trace(x), X34),
    "trace_method": (lambda t, x: x.t().trace(), X24),
    "trace_int": (lambda t, x: t.trace(x.reshape(1, 3)), I3),
}


# torch's vander writes its cumulative products into the ones it read (in place), so its own
# backward refuses ("modified by an inplace operation") for N > 2; the engine's is the
# gradient of the products (tests/engine/test_shape_ops.py): values and dtypes compared here
VALUES_ONLY = {"vander", "vander_n_increasing"}


@pytest.mark.parametrize("name", CASES)
def test_shape_op_matches_torch(name):
    fn, *arrays = CASES[name]
    compare(fn, *arrays, graph=name not in VALUES_ONLY)


def test_torchs_own_vander_backward_refuses():
    """Why vander's gradient is not compared with torch's (VALUES_ONLY)."""
    x = torch.tensor(V3, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.vander(x).sum().backward()


def test_trace_second_order_matches_torch():
    mine, theirs = _both([X34])
    results = []
    for lib, (x,) in ((gt, mine), (torch, theirs)):
        (g,) = lib.autograd.grad((x.trace() * x.sum()), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        results.append(gg.numpy())
    np.testing.assert_allclose(*results, rtol=1e-12)


ERRORS = {
    "unflatten_bad_sizes": (lambda t, x: x.unflatten(1, (3, 2)), X34),
    "unflatten_empty": (lambda t, x: x.unflatten(1, ()), X34),
    "tensor_split_zero": (lambda t, x: t.tensor_split(x, 0), X34),
    "tensor_split_0d": (lambda t, x: t.tensor_split(x.sum(), 2), X34),
    "tensor_split_float_tensor": (lambda t, x: x.tensor_split(t.tensor([1.0])), X34),
    "tensor_split_2d_tensor": (lambda t, x: x.tensor_split(t.tensor([[1]])), X34),
    "broadcast_tensors_mismatch": (lambda t, x, y: t.broadcast_tensors(x, y), X34, V3),
    "tensordot_mismatch": (lambda t, x: t.tensordot(x, x, 1), X34),
    "tensordot_negative": (lambda t, x: t.tensordot(x, x, -1), X34),
    "tensordot_list_lengths": (lambda t, x: t.tensordot(x, x, ([0], [0, 1])), X34),
    "diff_0d": (lambda t, x: t.diff(x.sum()), X34),
    "diff_negative_order": (lambda t, x: t.diff(x, n=-1), X34),
    "diff_prepend_shape": (lambda t, x, p: t.diff(x, dim=0, prepend=p), X34, X24[:, :2].copy()),
    "trace_3d": (lambda t, x: t.trace(x), X234),
    "block_diag_3d": (lambda t, x: t.block_diag(x), X234),
    "cartesian_prod_2d": (lambda t, x: t.cartesian_prod(x), X34),
    "combinations_2d": (lambda t, x: t.combinations(x), X34),
    "combinations_negative": (lambda t, x: t.combinations(x, -1), V3),
    "vander_2d": (lambda t, x: t.vander(x), X34),
    "vander_negative": (lambda t, x: t.vander(x, -1), V3),
    "tril_indices_negative_row": (lambda t, x: t.tril_indices(-1, 4), V3),
    "triu_indices_negative_col": (lambda t, x: t.triu_indices(2, -4), V3),
}


@pytest.mark.parametrize("name", ERRORS)
def test_shape_op_refuses_as_torch(name):
    fn, *arrays = ERRORS[name]
    refuses_as_torch(fn, *arrays)
