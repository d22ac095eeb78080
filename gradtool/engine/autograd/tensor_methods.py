"""The Tensor's methods that run ops, and those the table's rows generate: above dispatch,
the table and the engine they call, so that tensor.py (the data model) stands below them all;
attached to the class once, when gradtool.autograd imports this module."""
import collections
import numbers
import operator
import types
import warnings

import numpy as np

from . import creation, dtypes, engine, forward_level, grad_mode, memory
from .device import CPU, check as check_device, parse_to
from . import linalg
from .dispatch import broadcast_mismatch, call, sync_view
from .inplace import check_inplace, call_inplace
from .free_functions import _var_args, maximum, minimum, vector_norm, where
from .indexing import _checked_mask, _getitem, _setitem, check_scatter_gather
from .matmul import matmul
from .node import RemovableHandle
from .ops import derivatives as table
from .ops import generic, kernels
from .printing import tensor_repr
from .tensor import Size, Tensor, _array, _as_tensor, _copy_state, _dim, _dims, _shape, _scalar

_state = grad_mode.state

SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
SvdResult = collections.namedtuple("svd", ["U", "S", "V"])


def _cast(dtype):
    """x.float(), x.long(), ...: x.to(dtype)."""
    def cast(self):
        return self.to(dtype)
    return cast


def _max_or_min(name, elementwise, whole, along_dim):
    """x.max() / x.min(): over every element, along a dim as (values, indices), or, given a
    tensor, elementwise against it (maximum / minimum)."""
    Result = collections.namedtuple(name, ["values", "indices"])

    def reduce(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return elementwise(self, dim)
        if dim is None:
            if self._data.size == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   f"input.numel() == 0. Specify the reduction dim with the "
                                   f"'dim' argument.")
            return call(whole, (self,))
        d = _dim(dim, self._data.ndim)
        _check_reduced_sizes(self, name, (d,), (d,))
        return Result(*call(along_dim, (self,), (d, keepdim)))
    return reduce


def _comparison(name, compare, ordered):
    """x == y, x < y, x & y, ...: numpy's elementwise `compare`, a bool tensor (never
    differentiable); the orderings refuse complex values, as torch (numpy would compare them
    lexicographically)."""
    def method(self, other):
        if ordered:
            for data in (self._data, np.asarray(_array(other))):
                if data.dtype.kind == "c":
                    raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                              f"'{dtypes.LEGACY_TYPE_NAMES[data.dtype.name]}'")
        mine, theirs = self._data, _array(other)
        their_dtype = getattr(theirs, "dtype", None)
        if their_dtype is not mine.dtype and (their_dtype is not None or mine.dtype.kind in "biu"
                                              or isinstance(theirs, complex)) or \
                mine.dtype is dtypes.BFLOAT16:
            # torch compares in the common dtype, numpy in its own: float32 with a 0-d float64
            # tensor in float32, an integer with 0.5 in float32, x > 0.1 in bfloat16
            # (numpy's is torch's for a number of the tensor's kind)
            common = dtypes.result_type(mine, theirs)
            mine, theirs = mine.astype(common), np.asarray(theirs).astype(common)
        return Tensor._wrap(np.asarray(compare(mine, theirs)))
    return method


def _elementwise_no_grad(fn):
    """~x, x.isnan(), ...: numpy's elementwise fn of the values, a tensor outside the graph."""
    def method(self):
        return Tensor._wrap(np.asarray(fn(self._data)))
    return method


def _arg_reduce(reduce):
    """x.argmax() / x.argmin(): int64 indices (no gradient), of every element or along dim."""
    def method(self, dim=None, keepdim=False):
        if self._data.dtype.kind == "c":
            raise RuntimeError(f"{reduce.__name__}(): does not support complex input")
        if dim is None:
            return Tensor._wrap(np.asarray(reduce(self._data)))
        axis = _dim(dim, self._data.ndim)
        return Tensor._wrap(np.asarray(reduce(self._data, axis=axis, keepdims=keepdim)))
    return method


def _triangle(spec):
    """x.triu() / x.tril(): the upper / lower triangle of each matrix (the last two dims)."""
    def triangle(self, diagonal=0):
        if self._data.ndim < 2:
            raise RuntimeError(f"{spec.name}: input tensor must have at least 2 dimensions")
        return call(spec, (self,), (int(diagonal),))
    return triangle


class TensorMethods:
    """Tensor's methods that run ops (attached to Tensor below)."""

    def __init__(self, *args, requires_grad=False, device=None):
        """torch.Tensor(2, 3) (uninitialised) or torch.Tensor(data): float32, as torch."""
        t = creation._finish(creation.legacy(dtypes.DEFAULT_FLOAT, args, device)._data,
                             requires_grad)
        _copy_state(t, self)

    # ---------------- complex numbers ----------------
    @property
    def real(self):
        """A view of the real parts (torch's view_as_real(z)[..., 0]); a real tensor itself."""
        if self._data.dtype.kind != "c":
            return self
        return call(table.VIEW_AS_REAL, (self,)).select(-1, 0)

    @property
    def imag(self):
        if self._data.dtype.kind != "c":
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return call(table.VIEW_AS_REAL, (self,)).select(-1, 1)

    def conj(self):
        """The conjugate (a copy: gradtool has no lazy conjugate bit); a real tensor itself."""
        return self if self._data.dtype.kind != "c" else call(table.CONJ, (self,))

    def angle(self):
        return call(table.ANGLE, (self,))

    def conj_physical(self):
        """The conjugate, a copy; a real tensor itself (as torch)."""
        return self if self._data.dtype.kind != "c" else call(table.CONJ_PHYSICAL, (self,))

    # ---------------- the graph (a stale view's history is regenerated first: ops) ----------------
    device = CPU

    @property
    def requires_grad(self):
        sync_view(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    @property
    def grad_fn(self):
        sync_view(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed; may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            hooks = self._grad_fn._node_hooks().tensor_pre.setdefault(self._output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after backward has accumulated this leaf's .grad (as torch: for
        a step per parameter, e.g. an optimizer that updates as gradients arrive)."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        hooks = engine.post_accumulate_hooks_of(self)
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's .grad (weighted by `gradient`)."""
        engine.backward((self,), None if gradient is None else (gradient,),
                        retain_graph, create_graph, inputs=inputs)

    # ---------------- conversion ----------------
    __repr__ = tensor_repr

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def to(self, *args, **kwargs):
        """to(dtype), to(device, dtype), to(other), with copy=: the device must be the CPU."""
        if len(args) == 1 and not kwargs and isinstance(args[0], (dtypes.dtype, np.dtype)):
            dtype, copy = args[0], False  # the common case, and the formulas'
            fmt = memory.preserve_format
        else:
            fmt = kwargs.pop("memory_format", memory.preserve_format)
            memory.check_format(fmt, self._data.ndim, "to")
            dtype, copy = parse_to(args, kwargs)
        relaid = not memory.has_format(self._data, fmt)
        if dtype is None or dtypes.to_numpy_dtype(dtype) == self._data.dtype:
            if not (copy or relaid):
                return self
            dtype = self.dtype
        out = call(table.TO_COPY, (self,), (dtypes.to_numpy_dtype(dtype),))
        if relaid:  # (a fresh result: laid out as asked, its values the same)
            out._data = memory.laid_out(out._data, fmt)
        return out

    def type(self, dtype=None):
        return self.dtype if dtype is None else self.to(dtype)

    def type_as(self, other):
        return self.to(other.dtype)

    float, double, half = _cast(dtypes.float32), _cast(dtypes.float64), _cast(dtypes.float16)
    long, int, bool = _cast(dtypes.int64), _cast(dtypes.int32), _cast(dtypes.bool_)
    cfloat, cdouble = _cast(dtypes.complex64), _cast(dtypes.complex128)
    bfloat16 = _cast(dtypes.bfloat16)  # (computes in float32 inside, rounds once: dispatch)

    def cuda(self, device=None, non_blocking=False):
        check_device("cuda" if device is None else device)
        return self

    def clone(self, *, memory_format=memory.preserve_format):
        memory.check_format(memory_format, self._data.ndim, "clone")
        if memory_format is memory.preserve_format:
            return call(table.CLONE, (self,))
        return call(table.CLONE, (self,), (memory_format,))

    def contiguous(self, memory_format=memory.contiguous_format):
        memory.check_format(memory_format, self._data.ndim)
        if memory.has_format(self._data, memory_format):
            return self
        if memory_format is memory.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return call(table.CLONE, (self,), (memory_format,))

    # ---------------- arithmetic ----------------
    def __add__(self, other):
        return call(table.ADD, (self, other), (1,))

    __radd__ = __add__

    def add(self, other, *, alpha=1):
        return call(table.ADD, (self, other), (alpha,))

    def __sub__(self, other):
        return call(table.SUB, (self, other), (1,))

    def sub(self, other, *, alpha=1):
        return call(table.SUB, (self, other), (alpha,))

    def __rsub__(self, other):
        return call(table.RSUB, (self,), (other, 1))

    def __mul__(self, other):
        return call(table.MUL, (self, other))

    __rmul__ = __mul__
    mul = __mul__

    def __truediv__(self, other):
        return call(table.DIV, (self, other))

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return call(table.DIV, (self, other))
        return call(table.DIV_ROUNDED, (self, other), (_rounding_mode(rounding_mode),))

    divide = div

    def __rtruediv__(self, other):  # as torch: other * (1 / self)
        return call(table.MUL, (self.reciprocal(), other))

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor):
            return call(table.POW_TENSOR, (self, exponent))
        return call(table.POW, (self,), (exponent,))

    pow = __pow__

    def __rpow__(self, base):
        return call(table.POW_SCALAR_BASE, (self,), (base,))

    def __neg__(self):
        return call(table.NEG, (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return call(table.ABS, (self,))

    __matmul__ = matmul

    def __rmatmul__(self, other):
        return matmul(other, self)

    matmul = __matmul__

    def mm(self, mat2):
        _check_dims("mm", 2, self=self, mat2=mat2)
        return matmul(self, mat2)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """beta * self + alpha * (mat1 @ mat2), one AddmmBackward0 node (Linear's)."""
        _check_addmm(self, mat1, mat2, in_place=False)
        return call(table.ADDMM, (self, mat1, mat2), (beta, alpha))

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        _check_addmm(self, mat1, mat2, in_place=True)
        return call_inplace(table.ADDMM, (self, mat1, mat2), (beta, alpha))

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * (batch1 @ batch2) over a batch, one BaddbmmBackward0 node."""
        _check_dims("baddbmm", 3, batch1=batch1, batch2=batch2)
        b, n, m = batch1._data.shape
        if batch2._data.shape[:2] != (b, m):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{b}, {m}] but got: {list(batch2._data.shape[:2])}.")
        _check_expands_to(self, (b, n, batch2._data.shape[2]))
        return call(table.BADDBMM, (self, batch1, batch2), (beta, alpha))

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        _check_in_place_size(self, (batch1.shape[0], batch1.shape[1], batch2.shape[-1]))
        return call_inplace(table.BADDBMM, (self, batch1, batch2), (beta, alpha))

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        """beta * self + alpha * (mat @ vec), one AddmvBackward0 node."""
        _check_addmv(self, mat, vec)
        return call(table.ADDMV, (self, mat, vec), (beta, alpha))

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        _check_addmv(self, mat, vec)
        _check_in_place_size(self, (mat.shape[0],))
        return call_inplace(table.ADDMV, (self, mat, vec), (beta, alpha))

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        """beta * self + alpha * (the outer product of vec1 and vec2), one AddrBackward0."""
        _check_addr(self, vec1, vec2)
        return call(table.ADDR, (self, vec1, vec2), (beta, alpha))

    def addr_(self, vec1, vec2, *, beta=1, alpha=1):
        _check_addr(self, vec1, vec2)
        _check_in_place_size(self, (vec1.shape[0], vec2.shape[0]))
        return call_inplace(table.ADDR, (self, vec1, vec2), (beta, alpha))

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * (the sum of batch1[i] @ batch2[i]), one AddbmmBackward0."""
        _check_addbmm(self, batch1, batch2)
        return call(table.ADDBMM, (self, batch1, batch2), (beta, alpha))

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        _check_addbmm(self, batch1, batch2)
        _check_in_place_size(self, (batch1.shape[1], batch2.shape[2]))
        return call_inplace(table.ADDBMM, (self, batch1, batch2), (beta, alpha))

    def bmm(self, mat2):
        _check_dims("bmm", 3, batch1=self, batch2=mat2)
        want = [self._data.shape[0], self._data.shape[2]]
        if list(mat2._data.shape[:2]) != want:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"{want} but got: {list(mat2._data.shape[:2])}.")
        return call(table.BMM, (self, mat2))

    def mv(self, vec):
        _check_dims("mv", 2, self=self)
        _check_dims("mv", 1, vec=vec)
        rows, cols = self._data.shape
        if vec._data.shape[0] != cols:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{cols}), vec "
                               f"({vec._data.shape[0]})")
        return matmul(self, vec)

    def dot(self, other):
        _check_dims("dot", 1, self=self, tensor=other)
        return matmul(self, other)

    # ---------------- comparisons and logic (never differentiable) ----------------
    __eq__ = _comparison("eq", operator.eq, ordered=False)
    __ne__ = _comparison("ne", operator.ne, ordered=False)
    __lt__ = _comparison("lt", operator.lt, ordered=True)
    __le__ = _comparison("le", operator.le, ordered=True)
    __gt__ = _comparison("gt", operator.gt, ordered=True)
    __ge__ = _comparison("ge", operator.ge, ordered=True)
    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__
    __and__ = _comparison("and", operator.and_, ordered=False)
    __or__ = _comparison("or", operator.or_, ordered=False)
    __xor__ = _comparison("xor", operator.xor, ordered=False)

    __invert__ = _elementwise_no_grad(np.invert)  # bitwise on integers, logical on bools
    logical_not = _elementwise_no_grad(np.logical_not)  # bools of any dtype, as torch
    isnan, isinf, isfinite = map(_elementwise_no_grad, (np.isnan, np.isinf, np.isfinite))

    def all(self, dim=None, keepdim=False):
        axis = None if dim is None else _dims(dim, self._data.ndim)
        return Tensor._wrap(np.asarray(np.all(self._data, axis=axis, keepdims=keepdim)))

    def any(self, dim=None, keepdim=False):
        axis = None if dim is None else _dims(dim, self._data.ndim)
        return Tensor._wrap(np.asarray(np.any(self._data, axis=axis, keepdims=keepdim)))

    argmax, argmin = _arg_reduce(np.argmax), _arg_reduce(np.argmin)

    # ---------------- elementwise math (one-input ops: generated from the table) -----------
    def clamp(self, min=None, max=None):
        return _clamp(call, self, min, max)

    clip = clamp

    def clamp_min(self, min):
        if isinstance(min, Tensor):
            return call(table.CLAMP_MIN_TENSOR, (self, min))
        return call(table.CLAMP_MIN, (self,), (min, None))

    def clamp_max(self, max):
        if isinstance(max, Tensor):
            return call(table.CLAMP_MAX_TENSOR, (self, max))
        return call(table.CLAMP_MAX, (self,), (None, max))

    maximum, minimum = maximum, minimum  # gradtool.maximum(input, other), as methods

    def where(self, condition, other):
        return where(condition, self, other)

    def round(self, *, decimals=0):
        if decimals:
            return call(table.ROUND_DECIMALS, (self,), (int(decimals),))
        return call(table.ROUND, (self,))

    def round_(self, *, decimals=0):
        if decimals:
            return call_inplace(table.ROUND_DECIMALS, (self,), (int(decimals),))
        return call_inplace(table.ROUND, (self,))

    def remainder(self, other):
        """Python's %: the sign of the divisor."""
        if isinstance(other, Tensor):
            return call(table.REMAINDER, (self, other))
        return call(table.REMAINDER_SCALAR, (self,), (other,))

    __mod__ = remainder

    def __rmod__(self, other):
        return call(table.REMAINDER, (_as_tensor(other), self))

    def fmod(self, other):
        """C's fmod: the sign of the dividend."""
        if isinstance(other, Tensor):
            return call(table.FMOD, (self, other))
        return call(table.FMOD_SCALAR, (self,), (other,))

    def floor_divide(self, other):
        """self // other, rounded toward negative infinity; recorded as torch's: a node whose
        backward raises (floor_divide has no derivative)."""
        from .out_argument import recorded_not_implemented
        out = Tensor._wrap(np.asarray(np.floor_divide(self._data, _array(other))))
        return recorded_not_implemented(out, [t for t in (self, other) if isinstance(t, Tensor)],
                                        "aten::floor_divide")

    __floordiv__ = floor_divide

    def floor_divide_(self, other):
        """self //= other; recorded as torch's: a node whose backward raises."""
        from .out_argument import recorded_not_implemented
        with grad_mode.no_grad():
            self.copy_(self.floor_divide(other))
        return recorded_not_implemented(self, (self,), "aten::floor_divide_")

    __ifloordiv__ = floor_divide_

    def __rfloordiv__(self, other):
        from .out_argument import recorded_not_implemented
        return recorded_not_implemented(Tensor._wrap(np.asarray(np.floor_divide(
            other, self._data))), (self,), "aten::floor_divide")

    def atan2(self, other):
        return call(table.ATAN2, (self, _as_tensor(other)))

    arctan2 = atan2

    def atan2_(self, other):
        return call_inplace(table.ATAN2, (self, _as_tensor(other)))

    arctan2_ = atan2_

    def addcmul(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 * tensor2, one AddcmulBackward0 node."""
        return call(table.ADDCMUL, (self, tensor1, tensor2), (_scalar(value),))

    def addcmul_(self, tensor1, tensor2, *, value=1):
        return call_inplace(table.ADDCMUL, (self, tensor1, tensor2), (_scalar(value),))

    def addcdiv(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 / tensor2, one AddcdivBackward0 node."""
        return call(table.ADDCDIV, (self, tensor1, tensor2), (_scalar(value),))

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return call_inplace(table.ADDCDIV, (self, tensor1, tensor2), (_scalar(value),))

    def masked_fill(self, mask, value):
        return call(table.MASKED_FILL, (self, _checked_mask(self, mask)), (_scalar(value),))

    # ---------------- in place: checked first, then written, version bumped ----------------
    def add_(self, other, *, alpha=1):
        return call_inplace(table.ADD, (self, other), (alpha,))

    def sub_(self, other, *, alpha=1):
        return call_inplace(table.SUB, (self, other), (alpha,))

    def mul_(self, other):
        return call_inplace(table.MUL, (self, other))

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return call_inplace(table.DIV, (self, other))
        return call_inplace(table.DIV_ROUNDED, (self, other), (_rounding_mode(rounding_mode),))

    divide_ = div_

    def pow_(self, exponent):
        if isinstance(exponent, Tensor):
            return call_inplace(table.POW_TENSOR, (self, exponent))
        return call_inplace(table.POW, (self,), (exponent,))

    __iadd__, __isub__, __imul__, __itruediv__, __ipow__ = add_, sub_, mul_, div_, pow_

    def index_add_(self, dim, index, source, *, alpha=1):
        return call_inplace(table.INDEX_ADD, (self, index, source),
                            _index_add_args(self, dim, index, source, alpha))

    def bernoulli_(self, p=0.5, *, generator=None):
        """Each element set to 1 with probability p (a number or a tensor), else 0."""
        if isinstance(p, Tensor):
            return call_inplace(table.BERNOULLI_FILL_TENSOR, (self, p),
                                (creation.generator(generator),))
        return call_inplace(table.BERNOULLI_FILL, (self,), (p, creation.generator(generator)))

    def transpose_(self, dim0, dim1):
        """Transposes this tensor itself (its shape changes): a TransposeBackward1 node."""
        nd = self._data.ndim
        return self._transposed_in_place(table.TRANSPOSE_, (_dim(dim0, nd), _dim(dim1, nd)))

    swapaxes_ = transpose_

    def squeeze_(self, dim=None):
        nd = self._data.ndim
        if dim is None:
            return self._transposed_in_place(table.SQUEEZE_ALL_, (None,))
        if isinstance(dim, (tuple, list)):
            return self._transposed_in_place(table.SQUEEZE_DIMS_, (_dims(dim, nd),))
        return self._transposed_in_place(table.SQUEEZE_, (_dim(dim, nd),))

    def unsqueeze_(self, dim):
        return self._transposed_in_place(table.UNSQUEEZE_, (_dim(dim, self._data.ndim + 1),))

    def t_(self):
        if self._data.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                               f"{self._data.ndim}D")
        return self._transposed_in_place(table.T_, ())

    def _transposed_in_place(self, spec, args):
        check_inplace(self)
        # (a view stays a view of its base: its data is the transposed view of the same memory)
        out = call(spec, (self,), args)
        self._data = out._data
        if out._grad_fn is not None:  # (output 0 of its new node, whatever it was before)
            self._grad_fn, self._requires_grad, self._output_nr = out._grad_fn, True, 0
        if forward_level.active is not None and hasattr(out, "_fw_grad"):  # its tangent, transposed
            self._fw_grad = out._fw_grad
        self._version_counter[0] += 1
        return self

    def clamp_(self, min=None, max=None):
        return _clamp(call_inplace, self, min, max)

    clip_ = clamp_

    def masked_fill_(self, mask, value):
        return call_inplace(table.MASKED_FILL, (self, _checked_mask(self, mask, in_place=True)),
                            (_scalar(value),))

    def zero_(self):
        return call_inplace(table.ZERO, (self,))

    def fill_(self, value):
        if isinstance(value, Tensor):  # torch's fill_.Tensor: the value gets the gradient
            if value._data.ndim:
                raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got "
                                   f"tensor with {value._data.ndim} dimensions.")
            return call_inplace(table.FILL_TENSOR, (self, value))
        return call_inplace(table.FILL, (self,), (value,))

    def copy_(self, src):
        if isinstance(src, Tensor):  # (src broadcasts to self's shape, in torch's words)
            mismatch = broadcast_mismatch(self._data.shape, src._data.shape)
            if mismatch:
                raise RuntimeError(mismatch)
            shape = np.broadcast_shapes(self._data.shape, src._data.shape)
            if shape != self._data.shape:
                raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match "
                                   f"the broadcast shape {list(shape)}")
        return call_inplace(table.COPY, (self, src))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return call_inplace(table.NORMAL, (self,), (mean, std, creation.generator(generator)))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return call_inplace(table.UNIFORM, (self,), (a, b, creation.generator(generator)))

    def random_(self, from_=None, to=None, *, generator=None, **by_name):
        """Integers drawn uniformly: random_(to) in [0, to), random_(from, to), random_() all
        the dtype holds exactly (torch's names: `from` is a keyword Python reserves)."""
        from_, to = by_name.pop("from", from_), by_name.pop("to", to)
        rng = creation.generator(generator)
        if from_ is None:
            return call_inplace(table.RANDOM, (self,), (0, to, rng))
        if to is None:
            return call_inplace(table.RANDOM_TO, (self,), (0, from_, rng))
        return call_inplace(table.RANDOM_FROM_TO, (self,), (from_, to, rng))

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        return call_inplace(table.LOG_NORMAL, (self,), (mean, std, creation.generator(generator)))

    def exponential_(self, lambd=1.0, *, generator=None):
        return call_inplace(table.EXPONENTIAL, (self,), (lambd, creation.generator(generator)))

    def geometric_(self, p, *, generator=None):
        return call_inplace(table.GEOMETRIC, (self,), (p, creation.generator(generator)))

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        return call_inplace(table.CAUCHY, (self,), (median, sigma, creation.generator(generator)))

    __setitem__ = _setitem

    # ---------------- reductions ----------------
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        if dtype is not None:
            return _kept_in(dtype, self.to(dtype).sum(dim, keepdim))
        if dim is None:
            return call(table.SUM, (self,))
        return call(table.SUM_DIM, (self,), (_dims(dim, self._data.ndim), keepdim))

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        t = self if dtype is None else self.to(dtype)
        if t._data.dtype.kind not in "fcV":
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be "
                               f"either a floating point or complex dtype. Got: "
                               f"{dtypes.LEGACY_TYPE_NAMES.get(t._data.dtype.name)}")
        if dim is None:
            return call(table.MEAN, (t,))
        return call(table.MEAN_DIM, (t,), (_dims(dim, t._data.ndim), keepdim))

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return call(table.VAR, (self,), _var_args(self, dim, unbiased, keepdim, correction))

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return call(table.STD, (self,), _var_args(self, dim, unbiased, keepdim, correction))

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        if dtype is not None:
            return _kept_in(dtype, self.to(dtype).prod(dim, keepdim))
        if dim is None:
            return call(table.PROD, (self,))
        return call(table.PROD_DIM, (self,), (_dim(dim, self._data.ndim), keepdim))

    max = _max_or_min("max", maximum, table.MAX, table.MAX_DIM)
    min = _max_or_min("min", minimum, table.MIN, table.MIN_DIM)

    def amax(self, dim=(), keepdim=False):
        dims = _dims(dim, self._data.ndim)
        _check_reduced_sizes(self, "amax", dims, dim)
        return call(table.AMAX, (self,), (dims, keepdim))

    def amin(self, dim=(), keepdim=False):
        dims = _dims(dim, self._data.ndim)
        _check_reduced_sizes(self, "amin", dims, dim)
        return call(table.AMIN, (self,), (dims, keepdim))

    def logsumexp(self, dim, keepdim=False):
        return call(table.LOGSUMEXP, (self,), (_dims(dim, self._data.ndim), keepdim))

    def softmax(self, dim):
        return call(table.SOFTMAX, (self,), (_dim(dim, self._data.ndim),))

    def log_softmax(self, dim):
        return call(table.LOG_SOFTMAX, (self,), (_dim(dim, self._data.ndim),))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """torch.norm: a vector norm of order p over `dim` (None: all); 'fro' is p = 2."""
        if isinstance(p, str):
            if p != "fro":
                return linalg.matrix_norm(self, p, dim if dim is not None else (-2, -1),
                                          keepdim, dtype=dtype)
            p = 2
        return vector_norm(self, p, dim, keepdim, dtype=dtype)

    # ---------------- linear algebra (torch.linalg's, as torch's methods) ----------------
    inverse, det, slogdet = linalg.inv, linalg.det, linalg.slogdet
    matrix_power, triangular_solve = linalg.matrix_power, linalg.triangular_solve
    cholesky_solve, cholesky_inverse = linalg.cholesky_solve, linalg.cholesky_inverse
    matrix_exp, pinverse = linalg.matrix_exp, linalg.pinverse
    lu_solve = linalg.lu_solve_deprecated  # (b.lu_solve(LU, pivots): torch.lu_solve's order)
    geqrf, orgqr, ormqr = linalg.geqrf, linalg.orgqr, linalg.ormqr
    cholesky = linalg.cholesky_deprecated

    def logdet(self):
        """log det: nan where the determinant is negative (a where over slogdet, as torch)."""
        sign, logabsdet = self.slogdet()
        return where(sign == -1, float("nan"), logabsdet)

    def svd(self, some=True, compute_uv=True):
        """torch.svd's (U, S, V), V = Vh^T; zeros for U and V without compute_uv."""
        U, S, Vh = linalg.svd(self, full_matrices=not some)
        if not compute_uv:
            U, Vh = U.detach() * 0, Vh.detach() * 0
        return SvdResult(U, S, Vh.mT)

    # ---------------- shapes ----------------
    def view(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, Size)):
            return self.to(shape[0])  # view(dtype) reinterprets in torch; a copy here
        return call(table.VIEW, (self,), (_checked_shape(self, _shape(shape)),))

    def view_as(self, other):
        return self.view(other.shape)

    def reshape(self, *shape):
        shape = _checked_shape(self, _shape(shape))
        try:  # a view when it can be: of a non-contiguous tensor, torch's _reshape_alias
            return call(table.VIEW if self._data.flags.c_contiguous else table.RESHAPE_ALIAS,
                        (self,), (shape,))
        except RuntimeError as e:  # not viewable: copy, as torch (CloneBackward0)
            if "view size is not compatible" not in str(e):
                raise
            return call(table.UNSAFE_VIEW, (self.clone(),), (shape,))

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        nd = self._data.ndim
        if nd == 0:
            return self.reshape(1)
        s, e = _dim(start_dim, nd), _dim(end_dim, nd)
        if s == e:  # nothing to flatten: the tensor itself, as torch
            return self
        shape = self._data.shape
        return self.reshape(shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])

    def squeeze(self, dim=None):
        if dim is None:
            return call(table.SQUEEZE, (self,), (None,))
        if isinstance(dim, (tuple, list)):
            return call(table.SQUEEZE_DIMS, (self,), (_dims(dim, self._data.ndim),))
        return call(table.SQUEEZE_DIM, (self,), (_dim(dim, self._data.ndim),))

    def unsqueeze(self, dim):
        return call(table.UNSQUEEZE, (self,), (_dim(dim, self._data.ndim + 1),))

    def transpose(self, dim0, dim1):
        nd = self._data.ndim
        return call(table.TRANSPOSE, (self,), (_dim(dim0, nd), _dim(dim1, nd)))

    swapaxes = transpose

    def t(self):
        if self._data.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self._data.ndim}D")
        return call(table.T, (self,))

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self._data.ndim))))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    @property
    def H(self):  # the conjugate transpose of a matrix
        if self._data.ndim not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{self._data.ndim}-D tensor."
                               + (" For batches of matrices, consider using tensor.mH"
                                  if self._data.ndim > 2 else ""))
        if not self._data.ndim:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                          UserWarning, stacklevel=2)
            return self.conj()
        return self.mH

    @property
    def mH(self):  # the conjugate transpose of each matrix of a batch
        if self._data.ndim < 2:
            raise RuntimeError(f"tensor.mH is only supported on matrices or batches of "
                               f"matrices. Got {self._data.ndim}-D tensor.")
        out = self.transpose(-2, -1)
        return out.conj() if out.is_complex() else out

    def permute(self, *dims):
        dims = _shape(dims)
        nd = self._data.ndim
        if len(dims) != nd:
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                               f"does not match the length of the desired ordering of "
                               f"dimensions i.e. input.dim() = {nd} is not equal to "
                               f"len(dims) = {len(dims)}")
        return call(table.PERMUTE, (self,), (tuple(_dim(d, nd) for d in dims),))

    def expand(self, *sizes):
        sizes = _shape(sizes)
        lead = len(sizes) - self._data.ndim
        if -1 in sizes[:max(lead, 0)]:
            raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                               f"leading, non-existing dimension {sizes.index(-1)}")
        sizes = tuple(self._data.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
        _check_expands_to(self, sizes)
        _check_expands_to(self, sizes)
        return call(table.EXPAND, (self,), (sizes,))

    def expand_as(self, other):
        return self.expand(other.shape)

    __getitem__ = _getitem

    def select(self, dim, index):
        dim = _dim(dim, self._data.ndim)
        size = self._data.shape[dim]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self._data.shape)} at dimension {dim}")
        return call(table.SELECT, (self,), (dim, index % size))

    def diagonal(self, offset=0, dim1=0, dim2=1):
        nd = self._data.ndim
        d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        return call(table.DIAGONAL, (self,), (int(offset), d1, d2))

    def diag(self, diagonal=0):
        """A vector laid on a diagonal (DiagEmbedBackward0), or a matrix's diagonal copied
        (DiagonalBackward0_copy), as torch.diag."""
        if self._data.ndim == 1:
            return call(table.DIAG_EMBED, (self,), (int(diagonal), -2, -1))
        if self._data.ndim != 2:
            raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.dim()}D")
        return call(table.DIAGONAL_COPY, (self,), (int(diagonal), 0, 1))

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        nd = self._data.ndim + 1
        if _dim(dim1, nd) == _dim(dim2, nd):
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        return call(table.DIAG_EMBED, (self,), (int(offset), dim1, dim2))

    def nonzero(self, *, as_tuple=False):
        """The indices of the nonzero elements (int64, no gradient): (n, dim), or one index
        tensor per dim with as_tuple."""
        found = np.nonzero(self._data if self._data.ndim else self._data.reshape(1))
        if as_tuple:
            return tuple(Tensor._wrap(i.astype(np.int64)) for i in found)
        return Tensor._wrap(np.stack(found, 1).astype(np.int64).reshape(-1, self._data.ndim))

    def argwhere(self):
        return self.nonzero()

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Category indices (int64, no gradient) drawn from each row of weights by torch's
        algorithms (numpy's generator: other numbers than torch's)."""
        weights = self._data
        if weights.ndim not in (1, 2):
            raise RuntimeError("prob_dist must be 1 or 2 dim")
        rows = weights.reshape(-1, weights.shape[-1]).astype(np.float64)
        if not np.all(np.isfinite(rows)) or np.any(rows < 0):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if num_samples <= 0:
            raise RuntimeError("cannot sample n_sample <= 0 samples")
        if not replacement and num_samples > rows.shape[1]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        totals = rows.sum(1)
        if np.any(totals <= 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        generator = creation.generator(generator)
        if replacement:
            out = np.stack([generator.choice(rows.shape[1], num_samples, p=row / total)
                            for row, total in zip(rows, totals)])
        else:  # torch's algorithm: the largest w / Exp(1) draws (zero weights come last)
            keys = rows / generator.exponential(size=rows.shape)
            out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
        return Tensor._wrap(out.reshape(weights.shape[:-1] + (num_samples,)).astype(np.int64))

    def sum_to_size(self, *size):
        """self summed to `size` (which it must expand to): the engine's unbroadcasting."""
        size = _shape(size)
        if not _broadcastable(size, tuple(self.shape)):
            raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                               f"{{{', '.join(map(str, self.shape))}}}.")
        return generic.sum_to(self, size)

    def narrow(self, dim, start, length):
        dim = _dim(dim, self._data.ndim)
        if start + length > self._data.shape[dim]:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                               f"({self._data.shape[dim]}).")
        return call(table.SLICE, (self,), (dim, start, start + length, 1))

    def split(self, split_size, dim=0):
        return _split(self, split_size, dim, table.SPLIT, table.SPLIT_WITH_SIZES)

    def unsafe_split(self, split_size, dim=0):
        """split whose outputs autograd does not track as views (torch's RNN gates)."""
        return _split(self, split_size, dim, table.UNSAFE_SPLIT, table.UNSAFE_SPLIT_WITH_SIZES)

    def unsafe_split_with_sizes(self, split_sizes, dim=0):
        return self.unsafe_split(list(split_sizes), dim)

    def chunk(self, chunks, dim=0):
        return self.split(_chunk_size(self, chunks, dim), dim)

    def unsafe_chunk(self, chunks, dim=0):
        return self.unsafe_split(_chunk_size(self, chunks, dim), dim)

    def unbind(self, dim=0):
        return call(table.UNBIND, (self,), (_dim(dim, self._data.ndim),))

    def gather(self, dim, index, *, sparse_grad=False):
        dim = check_scatter_gather("gather", self, dim, index)
        return call(table.GATHER, (self, index), (dim, bool(sparse_grad)))

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """src (a tensor, ScatterBackward0) or value (a number, ScatterBackward1) written at
        index along dim; reduce='add' / 'multiply' combines instead (no derivative, as torch)."""
        return _scatter(self, dim, index, src, value, reduce, call)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return _scatter(self, dim, index, src, value, reduce, call_inplace)

    def scatter_add(self, dim, index, src):
        return call(table.SCATTER_ADD, (self, index, src),
                    (check_scatter_gather("scatter", self, dim, index, src),))

    def index_select(self, dim, index):
        dim = _dim(dim, self._data.ndim)
        _check_index(index, "index_select")
        return call(table.INDEX_SELECT, (self, index), (dim,))

    def index_add(self, dim, index, source, *, alpha=1):
        return call(table.INDEX_ADD, (self, index, source),
                    _index_add_args(self, dim, index, source, alpha))

    def sort(self, dim=-1, descending=False, stable=False):
        """(values, indices) along dim; ties keep their order (as stable=True)."""
        if self._data.ndim == 0:
            return SortResult(self.clone(), Tensor._wrap(np.zeros((), np.int64)))
        return SortResult(*call(table.SORT, (self,), (_dim(dim, self._data.ndim), descending)))

    def argsort(self, dim=-1, descending=False, stable=False):
        return self.sort(dim, descending)[1]

    def topk(self, k, dim=-1, largest=True, sorted=True):
        dim = _dim(dim, self._data.ndim)
        size = self._data.shape[dim] if self._data.ndim else 1
        if not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        return TopkResult(*call(table.TOPK, (self,), (k, dim, largest, sorted)))

    # ---------------- scans, reordering, repeating ----------------
    def cumsum(self, dim, *, dtype=None):
        if dtype is not None:
            return _kept_in(dtype, self.to(dtype).cumsum(dim), "cumsum_out_cpu")
        t = self.to(dtypes.int64) if self._data.dtype.kind in "biu" else self  # (as torch:
        # integer sums are int64)
        return call(table.CUMSUM, (t,), (_dim(dim, t._data.ndim),))

    def cumprod(self, dim, *, dtype=None):
        if dtype is not None:
            return _kept_in(dtype, self.to(dtype).cumprod(dim), "cumprod_out_cpu")
        t = self.to(dtypes.int64) if self._data.dtype.kind in "biu" else self
        return call(table.CUMPROD, (t,), (_dim(dim, t._data.ndim),))

    def flip(self, *dims, **by_name):
        """x.flip(0, 1), x.flip((0, 1)) or torch's keyword form x.flip(dims=(0, 1))."""
        if by_name.keys() - {"dims"} or (dims and by_name):
            raise TypeError(f"flip() got an unexpected argument {sorted(by_name)}")
        dims = _shape(dims or (by_name.get("dims", ()),))
        return call(table.FLIP, (self,), (tuple(_dim(d, self._data.ndim) for d in dims),))

    def fliplr(self):
        return self.flip(1)

    def flipud(self):
        return self.flip(0)

    def roll(self, shifts, dims=None):
        shifts = (shifts,) if isinstance(shifts, numbers.Integral) else tuple(shifts)
        dims = () if dims is None else dims
        dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
        if dims and len(dims) != len(shifts):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:{len(dims)}")
        if not dims and len(shifts) != 1:
            raise RuntimeError("roll: shifts must be one number when dims is not given")
        return call(table.ROLL, (self,), (shifts, tuple(_dim(d, self._data.ndim) for d in dims)))

    def repeat(self, *repeats):
        repeats = _shape(repeats)
        if len(repeats) < self._data.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        return call(table.REPEAT, (self,), (repeats,))

    def tile(self, *dims):
        dims = _shape(dims)
        return self.repeat((1,) * (self._data.ndim - len(dims)) + dims)

    triu, tril = _triangle(table.TRIU), _triangle(table.TRIL)

    def outer(self, vec2):
        """self as a column times vec2 (as torch: a view then MulBackward0)."""
        _check_dims("outer", 1, self=self, vec2=vec2)
        return self.reshape(-1, 1) * vec2

    ger = outer

    def bernoulli(self, p=None, *, generator=None):
        """0/1 samples with this tensor's values as probabilities (p: one probability)."""
        if p is not None:
            return self.detach().clone().bernoulli_(p)
        if self._data.dtype.kind not in "fV":
            raise RuntimeError("bernoulli: expected a floating point tensor of probabilities")
        if self._data.size and not ((self._data >= 0) & (self._data <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        return call(table.BERNOULLI, (self,), (creation.generator(generator),))

    # ---------------- new tensors like this one (never part of the graph) ----------------
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        check_device(device)
        return creation.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.zeros, size, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.ones, size, dtype, device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return self._new(np.empty, size, dtype, device, requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return self._new(lambda shape, dt: np.full(shape, fill_value, dt), (size,), dtype,
                         device, requires_grad)

    def new(self, *args, device=None):
        """The legacy x.new(2, 3) (uninitialised) or x.new(data), in x's dtype."""
        return creation.legacy(self._data.dtype, args, device)

    def _new(self, make, size, dtype, device, requires_grad):
        np_dtype = self._data.dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
        return creation._finish(make(_shape(size), np_dtype), requires_grad, device)



def _kept_in(dtype, result, scan=None):
    """A sum or product asked for in `dtype` (the input cast to it first): torch's result
    keeps dtype, an integer or bool one too (a bool sum is any, a product all), where
    integers are otherwise summed in int64; torch's scans (`scan`: the kernel) have no bool
    kernel."""
    if scan is not None and dtype == dtypes.bool_:
        raise NotImplementedError(f"\"{scan}\" not implemented for 'Bool'")
    return result if result.dtype == dtype else result.to(dtype)


def _clamp(run, self, min, max):
    """clamp or clamp_ (`run`: call or call_inplace): torch's clamp.Tensor when a bound is a
    tensor (ClampBackward0, gradients for the bounds too), else its clamp of numbers."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is None or max is None or (isinstance(min, Tensor) and isinstance(max, Tensor)):
            return run(table.CLAMP_TENSOR, (self, min, max))
        # a tensor bound and a number: torch's overload of numbers, if the tensor is one
        if (min if isinstance(min, Tensor) else max).dim():
            raise TypeError(_clamp_overloads(self, min, max))
        min, max = (b.item() if isinstance(b, Tensor) else b for b in (min, max))
    return run(table.CLAMP, (self,), (min, max))


def _clamp_overloads(self, min, max):
    """torch's words for clamp's bounds a tensor and a number, a match for neither overload."""
    given = ", ".join(type(a).__name__ for a in (self, min, max))
    return (f"clamp() received an invalid combination of arguments - got ({given}), but "
            f"expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, "
            f"Tensor out = None)\n * (Tensor input, Number min = None, Number max = None, *, "
            f"Tensor out = None)\n")


def _broadcastable(shape, target):
    return len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


def _checked_shape(t, shape):
    """view/reshape's target shape, -1 inferred, with torch's errors when it cannot be."""
    numel = t._data.size
    if list(shape).count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([n for n in shape if n != -1]))
    resolved = tuple(numel // known if n == -1 else n for n in shape) if known else shape
    if (-1 in shape and not known) or int(np.prod(resolved)) != numel:  # (-1 could be any)
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return resolved


def _check_dims(op_name, ndim, **operands):
    for arg, t in operands.items():  # (in the order given: torch's first failing operand)
        if t.dim() != ndim:
            raise RuntimeError(f"{op_name}: {arg} must be a {ndim}D tensor, got {t.dim()}D")


def _check_addmm(self, mat1, mat2, in_place):
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.dim()}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dtype != self.dtype:
            raise RuntimeError(f"self and {name} must have the same dtype, but got "
                               f"{dtypes.LEGACY_TYPE_NAMES.get(self._data.dtype.name)} and "
                               f"{dtypes.LEGACY_TYPE_NAMES.get(m._data.dtype.name)}")
    size = (mat1.shape[0], mat2.shape[1])
    if in_place and tuple(self.shape) != size:  # the result is written into self
        raise RuntimeError(f"The input tensor must be a matrix with size {size[0]}x{size[1]}, "
                           f"but got a {self.dim()}-D tensor with size "
                           f"{'x'.join(map(str, self.shape))}")
    _check_expands_to(self, size)


def _check_addmv(self, mat, vec):
    if mat.dim() != 2 or vec.dim() != 1 or self.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, "
                           f"{vec.dim()}")
    rows, cols = mat._data.shape
    if vec._data.shape[0] != cols or self._data.shape not in ((), (1,), (rows,)):
        raise RuntimeError(f"size mismatch, got input ({self._data.size}), mat ({rows}x{cols}), "
                           f"vec ({vec._data.shape[0]})")


def _check_addr(self, vec1, vec2):
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.dim()}-D")
    _check_expands_to(self, (vec1.shape[0], vec2.shape[0]))


def _check_addbmm(self, batch1, batch2):
    _check_dims("addbmm", 3, batch1=batch1, batch2=batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    _check_expands_to(self, (batch1.shape[1], batch2.shape[2]))


def _check_in_place_size(self, size):
    """An in-place product writes its result into self: the shapes must be the same."""
    if tuple(self.shape) != tuple(size):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output "
                           f"tensor size {list(size)} should match")


def _check_expands_to(t, size):
    """t must expand to `size` (expand, and addmm's and baddbmm's `self`): torch's message,
    naming the last dim that does not (torch checks from the last dim)."""
    shape, lead = t._data.shape, len(size) - t._data.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(size)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(shape)})")
    for d in reversed(range(t._data.ndim)):
        if shape[d] != 1 and shape[d] != size[lead + d]:
            raise RuntimeError(f"The expanded size of the tensor ({size[lead + d]}) must match "
                               f"the existing size ({shape[d]}) at non-singleton dimension "
                               f"{lead + d}.  Target sizes: {list(size)}.  Tensor sizes: "
                               f"{list(shape)}")


def _split(t, split_size, dim, by_size, by_sizes):
    dim = _dim(dim, t._data.ndim)
    if isinstance(split_size, (list, tuple)):
        if sum(split_size) != t._data.shape[dim]:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                               f"{t._data.shape[dim]} (input tensor's size at dimension "
                               f"{dim}), but got split_sizes={list(split_size)}")
        return call(by_sizes, (t,), (tuple(split_size), dim))
    return call(by_size, (t,), (int(split_size), dim))


def _chunk_size(t, chunks, dim):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    return max(1, -(-t.size(dim) // chunks))


def _scatter(t, dim, index, src, value, reduce, dispatch):
    if (src is None) == (value is None):
        raise TypeError("scatter() expects one of src (a tensor or a number) or value")
    src = value if src is None else src
    dim = check_scatter_gather("scatter", t, dim, index, src)
    if reduce is not None:
        return _scatter_reduce(t, dim, index, src, reduce, dispatch)
    if isinstance(src, Tensor):
        return dispatch(table.SCATTER, (t, index, src), (dim,))
    return dispatch(table.SCATTER_VALUE, (t, index), (dim, _scalar(src)))


def _scatter_reduce(t, dim, index, src, reduce, dispatch):
    """scatter(reduce=...): torch's node for it (NotImplemented) fails in backward, so a
    tensor that would need one is refused here, where the user's line is."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if _state.grad_enabled and any(isinstance(x, Tensor) and x._requires_grad
                                   for x in (t, src)):
        raise RuntimeError("the derivative for 'scatter' with reduce is not implemented (as "
                           "in torch); use scatter_add, or scatter_reduce (differentiable)")
    out = t._data.copy()
    where = kernels._scatter_index(index._data, dim)
    values = src._data[tuple(slice(0, n) for n in index._data.shape)] if isinstance(
        src, Tensor) else src
    (np.add if reduce == "add" else np.multiply).at(out, where, values)
    if dispatch is call_inplace:
        check_inplace(t)
        t._data[...] = out
        t._version_counter[0] += 1
        return t
    return Tensor._wrap(out)


def _check_index(index, name):
    if not isinstance(index, Tensor) or index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if index._data.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def _index_add_args(t, dim, index, source, alpha):
    dim = _dim(dim, t._data.ndim)
    _check_index(index, "index_add")
    if source.dim() and source.shape[dim if source.dim() > 1 else 0] != index.numel():
        raise IndexError("index_add_(): Number of indices should be equal to source.size(dim)")
    return (dim, alpha)


def _check_reduced_sizes(t, name, dims, given):
    """max/min reductions have no value over an empty dim (torch's IndexError)."""
    shape = t._data.shape
    given = tuple(given) if isinstance(given, (tuple, list)) else (given,)
    for d, g in zip(dims, given if len(given) == len(dims) else dims):  # (named as given)
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {g} to have non-zero size.")


def _attach_row_methods(spec, name):
    """Tensor.<name>() and Tensor.<name>_() of a one-input op of the table."""
    def method(self):
        return call(spec, (self,))

    def inplace(self):
        return call_inplace(spec.in_place or spec, (self,))
    for fn, fn_name in ((method, name), (inplace, name + "_")):
        fn.__name__ = fn.__qualname__ = fn_name
        fn.__doc__ = f"torch's Tensor.{fn_name}(): the op table's {spec.name!r} row."
        setattr(Tensor, fn_name, fn)


for _spec in table.TABLE.values():  # set once, at import: the table defines these methods
    for _name in _spec.method_names:
        _attach_row_methods(_spec, _name)


def _attach(methods):
    """Every attribute of `methods` becomes Tensor's, named as Tensor's own (aliases keep
    the first name): the factories' functions too."""
    for name, value in vars(methods).items():
        if name in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                    "__hash__"):  # (None there, as __eq__ is defined: Tensor keeps its own)
            continue
        for fn in (value, getattr(value, "fget", None), getattr(value, "fset", None)):
            if (isinstance(fn, types.FunctionType) and fn.__module__ == __name__
                    and not fn.__qualname__.startswith("Tensor.")):
                fn.__name__, fn.__qualname__ = name, "Tensor." + name
        setattr(Tensor, name, value)


def _rounding_mode(mode):
    if mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{mode}'")
    return mode


_attach(TensorMethods)


from . import tensor_methods_extra  # noqa: E402 (the census of real files: more methods)
_attach(tensor_methods_extra.MoreTensorMethods)
_attach(memory.MemoryTensorMethods)
_attach(tensor_methods_extra.RemovedTensorMethods)
_attach(tensor_methods_extra.SelectingTensorMethods)
_attach(tensor_methods_extra.ComputingTensorMethods)
_attach(tensor_methods_extra.SparseTensorMethods)
_attach(tensor_methods_extra.AliasTensorMethods)
_attach(tensor_methods_extra.InPlaceTwinMethods)
_attach(tensor_methods_extra.LayoutQuestionMethods)
_attach(tensor_methods_extra.BitwiseTensorMethods)
_attach(tensor_methods_extra.ComparedInPlaceMethods)
from . import composites  # noqa: E402 (ravel, unflatten, tensor_split, diff, ...)
_attach(composites.ShapeTensorMethods)
from . import elementwise  # noqa: E402 (logaddexp, hypot, copysign, fmax, ...)
_attach(elementwise.ElementwiseTensorMethods)
from . import scans  # noqa: E402 (cummax, cummin, logcumsumexp, aminmax, nanmedian)
_attach(scans.ScanTensorMethods)
from . import spectral  # noqa: E402 (Tensor.stft, Tensor.istft)
_attach(spectral.SpectralTensorMethods)
from . import special  # noqa: E402 (Tensor.polygamma, mvlgamma, xlogy)
_attach(special.SpecialTensorMethods)
from . import strided  # noqa: E402 (Tensor.as_strided, as_strided_, as_strided_scatter)
_attach(strided.StridedTensorMethods)
