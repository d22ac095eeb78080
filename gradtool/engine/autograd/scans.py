"""torch's scans and reductions beyond sums: cummax, cummin, logcumsumexp, aminmax, nanmedian
(rows of the op table), as Tensor methods returning torch's named tuples; torch.<name> for
each is the method (namespace.py)."""
import collections

from .dispatch import call
from .ops import derivatives as table
from .tensor import _dim

CummaxResult = collections.namedtuple("cummax", ["values", "indices"])
CumminResult = collections.namedtuple("cummin", ["values", "indices"])
AminmaxResult = collections.namedtuple("aminmax", ["min", "max"])
NanmedianResult = collections.namedtuple("nanmedian", ["values", "indices"])


class ScanTensorMethods:
    def cummax(self, dim):
        return CummaxResult(*call(table.CUMMAX, (self,), (_dim(dim, self.dim()),)))

    def cummin(self, dim):
        return CumminResult(*call(table.CUMMIN, (self,), (_dim(dim, self.dim()),)))

    def logcumsumexp(self, dim):
        return call(table.LOGCUMSUMEXP, (self,), (_dim(dim, self.dim()),))

    def aminmax(self, *, dim=None, keepdim=False):
        if dim is not None:
            dim = _dim(dim, self.dim())
            if self.dim() and self.shape[dim] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
        elif self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        return AminmaxResult(*call(table.AMINMAX, (self,), (dim, keepdim)))

    def nanmedian(self, dim=None, keepdim=False):
        if dim is None:
            return call(table.NANMEDIAN, (self,))
        return NanmedianResult(*call(table.NANMEDIAN_DIM, (self,),
                                     (_dim(dim, self.dim()), keepdim)))


NAMES = ("cummax", "cummin", "logcumsumexp", "aminmax", "nanmedian")
