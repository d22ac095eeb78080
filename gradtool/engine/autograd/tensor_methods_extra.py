"""Tensor methods the census of real files found missing (docs/census.md): torch's aliases
(multiply, less, ...), the older casts (byte, char, short), square, repeat_interleave and
unique, each in terms of the engine's own ops, so their nodes are torch's (square is
PowBackward0, repeat_interleave's are torch's composite); unique records no node (torch's
Unique2Backward0 only refuses a backward)."""
import collections

import numpy as np

from . import creation, dtypes
from .dispatch import call
from .inplace import call_inplace
from .ops import derivatives as table
from .tensor import Tensor, _dim


MedianResult = collections.namedtuple("median", ["values", "indices"])


class MoreTensorMethods:
    def square(self):
        return self.pow(2)

    def square_(self):
        return self.pow_(2)

    def multiply(self, other):
        return self.mul(other)

    def multiply_(self, other):
        return self.mul_(other)

    def subtract(self, other, *, alpha=1):
        return self.sub(other, alpha=alpha)

    def true_divide(self, other):
        return self.div(other)

    def absolute(self):
        return self.abs()

    def less(self, other):
        return self.lt(other)

    def less_equal(self, other):
        return self.le(other)

    def greater(self, other):
        return self.gt(other)

    def greater_equal(self, other):
        return self.ge(other)

    def not_equal(self, other):
        return self.ne(other)

    # the in-place twins of rows (the row's node, as torch's)
    def scatter_add_(self, dim, index, src):
        return call_inplace(table.SCATTER_ADD, (self, index, src), (_dim(dim, self.dim()),))

    def triu_(self, diagonal=0):
        return call_inplace(table.TRIU, (self,), (diagonal,))

    def tril_(self, diagonal=0):
        return call_inplace(table.TRIL, (self,), (diagonal,))

    def lerp(self, end, weight):
        """self + weight * (end - self): weight a number or a tensor."""
        if isinstance(weight, Tensor):
            return call(table.LERP, (self, end, weight))
        return call(table.LERP_SCALAR, (self, end), (weight,))

    def lerp_(self, end, weight):
        if isinstance(weight, Tensor):
            return call_inplace(table.LERP, (self, end, weight))
        return call_inplace(table.LERP_SCALAR, (self, end), (weight,))

    def median(self, dim=None, keepdim=False):
        """The lower of the two middle values: of every element, or along dim as (values,
        indices)."""
        if dim is None:
            return call(table.MEDIAN, (self,))
        return MedianResult(*call(table.MEDIAN_DIM, (self,), (_dim(dim, self.dim()), keepdim)))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """|self - other| <= atol + rtol * |other|, elementwise; no gradient (a comparison)."""
        other = other.detach().numpy() if isinstance(other, Tensor) else other
        return creation.tensor(np.isclose(self.detach().numpy(), other, rtol, atol, equal_nan))

    def byte(self):
        return self.to(dtypes.uint8)

    def char(self):
        return self.to(dtypes.int8)

    def short(self):
        return self.to(dtypes.int16)

    def ndimension(self):
        return self.dim()

    def element_size(self):
        return self._data.dtype.itemsize

    @property
    def itemsize(self):
        return self._data.dtype.itemsize

    @property
    def is_sparse(self):  # the engine's tensors are all dense (strided)
        return False

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Each element (or slice along dim) repeated `repeats` times: a number repeats
        through an expand, as torch (unsqueeze, expand, clone, flatten); one count per
        element picks with index_select, as torch."""
        input = self.reshape(-1) if dim is None else self
        dim = 0 if dim is None else dim % input.dim()
        if not isinstance(repeats, Tensor):
            sizes = list(input.shape)
            sizes.insert(dim + 1, repeats)
            return input.unsqueeze(dim + 1).expand(*sizes).clone().flatten(dim, dim + 1)
        index = np.repeat(np.arange(input.shape[dim]), repeats.detach().numpy())
        return input.index_select(dim, creation.tensor(index, dtype=dtypes.int64))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct values, sorted (torch's CPU unique always sorts), with the inverse
        indices and counts on request; no gradient flows (torch's has none either)."""
        values, inverse, counts = np.unique(self.detach().numpy(), return_inverse=True,
                                            return_counts=True, axis=dim)
        out = [creation.tensor(values, dtype=self.dtype)]
        shape = tuple(self.shape) if dim is None else (self.shape[dim],)
        if return_inverse:
            out.append(creation.tensor(inverse.reshape(shape), dtype=dtypes.int64))
        if return_counts:
            out.append(creation.tensor(counts, dtype=dtypes.int64))
        return out[0] if len(out) == 1 else tuple(out)


class RemovedTensorMethods:
    """Tensor methods torch removed, answering with torch's message of what replaces them."""

    def reinforce(self, reward):
        raise RuntimeError(
            "reinforce() was removed.\nUse torch.distributions instead.\nSee "
            "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
            "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
            "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = "
            "policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
            "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\n"
            "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
            "loss.backward()\n")
