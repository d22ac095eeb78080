"""Ops with integer or bool results (bincount, unique_consecutive, searchsorted, bucketize,
gcd, lcm, signbit) against independent Python and numpy over random inputs, and the small
torch-level helpers (torch.random.fork_rng, torch.testing.assert_allclose, Tensor.data_ptr,
the float32 matmul precision setting) on the engine. Their comparison with torch itself is
in tests/parity/test_scans_and_reductions.py and test_settings_and_helpers.py."""
import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
small_ints = st.lists(st.integers(0, 6), max_size=12)


@SETTINGS
@given(values=small_ints, minlength=st.integers(0, 9))
def test_bincount_counts_each_value(values, minlength):
    counts = gt.bincount(gt.tensor(values, dtype=gt.int64), minlength=minlength).tolist()
    assert len(counts) == max(minlength, max(values, default=-1) + 1)
    assert counts == [values.count(k) for k in range(len(counts))]


@SETTINGS
@given(values=small_ints)
def test_unique_consecutive_keeps_each_run_once(values):
    runs = [(k, len(list(group))) for k, group in itertools.groupby(values)]
    out, inverse, counts = gt.unique_consecutive(gt.tensor(values, dtype=gt.int64),
                                                 return_inverse=True, return_counts=True)
    assert out.tolist() == [k for k, _ in runs] and counts.tolist() == [n for _, n in runs]
    assert [out.tolist()[i] for i in inverse.tolist()] == values


@SETTINGS
@given(boundaries=st.lists(st.integers(-5, 5), max_size=8), values=small_ints,
       right=st.booleans())
def test_searchsorted_and_bucketize_insert_after_smaller_values(boundaries, values, right):
    boundaries = sorted(boundaries)
    b, v = gt.tensor(boundaries, dtype=gt.float64), gt.tensor(values, dtype=gt.float64)
    found = gt.searchsorted(b, v, right=right).tolist()
    want = [sum(x <= value if right else x < value for x in boundaries) for value in values]
    assert found == want == gt.bucketize(v, b, right=right).tolist()


@SETTINGS
@given(pairs=st.lists(st.tuples(st.integers(-30, 30), st.integers(-30, 30)), min_size=1,
                      max_size=8))
def test_gcd_and_lcm_as_pythons(pairs):
    a, b = (gt.tensor(list(column), dtype=gt.int64) for column in zip(*pairs))
    assert gt.gcd(a, b).tolist() == [math.gcd(x, y) for x, y in pairs]
    assert gt.lcm(a, b).tolist() == [abs(x * y) // math.gcd(x, y) if x and y else 0
                                     for x, y in pairs]


def test_signbit_tells_negative_zero_and_nan_signs():
    x = gt.tensor([-0.0, 0.0, -1.5, float("inf"), -float("nan")])
    assert gt.signbit(x).tolist() == [True, False, True, False, True]


def test_fork_rng_restores_the_generator():
    gt.manual_seed(5)
    with gt.random.fork_rng():
        inside = gt.rand(3).tolist()
    assert gt.rand(3).tolist() == inside
    with gt.random.fork_rng(enabled=False):
        first = gt.rand(3).tolist()
    assert gt.rand(3).tolist() != first


def test_data_ptr_is_the_base_address_plus_the_offset():
    x = gt.zeros(4, 3, dtype=gt.float32)
    assert x[2, 1].data_ptr() - x.data_ptr() == (2 * 3 + 1) * 4
    assert x.t().data_ptr() == x.data_ptr() and gt.zeros(0).data_ptr() == 0


def test_assert_allclose_warns_and_uses_its_own_tolerances():
    with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated"):
        gt.testing.assert_allclose(gt.tensor([1.0]), [1.0 + 5e-5])  # (float32: rtol 1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(AssertionError, match="Tensor-likes are not close"):
            gt.testing.assert_allclose(gt.tensor([1.0], dtype=gt.float64), [1.0 + 5e-5])


def test_float32_matmul_precision_is_stored():
    saved = gt.get_float32_matmul_precision()
    try:
        gt.set_float32_matmul_precision("high")
        assert gt.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="is not one of"):
            gt.set_float32_matmul_precision("fast")
        assert gt.get_float32_matmul_precision() == "high"
    finally:
        gt.set_float32_matmul_precision(saved)


def test_index_reduce_warns_that_it_is_in_beta_as_torchs():
    x = gt.ones(2, 3)
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta and the API may change"):
        x.index_reduce_(0, gt.tensor([1]), x[:1] * 2, "amax")
    assert x.tolist() == [[1, 1, 1], [2, 2, 2]]
