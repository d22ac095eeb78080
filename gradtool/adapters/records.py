"""The plain records an engine adapter hands up about a graph: a saved value's description
and the statistics of an array. The snapshot (capture/graph.py) is built from them."""
import dataclasses
import math
import sys
from typing import Optional

import numpy as np


# (slots: one or more per graph node, and no __dict__ each for the GC to scan)
@dataclasses.dataclass(slots=True)
class SavedInfo:
    """One value a node keeps for backward (`_saved_<name>` / `saved_tensors[i]`)."""
    name: str
    is_tensor: bool
    state: str = "live"            # live | freed | packed (saved-tensor hooks hold it) |
    #                                modified (torch refuses to unpack it: changed in place)
    shape: Optional[tuple] = None
    dtype: Optional[str] = None
    is_output: bool = False        # the node's own result (kept without a reference cycle)
    version_saved: Optional[int] = None
    version_now: Optional[int] = None
    modified_at: Optional[tuple] = None  # site of the in-place op that bumped the version
    nbytes: int = 0
    min: Optional[float] = None
    mean: Optional[float] = None
    max: Optional[float] = None
    value: Optional[str] = None    # repr of a non-tensor value (dim, exponent, ...)
    array_id: Optional[int] = None  # the same memory saved twice is counted once

    @property
    def modified(self):
        return self.is_tensor and self.version_now != self.version_saved


def array_stats(array):
    """(min, mean, max) of a numeric array as floats, NaN-aware; Nones when empty."""
    if not array.size or array.dtype.kind not in "fiub":
        return None, None, None
    with np.errstate(all="ignore"):
        values = array.astype(np.float64, copy=False)
        # the ufuncs' reduce: the methods (min, mean) add their own overhead per call
        stats = (float(np.minimum.reduce(values, axis=None)),
                 float(np.add.reduce(values, axis=None)) / values.size,
                 float(np.maximum.reduce(values, axis=None)))
        if any(map(math.isnan, stats)):  # NaNs inside: the stats of the rest (4x slower)
            if np.all(np.isnan(values)):
                return (float("nan"),) * 3
            stats = float(np.nanmin(values)), float(np.nanmean(values)), float(np.nanmax(values))
        return stats


def set_stats(info, array, pending=None):
    """info's (min, mean, max) of `array`: at once, or, given `pending` (a list), when
    fill_stats(pending) computes them with the others'."""
    if pending is None:
        info.min, info.mean, info.max = array_stats(array)
    else:
        pending.append((info, array))


_TOGETHER = 4096  # elements: below, an array's statistics are mostly numpy's cost per call


def fill_stats(pending):
    """Set each (info, array)'s statistics, the numbers array_stats gives: small contiguous
    arrays of one size as the rows of one table, each statistic one reduction along its rows
    (a graph saves thousands of small arrays: three calls per array were most of its
    records' time). A row reduces its elements in the order array_stats does (memory order);
    an array seen twice is reduced once; a row with a NaN goes to array_stats."""
    stats_of = {}  # id(array) -> its stats (the arrays are alive meanwhile: ids are unique)
    by_size = {}  # size -> arrays to reduce together
    for _, array in pending:
        key = id(array)
        if key in stats_of:
            continue
        flags = array.flags
        if 0 < array.size <= _TOGETHER and array.dtype.kind in "fiub" and (
                flags.c_contiguous or flags.f_contiguous):
            stats_of[key] = None
            by_size.setdefault(array.size, []).append(array)
        else:
            stats_of[key] = array_stats(array)
    for size, arrays in by_size.items():
        if len(arrays) == 1:
            stats_of[id(arrays[0])] = array_stats(arrays[0])
            continue
        with np.errstate(all="ignore"):
            table = np.concatenate([a.ravel(order="K") for a in arrays],
                                   dtype=np.float64).reshape(len(arrays), size)
            columns = (np.minimum.reduce(table, axis=1).tolist(),
                       np.add.reduce(table, axis=1).tolist(),
                       np.maximum.reduce(table, axis=1).tolist())
        for array, low, total, high in zip(arrays, *columns):
            nan = low != low or total != total or high != high
            stats_of[id(array)] = array_stats(array) if nan else (low, total / size, high)
    for info, array in pending:
        info.min, info.mean, info.max = stats_of[id(array)]


def short_repr(value, limit=60):
    text = repr(value)
    # interned: the same dims and scalars are saved by thousands of nodes
    return sys.intern(str(text) if len(text) <= limit else text[:limit - 3] + "...")
