"""The plain records the adapters hand up: a saved array's statistics, computed many at once
(records.fill_stats) as the snapshot does, are array_stats' numbers bit for bit."""
import numpy as np
from hypothesis import given, settings, strategies as st

from gradtool.adapters.records import SavedInfo, array_stats, fill_stats

DTYPES = ("float64", "float32", "float16", "int64", "int32", "uint8", "bool", "complex128")
LAYOUTS = ("c", "transposed", "strided", "expanded")


def _array(rng, size, dtype, layout, special):
    """An array of about `size` elements of `dtype`, laid out as `layout`; `special` puts a
    NaN, an inf, or -0.0 at random places."""
    shape = (size,) if size < 4 else (2, size // 2)
    values = rng.standard_normal(shape) * 10.0 ** float(rng.integers(-30, 30))
    if special and size:
        flat = values.reshape(-1)
        for place in rng.integers(0, flat.size, size=int(rng.integers(1, 3))):
            flat[place] = special
    with np.errstate(all="ignore"):  # (inf and NaN cast to integers: any number will do)
        array = values.astype(dtype) if dtype != "bool" else values > 0
    if layout == "transposed":
        array = array.T
    elif layout == "strided":
        array = np.repeat(array, 2, axis=-1)[..., ::2]
    elif layout == "expanded":
        array = np.broadcast_to(array[..., :1], array.shape)
    return array


def _bits(stats):
    return tuple(repr(x) for x in stats)  # (NaN equals NaN, -0.0 differs from 0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2, 3, 8, 9, 16, 130, 300, 5000]),
                          st.sampled_from(DTYPES), st.sampled_from(LAYOUTS),
                          st.sampled_from([None, np.nan, np.inf, -np.inf, -0.0])),
                min_size=1, max_size=40),
       st.integers(0, 2**32 - 1))
def test_stats_filled_together_are_array_stats_numbers(specs, seed):
    rng = np.random.default_rng(seed)
    arrays = [_array(rng, *spec) for spec in specs]
    arrays += arrays[::3]  # an array saved by several nodes
    pending = [(SavedInfo("_saved_self", True), a) for a in arrays]
    fill_stats(pending)
    for info, array in pending:
        assert _bits((info.min, info.mean, info.max)) == _bits(array_stats(array)), \
            (array.dtype, array.shape, array.strides)


def test_many_small_arrays_of_one_size_are_each_their_own_row():
    """Thousands of arrays of a few sizes, as a model's saved activations: each gets its own
    numbers, not its neighbour's."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 8)) + i for i in range(2000)] + \
             [rng.standard_normal((16, 8)).T * i for i in range(500)]
    pending = [(SavedInfo("_saved_other", True), a) for a in arrays]
    fill_stats(pending)
    for info, array in pending:
        assert (info.min, info.max) == (array.min(), array.max())
        assert info.mean == float(np.add.reduce(array, axis=None)) / array.size
