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
