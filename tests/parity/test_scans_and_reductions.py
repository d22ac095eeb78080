"""torch's scans and reductions beyond sums (cummax, cummin, logcumsumexp, aminmax,
nanmedian) against torch itself: named tuples, indices at ties and NaNs, integer and bool
inputs, float32 values and gradients (the sweep compares float64), and torch's errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradtool as gt  # noqa: E402
from tests.parity.test_shape_ops import compare, refuses_as_torch  # noqa: E402

pytestmark = pytest.mark.parity

NAN = np.nan
TIES_AND_NANS = np.array([[1.0, 3.0, 3.0, NAN, 0.0], [2.0, 1.0, 2.0, 5.0, 5.0]])
INTS = np.array([[3, 1, 3, 0], [2, 2, 7, -1]])
BOOLS = np.array([True, False, True, False])
F32 = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


def _same_named_tuple(mine, theirs):
    assert type(mine).__name__ == type(theirs).__name__.rpartition(".")[2]
    assert mine._fields == tuple(theirs._fields) if hasattr(theirs, "_fields") else True


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("x", [TIES_AND_NANS, INTS, BOOLS, F32, np.array(2.5)],
                         ids=["ties_and_nans", "ints", "bools", "float32", "0d"])
def test_cummax_cummin_values_indices_and_gradients_as_torch(name, x):
    dim = 0 if x.ndim < 2 else -1
    compare(lambda t, a: tuple(getattr(t, name)(a, dim)), x)
    _same_named_tuple(getattr(gt, name)(gt.tensor(x), dim), getattr(torch, name)(
        torch.tensor(x), dim))


@pytest.mark.parametrize("x", [F32, F32.astype(np.float64) * 300, np.array([-np.inf, -np.inf, 1])],
                         ids=["float32", "large", "minus_inf"])
def test_logcumsumexp_as_torch(x):
    compare(lambda t, a: t.logcumsumexp(a, 0), x, rtol=2e-7)


def test_logcumsumexp_refuses_integers_as_torch():
    refuses_as_torch(lambda t, a: t.logcumsumexp(a, 0), INTS)


@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"dim": 0, "keepdim": True},
                                    {"keepdim": True}])
@pytest.mark.parametrize("x", [TIES_AND_NANS, INTS, F32, BOOLS.reshape(2, 2)],
                         ids=["ties_and_nans", "ints", "float32", "bools"])
def test_aminmax_as_torch(x, kwargs):
    compare(lambda t, a: tuple(t.aminmax(a, **kwargs)), x)
    _same_named_tuple(gt.aminmax(gt.tensor(x), **kwargs), torch.aminmax(torch.tensor(x),
                                                                        **kwargs))


def test_aminmax_refuses_an_empty_dimension_as_torch():
    refuses_as_torch(lambda t, a: t.aminmax(a), np.zeros((0, 3)))
    refuses_as_torch(lambda t, a: t.aminmax(a, dim=0), np.zeros((0, 3)))


@pytest.mark.parametrize("x", [TIES_AND_NANS, np.array([[NAN, NAN], [NAN, 2.0]]), INTS, F32],
                         ids=["ties_and_nans", "all_nan_row", "ints", "float32"])
def test_nanmedian_as_torch(x):
    compare(lambda t, a: t.nanmedian(a), x)
    compare(lambda t, a: tuple(a.nanmedian(1)), x)
    compare(lambda t, a: tuple(t.nanmedian(a, 0, keepdim=True)), x)
    _same_named_tuple(gt.nanmedian(gt.tensor(x), 1), torch.nanmedian(torch.tensor(x), 1))


# ---- integer results: bincount, unique_consecutive, searchsorted, bucketize
COUNTED = np.array([1, 3, 1, 0, 5])
SORTED = np.array([1.0, 3.0, 3.0, 5.0, 7.0])
RUNS = np.array([1, 1, 2, 2, 3, 1, 1, 2])

INTEGER_RESULTS = {
    "bincount": (lambda t, a: t.bincount(a), COUNTED),
    "bincount_weights_minlength": (lambda t, a, w: a.bincount(w, minlength=8), COUNTED,
                                   np.array([0.5, 1.0, 1.0, 2.0, 3.0])),
    "bincount_float32_weights": (lambda t, a, w: t.bincount(a, w), COUNTED,
                                 np.arange(5, dtype=np.float32)),
    "bincount_int_weights": (lambda t, a, w: t.bincount(a, w), COUNTED, np.arange(5)),
    "bincount_int32_empty": (lambda t, a: t.bincount(a.int()[:0]), COUNTED),
    "unique_consecutive": (lambda t, a: t.unique_consecutive(a), RUNS),
    "unique_consecutive_inverse_counts": (
        lambda t, a: t.unique_consecutive(a, return_inverse=True, return_counts=True), RUNS),
    "unique_consecutive_2d_flat": (lambda t, a: a.reshape(2, 4).unique_consecutive(
        return_inverse=True), RUNS),
    "unique_consecutive_dim0": (lambda t, a: t.unique_consecutive(
        a, return_inverse=True, return_counts=True, dim=0), np.array([[1, 1], [1, 1], [2, 3]])),
    "unique_consecutive_dim1": (lambda t, a: a.unique_consecutive(return_counts=True, dim=1),
                                np.array([[1, 1, 2], [1, 1, 3]])),
    "unique_consecutive_empty": (lambda t, a: t.unique_consecutive(
        a[:0], return_inverse=True, return_counts=True), SORTED),
    "searchsorted": (lambda t, s, v: t.searchsorted(s, v), SORTED,
                     np.array([3.0, 6.0, 9.0, 0.0])),
    "searchsorted_right_int32": (lambda t, s, v: t.searchsorted(s, v, right=True,
                                                               out_int32=True), SORTED, SORTED),
    "searchsorted_side": (lambda t, s, v: t.searchsorted(s, v, side="right"), SORTED, SORTED),
    "searchsorted_number": (lambda t, s: t.searchsorted(s, 3.0), SORTED),
    "searchsorted_batched": (lambda t, s, v: t.searchsorted(s, v),
                             np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]),
                             np.array([[2.0, 0.5], [5.0, 7.0]])),
    "searchsorted_sorter": (lambda t, s, v, o: t.searchsorted(s, v, sorter=o),
                            np.array([5.0, 1.0, 3.0]), np.array([2.0, 4.0]), np.array([1, 2, 0])),
    "searchsorted_int_values": (lambda t, s, v: t.searchsorted(s, v), SORTED, COUNTED),
    "bucketize": (lambda t, v, b: t.bucketize(v, b), np.array([[3.0, 6.0], [9.0, 0.0]]),
                  np.array([1.0, 3.0, 5.0, 7.0])),
    "bucketize_right_int32": (lambda t, v, b: t.bucketize(v, b, right=True, out_int32=True),
                              SORTED, np.array([1.0, 3.0, 5.0, 7.0])),
    "bucketize_number": (lambda t, b: t.bucketize(3.0, b), SORTED),
    # scatter_reduce of integers (mean rounds down, as torch's); its float gradients are sweep
    # cases (tests/engine/test_op_gradients.py)
    "scatter_reduce_int_mean": (lambda t, x, s: t.scatter_reduce(
        x, 1, t.tensor([[0, 0], [1, 3]]), s, reduce="mean"),
        np.array([[5, 7, 0, 1], [2, 2, 2, 2]]), np.array([[2, 4], [-3, 8]])),
    "index_reduce_int_mean": (lambda t, x, s: x.index_reduce(0, t.tensor([0, 0]), s, "mean"),
                              np.ones((2, 3), np.int64), np.array([[3, 4, 5], [1, 1, 1]])),
    "scatter_reduce_int_amin_exclude_self": (lambda t, x, s: x.scatter_reduce(
        1, t.tensor([[0, 0], [1, 3]]).int(), s, "amin", include_self=False),
        np.arange(8).reshape(2, 4), np.array([[2, 4], [-3, 8]])),
    # (max and min: torch's forward takes amax's and amin's old names)
    "scatter_reduce_int_max": (lambda t, x, s: x.scatter_reduce(
        1, t.tensor([[0, 0], [1, 3]]), s, "max"), np.arange(8).reshape(2, 4),
        np.array([[2, 4], [-3, 8]])),
    "scatter_reduce_int_min_exclude_self": (lambda t, x, s: x.scatter_reduce(
        1, t.tensor([[0, 0], [1, 3]]), s, "min", include_self=False),
        np.arange(8).reshape(2, 4), np.array([[2, 4], [-3, 8]])),
}


@pytest.mark.parametrize("name", INTEGER_RESULTS)
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
def test_integer_results_as_torch(name):
    fn, *arrays = INTEGER_RESULTS[name]
    compare(fn, *arrays, graph=False)


INTEGER_RESULT_ERRORS = {
    "bincount_negative": (lambda t, a: t.bincount(a - 3), COUNTED),
    "bincount_float": (lambda t, a: t.bincount(a), SORTED),
    "bincount_2d": (lambda t, a: t.bincount(a.reshape(1, -1)), COUNTED),
    "bincount_weights_length": (lambda t, a, w: t.bincount(a, w), COUNTED, SORTED[:3]),
    "bincount_negative_minlength": (lambda t, a: t.bincount(a, minlength=-1), COUNTED),
    "searchsorted_bad_side": (lambda t, s: t.searchsorted(s, s, side="middle"), SORTED),
    "searchsorted_opposites": (lambda t, s: t.searchsorted(s, s, right=True, side="left"),
                               SORTED),
    "searchsorted_shapes": (lambda t, s, v: t.searchsorted(s, v), np.ones((2, 3)),
                            np.ones((3, 1))),
    "searchsorted_sorter_size": (lambda t, s, o: t.searchsorted(s, s, sorter=o), SORTED,
                                 np.array([0])),
    "bucketize_2d_boundaries": (lambda t, v, b: t.bucketize(v, b), SORTED, np.ones((2, 2))),
    "index_reduce_sum": (lambda t, x: x.index_reduce(0, t.tensor([0]), x[:1], "sum"), SORTED),
    "index_reduce_index_count": (lambda t, x: x.index_reduce(0, t.tensor([0, 1]), x[:1],
                                                             "prod"), SORTED),
    "scatter_reduce_dtypes": (lambda t, x, s: x.scatter_reduce(0, t.tensor([0]), s, "sum"),
                              SORTED, COUNTED),
}


@pytest.mark.parametrize("name", INTEGER_RESULT_ERRORS)
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
def test_integer_results_refuse_as_torch(name):
    fn, *arrays = INTEGER_RESULT_ERRORS[name]
    refuses_as_torch(fn, *arrays)


@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
def test_index_reduce_in_place_as_torch():
    """(torch warns that index_reduce is in beta once per process, so which call warns
    depends on the tests run before: the engine's warning is tested in
    tests/engine/test_integer_results.py)"""
    results = []
    for lib in (gt, torch):
        x = lib.ones(2, 3)
        x.index_reduce_(0, lib.tensor([1]), x[:1] * 2, "amax")
        results.append(x.tolist())
    assert results[0] == results[1] == [[1, 1, 1], [2, 2, 2]]


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_scatter_reduce_old_names_reduce_forward_and_refuse_backward_as_torch(reduce):
    def run(lib):
        x = lib.tensor([1.0, 5.0, 3.0], requires_grad=True)
        y = (x * 1).scatter_reduce_(0, lib.tensor([0, 0, 2]), lib.tensor([4.0, 2.0, -1.0]),
                                    reduce, include_self=False)
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        return y.tolist(), y.grad_fn.name(), str(error.value)
    assert run(gt) == run(torch)
