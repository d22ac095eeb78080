"""The sweep over the op table: every OpSpec in gradtool.autograd.ops.derivatives.TABLE is
proved right

* against central differences (tests/gradcheck_util.py), first and second order;
* against its closed-form derivative written directly in numpy (the vector-Jacobian product
  for a random cotangent);
* in float32 (grads keep the input's dtype);
* over random shapes with hypothesis (broadcasting, reduction dims, matmul shapes);

plus torch's conventions at kinks and at the edges of each op's domain, and its dtype rules.
In-place ops (call_inplace), writes through views (CopySlices / AsStridedBackward0) and
__setitem__ are cases of the sweep too.

`test_every_table_op_is_covered` proves that the case table reaches every row of TABLE: it
runs every case itself (so pytest's order and selection do not matter) with `tensor.call`,
`tensor.call_inplace` and `OpNode.apply` wrapped to record which specs built a node and whose
backward ran, and each case must reach the rows it declares in `covers`.
"""
import contextlib
import dataclasses
import functools
import itertools
import math
import warnings
from typing import Callable, Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import gradtool as gt
from gradtool.engine.errors import GradtoolError
from gradtool.engine.autograd.dispatch import call
from gradtool.engine.autograd.ops import derivatives as D
from gradtool.engine.autograd import observers
from gradtool.engine.autograd.ops import registry
from gradcheck_util import check_grads

HYPOTHESIS = settings(max_examples=25, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow])


# ============================ numpy helpers for the closed forms ============================
def unbroadcast(g, shape):
    """Sum a gradient of the broadcast shape back to `shape` (numpy, independent of gradtool)."""
    g = np.asarray(g)
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if dims:
        g = g.sum(axis=dims, keepdims=True)
    return g.reshape(shape)


def norm_dims(dims, ndim):
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    return tuple(sorted(d % ndim for d in dims))


def restore(v, shape, dims, keepdim):
    """The reduced gradient v re-expanded to the input's shape."""
    dims = norm_dims(dims, len(shape))
    v = np.asarray(v)
    if not keepdim:
        v = np.expand_dims(v, dims)
    return np.broadcast_to(v, shape)


def np_logsumexp(x, dims, keepdims=True):
    m = np.max(x, axis=dims, keepdims=True)
    out = m + np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=dims)


def np_softmax(x, dim):
    return np.exp(x - np_logsumexp(x, (dim,)))


def matmul_vjp(v, a, b):
    """d(a @ b) with numpy's (= torch's) 1-D promotion and batch broadcasting."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    v2 = np.asarray(v)
    if a.ndim == 1:
        v2 = np.expand_dims(v2, -2 if v2.ndim else 0)
    if b.ndim == 1:
        v2 = np.expand_dims(v2, -1)
    ga = v2 @ np.swapaxes(b2, -1, -2)
    gb = np.swapaxes(a2, -1, -2) @ v2
    return [unbroadcast(ga, a2.shape).reshape(a.shape),
            unbroadcast(gb, b2.shape).reshape(b.shape)]


def at_index(shape, dim, index, values, assign=False):
    """Zeros of `shape` with values[pos] added at (pos with pos[dim] = index[pos]), one
    element at a time: the adjoint of gather (and, with assign, the forward of scatter)."""
    out = np.zeros(shape)
    for pos in np.ndindex(index.shape):
        target = list(pos)
        target[dim] = index[pos]
        if assign:
            out[tuple(target)] = values[pos]
        else:
            out[tuple(target)] += values[pos]
    return out


def gather_np(v, dim, index):
    out = np.empty(index.shape)
    for pos in np.ndindex(index.shape):
        target = list(pos)
        target[dim] = index[pos]
        out[pos] = v[tuple(target)]
    return out


def away_from(rng, shape, points=(0.0,), margin=0.2, scale=1.0):
    """Standard normal values (times scale), resampled until none is within margin of a kink."""
    x = rng.standard_normal(shape) * scale
    for _ in range(100):
        close = np.zeros(x.shape, bool)
        for p in points:
            close |= np.abs(x - p) < margin
        if not close.any():
            return x
        x[close] = rng.standard_normal(int(close.sum())) * scale
    raise AssertionError("could not sample away from the kinks")


def signed(rng, shape, lo=0.5, hi=1.5):
    """Values with |x| in [lo, hi] and random signs: away from 0, for div, prod."""
    return rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def dyadic(rng, shape, bits=8):
    return np.round(rng.standard_normal(shape) * 2.0 ** bits) / 2.0 ** bits


# ====================================== the case table ======================================
@dataclasses.dataclass(frozen=True)
class Const:
    """An input that is not differentiated: an index/mask array (passed as a Tensor without
    grad) or any Python value (passed as is)."""
    value: object


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    covers: tuple          # TABLE names this case is responsible for
    fn: Callable           # (*inputs) -> Tensor or tuple of Tensors
    make: Callable         # rng -> list of float64 arrays (differentiated) or Const
    vjp: Callable          # (cotangent(s), *input arrays) -> numpy grads, one per float input
    order2: Optional[str] = "plain"  # second-order check of fn ("plain") or of fn's outputs
    #                                  squared ("square": for linear ops, whose backward's own
    #                                  derivative is only reached when the cotangent depends on x)
    eps: float = 1e-6
    cotangent_bits: Optional[int] = None
    forward_ad: bool = True  # False: torch's op has no jvp; its refusal is tested instead


CASES = []


def case(id, covers, fn, make, vjp, **kw):
    covers = (covers,) if isinstance(covers, str) else tuple(covers)
    CASES.append(Case(id, covers, fn, make, vjp, **kw))


def normal(*shape):
    return lambda r: [r.standard_normal(shape)]


def normals(*shapes):
    return lambda r: [r.standard_normal(s) for s in shapes]


S = (3, 4)

# ------------------------------ elementwise, one input ------------------------------
case("neg", "NEG", lambda x: -x, normal(*S), lambda v, x: [-v], order2="square")
case("abs", "ABS", lambda x: x.abs(), lambda r: [away_from(r, S)],
     lambda v, x: [v * np.sign(x)])
case("sign", "SIGN", lambda x: x.sign(), lambda r: [away_from(r, S)],
     lambda v, x: [np.zeros_like(x)])
case("exp", "EXP", lambda x: x.exp(), normal(*S), lambda v, x: [v * np.exp(x)])
case("log", "LOG", lambda x: x.log(), lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, x: [v / x])
case("log1p", "LOG1P", lambda x: x.log1p(), lambda r: [r.uniform(-0.5, 2.0, S)],
     lambda v, x: [v / (1 + x)])
case("expm1", "EXPM1", lambda x: x.expm1(), normal(*S), lambda v, x: [v * np.exp(x)])
case("sqrt", "SQRT", lambda x: x.sqrt(), lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, x: [v / (2 * np.sqrt(x))])
case("rsqrt", "RSQRT", lambda x: x.rsqrt(), lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, x: [-0.5 * v * x ** -1.5])
case("sin", "SIN", lambda x: x.sin(), normal(*S), lambda v, x: [v * np.cos(x)])
case("cos", "COS", lambda x: x.cos(), normal(*S), lambda v, x: [-v * np.sin(x)])
case("tan", "TAN", lambda x: x.tan(), lambda r: [r.uniform(-1.2, 1.2, S)],
     lambda v, x: [v / np.cos(x) ** 2])
case("tanh", "TANH", lambda x: x.tanh(), normal(*S), lambda v, x: [v * (1 - np.tanh(x) ** 2)])
case("sigmoid", "SIGMOID", lambda x: x.sigmoid(), lambda r: [2 * r.standard_normal(S)],
     lambda v, x: [v * np.exp(-x) / (1 + np.exp(-x)) ** 2])
case("relu", "RELU", lambda x: x.relu(), lambda r: [away_from(r, S)],
     lambda v, x: [v * (x > 0)])
case("clamp", "CLAMP", lambda x: x.clamp(-0.5, 0.5),
     lambda r: [away_from(r, S, (-0.5, 0.5), 0.1)],
     lambda v, x: [v * ((x >= -0.5) & (x <= 0.5))])
case("clamp_min", "CLAMP", lambda x: x.clamp(min=-0.3), lambda r: [away_from(r, S, (-0.3,), 0.1)],
     lambda v, x: [v * (x >= -0.3)])
case("clamp_max", "CLAMP", lambda x: gt.clamp(x, max=0.4),
     lambda r: [away_from(r, S, (0.4,), 0.1)], lambda v, x: [v * (x <= 0.4)])
case("clone", "CLONE", lambda x: x.clone(), normal(*S), lambda v, x: [v], order2="square")
# a cast to float32 and back is exact on dyadic inputs with a power-of-two step
case("to_float32", "TO_COPY", lambda x: x.to(gt.float32), lambda r: [dyadic(r, S)],
     lambda v, x: [v.astype(np.float64)], order2="square", eps=2.0 ** -6, cotangent_bits=8)

# ------------------------------ elementwise, two inputs ------------------------------
case("add", "ADD", lambda x, y: x + y, normals((3, 1), (4,)),
     lambda v, x, y: [unbroadcast(v, x.shape), unbroadcast(v, y.shape)], order2="square")
case("add_alpha", "ADD", lambda x, y: x.add(y, alpha=2.5), normals((2, 3, 4), (3, 1)),
     lambda v, x, y: [unbroadcast(v, x.shape), unbroadcast(2.5 * v, y.shape)],
     order2="square")
case("add_scalar", "ADD", lambda x: 1.5 + x, normal(*S), lambda v, x: [v], order2="square")
case("sub", "SUB", lambda x, y: x - y, normals((4,), (3, 1)),
     lambda v, x, y: [unbroadcast(v, x.shape), unbroadcast(-v, y.shape)], order2="square")
case("sub_alpha", "SUB", lambda x, y: gt.sub(x, y, alpha=3.0), normals(S, S),
     lambda v, x, y: [v, -3.0 * v], order2="square")
case("rsub", "RSUB", lambda x: 2.0 - x, normal(*S), lambda v, x: [-v], order2="square")
case("rsub_tensor", "RSUB_TENSOR", lambda x, y: gt.rsub(x, y, alpha=2.5), normals((4,), (3, 1)),
     lambda v, x, y: [unbroadcast(-2.5 * v, x.shape), unbroadcast(v, y.shape)], order2="square")
case("mul", "MUL", lambda x, y: x * y, normals((3, 1), (2, 1, 4)),
     lambda v, x, y: [unbroadcast(v * y, x.shape), unbroadcast(v * x, y.shape)])
case("mul_scalar_op", "MUL_SCALAR", lambda x: call(D.MUL_SCALAR, (x,), (0.9,)),
     normal(*S), lambda v, x: [0.9 * v], order2="square")
case("mul_scalar", "MUL", lambda x: x * 3.0, normal(*S), lambda v, x: [3.0 * v],
     order2="square")
case("add_scalar_op", "ADD_SCALAR", lambda x: call(D.ADD_SCALAR, (x,), (1.5, 1)), normal(*S),
     lambda v, x: [v], order2="square")
case("sub_scalar_op", "SUB_SCALAR", lambda x: call(D.SUB_SCALAR, (x,), (0.5, 1)), normal(*S),
     lambda v, x: [v], order2="square")
case("div", "DIV", lambda x, y: x / y, lambda r: [r.standard_normal((3, 4)), signed(r, (4,))],
     lambda v, x, y: [unbroadcast(v / y, x.shape), unbroadcast(-v * x / y ** 2, y.shape)])
case("rdiv", ("RECIPROCAL", "MUL"), lambda y: 2.0 / y, lambda r: [signed(r, S)],
     lambda v, y: [-2.0 * v / y ** 2])
case("reciprocal", "RECIPROCAL", lambda y: y.reciprocal(), lambda r: [signed(r, S)],
     lambda v, y: [-v / y ** 2])
case("pow", "POW", lambda x: x ** 2.5, lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, x: [v * 2.5 * x ** 1.5])
case("pow_int", "POW", lambda x: x.pow(3), normal(*S), lambda v, x: [v * 3 * x ** 2])
case("pow_negative", "POW", lambda x: x ** -1.5, lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, x: [v * -1.5 * x ** -2.5])
case("pow_zero", "POW", lambda x: x ** 0, normal(*S), lambda v, x: [np.zeros_like(x)])
case("pow_tensor", "POW_TENSOR", lambda x, y: x ** y,
     lambda r: [r.uniform(0.5, 2.0, (3, 4)), r.standard_normal((4,))],
     lambda v, x, y: [unbroadcast(v * y * x ** (y - 1), x.shape),
                      unbroadcast(v * x ** y * np.log(x), y.shape)])
case("pow_scalar_base", "POW_SCALAR_BASE", lambda x: 2.0 ** x, normal(*S),
     lambda v, x: [v * 2.0 ** x * np.log(2.0)])
case("maximum", "MAXIMUM", lambda x, y: gt.maximum(x, y), normals((3, 4), (4,)),
     lambda v, x, y: [unbroadcast(v * (x > y), x.shape), unbroadcast(v * (y > x), y.shape)])
case("minimum", "MINIMUM", lambda x, y: x.minimum(y), normals((3, 1), (3, 4)),
     lambda v, x, y: [unbroadcast(v * (x < y), x.shape), unbroadcast(v * (y < x), y.shape)])
# clamp with tensor bounds: min's gradient where x < min < max, max's where x > max or the
# bounds cross (the result is then max); the bounds broadcast and sometimes cross here
case("clamp_tensor_bounds", "CLAMP_TENSOR", lambda x, lo, hi: gt.clamp(x, lo, hi),
     lambda r: [2 * r.standard_normal(S), r.standard_normal((4,)) - 0.5,
                r.standard_normal((3, 1)) + 0.5],
     lambda v, x, lo, hi: [v * ((x >= lo) & (x <= hi)),
                           unbroadcast(v * ((x < lo) & (lo < hi)), lo.shape),
                           unbroadcast(v * ((x > hi) | (hi < lo)), hi.shape)])
case("clamp_tensor_min", "CLAMP_TENSOR", lambda x, lo: x.clamp(min=lo), normals(S, (4,)),
     lambda v, x, lo: [v * (x >= lo), unbroadcast(v * (x < lo), lo.shape)])
case("clamp_min_tensor", "CLAMP_MIN_TENSOR", lambda x, lo: x.clamp_min(lo), normals(S, (3, 1)),
     lambda v, x, lo: [v * (x >= lo), unbroadcast(v * (x < lo), lo.shape)])
case("clamp_max_tensor_in_place", "CLAMP_MAX_TENSOR", lambda x, hi: (x * 1).clamp_max_(hi),
     normals(S, S), lambda v, x, hi: [v * (x <= hi), v * (x > hi)])
case("where", "WHERE", lambda c, x, y: gt.where(c, x, y),
     lambda r: [Const(r.random(S) < 0.5), r.standard_normal((3, 1)), r.standard_normal((4,))],
     lambda v, c, x, y: [unbroadcast(v * c, x.shape), unbroadcast(v * ~c, y.shape)],
     order2="square")
case("where_scalar", "WHERE", lambda c, x: gt.where(c, x, 0.0),
     lambda r: [Const(r.random(S) < 0.5), r.standard_normal(S)],
     lambda v, c, x: [v * c], order2="square")
case("masked_fill", "MASKED_FILL", lambda x, m: x.masked_fill(m, 3.0),
     lambda r: [r.standard_normal(S), Const(np.array([True, False, True, False]))],
     lambda v, x, m: [v * ~m], order2="square")

# ------------------------------ matrix products ------------------------------
case("mm", "MM", lambda a, b: a.mm(b), normals((3, 4), (4, 2)),
     lambda v, a, b: [v @ b.T, a.T @ v])
case("addmm", "ADDMM", lambda c, a, b: c.addmm(a, b), normals((3, 2), (3, 4), (4, 2)),
     lambda v, c, a, b: [v, v @ b.T, a.T @ v])
case("addmm_scaled_bias_row", "ADDMM",
     lambda c, a, b: gt.addmm(c, a, b, beta=0.5, alpha=-2.0), normals((2,), (3, 4), (4, 2)),
     lambda v, c, a, b: [0.5 * v.sum(0), -2.0 * v @ b.T, -2.0 * a.T @ v])
case("linear_transposed_weight", "ADDMM",  # nn.Linear: the weight enters transposed
     lambda x, w, c: gt.nn.functional.linear(x, w, c), normals((3, 4), (2, 4), (2,)),
     lambda v, x, w, c: [v @ w, v.T @ x, v.sum(0)])
case("addmv", "ADDMV", lambda c, a, b: gt.addmv(c, a, b, beta=0.5, alpha=-2.0),
     normals((3,), (3, 4), (4,)), lambda v, c, a, b: [0.5 * v, -2.0 * np.outer(v, b), -2.0 * a.T @ v])
case("addmv_", "ADDMV", lambda c, a, b: (c * 1.0).addmv_(a, b), normals((3,), (3, 4), (4,)),
     lambda v, c, a, b: [v, np.outer(v, b), a.T @ v])
case("addr", "ADDR", lambda c, a, b: c.addr(a, b, alpha=3.0), normals((1, 4), (3,), (4,)),
     lambda v, c, a, b: [v.sum(0, keepdims=True), 3.0 * v @ b, 3.0 * v.T @ a])
case("addbmm", "ADDBMM", lambda c, a, b: gt.addbmm(c, a, b, beta=-1.0, alpha=0.5),
     normals((2,), (3, 2, 4), (3, 4, 2)),
     lambda v, c, a, b: [-v.sum(0), 0.5 * v @ np.swapaxes(b, 1, 2),
                         0.5 * np.swapaxes(a, 1, 2) @ v])
case("mv", "MV", lambda a, b: gt.mv(a, b), normals((3, 4), (4,)),
     lambda v, a, b: [np.outer(v, b), a.T @ v])
case("dot", "DOT", lambda a, b: a.dot(b), normals((4,), (4,)), lambda v, a, b: [v * b, v * a])
case("vdot", "VDOT", lambda a, b: gt.vdot(a, b), normals((4,), (4,)),
     lambda v, a, b: [v * b, v * a])
case("bmm", "BMM", lambda a, b: a.bmm(b), normals((2, 3, 4), (2, 4, 2)),
     lambda v, a, b: [v @ np.swapaxes(b, 1, 2), np.swapaxes(a, 1, 2) @ v])
# matmul with a batch or a vector is torch's ops: the larger operand folded for one mm / mv,
# or both expanded for one bmm, with torch's views around them
case("matmul_batch_broadcast", ("EXPAND", "UNSAFE_VIEW", "CLONE", "BMM"), lambda a, b: a @ b,
     normals((2, 1, 3, 4), (3, 4, 2)), matmul_vjp)
case("matmul_vec_batch", ("TRANSPOSE", "MV", "UNSAFE_VIEW"), lambda a, b: gt.matmul(a, b),
     normals((4,), (2, 4, 3)), matmul_vjp)
case("matmul_batch_vec", ("VIEW", "MV", "UNSAFE_VIEW"), lambda a, b: a.matmul(b),
     normals((2, 3, 4), (4,)), matmul_vjp)
case("matmul_mat_batch", ("T", "MM", "UNSAFE_VIEW", "CLONE"), lambda a, b: a @ b,
     normals((3, 4), (2, 4, 2)), matmul_vjp)
case("matmul_batch_mat", ("VIEW", "MM", "UNSAFE_VIEW"), lambda a, b: a @ b,
     normals((2, 3, 4), (4, 2)), matmul_vjp)
case("matmul_vec_mat", ("UNSQUEEZE", "MM", "SQUEEZE_"), lambda a, b: a @ b,
     normals((4,), (4, 2)), matmul_vjp)
case("matmul_equal_batch", ("EXPAND", "VIEW", "BMM", "UNSAFE_VIEW"), lambda a, b: a @ b,
     normals((2, 3, 4), (2, 4, 2)), matmul_vjp)
case("matmul_batch_of_one_squeezed", ("SQUEEZE_DIM", "MM"), lambda a, b: a @ b,
     normals((2, 3, 4), (1, 4, 2)), matmul_vjp)


def grouped_np(a, b, offs):
    """grouped_mm's groups in numpy: (output slice, a's part, b's part) per group."""
    starts = (0,) + tuple(offs[:-1])
    if a.ndim == 2 and b.ndim == 3:
        return [(np.s_[s:e], np.s_[s:e], np.s_[g]) for g, (s, e) in enumerate(zip(starts, offs))]
    if a.ndim == 3:
        return [(np.s_[:, s:e], np.s_[g], np.s_[:, s:e])
                for g, (s, e) in enumerate(zip(starts, offs))]
    return [(np.s_[g], np.s_[:, s:e], np.s_[s:e]) for g, (s, e) in enumerate(zip(starts, offs))]


def grouped_mm_vjp(offs):
    def vjp(v, a, b):
        ga, gb = np.zeros_like(a), np.zeros_like(b)
        for out, pa, pb in grouped_np(a, b, offs):
            ga[pa] += v[out] @ b[pb].T
            gb[pb] += a[pa].T @ v[out]
        return [ga, gb]
    return vjp


# F.grouped_mm's four layouts (the row in float64: torch's public op takes float32 and less);
# an empty group (2, 2) and rows past the last group get no gradient
for layout, shapes, offs in [("2d_3d", ((6, 3), (3, 3, 2)), (2, 2, 5)),
                             ("3d_2d", ((2, 3, 4), (4, 5)), (2, 5)),
                             ("2d_2d", ((3, 5), (5, 2)), (1, 4)),
                             ("3d_3d", ((2, 3, 4), (2, 4, 2)), None)]:
    case(f"grouped_mm_{layout}", "GROUPED_MM",
         functools.partial(lambda a, b, offs: D.GROUPED_MM(a, b, offs), offs=offs),
         normals(*shapes),
         (lambda v, a, b: [v @ np.swapaxes(b, 1, 2), np.swapaxes(a, 1, 2) @ v])
         if offs is None else grouped_mm_vjp(offs))

# ------------------------------ reductions ------------------------------
S3 = (2, 3, 4)
case("sum", "SUM", lambda x: x.sum(), normal(*S3), lambda v, x: [np.broadcast_to(v, x.shape)],
     order2="square")
case("sum_dim", "SUM_DIM", lambda x: x.sum((0, 2)), normal(*S3),
     lambda v, x: [restore(v, x.shape, (0, 2), False)], order2="square")
case("sum_dim_keepdim", "SUM_DIM", lambda x: gt.sum(x, -1, keepdim=True), normal(*S3),
     lambda v, x: [restore(v, x.shape, -1, True)], order2="square")
case("mean", "MEAN", lambda x: x.mean(), normal(*S3), lambda v, x: [np.full(x.shape, v / 24)],
     order2="square")
case("mean_dim", "MEAN_DIM", lambda x: x.mean(1), normal(*S3),
     lambda v, x: [restore(v, x.shape, 1, False) / 3], order2="square")
case("mean_dims_keepdim", "MEAN_DIM", lambda x: x.mean((0, -1), keepdim=True), normal(*S3),
     lambda v, x: [restore(v, x.shape, (0, 2), True) / 8], order2="square")
case("var", "VAR", lambda x: x.var(), normal(*S),
     lambda v, x: [v * 2 * (x - x.mean()) / (x.size - 1)])
case("var_dim", "VAR", lambda x: x.var(1), normal(*S3),
     lambda v, x: [restore(v, x.shape, 1, False) * 2 * (x - x.mean(1, keepdims=True)) / 2])
case("var_dims_correction0", "VAR", lambda x: x.var((0, 2), correction=0, keepdim=True),
     normal(*S3),
     lambda v, x: [v * 2 * (x - x.mean((0, 2), keepdims=True)) / 8])
case("std", "STD", lambda x: x.std(), normal(*S),
     lambda v, x: [v * (x - x.mean()) / ((x.size - 1) * x.std(ddof=1))])
case("std_dim", "STD", lambda x: x.std(2, keepdim=True, unbiased=False), normal(*S3),
     lambda v, x: [v * (x - x.mean(2, keepdims=True)) / (4 * x.std(2, keepdims=True))])
case("prod", "PROD", lambda x: x.prod(), lambda r: [signed(r, S)],
     lambda v, x: [v * np.prod(x) / x])
case("prod_dim", "PROD_DIM", lambda x: x.prod(1), lambda r: [signed(r, S3)],
     lambda v, x: [restore(v, x.shape, 1, False) * np.prod(x, 1, keepdims=True) / x])
case("prod_dim_keepdim", "PROD_DIM", lambda x: gt.prod(x, -1, keepdim=True),
     lambda r: [signed(r, S3)], lambda v, x: [v * np.prod(x, -1, keepdims=True) / x])


def _one_hot_at(x, flat_index, v):
    g = np.zeros(x.size)
    g[flat_index] = v
    return g.reshape(x.shape)


case("max", "MAX", lambda x: x.max(), normal(*S), lambda v, x: [_one_hot_at(x, x.argmax(), v)])
case("min", "MIN", lambda x: gt.min(x), normal(*S), lambda v, x: [_one_hot_at(x, x.argmin(), v)])


def _select_vjp(arg):
    def vjp(v, x, dim, keepdim):
        idx = np.expand_dims(arg(x, axis=dim), dim)
        g = np.zeros_like(x)
        np.put_along_axis(g, idx, v if keepdim else np.expand_dims(v, dim), dim)
        return [g]
    return vjp


case("max_dim", "MAX_DIM", lambda x: x.max(1).values, normal(*S3),
     lambda v, x: _select_vjp(np.argmax)(v, x, 1, False))
case("max_dim_keepdim", "MAX_DIM", lambda x: gt.max(x, -1, keepdim=True)[0], normal(*S3),
     lambda v, x: _select_vjp(np.argmax)(v, x, 2, True))
case("min_dim", "MIN_DIM", lambda x: x.min(0).values, normal(*S3),
     lambda v, x: _select_vjp(np.argmin)(v, x, 0, False))


def _amax_vjp(fn, dims, keepdim):
    def vjp(v, x):
        m = restore(fn(x, axis=norm_dims(dims, x.ndim), keepdims=keepdim), x.shape, dims,
                    keepdim)
        mask = x == m
        count = mask.sum(axis=norm_dims(dims, x.ndim), keepdims=True)
        return [restore(v, x.shape, dims, keepdim) * mask / count]
    return vjp


case("amax", "AMAX", lambda x: x.amax(1), normal(*S3), _amax_vjp(np.amax, 1, False))
case("amax_all", "AMAX", lambda x: x.amax(), normal(*S), _amax_vjp(np.amax, None, False))
case("amin", "AMIN", lambda x: x.amin((0, 2), keepdim=True), normal(*S3),
     _amax_vjp(np.amin, (0, 2), True))
case("logsumexp", "LOGSUMEXP", lambda x: x.logsumexp(1), normal(*S3),
     lambda v, x: [restore(v, x.shape, 1, False) * np.exp(x - np_logsumexp(x, (1,)))])
case("logsumexp_dims", "LOGSUMEXP", lambda x: gt.logsumexp(x, (0, 2), keepdim=True),
     normal(*S3), lambda v, x: [v * np.exp(x - np_logsumexp(x, (0, 2)))])
case("norm", "NORM", lambda x: x.norm(), normal(*S), lambda v, x: [v * x / np.sqrt((x * x).sum())])
# (torch.frobenius_norm warns of its deprecation, as torch's: tested in parity)
case("frobenius_norm", "NORM_SCALAROPT_DIM", lambda x: gt.frobenius_norm(x, [1], True), normal(*S),
     lambda v, x: [v * x / np.sqrt((x * x).sum(1, keepdims=True))])
case("frobenius_norm_all", "NORM_SCALAROPT_DIM", lambda x: gt.frobenius_norm(x, (1, 0), False),
     normal(*S), lambda v, x: [v * x / np.sqrt((x * x).sum())])


def _renorm_vjp(v, x, p, dim, maxnorm):
    """d(x * maxnorm / (|x|_p + 1e-7))^T v on the slices whose norm exceeds maxnorm, v
    elsewhere."""
    dims = tuple(d for d in range(x.ndim) if d != dim)
    norm = (np.abs(x) ** p).sum(dims, keepdims=True) ** (1 / p)
    factor = maxnorm / (norm + 1e-7)
    d_norm = np.sign(x) * np.abs(x) ** (p - 1) / norm ** (p - 1)
    scaled = factor * v - factor / (norm + 1e-7) * (x * v).sum(dims, keepdims=True) * d_norm
    return [np.where(norm > maxnorm, scaled, v)]


# rows 0 and 2 below maxnorm, rows 1 and 3 above it
_RENORM_SCALES = np.array([[0.1], [3.0], [0.2], [2.0]])
case("renorm", "RENORM", lambda x: gt.renorm(x, 3, 0, 1.0),
     lambda r: [r.standard_normal((4, 3)) * _RENORM_SCALES],
     lambda v, x: _renorm_vjp(v, x, 3, 0, 1.0))
case("renorm_2", "RENORM", lambda x: x.renorm(2, 1, 0.5),
     lambda r: [r.standard_normal((3, 4)) * _RENORM_SCALES.T],
     lambda v, x: _renorm_vjp(v, x, 2, 1, 0.5))
case("norm_dim", "NORM", lambda x: x.norm(dim=1), normal(*S3),
     lambda v, x: [restore(v, x.shape, 1, False) * x / np.sqrt((x * x).sum(1, keepdims=True))])


def _p_norm_vjp(p, dims, keepdim=False):
    """d ||x||_p over dims: sign(x) |x|^(p-1) / ||x||^(p-1) (p finite, x away from 0), and for
    p = +-inf sign(x) where |x| is the extreme, shared among ties."""
    def vjp(v, x):
        v = restore(v, x.shape, dims, keepdim)
        a = np.abs(x)
        if np.isinf(p):
            m = (np.amax if p > 0 else np.amin)(a, axis=dims, keepdims=True)
            return [v * np.sign(x) * (a == m) / (a == m).sum(dims, keepdims=True)]
        n = (a ** p).sum(dims, keepdims=True) ** (1 / p)
        return [v * np.sign(x) * a ** (p - 1) / n ** (p - 1)]
    return vjp


case("norm_p1_dim", "NORM", lambda x: x.norm(1, dim=1), normal(*S3), _p_norm_vjp(1, (1,)))
case("norm_p3", "NORM", lambda x: gt.norm(x, 3), normal(*S), _p_norm_vjp(3, (0, 1)))
case("norm_p1_5_keepdim", "NORM", lambda x: gt.linalg.vector_norm(x, 1.5, (0, 2), True),
     normal(*S3), _p_norm_vjp(1.5, (0, 2), True))
case("norm_p0_5", "NORM", lambda x: x.norm(0.5, dim=0),
     lambda r: [away_from(r, S, margin=0.3)], _p_norm_vjp(0.5, (0,)))
case("norm_scalar_dim_op", "NORM_SCALAROPT_DIM",
     lambda x: call(D.NORM_SCALAROPT_DIM, (x,), (3.0, (1,), False)), normal(*S3),
     _p_norm_vjp(3, (1,)))
case("norm_p_neg1", "NORM", lambda x: gt.linalg.vector_norm(x, -1, -1),
     lambda r: [away_from(r, S, margin=0.3)], _p_norm_vjp(-1, (1,)))
case("norm_inf_dim", "NORM", lambda x: gt.linalg.vector_norm(x, float("inf"), dim=-1),
     normal(*S3), _p_norm_vjp(np.inf, (2,)))
case("norm_neg_inf", "NORM", lambda x: gt.norm(x, -float("inf")), normal(*S),
     _p_norm_vjp(-np.inf, (0, 1)))
# the matrix 1-norm (largest column sum of |x|) and inf-norm (largest row sum), as torch's
case("linalg_matrix_norm_1", ("NORM", "AMAX"), lambda x: gt.linalg.matrix_norm(x, 1), normal(*S),
     lambda v, x: [v * np.sign(x) * (np.arange(4) == np.abs(x).sum(0).argmax())])
case("linalg_norm_neg_inf_dims", ("NORM", "AMIN"),
     lambda x: gt.linalg.norm(x, -float("inf"), dim=(2, 0), keepdim=True), normal(*S3),
     lambda v, x: [v * np.sign(x) * (np.abs(x).sum(0, keepdims=True) == np.abs(x).sum(
         0, keepdims=True).min(2, keepdims=True))])
case("softmax", "SOFTMAX", lambda x: x.softmax(1), normal(*S3),
     lambda v, x: [np_softmax(x, 1) * (v - (v * np_softmax(x, 1)).sum(1, keepdims=True))])
case("softmax_last", "SOFTMAX", lambda x: gt.softmax(x, -1), normal(*S),
     lambda v, x: [np_softmax(x, 1) * (v - (v * np_softmax(x, 1)).sum(1, keepdims=True))])
case("log_softmax", "LOG_SOFTMAX", lambda x: x.log_softmax(0), normal(*S3),
     lambda v, x: [v - np_softmax(x, 0) * v.sum(0, keepdims=True)])

# ------------------------------ shapes ------------------------------
case("view", "VIEW", lambda x: x.view(4, 3), normal(*S), lambda v, x: [v.reshape(x.shape)],
     order2="square")
case("view_infer", "VIEW", lambda x: x.view(-1), normal(*S3), lambda v, x: [v.reshape(x.shape)],
     order2="square")
case("flatten", "VIEW", lambda x: x.flatten(1), normal(*S3), lambda v, x: [v.reshape(x.shape)],
     order2="square")
case("reshape_copy", ("T", "CLONE", "UNSAFE_VIEW"), lambda x: x.t().reshape(-1), normal(*S),
     lambda v, x: [v.reshape(x.T.shape).T], order2="square")
case("squeeze", "SQUEEZE", lambda x: x.squeeze(), normal(3, 1, 4, 1),
     lambda v, x: [v.reshape(x.shape)], order2="square")
case("squeeze_dim", "SQUEEZE_DIM", lambda x: x.squeeze(1), normal(3, 1, 4),
     lambda v, x: [v.reshape(x.shape)], order2="square")
case("squeeze_dims", "SQUEEZE_DIMS", lambda x: x.squeeze((1, 3)), normal(3, 1, 4, 1),
     lambda v, x: [v.reshape(x.shape)], order2="square")
case("unsqueeze", "UNSQUEEZE", lambda x: x.unsqueeze(1), normal(*S),
     lambda v, x: [v.squeeze(1)], order2="square")
case("getitem_none", "UNSQUEEZE", lambda x: x[:, None], normal(*S),
     lambda v, x: [v[:, 0]], order2="square")
case("transpose", "TRANSPOSE", lambda x: x.transpose(0, 2), normal(*S3),
     lambda v, x: [np.swapaxes(v, 0, 2)], order2="square")
case("mT", "TRANSPOSE", lambda x: x.mT, normal(*S3),
     lambda v, x: [np.swapaxes(v, -1, -2)], order2="square")
case("t", "T", lambda x: x.t(), normal(*S), lambda v, x: [v.T], order2="square")
case("permute", "PERMUTE", lambda x: x.permute(2, 0, 1), normal(*S3),
     lambda v, x: [np.transpose(v, (1, 2, 0))], order2="square")
case("T_property", "PERMUTE", lambda x: x.T, normal(*S3),
     lambda v, x: [np.transpose(v, (2, 1, 0))], order2="square")
case("expand", "EXPAND", lambda x: x.expand(2, 3, 4), normal(3, 1),
     lambda v, x: [unbroadcast(v, x.shape)], order2="square")
case("expand_minus_one", "EXPAND", lambda x: x.expand(2, -1, 4), normal(1, 3, 1),
     lambda v, x: [unbroadcast(v, x.shape)], order2="square")

# ------------------------------ indexing, joining, splitting ------------------------------


def _placed(shape, index, v):
    g = np.zeros(shape)
    g[index] = v
    return g


def _added(shape, index, v):
    g = np.zeros(shape)
    np.add.at(g, index, v)
    return g


# the backward-of-backward ops (SELECT_BACKWARD, ...) are reached by the second-order check
# of the squared output: the first backward then builds them with create_graph
case("select", ("SELECT", "SELECT_BACKWARD"), lambda x: x.select(1, 2), normal(*S),
     lambda v, x: [_placed(x.shape, (slice(None), 2), v)], order2="square")
case("getitem_int", "SELECT", lambda x: x[1], normal(*S3),
     lambda v, x: [_placed(x.shape, 1, v)], order2="square")
case("getitem_negative_int", "SELECT", lambda x: x[:, -1], normal(*S3),
     lambda v, x: [_placed(x.shape, (slice(None), -1), v)], order2="square")
case("unbind", "UNBIND", lambda x: x.unbind(1), normal(*S),
     lambda v, x: [np.stack(v, axis=1)], order2="square")
case("slice", ("SLICE", "SLICE_BACKWARD"), lambda x: x[1:3], normal(*S),
     lambda v, x: [_placed(x.shape, slice(1, 3), v)], order2="square")
case("slice_step", "SLICE", lambda x: x[:, ::2], normal(*S3),
     lambda v, x: [_placed(x.shape, (slice(None), slice(None, None, 2)), v)], order2="square")
case("narrow", "SLICE", lambda x: x.narrow(-1, 1, 2), normal(*S),
     lambda v, x: [_placed(x.shape, (slice(None), slice(1, 3)), v)], order2="square")
case("index_list", ("INDEX", "INDEX_BACKWARD"), lambda x: x[[0, 2, 0]], normal(*S),
     lambda v, x: [_added(x.shape, np.array([0, 2, 0]), v)], order2="square")
# nn.Embedding: the picked rows' gradients summed into weight (padding_idx's row gets none,
# by design, so not what central differences see: tests/engine/test_nn.py checks it; here unpicked)
case("embedding", ("EMBEDDING", "EMBEDDING_DENSE_BACKWARD"),
     lambda w, i: gt.nn.functional.embedding(i, w, padding_idx=3),
     lambda r: [r.standard_normal((5, 3)), Const(np.array([[1, 2], [0, 1]]))],
     lambda v, w, i: [_added(w.shape, i, v)], order2="square")
case("embedding_no_padding", "EMBEDDING", lambda w, i: gt.nn.functional.embedding(i, w),
     lambda r: [r.standard_normal((4, 2)), Const(np.array([3, 3, 0]))],
     lambda v, w, i: [_added(w.shape, i, v)], order2="square")
# nn.EmbeddingBag: bags cut at offsets (an empty one included), the padding_idx row left out
_BAG_INDICES, _BAG_OFFSETS = np.array([0, 2, 2, 5, 1, 4]), np.array([0, 2, 2])


def _bag_vjp(mode, padding=-1, with_weights=False):
    def vjp(v, w, *psw):
        bag = np.searchsorted(_BAG_OFFSETS, np.arange(6), side="right") - 1
        kept = _BAG_INDICES != padding
        rows = w[_BAG_INDICES] * (psw[0][:, None] if with_weights else 1)
        g = np.zeros_like(w)
        for b in range(3):
            members = np.nonzero((bag == b) & kept)[0]
            if mode == "max" and members.size:
                first = rows[members].argmax(0)
                np.add.at(g, (_BAG_INDICES[members][first], np.arange(w.shape[1])), v[b])
            elif members.size:
                scale = 1 / members.size if mode == "mean" else 1
                weights = psw[0][members] if with_weights else np.ones(members.size)
                np.add.at(g, _BAG_INDICES[members], scale * weights[:, None] * v[b])
        if not with_weights:
            return [g]
        return [g, (v[bag] * w[_BAG_INDICES]).sum(-1) * kept]
    return vjp


def _bag(mode, **kw):
    return lambda w, *psw: gt.nn.functional.embedding_bag(
        gt.tensor(_BAG_INDICES), w, gt.tensor(_BAG_OFFSETS), mode=mode,
        per_sample_weights=psw[0] if psw else None, **kw)


case("embedding_bag_sum_weighted", "EMBEDDING_BAG", _bag("sum", padding_idx=2),
     normals((6, 3), (6,)), _bag_vjp("sum", 2, True), order2=None, forward_ad=False)
case("embedding_bag_mean", "EMBEDDING_BAG", _bag("mean"), normal(6, 3), _bag_vjp("mean"),
     order2=None, forward_ad=False)
case("embedding_bag_max", "EMBEDDING_BAG", _bag("max", padding_idx=5), normal(6, 3),
     _bag_vjp("max", 5), order2=None, forward_ad=False)
case("index_tensor_2d", "INDEX", lambda x, i: x[i], lambda r: [
    r.standard_normal((4, 3)), Const(np.array([[0, 3], [3, 3]]))],
     lambda v, x, i: [_added(x.shape, i, v)], order2="square")
case("index_mixed_slice", "INDEX", lambda x: x[:, [1, 1, 2]], normal(*S3),
     lambda v, x: [_added(x.shape, (slice(None), np.array([1, 1, 2])), v)], order2="square")
case("index_pairs", "INDEX", lambda x: x[[0, 1, 0], [2, 2, 2]], normal(*S),
     lambda v, x: [_added(x.shape, (np.array([0, 1, 0]), np.array([2, 2, 2])), v)],
     order2="square")
case("index_bool_mask", "INDEX", lambda x, m: x[m],
     lambda r: [r.standard_normal(S), Const(r.random(S) < 0.5)],
     lambda v, x, m: [_placed(x.shape, m, v)], order2="square")
# a viewable reshape of a non-contiguous tensor is torch's _reshape_alias
case("reshape_alias", "RESHAPE_ALIAS", lambda x: x[:, :1].reshape(3), normal(*S),
     lambda v, x: [_placed(x.shape, (slice(None), 0), v)], order2="square")
case("alias", "ALIAS", lambda x: x[...], normal(*S), lambda v, x: [v], order2="square")
# torch's rule: the int is a select, so the list's dim stays in place ((3, 2), not numpy's (2, 3))
case("index_int_slice_list", "INDEX", lambda x: x[0, :, [1, 0]], normal(2, 3, 4),
     lambda v, x: [_added(x.shape, (0, slice(None), np.array([1, 0])), v.T)], order2="square")
case("diagonal", ("DIAGONAL", "DIAGONAL_BACKWARD"), lambda x: x.diagonal(), normal(*S),
     lambda v, x: [_placed(x.shape, (np.arange(3), np.arange(3)), v)], order2="square")
case("diagonal_offset_dims", "DIAGONAL", lambda x: gt.diagonal(x, -1, 2, 0), normal(*S3),
     lambda v, x: [_added(x.shape, (np.arange(2), slice(None), np.arange(1, 3)), v.T)],
     order2="square")
# the three backward ops as functions of their own (the gradient they spread out)
case("select_backward_op", "SELECT_BACKWARD",
     lambda g: call(D.SELECT_BACKWARD, (g,), ((3, 4), 1, 2)), normal(3),
     lambda v, g: [v[:, 2]], order2="square")
case("slice_backward_op", "SLICE_BACKWARD",
     lambda g: call(D.SLICE_BACKWARD, (g,), ((3, 5), 1, 0, 5, 2)), normal(3, 3),
     lambda v, g: [v[:, 0:5:2]], order2="square")
case("diagonal_backward_op", "DIAGONAL_BACKWARD",
     lambda g: call(D.DIAGONAL_BACKWARD, (g,), ((3, 4), 1, 0, 1)), normal(3),
     lambda v, g: [np.diagonal(v, 1)], order2="square")
case("leaky_relu_backward_op", "LEAKY_RELU_BACKWARD",
     lambda g, r: call(D.LEAKY_RELU_BACKWARD, (g, r), (0.1, False)),
     lambda r: [r.standard_normal(S), away_from(r, S)],
     lambda v, g, r: [np.where(r > 0, v, 0.1 * v), np.zeros_like(r)])
case("threshold_backward_op", "THRESHOLD_BACKWARD",
     lambda g, r: call(D.THRESHOLD_BACKWARD, (g, r), (0,)),
     lambda r: [r.standard_normal(S), away_from(r, S)],
     lambda v, g, r: [v * (r > 0), np.zeros_like(r)], order2="square")
case("index_backward_op", "INDEX_BACKWARD",
     lambda g: call(D.INDEX_BACKWARD, (g,), ((3, 4), (np.array([2, 0, 2]),))),
     normal(3, 4), lambda v, g: [v[np.array([2, 0, 2])]], order2="square")

GATHER_INDEX = np.array([[0, 3, 3, 1, 0], [2, 2, 2, 2, 1], [1, 0, 3, 1, 3]])
case("gather", "GATHER", lambda x, i: x.gather(1, i), lambda r: [r.standard_normal(S),
                                                              Const(GATHER_INDEX)],
     lambda v, x, i: [at_index(x.shape, 1, i, v)], order2="square")
case("gather_dim0", "GATHER", lambda x, i: gt.gather(x, 0, i),
     lambda r: [r.standard_normal(S), Const(np.array([[2, 0, 1, 2], [0, 0, 2, 1]]))],
     lambda v, x, i: [at_index(x.shape, 0, i, v)], order2="square")
SCATTER_INDEX = np.array([[3, 0], [1, 2], [0, 3]])  # distinct within each row


def _scatter_vjp(v, x, i, src):
    written = at_index(x.shape, 1, i, np.ones(i.shape), assign=True).astype(bool)
    return [np.where(written, 0, v), gather_np(v, 1, i)]


case("scatter", "SCATTER", lambda x, i, s: x.scatter(1, i, s),
     lambda r: [r.standard_normal(S), Const(SCATTER_INDEX), r.standard_normal((3, 2))],
     _scatter_vjp, order2="square")
case("scatter_add", "SCATTER_ADD", lambda x, i, s: x.scatter_add(1, i, s),
     lambda r: [r.standard_normal(S), Const(np.array([[3, 3], [1, 2], [0, 3]])),
                r.standard_normal((3, 2))],
     lambda v, x, i, s: [v, gather_np(v, 1, i)], order2="square")
case("cat", "CAT", lambda a, b, c: gt.cat([a, b, c], dim=1), normals((3, 1), (3, 4), (3, 2)),
     lambda v, a, b, c: [v[:, :1], v[:, 1:5], v[:, 5:]], order2="square")
case("cat_dim0", "CAT", lambda a, b: gt.cat((a, b)), normals((2, 3), (1, 3)),
     lambda v, a, b: [v[:2], v[2:]], order2="square")


def _block_diag_vjp(v, a, b, c):
    return [v[:2, :4], v[2, 4:7], v[3, 7]]


case("block_diag", "BLOCK_DIAG", lambda a, b, c: gt.block_diag(a, b, c),
     normals((2, 4), (3,), ()), _block_diag_vjp, order2="square")
case("trace", ("TRACE", "DIAGONAL_BACKWARD"), lambda x: x.trace(), normal(*S),
     lambda v, x: [v * np.eye(*S)], order2="square")
case("trace_tall", ("TRACE", "DIAGONAL_BACKWARD"), lambda x: gt.trace(x), normal(4, 2),
     lambda v, x: [v * np.eye(4, 2)], order2="square")
case("stack", "STACK", lambda a, b: gt.stack([a, b], dim=1), normals(S, S),
     lambda v, a, b: [v[:, 0], v[:, 1]], order2="square")
case("stack_last", "STACK", lambda a, b, c: gt.stack([a, b, c], -1), normals(S, S, S),
     lambda v, a, b, c: [v[..., 0], v[..., 1], v[..., 2]], order2="square")
case("split", "SPLIT", lambda x: x.split(2, dim=1), normal(3, 5),
     lambda v, x: [np.concatenate(v, axis=1)], order2="square")
case("split_one_output_used", "SPLIT", lambda x: x.split(2, dim=1)[1], normal(3, 5),
     lambda v, x: [_placed(x.shape, (slice(None), slice(2, 4)), v)], order2="square")
case("chunk", "SPLIT", lambda x: x.chunk(3), normal(5, 2),
     lambda v, x: [np.concatenate(v, axis=0)], order2="square")
case("split_with_sizes", "SPLIT_WITH_SIZES", lambda x: gt.split(x, [1, 3], dim=-1), normal(*S),
     lambda v, x: [np.concatenate(v, axis=1)], order2="square")


# ------------------------- in place (call_inplace), views, setitem -------------------------
# In-place ops write into a non-leaf (a leaf that requires grad may not be written to) whose
# producer did not save its output (sin, mul by a number); what was overwritten gets zero.
def _seeded(fn):
    """The random in-place fills made deterministic, so central differences see one function."""
    def wrapped(*xs):
        gt.manual_seed(1234)
        return fn(*xs)
    return wrapped


case("mul_", "MUL", lambda x, y: (x * 1.0).mul_(y), normals(S, (4,)),
     lambda v, x, y: [v * y, unbroadcast(v * x, y.shape)])
case("add_alpha_", "ADD", lambda x, y: x.sin().add_(y, alpha=2.0), normals(S, (3, 1)),
     lambda v, x, y: [v * np.cos(x), unbroadcast(2.0 * v, y.shape)])
case("div_", "DIV", lambda x, y: x.sin().div_(y), lambda r: [r.standard_normal(S),
                                                          signed(r, S)],
     lambda v, x, y: [v * np.cos(x) / y, -v * np.sin(x) / y ** 2])
case("pow_", "POW", lambda x: (x * x + 1).pow_(1.5), normal(*S),
     lambda v, x: [v * 1.5 * np.sqrt(x * x + 1) * 2 * x])
case("exp_", "EXP", lambda x: x.sin().exp_(), normal(*S),
     lambda v, x: [v * np.exp(np.sin(x)) * np.cos(x)])
case("tanh_", "TANH", lambda x: (x * 2.0).tanh_(), normal(*S),
     lambda v, x: [2.0 * v * (1 - np.tanh(2 * x) ** 2)])
case("relu_", "RELU", lambda x: (x * 1.0).relu_(), lambda r: [away_from(r, S)],
     lambda v, x: [v * (x > 0)])
case("clamp_", "CLAMP", lambda x: (x * 1.0).clamp_(-0.5, 0.5),
     lambda r: [away_from(r, S, (-0.5, 0.5), 0.1)],
     lambda v, x: [v * ((x >= -0.5) & (x <= 0.5))])
case("masked_fill_", "MASKED_FILL", lambda x, m: x.sin().masked_fill_(m, 0.0),
     lambda r: [r.standard_normal(S), Const(r.random(S) < 0.5)],
     lambda v, x, m: [v * np.cos(x) * ~m])
case("triu_", "TRIU", lambda x: x.sin().triu_(1), normal(*S),
     lambda v, x: [np.triu(v, 1) * np.cos(x)])
case("tril_", "TRIL", lambda x: (x * 2.0).tril_(), normal(*S), lambda v, x: [2.0 * np.tril(v)])
case("scatter_add_", "SCATTER_ADD",
     lambda x, s: x.sin().scatter_add_(1, gt.tensor([[0, 1], [3, 3], [2, 0]]), s),
     normals(S, (3, 2)), lambda v, x, s: [v * np.cos(x), np.take_along_axis(
         v, np.array([[0, 1], [3, 3], [2, 0]]), 1)])
case("zero_", "ZERO", lambda x: x.sin().zero_().add_(x), normal(*S), lambda v, x: [v],
     order2="square")
case("fill_", "FILL", lambda x: x.sin().fill_(2.0) * x, normal(*S), lambda v, x: [2.0 * v],
     order2="square")
case("fill_tensor", "FILL_TENSOR", lambda x, y: x.sin().fill_(y.sum()) * x, normals(S, (2,)),
     lambda v, x, y: [y.sum() * v, np.full(y.shape, (v * x).sum())], order2="square")
case("copy_", "COPY", lambda x, y: x.sin().copy_(y) + x, normals(S, (4,)),
     lambda v, x, y: [v, unbroadcast(v, y.shape)], order2="square")
def _filled(method, *args):
    """The values the seeded random fill writes (d(fill(y) * x)/dx is v times them)."""
    def values(shape):
        with gt.no_grad():
            return _seeded(lambda: getattr(gt.zeros(shape, dtype=gt.float64), method)(*args))()
    return values


case("normal_", "NORMAL", _seeded(lambda x: x.sin().normal_(0.5, 2.0) * x), normal(*S),
     lambda v, x: [v * _filled("normal_", 0.5, 2.0)(x.shape)._data], order2="square")
case("uniform_", "UNIFORM", _seeded(lambda x: x.sin().uniform_(-1.0, 3.0) * x), normal(*S),
     lambda v, x: [v * _filled("uniform_", -1.0, 3.0)(x.shape)._data], order2="square")
# torch's other random fills, the same way
# (random_()'s range is the dtype's: its draws differ in float32, so they are multiplied by 0)
case("random_fill", "RANDOM", _seeded(lambda x: x.sin().random_() * 0.0 + x), normal(*S),
     lambda v, x: [v], order2="square")
for _fill, _row, _args in (("random_", "RANDOM_TO", (7,)),
                           ("random_", "RANDOM_FROM_TO", (-3, 4)),
                           ("log_normal_", "LOG_NORMAL", (0.5, 0.3)),
                           ("exponential_", "EXPONENTIAL", (2.0,)),
                           ("geometric_", "GEOMETRIC", (0.4,)),
                           ("cauchy_", "CAUCHY", (1.0, 0.5))):
    case(f"{_row.lower()}_fill", _row,
         _seeded(lambda x, _fill=_fill, _args=_args: getattr(x.sin(), _fill)(*_args) * x),
         normal(*S), lambda v, x, _fill=_fill, _args=_args: [
             v * _filled(_fill, *_args)(x.shape)._data], order2="square")


def _setitem_basic(x, z):
    y = x * 1.0
    y[1] = z
    return y


def _setitem_advanced(x, z):
    y = x * 1.0
    y[[2, 0]] = z
    return y


def _through_view(x, w):
    y = x.sin()
    r = y[:, 1:3]
    r.mul_(w)  # through a view: y's history is rewritten (CopySlices), r's regenerated
    return y, r * 1.0


def _through_view_vjp(v, x, w):
    (v1, v2), s, c = v, np.sin(x), np.cos(x)
    gx = v1 * c
    gx[:, 1:3] = (v1[:, 1:3] + v2) * w * c[:, 1:3]
    return [gx, unbroadcast((v1[:, 1:3] + v2) * s[:, 1:3], w.shape)]


case("setitem_basic", "COPY", _setitem_basic, normals(S, (4,)),
     lambda v, x, z: [v * (np.arange(3) != 1)[:, None], v[1]],
     order2="square")
case("setitem_advanced", "INDEX_PUT", _setitem_advanced, normals(S, (4,)),
     lambda v, x, z: [v * (np.arange(3) == 1)[:, None], v[[2, 0]].sum(0)], order2="square")
case("inplace_through_view", ("AS_STRIDED", "MUL"), _through_view, normals(S, (3, 1)),
     _through_view_vjp)
# index_put with accumulate (repeated indices add up) and as_strided, as functions of their own
case("index_put_accumulate_op", "INDEX_PUT",
     lambda x, z: call(D.INDEX_PUT, (x, z), ((np.array([1, 1, 0]),), True)),
     normals(S, (4,)), lambda v, x, z: [v, unbroadcast(v[[1, 1, 0]], z.shape)],
     order2="square")
# compressed sparse layouts: a CSR tensor built from its values (rows 0, 1, 1; columns 2, 0,
# 3), then its dense values (to_dense's gradient: the specified elements'); a dense matrix
# converted (every element specified: no zeros), its values picked, or its dense values back
SPARSE_ROWS, SPARSE_COLS = np.array([0, 1, 1]), np.array([2, 0, 3])
case("sparse_csr_tensor_to_dense", ("SPARSE_COMPRESSED_TENSOR", "TO_DENSE"),
     lambda v: gt.sparse_csr_tensor(gt.tensor([0, 1, 3]), gt.tensor(SPARSE_COLS), v,
                                    (2, 4)).to_dense(),
     normal(3), lambda V, v: [V[SPARSE_ROWS, SPARSE_COLS]], order2="square")
case("to_sparse_csr_values", ("TO_SPARSE_CSR", "VALUES"), lambda x: x.to_sparse_csr().values(),
     lambda r: [signed(r, S)], lambda v, x: [v.reshape(x.shape)], order2="square")
case("to_sparse_csc_values", ("TO_SPARSE_CSC", "VALUES"), lambda x: x.to_sparse_csc().values(),
     lambda r: [signed(r, S)], lambda v, x: [v.reshape(x.shape[::-1]).T], order2="square")
case("to_sparse_bsr_to_dense", ("TO_SPARSE_BSR", "TO_DENSE"),
     lambda x: x.to_sparse_bsr((1, 2)).to_dense(), lambda r: [signed(r, S)],
     lambda v, x: [v], order2="square")
case("to_sparse_bsc_to_dense", ("TO_SPARSE_BSC", "TO_DENSE"),
     lambda x: x.to_sparse_bsc((3, 2)).to_dense(), lambda r: [signed(r, S)],
     lambda v, x: [v], order2="square")
AS_STRIDED_INDICES = np.array([[0, 5, 5], [11, 2, 0]])
case("as_strided_op", "AS_STRIDED",
     lambda x: call(D.AS_STRIDED, (x,), ((2, 3), AS_STRIDED_INDICES)),
     normal(*S), lambda v, x: [_added((12,), AS_STRIDED_INDICES, v).reshape(x.shape)],
     order2="square")
# torch.as_strided: overlapping windows of the storage (element (i, j) at 1 + i + 2 j), each
# element's gradient summed over the windows that read it
OVERLAPPING_WINDOWS = 1 + np.arange(3)[:, None] + 2 * np.arange(3)
case("as_strided_view", "AS_STRIDED_VIEW", lambda x: x.as_strided((3, 3), (1, 2), 1), normal(*S),
     lambda v, x: [_added((12,), OVERLAPPING_WINDOWS, v).reshape(x.shape)], order2="square")


# ------------------------- activations (nn.functional's single nodes) -------------------------
_erf = np.vectorize(math.erf)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _gelu_tanh_grad(x):
    k, c = np.sqrt(2 / np.pi), 0.044715
    t = np.tanh(k * (x + c * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)


case("erf", "ERF", lambda x: x.erf(), normal(*S),
     lambda v, x: [v * 2 / np.sqrt(np.pi) * np.exp(-x * x)])
case("gelu", "GELU", lambda x: gt.nn.functional.gelu(x), normal(*S),
     lambda v, x: [v * (0.5 * (1 + _erf(x / np.sqrt(2))) + x * np.exp(-x * x / 2)
                        / np.sqrt(2 * np.pi))])
case("gelu_tanh", "GELU", lambda x: gt.nn.functional.gelu(x, approximate="tanh"), normal(*S),
     lambda v, x: [v * _gelu_tanh_grad(x)])
case("silu", "SILU", lambda x: gt.nn.functional.silu(x), normal(*S),
     lambda v, x: [v * _sigmoid(x) * (1 + x * (1 - _sigmoid(x)))])
case("softplus", "SOFTPLUS", lambda x: gt.nn.functional.softplus(x, beta=2, threshold=3),
     lambda r: [away_from(r, S, (1.5,), 0.1)],
     lambda v, x: [np.where(2 * x > 3, v, v * _sigmoid(2 * x))])
case("leaky_relu", "LEAKY_RELU", lambda x: gt.nn.functional.leaky_relu(x, 0.2),
     lambda r: [away_from(r, S)],
     lambda v, x: [v * np.where(x > 0, 1, 0.2)])
case("leaky_relu_inplace", "LEAKY_RELU_",
     lambda x: gt.nn.functional.leaky_relu(x * 1.0, 0.2, inplace=True),
     lambda r: [away_from(r, S)], lambda v, x: [v * np.where(x > 0, 1, 0.2)])
case("elu", "ELU", lambda x: gt.nn.functional.elu(x, 1.5), lambda r: [away_from(r, S)],
     lambda v, x: [v * np.where(x > 0, 1, 1.5 * np.exp(x))])
case("elu_inplace", "ELU_", lambda x: gt.nn.functional.elu(x * 1.0, 1.5, inplace=True),
     lambda r: [away_from(r, S)], lambda v, x: [v * np.where(x > 0, 1, 1.5 * np.exp(x))])
# the activations with torch nodes of their own (values kept off their kinks)
case("hardtanh", "HARDTANH", lambda x: gt.nn.functional.hardtanh(x, -0.5, 1.0),
     lambda r: [away_from(r, S, (-0.5, 1.0), 0.1)],
     lambda v, x: [v * ((x > -0.5) & (x < 1.0))])
case("relu6_inplace", "HARDTANH", lambda x: gt.nn.functional.relu6(x * 4.0, inplace=True),
     lambda r: [away_from(r, S, (0.0, 1.5), 0.1)],
     lambda v, x: [4.0 * v * ((x > 0) & (x < 1.5))])
case("hardsigmoid", "HARDSIGMOID", lambda x: gt.nn.functional.hardsigmoid(x * 3.0),
     lambda r: [away_from(r, S, (-1.0, 1.0), 0.1)],
     lambda v, x: [v * 3.0 * float(np.float32(1 / 6)) * ((x > -1) & (x < 1))])  # torch's 1.0f/6
case("hardswish", "HARDSWISH", lambda x: gt.nn.functional.hardswish(x * 3.0),
     lambda r: [away_from(r, S, (-1.0, 1.0), 0.1)],
     lambda v, x: [3.0 * v * np.where(x < -1, 0, np.where(x <= 1, x + 0.5, 1))])
case("mish", "MISH", lambda x: gt.nn.functional.mish(x * 2.0), normal(*S),
     lambda v, x: [2.0 * v * (np.tanh(np.logaddexp(0, 2 * x)) + 2 * x * _sigmoid(2 * x) * (
         1 - np.tanh(np.logaddexp(0, 2 * x)) ** 2))])
case("logsigmoid", "LOG_SIGMOID", lambda x: gt.nn.functional.logsigmoid(x * 3.0), normal(*S),
     lambda v, x: [3.0 * v * _sigmoid(-3 * x)])
case("prelu", "PRELU", lambda x, w: gt.nn.functional.prelu(x, w),
     lambda r: [away_from(r, (2, 3, 4)), r.uniform(0.1, 0.5, (3,))],
     lambda v, x, w: [np.where(x > 0, v, w[:, None] * v),
                      np.where(x > 0, 0, x * v).sum(axis=(0, 2))])
case("glu", "GLU", lambda x: gt.nn.functional.glu(x, 0), normal(4, 3),
     lambda v, x: [np.concatenate([v * _sigmoid(x[2:]), v * x[:2] * _sigmoid(x[2:]) * (
         1 - _sigmoid(x[2:]))])])
# the shrinks, threshold, celu and rrelu (nodes of their own in torch)
case("hardshrink", "HARDSHRINK", lambda x: gt.nn.functional.hardshrink(x, 0.5),
     lambda r: [away_from(r, S, (-0.5, 0.5), 0.1)], lambda v, x: [v * (np.abs(x) > 0.5)])
case("softshrink", "SOFTSHRINK", lambda x: gt.nn.functional.softshrink(x * 2.0, 0.5),
     lambda r: [away_from(r, S, (-0.25, 0.25), 0.1)], lambda v, x: [2.0 * v * (np.abs(x) > 0.25)])
case("threshold", "THRESHOLD", lambda x: gt.nn.functional.threshold(x, 0.1, 2.0),
     lambda r: [away_from(r, S, (0.1,), 0.1)], lambda v, x: [v * (x > 0.1)])
case("threshold_", "THRESHOLD_", lambda x: gt.nn.functional.threshold_(x * 1.0, 0.1, 2.0),
     lambda r: [away_from(r, S, (0.1,), 0.1)], lambda v, x: [v * (x > 0.1)])
case("celu", "CELU", lambda x: gt.nn.functional.celu(x, 1.5), lambda r: [away_from(r, S)],
     lambda v, x: [v * np.where(x > 0, 1, np.exp(x / 1.5))])
case("celu_", "CELU_", lambda x: gt.nn.functional.celu_(x * 1.0, 1.5), lambda r: [away_from(r, S)],
     lambda v, x: [v * np.where(x > 0, 1, np.exp(x / 1.5))])
case("rrelu_eval", "RRELU_WITH_NOISE", lambda x: gt.nn.functional.rrelu(x, 0.1, 0.3),
     lambda r: [away_from(r, S)], lambda v, x: [v * np.where(x > 0, 1, 0.2)])
_rrelu_training = _seeded(lambda x: gt.nn.functional.rrelu(x, 0.1, 0.3, training=True))
case("rrelu_training", "RRELU_WITH_NOISE", _rrelu_training, lambda r: [away_from(r, S)],
     lambda v, x: [v * _rrelu_training(gt.tensor(x))._data / x])  # (the drawn slopes)
case("rrelu_", "RRELU_WITH_NOISE_", _seeded(
    lambda x: gt.nn.functional.rrelu_(x * 1.0, 0.1, 0.3, training=True)),
     lambda r: [away_from(r, S)], lambda v, x: [v * _rrelu_training(gt.tensor(x))._data / x])
case("bernoulli_", "BERNOULLI_FILL", _seeded(lambda x: (x * 1).bernoulli_(0.3) * x), normal(*S),
     lambda v, x: [v * _seeded(lambda: gt.zeros(S, dtype=gt.float64).bernoulli_(0.3))()._data])
case("bernoulli_tensor", "BERNOULLI_FILL_TENSOR",
     _seeded(lambda x, p: (x * 1).bernoulli_(p) * x), lambda r: [r.standard_normal(S),
                                                                 r.uniform(0.1, 0.9, S)],
     lambda v, x, p: [v * _seeded(lambda: gt.zeros(S, dtype=gt.float64).bernoulli_(
         gt.tensor(p)))()._data, np.zeros(S)])
case("clamp_min_method", "CLAMP_MIN", lambda x: x.clamp_min(0.1),
     lambda r: [away_from(r, S, (0.1,), 0.1)], lambda v, x: [v * (x >= 0.1)])
case("clamp_max_method", "CLAMP_MAX", lambda x: x.clamp_max(0.1),
     lambda r: [away_from(r, S, (0.1,), 0.1)], lambda v, x: [v * (x <= 0.1)])
case("clamp_max_in_place", "CLAMP_MAX", lambda x: (x * 1).clamp_max_(0.1),
     lambda r: [away_from(r, S, (0.1,), 0.1)], lambda v, x: [v * (x <= 0.1)])
case("bernoulli", "BERNOULLI", _seeded(lambda p: gt.bernoulli(p) * p),
     lambda r: [r.uniform(0.1, 0.9, S)],
     lambda v, p: [v * _seeded(lambda: gt.bernoulli(gt.tensor(p)))()._data])


# in-place forms of the unary ops: the input as it was before the write is saved
def _inplace(name):
    return lambda x: getattr(x * 1.0, name + "_")()


for _name, _make, _vjp in [
        ("sin", normal(*S), lambda v, x: [v * np.cos(x)]),
        ("cos", normal(*S), lambda v, x: [-v * np.sin(x)]),
        ("tan", lambda r: [r.uniform(-1.2, 1.2, S)], lambda v, x: [v / np.cos(x) ** 2]),
        ("log1p", lambda r: [r.uniform(-0.5, 2.0, S)], lambda v, x: [v / (1 + x)]),
        ("expm1", normal(*S), lambda v, x: [v * np.exp(x)]),
        ("rsqrt", lambda r: [r.uniform(0.5, 2.0, S)], lambda v, x: [-0.5 * v * x ** -1.5]),
        ("sqrt", lambda r: [r.uniform(0.5, 2.0, S)], lambda v, x: [v / (2 * np.sqrt(x))]),
        ("log", lambda r: [r.uniform(0.5, 2.0, S)], lambda v, x: [v / x]),
        ("sigmoid", normal(*S), lambda v, x: [v * _sigmoid(x) * (1 - _sigmoid(x))]),
        ("neg", normal(*S), lambda v, x: [-v]),
        ("abs", lambda r: [away_from(r, S)], lambda v, x: [v * np.sign(x)]),
        ("sign", lambda r: [away_from(r, S)], lambda v, x: [np.zeros_like(x)]),
        ("erf", normal(*S), lambda v, x: [v * 2 / np.sqrt(np.pi) * np.exp(-x * x)]),
        ("reciprocal", lambda r: [signed(r, S)], lambda v, x: [-v / x ** 2])]:
    case(_name + "_", _name.upper(), _inplace(_name), _make, _vjp,
         order2="square" if _name in ("neg", "sign") else "plain")

# ------------------------------ losses (one node each) ------------------------------
LABELS = np.array([0, 3, 2, 1, 2])


def _loss_grads(slope, reduction):
    """d(loss)/d(input) and d/d(target) for an elementwise loss of d = input - target."""
    def vjp(v, x, t):
        g = slope(x - t) * (v / x.size if reduction == "mean" else v)
        return [g, -g]
    return vjp


def _apart(*kinks):
    """input and target whose difference stays away from the loss's kinks."""
    return lambda r: (lambda x: [x, x - away_from(r, S, kinks, 0.1)])(r.standard_normal(S))


case("mse_loss", "MSE_LOSS", lambda x, t: gt.nn.functional.mse_loss(x, t), normals(S, S),
     _loss_grads(lambda d: 2 * d, "mean"))
case("mse_loss_sum", "MSE_LOSS", lambda x, t: gt.nn.functional.mse_loss(x, t, reduction="sum"),
     normals(S, S), _loss_grads(lambda d: 2 * d, "sum"))
case("mse_loss_none", "MSE_LOSS", lambda x, t: gt.nn.MSELoss(reduction="none")(x, t),
     normals(S, S), _loss_grads(lambda d: 2 * d, "none"))
case("l1_loss", ("SUB", "ABS", "MEAN"), lambda x, t: gt.nn.functional.l1_loss(x, t), _apart(0.0),
     _loss_grads(np.sign, "mean"))
case("smooth_l1_loss", "SMOOTH_L1_LOSS",
     lambda x, t: gt.nn.functional.smooth_l1_loss(x, t, beta=0.5),
     _apart(-0.5, 0.0, 0.5),
     _loss_grads(lambda d: np.where(np.abs(d) < 0.5, d / 0.5, np.sign(d)), "mean"))
case("smooth_l1_loss_none", "SMOOTH_L1_LOSS",
     lambda x, t: gt.nn.SmoothL1Loss(reduction="none")(x, t), _apart(-1.0, 0.0, 1.0),
     _loss_grads(lambda d: np.where(np.abs(d) < 1, d, np.sign(d)), "none"))
case("huber_loss", "HUBER_LOSS",
     lambda x, t: gt.nn.functional.huber_loss(x, t, reduction="sum", delta=0.7),
     _apart(-0.7, 0.0, 0.7),
     _loss_grads(lambda d: np.where(np.abs(d) <= 0.7, d, 0.7 * np.sign(d)), "sum"))
case("binary_cross_entropy", "BINARY_CROSS_ENTROPY",
     lambda x, t: gt.nn.functional.binary_cross_entropy(x, t),
     lambda r: [r.uniform(0.1, 0.9, S), r.uniform(0, 1, S)],
     lambda v, x, t: [v * (x - t) / (x * (1 - x)) / x.size,
                      v * (np.log1p(-x) - np.log(x)) / x.size])
BCE_WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])
case("binary_cross_entropy_weight", "BINARY_CROSS_ENTROPY",
     lambda x, t, w: gt.nn.BCELoss(weight=w, reduction="sum")(x, t),
     lambda r: [r.uniform(0.1, 0.9, S), r.uniform(0, 1, S), Const(BCE_WEIGHT)],
     lambda v, x, t, w: [v * w * (x - t) / (x * (1 - x)), v * w * (np.log1p(-x) - np.log(x))])
case("bce_with_logits", "BINARY_CROSS_ENTROPY_WITH_LOGITS",
     lambda x, t: gt.nn.functional.binary_cross_entropy_with_logits(x, t),
     lambda r: [2 * r.standard_normal(S), r.uniform(0, 1, S)],
     lambda v, x, t: [v * (_sigmoid(x) - t) / x.size, -v * x / x.size])
case("bce_with_logits_weights", "BINARY_CROSS_ENTROPY_WITH_LOGITS",
     lambda x, t, w, pw: gt.nn.BCEWithLogitsLoss(w, reduction="none", pos_weight=pw)(x, t),
     lambda r: [2 * r.standard_normal(S), r.uniform(0, 1, S), Const(BCE_WEIGHT),
                Const(np.array([1.0, 3.0, 0.5, 2.0]))],
     lambda v, x, t, w, pw: [
         v * w * (_sigmoid(x) - t - (pw - 1) * t * (1 - _sigmoid(x))),
         v * w * (-x + (pw - 1) * np.logaddexp(0, -x))])


def _nll_vjp(weight=None, ignore=None, reduction="mean"):
    def vjp(v, x, t):
        w = np.ones(x.shape[1]) if weight is None else weight
        wt = np.where(t == ignore, 0.0, w[np.where(t == ignore, 0, t)])
        scale = v / wt.sum() if reduction == "mean" else v
        g = np.zeros_like(x)
        np.put_along_axis(g, np.where(t == ignore, 0, t)[:, None], (-scale * wt)[:, None], 1)
        return [g]
    return vjp


case("nll_loss", ("NLL_LOSS", "NLL_LOSS_BACKWARD"), lambda x, t: gt.nn.functional.nll_loss(x, t),
     lambda r: [r.standard_normal((5, 4)), Const(LABELS)], _nll_vjp())
case("nll_loss_weight_ignore", "NLL_LOSS",
     lambda x, t, w: gt.nn.NLLLoss(weight=w, ignore_index=2)(x, t),
     lambda r: [r.standard_normal((5, 4)), Const(LABELS), Const(BCE_WEIGHT)],
     lambda v, x, t, w: _nll_vjp(w, 2)(v, x, t))
case("nll_loss_none", "NLL_LOSS", lambda x, t: gt.nn.functional.nll_loss(x, t, reduction="none"),
     lambda r: [r.standard_normal((5, 4)), Const(LABELS)],
     lambda v, x, t: _nll_vjp(reduction="none")(v, x, t))
MARGIN_SIGNS = np.array([[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]])
case("soft_margin_loss", "SOFT_MARGIN_LOSS",
     lambda x, y: gt.nn.functional.soft_margin_loss(x, y), lambda r: [r.standard_normal(S),
                                                                      Const(MARGIN_SIGNS)],
     lambda v, x, y: [v * -y / (1 + np.exp(y * x)) / x.size])
MARGIN_CLASSES, MARGIN_WEIGHT = np.array([1, 0, 3]), np.array([0.5, 1.5, 1.0, 2.0])


def _multi_margin_vjp(p, margin, reduction):
    """d/dx of sum_j!=y max(0, margin - x_y + x_j)^p w_y / C, per sample, then reduced."""
    def vjp(v, x, t, w):
        n, c = x.shape
        rows = np.arange(n)
        z = margin - x[rows, t][:, None] + x
        slope = np.where(z > 0, p * np.maximum(z, 0) ** (p - 1), 0.0)
        slope[rows, t] = 0
        slope *= w[t][:, None] / c
        slope[rows, t] = -slope.sum(1)
        per_sample = v[:, None] if reduction == "none" else v / n if reduction == "mean" else v
        return [slope * per_sample]
    return vjp


case("multi_margin_loss_p2_weight", "MULTI_MARGIN_LOSS",
     lambda x, t, w: gt.nn.functional.multi_margin_loss(x, t, p=2, margin=0.7, weight=w),
     lambda r: [r.standard_normal(S), Const(MARGIN_CLASSES), Const(MARGIN_WEIGHT)],
     _multi_margin_vjp(2, 0.7, "mean"))
case("multi_margin_loss_none", "MULTI_MARGIN_LOSS",
     lambda x, t, w: gt.nn.MultiMarginLoss(weight=w, reduction="none")(x, t),
     lambda r: [r.standard_normal(S), Const(MARGIN_CLASSES), Const(MARGIN_WEIGHT)],
     _multi_margin_vjp(1, 1.0, "none"))
MARGIN_LABELS = np.array([[3, 0, -1, 1], [1, 2, -1, 0], [0, -1, 1, 2]])


def _multilabel_margin_vjp(v, x, t):
    """d/dx of sum over listed a, unlisted j of max(0, 1 - x_a + x_j) / C, summed."""
    g = np.zeros_like(x)
    for i, row in enumerate(t):
        listed = list(row[:list(row).index(-1)] if -1 in row else row)
        for a in listed:
            for j in set(range(x.shape[1])) - set(listed):
                if 1 - x[i, a] + x[i, j] > 0:
                    g[i, a] -= v / x.shape[1]
                    g[i, j] += v / x.shape[1]
    return [g]


case("multilabel_margin_loss", "MULTILABEL_MARGIN_LOSS",
     lambda x, t: gt.nn.functional.multilabel_margin_loss(x, t, reduction="sum"),
     lambda r: [r.standard_normal(S), Const(MARGIN_LABELS)], _multilabel_margin_vjp)

def _ctc_paths(probs, target, blank):
    """Every path of labels over probs' frames that collapses to target (repeats merged, then
    blanks dropped), with its probability: the definition of CTC, without its recursions."""
    frames, classes = probs.shape
    for path in itertools.product(range(classes), repeat=frames):
        merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
        if [c for c in merged if c != blank] == list(target):
            yield path, np.prod(probs[np.arange(frames), path])


def _ctc_vjp(targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """d/dx of ctc_loss(log_softmax(x)): for each sample and frame softmax(x) - the posterior
    of each class at that frame given the target (torch's formula), times the sample's share
    of the reduced loss; 0 past its frames, and for an impossible target under
    zero_infinity."""
    def vjp(v, x, *_):
        probs = np_softmax(x, 2)
        grad = np.zeros_like(x)
        offsets = np.cumsum((0,) + tuple(target_lengths))
        for b, (frames, length) in enumerate(zip(input_lengths, target_lengths)):
            target = (targets[b, :length] if targets.ndim == 2
                      else targets[offsets[b]:offsets[b + 1]])
            posterior, total = np.zeros((frames, x.shape[2])), 0.0
            for path, p in _ctc_paths(probs[:frames, b], target, blank):
                posterior[np.arange(frames), path] += p
                total += p
            if total == 0 and zero_infinity:
                continue
            share = {"none": v[b] if np.ndim(v) else v, "sum": v,
                     "mean": v / max(length, 1) / x.shape[1]}[reduction]
            grad[:frames, b] = share * (probs[:frames, b] - posterior / total)
        return [grad]
    return vjp


# padded targets with a repeated label (the blank between them cannot be skipped), lengths
# as tensors; concatenated targets with another blank; an impossible target (three frames
# for "1 1", which needs "1 blank 1") zeroed by zero_infinity
CTC_TARGETS = np.array([[1, 1, 2], [2, 0, 0], [3, 1, 0]])
CTC_CONCATENATED = np.array([1, 0, 1, 3, 3, 0])
case("ctc_loss_padded_mean", "CTC_LOSS",
     lambda x, t: gt.nn.functional.ctc_loss(x.log_softmax(2), t, gt.tensor([5, 4, 3]),
                                            gt.tensor([3, 1, 2])),
     lambda r: [r.standard_normal((5, 3, 4)), Const(CTC_TARGETS)],
     _ctc_vjp(CTC_TARGETS, (5, 4, 3), (3, 1, 2)), order2=None, forward_ad=False)
case("ctc_loss_concatenated_sum", "CTC_LOSS",
     lambda x, t: gt.nn.CTCLoss(blank=2, reduction="sum")(x.log_softmax(2), t, (4, 5),
                                                          (3, 3)),
     lambda r: [r.standard_normal((5, 2, 4)), Const(CTC_CONCATENATED)],
     _ctc_vjp(CTC_CONCATENATED, (4, 5), (3, 3), blank=2, reduction="sum"), order2=None,
     forward_ad=False)
case("ctc_loss_zero_infinity_none", "CTC_LOSS",
     lambda x, t: gt.nn.functional.ctc_loss(x.log_softmax(2), t, (3, 4), (2, 1),
                                            reduction="none", zero_infinity=True),
     lambda r: [r.standard_normal((4, 2, 3)), Const(np.array([[1, 1], [2, 0]]))],
     _ctc_vjp(np.array([[1, 1], [2, 0]]), (3, 4), (2, 1), reduction="none",
              zero_infinity=True), order2=None, forward_ad=False)

case("cross_entropy", ("LOG_SOFTMAX", "NLL_LOSS"),
     lambda x, t: gt.nn.functional.cross_entropy(x, t),
     lambda r: [r.standard_normal((5, 4)), Const(LABELS)],
     lambda v, x, t: [(np_softmax(x, 1) - np.eye(4)[t]) * v / 5])
NLL2D_LABELS = np.array([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])


def _nll2d_vjp(v, x, t):
    g = np.zeros_like(x)
    v = np.broadcast_to(v, t.shape)
    for n, h, w in np.ndindex(t.shape):
        g[n, t[n, h, w], h, w] = -v[n, h, w]
    return [g]


case("nll_loss2d", ("NLL_LOSS2D", "NLL_LOSS2D_BACKWARD"), lambda x, t: gt.nn.functional.nll_loss(x, t, reduction="none"),
     lambda r: [r.standard_normal((2, 3, 2, 2)), Const(NLL2D_LABELS)], _nll2d_vjp)
case("nll_loss_3d_input", ("VIEW", "NLL_LOSS2D"),
     lambda x, t: gt.nn.functional.nll_loss(x, t, reduction="sum"),
     lambda r: [r.standard_normal((2, 3, 4)), Const(NLL2D_LABELS.reshape(2, 4))],
     lambda v, x, t: [_nll2d_vjp(v, x[:, :, None], t[:, None])[0][:, :, 0]])


def _layer_norm_vjp(v, x, w=None, b=None, dims=(-1,)):
    mean = x.mean(dims, keepdims=True)
    rstd = 1 / np.sqrt(x.var(dims, keepdims=True) + 1e-5)
    xhat = (x - mean) * rstd
    g = v if w is None else v * w
    dx = rstd * (g - g.mean(dims, keepdims=True) - xhat * (g * xhat).mean(dims, keepdims=True))
    lead = tuple(range(x.ndim - len(dims)))
    return [dx] + ([] if w is None else [(v * xhat).sum(lead), v.sum(lead)])


case("layer_norm", "NATIVE_LAYER_NORM", lambda x, w, b: gt.nn.functional.layer_norm(x, (4,), w, b),
     normals(S, (4,), (4,)), _layer_norm_vjp)
case("layer_norm_2d_shape", "NATIVE_LAYER_NORM", lambda x: gt.nn.functional.layer_norm(x, (3, 4)),
     normal(*S3), lambda v, x: _layer_norm_vjp(v, x, dims=(-2, -1)))

# ------------------------------ reductions with two results, scans ------------------------------
case("var_mean", "VAR_MEAN", lambda x: gt.var_mean(x, 1), normal(*S3),
     lambda v, x: [restore(v[0], x.shape, 1, False) * (x - x.mean(1, keepdims=True))
                   + restore(v[1], x.shape, 1, False) / 3])
case("std_mean", "STD_MEAN", lambda x: gt.std_mean(x, (0, 2), keepdim=True), normal(*S3),
     lambda v, x: [v[0] * (x - x.mean((0, 2), keepdims=True))
                   / (7 * x.std((0, 2), ddof=1, keepdims=True)) + v[1] / 8])
# scatter_reduce along dim 1 of a (3, 4) self from a (3, 2) src: targets (0, 2), (1, 1), (3, 3)
SCATTER_REDUCE_INDEX = np.array([[0, 2], [1, 1], [3, 3]])


def _scatter_reduce_vjp(reduce, include_self):
    """Each element's share of its target's gradient, element by element (no ties: inputs
    distinct; prod: no zeros)."""
    def vjp(v, x, i, s):
        gx, gs = v.copy(), np.zeros_like(s)
        for r in range(3):
            for t in set(i[r]):
                cols = [c for c in range(2) if i[r, c] == t]
                if not include_self:  # (a target's own value took no part)
                    gx[r, t] = 0
                members = ([x[r, t]] if include_self else []) + [s[r, c] for c in cols]
                if reduce == "mean":
                    share = v[r, t] / len(members)
                    gs[r, cols] = share
                    if include_self:
                        gx[r, t] = share
                elif reduce == "prod":
                    total = np.prod(members)
                    gs[r, cols] = [v[r, t] * total / s[r, c] for c in cols]
                    if include_self:
                        gx[r, t] = v[r, t] * total / x[r, t]
                elif reduce == "amax":
                    best = max(members)
                    gs[r, cols] = [v[r, t] * (s[r, c] == best) for c in cols]
                    if include_self:
                        gx[r, t] = v[r, t] * (x[r, t] == best)
                else:  # sum
                    gs[r, cols] = v[r, t]
                    if include_self:
                        gx[r, t] = v[r, t]
        return [gx, gs]
    return vjp


def _scatter_reduce_amin_vjp(v, x, i, s):
    """amin picks the elements amax picks of the negated inputs."""
    return _scatter_reduce_vjp("amax", False)(v, -x, i, -s)


for _reduce, _include in (("sum", True), ("sum", False), ("mean", True), ("mean", False),
                          ("prod", True), ("prod", False), ("amax", True), ("amin", False)):
    case(f"scatter_reduce_{_reduce}{'' if _include else '_exclude_self'}", "SCATTER_REDUCE",
         lambda x, i, s, _reduce=_reduce, _include=_include: x.scatter_reduce(
             1, i, s, _reduce, include_self=_include),
         lambda r: [signed(r, (3, 4)), Const(SCATTER_REDUCE_INDEX), signed(r, (3, 2))],
         _scatter_reduce_amin_vjp if _reduce == "amin" else _scatter_reduce_vjp(_reduce,
                                                                                 _include))
# index_reduce: src's columns into self's columns 0 and 3 (scatter_reduce's closed forms,
# the index spread over each row); torch gives it no forward AD
INDEX_REDUCE_INDEX = np.array([[0, 3]] * 3)
for _reduce, _include in (("prod", True), ("mean", False), ("amax", True), ("amin", False)):
    case(f"index_reduce_{_reduce}{'' if _include else '_exclude_self'}", "INDEX_REDUCE",
         lambda x, s, _reduce=_reduce, _include=_include: x.index_reduce(
             1, gt.tensor([0, 3]), s, _reduce, include_self=_include),
         lambda r: [signed(r, (3, 4)), signed(r, (3, 2))],
         lambda v, x, s, _reduce=_reduce, _include=_include: (
             _scatter_reduce_amin_vjp(v, x, INDEX_REDUCE_INDEX, s) if _reduce == "amin" else
             _scatter_reduce_vjp(_reduce, _include)(v, x, INDEX_REDUCE_INDEX, s)),
         forward_ad=False)
case("cumsum", "CUMSUM", lambda x: x.cumsum(1), normal(*S3),
     lambda v, x: [np.flip(np.cumsum(np.flip(v, 1), 1), 1)], order2="square")


def _cumprod_vjp(v, x):
    """d out_k / d x_i = prod_{j <= k, j != i} x_j (i <= k), along the last dim."""
    g = np.zeros_like(x)
    n = x.shape[-1]
    for idx in np.ndindex(x.shape[:-1]):
        for i in range(n):
            for k in range(i, n):
                g[idx + (i,)] += v[idx + (k,)] * np.prod(np.delete(x[idx][:k + 1], i))
    return [g]


case("cumprod", "CUMPROD", lambda x: x.cumprod(-1), lambda r: [signed(r, S)], _cumprod_vjp)
case("cumprod_size_one_dim", "CUMPROD", lambda x: x.cumprod(1), normal(3, 1), lambda v, x: [v])
def _running_argextreme(x, pick):
    """cummax's / cummin's source indices along the last dim (distinct values: no ties)."""
    return np.array([[pick(row[:i + 1]) for i in range(len(row))] for row in x])


def _to_sources(v, x, pick):
    out = np.zeros_like(x)
    idx = _running_argextreme(x, pick)
    for r in range(x.shape[0]):
        np.add.at(out[r], idx[r], v[r])
    return out


case("cummax", "CUMMAX", lambda x: x.cummax(1).values, normal(*S),
     lambda v, x: [_to_sources(v, x, np.argmax)])
case("cummin", "CUMMIN", lambda x: gt.cummin(x, 1)[0], normal(*S),
     lambda v, x: [_to_sources(v, x, np.argmin)])


def _logcumsumexp_vjp(v, x):
    r = np.logaddexp.accumulate(x, axis=1)
    return [np.array([[sum(v[k, j] * np.exp(x[k, i] - r[k, j]) for j in range(i, x.shape[1]))
                       for i in range(x.shape[1])] for k in range(x.shape[0])])]


case("logcumsumexp", "LOGCUMSUMEXP", lambda x: x.logcumsumexp(1), normal(*S), _logcumsumexp_vjp)
# (large inputs: the backward sums in log space, so nothing overflows)
case("logcumsumexp_large", "LOGCUMSUMEXP", lambda x: gt.logcumsumexp(x, 0),
     lambda r: [r.standard_normal(S) + 800.0], lambda v, x: [_logcumsumexp_vjp(v.T, x.T)[0].T])
case("aminmax", "AMINMAX", lambda x: gt.aminmax(x), normal(*S),
     lambda v, x: [v[0] * (x == x.min()) + v[1] * (x == x.max())])
case("aminmax_dim", "AMINMAX", lambda x: x.aminmax(dim=0, keepdim=True), normal(*S),
     lambda v, x: [v[0] * (x == x.min(0)) + v[1] * (x == x.max(0))])
case("aminmax_only_max_used", "AMINMAX", lambda x: gt.aminmax(x, dim=1).max, normal(*S),
     lambda v, x: [v[:, None] * (x == x.max(1, keepdims=True))])


def _with_nans(r):
    x = r.standard_normal(S)
    x[0, 1] = x[2, 3] = np.nan
    return [x]


def _nanmedian_dim_vjp(v, x):
    out = np.zeros_like(x)
    for k, row in enumerate(x):
        kept = np.flatnonzero(~np.isnan(row))
        order = kept[np.argsort(row[kept])]
        out[k, order[(len(order) - 1) // 2]] = v[k]
    return [out]


case("nanmedian", "NANMEDIAN", lambda x: x.nanmedian(), _with_nans,
     lambda v, x: [v * (x == np.sort(x[~np.isnan(x)])[(np.sum(~np.isnan(x)) - 1) // 2])])
case("nanmedian_dim", "NANMEDIAN_DIM", lambda x: gt.nanmedian(x, 1).values, _with_nans,
     _nanmedian_dim_vjp)
case("cumprod_with_zeros", "CUMPROD", lambda x: gt.cumprod(x, 1),
     lambda r: [signed(r, S) * (np.arange(4) % 3 != 1)], _cumprod_vjp)

# ------------------------------ reordering, repeating ------------------------------
case("flip", "FLIP", lambda x: x.flip(0, 2), normal(*S3), lambda v, x: [np.flip(v, (0, 2))],
     order2="square")
case("roll", "ROLL", lambda x: x.roll((1, -2), (0, 1)), normal(*S),
     lambda v, x: [np.roll(v, (-1, 2), (0, 1))], order2="square")
case("roll_flat", "ROLL", lambda x: gt.roll(x, 5), normal(*S),
     lambda v, x: [np.roll(v.reshape(-1), -5).reshape(x.shape)], order2="square")


def _repeat_vjp(reps):
    def vjp(v, x):
        padded = (1,) * (len(reps) - x.ndim) + x.shape
        split = [n for pair in zip(reps, padded) for n in pair]
        return [v.reshape(split).sum(tuple(range(0, len(split), 2))).reshape(x.shape)]
    return vjp


case("repeat", "REPEAT", lambda x: x.repeat(2, 1, 3), normal(*S), _repeat_vjp((2, 1, 3)),
     order2="square")
case("tile", "REPEAT", lambda x: gt.tile(x, (2,)), normal(*S), _repeat_vjp((1, 2)),
     order2="square")
case("triu", "TRIU", lambda x: x.triu(1), normal(*S3), lambda v, x: [np.triu(v, 1)],
     order2="square")
case("tril", "TRIL", lambda x: gt.tril(x, -1), normal(*S), lambda v, x: [np.tril(v, -1)],
     order2="square")
case("t_", "T_", lambda x: (x * 1.0).t_(), normal(*S), lambda v, x: [v.T], order2="square")
case("erf_0d", "ERF", lambda x: x.sum().erf(), normal(*S),
     lambda v, x: [np.full(x.shape, v * 2 / np.sqrt(np.pi) * np.exp(-x.sum() ** 2))])
case("transpose_", "TRANSPOSE_", lambda x: (x * 1.0).transpose_(0, 1), normal(*S),
     lambda v, x: [v.T], order2="square")
# squeeze_ and unsqueeze_ change the tensor's own shape, as transpose_
case("squeeze_all_", "SQUEEZE_ALL_", lambda x: (x * 1.0).squeeze_(), normal(3, 1, 4, 1),
     lambda v, x: [v.reshape(x.shape)], order2="square")
case("squeeze_dim_", "SQUEEZE_", lambda x: (x * 1.0).squeeze_(3), normal(3, 1, 4, 1),
     lambda v, x: [v.reshape(x.shape)], order2="square")
case("squeeze_dims_", "SQUEEZE_DIMS_", lambda x: (x * 1.0).squeeze_((1, 3)), normal(3, 1, 4, 1),
     lambda v, x: [v.reshape(x.shape)], order2="square")
case("unsqueeze_", "UNSQUEEZE_", lambda x: (x * 1.0).unsqueeze_(1), normal(*S),
     lambda v, x: [v.reshape(x.shape)], order2="square")


# ------------------- selecting and writing by index, windows, modes -------------------
def _masked_select_vjp(v, x, mask):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    g = np.zeros(shape)
    g[np.broadcast_to(mask, shape)] = v
    return [unbroadcast(g, x.shape)]


def _unfold_vjp(v, x, dim, size, step):
    g = np.zeros(x.shape)
    for i in range(v.shape[dim]):
        g[(slice(None),) * dim + (slice(i * step, i * step + size),)] += np.moveaxis(
            np.take(v, i, axis=dim), -1, dim)
    return [g]


_PICKED = np.array([2, 0])
case("masked_select", "MASKED_SELECT", lambda x, m: x.masked_select(m),
     lambda r: [r.standard_normal(S), Const(r.random(S) < 0.5)],
     lambda v, x, m: _masked_select_vjp(v, x, m), order2="square")
case("masked_select_broadcast", "MASKED_SELECT", lambda x, m: gt.masked_select(x, m),
     lambda r: [r.standard_normal((3, 1)), Const(np.array([True, False, True, True]))],
     lambda v, x, m: _masked_select_vjp(v, x, m), order2="square")
case("index_copy", "INDEX_COPY", lambda x, s: x.index_copy(1, gt.tensor(_PICKED), s),
     normals(S, (3, 2)),
     lambda v, x, s: [np.where(np.isin(np.arange(4), _PICKED), 0.0, v), v[:, _PICKED]],
     order2="square")
case("index_copy_", "INDEX_COPY", lambda x, s: (x * 1.0).index_copy_(0, gt.tensor([1]), s),
     normals(S, (1, 4)), lambda v, x, s: [np.where(np.arange(3)[:, None] == 1, 0.0, v), v[[1]]],
     order2="square")
case("index_fill", "INDEX_FILL", lambda x: x.index_fill(1, gt.tensor(_PICKED), -2.0) * x,
     normal(*S), lambda v, x: [np.where(np.isin(np.arange(4), _PICKED), -2.0 * v, 2 * v * x)])
case("index_fill_", "INDEX_FILL", lambda x: x.sin().index_fill_(0, gt.tensor([0, 2]), 1.5),
     normal(*S), lambda v, x: [np.where(np.isin(np.arange(3), [0, 2])[:, None], 0.0,
                                        v * np.cos(x))])
case("put", "PUT", lambda x, s: x.put(gt.tensor([[0, -1], [5, 2]]), s), normals(S, (2, 2)),
     lambda v, x, s: [np.where(np.isin(np.arange(12), [0, 11, 5, 2]).reshape(S), 0.0, v),
                      v.reshape(-1)[[0, 11, 5, 2]].reshape(2, 2)], order2="square")
case("put_accumulate", "PUT", lambda x, s: (x * 1.0).put_(gt.tensor([1, 1, 4]), s, True),
     normals(S, (3,)), lambda v, x, s: [v, v.reshape(-1)[[1, 1, 4]]], order2="square")
case("take", "TAKE", lambda x: gt.take(x, gt.tensor([[3, -1], [3, 0]])), normal(*S),
     lambda v, x: [np.bincount([3, 11, 3, 0], v.reshape(-1), 12).reshape(S)],
     order2="square")
case("select_scatter", "SELECT_SCATTER", lambda x, s: gt.select_scatter(x, s, 1, 2),
     normals(S, (3,)), lambda v, x, s: [np.where(np.arange(4) == 2, 0.0, v), v[:, 2]],
     order2="square")
case("slice_scatter", "SLICE_SCATTER", lambda x, s: x.slice_scatter(s, 1, 1, None, 2),
     normals(S, (3, 2)), lambda v, x, s: [np.where(np.arange(4) % 2 == 1, 0.0, v), v[:, 1::2]],
     order2="square")
case("diagonal_scatter", "DIAGONAL_SCATTER", lambda x, s: gt.diagonal_scatter(x, s, -1),
     normals(S, (2,)), lambda v, x, s: [np.where(np.eye(3, 4, -1) == 1, 0.0, v),
                                         v[[1, 2], [0, 1]]], order2="square")
# a (3, 1) self broadcast with a (3, 4) mask of 9 ones: 9 of the 11 source values written
_SCATTER_MASK = np.array([[True, False, True, True]] * 3)
case("masked_scatter", "MASKED_SCATTER",
     lambda x, s, m: x.masked_scatter(m, s) * 1.0,
     lambda r: [r.standard_normal((3, 1)), r.standard_normal(11), Const(_SCATTER_MASK)],
     lambda v, x, s, m: [np.where(m, 0.0, v).sum(1, keepdims=True),
                         np.concatenate([v[m], np.zeros(2)])], order2="square")
case("unfold", "UNFOLD", lambda x: x.unfold(1, 3, 2), normal(3, 7),
     lambda v, x: _unfold_vjp(v, x, 1, 3, 2), order2="square")
case("unfold_overlapping", "UNFOLD", lambda x: x.unfold(0, 2, 1) ** 2, normal(4, 2),
     lambda v, x: _unfold_vjp(v * 2 * np.lib.stride_tricks.sliding_window_view(x, 2, 0), x,
                              0, 2, 1))
case("unfold_backward_op", "UNFOLD_BACKWARD",
     lambda g: call(D.UNFOLD_BACKWARD, (g,), ((3, 5), 1, 2, 1)), normal(3, 4, 2),
     lambda v, g: [np.lib.stride_tricks.sliding_window_view(v, 2, 1)], order2="square")
# (distinct values, so that central differences keep the mode: each value once, the least)
case("kthvalue", "KTHVALUE", lambda x: gt.kthvalue(x, 2, 1).values, normal(*S),
     lambda v, x: [(x == np.sort(x, 1)[:, 1:2]) * v[:, None]])
case("kthvalue_keepdim", "KTHVALUE", lambda x: x.kthvalue(3, 0, True)[0] * 2, normal(*S),
     lambda v, x: [(x == np.sort(x, 0)[2:3]) * 2 * v])
case("mode", "MODE", lambda x: gt.mode(x, 1).values, normal(*S),
     lambda v, x: [(x == x.min(1, keepdims=True)) * v[:, None]])
case("mode_keepdim", "MODE", lambda x: x.mode(0, True)[0] * 2, normal(*S),
     lambda v, x: [(x == x.min(0, keepdims=True)) * 2 * v])
case("logit", "LOGIT", lambda x: x.logit(), lambda r: [r.uniform(0.1, 0.9, S)],
     lambda v, x: [v / (x * (1 - x))])
case("logit_eps", "LOGIT", lambda x: gt.logit(x, 0.2), lambda r: [r.uniform(0.05, 0.95, S)],
     lambda v, x: [np.where((x < 0.2) | (x > 0.8), 0.0, v / (x * (1 - x)))])
case("nansum", "NANSUM", lambda x: gt.nansum(x * x), normal(*S), lambda v, x: [2 * v * x])
case("nansum_dim", "NANSUM", lambda x: x.nansum(1, keepdim=True), normal(*S),
     lambda v, x: [np.broadcast_to(v, x.shape)], order2="square")
case("nanmean", ("NANSUM", "DIV"), lambda x: x.nanmean(0), normal(*S),
     lambda v, x: [np.broadcast_to(v / 3, x.shape)], order2="square")
case("movedim", "PERMUTE", lambda x: x.movedim((0, 1), (2, 0)), normal(2, 3, 4),
     lambda v, x: [np.moveaxis(v, (2, 0), (0, 1))], order2="square")
case("rot90", "ROT90", lambda x: gt.rot90(x), normal(*S), lambda v, x: [np.rot90(v, -1)],
     order2="square")
case("rot90_k3_dims", "ROT90", lambda x: x.rot90(3, [2, 0]), normal(2, 3, 4),
     lambda v, x: [np.rot90(v, -3, (2, 0))], order2="square")
case("fill_out", "FILL_OUT", lambda x: gt.fill(x, 2.5) * x, normal(*S), lambda v, x: [2.5 * v])


def _p_norm_grad(d, p):
    """d ||d||_p / d d along the last dim (numpy, away from zeros and ties)."""
    if p == np.inf:
        a = np.abs(d)
        return np.sign(d) * (a == a.max(-1, keepdims=True))
    n = (np.abs(d) ** p).sum(-1, keepdims=True) ** (1 / p)
    return np.sign(d) * (np.abs(d) / n) ** (p - 1)


case("cross", "LINALG_CROSS", lambda a, b: gt.linalg.cross(a, b, dim=1), normals((4, 3), (1, 3)),
     lambda v, a, b: [np.cross(b, v), unbroadcast(np.cross(v, a), b.shape)])
case("cross_dim", "LINALG_CROSS", lambda a, b: a.cross(b, dim=0), normals((3, 2), (3, 2)),
     lambda v, a, b: [np.cross(b, v, axis=0), np.cross(v, a, axis=0)])
for _p in (2.0, 1.0, 3.0, np.inf):
    case(f"dist_p{_p}", "DIST", lambda a, b, _p=_p: gt.dist(a, b, _p), normals(S, (4,)),
         lambda v, a, b, _p=_p: [v * _p_norm_grad((a - b).reshape(-1), _p).reshape(S),
                                 unbroadcast(-v * _p_norm_grad((a - b).reshape(-1), _p)
                                             .reshape(S), b.shape)])
    case(f"cdist_p{_p}", "CDIST", lambda a, b, _p=_p: gt.cdist(a, b, _p), normals((3, 2), (4, 2)),
         lambda v, a, b, _p=_p: [
             (v[..., None] * _p_norm_grad(a[:, None] - b[None], _p)).sum(1),
             -(v[..., None] * _p_norm_grad(a[:, None] - b[None], _p)).sum(0)])
case("cdist_batched", "CDIST", lambda a, b: gt.cdist(a, b), normals((2, 3, 2), (1, 4, 2)),
     lambda v, a, b: [(v[..., None] * _p_norm_grad(a[:, :, None] - b[:, None], 2)).sum(2),
                      unbroadcast(-(v[..., None] * _p_norm_grad(
                          a[:, :, None] - b[:, None], 2)).sum(1), b.shape)])


def _pdist_vjp(p):
    def vjp(v, x):
        i, j = np.triu_indices(x.shape[0], 1)
        g = v[:, None] * _p_norm_grad(x[i] - x[j], p)
        out = np.zeros_like(x)
        np.add.at(out, i, g)
        np.add.at(out, j, -g)
        return [out]
    return vjp


for _p in (2.0, 1.0, 3.0, np.inf):
    case(f"pdist_p{_p}", "PDIST", lambda x, _p=_p: gt.nn.functional.pdist(x, _p),
         normal(4, 3), _pdist_vjp(_p))
case("pairwise_distance", ("ADD_SCALAR", "NORM_SCALAROPT_DIM"),
     lambda a, b: gt.nn.functional.pairwise_distance(a, b, 3.0, eps=0.1), normals(S, (4,)),
     lambda v, a, b: [v[:, None] * _p_norm_grad(a - b + 0.1, 3.0),
                      unbroadcast(-v[:, None] * _p_norm_grad(a - b + 0.1, 3.0), b.shape)])
# nn.Bilinear's _trilinear: y[b, o] = x1[b, i] w[o, i, j] x2[b, j]
case("bilinear", "TRILINEAR", lambda a, w, b: gt.nn.functional.bilinear(a, b, w),
     normals((3, 4), (2, 4, 5), (3, 5)),
     lambda v, a, w, b: [np.einsum("bo,oij,bj->bi", v, w, b), np.einsum("bo,bi,bj->oij", v, a, b),
                         np.einsum("bo,bi,oij->bj", v, a, w)])
# ------------------------------ selecting, sorting ------------------------------


def _sorted_vjp(dim, descending=False, k=None):
    def vjp(v, x):
        idx = np.argsort(-x if descending else x, axis=dim, kind="stable")
        if k is not None:
            idx = np.take(idx, range(k), axis=dim)
        g = np.zeros_like(x)
        np.put_along_axis(g, idx, v, dim)
        return [g]
    return vjp


case("sort", "SORT", lambda x: x.sort(1).values, normal(*S3), _sorted_vjp(1), order2="square")
case("sort_descending", "SORT", lambda x: gt.sort(x, 0, descending=True)[0], normal(*S),
     _sorted_vjp(0, True), order2="square")
case("topk", "TOPK", lambda x: x.topk(2).values, normal(*S), _sorted_vjp(1, True, 2),
     order2="square")
case("topk_smallest_dim0", "TOPK", lambda x: gt.topk(x, 2, dim=0, largest=False)[0],
     normal(*S), _sorted_vjp(0, False, 2), order2="square")
case("index_select", ("INDEX_SELECT", "INDEX_ADD"),
     lambda x, i: x.index_select(1, i),
     lambda r: [r.standard_normal(S), Const(np.array([0, 2, 2]))],
     lambda v, x, i: [_added(x.shape, (slice(None), i), v)], order2="square")
case("index_add", "INDEX_ADD", lambda x, i, s: x.index_add(0, i, s),
     lambda r: [r.standard_normal(S), Const(np.array([0, 2, 0])), r.standard_normal((3, 4))],
     lambda v, x, i, s: [v, v[i]], order2="square")
case("index_add_inplace_alpha", "INDEX_ADD",
     lambda x, i, s: x.sin().index_add_(1, i, s, alpha=2.0),
     lambda r: [r.standard_normal(S), Const(np.array([3, 1])), r.standard_normal((3, 2))],
     lambda v, x, i, s: [v * np.cos(x), 2.0 * v[:, i]])

# --------------------------- compositions torch records the same way ---------------------------
case("outer", "MUL", lambda a, b: gt.outer(a, b), normals((3,), (4,)),
     lambda v, a, b: [v @ b, a @ v])
case("normalize", ("NORM", "CLAMP_MIN", "DIV"), lambda x: gt.nn.functional.normalize(x), normal(*S),
     lambda v, x: (lambda n: [(v - x / n * ((x / n) * v).sum(1, keepdims=True)) / n])(
         np.sqrt((x * x).sum(1, keepdims=True))))
case("normalize_p1", ("NORM", "CLAMP_MIN", "DIV"),
     lambda x: gt.nn.functional.normalize(x, p=1.0, dim=0), normal(*S),
     lambda v, x: (lambda n: [v / n - np.sign(x) * (v * x).sum(0, keepdims=True) / n ** 2])(
         np.abs(x).sum(0, keepdims=True)))
case("normalize_p3_eps_clamps", ("NORM", "CLAMP_MIN", "DIV"),
     lambda x: gt.nn.functional.normalize(x, p=3, dim=-1, eps=10.0), normal(*S),
     lambda v, x: [v / 10.0])
for _eq, _shapes in [("ij,kj->ik", ((3, 4), (2, 4))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))),
                     ("ij->j", ((3, 4),)), ("i,j->ij", ((3,), (4,))),
                     ("...ij,jk->...ik", ((2, 3, 4), (4, 2))), ("ij,ij->", ((3, 4), (3, 4)))]:
    def _einsum_vjp(v, *xs, eq=_eq):
        lhs, out = eq.split("->")
        subs = lhs.split(",")
        if "..." in eq:  # spelled out for numpy's einsum of the gradient
            subs = [s.replace("...", "Z") for s in subs]
            out = out.replace("...", "Z")
        grads = []
        for k, s in enumerate(subs):
            others = [x for j, x in enumerate(xs) if j != k]
            other_subs = [t for j, t in enumerate(subs) if j != k]
            g = np.einsum(",".join([out] + other_subs) + "->" + s, v, *others) if (
                set(s) <= set(out + "".join(other_subs))) else None
            if g is None:  # a letter summed away in this operand alone
                kept = "".join(c for c in s if c in out + "".join(other_subs))
                g = np.einsum(",".join([out] + other_subs) + "->" + kept, v, *others)
                g = np.broadcast_to(np.expand_dims(g, [s.index(c) for c in s if c not in kept]),
                                    xs[k].shape)
            grads.append(g)
        return grads
    case("einsum_" + _eq, "SUM_DIM" if len(_shapes) == 1 else (),
         (lambda eq: lambda *xs: gt.einsum(eq, *xs))(_eq), normals(*_shapes), _einsum_vjp,
         order2="square")

# repeated subscripts: diagonals, whose gradient is zero off the diagonal
_EYE3 = np.eye(3)
case("einsum_ii->i", ("DIAGONAL", "PERMUTE"), lambda x: gt.einsum("ii->i", x), normal(3, 3),
     lambda v, x: [np.diag(v)], order2="square")
case("einsum_ii->", ("DIAGONAL", "SUM_DIM"), lambda x: gt.einsum("ii->", x), normal(3, 3),
     lambda v, x: [v * _EYE3], order2="square")
case("einsum_bii->bi", "DIAGONAL", lambda x: gt.einsum("bii->bi", x), normal(2, 3, 3),
     lambda v, x: [v[:, :, None] * _EYE3], order2="square")
case("einsum_iij,jk->ik", ("DIAGONAL", "BMM"), lambda a, b: gt.einsum("iij,jk->ik", a, b),
     normals((3, 3, 2), (2, 4)),
     lambda v, a, b: [_EYE3[:, :, None] * (v @ b.T)[:, None, :],
                      np.einsum("iij->ij", a).T @ v])

# ------------------------- convolutions, pooling, pads, resampling, normalisation -------------------------
# Closed forms from naive numpy written here (loops over output pixels), independent of the
# engine's kernels; for ops affine in an input, the vjp column by column (exact).
def affine_vjp(f, arrays, k, v):
    """d<f(*arrays), v>/d arrays[k], for f affine in arrays[k] (the others held)."""
    def at(value):
        return f(*[value if i == k else a for i, a in enumerate(arrays)])
    base = at(np.zeros_like(arrays[k]))
    grad = np.zeros(arrays[k].size)
    for i in range(grad.size):
        e = np.zeros(arrays[k].size)
        e[i] = 1
        grad[i] = np.sum((at(e.reshape(arrays[k].shape)) - base) * v)
    return grad.reshape(arrays[k].shape)


def affine_vjps(f, *positions):
    """The vjp of each input (all, or those at `positions`) of a function affine in each."""
    def vjp(v, *arrays):
        floats = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray)
                  and a.dtype.kind == "f"] if not positions else positions
        return [affine_vjp(f, arrays, k, v) for k in floats]
    return vjp


def _window(pos, stride, dilation, kernel):
    return tuple(slice(p * s, p * s + d * (k - 1) + 1, d)
                 for p, s, d, k in zip(pos, stride, dilation, kernel))


def conv_np(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    kernel, (n, c), o = w.shape[2:], x.shape[:2], w.shape[0]
    sizes = [(m - d * (k - 1) - 1) // s + 1
             for m, k, s, d in zip(x.shape[2:], kernel, stride, dilation)]
    out = np.zeros((n, o, *sizes))
    cg, og = c // groups, o // groups
    for oc in range(o):
        g = oc // og
        for pos in np.ndindex(*sizes):
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg))
                      + _window(pos, stride, dilation, kernel)]
            out[(slice(None), oc) + pos] = (patch * w[oc]).reshape(n, -1).sum(1)
    return out if b is None else out + b.reshape((-1,) + (1,) * len(kernel))


def conv_transpose_np(x, w, b=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                      groups=1, dilation=(1, 1)):
    kernel, (n, c), og = w.shape[2:], x.shape[:2], w.shape[1]
    full = [(m - 1) * s + d * (k - 1) + 1 + op for m, s, d, k, op in
            zip(x.shape[2:], stride, dilation, kernel, output_padding)]
    out = np.zeros((n, og * groups, *full))
    cg = c // groups
    for ic in range(c):
        g = ic // cg
        for pos in np.ndindex(*x.shape[2:]):
            place = (slice(None), slice(g * og, (g + 1) * og)) + _window(pos, stride, dilation,
                                                                       kernel)
            out[place] += x[(slice(None), ic) + pos].reshape((n,) + (1,) * (len(kernel) + 1)) \
                * w[ic][None]
    out = out[(slice(None),) * 2 + tuple(slice(p, m - p) for p, m in zip(padding, full))]
    return out if b is None else out + b.reshape((-1,) + (1,) * len(kernel))


def _conv_case(id, covers, fn, shapes, np_fn, **kw):
    case(id, covers, fn, normals(*shapes), affine_vjps(np_fn), **kw)


_conv_case("conv2d", "CONVOLUTION",
           lambda x, w, b: gt.nn.functional.conv2d(x, w, b, stride=2, padding=1),
           ((2, 2, 5, 5), (3, 2, 3, 3), (3,)),
           lambda x, w, b: conv_np(x, w, b, (2, 2), (1, 1)))
_conv_case("conv2d_groups_dilation", "CONVOLUTION",
           lambda x, w: gt.nn.functional.conv2d(x, w, None, (1, 2), (2, 0), (2, 1), 2),
           ((2, 4, 5, 6), (4, 2, 2, 3)), lambda x, w: conv_np(x, w, None, (1, 2), (2, 0), (2, 1), 2))
_conv_case("conv1d", "CONVOLUTION", lambda x, w, b: gt.nn.functional.conv1d(x, w, b, 2, 1),
           ((2, 3, 7), (2, 3, 3), (2,)), lambda x, w, b: conv_np(x, w, b, (2,), (1,), (1,)))


def conv_tbc_np(x, w, b, pad):
    """out[o] = b + sum over k of x[o + k - pad] @ w[k], no frame outside x (the definition)."""
    frames, kernel = x.shape[0], w.shape[0]
    out = np.tile(b, (frames - kernel + 1 + 2 * pad, x.shape[1], 1))
    for o in range(out.shape[0]):
        for k in range(kernel):
            if 0 <= o + k - pad < frames:
                out[o] += x[o + k - pad] @ w[k]
    return out


# conv_tbc: padded, cropped (a negative pad), and padded past the kernel (its input's gradient
# then a conv_tbc of negative pad); torch has no forward AD for it
for _pad in (1, -1, 3):
    _conv_case(f"conv_tbc_pad{_pad}", "CONV_TBC",
               lambda x, w, b, _pad=_pad: gt.conv_tbc(x, w, b, _pad),
               ((5, 2, 3), (3, 3, 4), (4,)),
               lambda x, w, b, _pad=_pad: conv_tbc_np(x, w, b, _pad), forward_ad=False)
# 'same' with an even kernel: padded one more on the right first (ConstantPadNdBackward0)
_conv_case("conv2d_same_even_kernel", ("CONVOLUTION", "CONSTANT_PAD_ND"),
           lambda x, w: gt.nn.functional.conv2d(x, w, padding="same"),
           ((1, 2, 4, 5), (2, 2, 2, 3)),
           lambda x, w: conv_np(np.pad(x, [(0, 0), (0, 0), (0, 1), (1, 1)]), w))
_conv_case("conv_transpose2d", "CONVOLUTION",
           lambda x, w, b: gt.nn.functional.conv_transpose2d(x, w, b, 2, 1, 1, 2),
           ((2, 4, 3, 3), (4, 1, 3, 2), (2,)),
           lambda x, w, b: conv_transpose_np(x, w, b, (2, 2), (1, 1), (1, 1), 2))
_conv_case("conv_transpose1d_dilation", "CONVOLUTION",
           lambda x, w: gt.nn.functional.conv_transpose1d(x, w, None, 1, 0, 0, 1, 2),
           ((2, 2, 4), (2, 3, 3)),
           lambda x, w: conv_transpose_np(x, w, None, (1,), (0,), (0,), 1, (2,)))
_conv_case("conv2d_unbatched", ("CONVOLUTION", "UNSQUEEZE", "SQUEEZE_DIM"),
           lambda x, w: gt.nn.functional.conv2d(x, w), ((2, 4, 4), (3, 2, 3, 3)),
           lambda x, w: conv_np(x[None], w)[0])
_conv_case("conv3d", "CONVOLUTION",
           lambda x, w, b: gt.nn.functional.conv3d(x, w, b, (1, 2, 1), (1, 0, 1)),
           ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), (2,)),
           lambda x, w, b: conv_np(x, w, b, (1, 2, 1), (1, 0, 1), (1, 1, 1)))
_conv_case("conv_transpose3d", "CONVOLUTION",
           lambda x, w: gt.nn.functional.conv_transpose3d(x, w, None, 2, (0, 1, 0), 1),
           ((1, 2, 2, 3, 2), (2, 2, 2, 2, 3)),
           lambda x, w: conv_transpose_np(x, w, None, (2, 2, 2), (0, 1, 0), (1, 1, 1), 1,
                                          (1, 1, 1)))


def pixel_shuffle_np(x, r):
    *lead, c, h, w = x.shape
    out = x.reshape(*lead, c // (r * r), r, r, h, w)
    return np.moveaxis(out, (-4, -3), (-3, -1)).reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle_np(x, r):
    *lead, c, h, w = x.shape
    out = x.reshape(*lead, c, h // r, r, w // r, r)
    return np.moveaxis(out, (-3, -1), (-4, -3)).reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle_np(x, groups):
    """Channel g * (C / groups) + i to i * groups + g, element by element."""
    out = np.empty_like(x)
    per_group = x.shape[1] // groups
    for g in range(groups):
        for i in range(per_group):
            out[:, i * groups + g] = x[:, g * per_group + i]
    return out


case("channel_shuffle", "CHANNEL_SHUFFLE", lambda x: gt.nn.functional.channel_shuffle(x, 3),
     normal(2, 6, 2, 1), lambda v, x: [channel_shuffle_np(v, 2)], order2="square")


def unfold_np(x, kernel, dilation, padding, stride):
    """Each sliding block of the padded (N, C, H, W) plane as a column, element by element."""
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, c, h, w = x.shape
    rows = [(h - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1,
            (w - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1]
    out = np.zeros((n, c * kernel[0] * kernel[1], rows[0] * rows[1]))
    for ch, i, j, bi, bj in itertools.product(range(c), range(kernel[0]), range(kernel[1]),
                                              range(rows[0]), range(rows[1])):
        out[:, (ch * kernel[0] + i) * kernel[1] + j, bi * rows[1] + bj] = x[
            :, ch, bi * stride[0] + i * dilation[0], bj * stride[1] + j * dilation[1]]
    return out


def fold_np(cols, size, kernel, dilation, padding, stride):
    """unfold_np's adjoint: the matrix of unfold_np applied transposed."""
    c = cols.shape[1] // (kernel[0] * kernel[1])
    n_in = c * size[0] * size[1]
    basis = np.eye(n_in).reshape(n_in, c, *size)
    matrix = unfold_np(basis, kernel, dilation, padding, stride).reshape(n_in, -1)
    return (cols.reshape(cols.shape[0], -1) @ matrix.T).reshape(cols.shape[0], c, *size)


# F.unfold and F.fold: each the other's adjoint
case("functional_unfold", ("IM2COL", "COL2IM"),
     lambda x: gt.nn.functional.unfold(x, (2, 3), (1, 2), 1, (2, 1)), normal(2, 2, 4, 5),
     lambda v, x: [fold_np(v, (4, 5), (2, 3), (1, 2), (1, 1), (2, 1))], order2="square")
case("functional_fold", ("COL2IM", "IM2COL"),
     lambda c: gt.nn.functional.fold(c, (3, 4), 2, 1, (1, 0), 1), normal(1, 8, 12),
     lambda v, c: [unfold_np(v, (2, 2), (1, 1), (1, 0), (1, 1))], order2="square")


# each is the other's adjoint, and its inverse
case("pixel_shuffle", ("PIXEL_SHUFFLE", "PIXEL_UNSHUFFLE"),
     lambda x: gt.nn.functional.pixel_shuffle(x, 2), normal(2, 8, 2, 3),
     lambda v, x: [pixel_unshuffle_np(v, 2)], order2="square")
case("pixel_unshuffle", ("PIXEL_UNSHUFFLE", "PIXEL_SHUFFLE"),
     lambda x: gt.nn.functional.pixel_unshuffle(x, 3), normal(1, 2, 3, 6),
     lambda v, x: [pixel_shuffle_np(v, 3)], order2="square")


def _pool_np(x, kernel, stride, padding, reduce, pad_value, dilation=None, ceil=False):
    """Each window of x (padded) reduced over the last len(kernel) dims; windows of ceil mode
    cut at the padded edge."""
    spatial = len(kernel)
    dilation = dilation or (1,) * spatial
    sizes = []
    for n, k, p, s, d in zip(x.shape[-spatial:], kernel, padding, stride, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        size = (-(-span // s) if ceil else span // s) + 1
        sizes.append(size - 1 if ceil and (size - 1) * s >= n + p else size)
    xp = np.pad(x, [(0, 0)] * (x.ndim - spatial) + [(p, p + k * s) for p, k, s in
                                                   zip(padding, kernel, stride)],
                constant_values=pad_value)
    out = np.zeros(x.shape[:-spatial] + tuple(sizes))
    for pos in np.ndindex(*sizes):
        out[(Ellipsis,) + pos] = reduce(xp[(Ellipsis,) + _window(pos, stride, dilation, kernel)],
                                        pos)
    return out


def _max_pool_vjp(kernel, stride, padding, dilation=None, ceil=False):
    """v at each window's (unique) max, found by a loop."""
    spatial = len(kernel)
    dilation = dilation or (1,) * spatial

    def vjp(v, x):
        g = np.zeros_like(x)
        sizes, inside = v.shape[-spatial:], x.shape[-spatial:]
        for lead in np.ndindex(*x.shape[:-spatial]):
            for pos in np.ndindex(*sizes):
                best = None
                for off in np.ndindex(*kernel):
                    at = tuple(p * s - pd + o * d for p, s, pd, o, d in
                               zip(pos, stride, padding, off, dilation))
                    if all(0 <= a < n for a, n in zip(at, inside)) and (
                            best is None or x[lead + at] > x[lead + best]):
                        best = at
                g[lead + best] += v[lead + pos]
        return [g]
    return vjp


case("max_pool2d", ("MAX_POOL2D_WITH_INDICES", "MAX_POOL2D_WITH_INDICES_BACKWARD"),
     lambda x: gt.nn.functional.max_pool2d(x, 2), normal(2, 2, 4, 6),
     _max_pool_vjp((2, 2), (2, 2), (0, 0)), order2="square")
case("max_pool2d_padding_dilation_ceil", "MAX_POOL2D_WITH_INDICES",
     lambda x: gt.nn.functional.max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), ceil_mode=True),
     normal(2, 6, 5), _max_pool_vjp((3, 2), (2, 1), (1, 0), (1, 2), True), order2="square")
case("max_pool3d", ("MAX_POOL3D_WITH_INDICES", "MAX_POOL3D_WITH_INDICES_BACKWARD"),
     lambda x: gt.nn.functional.max_pool3d(x, 2), normal(1, 2, 4, 2, 4),
     _max_pool_vjp((2, 2, 2), (2, 2, 2), (0, 0, 0)), order2="square")
case("max_pool3d_padding_dilation_ceil", "MAX_POOL3D_WITH_INDICES",
     lambda x: gt.nn.functional.max_pool3d(x, (2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 1, 2),
                                           ceil_mode=True),
     normal(2, 4, 3, 5), _max_pool_vjp((2, 3, 2), (2, 1, 2), (1, 1, 0), (1, 1, 2), True),
     order2="square")


def _unpooled_max_vjp(spatial):
    """max_unpool(max_pool(x)) with 2-wide windows keeps each window's max and zeroes the
    rest: its vjp is v at the maxima (found by _max_pool_vjp's loop)."""
    def vjp(v, x):
        pooled = np.ones(x.shape[:-spatial] + tuple(n // 2 for n in x.shape[-spatial:]))
        at_max = _max_pool_vjp((2,) * spatial, (2,) * spatial, (0,) * spatial)(pooled, x)[0]
        return [v * at_max]
    return vjp


case("max_unpool2d", ("MAX_UNPOOL2D", "MAX_POOL2D_WITH_INDICES"),
     lambda x: gt.nn.functional.max_unpool2d(*gt.nn.functional.max_pool2d(
         x, 2, return_indices=True), 2), normal(2, 2, 4, 6), _unpooled_max_vjp(2),
     order2="square")
case("max_unpool3d", ("MAX_UNPOOL3D", "MAX_POOL3D_WITH_INDICES"),
     lambda x: gt.nn.functional.max_unpool3d(*gt.nn.functional.max_pool3d(
         x, 2, return_indices=True), 2), normal(2, 4, 2, 4), _unpooled_max_vjp(3),
     order2="square")


_FRACTIONAL_SAMPLES = np.random.default_rng(11).random((2, 2, 3))


def _fractional_vjp(kernel, out):
    """v at each window's max; the windows start at torch's pseudo-random sequence,
    int((i + u) alpha) - int(u alpha), alpha = (size - kernel) / (out - 1), the last at the
    end, u the plane's sample for that dim (2-d: the width's is the first)."""
    spatial = len(kernel)

    def starts(u, size, o, k):
        alpha = (size - k) / (o - 1) if o > 1 else 0.0
        return [int((i + u) * alpha) - int(u * alpha) for i in range(o - 1)] + [size - k]

    def vjp(v, x):
        g = np.zeros_like(x)
        for b, c in np.ndindex(*x.shape[:2]):
            u = _FRACTIONAL_SAMPLES[b, c, :spatial]
            u = u[::-1] if spatial == 2 else u
            begin = [starts(ud, n, o, k) for ud, n, o, k in zip(u, x.shape[2:], out, kernel)]
            for pos in np.ndindex(*out):
                first = tuple(s[p] for s, p in zip(begin, pos))
                window = x[(b, c) + tuple(slice(f, f + k) for f, k in zip(first, kernel))]
                at = np.unravel_index(np.argmax(window), window.shape)
                g[(b, c) + tuple(f + a for f, a in zip(first, at))] += v[(b, c) + pos]
        return [g]
    return vjp


case("fractional_max_pool2d", ("FRACTIONAL_MAX_POOL2D", "FRACTIONAL_MAX_POOL2D_BACKWARD"),
     lambda x: gt.nn.functional.fractional_max_pool2d(x, (2, 3), (3, 4), _random_samples=gt.tensor(
         _FRACTIONAL_SAMPLES[..., :2], dtype=x.dtype)),
     normal(2, 2, 5, 7), _fractional_vjp((2, 3), (3, 4)), order2="square")
case("fractional_max_pool3d", ("FRACTIONAL_MAX_POOL3D", "FRACTIONAL_MAX_POOL3D_BACKWARD"),
     lambda x: gt.nn.functional.fractional_max_pool3d(
         x, 2, (2, 3, 2), _random_samples=gt.tensor(_FRACTIONAL_SAMPLES, dtype=x.dtype)),
     normal(2, 2, 4, 5, 4), _fractional_vjp((2, 2, 2), (2, 3, 2)), order2="square")


def _avg_np(kernel, stride, padding, ceil, include_pad, divisor=None):
    spatial = len(kernel)

    def mean(window, pos):
        starts = [p * s - pd for p, s, pd in zip(pos, stride, padding)]
        ends = [min(a + k, n + pd) for a, k, n, pd in zip(starts, kernel, shape, padding)]
        count = np.prod([(e - a) if include_pad else (min(e, n) - max(a, 0))
                         for a, e, n in zip(starts, ends, shape)])
        return window.sum(axis=tuple(range(-spatial, 0))) / (divisor or count)
    shape = []

    def pool(x):
        shape[:] = x.shape[-spatial:]
        return _pool_np(x, kernel, stride, padding, mean, 0.0, ceil=ceil)
    return pool


case("avg_pool2d", ("AVG_POOL2D", "AVG_POOL2D_BACKWARD"),
     lambda x: gt.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
     normal(2, 2, 5, 6), affine_vjps(_avg_np((3, 3), (2, 2), (1, 1), True, False)),
     order2="square")
case("avg_pool2d_divisor", "AVG_POOL2D",
     lambda x: gt.nn.functional.avg_pool2d(x, (2, 3), 1, (1, 0), divisor_override=4),
     normal(2, 4, 5), affine_vjps(_avg_np((2, 3), (1, 1), (1, 0), False, True, 4)))
case("avg_pool3d", ("AVG_POOL3D", "AVG_POOL3D_BACKWARD"),
     lambda x: gt.nn.functional.avg_pool3d(x, (2, 3, 3), 2, (1, 1, 0), ceil_mode=True,
                                           count_include_pad=False),
     normal(1, 2, 3, 5, 4), affine_vjps(_avg_np((2, 3, 3), (2, 2, 2), (1, 1, 0), True, False)),
     order2="square")
case("avg_pool3d_divisor", "AVG_POOL3D",
     lambda x: gt.nn.functional.avg_pool3d(x, 2, 1, 1, divisor_override=3),
     normal(2, 2, 3, 2), affine_vjps(_avg_np((2, 2, 2), (1, 1, 1), (1, 1, 1), False, True, 3)))


def _adaptive_windows(n, out):
    return [(i * n // out, -(-(i + 1) * n // out)) for i in range(out)]


def _adaptive_np(out, reduce):
    def pool(x):
        spatial = len(out)
        windows = [_adaptive_windows(n, o) for n, o in zip(x.shape[-spatial:], out)]
        result = np.zeros(x.shape[:-spatial] + tuple(out))
        for pos in np.ndindex(*out):
            cells = tuple(slice(*w[p]) for w, p in zip(windows, pos))
            result[(Ellipsis,) + pos] = reduce(x[(Ellipsis,) + cells],
                                               axis=tuple(range(-spatial, 0)))
        return result
    return pool


def _adaptive_max_vjp(out):
    def vjp(v, x):
        spatial = len(out)
        g = np.zeros_like(x)
        windows = [_adaptive_windows(n, o) for n, o in zip(x.shape[-spatial:], out)]
        for lead in np.ndindex(*x.shape[:-spatial]):
            for pos in np.ndindex(*out):
                starts = [w[p][0] for w, p in zip(windows, pos)]
                cells = x[lead + tuple(slice(*w[p]) for w, p in zip(windows, pos))]
                at = np.unravel_index(np.argmax(cells), cells.shape)
                g[lead + tuple(a + s for a, s in zip(at, starts))] += v[lead + pos]
        return [g]
    return vjp


case("adaptive_avg_pool2d", ("ADAPTIVE_AVG_POOL2D", "ADAPTIVE_AVG_POOL2D_BACKWARD"),
     lambda x: gt.nn.functional.adaptive_avg_pool2d(x, (3, 2)), normal(2, 2, 5, 7),
     affine_vjps(_adaptive_np((3, 2), np.mean)), order2="square")
case("adaptive_avg_pool2d_to_1", "MEAN_DIM", lambda x: gt.nn.AdaptiveAvgPool2d(1)(x),
     normal(2, 3, 4), affine_vjps(_adaptive_np((1, 1), np.mean)), order2="square")
case("adaptive_max_pool2d", ("ADAPTIVE_MAX_POOL2D", "ADAPTIVE_MAX_POOL2D_BACKWARD"),
     lambda x: gt.nn.functional.adaptive_max_pool2d(x, (2, 3)), normal(2, 2, 5, 7),
     _adaptive_max_vjp((2, 3)), order2="square")
case("adaptive_avg_pool3d", ("ADAPTIVE_AVG_POOL3D", "ADAPTIVE_AVG_POOL3D_BACKWARD"),
     lambda x: gt.nn.functional.adaptive_avg_pool3d(x, (2, 3, 2)), normal(1, 2, 3, 5, 3),
     affine_vjps(_adaptive_np((2, 3, 2), np.mean)), order2="square")
case("adaptive_max_pool3d", ("ADAPTIVE_MAX_POOL3D", "ADAPTIVE_MAX_POOL3D_BACKWARD"),
     lambda x: gt.nn.functional.adaptive_max_pool3d(x, (2, 2, 3)), normal(2, 3, 5, 4),
     _adaptive_max_vjp((2, 2, 3)), order2="square")


def _affine_grid_vjp(size, align_corners):
    """theta's gradient: sum over output positions of grad (x', y'[, z']) times the position's
    (x, y[, z], 1), its normalised coordinates from -1 to 1 (pixel centres unless
    align_corners), built position by position."""
    def coordinate(i, n):
        if n == 1:
            return 0.0
        line = -1 + 2 * i / (n - 1)
        return line if align_corners else line * (n - 1) / n

    def vjp(v, theta):
        g = np.zeros_like(theta)
        spatial = size[2:]
        for b in range(size[0]):
            for pos in np.ndindex(*spatial):
                base = [coordinate(i, n) for i, n in zip(pos, spatial)][::-1] + [1.0]
                g[b] += np.outer(v[(b,) + pos], base)
        return [g]
    return vjp


case("affine_grid", "AFFINE_GRID_GENERATOR",
     lambda t: gt.nn.functional.affine_grid(t, (2, 1, 3, 4), align_corners=False),
     normal(2, 2, 3), _affine_grid_vjp((2, 1, 3, 4), False), order2="square")
case("affine_grid_3d_align_corners", "AFFINE_GRID_GENERATOR",
     lambda t: gt.nn.functional.affine_grid(t, (1, 2, 2, 3, 2), align_corners=True),
     normal(1, 3, 4), _affine_grid_vjp((1, 2, 2, 3, 2), True), order2="square")


def _grid_sample_np(x, grid, mode, align_corners, border=False):
    """F.grid_sample output by output: each grid coordinate (x first) unnormalised to a
    position along its input dim, the taps around it weighted (bilinear: 1 - t and t;
    bicubic: cubic convolution, A = -0.75; nearest: the rounded position), taps outside
    the input reading zero. The grid may be complex (a complex step differentiates it)."""
    sizes, coords = x.shape[2:], grid.shape[-1]
    out = np.zeros(x.shape[:2] + grid.shape[1:-1], np.result_type(x, grid))
    a = -0.75
    for b in range(x.shape[0]):
        for pos in np.ndindex(*grid.shape[1:-1]):
            taps = []
            for d in range(coords):
                g, n = grid[(b,) + pos + (d,)], sizes[-1 - d]
                s = (g + 1) / 2 * (n - 1) if align_corners else ((g + 1) * n - 1) / 2
                if mode == "nearest":
                    r = min(max(s.real, 0), n - 1) if border else s.real
                    taps.append([(int(np.rint(r)), 1.0)])
                    continue
                f = int(np.floor(s.real))
                t = s - f
                if mode == "bilinear":
                    taps.append([(f, 1 - t), (f + 1, t)])
                else:
                    near = (lambda u: ((a + 2) * u - (a + 3)) * u * u + 1)
                    far = (lambda u: ((a * u - 5 * a) * u + 8 * a) * u - 4 * a)
                    taps.append([(f - 1, far(t + 1)), (f, near(t)), (f + 1, near(1 - t)),
                                 (f + 2, far(2 - t))])
            for combo in itertools.product(*taps):
                at = tuple(p for p, _ in combo)[::-1]
                if all(0 <= p < n for p, n in zip(at, sizes)):
                    out[(b, slice(None)) + pos] += np.prod([w for _, w in combo]) * (
                        x[(b, slice(None)) + at])
    return out


def _grid_sample_vjp(mode, align_corners, border=False):
    """The input's vjp column by column (grid_sample is linear in it); the grid's by a
    complex step of _grid_sample_np (exact: the weights are polynomials in the grid)."""
    def vjp(v, x, grid):
        sample = (lambda inp, g: _grid_sample_np(inp, g, mode, align_corners, border))
        gx = affine_vjp(lambda inp: sample(inp, grid), [x], 0, v)
        gg = np.zeros_like(grid)
        if mode != "nearest":
            for i in np.ndindex(*grid.shape):
                step = grid.astype(complex)
                step[i] += 1e-30j
                gg[i] = np.sum(sample(x, step).imag / 1e-30 * v)
        return [gx, gg]
    return vjp


def _grid(*shape):
    return lambda r: [r.standard_normal(shape[0]), r.uniform(-1.3, 1.3, shape[1])]


case("grid_sample_bilinear", "GRID_SAMPLER_2D",
     lambda x, g: gt.nn.functional.grid_sample(x, g, align_corners=False),
     _grid((2, 2, 3, 4), (2, 3, 2, 2)), _grid_sample_vjp("bilinear", False))
case("grid_sample_bicubic_align_corners", "GRID_SAMPLER_2D",
     lambda x, g: gt.nn.functional.grid_sample(x, g, "bicubic", align_corners=True),
     _grid((1, 1, 4, 4), (1, 2, 2, 2)), _grid_sample_vjp("bicubic", True))
case("grid_sample_nearest_border", "GRID_SAMPLER_2D",
     lambda x, g: gt.nn.functional.grid_sample(x, g, "nearest", "border", align_corners=False),
     _grid((2, 1, 3, 3), (2, 2, 2, 2)), _grid_sample_vjp("nearest", False, border=True),
     order2="square")
case("grid_sample_3d_trilinear", "GRID_SAMPLER_3D",
     lambda x, g: gt.nn.functional.grid_sample(x, g, align_corners=True),
     _grid((1, 1, 2, 3, 3), (1, 1, 2, 2, 3)), _grid_sample_vjp("bilinear", True))


def _pad_np(pad, mode, **kw):
    return lambda x: np.pad(x, [(0, 0)] * (x.ndim - len(pad) // 2) + [
        (pad[2 * i], pad[2 * i + 1]) for i in reversed(range(len(pad) // 2))], mode=mode, **kw)


case("pad_constant_crop", "CONSTANT_PAD_ND",
     lambda x: gt.nn.functional.pad(x, (1, -1, 2, 0), value=1.5), normal(2, 3, 4),
     lambda v, x: [np.pad(v[:, 2:, 1:], [(0, 0), (0, 0), (0, 1)])], order2="square")
case("pad_reflect1d", ("REFLECTION_PAD1D", "REFLECTION_PAD1D_BACKWARD"),
     lambda x: gt.nn.functional.pad(x, (2, 3), mode="reflect"), normal(2, 2, 5),
     affine_vjps(_pad_np((2, 3), "reflect")), order2="square")
case("pad_reflect2d", ("REFLECTION_PAD2D", "REFLECTION_PAD2D_BACKWARD"),
     lambda x: gt.nn.ReflectionPad2d((1, 2, 3, 0))(x), normal(2, 4, 3),
     affine_vjps(_pad_np((1, 2, 3, 0), "reflect")), order2="square")
case("pad_replicate1d", ("REPLICATION_PAD1D", "REPLICATION_PAD1D_BACKWARD"),
     lambda x: gt.nn.functional.pad(x, (3, 1), mode="replicate"), normal(3, 4),
     affine_vjps(_pad_np((3, 1), "edge")), order2="square")
case("pad_replicate2d", ("REPLICATION_PAD2D", "REPLICATION_PAD2D_BACKWARD"),
     lambda x: gt.nn.functional.pad(x, (2, 1, 1, 2), mode="replicate"), normal(1, 2, 3, 3),
     affine_vjps(_pad_np((2, 1, 1, 2), "edge")), order2="square")
case("pad_reflect3d", ("REFLECTION_PAD3D", "REFLECTION_PAD3D_BACKWARD"),
     lambda x: gt.nn.ReflectionPad3d((1, 2, 0, 2, 2, 1))(x), normal(2, 3, 3, 4),
     affine_vjps(_pad_np((1, 2, 0, 2, 2, 1), "reflect")), order2="square")
case("pad_replicate3d", ("REPLICATION_PAD3D", "REPLICATION_PAD3D_BACKWARD"),
     lambda x: gt.nn.functional.pad(x, (2, 1, 1, 0, 0, 2), mode="replicate"),
     normal(1, 2, 2, 3, 2), affine_vjps(_pad_np((2, 1, 1, 0, 0, 2), "edge")), order2="square")
case("pad_circular2d", ("COPY", "SLICE"),
     lambda x: gt.nn.functional.pad(x, (1, 2, 2, 1), mode="circular"), normal(1, 2, 3, 4),
     affine_vjps(_pad_np((1, 2, 2, 1), "wrap")), order2="square")
case("conv2d_padding_mode_reflect", ("CONVOLUTION", "REFLECTION_PAD2D"),
     lambda x: gt.nn.functional.conv2d(gt.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"),
                                       gt.ones(1, 2, 3, 3, dtype=x.dtype)),
     normal(1, 2, 4, 3),
     affine_vjps(lambda x: conv_np(_pad_np((1, 1, 1, 1), "reflect")(x), np.ones((1, 2, 3, 3)))))


def _resample_np(axis_matrices):
    """Separable resampling: a matrix (out, in) per spatial dim, applied dim by dim."""
    def f(x):
        for k, m in enumerate(axis_matrices):
            x = np.moveaxis(np.tensordot(m, np.moveaxis(x, -len(axis_matrices) + k, 0), 1), 0,
                            -len(axis_matrices) + k)
        return x
    return f


def _nearest_matrix(n, out, scale=None):
    step = 1 / scale if scale else n / out
    m = np.zeros((out, n))
    m[np.arange(out), np.minimum(np.floor(np.arange(out) * step).astype(int), n - 1)] = 1
    return m


def _linear_matrix(n, out, align_corners, scale=None):
    m = np.zeros((out, n))
    for o in range(out):
        if align_corners:
            src = o * (n - 1) / (out - 1) if out > 1 else 0.0
        else:
            src = max((o + 0.5) * (1 / scale if scale else n / out) - 0.5, 0.0)
        lo = min(int(src), n - 1)
        hi = min(lo + 1, n - 1)
        m[o, lo] += 1 - (src - lo)
        m[o, hi] += src - lo
    return m


case("interpolate_nearest1d", ("UPSAMPLE_NEAREST1D", "UPSAMPLE_NEAREST1D_BACKWARD"),
     lambda x: gt.nn.functional.interpolate(x, scale_factor=1.7), normal(2, 2, 5),
     affine_vjps(_resample_np([_nearest_matrix(5, 8, 1.7)])), order2="square")
case("interpolate_nearest2d", ("UPSAMPLE_NEAREST2D", "UPSAMPLE_NEAREST2D_BACKWARD"),
     lambda x: gt.nn.Upsample(size=(7, 3))(x), normal(1, 2, 3, 5),
     affine_vjps(_resample_np([_nearest_matrix(3, 7), _nearest_matrix(5, 3)])),
     order2="square")
case("interpolate_bilinear", ("UPSAMPLE_BILINEAR2D", "UPSAMPLE_BILINEAR2D_BACKWARD"),
     lambda x: gt.nn.functional.interpolate(x, scale_factor=(2, 1.5), mode="bilinear"),
     normal(2, 1, 3, 4),
     affine_vjps(_resample_np([_linear_matrix(3, 6, False, 2), _linear_matrix(4, 6, False, 1.5)])),
     order2="square")
case("interpolate_bilinear_align_corners", "UPSAMPLE_BILINEAR2D",
     lambda x: gt.nn.functional.interpolate(x, size=(5, 2), mode="bilinear", align_corners=True),
     normal(1, 2, 3, 4),
     affine_vjps(_resample_np([_linear_matrix(3, 5, True), _linear_matrix(4, 2, True)])),
     order2="square")


def _batch_norm_vjp(v, x, w, b, dims=(0, 2, 3)):
    mean, var = x.mean(dims, keepdims=True), x.var(dims, keepdims=True)
    rstd = 1 / np.sqrt(var + 1e-5)
    xhat = (x - mean) * rstd
    shape = (1, -1) + (1,) * (x.ndim - 2)
    g = v * w.reshape(shape)
    dx = rstd * (g - g.mean(dims, keepdims=True) - xhat * (g * xhat).mean(dims, keepdims=True))
    return [dx, (v * xhat).sum(dims), v.sum(dims)]


def _group_norm_vjp(v, x, w, b, groups=2):
    n = x.shape[0]
    g = (v * w.reshape(1, -1, 1, 1)).reshape(n, groups, -1)
    xs = x.reshape(n, groups, -1)
    rstd = 1 / np.sqrt(xs.var(-1, keepdims=True) + 1e-5)
    xhat = (xs - xs.mean(-1, keepdims=True)) * rstd
    dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
    return [dx.reshape(x.shape), (v * xhat.reshape(x.shape)).sum((0, 2, 3)), v.sum((0, 2, 3))]


RUNNING_MEAN, RUNNING_VAR = np.array([0.3, -0.2, 0.1]), np.array([0.5, 1.5, 2.0])
case("batch_norm", "NATIVE_BATCH_NORM",
     lambda x, w, b: gt.nn.functional.batch_norm(
         x, gt.zeros(3, dtype=gt.float64), gt.ones(3, dtype=gt.float64), w, b, training=True),
     normals((4, 3, 2, 2), (3,), (3,)), _batch_norm_vjp)
case("batch_norm_1d_no_affine", "NATIVE_BATCH_NORM",
     lambda x: gt.nn.functional.batch_norm(x, None, None, training=True), normal(5, 3),
     lambda v, x: _batch_norm_vjp(v, x, np.ones(3), None, (0,))[:1])
case("batch_norm_eval", "NATIVE_BATCH_NORM",
     lambda x, w, b, m, var: gt.nn.functional.batch_norm(x, m, var, w, b),
     lambda r: [r.standard_normal((2, 3, 2)), r.standard_normal(3), r.standard_normal(3),
                Const(RUNNING_MEAN), Const(RUNNING_VAR)],
     lambda v, x, w, b, m, var: [
         v * (w / np.sqrt(var + 1e-5))[:, None],
         (v * (x - m[:, None]) / np.sqrt(var[:, None] + 1e-5)).sum((0, 2)), v.sum((0, 2))])
case("group_norm", "NATIVE_GROUP_NORM",
     lambda x, w, b: gt.nn.functional.group_norm(x, 2, w, b), normals((2, 4, 2, 3), (4,), (4,)),
     _group_norm_vjp)


def _lstm_layer(reverse):
    """torch's oneDNN LSTM layer op (nn.LSTM's in float32) called directly: output, h, c."""
    def layer(x, w_ih, w_hh, b_ih, b_hh, h, c):
        return call(D.MKLDNN_RNN_LAYER, (x, w_ih, w_hh, b_ih, b_hh, h, c),
                    (reverse, (), 2, 3, 1, True, False, False, True))[:3]
    return layer


def _lstm_layer_vjp(reverse):
    """An LSTM layer's backward by hand in numpy, step by step (i, f, g, o gates)."""
    def vjp(v, x, w_ih, w_hh, b_ih, b_hh, h0, c0):
        sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
        order = list(range(len(x)))[::-1 if reverse else 1]
        h, c, saved = h0, c0, {}
        for t in order:
            z = x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh
            i, f, g, o = (sigmoid(z[:, :3]), sigmoid(z[:, 3:6]), np.tanh(z[:, 6:9]),
                          sigmoid(z[:, 9:]))
            saved[t] = (x[t], h, c, i, f, g, o)
            c = f * c + i * g
            h = o * np.tanh(c)
        grad_out, dh, dc = v
        grads = [np.zeros_like(a) for a in (x, w_ih, w_hh, b_ih)]
        for t in reversed(order):
            xt, h_prev, c_prev, i, f, g, o = saved[t]
            tanh_c = np.tanh(f * c_prev + i * g)
            dh = dh + grad_out[t]
            dc = dc + dh * o * (1 - tanh_c ** 2)
            d = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                dc * i * (1 - g * g), dh * tanh_c * o * (1 - o)], 1)
            grads[0][t] = d @ w_ih
            grads[1] += d.T @ xt
            grads[2] += d.T @ h_prev
            grads[3] += d.sum(0)
            dh, dc = d @ w_hh, dc * f
        return grads + [grads[3], dh, dc]
    return vjp


for _reverse in (False, True):
    case(f"mkldnn_rnn_layer{'_reverse' if _reverse else ''}", "MKLDNN_RNN_LAYER",
         _lstm_layer(_reverse), normals((3, 2, 2), (12, 2), (12, 3), (12,), (12,), (2, 3), (2, 3)),
         _lstm_layer_vjp(_reverse), forward_ad=False)


def _channel_mask(shape, p):
    """The mask dropout2d draws (seeded): what its gradient is v times."""
    with gt.no_grad():
        return _seeded(lambda: gt.nn.functional.dropout2d(gt.ones(shape, dtype=gt.float64),
                                                           p))()._data


case("dropout2d", "MUL", _seeded(lambda x: gt.nn.functional.dropout2d(x, 0.5)),
     normal(3, 4, 2, 2), lambda v, x: [v * _channel_mask(x.shape, 0.5)])

# ------------------------------ functions real model files use ------------------------------
case("asin", "ASIN", lambda x: x.asin(), lambda r: [r.uniform(-0.8, 0.8, S)],
     lambda v, x: [v / np.sqrt(1 - x * x)])
case("arccos", "ACOS", lambda x: gt.arccos(x), lambda r: [r.uniform(-0.8, 0.8, S)],
     lambda v, x: [-v / np.sqrt(1 - x * x)])
case("arctan", "ATAN", lambda x: x.arctan(), normal(*S), lambda v, x: [v / (1 + x * x)])
case("asinh", "ASINH", lambda x: gt.asinh(x), normal(*S), lambda v, x: [v / np.sqrt(x * x + 1)])
case("sinh", "SINH", lambda x: gt.sinh(x), normal(*S), lambda v, x: [v * np.cosh(x)])
case("rad2deg", "RAD2DEG", lambda x: gt.rad2deg(x), normal(*S),
     lambda v, x: [v * 180 / np.pi])
case("deg2rad", "DEG2RAD", lambda x: x.deg2rad(), normal(*S), lambda v, x: [v * np.pi / 180])
case("cosh", "COSH", lambda x: x.cosh(), normal(*S), lambda v, x: [v * np.sinh(x)])
case("arccosh", "ACOSH", lambda x: x.arccosh(), lambda r: [r.uniform(1.2, 3.0, S)],
     lambda v, x: [v / np.sqrt(x * x - 1)])
case("atanh", "ATANH", lambda x: gt.arctanh(x), lambda r: [r.uniform(-0.8, 0.8, S)],
     lambda v, x: [v / (1 - x * x)])
case("atan2", "ATAN2", lambda y, x: gt.atan2(y, x), lambda r: [r.standard_normal(S), signed(
    r, (4,))], lambda v, y, x: [v * x / (x * x + y * y),
                               unbroadcast(-v * y / (x * x + y * y), x.shape)])
case("logaddexp", "LOGADDEXP", lambda x, y: gt.logaddexp(x, y), normals(S, (4,)),
     lambda v, x, y: [v / (1 + np.exp(y - x)), unbroadcast(v / (1 + np.exp(x - y)), y.shape)])
case("logaddexp2", "LOGADDEXP2", lambda x, y: x.logaddexp2(y), normals((3, 1), S),
     lambda v, x, y: [unbroadcast(v / (1 + 2 ** (y - x)), x.shape), v / (1 + 2 ** (x - y))])
case("hypot", "HYPOT", lambda x, y: gt.hypot(x, y), lambda r: [signed(r, S), signed(r, (4,))],
     lambda v, x, y: [v * x / np.hypot(x, y), unbroadcast(v * y / np.hypot(x, y), y.shape)])
case("nextafter", "NEXTAFTER", lambda x, y: gt.nextafter(x, y), normals(S, S),
     lambda v, x, y: [v, np.zeros_like(y)])
case("copysign", "COPYSIGN", lambda x, y: gt.copysign(x, y),
     lambda r: [signed(r, S), signed(r, (4,))],
     lambda v, x, y: [v * np.sign(x) * np.sign(y), np.zeros_like(y)])
case("copysign_scalar", "COPYSIGN_SCALAR", lambda x: x.copysign(-2.0), lambda r: [signed(r, S)],
     lambda v, x: [-v * np.sign(x)])
case("fmax", "FMAX", lambda x, y: gt.fmax(x, y), lambda r: [away_from(r, S), r.standard_normal(
    (4,)) * 0.1], lambda v, x, y: [v * (x > y), unbroadcast(v * (x < y), y.shape)])
case("fmin", "FMIN", lambda x, y: x.fmin(y), lambda r: [away_from(r, S), r.standard_normal(
    (4,)) * 0.1], lambda v, x, y: [v * (x < y), unbroadcast(v * (x > y), y.shape)])
case("ldexp", "LDEXP", lambda x, y: gt.ldexp(x, y), normals(S, (4,)),
     lambda v, x, y: [v * 2 ** y, unbroadcast(v * x * 2 ** y * np.log(2), y.shape)])
# frexp's exponent jumps at the powers of two: mantissas kept inside (0.55, 0.95)
case("frexp", "FREXP", lambda x: gt.frexp(x).mantissa,
     lambda r: [r.uniform(0.55, 0.95, S) * r.choice([-1.0, 1.0], S) * 2.0 ** r.integers(-3, 4, S)],
     lambda v, x: [v / 2.0 ** np.frexp(x)[1]])
# (log of a negative number is NaN: replaced, so no gradient reaches it)
case("nan_to_num", ("NAN_TO_NUM", "LOG"), lambda x: x.log().nan_to_num(1.0),
     lambda r: [signed(r, S)], lambda v, x: [v * (x > 0) / x])
# remainder and fmod jump where self / other is a whole number: quotients kept away from them


def _quotients(r, divisor):
    return divisor * (r.integers(-3, 3, S) + r.uniform(0.2, 0.8, S))


def _divisors(r):
    return r.uniform(1.5, 2.5, (4,)) * r.choice((-1.0, 1.0), (4,))


for _name, _rounded in (("remainder", np.floor), ("fmod", np.trunc)):
    _row = _name.upper()
    case(_name, _row, lambda x, y, _name=_name: getattr(gt, _name)(x, y),
         lambda r: [_quotients(r, d := _divisors(r)), d],
         lambda v, x, y, _rounded=_rounded: [v, unbroadcast(-v * _rounded(x / y), y.shape)])
    case(f"{_name}_scalar", f"{_row}_SCALAR", lambda x, _name=_name: getattr(x, _name)(1.5),
         lambda r: [_quotients(r, 1.5)], lambda v, x: [v])
# the comparisons written in place are flat: zero gradients (times x, to see them)
for _name, _compare in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                        ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)):
    case(f"{_name}_", f"{_name.upper()}_",
         lambda x, _name=_name: getattr(x * 1.0, _name + "_")(0.25) * x, normal(*S),
         lambda v, x, _compare=_compare: [v * _compare(x, 0.25)])
    case(f"{_name}_tensor_", f"{_name.upper()}_TENSOR_",
         lambda x, y, _name=_name: getattr(x * 1.0, _name + "_")(y) * x,
         lambda r: [r.standard_normal(S), r.standard_normal((4,))],
         lambda v, x, y, _compare=_compare: [v * _compare(x, y), np.zeros(y.shape)])
# div with a rounding mode is flat between the jumps: zero gradients (times x, to see them)
case("div_floor", "DIV_ROUNDED", lambda x, y: x.div(y, rounding_mode="floor") * x,
     lambda r: [_quotients(r, d := _divisors(r)), d],
     lambda v, x, y: [v * np.floor(x / y), np.zeros(y.shape)])
case("div_trunc", "DIV_ROUNDED", lambda x, y: gt.div(x, y, rounding_mode="trunc") * x,
     lambda r: [_quotients(r, d := _divisors(r)), d],
     lambda v, x, y: [v * np.trunc(x / y), np.zeros(y.shape)])
case("mod_operator", "REMAINDER_SCALAR", lambda x: x % -1.5, lambda r: [_quotients(r, 1.5)],
     lambda v, x: [v])
# round is flat between the half-integers (values kept 0.1 away from them)
case("round", "ROUND", lambda x: x.round() * x, lambda r: [r.integers(-3, 3, S) + r.uniform(
    0.1, 0.4, S)], lambda v, x: [v * np.round(x)])
case("round_decimals", "ROUND_DECIMALS", lambda x: gt.round(x, decimals=1) * x,
     lambda r: [(r.integers(-20, 20, S) + r.uniform(0.1, 0.4, S)) / 10],
     lambda v, x: [v * np.round(x, 1)])
# floor, ceil and trunc are flat between the integers; frac passes the gradient through
# (values kept 0.1 away from the integers, where they jump)
def _off_integers(r):
    return [r.integers(-3, 3, S) + r.uniform(0.1, 0.9, S)]


case("floor", "FLOOR", lambda x: x.floor() * x, _off_integers, lambda v, x: [v * np.floor(x)])
case("ceil", "CEIL", lambda x: gt.ceil(x) * x, _off_integers, lambda v, x: [v * np.ceil(x)])
case("trunc", "TRUNC", lambda x: x.trunc() * x + x.fix(), _off_integers,
     lambda v, x: [v * np.trunc(x)])
case("frac", "FRAC", lambda x: x.frac() * x, _off_integers,
     lambda v, x: [v * (x - np.trunc(x)) + v * x])
case("log2", "LOG2", lambda x: x.log2(), lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, x: [v / (x * np.log(2))])
case("log10", "LOG10", lambda x: gt.log10(x), lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, x: [v / (x * np.log(10))])
case("exp2", "EXP2", lambda x: x.exp2(), normal(*S), lambda v, x: [v * np.exp2(x) * np.log(2)])
case("lerp_scalar", "LERP_SCALAR", lambda s, e: gt.lerp(s, e, 0.3), normals(S, (4,)),
     lambda v, s, e: [0.7 * v, unbroadcast(0.3 * v, e.shape)])
case("lerp_scalar_far", "LERP_SCALAR", lambda s, e: s.lerp(e, 0.8), normals(S, S),
     lambda v, s, e: [0.2 * v, 0.8 * v])
case("lerp_", "LERP_SCALAR", lambda s, e: s.sin().lerp_(e, 0.3), normals(S, (4,)),
     lambda v, s, e: [0.7 * v * np.cos(s), unbroadcast(0.3 * v, e.shape)])
case("lerp_tensor", "LERP", lambda s, e, w: s.lerp(e, w),
     lambda r: [r.standard_normal(S), r.standard_normal((3, 1)), r.uniform(0, 1, (4,))],
     lambda v, s, e, w: [v * (1 - w), unbroadcast(v * w, e.shape),
                         unbroadcast(v * (e - s), w.shape)])
# median: the lower middle value; distinct values, so the gradient has one place to go
def _median_vjp_dim(v, x, dim):
    index = np.take(np.argsort(x, axis=dim), [(x.shape[dim] - 1) // 2], axis=dim)
    g = np.zeros_like(x)
    np.put_along_axis(g, index, np.expand_dims(v, dim), axis=dim)
    return g


case("median", "MEDIAN", lambda x: x.median() * x, normal(*S),
     lambda v, x: [v * np.sort(x, None)[5] + (v * x).sum() * (x == np.sort(x, None)[5])])
case("median_dim", "MEDIAN_DIM", lambda x: gt.median(x, 1).values, normal(*S),
     lambda v, x: [_median_vjp_dim(v, x, 1)])
case("addcmul", "ADDCMUL", lambda x, a, b: gt.addcmul(x, a, b, value=0.5),
     normals((3, 1), S, (4,)),
     lambda v, x, a, b: [unbroadcast(v, x.shape), 0.5 * v * b, unbroadcast(0.5 * v * a, b.shape)])
case("addcdiv", "ADDCDIV", lambda x, a, b: x.addcdiv(a, b, value=-2.0),
     lambda r: [r.standard_normal(S), r.standard_normal(S), signed(r, S)],
     lambda v, x, a, b: [v, -2.0 * v / b, 2.0 * v * a / b ** 2])
case("addcmul_", "ADDCMUL", lambda x, a: x.sin().addcmul_(a, a, value=0.5), normals(S, S),
     lambda v, x, a: [v * np.cos(x), v * a])
case("diag_vector", "DIAG_EMBED", lambda x: gt.diag(x, 1), normal(4),
     lambda v, x: [np.diagonal(v, 1)], order2="square")
case("diag_embed", "DIAG_EMBED", lambda x: gt.diag_embed(x, -1, 0, 2), normal(2, 3),
     lambda v, x: [np.diagonal(v, -1, 0, 2)], order2="square")
case("diag_matrix", "DIAGONAL_COPY", lambda x: x.diag(-1), normal(*S),
     lambda v, x: [_placed(x.shape, (np.arange(1, 3), np.arange(2)), v)], order2="square")
case("meshgrid", ("VIEW", "EXPAND"), lambda a, b: gt.meshgrid(a, b, indexing="xy"),
     normals((3,), (4,)), lambda v, a, b: [v[0].sum(0), v[1].sum(1)], order2="square")
case("sum_to_size", ("SUM_DIM", "VIEW"), lambda x: x.sum_to_size(3, 1), normal(2, 3, 4),
     lambda v, x: [np.broadcast_to(v[None], x.shape)], order2="square")
# torch.normal(mean, std): the draws' gradients are zero (as torch's), so the cases add the
# input back: d/dx is exactly 1
case("normal_tensor_float", "NORMAL_TENSOR_FLOAT",
     _seeded(lambda m: gt.normal(m, 2.0) * 0.0 + m), normal(*S), lambda v, m: [v])
case("normal_float_tensor", "NORMAL_FLOAT_TENSOR",
     _seeded(lambda s: gt.normal(1.0, s) * 0.0 + s), lambda r: [r.uniform(0.5, 1.0, S)],
     lambda v, s: [v])
case("normal_tensor_tensor", "NORMAL_TENSOR_TENSOR",
     _seeded(lambda m, s: gt.normal(m, s) * 0.0 + m * s),
     lambda r: [r.standard_normal((4,)), r.uniform(0.5, 1.0, S)],
     lambda v, m, s: [(v * s).sum(0), v * m])
case("scatter_value", "SCATTER_VALUE", lambda x, i: x.scatter(1, i, 2.5),
     lambda r: [r.standard_normal(S), Const(SCATTER_INDEX)],
     lambda v, x, i: [_scatter_vjp(v, x, i, None)[0]], order2="square")
case("scatter_value_", "SCATTER_VALUE", lambda x, i: x.sin().scatter_(0, i, -1.0),
     lambda r: [r.standard_normal(S), Const(np.array([[2, 0, 1, 1]]))],
     lambda v, x, i: [v * np.cos(x) * (np.arange(3)[:, None] != i)])
case("scatter_src_", "SCATTER", lambda x, i, s: (x * 2.0).scatter_(1, i, s),
     lambda r: [r.standard_normal(S), Const(SCATTER_INDEX), r.standard_normal((3, 2))],
     lambda v, x, i, s: [2 * _scatter_vjp(v, x, i, s)[0], _scatter_vjp(v, x, i, s)[1]])
case("unsafe_chunk", "UNSAFE_SPLIT", lambda x: x.unsafe_chunk(2, 1), normal(3, 5),
     lambda v, x: [np.concatenate(v, axis=1)], order2="square")
case("unsafe_split_with_sizes", "UNSAFE_SPLIT_WITH_SIZES",
     lambda x: gt.unsafe_split_with_sizes(x, [1, 2]), normal(3, 4),
     lambda v, x: [np.concatenate(v, axis=0)], order2="square")
case("baddbmm", "BADDBMM", lambda c, a, b: gt.baddbmm(c, a, b, beta=0.5, alpha=-2.0),
     normals((3, 2), (2, 3, 4), (2, 4, 2)),
     lambda v, c, a, b: [0.5 * v.sum(0), -2.0 * v @ np.swapaxes(b, 1, 2),
                         -2.0 * np.swapaxes(a, 1, 2) @ v])
case("baddbmm_", "BADDBMM", lambda c, a, b: (c * 1.0).baddbmm_(a, b, alpha=2.0),
     normals((2, 3, 2), (2, 3, 4), (2, 4, 2)),
     lambda v, c, a, b: [v, 2.0 * v @ np.swapaxes(b, 1, 2), 2.0 * np.swapaxes(a, 1, 2) @ v])
case("addmm_", "ADDMM", lambda c, a, b: (c * 1.0).addmm_(a, b, beta=2.0),
     normals((3, 2), (3, 4), (4, 2)), lambda v, c, a, b: [2.0 * v, v @ b.T, a.T @ v])

# ------------------------------ linear algebra (torch.linalg) ------------------------------
def _spd(x):
    """A symmetric positive definite matrix from any square x (so that every entry of x is an
    input: cholesky and eigh read one triangle only)."""
    return x @ x.mT + x.new_tensor(3 * np.eye(x.shape[-1]))


def _through_spd(g, x):
    """d(x x^T + 3I) back to x for a symmetric gradient g."""
    return (g + np.swapaxes(g, -1, -2)) @ x


def _gauge(V, first):
    """Eigen/singular vectors with the sign of each column fixed by its first row (a sign
    function has zero gradient): the same on both engines and under central differences."""
    return V * first.sign()


def _inv_T(a):
    return np.swapaxes(np.linalg.inv(a), -1, -2)


def _solve_vjp(v, a, b, left=True):
    vector = b.ndim == 1
    x = np.linalg.solve(a, b[:, None] if vector else b) if left else b @ np.linalg.inv(a)
    v = v[:, None] if vector else v
    gb = _inv_T(a) @ v if left else v @ _inv_T(a)
    ga = -gb @ x.T if left else -x.T @ gb
    return [ga, gb[:, 0] if vector else gb]


def _cofactors(a):
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(a.shape[1])] for i in range(a.shape[0])])


def _singular(r):
    rows = r.standard_normal((2, 3))
    return [np.vstack([rows, rows[:1] + 2 * rows[1:]])]


def _cholesky_vjp(v, x, upper=False):
    a = x @ x.T + 3 * np.eye(x.shape[0])
    L = np.linalg.cholesky(a)
    v = v.T if upper else v
    P = np.tril(L.T @ v)
    phi = 0.5 * (P + np.tril(P, -1).T)
    g = np.linalg.solve(L.T, phi) @ np.linalg.inv(L)
    return [_through_spd(g, x)]


def _qr_vjp(v, a):
    (gq, gr), (q, r) = v, np.linalg.qr(a)
    m, n = a.shape
    if m < n:  # the square part, then the last columns through R's last columns
        gx = _qr_vjp((gq + a[:, m:] @ gr[:, m:].T, gr[:, :m]), a[:, :m])[0]
        return [np.hstack([gx, q @ gr[:, m:]])]
    M = gr @ r.T - q.T @ gq
    return [(gq + q @ (np.triu(M) + np.triu(M, 1).T)) @ _inv_T(r)]


def _eigh_vjp(v, x):
    a = x @ x.T + 3 * np.eye(x.shape[0])
    lam, V = np.linalg.eigh(a)
    s = np.sign(V[:1])
    gl, gv = v[0], v[1] * s
    E = lam[None, :] - lam[:, None] + np.eye(len(lam))
    K = V.T @ gv
    g = V @ (np.diag(gl) + 0.5 * (K - K.T) / E) @ V.T
    return [_through_spd(g, x)]


def _svd_vjp(v, a):
    U, S, Vh = np.linalg.svd(a, full_matrices=False)
    s = np.sign(U[:1])
    gu, gs, gvh = v[0] * s, v[1], v[2] * s.T
    m, n = a.shape
    E = S[None] ** 2 - S[:, None] ** 2 + np.eye(len(S))
    J, K = U.T @ gu, Vh @ gvh.T
    inner = ((J - J.T) * S[None] + S[:, None] * (K - K.T)) / E + np.diag(gs)
    g = U @ inner @ Vh
    if m > n:
        g += (np.eye(m) - U @ U.T) @ (gu / S[None]) @ Vh
    if m < n:
        g += U @ (gvh / S[:, None]) @ (np.eye(n) - Vh.T @ Vh)
    return [g]


def _svd_gauged(a):
    U, S, Vh = gt.linalg.svd(a, full_matrices=False)
    return _gauge(U, U[..., :1, :]), S, _gauge(Vh, U[..., :1, :].mT)


def _eigh_gauged(x):
    L, V = gt.linalg.eigh(_spd(x))
    return L, _gauge(V, V[..., :1, :])


SQ = (3, 3)
case("linalg_inv", "LINALG_INV_EX", lambda a: gt.linalg.inv(a), lambda r: [
    r.standard_normal(SQ) + 3 * np.eye(3)], lambda v, a: [-_inv_T(a) @ v @ _inv_T(a)])
case("inverse_batch", "LINALG_INV_EX", lambda a: gt.inverse(a), lambda r: [
    r.standard_normal((2, 3, 3)) + 3 * np.eye(3)],
     lambda v, a: [-_inv_T(a) @ v @ _inv_T(a)])
case("linalg_solve", "LINALG_SOLVE_EX", lambda a, b: gt.linalg.solve(a, b), lambda r: [
    r.standard_normal(SQ) + 3 * np.eye(3), r.standard_normal((3, 2))], _solve_vjp)
case("linalg_solve_vector", "LINALG_SOLVE_EX", lambda a, b: gt.linalg.solve(a, b), lambda r: [
    r.standard_normal(SQ) + 3 * np.eye(3), r.standard_normal(3)], _solve_vjp)
case("linalg_solve_right", "LINALG_SOLVE_EX", lambda a, b: gt.linalg.solve(a, b, left=False),
     lambda r: [r.standard_normal(SQ) + 3 * np.eye(3), r.standard_normal((2, 3))],
     lambda v, a, b: _solve_vjp(v, a, b, left=False))
case("linalg_det", "LINALG_DET", lambda a: gt.linalg.det(a), normal(*SQ),
     lambda v, a: [v * np.linalg.det(a) * _inv_T(a)])
# a singular matrix: the cofactors, through the SVD (exact where A^{-1} does not exist);
# second order against torch only (tests/parity/test_parity_torch.py): beside the singular point,
# central differences see det A^{-T} computed from a near-singular A, noisy in the 4th digit
case("det_singular", ("LINALG_DET", "LINALG_SVD"), lambda a: gt.det(a), _singular,
     lambda v, a: [v * _cofactors(a)], order2=None)
case("linalg_slogdet", "LINALG_SLOGDET", lambda a: gt.linalg.slogdet(a), normal(*SQ),
     lambda v, a: [v[1] * _inv_T(a)])
case("logdet", ("LINALG_SLOGDET", "WHERE"), lambda a: gt.logdet(_spd(a)), normal(*SQ),
     lambda v, x: [_through_spd(v * _inv_T(x @ x.T + 3 * np.eye(3)), x)])
case("linalg_cholesky", "LINALG_CHOLESKY_EX", lambda x: gt.linalg.cholesky(_spd(x)),
     normal(*SQ), _cholesky_vjp)
case("linalg_cholesky_upper", "LINALG_CHOLESKY_EX",
     lambda x: gt.linalg.cholesky(_spd(x), upper=True), normal(*SQ),
     lambda v, x: _cholesky_vjp(v, x, upper=True))
case("cholesky_deprecated", "CHOLESKY", lambda x: gt.cholesky(_spd(x)), normal(*SQ),
     _cholesky_vjp)
case("cholesky_deprecated_upper", "CHOLESKY", lambda x: _spd(x).cholesky(upper=True),
     normal(*SQ), lambda v, x: _cholesky_vjp(v, x, upper=True))
case("linalg_qr_tall", "LINALG_QR", lambda a: gt.linalg.qr(a), normal(4, 3), _qr_vjp)
case("linalg_qr_wide", "LINALG_QR", lambda a: gt.linalg.qr(a), normal(3, 4), _qr_vjp)
case("linalg_eigh", "LINALG_EIGH", _eigh_gauged, normal(*SQ), _eigh_vjp)
case("linalg_eigvalsh", "LINALG_EIGH", lambda x: gt.linalg.eigvalsh(_spd(x)), normal(*SQ),
     lambda v, x: _eigh_vjp((v, np.zeros((3, 3))), x))
case("linalg_svd_tall", "LINALG_SVD", _svd_gauged, normal(4, 3), _svd_vjp)
case("linalg_svd_wide", "LINALG_SVD", _svd_gauged, normal(3, 4), _svd_vjp)
case("linalg_svdvals", "LINALG_SVD", lambda a: gt.linalg.svdvals(a), normal(3, 4),
     lambda v, a: (lambda U, S, Vh: [U @ np.diag(v) @ Vh])(*np.linalg.svd(a, False)))
case("matrix_norm_2", ("LINALG_SVD", "AMAX"), lambda a: gt.linalg.matrix_norm(a, 2),
     normal(3, 4), lambda v, a: (lambda U, S, Vh: [v * np.outer(U[:, 0], Vh[0])])(
         *np.linalg.svd(a, False)))
case("matrix_norm_nuc_dims", ("PERMUTE", "LINALG_SVD", "SUM_DIM"),
     lambda a: gt.linalg.matrix_norm(a, "nuc", dim=(0, 2)), normal(3, 2, 4),
     lambda v, a: [np.stack([v[k] * (lambda U, S, Vh: U @ Vh)(*np.linalg.svd(a[:, k], False))
                             for k in range(2)], 1)])


# powers and chains of products: torch's mm nodes (and linalg.inv's for a negative power)
def _power_vjp(v, a, n):
    """d(A^n): sum over k of (A^k)^T v (A^(n-1-k))^T; through A^{-1} for a negative n."""
    b = np.linalg.inv(a) if n < 0 else a
    p = [np.linalg.matrix_power(b, k) for k in range(abs(n))]
    g = sum(np.swapaxes(p[k], -1, -2) @ v @ np.swapaxes(p[abs(n) - 1 - k], -1, -2)
            for k in range(abs(n)))
    return [-np.swapaxes(b, -1, -2) @ g @ np.swapaxes(b, -1, -2) if n < 0 else g]


def _chain_vjp(v, *factors):
    """The gradient of each factor of a chain product (a 1-D first factor a row, a 1-D last
    one a column)."""
    mats = [f[None] if i == 0 and f.ndim == 1 else f[:, None] if f.ndim == 1 else f
            for i, f in enumerate(factors)]
    v = np.asarray(v).reshape(mats[0].shape[0], mats[-1].shape[1])
    grads = []
    for i, f in enumerate(factors):
        before = np.eye(mats[0].shape[0])
        for m in mats[:i]:
            before = before @ m
        after = np.eye(mats[-1].shape[1])
        for m in mats[i + 1:][::-1]:
            after = m @ after
        grads.append((before.T @ v @ after.T).reshape(f.shape))
    return grads


def _invertible(*shape):
    return lambda r: [r.standard_normal(shape) + 3 * np.eye(shape[-1])]


case("matrix_power_3", "MM", lambda a: gt.linalg.matrix_power(a, 3), _invertible(3, 3),
     lambda v, a: _power_vjp(v, a, 3))
case("matrix_power_6", "MM", lambda a: gt.matrix_power(a, 6), _invertible(3, 3),
     lambda v, a: _power_vjp(v, a, 6))
case("matrix_power_neg2", ("LINALG_INV_EX", "MM"), lambda a: a.matrix_power(-2),
     _invertible(3, 3), lambda v, a: _power_vjp(v, a, -2))
case("matrix_power_batch_5", ("BMM", "UNSAFE_VIEW"), lambda a: gt.linalg.matrix_power(a, 5),
     _invertible(2, 3, 3), lambda v, a: _power_vjp(v, a, 5))
case("multi_dot_vector_ends", ("MM", "VIEW"),
     lambda a, b, c, d: gt.linalg.multi_dot([a, b, c, d]),
     normals((4,), (4, 2), (2, 5), (5,)), _chain_vjp)
case("multi_dot_five", ("MM", "VIEW"), lambda *m: gt.linalg.multi_dot(m),
     normals((3, 6), (6, 2), (2, 4), (4, 5), (5, 2)), _chain_vjp)
case("chain_matmul", ("MM", "VIEW"), lambda a, b, c: gt.chain_matmul(a, b, c),
     normals((2, 3), (3, 4), (4, 2)), _chain_vjp)


# triangular solves: the gradient of A on the triangle the solve reads
def _triangle(a, upper, unitriangular=False):
    t = np.triu(a, int(unitriangular)) if upper else np.tril(a, -int(unitriangular))
    return t + np.eye(a.shape[-1]) if unitriangular else t


def _solve_triangular_vjp(v, a, b, upper, left=True, unitriangular=False):
    t = _triangle(a, upper, unitriangular)
    x = np.linalg.solve(t, b) if left else b @ np.linalg.inv(t)
    gb = np.linalg.solve(np.swapaxes(t, -1, -2), v) if left else v @ _inv_T(t)
    ga = -gb @ np.swapaxes(x, -1, -2) if left else -np.swapaxes(x, -1, -2) @ gb
    ga = _triangle(ga, upper, unitriangular) - (np.eye(a.shape[-1]) if unitriangular else 0)
    return [unbroadcast(ga, a.shape), unbroadcast(gb, b.shape)]


def _triangular(*shapes):
    """A well-conditioned square matrix (its diagonal away from 0) and a right-hand side."""
    return lambda r: [r.standard_normal(shapes[0]) + 3 * np.eye(shapes[0][-1]),
                      r.standard_normal(shapes[1])]


case("solve_triangular_upper", "LINALG_SOLVE_TRIANGULAR",
     lambda a, b: gt.linalg.solve_triangular(a, b, upper=True), _triangular((3, 3), (3, 2)),
     lambda v, a, b: _solve_triangular_vjp(v, a, b, True))
case("solve_triangular_lower_right_unit", "LINALG_SOLVE_TRIANGULAR",
     lambda a, b: gt.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
     _triangular((3, 3), (2, 3)), lambda v, a, b: _solve_triangular_vjp(v, a, b, False, False, True))
case("solve_triangular_batch_broadcast", "LINALG_SOLVE_TRIANGULAR",
     lambda a, b: gt.linalg.solve_triangular(a, b, upper=False), _triangular((2, 3, 3), (3, 2)),
     lambda v, a, b: _solve_triangular_vjp(v, a, b, False))


def _triangular_solve_vjp(v, b, a, upper=True, transpose=False, unitriangular=False):
    t = _triangle(a, upper, unitriangular)
    ga, gb = _solve_triangular_vjp(v[0], np.swapaxes(t, -1, -2) if transpose else t, b,
                                   upper != transpose)
    ga = np.swapaxes(ga, -1, -2) if transpose else ga
    ga = _triangle(ga, upper, unitriangular) - (np.eye(a.shape[-1]) if unitriangular else 0)
    return [gb, ga + v[1]]


case("triangular_solve", "TRIANGULAR_SOLVE", lambda b, a: gt.triangular_solve(b, a),
     lambda r: _triangular((3, 3), (3, 2))(r)[::-1], _triangular_solve_vjp)
case("triangular_solve_transpose_unit", "TRIANGULAR_SOLVE",
     lambda b, a: b.triangular_solve(a, upper=False, transpose=True, unitriangular=True),
     lambda r: _triangular((3, 3), (3, 2))(r)[::-1],
     lambda v, b, a: _triangular_solve_vjp(v, b, a, False, True, True))


# solves and inverses from a Cholesky factor: the factor made triangular by the case (torch's
# gradient reaches the whole factor, which only its triangle affects)
def _factor(x, upper):
    return (x.triu() if upper else x.tril()) + x.new_tensor(3 * np.eye(x.shape[-1]))


def _factor_np(x, upper):
    return (np.triu(x) if upper else np.tril(x)) + 3 * np.eye(x.shape[-1])


def _cholesky_solve_vjp(v, b, x, upper=False):
    L = _factor_np(x, upper)
    A = np.swapaxes(L, -1, -2) @ L if upper else L @ np.swapaxes(L, -1, -2)
    X = np.linalg.solve(A, b)
    gb = np.linalg.solve(A, v)
    C = gb @ np.swapaxes(X, -1, -2)
    C = C + np.swapaxes(C, -1, -2)
    gL = -L @ C if upper else -C @ L
    return [unbroadcast(gb, b.shape), unbroadcast(np.triu(gL) if upper else np.tril(gL), x.shape)]


def _cholesky_inverse_vjp(v, x, upper=False):
    L = _factor_np(x, upper)
    inverse = np.linalg.inv(np.swapaxes(L, -1, -2) @ L if upper else L @ np.swapaxes(L, -1, -2))
    C = inverse @ (v + np.swapaxes(v, -1, -2)) @ inverse
    gL = -L @ C if upper else -C @ L
    return [np.triu(gL) if upper else np.tril(gL)]


case("cholesky_solve", ("CHOLESKY_SOLVE", "TRIL"),
     lambda b, x: gt.cholesky_solve(b, _factor(x, False)), normals((3, 2), (3, 3)),
     _cholesky_solve_vjp)
case("cholesky_solve_upper_batch", ("CHOLESKY_SOLVE", "TRIU"),
     lambda b, x: b.cholesky_solve(_factor(x, True), upper=True), normals((2, 3, 2), (3, 3)),
     lambda v, b, x: _cholesky_solve_vjp(v, b, x, True))
case("cholesky_inverse", ("CHOLESKY_INVERSE", "TRIL"),
     lambda x: gt.cholesky_inverse(_factor(x, False)), normal(3, 3), _cholesky_inverse_vjp)
case("cholesky_inverse_upper", ("CHOLESKY_INVERSE", "TRIU"),
     lambda x: _factor(x, True).cholesky_inverse(upper=True), normal(3, 3),
     lambda v, x: _cholesky_inverse_vjp(v, x, True))


# linalg.lu_factor: the closed form is the adjoint of first-order perturbation of P^T A = L U
# (dA = E_ij for each entry): the square part's X = L^{-1} P^T dA U^{-1} splits into
# dL = L tril(X, -1) and dU = triu(X) U; a wide A's last columns give dU2 = L^{-1}(P^T dA2 -
# dL U2), a tall A's last rows dL2 = (P^T dA2 - L2 dU) U^{-1}
def _lu_perturbation(LU, P, da):
    m, n = LU.shape
    k = min(m, n)
    L, U = np.tril(LU[:, :k], -1) + np.eye(m, k), np.triu(LU[:k])
    d = P.T @ da
    X = np.linalg.solve(L[:k], d[:k, :k]) @ np.linalg.inv(U[:, :k])
    dL, dU = L[:k] @ np.tril(X, -1), np.triu(X) @ U[:, :k]
    out = np.zeros((m, n), np.result_type(LU, da))
    out[:k, :k] = dL + dU
    if n > k:
        out[:, k:] = np.linalg.solve(L, d[:, k:] - dL @ U[:, k:])
    if m > k:
        out[k:, :] = (d[k:] - L[k:] @ dU) @ np.linalg.inv(U)
    return out


def _lu_factor_vjp(v, a):
    if a.ndim == 3:
        return [np.stack([_lu_factor_vjp(v[b], a[b])[0] for b in range(len(a))])]
    LU, pivots = (x.numpy() for x in gt.linalg.lu_factor(gt.tensor(a)))
    perm = np.arange(a.shape[0])
    for j, p in enumerate(pivots - 1):
        perm[[j, p]] = perm[[p, j]]
    P = np.eye(a.shape[0])[perm].T
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):  # (a complex A's: the conjugate Wirtinger gradient)
        e = np.zeros(a.shape)
        e[i] = 1
        g[i] = np.sum(v * np.conj(_lu_perturbation(LU, P, e)))
    return [g]


def _lu_vjp(*cotangents_and_a):
    """linalg.lu's L and U are LU's two triangles: their cotangents packed as LU's."""
    *vs, a = cotangents_and_a
    vL, vU = vs[0] if len(vs) == 1 else vs  # (the real sweep passes them as a list)
    k = min(a.shape[-2:])
    packed = np.zeros(a.shape, np.result_type(vL, vU))
    packed[..., :, :k] += np.tril(vL, -1)
    packed[..., :k, :] += np.triu(vU)
    return _lu_factor_vjp(packed, a)


case("linalg_lu_factor", "LINALG_LU_FACTOR_EX", lambda a: gt.linalg.lu_factor(a).LU,
     normal(3, 3), _lu_factor_vjp)
case("linalg_lu_factor_ex_wide", "LINALG_LU_FACTOR_EX", lambda a: gt.linalg.lu_factor_ex(a).LU,
     normal(3, 5), _lu_factor_vjp)
case("lu_tall_batch", "LINALG_LU_FACTOR_EX", lambda a: a.lu()[0], normal(2, 4, 2),
     _lu_factor_vjp)
# linalg.lu: one node for P, L and U (P has no gradient)
case("linalg_lu", "LINALG_LU", lambda a: gt.linalg.lu(a)[1:], normal(3, 3), _lu_vjp)
case("linalg_lu_wide", "LINALG_LU", lambda a: gt.linalg.lu(a).U, normal(3, 5),
     lambda v, a: _lu_vjp([np.zeros((3, 3)), v], a))
case("linalg_lu_tall_batch", "LINALG_LU", lambda a: gt.linalg.lu(a)[1:], normal(2, 5, 3),
     _lu_vjp)

# linalg.lu_solve from a packed LU (any matrix with U's diagonal away from zero) and pivots:
# the closed form is the gradient for A = P L U, taken to L's strict lower triangle and U's upper
_PIVOTS = np.array([2, 3, 3], np.int32)


def _lu_system(r, b_shape):
    return [r.standard_normal((3, 3)) + 3 * np.eye(3), Const(_PIVOTS), r.standard_normal(b_shape)]


def _lu_solve_vjp(left, adjoint):
    def vjp(v, LU, pivots, b):
        perm = np.arange(3)
        for k, p in enumerate(pivots - 1):
            perm[[k, p]] = perm[[p, k]]
        P = np.eye(3)[perm].T
        L, U = np.tril(LU, -1) + np.eye(3), np.triu(LU)
        A = P @ L @ U
        H = lambda x: x.conj().T  # (complex values: conjugate Wirtinger, as torch's)
        op = H(A) if adjoint else A
        X = np.linalg.solve(op, b) if left else b @ np.linalg.inv(op)
        # the gradient for op(A) (-op^{-H} v X^H or -X^H v op^{-H}), then for A and B
        op_inv_H = H(np.linalg.inv(op))
        g_op = -op_inv_H @ v @ H(X) if left else -H(X) @ v @ op_inv_H
        gA = H(g_op) if adjoint else g_op
        gB = op_inv_H @ v if left else v @ op_inv_H
        return [np.tril(P.T @ gA @ H(U), -1) + np.triu(H(L) @ P.T @ gA), gB]
    return vjp


case("linalg_lu_solve", "LINALG_LU_SOLVE", lambda LU, p, b: gt.linalg.lu_solve(LU, p, b),
     lambda r: _lu_system(r, (3, 2)), _lu_solve_vjp(True, False))
case("linalg_lu_solve_adjoint", "LINALG_LU_SOLVE",
     lambda LU, p, b: gt.linalg.lu_solve(LU, p, b, adjoint=True),
     lambda r: _lu_system(r, (3, 2)), _lu_solve_vjp(True, True))
case("linalg_lu_solve_right", "LINALG_LU_SOLVE",
     lambda LU, p, b: gt.linalg.lu_solve(LU, p, b, left=False),
     lambda r: _lu_system(r, (2, 3)), _lu_solve_vjp(False, False))
case("linalg_lu_solve_right_adjoint", "LINALG_LU_SOLVE",
     lambda LU, p, b: gt.linalg.lu_solve(LU, p, b, left=False, adjoint=True),
     lambda r: _lu_system(r, (2, 3)), _lu_solve_vjp(False, True))
# torch.lu_solve's (deprecated) order: b first; B's batch broadcast over one LU (each of B's
# matrices its own system, LU's gradient summed over them)
def _lu_solve_batch_vjp(v, b, LU, pivots):
    parts = [_lu_solve_vjp(True, False)(v[i], LU, pivots, b[i]) for i in range(len(b))]
    return [np.stack([gB for _, gB in parts]), sum(gLU for gLU, _ in parts)]


case("lu_solve_deprecated_batch", "LINALG_LU_SOLVE", lambda b, LU, p: b.lu_solve(LU, p),
     lambda r: [r.standard_normal((2, 3, 2))] + _lu_system(r, (3, 2))[:2],
     _lu_solve_batch_vjp)

# householder_product (orgqr): Q = H_0 ... H_{k-1} I[:, :n], H_i = I - t_i v_i v_i^H with v_i
# 1 at i and a's column i below it. With M_i = (H_0..H_{i-1})^H V (H_{i+1}..H_{k-1} I[:, :n])^H
# for the cotangent V: a[r, i]'s gradient (r > i) is -(conj(t_i) M_i v_i + t_i M_i^H v_i)[r],
# t_i's -v_i^H M_i v_i (conjugate Wirtinger for complex values, as torch's)
def _reflectors(a, t):
    m = a.shape[0]
    vs = [np.where(np.arange(m) > i, a[:, i], 0.0) + (np.arange(m) == i)
          for i in range(len(t))]
    return vs, [np.eye(m) - ti * np.outer(v, v.conj()) for ti, v in zip(t, vs)]


def _H(x):
    return np.conj(x).T


def _householder_vjp(V, a, t):
    if a.ndim == 3:  # a batch: each matrix on its own
        parts = [_householder_vjp(V[b], a[b], t[b]) for b in range(len(a))]
        return [np.stack([p[0] for p in parts]), np.stack([p[1] for p in parts])]
    m, n = a.shape
    vs, Hs = _reflectors(a, t)
    ga, gt_ = np.zeros_like(a), np.zeros_like(t)
    for i, (ti, v) in enumerate(zip(t, vs)):
        before = functools.reduce(np.matmul, Hs[:i], np.eye(m))
        after = functools.reduce(np.matmul, Hs[i + 1:], np.eye(m)) @ np.eye(m, n)
        M = _H(before) @ V @ _H(after)
        ga[i + 1:, i] = -(np.conj(ti) * M @ v + ti * _H(M) @ v)[i + 1:]
        gt_[i] = -v.conj() @ M @ v
    return [ga, gt_]


def _reflector_scales(shape):
    return lambda r: [r.standard_normal(shape), r.uniform(0.5, 1.5, shape[:-2] + (shape[-1],))]


case("householder_product", "LINALG_HOUSEHOLDER_PRODUCT",
     lambda a, t: gt.linalg.householder_product(a, t), _reflector_scales((4, 3)),
     _householder_vjp)
def _fewer_reflectors_vjp(V, a, t):
    """k < n reflectors: the missing ones are the identity (a scale of 0)."""
    ga, g_scales = _householder_vjp(V, a, np.append(t, np.zeros(a.shape[-1] - len(t))))
    return [ga, g_scales[:len(t)]]


case("householder_product_fewer_reflectors", "LINALG_HOUSEHOLDER_PRODUCT",
     lambda a, t: gt.orgqr(a, t), lambda r: [r.standard_normal((4, 3)), r.uniform(0.5, 1.5, 2)],
     _fewer_reflectors_vjp)
case("householder_product_square_batch", "LINALG_HOUSEHOLDER_PRODUCT",
     lambda a, t: a.orgqr(t), _reflector_scales((2, 3, 3)), _householder_vjp)


# ormqr: op(Q) C or C op(Q) with Q = H_0 ... H_{k-1} (m x m); the gradient for Q (V C^T, ...)
# then householder_product's for the reflectors (a's columns beyond m hold none)
def _ormqr_vjp(left, transpose):
    def vjp(V, a, t, c):
        m, n = a.shape
        square = np.pad(a, ((0, 0), (0, max(0, m - n))))[:, :m]
        Q = functools.reduce(np.matmul, _reflectors(square, t)[1], np.eye(m))
        op = _H(Q) if transpose else Q
        gc, g_op = (_H(op) @ V, V @ _H(c)) if left else (V @ _H(op), _H(c) @ V)
        g_square, g_scales = _householder_vjp(_H(g_op) if transpose else g_op, square, t)
        ga = np.zeros_like(a)
        ga[:, :min(m, n)] = g_square[:, :min(m, n)]
        return [ga, g_scales, gc]
    return vjp


for _id, _shapes, _left, _transpose in [
    ("ormqr", ((4, 3), (3,), (4, 2)), True, False),
    ("ormqr_transpose_wide", ((3, 5), (3,), (3, 2)), True, True),
    ("ormqr_right", ((4, 3), (3,), (2, 4)), False, False),
    ("ormqr_right_transpose", ((3, 2), (2,), (4, 3)), False, True),
]:
    case(_id, "ORMQR", lambda a, t, c, left=_left, transpose=_transpose: gt.ormqr(
        a, t, c, left=left, transpose=transpose),
         lambda r, shapes=_shapes: [r.standard_normal(shapes[0]), r.uniform(0.5, 1.5, shapes[1]),
                                    r.standard_normal(shapes[2])],
         _ormqr_vjp(_left, _transpose), forward_ad=False)

# the pseudo-inverse of a full-rank matrix: (A^T A)^{-1} A^T (tall), its transpose's
# transpose (wide); least squares through it
def _pinv_vjp(v, a):
    if a.shape[0] < a.shape[1]:
        return [_pinv_vjp(v.T, a.T)[0].T]
    C = np.linalg.inv(a.T @ a)
    P = C @ a.T
    return [-a @ P @ v.T @ C - P.T @ v @ P.T + v.T @ C]


def _lstsq_vjp(v, a, b, residuals=False):
    vector = b.ndim == 1
    B = b[:, None] if vector else b
    gx = v[0][:, None] if vector else v[0]
    P = np.linalg.pinv(a)
    ga, gb = _pinv_vjp(gx @ B.T, a)[0], P.T @ gx
    if residuals:  # |A X - B|^2 per column, X optimal: only the explicit dependence counts
        X = P @ B
        r = (a @ X - B) * (v[1][None] if not vector else v[1])
        ga, gb = ga + 2 * r @ X.T, gb - 2 * r
    return [ga, gb[:, 0] if vector else gb]


case("pinv_tall", "LINALG_PINV", lambda a: gt.linalg.pinv(a), normal(4, 3), _pinv_vjp)
case("pinv_wide", "LINALG_PINV", lambda a: gt.pinverse(a), normal(2, 4), _pinv_vjp)
case("pinv_hermitian", ("LINALG_PINV", "MM"), lambda x: gt.linalg.pinv(_spd(x), hermitian=True),
     normal(3, 3), lambda v, x: [_through_spd(-_inv_T(x @ x.T + 3 * np.eye(3)) @ v @ _inv_T(
         x @ x.T + 3 * np.eye(3)), x)])
case("lstsq_tall", "LINALG_LSTSQ", lambda a, b: gt.linalg.lstsq(a, b).solution,
     normals((4, 3), (4, 2)), lambda v, a, b: _lstsq_vjp((v, None), a, b))
case("lstsq_wide_vector", "LINALG_LSTSQ", lambda a, b: gt.linalg.lstsq(a, b).solution,
     normals((2, 4), (2,)), lambda v, a, b: _lstsq_vjp((v, None), a, b))
case("lstsq_gelsd_residuals", "LINALG_LSTSQ",
     lambda a, b: gt.linalg.lstsq(a, b, driver="gelsd")[:2], normals((5, 3), (5, 2)),
     lambda v, a, b: _lstsq_vjp(v, a, b, residuals=True))


def _expm(m):
    """e^m by a Taylor series after halving (independent of the engine's Pade kernel)."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(m).sum(0).max(), 1e-300) / 0.25))))
    m = m / 2.0 ** s
    term, out = np.eye(len(m)), np.eye(len(m))
    for k in range(1, 30):
        term = term @ m / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _matrix_exp_vjp(v, a):
    """The adjoint of e^A's derivative: the top right block of exp([[A^T, v], [0, A^T]])."""
    if a.ndim == 3:
        return [np.stack([_matrix_exp_vjp(vi, ai)[0] for vi, ai in zip(v, a)])]
    n = len(a)
    return [_expm(np.block([[a.T, v], [np.zeros((n, n)), a.T]]))[:n, n:]]


case("matrix_exp", "LINALG_MATRIX_EXP", lambda a: gt.linalg.matrix_exp(a), normal(3, 3),
     _matrix_exp_vjp)
case("matrix_exp_batch", "LINALG_MATRIX_EXP", lambda a: a.matrix_exp(), normal(2, 3, 3),
     _matrix_exp_vjp)
case("linalg_vander", ("CAT", "CUMPROD"), lambda x: gt.linalg.vander(x, N=4),
     lambda r: [signed(r, (3,))], lambda v, x: [sum(k * x ** (k - 1) * v[:, k] for k in range(1, 4))])
case("linalg_diagonal", "DIAGONAL", lambda a: gt.linalg.diagonal(a, offset=1), normal(2, 3, 4),
     lambda v, a: [np.stack([np.diag(vi, 1)[:3, :] for vi in v])])
case("tensorinv", ("LINALG_INV_EX",), lambda a: gt.linalg.tensorinv(a, ind=1),
     lambda r: [(r.standard_normal((4, 4)) + 3 * np.eye(4)).reshape(4, 2, 2)],
     lambda v, a: [(-_inv_T(a.reshape(4, 4)) @ v.reshape(4, 4) @ _inv_T(a.reshape(4, 4)))
                   .reshape(4, 2, 2)])
case("tensorsolve", ("LINALG_SOLVE_EX",), lambda a, b: gt.linalg.tensorsolve(a, b),
     lambda r: [(r.standard_normal((6, 6)) + 3 * np.eye(6)).reshape(2, 3, 6),
                r.standard_normal((2, 3))],
     lambda v, a, b: [g.reshape(s) for g, s in zip(
         _solve_vjp(v, a.reshape(6, 6), b.reshape(6)), ((2, 3, 6), (2, 3)))])
def _cond_vjp(v, a):
    U, S, Vh = np.linalg.svd(a)
    return [v * (np.outer(U[:, 0], Vh[0]) / S[-1] - S[0] / S[-1] ** 2 * np.outer(U[:, -1],
                                                                                 Vh[-1]))]


case("linalg_cond", "LINALG_SVD", lambda a: gt.linalg.cond(a), normal(3, 3), _cond_vjp)
case("linalg_cond_nuc", ("LINALG_SVD", "RECIPROCAL"), lambda a: gt.linalg.cond(a, "nuc"),
     normal(3, 3), lambda v, a: (lambda U, S, Vh: [v * U @ np.diag(
         (1 / S).sum() - S.sum() / S ** 2) @ Vh])(*np.linalg.svd(a)))
case("solve_ex_right", "LINALG_SOLVE_EX", lambda a, b: gt.linalg.solve_ex(a, b, left=False)[0],
     lambda r: [r.standard_normal(SQ) + 3 * np.eye(3), r.standard_normal((2, 3))],
     lambda v, a, b: _solve_vjp(v, a, b, left=False))

# ------------------------------ special functions (torch.special) ------------------------------
# the closed forms in the special functions' own terms (i0' = i1, digamma' = trigamma, ...),
# their values torch's series (special_functions, which numpy lacks)
from gradtool.engine.autograd import special_functions as sf  # noqa: E402


def _ndtr_np(x):
    return 0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2))


case("i0", "I0", lambda x: x.i0(), normal(*S), lambda v, x: [v * sf.i1(x)])
case("special_i0e", "SPECIAL_I0E", lambda x: gt.special.i0e(x), lambda r: [away_from(r, S)],
     lambda v, x: [v * (sf.i1e(x) - np.sign(x) * sf.i0e(x))])
case("special_i1", "SPECIAL_I1", lambda x: gt.special.i1(x), lambda r: [away_from(r, S)],
     lambda v, x: [v * (sf.i0(x) - sf.i1(x) / x)])
case("special_i1e", "SPECIAL_I1E", lambda x: gt.special.i1e(x), lambda r: [away_from(r, S)],
     lambda v, x: [v * (sf.i0e(x) - sf.i1e(x) * (np.sign(x) + 1 / x))])
case("lgamma", "LGAMMA", lambda x: x.lgamma(), lambda r: [r.uniform(0.5, 4.0, S)],
     lambda v, x: [v * sf.digamma(x)])
case("digamma", "DIGAMMA", lambda x: gt.special.psi(x), lambda r: [r.uniform(0.5, 4.0, S)],
     lambda v, x: [v * sf.polygamma(x, 1)])
case("polygamma", "POLYGAMMA", lambda x: gt.polygamma(2, x), lambda r: [r.uniform(0.5, 4.0, S)],
     lambda v, x: [v * sf.polygamma(x, 3)])
case("polygamma_", "POLYGAMMA_", lambda x: (x * 1).polygamma_(2),
     lambda r: [r.uniform(0.5, 4.0, S)], lambda v, x: [v * sf.polygamma(x, 3)])
case("mvlgamma", "MVLGAMMA", lambda x: x.mvlgamma(3), lambda r: [r.uniform(1.5, 4.0, S)],
     lambda v, x: [v * sum(sf.digamma(x - j / 2) for j in range(3))])
case("erfc", "ERFC", lambda x: x.erfc(), normal(*S),
     lambda v, x: [-v * 2 / math.sqrt(math.pi) * np.exp(-x * x)])
case("erfinv", "ERFINV", lambda x: gt.erfinv(x), lambda r: [r.uniform(-0.9, 0.9, S)],
     lambda v, x: [v * math.sqrt(math.pi) / 2 * np.exp(sf.erfinv(x) ** 2)])
case("special_erfcx", "SPECIAL_ERFCX", lambda x: gt.special.erfcx(x), normal(*S),
     lambda v, x: [v * (2 * x * sf.erfcx(x) - 2 / math.sqrt(math.pi))])
case("special_ndtri", "SPECIAL_NDTRI", lambda x: gt.special.ndtri(x),
     lambda r: [r.uniform(0.05, 0.95, S)],
     lambda v, x: [v * math.sqrt(2 * math.pi) * np.exp(sf.ndtri(x) ** 2 / 2)])
case("special_log_ndtr", "SPECIAL_LOG_NDTR", lambda x: gt.special.log_ndtr(x),
     lambda r: [3 * r.standard_normal(S)],
     lambda v, x: [v * np.exp(-x * x / 2) / math.sqrt(2 * math.pi) / _ndtr_np(x)])
case("special_ndtr", ("ERF", "MUL_SCALAR"), lambda x: gt.special.ndtr(x), normal(*S),
     lambda v, x: [v * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)])
case("sinc", "SINC", lambda x: x.sinc(), lambda r: [away_from(r, S)],
     lambda v, x: [v * (np.cos(np.pi * x) / x - np.sin(np.pi * x) / (np.pi * x * x))])
case("special_entr", "SPECIAL_ENTR", lambda x: gt.special.entr(x),
     lambda r: [r.uniform(0.2, 2.0, S)], lambda v, x: [-v * (1 + np.log(x))])
case("xlogy", "XLOGY", lambda x, y: gt.xlogy(x, y),
     lambda r: [r.standard_normal((3, 1)), r.uniform(0.5, 2.0, (4,))],
     lambda v, x, y: [unbroadcast(v * np.log(y), x.shape), unbroadcast(v * x / y, y.shape)])
case("xlogy_number_self", "XLOGY_SCALAR_SELF", lambda y: gt.special.xlogy(2.0, y),
     lambda r: [r.uniform(0.5, 2.0, S)], lambda v, y: [v * 2.0 / y])
case("xlogy_number_other", "XLOGY_SCALAR_OTHER", lambda x: x.xlogy(3.0), normal(*S),
     lambda v, x: [v * math.log(3.0)])
case("special_xlog1py", "SPECIAL_XLOG1PY", lambda x, y: gt.special.xlog1py(x, y),
     lambda r: [r.standard_normal(S), r.uniform(-0.5, 2.0, S)],
     lambda v, x, y: [v * np.log1p(y), v * x / (1 + y)])
case("special_xlog1py_number_self", "SPECIAL_XLOG1PY_SCALAR_SELF",
     lambda y: gt.special.xlog1py(2.0, y), lambda r: [r.uniform(-0.5, 2.0, S)],
     lambda v, y: [v * 2.0 / (1 + y)])
case("special_xlog1py_number_other", "SPECIAL_XLOG1PY_SCALAR_OTHER",
     lambda x: gt.special.xlog1py(x, 3.0), normal(*S), lambda v, x: [v * math.log1p(3.0)])
case("special_zeta", "SPECIAL_ZETA", lambda x, q: gt.special.zeta(x, q),
     lambda r: [Const(r.uniform(2.0, 4.0, S)), r.uniform(0.5, 2.0, S)],
     lambda v, x, q: [-v * x * sf.zeta(x + 1, q)])
case("igamma", "IGAMMA", lambda a, x: gt.special.gammainc(a, x),
     lambda r: [Const(r.uniform(0.5, 3.0, S)), r.uniform(0.5, 3.0, S)],
     lambda v, a, x: [v * x ** (a - 1) * np.exp(-x) / np.vectorize(math.gamma)(a)])
case("igammac", "IGAMMAC", lambda a, x: a.igammac(x),
     lambda r: [Const(r.uniform(0.5, 3.0, S)), r.uniform(0.5, 3.0, S)],
     lambda v, a, x: [-v * x ** (a - 1) * np.exp(-x) / np.vectorize(math.gamma)(a)])
# _standard_gamma's draws move with the concentration at a fixed CDF value, not at fixed
# noise: central differences of seeded draws cannot see that derivative, so this case adds
# the input back to draws times zero (the row builds its node, saves, runs its backward and
# keeps the dtype); the derivative itself is checked against the CDF in
# tests/engine/test_distribution_families.py and against torch's in parity
case("standard_gamma", "STANDARD_GAMMA", _seeded(lambda a: gt._standard_gamma(a) * 0.0 + a),
     lambda r: [r.uniform(0.5, 3.0, S)], lambda v, a: [v], order2=None, forward_ad=False)
case("special_zeta_number_self", "SPECIAL_ZETA_SCALAR_SELF",
     lambda q: gt.special.zeta(2.5, q), lambda r: [r.uniform(0.5, 2.0, S)],
     lambda v, q: [-v * 2.5 * sf.zeta(3.5, q)])

CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS), "duplicate case ids"
JVP_CASES = [c for c in CASES if c.forward_ad]  # (forward mode's sweep)


# ======================================== running a case ========================================
def _outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex]


def build(case, rng, dtype=np.float64):
    """The case's inputs as gradtool values, and as numpy arrays for the closed form."""
    inputs, arrays = [], []
    for item in case.make(rng):
        if isinstance(item, Const):
            value = item.value
            arrays.append(value)
            inputs.append(gt.tensor(value) if isinstance(value, np.ndarray) else value)
        else:  # (complex values stay complex: the complex sweep's)
            a = np.asarray(item, dtype=None if np.iscomplexobj(item) else dtype)
            arrays.append(a)
            inputs.append(gt.tensor(a, requires_grad=True))
    return inputs, arrays


def diff_inputs(inputs):
    return [x for x in inputs if isinstance(x, gt.Tensor) and x.requires_grad]


def squared(fn):
    def fn2(*xs):
        out = fn(*xs)
        if isinstance(out, (tuple, list)):
            return tuple(o * o for o in out)
        return out * out
    return fn2


def order2_fn(case):
    return squared(case.fn) if case.order2 == "square" else case.fn


def engine_vjp(case, inputs, rng):
    outs = _outputs(case.fn(*inputs))
    cots = [rng.standard_normal(o.shape).astype(o._data.dtype) for o in outs]
    grads = gt.autograd.grad(outs, diff_inputs(inputs),
                             grad_outputs=[gt.tensor(c) for c in cots], allow_unused=True)
    return cots, grads


def closed_form(case, cots, arrays):
    v = cots[0] if len(cots) == 1 else [c.astype(np.float64) for c in cots]
    if len(cots) == 1 and v.dtype != np.float64 and case.id != "to_float32":
        v = v.astype(np.float64)
    return case.vjp(v, *arrays)


# ========================================= the sweeps =========================================
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_matches_closed_form(case):
    """The engine's vector-Jacobian product for a random cotangent equals the derivative
    written by hand in numpy."""
    rng = np.random.default_rng(1)
    inputs, arrays = build(case, rng)
    cots, grads = engine_vjp(case, inputs, rng)
    expected = closed_form(case, cots, arrays)
    diff = diff_inputs(inputs)
    assert len(expected) == len(diff) == len(grads)
    for k, (x, g, e) in enumerate(zip(diff, grads, expected)):
        assert g is not None, f"input {k} got no gradient"
        assert g.shape == x.shape, f"input {k}: grad shape {g.shape} != input {x.shape}"
        assert g.dtype == x.dtype
        np.testing.assert_allclose(g._data, e, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{case.id}: input {k} vs closed form")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_first_order_central_differences(case):
    inputs, _ = build(case, np.random.default_rng(2))
    check_grads(case.fn, inputs, order=1, eps=case.eps, cotangent_bits=case.cotangent_bits)


@pytest.mark.parametrize("case", [c for c in CASES if c.order2], ids=[
    c.id for c in CASES if c.order2])
def test_second_order_central_differences(case):
    """Gradients of gradients (create_graph=True) against central differences of the
    gradient: for linear ops of the squared output, so that the backward formula's own
    derivative is exercised."""
    inputs, _ = build(case, np.random.default_rng(3))
    check_grads(order2_fn(case), inputs, order=2, eps=case.eps,
                cotangent_bits=case.cotangent_bits)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_float32_grads(case):
    """float32 inputs give float32 gradients (of each input's shape), close to the closed
    form."""
    rng = np.random.default_rng(4)
    inputs, arrays = build(case, rng, dtype=np.float32)
    cots, grads = engine_vjp(case, inputs, rng)
    expected = closed_form(case, cots, [a.astype(np.float64) if isinstance(a, np.ndarray)
                                        and a.dtype == np.float32 else a for a in arrays])
    for k, (x, g, e) in enumerate(zip(diff_inputs(inputs), grads, expected)):
        assert g.dtype == gt.float32, f"input {k}: {g.dtype}"
        assert g.shape == x.shape
        np.testing.assert_allclose(g._data, e, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_batched_grads_match_one_at_a_time(case):
    """autograd.grad(is_grads_batched=True) equals grad() for each element of the batch, stacked:
    rows marked `batches` run their formulas on the batch, the others one element at a time. Batch
    sizes include the sizes of the inputs' dims (3, 4), so a batch dim that broadcasts against
    the wrong dim cannot pass."""
    rng = np.random.default_rng(6)
    inputs, _ = build(case, rng)
    outs = _outputs(case.fn(*inputs))
    diff = diff_inputs(inputs)
    for batch in (1, 3, 4):
        cots = [rng.standard_normal((batch,) + tuple(o.shape)) for o in outs]
        batched = gt.autograd.grad(outs, diff, [gt.tensor(c) for c in cots], retain_graph=True,
                                   allow_unused=True, is_grads_batched=True)
        for k, g in enumerate(batched):
            one_at_a_time = [gt.autograd.grad(outs, diff, [gt.tensor(c[b]) for c in cots],
                                              retain_graph=True, allow_unused=True)[k]
                             for b in range(batch)]
            if one_at_a_time[0] is None:
                assert g is None
                continue
            assert g.shape == (batch,) + tuple(diff[k].shape)
            np.testing.assert_allclose(g._data, np.stack([e._data for e in one_at_a_time]),
                                       rtol=1e-12, atol=1e-14, err_msg=f"{case.id}: input {k}")


def test_every_batched_row_is_reached_batched():
    """Each row declaring `batches` runs its formulas on a batch in the sweep above."""
    reached = set()
    real = registry.OpNode.apply_batched

    def apply_batched(node, grads):
        reached.add(type(node).spec)
        return real(node, grads)

    registry.OpNode.apply_batched = apply_batched
    try:
        for c in CASES:
            test_batched_grads_match_one_at_a_time(c)
    finally:
        registry.OpNode.apply_batched = real
    batched_rows = {s for s in D.TABLE.values() if s.node_class.batches}
    assert batched_rows - reached == set(), sorted(s.name for s in batched_rows - reached)


# ========================================= coverage =========================================
class Recorder:
    def __init__(self):
        self.created = set()   # specs whose forward ran and built a graph node
        self.applied = set()   # specs whose backward formulas ran

    def reset(self):
        self.created, self.applied = set(), set()


class _SeesOps(observers.Observer):
    """Every op's dispatch (out of place and in place): the rows whose forward built a node."""

    def __init__(self, rec):
        self.rec = rec

    def op(self, name, inputs, run):
        out = run()
        for o in (out if isinstance(out, tuple) else (out,)):
            if not isinstance(o, gt.Tensor):
                continue
            nodes = [o._grad_fn]
            if o._base is not None:  # written through a view: the base's CopySlices wraps it
                nodes.append(getattr(o._base._grad_fn, "fn", o._base._grad_fn))
            for node in nodes:
                spec = getattr(type(node), "spec", None)
                if spec is not None and name in (spec.name, spec.name + "_"):
                    self.rec.created.add(spec)
        return out


@contextlib.contextmanager
def recording():
    """Watch every op's dispatch (an observer) and wrap every op's backward: `OpNode.apply`
    and the copies of it that the node classes have of their own."""
    rec = Recorder()
    classes, found = [], [registry.OpNode]
    while found:
        cls = found.pop()
        found.extend(cls.__subclasses__())
        if "apply" in vars(cls):
            classes.append(cls)

    def wrapped(real_apply):
        def apply(node, grads):
            rec.applied.add(type(node).spec)
            return real_apply(node, grads)
        return apply

    real = {cls: vars(cls)["apply"] for cls in classes}
    for cls, real_apply in real.items():
        cls.apply = wrapped(real_apply)
    try:
        with _SeesOps(rec):
            yield rec
    finally:
        for cls, real_apply in real.items():
            cls.apply = real_apply


def exercise(case):
    """Forward, backward with create_graph, and the backward of that backward."""
    inputs, _ = build(case, np.random.default_rng(5))
    fn = order2_fn(case) if case.order2 else case.fn
    outs = _outputs(fn(*inputs))
    diff = diff_inputs(inputs)
    grads = gt.autograd.grad(outs, diff, grad_outputs=[gt.ones_like(o) for o in outs],
                             create_graph=True, allow_unused=True)
    total = None
    for g in grads:
        if g is not None and g.requires_grad:
            term = g.sin().sum()
            term = term.real if term.is_complex() else term  # (a real loss, for complex grads)
            total = term if total is None else total + term
    if total is None:
        return
    if differentiable_once(case):  # its second order raises, as torch's
        with pytest.raises(RuntimeError, match="derivative for .* is not implemented"):
            gt.autograd.grad(total, diff, allow_unused=True)
    else:
        gt.autograd.grad(total, diff, allow_unused=True)


def differentiable_once(case):
    """Whether the case reaches a row whose backward torch does not differentiate."""
    return any(D.TABLE[name].once_differentiable for name in case.covers)


# torch's words when the gradient of a row differentiable once is differentiated
SECOND_ORDER_REFUSALS = {
    "CTC_LOSS": r"^derivative for aten::_ctc_loss_backward is not implemented$",
    "EMBEDDING_BAG": r"^the derivative for '_embedding_bag_backward' is not implemented\.$",
    "STANDARD_GAMMA": r"^the derivative for '_standard_gamma_grad' is not implemented\.$"}


@pytest.mark.parametrize("case", [c for c in CASES if differentiable_once(c)],
                         ids=[c.id for c in CASES if differentiable_once(c)])
def test_rows_differentiable_once_refuse_the_second_backward_in_torchs_words(case):
    """A once_differentiable row's gradient is recorded (create_graph works, as in torch), by
    a node that raises torch's error when the gradient is differentiated."""
    assert case.order2 is None, "a row differentiable once has no second order to check"
    inputs, _ = build(case, np.random.default_rng(5))
    out = _outputs(case.fn(*inputs))[0]
    grads = gt.autograd.grad((out * out).sum(), diff_inputs(inputs), create_graph=True)
    assert all(g.requires_grad for g in grads)
    row, = (name for name in case.covers if D.TABLE[name].once_differentiable)
    with pytest.raises(RuntimeError, match=SECOND_ORDER_REFUSALS[row]):
        grads[0].pow(2).sum().backward()


def test_the_ops_page_says_double_backward_where_the_sweep_checks_it():
    """docs/ops.md's double-backward column (docs/generate.py) says "yes" only for rows whose
    second order a case checks (against central differences), and "no (as torch)" only for
    rows whose cases the sweep expects to refuse it (exercise checks that they do)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "generate.py")
    spec = importlib.util.spec_from_file_location("docs_generate", path)
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    cases = {}
    for c in CASES + COMPLEX_CASES:
        for name in c.covers:
            cases.setdefault(name, []).append(c)
    for name, row in D.TABLE.items():
        column = generate._double_backward(row)
        if column == "yes":
            assert any(c.order2 for c in cases[name]), f"{name}: no case checks its second order"
        elif column.startswith("no"):
            assert all(differentiable_once(c) for c in cases[name]), \
                f"{name}: the page says no, and the sweep expects a second order"


def test_every_table_op_is_covered():
    """Every row of TABLE is reached by the cases above: its forward builds a node and the
    node's backward formulas run. Runs every case itself, so pytest's order and selection do
    not matter, and each case must reach the rows it claims (so dropping the only case for a
    row fails)."""
    table = set(D.TABLE.values())
    assert table and all(isinstance(s, registry.OpSpec) for s in table)
    declared = {name for c in CASES + COMPLEX_CASES for name in c.covers}
    assert declared <= set(D.TABLE), f"unknown TABLE names: {declared - set(D.TABLE)}"
    assert declared == set(D.TABLE), f"no case for: {sorted(set(D.TABLE) - declared)}"

    created, applied, missing = set(), set(), []
    with recording() as rec:
        for c in CASES + COMPLEX_CASES:
            rec.reset()
            exercise(c)
            for name in c.covers:
                spec = D.TABLE[name]
                if spec not in rec.created or spec not in rec.applied:
                    missing.append(f"{c.id}: {name} (node built: {spec in rec.created}, "
                                   f"backward ran: {spec in rec.applied})")
            created |= rec.created
            applied |= rec.applied
    assert not missing, "cases that do not reach what they claim:\n" + "\n".join(missing)
    # (rows out of the table, such as the NotImplemented backward of a row differentiable
    # once, may be built too)
    assert table <= created, f"never built: {sorted(s.name for s in table - created)}"
    assert table <= applied, f"backward never ran: {sorted(repr(s) for s in table - applied)}"


# ========================================= hypothesis =========================================
def _binary_setup(name, rng, sa, sb):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    if name == "pow":
        a = rng.uniform(0.5, 2.0, sa)
    if name == "div":
        b = signed(rng, sb)
    return a, b


BINARY = {
    "add": (lambda x, y: x + y, lambda v, a, b: (v, v)),
    "sub": (lambda x, y: x - y, lambda v, a, b: (v, -v)),
    "mul": (lambda x, y: x * y, lambda v, a, b: (v * b, v * a)),
    "div": (lambda x, y: x / y, lambda v, a, b: (v / b, -v * a / b ** 2)),
    "pow": (lambda x, y: x ** y, lambda v, a, b: (v * b * a ** (b - 1), v * a ** b * np.log(a))),
    "maximum": (gt.maximum, lambda v, a, b: (v * (a > b), v * (b > a))),
    "minimum": (gt.minimum, lambda v, a, b: (v * (a < b), v * (b < a))),
    "where": (lambda x, y: gt.where(x > 0, x, y), lambda v, a, b: (v * (a > 0), v * (a <= 0))),
}


@HYPOTHESIS
@given(name=st.sampled_from(sorted(BINARY)),
       shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       seed=st.integers(0, 2 ** 16))
def test_binary_broadcasting(name, shapes, seed):
    sa, sb = shapes.input_shapes
    rng = np.random.default_rng(seed)
    a, b = _binary_setup(name, rng, sa, sb)
    if name == "where":
        a = away_from(rng, sa, margin=0.05) if sa else np.asarray(signed(rng, ()))
    x, y = gt.tensor(a, requires_grad=True), gt.tensor(b, requires_grad=True)
    fn, vjp = BINARY[name]
    out = fn(x, y)
    assert out.shape == shapes.result_shape
    v = rng.standard_normal(shapes.result_shape)
    ga, gb = gt.autograd.grad(out, [x, y], gt.tensor(v), retain_graph=True)
    assert ga.shape == sa and gb.shape == sb  # summed back to each input's own shape
    a_b, b_b = np.broadcast_arrays(a, b)
    ea, eb = vjp(v, a_b, b_b)
    np.testing.assert_allclose(ga._data, unbroadcast(ea, sa), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb._data, unbroadcast(eb, sb), rtol=1e-10, atol=1e-12)
    check_grads(fn, [x, y], order=1, seed=seed)
    # a batch of cotangents at once: each input's gradients summed back batch by batch
    vs = rng.standard_normal((3,) + shapes.result_shape)
    ga, gb = gt.autograd.grad(out, [x, y], gt.tensor(vs), is_grads_batched=True)
    for k, v in enumerate(vs):
        ea, eb = vjp(v, a_b, b_b)
        np.testing.assert_allclose(ga._data[k], unbroadcast(ea, sa), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gb._data[k], unbroadcast(eb, sb), rtol=1e-10, atol=1e-12)


def _multi_dim_reduction(np_fn):
    return lambda x, dims, keepdim: np_fn(x, axis=dims, keepdims=keepdim)


def _red_vjp(kind):
    def vjp(v, x, dims, keepdim, correction):
        n = int(np.prod([x.shape[d] for d in dims]))
        if kind in ("softmax", "log_softmax"):  # not reductions: v has the input's shape
            s = np_softmax(x, dims[0])
            if kind == "softmax":
                return s * (v - (v * s).sum(dims[0], keepdims=True))
            return v - s * v.sum(dims[0], keepdims=True)
        rv = restore(v, x.shape, dims, keepdim)
        mean = x.mean(dims, keepdims=True)
        if kind == "sum":
            return rv
        if kind == "mean":
            return rv / n
        if kind == "var":
            return rv * 2 * (x - mean) / (n - correction)
        if kind == "std":
            std = np.sqrt(((x - mean) ** 2).sum(dims, keepdims=True) / (n - correction))
            return rv * (x - mean) / ((n - correction) * std)
        if kind in ("amax", "amin"):
            m = (np.amax if kind == "amax" else np.amin)(x, axis=dims, keepdims=True)
            return rv * (x == m) / (x == m).sum(dims, keepdims=True)
        if kind == "logsumexp":
            return rv * np.exp(x - np_logsumexp(x, dims))
        if kind == "norm":
            return rv * x / np.sqrt((x * x).sum(dims, keepdims=True))
        if kind.startswith("norm_p"):
            p = {"norm_p1": 1, "norm_p3": 3, "norm_pinf": np.inf}[kind]
            return _p_norm_vjp(p, dims, True)(rv, x)[0]
        (d,) = dims
        if kind == "prod":
            return rv * np.prod(x, d, keepdims=True) / x
        if kind in ("max", "min"):
            idx = np.expand_dims((np.argmax if kind == "max" else np.argmin)(x, axis=d), d)
            g = np.zeros_like(x)
            np.put_along_axis(g, idx, np.expand_dims(v, d) if not keepdim else v, d)
            return g
        raise AssertionError(kind)
    return vjp


REDUCTIONS = {
    "sum": lambda x, dims, keepdim, c: x.sum(dims, keepdim=keepdim),
    "mean": lambda x, dims, keepdim, c: x.mean(dims, keepdim=keepdim),
    "var": lambda x, dims, keepdim, c: x.var(dims, keepdim=keepdim, correction=c),
    "std": lambda x, dims, keepdim, c: x.std(dims, keepdim=keepdim, correction=c),
    "amax": lambda x, dims, keepdim, c: x.amax(dims, keepdim=keepdim),
    "amin": lambda x, dims, keepdim, c: x.amin(dims, keepdim=keepdim),
    "logsumexp": lambda x, dims, keepdim, c: x.logsumexp(dims, keepdim=keepdim),
    "norm": lambda x, dims, keepdim, c: x.norm(dim=dims, keepdim=keepdim),
    "norm_p1": lambda x, dims, keepdim, c: x.norm(1, dims, keepdim),
    "norm_p3": lambda x, dims, keepdim, c: x.norm(3, dims, keepdim),
    "norm_pinf": lambda x, dims, keepdim, c: x.norm(float("inf"), dims, keepdim),
    "prod": lambda x, dims, keepdim, c: x.prod(dims[0], keepdim=keepdim),
    "max": lambda x, dims, keepdim, c: x.max(dims[0], keepdim=keepdim).values,
    "min": lambda x, dims, keepdim, c: x.min(dims[0], keepdim=keepdim).values,
    "softmax": lambda x, dims, keepdim, c: x.softmax(dims[0]),
    "log_softmax": lambda x, dims, keepdim, c: x.log_softmax(dims[0]),
}
SINGLE_DIM = {"prod", "max", "min", "softmax", "log_softmax"}


@st.composite
def reduction_args(draw):
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    nd = len(shape)
    if name in SINGLE_DIM:
        dims = (draw(st.integers(-nd, nd - 1)),)
    else:
        dims = tuple(draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd,
                                   unique_by=lambda d: d % nd)))
    keepdim = draw(st.booleans())
    n = int(np.prod([shape[d] for d in dims]))
    correction = draw(st.sampled_from([0, 1] if n > 1 else [0]))
    return name, shape, dims, keepdim, correction


@HYPOTHESIS
@given(args=reduction_args(), seed=st.integers(0, 2 ** 16))
def test_reductions_over_dims(args, seed):
    name, shape, dims, keepdim, correction = args
    rng = np.random.default_rng(seed)
    a = signed(rng, shape) if name == "prod" else rng.standard_normal(shape)
    x = gt.tensor(a, requires_grad=True)

    def fn(t):
        return REDUCTIONS[name](t, dims, keepdim, correction)
    out = fn(x)
    v = rng.standard_normal(out.shape)
    (g,) = gt.autograd.grad(out, [x], gt.tensor(v))
    assert g.shape == x.shape
    pos = norm_dims(dims, len(shape))
    expected = _red_vjp(name)(v, a, pos, keepdim, correction)
    np.testing.assert_allclose(g._data, expected, rtol=1e-9, atol=1e-12)
    check_grads(fn, [x], order=1, seed=seed)


@st.composite
def matmul_shapes(draw):
    a_vec, b_vec = draw(st.booleans()), draw(st.booleans())
    batches = draw(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2,
                                                 max_side=3)).input_shapes
    n, k, m = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    sa = (k,) if a_vec else batches[0] + (n, k)
    sb = (k,) if b_vec else batches[1] + (k, m)
    return sa, sb


@HYPOTHESIS
@given(shapes=matmul_shapes(), seed=st.integers(0, 2 ** 16))
def test_matmul_shapes(shapes, seed):
    sa, sb = shapes
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    x, y = gt.tensor(a, requires_grad=True), gt.tensor(b, requires_grad=True)
    out = x @ y
    assert out.shape == np.matmul(a, b).shape
    np.testing.assert_allclose(out._data, np.matmul(a, b), rtol=1e-12, atol=1e-12)
    v = rng.standard_normal(out.shape)
    ga, gb = gt.autograd.grad(out, [x, y], gt.tensor(v))
    assert ga.shape == sa and gb.shape == sb
    ea, eb = matmul_vjp(v, a, b)
    np.testing.assert_allclose(ga._data, ea, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb._data, eb, rtol=1e-10, atol=1e-12)
    check_grads(lambda p, q: p @ q, [x, y], order=2 if seed % 4 == 0 else 1, seed=seed)


# ====================================== kink conventions ======================================
def grad_of(fn, values, dtype=gt.float64):
    x = gt.tensor(values, dtype=dtype, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.tolist()


def test_relu_at_zero():
    assert grad_of(gt.relu, [-1.0, 0.0, 2.0]) == [0.0, 0.0, 1.0]


def test_abs_at_zero():
    assert grad_of(gt.abs, [-2.0, 0.0, 3.0]) == [-1.0, 0.0, 1.0]


def test_sqrt_at_zero_is_inf():
    assert grad_of(gt.sqrt, [0.0, 4.0]) == [float("inf"), 0.25]


def test_clamp_passes_gradient_at_the_bounds():
    values = [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert grad_of(lambda x: x.clamp(-0.5, 0.5), values) == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert grad_of(lambda x: x.clamp(min=-0.5), values) == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert grad_of(lambda x: x.clamp(max=0.5), values) == [1.0, 1.0, 1.0, 1.0, 0.0]


def test_clamp_with_tensor_bounds_gives_x_the_gradient_at_the_bounds():
    x = gt.tensor([0.5, 1.0, 1.5, 2.0, 3.0, 1.0], requires_grad=True)
    lo = gt.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 2.0], requires_grad=True)
    hi = gt.tensor([2.0, 2.0, 2.0, 2.0, 2.0, 1.0], requires_grad=True)  # (the last crossed)
    out = gt.clamp(x, lo, hi)
    assert type(out.grad_fn).__name__ == "ClampBackward0"
    out.sum().backward()
    assert out.tolist() == [1.0, 1.0, 1.5, 2.0, 2.0, 1.0]
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert hi.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize("reduce", [lambda x: x.max(), lambda x: x.amax(),
                                    lambda x: x.amax((0, 1))], ids=["max", "amax", "amax_dims"])
def test_full_max_ties_split_evenly(reduce):
    assert grad_of(reduce, [[1.0, 3.0], [3.0, 3.0]]) == [[0.0, 1 / 3], [1 / 3, 1 / 3]]


@pytest.mark.parametrize("reduce", [lambda x: x.min(), lambda x: x.amin()], ids=["min", "amin"])
def test_full_min_ties_split_evenly(reduce):
    assert grad_of(reduce, [2.0, -1.0, 5.0, -1.0]) == [0.0, 0.5, 0.0, 0.5]


def test_amax_dim_ties_split_evenly_per_slice():
    assert grad_of(lambda x: x.amax(1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]) == [
        [0.0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_dim_sends_gradient_to_the_returned_index_only(op):
    x = gt.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [0.0, 5.0, -1.0]], dtype=gt.float64,
                  requires_grad=True)
    values, indices = getattr(x if op == "max" else -x, op)(1)
    values.backward(gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64))
    expected = np.zeros((3, 3))
    expected[np.arange(3), indices.numpy()] = [1.0, 2.0, 3.0]
    if op == "min":
        expected = -expected
    assert x.grad.tolist() == expected.tolist()
    assert (np.count_nonzero(x.grad._data, axis=1) == 1).all()


def test_maximum_minimum_ties_give_each_input_half():
    x = gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64, requires_grad=True)
    y = gt.tensor([1.0, 0.0, 3.0], dtype=gt.float64, requires_grad=True)
    gt.maximum(x, y).sum().backward()
    assert x.grad.tolist() == [0.5, 1.0, 0.5] and y.grad.tolist() == [0.5, 0.0, 0.5]
    x.grad = y.grad = None
    gt.minimum(x, y).sum().backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5] and y.grad.tolist() == [0.5, 1.0, 0.5]


def test_prod_with_one_zero_and_two_zeros():
    assert grad_of(lambda x: x.prod(), [2.0, 0.0, 3.0]) == [0.0, 6.0, 0.0]
    assert grad_of(lambda x: x.prod(), [2.0, 0.0, 0.0, 3.0]) == [0.0, 0.0, 0.0, 0.0]
    # per slice: no zero, one zero, two zeros
    assert grad_of(lambda x: x.prod(1), [[2.0, 4.0, 3.0], [2.0, 0.0, 3.0],
                                         [0.0, 5.0, 0.0]]) == [
        [12.0, 6.0, 8.0], [0.0, 6.0, 0.0], [0.0, 0.0, 0.0]]
    assert grad_of(lambda x: x.prod(0, keepdim=True), [[0.0, 1.0], [7.0, 0.0], [2.0, 0.0]]) == [
        [14.0, 0.0], [0.0, 0.0], [0.0, 0.0]]


def test_prod_with_a_zero_second_order():
    """With create_graph the zero-aware prod backward is itself differentiable: d2/dx_i dx_j
    of x0*x1*x2 at x = (2, 0, 3) is x_k for the third index k."""
    x = gt.tensor([2.0, 0.0, 3.0], dtype=gt.float64, requires_grad=True)
    (g,) = gt.autograd.grad(x.prod(), [x], create_graph=True)
    assert g.tolist() == [0.0, 6.0, 0.0]
    (h,) = gt.autograd.grad(g[1], [x])
    assert h.tolist() == [3.0, 0.0, 2.0]


INF, NAN = float("inf"), float("nan")
# (function, input, torch's output, torch's gradient of output.sum()), float64, from torch 2.x
DOMAIN_EDGES = {
    "log_at_0": (gt.log, [0.0, 1.0], [-INF, 0.0], [INF, 1.0]),
    "log1p_at_-1": (gt.log1p, [-1.0], [-INF], [INF]),
    "sqrt_negative": (gt.sqrt, [-1.0, 0.0], [NAN, 0.0], [NAN, INF]),
    "rsqrt_at_0": (gt.rsqrt, [0.0, 4.0], [INF, 0.5], [-INF, -0.0625]),
    "exp_overflow": (gt.exp, [1000.0], [INF], [INF]),
    "reciprocal_at_0": (lambda x: 1 / x, [0.0, 2.0], [INF, 0.5], [-INF, -0.25]),
    "0/0": (lambda x: x / x, [0.0], [NAN], [NAN]),
    "pow_half_at_0": (lambda x: x ** 0.5, [0.0, 4.0], [0.0, 2.0], [INF, 0.25]),
    "pow_0_at_0": (lambda x: x ** 0, [0.0, 2.0], [1.0, 1.0], [0.0, 0.0]),
    "sign_at_0": (gt.sign, [0.0, 1.0], [0.0, 1.0], [0.0, 0.0]),
    "norm_of_zeros": (lambda x: x.norm(), [0.0, 0.0, 0.0], 0.0, [0.0, 0.0, 0.0]),
    # p-norms: 0 where x = 0 (sign(0) = 0) and where the norm is 0; inf norms share ties
    "norm_p1_at_0": (lambda x: x.norm(1), [0.0, -2.0, 2.0], 4.0, [0.0, -1.0, 1.0]),
    "norm_p3_of_zeros": (lambda x: x.norm(3), [0.0, 0.0], 0.0, [0.0, 0.0]),
    "norm_p0_5_at_0": (lambda x: x.norm(0.5), [0.0, 1.0, 4.0], 9.0, [0.0, 3.0, 1.5]),
    "norm_p_neg1_at_0": (lambda x: x.norm(-1), [0.0, 2.0], 0.0, [0.0, 0.0]),
    "norm_inf_ties": (lambda x: x.norm(INF), [0.0, -2.0, 2.0, 1.0], 2.0, [0.0, -0.5, 0.5, 0.0]),
    "norm_neg_inf_at_0": (lambda x: x.norm(-INF), [0.0, -2.0, 1.0], 0.0, [0.0, 0.0, 0.0]),
    "std_of_constant": (lambda x: x.std(), [1.0, 1.0, 1.0], 0.0, [0.0, 0.0, 0.0]),
    "logsumexp_all_-inf": (lambda x: x.logsumexp(0), [-INF, -INF], -INF, [NAN, NAN]),
    # the classic NaN leak: the unselected branch's NaN gradient times 0 is NaN (as torch)
    "where_sqrt_negative": (lambda x: gt.where(x > 0, x.sqrt(), 0.0), [-1.0, 4.0],
                            [0.0, 2.0], [NAN, 0.25]),
}


@pytest.mark.parametrize("name", sorted(DOMAIN_EDGES))
def test_domain_edges_as_torch_without_warnings(name):
    """At the edges of an op's domain torch returns inf/nan silently, forward and backward
    (gradtool's pytest config turns its RuntimeWarnings into errors: it must not warn)."""
    fn, values, out_expected, grad_expected = DOMAIN_EDGES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = gt.tensor(values, dtype=gt.float64, requires_grad=True)
        out = fn(x)
        out.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), out_expected)
    np.testing.assert_array_equal(x.grad.numpy(), grad_expected)


def test_pow_tensor_exponent_gradient_at_zero_base():
    """d(b**e)/de = b**e log b, taken as 0 where b == 0 and e >= 0 (torch's convention)."""
    b = gt.tensor([0.0, 2.0], dtype=gt.float64, requires_grad=True)
    e = gt.tensor([2.0, 0.0], dtype=gt.float64, requires_grad=True)
    (b ** e).sum().backward()
    assert b.grad.tolist() == [0.0, 0.0]
    np.testing.assert_allclose(e.grad.numpy(), [0.0, np.log(2.0)], rtol=1e-15)
    e = gt.tensor([1.0, 2.0], dtype=gt.float64, requires_grad=True)
    (0.0 ** e).sum().backward()
    assert e.grad.tolist() == [0.0, 0.0]


# ========================================== dtypes ==========================================
# the table's one-input ops (Tensor.<name>() generated from their rows), and those whose row
# makes an integer input the default float dtype
UNARY_METHODS = sorted(n for s in D.TABLE.values() for n in s.method_names)
FLOAT_UNARY = sorted(n for s in D.TABLE.values() if s.promotion == "float"
                     for n in s.method_names)


@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_int_input_to_float_unary_gives_float32(name):
    """torch's unary float ops promote integer inputs to the default float dtype."""
    x = gt.tensor([1, 2, 3])
    assert x.dtype == gt.int64
    out = getattr(x, name)()
    assert out.dtype == gt.float32
    expected = getattr(gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64), name)()
    np.testing.assert_allclose(out._data, expected._data, rtol=1e-6)


@pytest.mark.parametrize("name", UNARY_METHODS)
def test_one_input_ops_on_zero_dim_tensors_match_one_element_ones(name):
    """A 0-d input (numpy's ufuncs return scalars for them) gives what a 1-element one does,
    forward and backward."""
    results = []
    for shape in ((), (1,)):
        x = gt.full(shape, 1.5 if "cosh" in name else 0.5, dtype=gt.float64,
                    requires_grad=True)  # (in each op's domain)
        y = getattr(x, name)()
        y.sum().backward()
        assert y.shape == x.grad.shape == shape
        results.append((y.item(), x.grad.item()))
    assert results[0] == results[1]


def test_int_division_gives_float32():
    a, b = gt.tensor([1, 2, 3]), gt.tensor([2, 4, 4])
    assert (a / b).dtype == gt.float32 and (a / b).tolist() == [0.5, 0.5, 0.75]
    assert (a / 2).dtype == gt.float32
    assert (3 / b).dtype == gt.float32
    assert gt.div(a, b).dtype == gt.float32


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "where",
                                  "pow"])
def test_mixed_float32_float64_broadcast_grads_keep_each_input_dtype(name):
    rng = np.random.default_rng(7)
    x = gt.tensor(rng.uniform(0.5, 2.0, (3, 1)), dtype=gt.float32, requires_grad=True)
    y = gt.tensor(rng.uniform(0.5, 2.0, (4,)), dtype=gt.float64, requires_grad=True)
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "maximum": gt.maximum, "minimum": gt.minimum,
          "where": lambda a, b: gt.where(a > 1, a, b), "pow": lambda a, b: a ** b}[name]
    out = fn(x, y)
    assert out.dtype == gt.float64 and out.shape == (3, 4)
    out.sum().backward()
    assert x.grad.dtype == gt.float32 and x.grad.shape == (3, 1)
    assert y.grad.dtype == gt.float64 and y.grad.shape == (4,)


def test_float32_leaf_cast_to_float64_gets_float32_grad():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    assert x.dtype == gt.float32
    (x.double() * gt.tensor([3.0, 4.0], dtype=gt.float64)).sum().backward()
    assert x.grad.dtype == gt.float32 and x.grad.tolist() == [3.0, 4.0]


# ================================= forward mode (forward_ad) =================================
fwAD = gt.autograd.forward_ad


def forward_jvp(fn, inputs, tangents):
    """The tangents of fn's float outputs, computed in forward mode (dual inputs)."""
    with fwAD.dual_level():
        duals = list(inputs)
        k = 0
        for i, x in enumerate(inputs):
            if isinstance(x, gt.Tensor) and x.requires_grad:
                duals[i] = fwAD.make_dual(x, tangents[k])
                k += 1
        outs = _outputs(fn(*duals))
        return [fwAD.unpack_dual(o).tangent for o in outs], outs


def central_jvp(fn, inputs, tangents, eps=1e-6):
    """(f(x + eps v) - f(x - eps v)) / 2 eps for each float output."""
    def at(sign):
        shifted, k = list(inputs), 0
        for i, x in enumerate(inputs):
            if isinstance(x, gt.Tensor) and x.requires_grad:
                shifted[i] = gt.tensor(x._data + sign * eps * tangents[k]._data,
                                       requires_grad=True)
                k += 1
        with gt.no_grad():
            return [o._data.astype(np.float64) for o in _outputs(fn(*shifted))]
    return [(hi - lo) / (2 * eps) for hi, lo in zip(at(1), at(-1))]


def random_tangents(inputs, rng):
    return [gt.tensor(rng.standard_normal(x.shape)) for x in diff_inputs(inputs)]


def test_every_row_declares_a_jvp():
    """Forward mode reaches every op: a row added without `jvp=` fails here, loudly."""
    missing = sorted(name for name, spec in D.TABLE.items() if spec.jvp is None)
    assert not missing, f"rows without a jvp (declare jvp= in derivatives.py): {missing}"


@pytest.mark.parametrize("case", JVP_CASES, ids=[c.id for c in JVP_CASES])
def test_jvp_central_differences(case):
    """J.v in forward mode equals central differences along v, for every output."""
    rng = np.random.default_rng(7)
    inputs, _ = build(case, rng)
    tangents = random_tangents(inputs, rng)
    got, outs = forward_jvp(case.fn, inputs, tangents)
    expected = central_jvp(case.fn, inputs, tangents, case.eps)
    for k, (g, e, o) in enumerate(zip(got, expected, outs)):
        assert g is not None, f"{case.id}: output {k} got no tangent"
        assert g.shape == o.shape and g.dtype == o.dtype, f"{case.id}: output {k}"
        np.testing.assert_allclose(g._data, e, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{case.id}: output {k} jvp vs central differences")


@pytest.mark.parametrize("case", JVP_CASES, ids=[c.id for c in JVP_CASES])
def test_jvp_agrees_with_backward(case):
    """u.(J v) from forward mode equals (u J).v from backward, on random u and v."""
    rng = np.random.default_rng(8)
    inputs, _ = build(case, rng)
    tangents = random_tangents(inputs, rng)
    got, outs = forward_jvp(case.fn, inputs, tangents)
    cots, grads = engine_vjp(case, inputs, rng)
    forward = sum(float((c * g._data).sum()) for c, g in zip(cots, got))
    backward = sum(float((g._data * v._data).sum())
                   for g, v in zip(grads, tangents) if g is not None)
    rel = 1e-9 if all(o.dtype == gt.float64 for o in outs) else 1e-6  # (to_float32)
    assert forward == pytest.approx(backward, rel=rel, abs=1e-10), case.id


@pytest.mark.parametrize("case", [c for c in JVP_CASES if c.order2], ids=[
    c.id for c in JVP_CASES if c.order2])
def test_forward_over_reverse_second_order(case):
    """Dual inputs through autograd.grad(create_graph=True): the gradient's tangent is the
    Hessian-vector product, checked against central differences of the gradient."""
    rng = np.random.default_rng(9)
    inputs, _ = build(case, rng)
    fn = order2_fn(case)
    cots = [gt.tensor(rng.standard_normal(o.shape)) for o in _outputs(fn(*inputs))]

    def gradient(*xs):
        with gt.enable_grad():
            diff = diff_inputs(xs)
            total = sum(((o * c).sum() for o, c in zip(_outputs(fn(*xs)), cots)),
                        gt.tensor(0.0, dtype=gt.float64))
            grads = gt.autograd.grad(total, diff, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else gt.zeros_like(x) for g, x in zip(grads, diff))

    tangents = random_tangents(inputs, rng)
    with fwAD.dual_level():
        duals, k = list(inputs), 0
        for i, x in enumerate(inputs):
            if isinstance(x, gt.Tensor) and x.requires_grad:
                duals[i] = fwAD.make_dual(x, tangents[k])
                k += 1
        got = [fwAD.unpack_dual(g).tangent for g in gradient(*duals)]
    expected = central_jvp(gradient, inputs, tangents, case.eps)
    for k, (g, e) in enumerate(zip(got, expected)):
        g = np.zeros_like(e) if g is None else g._data
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{case.id}: gradient {k}'s tangent vs H.v")


def test_every_row_jvp_runs_in_the_sweep():
    """Each row's jvp is reached by the forward-mode sweep above (the rows that only
    backward formulas use, such as select_backward, through forward-over-reverse)."""
    reached = set()
    real = registry.OpSpec.tangent

    def tangent(spec, *args):
        reached.add(spec)
        return real(spec, *args)

    registry.OpSpec.tangent = tangent
    try:
        for c in JVP_CASES:
            inputs, _ = build(c, np.random.default_rng(7))
            forward_jvp(c.fn, inputs, random_tangents(inputs, np.random.default_rng(0)))
            forward_jvp(order2_fn(c), inputs, random_tangents(inputs, np.random.default_rng(0)))
            if c.order2:
                test_forward_over_reverse_second_order(c)
    finally:
        registry.OpSpec.tangent = real
    # forward mode refuses complex tensors (test_forward_mode_refuses_complex_tensors): the
    # rows that only complex values reach have no jvp to run
    complex_only = {D.CONJ, D.CONJ_PHYSICAL, D.SGN, D.ANGLE, D.VIEW_AS_REAL, D.VIEW_AS_COMPLEX,
                    D.COMPLEX, D.POLAR, D.FFT_R2C, D.FFT_C2C, D.FFT_C2R,
                    D.LINALG_EIG}  # (eig's results are complex even for a real A)
    never = set(D.TABLE.values()) - reached - complex_only - _WITHOUT_FORWARD_AD
    assert not never, sorted(repr(s) for s in never)


_WITHOUT_FORWARD_AD = {spec for c in CASES if not c.forward_ad for spec in
                       (D.TABLE[name] for name in c.covers)}


@pytest.mark.parametrize("spec", sorted(_WITHOUT_FORWARD_AD, key=repr), ids=repr)
def test_rows_torch_gives_no_jvp_refuse_forward_ad_in_torchs_words(spec):
    """Where torch has no forward-mode formula (mkldnn_rnn_layer), forward AD raises its
    NotImplementedError, naming the op."""
    case = next(c for c in CASES if spec.name in [D.TABLE[n].name for n in c.covers])
    inputs, _ = build(case, np.random.default_rng(7))
    with pytest.raises(NotImplementedError, match=f"Trying to use forward AD with {spec.name} "
                                                  "that does not support it"):
        forward_jvp(case.fn, inputs, random_tangents(inputs, np.random.default_rng(0)))


@HYPOTHESIS
@given(name=st.sampled_from(sorted(BINARY)),
       shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       seed=st.integers(0, 2 ** 16))
def test_binary_broadcasting_jvp(name, shapes, seed):
    """Broadcasting binary ops: the tangent has the result's shape and u.(J v) = (u J).v."""
    sa, sb = shapes.input_shapes
    rng = np.random.default_rng(seed)
    a, b = _binary_setup(name, rng, sa, sb)
    if name == "where":
        a = away_from(rng, sa, margin=0.05) if sa else np.asarray(signed(rng, ()))
    _check_jvp_vs_vjp(BINARY[name][0], [gt.tensor(a, requires_grad=True),
                                        gt.tensor(b, requires_grad=True)], rng)


@HYPOTHESIS
@given(args=reduction_args(), seed=st.integers(0, 2 ** 16))
def test_reductions_over_dims_jvp(args, seed):
    name, shape, dims, keepdim, correction = args
    rng = np.random.default_rng(seed)
    a = signed(rng, shape) if name == "prod" else rng.standard_normal(shape)
    _check_jvp_vs_vjp(lambda t: REDUCTIONS[name](t, dims, keepdim, correction),
                      [gt.tensor(a, requires_grad=True)], rng)


@HYPOTHESIS
@given(shapes=matmul_shapes(), seed=st.integers(0, 2 ** 16))
def test_matmul_shapes_jvp(shapes, seed):
    rng = np.random.default_rng(seed)
    _check_jvp_vs_vjp(lambda p, q: p @ q, [gt.tensor(rng.standard_normal(s), requires_grad=True)
                                          for s in shapes], rng)


def _check_jvp_vs_vjp(fn, inputs, rng):
    tangents = random_tangents(inputs, rng)
    (got,), (out,) = forward_jvp(fn, inputs, tangents)
    assert got.shape == out.shape
    np.testing.assert_allclose(got._data, central_jvp(fn, inputs, tangents)[0],
                               rtol=1e-5, atol=1e-6)
    u = rng.standard_normal(out.shape)
    grads = gt.autograd.grad(fn(*inputs), inputs, gt.tensor(u))
    backward = sum(float((g._data * v._data).sum()) for g, v in zip(grads, tangents))
    assert float((u * got._data).sum()) == pytest.approx(backward, rel=1e-9, abs=1e-10)


INPLACE_THROUGH_VIEWS = {"setitem_basic", "inplace_through_view",
                         "pad_circular2d"}  # refused when batched (circular pads write slices)


def batched_forward_jvp(fn, inputs, tangents):
    """forward_jvp with each tangent a batch (leading dim) of tangents, in one pass."""
    with fwAD.batched(len(tangents[0])):
        duals, k = list(inputs), 0
        for i, x in enumerate(inputs):
            if isinstance(x, gt.Tensor) and x.requires_grad:
                duals[i] = fwAD.make_dual(x, tangents[k])
                k += 1
        return [fwAD.unpack_dual(o).tangent for o in _outputs(fn(*duals))]


@pytest.mark.parametrize("case", JVP_CASES, ids=[c.id for c in JVP_CASES])
def test_batched_jvp_matches_one_at_a_time(case):
    """A batch of tangents in one forward pass (forward_ad.batched, what forward-mode
    Jacobians use) equals the jvps one tangent at a time, stacked: elementwise and reduction
    rows broadcast over the batch, shape ops and sums by their batched rule, the rest one at a
    time. Batch sizes include the inputs' dim sizes (3, 4), so a batch dim taken for another
    cannot pass."""
    rng = np.random.default_rng(10)
    inputs, _ = build(case, rng)
    for batch in (1, 3, 4):
        tangents = [gt.tensor(rng.standard_normal((batch,) + tuple(x.shape)))
                    for x in diff_inputs(inputs)]
        if case.id in INPLACE_THROUGH_VIEWS:
            with pytest.raises(NotImplementedError, match="through a view with batched"):
                batched_forward_jvp(case.fn, inputs, tangents)
            continue
        got = batched_forward_jvp(case.fn, inputs, tangents)
        singles = [forward_jvp(case.fn, inputs, [t[b] for t in tangents])[0]
                   for b in range(batch)]
        for k, g in enumerate(got):
            np.testing.assert_allclose(
                g._data, np.stack([s[k]._data for s in singles]), rtol=1e-12, atol=1e-14,
                err_msg=f"{case.id}: output {k}, batch {batch}")
# ops that move, scan or pick elements along a dim, over random shapes and dims
def _np_sorted_vjp(v, x, dim, descending, k):
    idx = np.argsort(-x if descending else x, axis=dim, kind="stable")
    idx = np.take(idx, range(k), axis=dim)
    g = np.zeros_like(x)
    np.put_along_axis(g, idx, v, dim)
    return g


ALONG_A_DIM = {
    "cumsum": (lambda x, d, k: x.cumsum(d),
               lambda v, x, d, k: np.flip(np.cumsum(np.flip(v, d), d), d)),
    "cumprod": (lambda x, d, k: x.cumprod(d), None),  # central differences only
    "flip": (lambda x, d, k: x.flip(d), lambda v, x, d, k: np.flip(v, d)),
    "roll": (lambda x, d, k: x.roll(k, d), lambda v, x, d, k: np.roll(v, -k, d)),
    "sort": (lambda x, d, k: x.sort(d, descending=k % 2 == 1).values,
             lambda v, x, d, k: _np_sorted_vjp(v, x, d, k % 2 == 1, x.shape[d])),
    "topk": (lambda x, d, k: x.topk(min(k, x.shape[d]), d).values,
             lambda v, x, d, k: _np_sorted_vjp(v, x, d, True, min(k, x.shape[d]))),
    "index_select": (lambda x, d, k: x.index_select(d, gt.tensor([k % x.shape[d], 0])),
                     lambda v, x, d, k: _added(x.shape, (slice(None),) * d
                                               + (np.array([k % x.shape[d], 0]),), v)),
}


@HYPOTHESIS
@given(name=st.sampled_from(sorted(ALONG_A_DIM)),
       shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       dim=st.integers(-3, 2), k=st.integers(1, 5), seed=st.integers(0, 2 ** 16))
def test_ops_along_a_dim_over_shapes(name, shape, dim, k, seed):
    dim %= len(shape)
    rng = np.random.default_rng(seed)
    a = signed(rng, shape) if name == "cumprod" else rng.standard_normal(shape)
    x = gt.tensor(a, requires_grad=True)
    fn, vjp = ALONG_A_DIM[name]
    out = fn(x, dim, k)
    if vjp is not None:
        v = rng.standard_normal(out.shape)
        (g,) = gt.autograd.grad(out, [x], gt.tensor(v))
        np.testing.assert_allclose(g._data, vjp(v, a, dim, k), rtol=1e-10, atol=1e-12)
    check_grads(lambda t: fn(t, dim, k), [x], order=1, seed=seed)



# ====================================== complex numbers ======================================
# torch's convention: for a real loss L, a complex input's gradient is dL/dRe z + i dL/dIm z.
# With the cotangent v of a complex output, L = Re sum(conj(v) f(z)); of a real output,
# L = sum(v f(z)). A holomorphic f's gradient is then v * conj(f'(z)).
COMPLEX_CASES = []


def complex_case(id, covers, fn, make, vjp, **kw):
    covers = (covers,) if isinstance(covers, str) else tuple(covers)
    COMPLEX_CASES.append(Case(id, covers, fn, make, vjp, **kw))


def cnormal(*shapes):
    return lambda r: [r.standard_normal(s) + 1j * r.standard_normal(s) for s in shapes]


def cplane(r, shape=S):
    """Complex values away from 0 and from the negative real axis (log's, sqrt's, angle's
    branch cut), where every case is smooth."""
    return r.uniform(0.5, 1.5, shape) * np.exp(1j * r.uniform(-2.5, 2.5, shape))


def conj(a):
    return np.conjugate(a)


def off_axes(r, shape=S):
    """Complex values at least 0.2 from both axes and inside |z| < 1.2: off the branch cuts
    of the inverse trigonometric and hyperbolic functions (on the axes) and tan's poles."""
    signs = r.choice([-1, 1], (2,) + shape)
    return signs[0] * r.uniform(0.2, 0.8, shape) + 1j * signs[1] * r.uniform(0.2, 0.8, shape)


# elementwise, holomorphic: v * conj(f'(z))
for _id, _covers, _fn, _make, _derivative in [
    ("neg", "NEG", lambda z: -z ** 2, cnormal(S), lambda z: -2 * z),
    ("exp", "EXP", lambda z: z.exp(), cnormal(S), np.exp),
    ("log", "LOG", lambda z: z.log(), lambda r: [cplane(r)], lambda z: 1 / z),
    ("sqrt", "SQRT", lambda z: z.sqrt(), lambda r: [cplane(r)], lambda z: 0.5 / np.sqrt(z)),
    ("reciprocal", "RECIPROCAL", lambda z: z.reciprocal(), lambda r: [cplane(r)],
     lambda z: -1 / z ** 2),
    ("sin", "SIN", lambda z: z.sin(), cnormal(S), np.cos),
    ("cos", "COS", lambda z: z.cos(), cnormal(S), lambda z: -np.sin(z)),
    ("tanh", "TANH", lambda z: z.tanh(), lambda r: [0.5 * cplane(r)],
     lambda z: 1 - np.tanh(z) ** 2),
    ("sigmoid", "SIGMOID", lambda z: z.sigmoid(), lambda r: [0.5 * cplane(r)],
     lambda z: np.exp(-z) / (1 + np.exp(-z)) ** 2),
    ("pow_scalar", "POW", lambda z: z ** 3, cnormal(S), lambda z: 3 * z ** 2),
    ("pow_complex_scalar", "POW", lambda z: z ** (0.5 + 1j), lambda r: [cplane(r)],
     lambda z: (0.5 + 1j) * z ** (-0.5 + 1j)),
    ("pow_scalar_base", "POW_SCALAR_BASE", lambda z: 2.0 ** z, cnormal(S),
     lambda z: 2.0 ** z * np.log(2.0)),
    ("mul_scalar", "MUL", lambda z: z * (2 - 3j) * z, cnormal(S), lambda z: (4 - 6j) * z),
    ("rsub", "RSUB", lambda z: (1j - z).exp(), cnormal(S), lambda z: -np.exp(1j - z)),
    ("log1p", "LOG1P", lambda z: z.log1p(), lambda r: [off_axes(r)], lambda z: 1 / (1 + z)),
    ("expm1", "EXPM1", lambda z: z.expm1(), cnormal(S), np.exp),
    ("rsqrt", "RSQRT", lambda z: z.rsqrt(), lambda r: [cplane(r)], lambda z: -0.5 * z ** -1.5),
    ("tan", "TAN", lambda z: z.tan(), lambda r: [off_axes(r)], lambda z: 1 / np.cos(z) ** 2),
    ("asin", "ASIN", lambda z: z.asin(), lambda r: [off_axes(r)],
     lambda z: 1 / np.sqrt(1 - z * z)),
    ("acos", "ACOS", lambda z: z.acos(), lambda r: [off_axes(r)],
     lambda z: -1 / np.sqrt(1 - z * z)),
    ("atan", "ATAN", lambda z: z.atan(), lambda r: [off_axes(r)], lambda z: 1 / (1 + z * z)),
    ("asinh", "ASINH", lambda z: z.asinh(), lambda r: [off_axes(r)],
     lambda z: 1 / np.sqrt(z * z + 1)),
    ("acosh", "ACOSH", lambda z: z.acosh(), lambda r: [off_axes(r)],
     lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1))),
    ("atanh", "ATANH", lambda z: z.atanh(), lambda r: [off_axes(r)], lambda z: 1 / (1 - z * z)),
    ("sinh", "SINH", lambda z: z.sinh(), cnormal(S), np.cosh),
    ("cosh", "COSH", lambda z: z.cosh(), cnormal(S), np.sinh),
]:
    complex_case(f"complex_{_id}", _covers, _fn, _make,
                 lambda v, z, d=_derivative: [v * conj(d(z))])

# real outputs of complex inputs; complex outputs of real inputs
complex_case("complex_abs", "ABS", lambda z: z.abs(), lambda r: [cplane(r)],
             lambda v, z: [v * z / np.abs(z)])
complex_case("complex_angle", "ANGLE", lambda z: z.angle(), lambda r: [cplane(r)],
             lambda v, z: [v * 1j * z / np.abs(z) ** 2])
complex_case("real_angle", "ANGLE", lambda x: x.angle(), lambda r: [away_from(r, S)],
             lambda v, x: [np.zeros_like(x)], order2=None)
complex_case("complex_sgn", "SGN", lambda z: z.sgn(), lambda r: [cplane(r)],
             lambda v, z: [(v - z / np.abs(z) * np.real(v * conj(z / np.abs(z)))) / np.abs(z)])
complex_case("complex_conj", ("CONJ",), lambda z: z.conj() * z, cnormal(S),
             lambda v, z: [v * conj(conj(z)) + conj(v) * z], order2="plain")
complex_case("complex_conj_physical", "CONJ_PHYSICAL", lambda z: z.conj_physical(),
             cnormal(S), lambda v, z: [conj(v)], order2="square")
complex_case("complex_real_imag", ("VIEW_AS_REAL", "SELECT"),
             lambda z: z.real * 2 + z.imag ** 2, cnormal(S),
             lambda v, z: [2 * v + 1j * v * 2 * z.imag])
complex_case("view_as_real", "VIEW_AS_REAL", lambda z: gt.view_as_real(z), cnormal(S),
             lambda v, z: [v[..., 0] + 1j * v[..., 1]], order2="square")
complex_case("view_as_complex", "VIEW_AS_COMPLEX", lambda x: gt.view_as_complex(x),
             normal(3, 2), lambda v, x: [np.stack([v.real, v.imag], -1)], order2="square")
complex_case("complex_from_parts", "COMPLEX", lambda a, b: gt.complex(a, b),
             normals(S, S), lambda v, a, b: [v.real, v.imag], order2="square")
complex_case("polar", "POLAR", lambda r, t: gt.polar(r, t),
             lambda g: [g.uniform(0.5, 2.0, S), g.standard_normal(S)],
             lambda v, r, t: [np.real(conj(v) * np.exp(1j * t)),
                              np.real(conj(v) * 1j * r * np.exp(1j * t))])

# two inputs, complex with complex and with real (a real input's gradient: the real part)
complex_case("complex_mul", "MUL", lambda z, w: z * w, cnormal(S, S),
             lambda v, z, w: [v * conj(w), v * conj(z)])
complex_case("complex_mul_real", "MUL", lambda z, x: z * x,
             lambda r: cnormal(S)(r) + normal(*S)(r),
             lambda v, z, x: [v * x, np.real(v * conj(z))])
complex_case("complex_div", "DIV", lambda z, w: z / w, lambda r: [cplane(r), cplane(r)],
             lambda v, z, w: [v / conj(w), -v * conj(z / w ** 2)])
complex_case("complex_div_real", "DIV", lambda x, w: x / w,
             lambda r: [r.standard_normal(S), cplane(r)],
             lambda v, x, w: [np.real(v / conj(w)), -v * conj(x / w ** 2)])
complex_case("complex_add_alpha", "ADD", lambda z, w: z.add(w, alpha=2 - 1j),
             cnormal(S, S), lambda v, z, w: [v, v * (2 + 1j)], order2="square")
complex_case("complex_sub_real", "SUB", lambda z, x: z - x,
             lambda r: cnormal(S)(r) + normal(*S)(r), lambda v, z, x: [v, -np.real(v)],
             order2="square")
complex_case("complex_pow_tensor", "POW_TENSOR", lambda z, w: z ** w,
             lambda r: [cplane(r), 0.5 * cnormal(S)(r)[0]],
             lambda v, z, w: [v * conj(w * z ** (w - 1)), v * conj(z ** w * np.log(z))])
complex_case("complex_where", "WHERE", lambda z, w: gt.where(gt.tensor(MASK), z, w),
             cnormal(S, S), lambda v, z, w: [v * MASK, v * ~MASK], order2="square")
complex_case("real_to_complex", "TO_COPY", lambda x: x.to(gt.complex128) * (1 + 1j),
             normal(*S), lambda v, x: [np.real(v * (1 - 1j))], order2="square")

# products: A^H in the adjoint
complex_case("complex_mm", "MM", lambda a, b: a.mm(b), cnormal((3, 4), (4, 2)),
             lambda v, a, b: [v @ conj(b.T), conj(a.T) @ v])
complex_case("complex_matmul_real", ("MM", "TO_COPY"), lambda a, x: a @ x.to(gt.complex128),
             lambda r: cnormal((3, 4))(r) + normal(4, 2)(r),
             lambda v, a, x: [v @ x.T, np.real(conj(a.T) @ v)])
complex_case("complex_bmm", "BMM", lambda a, b: a.bmm(b), cnormal((2, 3, 4), (2, 4, 2)),
             lambda v, a, b: [v @ conj(np.swapaxes(b, 1, 2)), conj(np.swapaxes(a, 1, 2)) @ v])
complex_case("complex_mv", "MV", lambda a, x: a.mv(x), cnormal((3, 4), (4,)),
             lambda v, a, x: [np.outer(v, conj(x)), conj(a.T) @ v])
complex_case("complex_dot", "DOT", lambda a, b: a.dot(b), cnormal((4,), (4,)),
             lambda v, a, b: [v * conj(b), v * conj(a)])
complex_case("complex_vdot", "VDOT", lambda a, b: a.vdot(b), cnormal((4,), (4,)),
             lambda v, a, b: [conj(v) * b, v * a])
complex_case("complex_addmv", "ADDMV", lambda c, a, x: c.addmv(a, x, beta=1j),
             cnormal((3,), (3, 4), (4,)),
             lambda v, c, a, x: [-1j * v, np.outer(v, conj(x)), conj(a.T) @ v])
complex_case("complex_addmm", "ADDMM", lambda c, a, b: c.addmm(a, b, alpha=1j),
             cnormal((3, 2), (3, 4), (4, 2)),
             lambda v, c, a, b: [v, -1j * v @ conj(b.T), -1j * conj(a.T) @ v])

# eigenvalues of general matrices: complex even for a real A, whose gradient is the real part.
# Each eigenvector's phase is arbitrary, so the cases look at V times the conjugate of its first
# row (the same for every phase); the closed form is the adjoint of first-order perturbation
# theory (dA = E_kl for each entry k, l, along 1 and i for a complex A).
def _eig_gauged(a):
    L, V = gt.linalg.eig(a)
    return L, V * V[..., :1, :].conj()


def _eig_perturbation(a, da):
    """d(L, V conj(V[0])) along da: with P = V^{-1} dA V, dL = diag P, dV = V C for
    C_ij = P_ij / (L_j - L_i) off the diagonal, less what changes the columns' norms."""
    L, V = np.linalg.eig(a)
    P = np.linalg.solve(V, da @ V)
    C = P / (L[..., None, :] - L[..., :, None] + np.eye(L.shape[-1]))
    C = C * (1 - np.eye(L.shape[-1]))
    dV = V @ C
    dV = dV - V * np.real(np.diagonal(conj(np.swapaxes(V, -1, -2)) @ dV, 0, -2, -1))[..., None, :]
    return np.diagonal(P, 0, -2, -1), dV * conj(V[..., :1, :]) + V * conj(dV[..., :1, :])


def _eig_vjp(*cotangents_and_a):
    *vs, a = cotangents_and_a
    g = np.zeros(a.shape, complex if np.iscomplexobj(a) else float)
    for i in np.ndindex(a.shape):
        for step in ((1, 1j) if np.iscomplexobj(a) else (1,)):
            e = np.zeros(a.shape, complex)
            e[i] = step
            g[i] += step * sum(np.real(np.sum(conj(v) * d))
                               for v, d in zip(vs, _eig_perturbation(a, e)))
    return [g]


def _eigvals_vjp(v, a):
    """gA = V^{-H} diag(v) V^H."""
    _, V = np.linalg.eig(a)
    Vh = conj(np.swapaxes(V, -1, -2))
    g = np.linalg.solve(Vh, v[..., :, None] * Vh)
    return [g if np.iscomplexobj(a) else g.real]


complex_case("linalg_eig_real", "LINALG_EIG", _eig_gauged, normal(3, 3), _eig_vjp)
complex_case("linalg_eig_complex_batch", "LINALG_EIG", _eig_gauged, cnormal((2, 3, 3)),
             _eig_vjp)
complex_case("linalg_eigvals_real_batch", "LINALG_EIG", lambda a: gt.linalg.eigvals(a),
             normal(2, 4, 4), _eigvals_vjp)
complex_case("linalg_eigvals_complex", "LINALG_EIG", lambda a: gt.linalg.eigvals(a),
             cnormal((3, 3)), _eigvals_vjp)


# LU factors of complex matrices, and solves with them (the real cases' closed forms, with
# conjugate transposes)
complex_case("linalg_lu_complex", "LINALG_LU", lambda a: gt.linalg.lu(a)[1:], cnormal((3, 3)),
             _lu_vjp)
complex_case("linalg_lu_complex_wide", "LINALG_LU", lambda a: gt.linalg.lu(a)[1:],
             cnormal((3, 4)), _lu_vjp)
complex_case("linalg_lu_factor_complex_tall", "LINALG_LU_FACTOR_EX",
             lambda a: gt.linalg.lu_factor(a).LU, cnormal((4, 3)), _lu_factor_vjp)


# Householder reflectors of complex matrices (LAPACK's ungqr / unmqr): the real cases'
# closed forms, with conjugate transposes
def _complex_reflectors(shape, c_shape=None):
    def make(r):
        scales = r.uniform(0.5, 1.5, shape[:-2] + (min(shape[-2:]),))
        made = [r.standard_normal(shape) + 1j * r.standard_normal(shape),
                scales * np.exp(1j * r.uniform(-2, 2, scales.shape))]
        return made + ([r.standard_normal(c_shape) + 1j * r.standard_normal(c_shape)]
                       if c_shape else [])
    return make


complex_case("householder_product_complex", "LINALG_HOUSEHOLDER_PRODUCT",
             lambda a, t: gt.linalg.householder_product(a, t), _complex_reflectors((4, 3)),
             _householder_vjp)
complex_case("orgqr_complex_square_batch", "LINALG_HOUSEHOLDER_PRODUCT",
             lambda a, t: a.orgqr(t), _complex_reflectors((2, 3, 3)), _householder_vjp)
for _id, _shapes, _left, _transpose in [
    ("ormqr_complex", ((4, 3), (4, 2)), True, False),
    ("ormqr_complex_transpose", ((4, 3), (4, 2)), True, True),
    ("ormqr_complex_right", ((4, 3), (2, 4)), False, False),
    ("ormqr_complex_right_transpose", ((3, 3), (4, 3)), False, True),
]:
    complex_case(_id, "ORMQR", lambda a, t, c, left=_left, transpose=_transpose: gt.ormqr(
        a, t, c, left=left, transpose=transpose), _complex_reflectors(*_shapes),
        _ormqr_vjp(_left, _transpose), forward_ad=False)


# complex solves and matrix exponentials (a unitary parametrization's): gB = A^{-H} v,
# gA = -gB X^H; exp's adjoint is its derivative at A^H, the divided differences of exp on the
# eigenvalues in A^H's eigenbasis
def _complex_solve_vjp(v, a, b):
    gb = np.linalg.solve(a.conj().T, v)
    return [-gb @ np.linalg.solve(a, b).conj().T, gb]


def _matrix_exp_vjp(v, a):
    values, V = np.linalg.eig(a.conj().T)
    exps = np.exp(values)
    gaps = values[:, None] - values[None, :]
    same = np.abs(gaps) < 1e-12
    F = np.where(same, exps[:, None], (exps[:, None] - exps[None, :]) / np.where(same, 1, gaps))
    V_inv = np.linalg.inv(V)
    return [V @ (F * (V_inv @ v @ V)) @ V_inv]


complex_case("linalg_solve_complex", "LINALG_SOLVE_EX", lambda a, b: gt.linalg.solve(a, b),
             lambda r: [cnormal((3, 3))(r)[0] + 3 * np.eye(3), cnormal((3, 2))(r)[0]],
             _complex_solve_vjp)
complex_case("matrix_exp_complex", "LINALG_MATRIX_EXP", lambda a: gt.linalg.matrix_exp(a),
             lambda r: [0.5 * cnormal((3, 3))(r)[0]], _matrix_exp_vjp)
complex_case("fill_complex", "FILL", lambda z: z.clone().fill_(1j) + z, cnormal(S),
             lambda v, z: [v], order2=None)  # (a constant gradient: nothing of second order)


def _complex_lu_system(r, b_shape):
    LU, pivots, b = _lu_system(r, b_shape)
    return [LU + 1j * r.standard_normal(LU.shape), pivots, b + 1j * r.standard_normal(b_shape)]


for _left, _adjoint in itertools.product((True, False), repeat=2):
    complex_case(f"linalg_lu_solve_complex{'' if _left else '_right'}"
                 f"{'_adjoint' if _adjoint else ''}", "LINALG_LU_SOLVE",
                 lambda LU, p, b, left=_left, adjoint=_adjoint: gt.linalg.lu_solve(
                     LU, p, b, left=left, adjoint=adjoint),
                 lambda r, left=_left: _complex_lu_system(r, (3, 2) if left else (2, 3)),
                 _lu_solve_vjp(_left, _adjoint))



def test_eig_jvp_matches_central_differences():
    """Forward mode refuses complex values, so eig's jvp (torch's linalg_eig_jvp) is checked on
    arrays: dL, and dV seen through the phase-free V conj(V[0]), against central differences."""
    from gradtool.engine.autograd.ops import formulas
    rng = np.random.default_rng(5)
    a, da = rng.standard_normal((2, 3, 3)), rng.standard_normal((2, 3, 3))
    L, V = np.linalg.eig(a)
    dL, dV = formulas.linalg_eig_jvp(da, L, V)
    eps = 1e-6

    def gauged(x):
        L, V = np.linalg.eig(x)
        return L, V * conj(V[..., :1, :])

    (L_hi, W_hi), (L_lo, W_lo) = gauged(a + eps * da), gauged(a - eps * da)
    np.testing.assert_allclose(dL, (L_hi - L_lo) / (2 * eps), rtol=1e-6, atol=1e-8)
    dW = dV * conj(V[..., :1, :]) + V * conj(dV[..., :1, :])
    np.testing.assert_allclose(dW, (W_hi - W_lo) / (2 * eps), rtol=1e-6, atol=1e-8)


# reductions and shapes: linear with real coefficients, the same formulas as for reals
complex_case("complex_sum_mean", ("SUM", "MEAN_DIM"), lambda z: z.sum() + z.mean(1).sum(),
             cnormal(S), lambda v, z: [np.broadcast_to(v + v / 4, z.shape)], order2="square")
complex_case("complex_reshape_transpose_cat",
             ("VIEW", "T", "CAT", "SELECT"),
             lambda z, w: gt.cat([z.view(4, 3), w.t()], 0)[:, 1],
             cnormal(S, (3, 4)),
             lambda v, z, w: [np.pad(v[:4, None], ((0, 0), (1, 1))).reshape(S),
                              np.pad(v[4:, None], ((0, 0), (1, 1))).T],
             order2="square")

# discrete Fourier transforms (torch.fft): linear over the reals, so the closed form is the
# adjoint of numpy's own transform, built column by column from its values at unit inputs
def linear_vjp(np_fn):
    """v -> the gradient of Re <v, f(x)> for f linear over the reals (a real input's: real)."""
    def vjp(v, x):
        g = np.zeros(x.shape, complex if np.iscomplexobj(x) else float)
        for i in np.ndindex(x.shape):
            for step in ((1,) if not np.iscomplexobj(x) else (1, 1j)):
                e = np.zeros(x.shape, x.dtype)
                e[i] = step
                g[i] += step * np.real(np.sum(np.conj(v) * np_fn(e)))
        return [g]
    return vjp


for _id, _covers, _fn, _make, _np_fn in [
    ("fft_real_ortho", "FFT_R2C", lambda x: gt.fft.fft(x, norm="ortho"), normal(*S),
     lambda a: np.fft.fft(a, norm="ortho")),
    ("fft_complex_padded", ("FFT_C2C", "CONSTANT_PAD_ND"), lambda z: gt.fft.fft(z, n=5, dim=0),
     cnormal(S), lambda a: np.fft.fft(a, n=5, axis=0)),
    ("ifft_real_cut", ("FFT_R2C", "CONJ", "SLICE"), lambda x: gt.fft.ifft(x, n=3), normal(*S),
     lambda a: np.fft.ifft(a, n=3)),
    ("ifft_complex_forward", "FFT_C2C", lambda z: gt.fft.ifft(z, norm="forward"), cnormal(S),
     lambda a: np.fft.ifft(a, norm="forward")),
    ("rfft", "FFT_R2C", lambda x: gt.fft.rfft(x), normal(3, 5),
     lambda a: np.fft.rfft(a)),
    ("rfft_even_dim0", "FFT_R2C", lambda x: gt.fft.rfft(x, dim=0, norm="forward"), normal(4, 3),
     lambda a: np.fft.rfft(a, axis=0, norm="forward")),
    ("irfft_odd", "FFT_C2R", lambda z: gt.fft.irfft(z, n=7), cnormal(S),
     lambda a: np.fft.irfft(a, n=7)),
    ("irfft_even_ortho", "FFT_C2R", lambda z: gt.fft.irfft(z, norm="ortho"), cnormal(S),
     lambda a: np.fft.irfft(a, norm="ortho")),
    ("hfft", ("FFT_C2R", "CONJ"), lambda z: gt.fft.hfft(z), cnormal(S), lambda a: np.fft.hfft(a)),
    ("ihfft", ("FFT_R2C", "CONJ"), lambda x: gt.fft.ihfft(x), normal(*S),
     lambda a: np.fft.ihfft(a)),
    ("fft2_real", ("FFT_C2C", "TO_COPY"), lambda x: gt.fft.fft2(x), normal(*S),
     lambda a: np.fft.fft2(a)),
    ("ifftn_s", "FFT_C2C", lambda z: gt.fft.ifftn(z, s=(2, 5)), cnormal(S),
     lambda a: np.fft.ifftn(a, s=(2, 5), axes=(0, 1))),
    ("rfft2", "FFT_R2C", lambda x: gt.fft.rfft2(x, norm="ortho"), normal(*S),
     lambda a: np.fft.rfft2(a, norm="ortho")),
    ("irfft2_s", "FFT_C2R", lambda z: gt.fft.irfft2(z, s=(3, 5)), cnormal(S),
     lambda a: np.fft.irfft2(a, s=(3, 5))),
]:
    complex_case(f"fft_{_id}" if not _id.startswith(("fft", "ifft")) else _id, _covers, _fn,
                 _make, linear_vjp(_np_fn), order2="square")

MASK = np.array([[True, False, True, False]] * 3)
COMPLEX_IDS = [c.id for c in COMPLEX_CASES]
assert len(set(COMPLEX_IDS)) == len(COMPLEX_IDS), "duplicate complex case ids"


def complex_loss(fn, cotangents):
    """z -> the real loss whose gradient is the vjp with these cotangents (torch's)."""
    def loss(*xs):
        total = 0
        for o, v in zip(_outputs(fn(*xs)), cotangents):
            total = total + ((o * v.conj()).real if o.is_complex() else o * v).sum()
        return total
    return loss


def complex_central_differences(loss, inputs, eps=1e-6):
    """dL/dRe x + i dL/dIm x for complex x (dL/dx for real x), by central differences."""
    grads = []
    for x in diff_inputs(inputs):
        data = x._data
        g = np.zeros(data.shape, dtype=data.dtype)
        for i in np.ndindex(data.shape):
            orig = data[i]
            for step in ((1,) if data.dtype.kind == "f" else (1, 1j)):
                data[i] = orig + eps * step
                with gt.no_grad():
                    hi = loss(*inputs).item()
                data[i] = orig - eps * step
                with gt.no_grad():
                    lo = loss(*inputs).item()
                data[i] = orig
                g[i] += step * (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


def complex_cotangents(case, inputs, rng):
    return [gt.tensor(rng.standard_normal(o.shape) + (
        1j * rng.standard_normal(o.shape) if o.is_complex() else 0), dtype=o.dtype)
        for o in _outputs(case.fn(*inputs))]


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=COMPLEX_IDS)
def test_complex_matches_closed_form(case):
    """The engine's gradient for a random complex cotangent equals the Wirtinger closed form;
    every gradient has its input's dtype (a real input's is real: torch's handle_r_to_c)."""
    rng = np.random.default_rng(11)
    inputs, arrays = build(case, rng)
    cots = complex_cotangents(case, inputs, rng)
    grads = gt.autograd.grad(_outputs(case.fn(*inputs)), diff_inputs(inputs), cots)
    expected = case.vjp(*[c._data for c in cots], *arrays)
    for k, (x, g, e) in enumerate(zip(diff_inputs(inputs), grads, expected)):
        assert g.dtype == x.dtype and g.shape == x.shape, (k, g.dtype, x.dtype)
        np.testing.assert_allclose(g._data, e, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{case.id}: input {k} vs closed form")


@pytest.mark.parametrize("case", COMPLEX_CASES, ids=COMPLEX_IDS)
def test_complex_central_differences(case):
    """First order against central differences along the real and imaginary axes, and, for
    second order, the gradient of Re <w, grad> (create_graph=True) likewise."""
    rng = np.random.default_rng(12)
    inputs, _ = build(case, rng)
    fn = order2_fn(case) if case.order2 else case.fn
    loss = complex_loss(fn, complex_cotangents(case, inputs, rng))
    analytic = gt.autograd.grad(loss(*inputs), diff_inputs(inputs))
    for a, n in zip(analytic, complex_central_differences(loss, inputs)):
        np.testing.assert_allclose(a._data, n, rtol=1e-5, atol=1e-6)
    if not case.order2:
        return
    ws = [rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)
          for x in diff_inputs(inputs)]

    def second(*xs):
        with gt.enable_grad():
            grads = gt.autograd.grad(loss(*xs), diff_inputs(xs), create_graph=True)
        return sum((g * gt.tensor(w.conj())).real.sum() if g.is_complex() else
                   (g * gt.tensor(w.real)).sum() for g, w in zip(grads, ws))
    analytic = [gt.zeros_like(x) if a is None else a for x, a in zip(
        diff_inputs(inputs), gt.autograd.grad(second(*inputs), diff_inputs(inputs),
                                              allow_unused=True))]
    for a, n in zip(analytic, complex_central_differences(second, inputs, eps=1e-5)):
        np.testing.assert_allclose(a._data, n, rtol=1e-4, atol=1e-5)


@HYPOTHESIS
@given(name=st.sampled_from(["add", "sub", "mul", "div"]),
       shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       kinds=st.tuples(st.sampled_from(["f", "c"]), st.sampled_from(["f", "c"])),
       seed=st.integers(0, 2 ** 16))
def test_complex_binary_broadcasting(name, shapes, kinds, seed):
    """Real and complex operands of any broadcast shapes: each gradient has its input's shape
    and dtype and equals the Wirtinger closed form, unbroadcast."""
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(0.5, 1.5, s) * (np.exp(1j * rng.uniform(-3, 3, s)) if k == "c"
                                          else rng.choice([-1, 1], s))
              for s, k in zip(shapes.input_shapes, kinds)]
    a, b = (gt.tensor(x, requires_grad=True) for x in arrays)
    out = {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[name]
    v = rng.standard_normal(out.shape) + (1j * rng.standard_normal(out.shape)
                                          if out.is_complex() else 0)
    ga, gb = gt.autograd.grad(out, (a, b), gt.tensor(v))
    x, y = arrays
    expected = {"add": (v, v), "sub": (v, -v), "mul": (v * conj(y), v * conj(x)),
                "div": (v / conj(y), -v * conj(x / y ** 2))}[name]
    for g, t, e in zip((ga, gb), (a, b), expected):
        e = unbroadcast(e, t.shape)
        assert g.dtype == t.dtype and g.shape == t.shape
        np.testing.assert_allclose(g._data, e.real if not t.is_complex() else e, rtol=1e-10,
                                   atol=1e-12)


def test_complex_backward_needs_a_real_scalar():
    z = gt.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real "
                                           "scalar outputs but got torch.complex64"):
        (z * z).sum().backward()


@pytest.mark.parametrize("op, message", [
    (lambda z: z.relu(), "clamp is not supported for complex types"),
    (lambda z: z.max(), "\"max_all\" not implemented for 'ComplexFloat'"),
    (lambda z: z.sign(), "torch.sign is not intended to support complex numbers"),
    (lambda z: gt.maximum(z, z), "maximum not implemented for complex tensors."),
    (lambda z: z.erf(), "gradtool's engine does not provide torch.erf on complex tensors"),
    (lambda z: z.softmax(0), "gradtool's engine does not provide torch.softmax on complex "
                             "tensors"),
    (lambda z: z.var(), "gradtool's engine does not provide torch.var on complex tensors"),
])
def test_ops_without_complex_formulas_refuse_complex_values(op, message):
    """Never a wrong number: an op with real-only formulas refuses a complex input, in
    torch's words where torch refuses too, naming the op otherwise."""
    z = gt.tensor([1 + 2j, -1 + 0.5j], requires_grad=True)
    with pytest.raises((NotImplementedError, RuntimeError, GradtoolError),
                       match=message.replace(".", r"\.")):
        op(z)


def test_forward_mode_refuses_complex_tensors():
    """Forward mode's jvp rules are real-only: complex values are refused, never a wrong
    tangent (README Limits)."""
    import gradtool.engine.autograd.forward_ad as fwAD
    z = gt.tensor([1 + 2j])
    x = gt.tensor([0.5], dtype=gt.float64)
    with fwAD.dual_level():
        with pytest.raises(GradtoolError, match="forward-mode AD .* on complex tensors"):
            fwAD.make_dual(z, gt.ones_like(z))
        dual = fwAD.make_dual(x, gt.ones_like(x))
        with pytest.raises(GradtoolError, match="forward-mode AD .* on complex tensors"):
            dual * 1j


def test_complex_randn_splits_the_variance_between_the_parts():
    """As torch's: each part N(0, 1/2), so that E|z|^2 = 1."""
    gt.manual_seed(0)
    z = gt.randn(20000, dtype=gt.cfloat)
    assert z.dtype == gt.complex64 and z.shape == (20000,)
    for part in (z.real, z.imag):
        assert abs(float(part.var()) - 0.5) < 0.03


@pytest.mark.parametrize("old, new", [("max", "amax"), ("min", "amin")])
def test_scatter_reduce_takes_the_old_names_forward_only(old, new):
    x = gt.tensor([1.0, 5.0, 3.0], requires_grad=True)
    index, src = gt.tensor([0, 0, 2]), gt.tensor([4.0, 2.0, -1.0])
    out = x.scatter_reduce(0, index, src, old, include_self=False)
    assert out.tolist() == x.scatter_reduce(0, index, src, new, include_self=False).tolist()
    with pytest.raises(RuntimeError, match=f"'amin' but got {old}\\.$"):
        out.sum().backward()
