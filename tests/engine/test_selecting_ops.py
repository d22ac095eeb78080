"""Behaviour beyond the gradient of the census's Tensor ops (their gradients are sweep cases
in test_op_gradients.py): mode's ties, histograms, the logical ops, movedim, and what
masked_select, put, take, index_copy/index_fill and unfold refuse. The programs run on either
library: tests/parity/test_selecting_ops.py compares them with torch."""
import numpy as np
import pytest

import gradtool as gt

X = np.array([[1.0, 2.0, 2.0, 3.0, 3.0], [5.0, 5.0, 1.0, 1.0, 0.0]])


def _t(lib, a, dtype=None):
    return lib.tensor(np.asarray(a), dtype=dtype)


PROGRAMS = {
    "mode_ties": lambda lib: list(lib.mode(_t(lib, X), 1)),
    "mode_default_dim": lambda lib: list(_t(lib, X).mode()),
    "mode_dim0_keepdim": lambda lib: list(_t(lib, X).mode(0, keepdim=True)),
    "mode_int": lambda lib: list(_t(lib, [[3, 1, 3, 1, 2]]).mode(1)),
    "histc": lambda lib: [lib.histc(_t(lib, X, lib.float32), bins=4, min=0, max=4)],
    "histc_data_range": lambda lib: [_t(lib, X).histc(bins=3)],
    "histogram_bins": lambda lib: list(_t(lib, X).histogram(3)),
    "histogram_range_weight": lambda lib: list(lib.histogram(
        _t(lib, X), 2, range=(0.0, 4.0), weight=_t(lib, np.ones_like(X) * 0.5))),
    "histogram_edges": lambda lib: list(_t(lib, X).histogram(_t(lib, [0.0, 1.5, 6.0]))),
    "logical": lambda lib: [f(_t(lib, [0.0, 1.0, 2.0, 0.0]), _t(lib, [1, 0, 3, 0]))
                            for f in (lib.logical_or, lib.logical_and, lib.logical_xor)],
    "logical_methods": lambda lib: [_t(lib, [True, False]).logical_or(_t(lib, [False, False])),
                                    _t(lib, [1, 2]).logical_and(_t(lib, [0, 1]))],
    "movedim": lambda lib: [lib.zeros(2, 3, 4, 5).movedim(1, -1).shape,
                            lib.movedim(lib.zeros(2, 3, 4), (0, 2), (1, 0)).shape,
                            lib.zeros(2, 3, 4).moveaxis(-1, 0).shape],
    "movedim_values": lambda lib: [lib.arange(24).view(2, 3, 4).movedim(0, 2)],
    "masked_select_values": lambda lib: [lib.masked_select(_t(lib, X), _t(lib, X) > 2)],
    "put_values": lambda lib: [_t(lib, X).put(_t(lib, [0, -1]), _t(lib, [9.0, 8.0])),
                               _t(lib, X).put_(_t(lib, [1, 1]), _t(lib, [1.0, 2.0]), True)],
    "take_values": lambda lib: [lib.take(_t(lib, X), _t(lib, [[0, 9], [-2, 3]]))],
    "index_copy_fill": lambda lib: [
        _t(lib, X).index_copy(1, _t(lib, [4, 0]), _t(lib, [[7.0, 8.0], [9.0, 6.0]])),
        _t(lib, X).index_fill(0, _t(lib, [1]), -1.0),
        _t(lib, X).index_fill_(1, _t(lib, [0, 3]), _t(lib, 2.5))],
    "unfold_values": lambda lib: [lib.arange(8.0).unfold(0, 3, 2),
                                  _t(lib, X).unfold(1, 2, 3), lib.tensor(5.0).unfold(0, 1, 1)],
    "unfold_is_a_view": lambda lib: (lambda x: (x.unfold(0, 2, 1)._base is x
                                                if hasattr(x.unfold(0, 2, 1), "_base") else
                                                x.unfold(0, 2, 1)._is_view()))(lib.arange(4.0)),
    "logit_values": lambda lib: [_t(lib, [0.0, 0.25, 0.5, 1.0, 1.5]).logit(),
                                 lib.logit(_t(lib, [0.0, 0.1, 0.95]), eps=0.2)],
    "quantiles": lambda lib: [_t(lib, X).quantile(0.3), _t(lib, X).quantile(
        _t(lib, [0.1, 0.5, 1.0]), dim=1, keepdim=True), _t(lib, X).quantile(0.4, 0),
        _t(lib, X).quantile(0.35, 1, interpolation="lower"),
        _t(lib, X).quantile(0.35, 1, interpolation="higher"),
        _t(lib, X).quantile(0.35, 1, interpolation="midpoint"),
        _t(lib, X).quantile(0.35, 1, interpolation="nearest"),
        _t(lib, [[1.0, np.nan, 3.0], [2.0, 4.0, 0.5]]).quantile(0.5, 1),
        lib.nanquantile(_t(lib, [[1.0, np.nan, 3.0], [np.nan, np.nan, 1.0]]), 0.25, dim=1),
        _t(lib, [[np.nan, np.nan]]).nanquantile(0.5, 1)],
    "cov": lambda lib: [lib.cov(_t(lib, X)), _t(lib, X[0]).cov(), lib.cov(
        _t(lib, X), correction=0), lib.cov(_t(lib, X), fweights=_t(lib, [1, 2, 1, 3, 1]),
                                          aweights=_t(lib, [0.5, 1.0, 2.0, 1.0, 0.2]))],
    "distances": lambda lib: [lib.cdist(_t(lib, X), _t(lib, X[::-1].copy() + 1), p) for p in (
        0.0, 1.0, 2.0, 3.5, float("inf"))] + [lib.dist(_t(lib, X), _t(lib, X[0]), 3.0)],
    "cross_rot90": lambda lib: [lib.cross(_t(lib, X[:, :3]), _t(lib, X[::-1, 1:4].copy()), dim=1),
                                lib.rot90(_t(lib, X), 2), _t(lib, X).rot90(-1, (1, 0))],
    "composites": lambda lib: [
        lib.cosine_similarity(_t(lib, X), _t(lib, X[::-1].copy())),
        lib.cosine_similarity(_t(lib, X), _t(lib, X[:1]), dim=0),
        lib.trapezoid(_t(lib, X)), lib.trapezoid(_t(lib, X), dx=0.5, dim=0),
        lib.trapezoid(_t(lib, X), _t(lib, [0.0, 1.0, 3.0, 3.5, 5.0])),
        lib.cartesian_prod(_t(lib, [1, 2]), _t(lib, [3, 4, 5])),
        lib.isin(_t(lib, X), _t(lib, [1.0, 5.0])),
        lib.isin(_t(lib, [1, 2, 3]), _t(lib, [2]), invert=True),
        lib.fill(_t(lib, X), 0.5), lib.linalg.vecdot(_t(lib, X), _t(lib, X[::-1].copy())),
        lib.embedding(_t(lib, X.T.copy()), _t(lib, [[0, 4], [2, 2]])),
        lib.floor_divide(_t(lib, [5, -5]), 2), lib.floor_divide(_t(lib, X), 2.0)],
    "nansum_nanmean": lambda lib: [_t(lib, [[1.0, np.nan], [2.0, 3.0]]).nansum(),
                                   lib.nanmean(_t(lib, [[1.0, np.nan], [2.0, 3.0]]), 1),
                                   _t(lib, [[np.nan, np.nan]]).nanmean(1)],
}
ERRORS = {
    "masked_select_float_mask": lambda lib: _t(lib, X).masked_select(_t(lib, X)),
    "put_out_of_range": lambda lib: _t(lib, X).put(_t(lib, [10]), _t(lib, [1.0])),
    "put_sizes": lambda lib: _t(lib, X).put(_t(lib, [1, 2]), _t(lib, [1.0])),
    "take_out_of_range": lambda lib: _t(lib, X).take(_t(lib, [-11])),
    "take_int_index": lambda lib: _t(lib, X).take(_t(lib, [1], lib.int32)),
    "unfold_too_big": lambda lib: _t(lib, X).unfold(1, 6, 1),
    "unfold_zero_step": lambda lib: _t(lib, X).unfold(1, 2, 0),
    "index_fill_int_index": lambda lib: _t(lib, X).index_fill(1, _t(lib, [0], lib.int32), 0.0),
    "index_copy_count": lambda lib: _t(lib, X).index_copy(1, _t(lib, [0, 1]),
                                                          _t(lib, np.ones((2, 3)))),
    "movedim_lengths": lambda lib: lib.zeros(2, 3).movedim((0, 1), (1,)),
    "histc_int": lambda lib: _t(lib, [1, 2]).histc(),
    "nanmean_int": lambda lib: _t(lib, [1, 2]).nanmean(),
    "cdist_one_dim": lambda lib: lib.cdist(_t(lib, [1.0]), _t(lib, [[1.0]])),
    "cross_length": lambda lib: lib.linalg.cross(_t(lib, X), _t(lib, X)),
    "rot90_same_dims": lambda lib: _t(lib, X).rot90(1, (0, 0)),
    "quantile_out_of_range": lambda lib: _t(lib, X).quantile(1.5),
    "quantile_int": lambda lib: _t(lib, [1, 2]).quantile(0.5),
}


def _arrays(out):
    return [np.asarray(o.numpy()) if hasattr(o, "numpy") else o for o in out]


def test_mode_takes_the_least_of_the_most_frequent_at_its_last_index():
    values, indices = PROGRAMS["mode_ties"](gt)
    np.testing.assert_array_equal(values.numpy(), [2.0, 1.0])
    np.testing.assert_array_equal(indices.numpy(), [2, 3])
    assert indices.dtype is gt.int64


def test_histograms_count_as_numpy_does():
    np.testing.assert_array_equal(PROGRAMS["histc"](gt)[0].numpy(), [1, 3, 2, 2])
    hist, edges = PROGRAMS["histogram_bins"](gt)
    np.testing.assert_array_equal(hist.numpy(), np.histogram(X, 3)[0])
    np.testing.assert_allclose(edges.numpy(), np.histogram(X, 3)[1])
    assert not gt.histc(gt.tensor(X, requires_grad=True)).requires_grad


def test_logical_ops_give_bools():
    out = PROGRAMS["logical"](gt)
    assert all(o.dtype is gt.bool for o in out)
    np.testing.assert_array_equal(out[0].numpy(), [True, True, True, False])
    np.testing.assert_array_equal(out[2].numpy(), [True, True, False, False])


def test_movedim_and_unfold_shapes():
    assert [tuple(s) for s in PROGRAMS["movedim"](gt)] == [(2, 4, 5, 3), (4, 2, 3), (4, 2, 3)]
    np.testing.assert_array_equal(PROGRAMS["unfold_values"](gt)[0].numpy(),
                                  [[0, 1, 2], [2, 3, 4], [4, 5, 6]])


def test_an_unfold_is_a_view_writes_show_through():
    x = gt.arange(4.0)
    windows = x.unfold(0, 2, 2)
    x[1] = 10.0
    assert windows[0, 1].item() == 10.0


@pytest.mark.parametrize("name", ERRORS)
def test_refusals(name):
    with pytest.raises((RuntimeError, IndexError, NotImplementedError, ValueError)):
        ERRORS[name](gt)


# composites of the engine's ops: gradients (first and second order) against central
# differences here, against torch's in tests/parity/test_selecting_ops.py
GRADIENTS = {
    "cosine_similarity": (lambda lib, a, b: lib.cosine_similarity(a, b, dim=1), [(3, 4), (3, 4)]),
    "quantile": (lambda lib, a: a.quantile(lib.tensor([0.3, 0.8], dtype=a.dtype), dim=1),
                 [(3, 5)]),
    "nanquantile": (lambda lib, a: lib.nanquantile(a, 0.4), [(2, 5)]),
    "cov": (lambda lib, a: lib.cov(a), [(3, 5)]),
    "cov_weighted": (lambda lib, a: a.cov(fweights=lib.tensor([1, 2, 1, 1, 3]),
                                         aweights=lib.tensor([0.5, 1.0, 1.0, 2.0, 0.3],
                                                             dtype=a.dtype)), [(2, 5)]),
    "trapezoid": (lambda lib, a, x: lib.trapezoid(a, x), [(3, 5), (5,)]),
    "trapezoid_dx": (lambda lib, a: lib.trapezoid(a, dx=0.3, dim=0), [(3, 5)]),
    "vecdot": (lambda lib, a, b: lib.linalg.vecdot(a, b), [(3, 4), (4,)]),
    "cartesian_prod": (lambda lib, a, b: lib.cartesian_prod(a, b), [(2,), (3,)]),
}


@pytest.mark.parametrize("name", GRADIENTS)
def test_composites_have_the_gradients_of_central_differences(name):
    from gradcheck_util import check_grads
    fn, shapes = GRADIENTS[name]
    rng = np.random.default_rng(7)
    inputs = [gt.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    check_grads(lambda *xs: fn(gt, *xs), inputs, order=2)
