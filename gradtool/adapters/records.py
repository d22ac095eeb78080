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


def short_repr(value, limit=60):
    text = repr(value)
    # interned: the same dims and scalars are saved by thousands of nodes
    return sys.intern(str(text) if len(text) <= limit else text[:limit - 3] + "...")
