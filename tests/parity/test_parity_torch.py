"""Parity with PyTorch: every case of the op sweep (tests/engine/test_op_gradients.py) run through
gradtool and through torch on the same float64 inputs and cotangents, comparing outputs,
gradients and gradients of gradients; plus torch's conventions at kinks and domain edges, and
random broadcasting/reduction/matmul shapes. Skipped when torch is not installed (it is not a
dependency of gradtool)."""
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import gradtool as gt  # noqa: E402
from tests.engine import test_op_gradients as sweep  # noqa: E402
from tests.engine.test_api import LINALG_SOLVER_ERRORS  # noqa: E402

pytestmark = pytest.mark.parity
HYPOTHESIS = settings(max_examples=20, deadline=None, derandomize=True)

# Cases that call gradtool's internal dispatch: the same math with torch's public ops.
TORCH_EQUIVALENTS = {
    "select_backward_op": lambda g: torch.ops.aten.select_backward(g, [3, 4], 1, 2),
    "slice_backward_op": lambda g: torch.ops.aten.slice_backward(g, [3, 5], 1, 0, 5, 2),
    "diagonal_backward_op": lambda g: torch.ops.aten.diagonal_backward(g, [3, 4], 1, 0, 1),
    "index_backward_op": lambda g: torch.zeros(3, 4, dtype=g.dtype).index_put(
        (torch.tensor([2, 0, 2]),), g, accumulate=True),
    "index_put_accumulate_op": lambda x, z: torch.index_put(
        x, (torch.tensor([1, 1, 0]),), z, accumulate=True),
    "as_strided_op": lambda x: x.reshape(-1)[torch.from_numpy(sweep.AS_STRIDED_INDICES)],
    "threshold_backward_op": lambda g, r: torch.ops.aten.threshold_backward(g, r, 0),
    "leaky_relu_backward_op": lambda g, r: torch.ops.aten.leaky_relu_backward(g, r, 0.1, False),
    "mul_scalar_op": lambda x: torch.ops.aten.mul.Scalar(x, 0.9),
    "add_scalar_op": lambda x: torch.ops.aten.add.Scalar(x, 1.5),
    "sub_scalar_op": lambda x: torch.ops.aten.sub.Scalar(x, 0.5),
    "norm_scalar_dim_op": lambda x: torch.ops.aten.norm.ScalarOpt_dim(x, 3.0, [1]),
    "unfold_backward_op": lambda g: torch.ops.aten.unfold_backward(g, [3, 5], 1, 2, 1),
    # (the seeded wrapper calls gradtool: the same cases, unseeded: the draws are multiplied by 0)
    "normal_tensor_float": lambda m: torch.normal(m, 2.0) * 0.0 + m,
    "normal_float_tensor": lambda s: torch.normal(1.0, s) * 0.0 + s,
    "normal_tensor_tensor": lambda m, s: torch.normal(m, s) * 0.0 + m * s,
    "standard_gamma": lambda a: torch._standard_gamma(a) * 0.0 + a,
}
# normal_/uniform_ fill with random numbers: torch's generator draws other values.
# torch's mkldnn_rnn_layer takes float32 only (oneDNN): tests/parity/test_recurrent_attention.py
# compares it with torch's in float32 (values, graph, _saved_*, second order).
NOT_COMPARABLE = {"normal_", "uniform_", "bernoulli", "dropout2d", "mkldnn_rnn_layer",
                  "mkldnn_rnn_layer_reverse", "random_fill", "random_to_fill",
                  "random_from_to_fill", "log_normal_fill", "exponential_fill", "geometric_fill",
                  "cauchy_fill", "rrelu_training", "rrelu_", "bernoulli_", "bernoulli_tensor"}
# torch's grouped_mm takes float32 and narrower (the sweep's cases are float64): compared in
# float32 in tests/parity/test_low_precision_mm.py
NOT_COMPARABLE |= {c.id for c in sweep.CASES if c.id.startswith("grouped_mm_")}
CASES = [c for c in sweep.CASES if c.id not in NOT_COMPARABLE]


def as_torch(fn):
    """The case's function with `gt` bound to torch: code written for one runs on the other."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "gt": torch}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def build_both(case, rng):
    gt_inputs, torch_inputs = [], []
    for item in case.make(rng):
        if isinstance(item, sweep.Const):
            value = item.value
            if isinstance(value, np.ndarray):
                gt_inputs.append(gt.tensor(value))
                torch_inputs.append(torch.from_numpy(value.copy()))
            else:
                gt_inputs.append(value)
                torch_inputs.append(value)
        else:
            a = np.asarray(item, dtype=np.float64)
            gt_inputs.append(gt.tensor(a, requires_grad=True))
            torch_inputs.append(torch.tensor(a, requires_grad=True))
    return gt_inputs, torch_inputs


def floats(out, lib):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if o.dtype.is_floating_point]


def to_numpy(t):
    return None if t is None else t.detach().numpy(force=True)  # force: torch's ZeroTensor


def grads_both(fn_gt, fn_torch, gt_inputs, torch_inputs, rng, order):
    """(outputs, first-order grads, second-order grads) for each library, same cotangents."""
    results = []
    outs_shapes = None
    cots = ws = None
    for lib, fn, inputs in ((gt, fn_gt, gt_inputs), (torch, fn_torch, torch_inputs)):
        diff = [x for x in inputs if isinstance(x, lib.Tensor) and x.requires_grad]
        outs = floats(fn(*inputs), lib)
        if cots is None:
            outs_shapes = [tuple(o.shape) for o in outs]
            cots = [rng.standard_normal(s) for s in outs_shapes]
            ws = [rng.standard_normal(tuple(x.shape)) for x in diff]
        assert [tuple(o.shape) for o in outs] == outs_shapes
        grads = lib.autograd.grad(
            outs, diff, grad_outputs=[lib.tensor(c).to(o.dtype) for c, o in zip(cots, outs)],
            create_graph=order >= 2, allow_unused=True)
        second = [None] * len(diff)
        if order >= 2:
            total = None
            for g, w in zip(grads, ws):
                if g is not None and g.requires_grad:
                    term = (g * lib.tensor(w).to(g.dtype)).sum()
                    total = term if total is None else total + term
            if total is not None:
                second = lib.autograd.grad(total, diff, allow_unused=True)
        results.append(([to_numpy(o) for o in outs], [to_numpy(g) for g in grads],
                         [to_numpy(g) for g in second], [str(g.dtype).split(".")[-1]
                                                         if g is not None else None
                                                         for g in grads]))
    return results


def assert_same(a, b, what, rtol=1e-10, atol=1e-12):
    if a is None or b is None:
        a = np.zeros_like(b) if a is None and b is not None else a
        b = np.zeros_like(a) if b is None and a is not None else b
        if a is None:
            return
    assert a.shape == b.shape, f"{what}: shape {a.shape} (gradtool) != {b.shape} (torch)"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_matches_torch(case):
    rng = np.random.default_rng(11)
    gt_inputs, torch_inputs = build_both(case, rng)
    fn_torch = TORCH_EQUIVALENTS.get(case.id) or as_torch(case.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's x.T-on-3-D deprecation
        mine, theirs = grads_both(case.fn, fn_torch, gt_inputs, torch_inputs, rng,
                                  order=1 if case.id in TORCH_HAS_NO_SECOND_ORDER
                                  or sweep.differentiable_once(case) else 2)
    for k, (a, b) in enumerate(zip(mine[0], theirs[0])):
        assert_same(a, b, f"output {k}")
    for k, (a, b) in enumerate(zip(mine[1], theirs[1])):
        assert_same(a, b, f"grad of input {k}")
    assert mine[3] == theirs[3], f"grad dtypes {mine[3]} (gradtool) != {theirs[3]} (torch)"
    if case.id in TORCH_HAS_NO_SECOND_ORDER or sweep.differentiable_once(case):
        return
    for k, (a, b) in enumerate(zip(mine[2], theirs[2])):
        assert_same(a, b, f"second-order grad of input {k}", rtol=1e-9, atol=1e-11)


# torch's backward of these is not differentiable ("derivative for aten::hardsigmoid_backward
# is not implemented", the same for _cdist_backward, _pdist_backward and the margin losses'
# backward ops); gradtool's is, and the sweep checks it
TORCH_HAS_NO_SECOND_ORDER = {"hardsigmoid", "cdist_p2.0", "cdist_p1.0", "cdist_p3.0",
                             "cdist_pinf", "cdist_batched", "pdist_p2.0", "pdist_p1.0",
                             "pdist_p3.0", "pdist_pinf", "multi_margin_loss_p2_weight",
                             "multi_margin_loss_none", "multilabel_margin_loss",
                             # _embedding_bag_per_sample_weights_backward: torch raises
                             "embedding_bag_sum_weighted",
                             # the derivative for '_standard_gamma_grad' is not implemented
                             "standard_gamma"}
# The internal-dispatch cases call other ops in torch:
KNOWN_NAME_DIFFERENCES = {"index_backward_op", "as_strided_op", "diagonal_backward_op",
                          # torch's C++ adds the 1 with add.Scalar (AddBackward1), a node
                          # the engine has no row for; its Python `1 + t` is AddBackward0
                          "special_ndtr"}


@pytest.mark.parametrize("case", [c for c in CASES if c.id not in KNOWN_NAME_DIFFERENCES],
                         ids=[c.id for c in CASES if c.id not in KNOWN_NAME_DIFFERENCES])
def test_case_records_torchs_node(case):
    """The output's grad_fn has torch's name, and its inputs' nodes too (one level down);
    torch's C++ nodes (AccumulateGrad, CopySlices) are named without their namespace."""
    gt_inputs, torch_inputs = build_both(case, np.random.default_rng(11))
    fn_torch = TORCH_EQUIVALENTS.get(case.id) or as_torch(case.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mine, theirs = case.fn(*gt_inputs), fn_torch(*torch_inputs)

    def name(fn):
        return None if fn is None else fn.name().removeprefix("torch::autograd::")

    def names(out):
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return [(name(o.grad_fn), [name(f) for f, _ in o.grad_fn.next_functions])
                if o.grad_fn is not None else None for o in outs]
    assert names(mine) == names(theirs)


# ---------------------------------- kinks and domain edges ----------------------------------
PROBES = {
    "relu_at_0": (lambda x: x.relu(), [-1.0, 0.0, 2.0]),
    "abs_at_0": (lambda x: x.abs(), [-1.0, 0.0, 2.0]),
    "sqrt_at_0": (lambda x: x.sqrt(), [0.0, 4.0]),
    "clamp_bounds": (lambda x: x.clamp(-0.5, 0.5), [-1.0, -0.5, 0.0, 0.5, 1.0]),
    "clamp_min_bound": (lambda x: x.clamp(min=0.0), [-1.0, 0.0, 1.0]),
    "max_ties": (lambda x: x.max(), [[1.0, 3.0], [3.0, 3.0]]),
    "min_ties": (lambda x: x.min(), [2.0, -1.0, 5.0, -1.0]),
    "amax_ties": (lambda x: x.amax(), [[1.0, 3.0], [3.0, 3.0]]),
    "amax_dim_ties": (lambda x: x.amax(1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    "amin_dim_ties": (lambda x: x.amin(0), [[1.0, 3.0, 3.0], [1.0, 2.0, 3.0]]),
    "max_dim_ties": (lambda x: x.max(1).values, [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    "min_dim_ties": (lambda x: x.min(0).values, [[1.0, 3.0], [1.0, 3.0]]),
    "maximum_ties": (lambda x: x.maximum(x.detach() * 0 + 1.0), [1.0, 2.0, 0.0]),
    "minimum_ties": (lambda x: x.minimum(x.detach() * 0 + 1.0), [1.0, 2.0, 0.0]),
    "prod_one_zero": (lambda x: x.prod(), [2.0, 0.0, 3.0]),
    "prod_two_zeros": (lambda x: x.prod(), [2.0, 0.0, 0.0, 3.0]),
    "prod_dim_zeros": (lambda x: x.prod(1), [[2.0, 4.0, 3.0], [2.0, 0.0, 3.0], [0.0, 5.0, 0.0]]),
    "norm_zero": (lambda x: x.norm(), [0.0, 0.0]),
    "norm_p1_at_0": (lambda x: x.norm(1, dim=1), [[0.0, -2.0, 2.0], [1.0, 0.0, -0.5]]),
    "norm_inf_ties": (lambda x: x.norm(float("inf"), dim=1), [[0.0, -2.0, 2.0], [1.0, 1.0, -1.0]]),
    "norm_neg_inf_ties": (lambda x: gt.linalg.vector_norm(x, -float("inf")), [0.0, 3.0, -3.0]),
    "norm_p0_5_at_0": (lambda x: x.norm(0.5), [0.0, 1.0, 4.0]),
    "norm_p3_zeros": (lambda x: x.norm(3, dim=0), [[0.0, 1.0], [0.0, -2.0]]),
    "norm_p_neg2_at_0": (lambda x: x.norm(-2, dim=0), [[0.0, 1.0], [3.0, -2.0]]),
    "normalize_p1_zero_row": (lambda x: gt.nn.functional.normalize(x, p=1),
                              [[0.0, 0.0], [3.0, -1.0]]),
    "matrix_norm_inf_ties": (lambda x: gt.linalg.matrix_norm(x, float("inf")),
                             [[1.0, -2.0], [3.0, 0.0]]),
    "std_constant": (lambda x: x.std(1), [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]),
    "log_at_0": (lambda x: x.log(), [0.0, 1.0]),
    "rsqrt_at_0": (lambda x: x.rsqrt(), [0.0, 4.0]),
    "pow_half_at_0": (lambda x: x ** 0.5, [0.0, 4.0]),
    "pow_0_at_0": (lambda x: x ** 0, [0.0, 2.0]),
    "where_nan_leak": (lambda x: gt.where(x > 0, x.sqrt(), 0.0), [-1.0, 4.0]),
    "logsumexp_-inf": (lambda x: x.logsumexp(0), [-np.inf, -np.inf]),
    "softmax_-inf": (lambda x: x.softmax(0), [-np.inf, 0.0, 1.0]),
    "sigmoid_large": (lambda x: x.sigmoid(), [-800.0, 0.0, 800.0]),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_kinks_and_edges_match_torch(name):
    fn, values = PROBES[name]
    results = []
    for lib, f in ((gt, fn), (torch, as_torch(fn))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gradtool's own warning policy is tested elsewhere
            x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
            out = f(x)
            out.backward(lib.ones_like(out))
        results.append((out.detach().numpy().copy(), x.grad.numpy().copy()))
    (out_gt, grad_gt), (out_torch, grad_torch) = results
    # equal up to rounding; inf and nan in the same places
    np.testing.assert_allclose(out_gt, out_torch, rtol=1e-14, atol=0)
    np.testing.assert_allclose(grad_gt, grad_torch, rtol=1e-14, atol=0)


def test_max_dim_returns_torch_indices_on_ties():
    values = [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [0.0, 5.0, -1.0]]
    for op in ("max", "min"):
        mine = getattr(gt.tensor(values, dtype=gt.float64), op)(1).indices.tolist()
        theirs = getattr(torch.tensor(values, dtype=torch.float64), op)(1).indices.tolist()
        assert mine == theirs, op


# ---------------------------------- random shapes ----------------------------------
@HYPOTHESIS
@given(args=sweep.reduction_args(), seed=st.integers(0, 2 ** 16))
def test_reductions_match_torch(args, seed):
    name, shape, dims, keepdim, correction = args
    rng = np.random.default_rng(seed)
    a = sweep.signed(rng, shape) if name == "prod" else rng.standard_normal(shape)
    fn = sweep.REDUCTIONS[name]
    grads = []
    for lib in (gt, torch):
        x = lib.tensor(a, requires_grad=True)
        out = fn(x, dims, keepdim, correction)
        v = np.random.default_rng(seed + 1).standard_normal(tuple(out.shape))
        (g,) = lib.autograd.grad(out, [x], lib.tensor(v))
        grads.append((out.detach().numpy(), g.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-10, atol=1e-12)


@HYPOTHESIS
@given(shapes=sweep.matmul_shapes(), seed=st.integers(0, 2 ** 16))
def test_matmul_matches_torch(shapes, seed):
    sa, sb = shapes
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    results = []
    for lib in (gt, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.matmul(x, y)
        v = np.random.default_rng(seed + 1).standard_normal(tuple(out.shape))
        gx, gy = lib.autograd.grad(out, [x, y], lib.tensor(v))
        results.append([out.detach().numpy(), gx.numpy(), gy.numpy()])
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def _graph(fn):
    """Every node under fn, depth first: its name and its _saved_* names."""
    out, stack = [], [fn]
    while stack:
        fn = stack.pop()
        if fn is not None:
            out.append((fn.name().removeprefix("torch::autograd::"),
                        sorted(a for a in dir(fn) if a.startswith("_saved_"))))
            stack.extend(f for f, _ in reversed(fn.next_functions))
    return out


@HYPOTHESIS
@given(shapes=sweep.matmul_shapes(), needs=st.sampled_from([(True, True), (True, False),
                                                            (False, True)]),
       transposed=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_matmul_records_torchs_graph(shapes, needs, transposed, seed):
    """Batches, vectors and broadcasting: the same nodes (mm / mv / bmm and the views around
    them), with the same saved names, whichever operands require grad and whatever their
    layout; and an in-place write to an operand afterwards fails in both or in neither."""
    sa, sb = shapes
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    results = []
    for lib in (gt, torch):
        x, y = lib.tensor(a, requires_grad=needs[0]), lib.tensor(b, requires_grad=needs[1])
        x, y = x * 1, (y.mT.contiguous().mT if transposed and y.dim() > 1 else y * 1)
        out = lib.matmul(x, y)
        x.add_(1)
        try:
            out.sum().backward()
            refused = False
        except RuntimeError as e:
            refused = "modified by an inplace operation" in str(e)
        results.append((_graph(out.grad_fn), refused))
    assert results[0] == results[1]


# ---------------------------------- saved values ----------------------------------
# Values gradtool stores in another (equivalent) form than torch: dims made non-negative
# (torch keeps -1, shown as 2**64 - 1), a slice's end clamped to the size, reductions over
# all dims saved as the dims (torch: None / ()), the default correction saved as 1.
KNOWN_SAVED_VALUE_FORMS = {
    ("sum_dim_keepdim", "dim"), ("mean_dims_keepdim", "dim"), ("prod_dim_keepdim", "dim"),
    ("max_dim_keepdim", "dim"), ("softmax_last", "dim"), ("mT", "dim0"), ("mT", "dim1"),
    ("getitem_negative_int", "index"), ("narrow", "dim"), ("stack_last", "dim"),
    ("split_with_sizes", "dim"), ("slice_step", "end"), ("var", "dim"), ("std", "dim"),
    ("var", "correction"), ("std", "correction"), ("amax_all", "dim"), ("cumprod", "dim"),
    ("topk", "dim"), ("norm_p_neg1", "dim"), ("norm_inf_dim", "dim"), ("matrix_norm_2", "dim"),
    ("matrix_norm_nuc_dims", "dim"), ("adaptive_avg_pool2d_to_1", "dim"),
    # in eval mode torch's rrelu saves an uninitialised noise tensor (never read)
    ("rrelu_eval", "noise"),
    # torch leaves log_alpha uninitialised past each sample's frames and states
    ("ctc_loss_padded_mean", "result1"), ("ctc_loss_concatenated_sum", "result1"),
    ("ctc_loss_zero_infinity_none", "result1"),
    ("linalg_vander", "dim"), ("linalg_diagonal", "dim1"), ("linalg_diagonal", "dim2"),
    ("linalg_cond", "dim"),
    # torch's addcdiv saves tensor2 whichever inputs require grad; gradtool only for the
    # formulas that read it (tensor1's and tensor2's)
    ("addcdiv", "tensor2"),
    # LAPACK's rounding differs in the last bits (a relative 2e-14 on a small element; 1e-18
    # against 0 for the vanishing pivot of a singular matrix)
    ("linalg_qr_tall", "Q"), ("det_singular", "LU"), ("det_singular", "result"),
    # the sign of each singular vector is LAPACK's choice (the cases fix it: x * sign)
    *((case, name) for case in ("linalg_svd_tall", "linalg_svd_wide", "linalg_eigh")
      for name in ("self", "other"))}
# Saved values torch's node has and gradtool's does not: torch's complex-aware slogdet formula
# reads the sign (a real one does not); S.size(-1), which svd's formula reads from S here
TORCH_ONLY_SAVED = {"LinalgSlogdetBackward0": {"_saved_sign", "_raw_saved_sign"},
                    "LinalgSvdBackward0": {"_saved_S_sym_argsize_minus_1"}}


def _saved_form(v):
    """A saved value, comparable across the two libraries (tensors and index arrays as
    lists; torch's scalars wrapped as 0-d tensors as numbers)."""
    if isinstance(v, (gt.Tensor, torch.Tensor)):
        if v.layout not in (gt.strided, torch.strided):  # (a compressed sparse tensor)
            return (str(v.layout).split(".")[-1], _saved_form(v.values()),
                    _saved_form(v.to_dense()))
        return np.asarray(v.detach().numpy()).tolist()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (tuple, list)):
        return tuple(_saved_form(x) for x in v)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, int) and not isinstance(v, bool):  # torch shows an int64 as uint64
        return v % 2 ** 64                                # (-1 as 2**64 - 1)
    return v


def _first_grad_fns(case, only_first_input):
    gt_inputs, torch_inputs = build_both(case, np.random.default_rng(11))
    if only_first_input:  # the other inputs need no grad: their formulas' tensors are not saved
        diff = [i for i, x in enumerate(gt_inputs) if isinstance(x, gt.Tensor) and x.requires_grad]
        for i in diff[1:]:
            gt_inputs[i].requires_grad_(False)
            torch_inputs[i].requires_grad_(False)
    fn_torch = TORCH_EQUIVALENTS.get(case.id) or as_torch(case.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mine, theirs = case.fn(*gt_inputs), fn_torch(*torch_inputs)
    first = [o if not isinstance(o, (tuple, list)) else o[0] for o in (mine, theirs)]
    return first[0].grad_fn, first[1].grad_fn


@pytest.mark.parametrize("only_first_input", [False, True], ids=["all_inputs", "first_input"])
@pytest.mark.parametrize("case", [c for c in CASES if c.id not in KNOWN_NAME_DIFFERENCES],
                         ids=[c.id for c in CASES if c.id not in KNOWN_NAME_DIFFERENCES])
def test_case_node_has_torchs_saved_attributes_and_values(case, only_first_input):
    """Every `_saved_*` / `_raw_saved_*` name of torch's node and no other, each with torch's
    value: None where torch saved nothing this time."""
    mine, theirs = _first_grad_fns(case, only_first_input)
    if theirs is None:
        assert mine is None
        return

    def names(node):
        return sorted(a for a in dir(node) if a.startswith(("_saved", "_raw_saved"))
                      and a not in TORCH_ONLY_SAVED.get(node.name(), ()))
    assert names(mine) == names(theirs)
    for attr in (a for a in names(theirs) if a.startswith("_saved_")):
        value = getattr(mine, attr)
        if attr == "_saved_indices" and not isinstance(value, gt.Tensor):  # numpy's index
            value = tuple(None if isinstance(i, slice) else i
                          for i in (value if isinstance(value, tuple) else (value,)))
        a, b = _saved_form(value), _saved_form(getattr(theirs, attr))
        if (case.id, attr[7:]) in KNOWN_SAVED_VALUE_FORMS:
            continue
        if isinstance(b, list) or (isinstance(b, float) and isinstance(a, float)):
            # a few ulps of the array's largest entry: LAPACK's factors (svd's Vh) differ in
            # the last bit of their small entries between builds and thread counts
            scale = np.max(np.abs(np.asarray(b)), initial=0.0)
            np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14 * scale, err_msg=attr)
        else:
            assert a == b, attr


# ---------------------------------- ill-defined linalg gradients ----------------------------------
@pytest.mark.parametrize("op", ["eigh", "eigvalsh", "svd", "svdvals"])
def test_repeated_eigen_and_singular_values_give_torchs_gradients(op):
    """Repeated eigenvalues (or singular values) leave the vectors undetermined: torch's
    gradient through them is inf / nan (E_ij = 0 divides), through the values alone finite.
    gradtool gives the same, entry for entry (nan where torch's is nan)."""
    a = np.diag([2.0, 2.0, 5.0])
    results = []
    for lib in (gt, torch):
        x = lib.tensor(a, requires_grad=True)
        outs = {"eigh": lambda: lib.linalg.eigh(x), "eigvalsh": lambda: (lib.linalg.eigvalsh(x),),
                "svd": lambda: lib.linalg.svd(x), "svdvals": lambda: (lib.linalg.svdvals(x),)}[op]()
        loss = sum((o * lib.tensor(np.cos(np.arange(o.numel()) + k).reshape(tuple(o.shape))))
                   .sum() for k, o in enumerate(outs))
        g, = lib.autograd.grad(loss, x)
        results.append(g.numpy())
    mine, theirs = results
    np.testing.assert_array_equal(np.isfinite(mine), np.isfinite(theirs))
    np.testing.assert_allclose(mine[np.isfinite(theirs)], theirs[np.isfinite(theirs)], rtol=1e-10,
                               atol=1e-12)
    assert np.all(np.isfinite(theirs)) == (op in ("eigvalsh", "svdvals"))


def test_linalg_errors_match_torch():
    for call in (lambda lib: lib.linalg.inv(lib.zeros(3, 3, dtype=lib.float64)),
                 lambda lib: lib.linalg.inv(lib.ones(2, 3)),
                 lambda lib: lib.linalg.det(lib.ones(3, dtype=lib.float64)),
                 lambda lib: lib.linalg.cholesky(-lib.eye(3, dtype=lib.float64)),
                 lambda lib: lib.linalg.solve(lib.zeros(2, 2, dtype=lib.float64),
                                              lib.ones(2, dtype=lib.float64)),
                 lambda lib: lib.linalg.qr(lib.ones(3, 2, dtype=lib.float64, requires_grad=True),
                                           mode="r")[1].sum().backward()):
        messages = []
        for lib in (gt, torch):
            with pytest.raises(RuntimeError) as e:
                call(lib)
            messages.append(str(e.value).split("\n")[0])
        assert messages[0] == messages[1]


@pytest.mark.parametrize("call, error, message", LINALG_SOLVER_ERRORS)
def test_linalg_solver_and_power_errors_match_torch(call, error, message):
    """The same exception type (LinAlgError's name included) and message as torch's."""
    results = []
    for fn in (call, as_torch(call)):
        with warnings.catch_warnings(), pytest.raises(Exception) as e:
            warnings.simplefilter("ignore", UserWarning)
            fn()
        results.append((type(e.value).__name__, str(e.value).split("\n")[0]))
    assert results[0] == results[1]


def test_linalg_error_is_torchs():
    assert gt.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    assert gt.linalg.LinAlgError.__mro__[1:] == torch.linalg.LinAlgError.__mro__[1:]


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, "fro", "nuc", float("inf")])
def test_linalg_cond_backward_works_or_fails_as_torchs(p):
    """torch's cond for p = +-1, +-inf, 'fro' writes into linalg.inv's saved result in place
    (the inverse of a singular matrix set to inf), so its backward fails; the engine's does
    the same. Through the singular values (None, +-2, 'nuc') it works, with torch's values."""
    a = np.arange(9.0).reshape(3, 3) ** 2 % 7
    outcomes = []
    for lib in (gt, torch):
        x = lib.tensor(a, requires_grad=True)
        try:
            g, = lib.autograd.grad(lib.linalg.cond(x, p), x)
            outcomes.append(g.numpy())
        except RuntimeError as e:
            outcomes.append(str(e).split("[")[0])
    if isinstance(outcomes[1], str):
        assert outcomes[0] == outcomes[1]
    else:
        np.testing.assert_allclose(outcomes[0], outcomes[1], rtol=1e-10)


# programs whose results (values, dtypes, strides, named tuples' fields) are compared
def _complex_matrix(lib, *shape, dtype=None):
    """A complex matrix (batch) of full rank, lib's: k^2 mod 7 + i cos(k) for its entries k."""
    k = lib.arange(float(np.prod(shape)), dtype=dtype or lib.float64).reshape(shape)
    return lib.complex(k ** 2 % 7, k.cos())


LINALG_SOLVER_PROGRAMS = {
    "integer_power": lambda: gt.linalg.matrix_power(gt.tensor([[1, 1], [1, 0]]), 10),
    "zeroth_power": lambda: gt.matrix_power(gt.arange(8.0).reshape(2, 2, 2), 0),
    "batched_power": lambda: gt.arange(8.0).reshape(2, 2, 2).matrix_power(3),
    "zero_diagonal": lambda: gt.linalg.solve_triangular(gt.zeros(2, 2), gt.ones(2, 1),
                                                        upper=True),
    "dtype_of_A": lambda: (gt.linalg.solve_triangular(
        gt.eye(2) * 2, gt.ones(2, 1, dtype=gt.float64), upper=True),
        gt.linalg.solve_triangular(gt.eye(2, dtype=gt.float64) * 2, gt.ones(2, 1), upper=True)),
    "right_layout": lambda: gt.linalg.solve_triangular(
        gt.eye(3, dtype=gt.float64) * 2, gt.ones(2, 3, dtype=gt.float64), upper=False,
        left=False),
    "triangular_solve": lambda: gt.triangular_solve(
        gt.ones(2, 1, dtype=gt.float64), gt.tensor([[2.0, 1.0], [5.0, 4.0]],
                                                   dtype=gt.float64), transpose=True),
    "triangular_solve_fields": lambda: (lambda r: (r.cloned_coefficient, r.solution))(
        gt.triangular_solve(gt.ones(2, 3), gt.tensor([[2.0, 1.0], [5.0, 4.0]]), upper=False)),
    "cholesky_solve_broadcast": lambda: gt.cholesky_solve(
        gt.ones(3, 2, 1), gt.tensor([[2.0, 7.0], [1.0, 3.0]])),
    "cholesky_inverse": lambda: gt.cholesky_inverse(gt.tensor([[2.0, 7.0], [1.0, 3.0]])),
    "cholesky_inverse_upper": lambda: gt.cholesky_inverse(
        gt.tensor([[2.0, 1.0], [7.0, 3.0]]), upper=True),
    "multi_dot_vectors": lambda: gt.linalg.multi_dot([gt.ones(3), gt.ones(3)]),
    "inverse_layout": lambda: gt.linalg.inv(gt.eye(3).expand(2, 3, 3) * 2),
    **{f"lstsq_{driver}": (lambda driver: lambda: gt.linalg.lstsq(
        (gt.arange(24.0) ** 2 % 7).reshape(2, 4, 3).double(),
        gt.arange(16.0).reshape(2, 4, 2).cos().double(),
        driver=driver))(driver) for driver in (None, "gels", "gelsd", "gelss")},
    "lstsq_rank_deficient": lambda: gt.linalg.lstsq(gt.ones(2, 4, 3, dtype=gt.float64),
                                                    gt.ones(2, 4, 1, dtype=gt.float64),
                                                    driver="gelsd"),
    "lstsq_wide_vector": lambda: gt.linalg.lstsq(gt.arange(8.0).reshape(2, 4).sin(),
                                                 gt.tensor([1.0, 2.0])),
    "pinv_tolerances": lambda: tuple(gt.linalg.pinv(
        gt.diag(gt.tensor([2.0, 1e-20, 4.0, 1e-3], dtype=gt.float64)), **kw)
        for kw in ({}, {"atol": 3.0}, {"rtol": 1e-2}, {"hermitian": True})),
    "matrix_rank": lambda: tuple(gt.linalg.matrix_rank(
        gt.diag(gt.tensor([1.0, 1e-3, 1e-9])), **kw)
        for kw in ({}, {"rtol": 1e-5}, {"atol": 1e-2}, {"hermitian": True})),
    "matrix_exp": lambda: gt.linalg.matrix_exp(
        gt.arange(18.0, dtype=gt.float64).reshape(2, 3, 3).cos() * 3),
    "vander_int": lambda: gt.linalg.vander(gt.tensor([1, 2, 3]), N=4),
    # (each eigenvector's phase is LAPACK's choice, its sign differs between builds: |V|)
    "eig": lambda: (lambda L, V: (L, V.abs()))(*gt.linalg.eig(
        (gt.arange(18.0, dtype=gt.float64) ** 2 % 7).reshape(2, 3, 3))),
    "eigvals_float32": lambda: gt.linalg.eigvals(gt.tensor([[0.0, -1.0], [1.0, 0.0]])),
    # lu_solve's results (column-major when left, row-major when not), B's batch broadcast
    **{f"lu_solve_{left}_{adjoint}": (lambda left, adjoint: lambda: gt.linalg.lu_solve(
        *gt.linalg.lu_factor((gt.arange(18.0, dtype=gt.float64) ** 2 % 7).reshape(2, 3, 3)),
        gt.arange(24.0, dtype=gt.float64).reshape((4, 1, 3, 2) if left else (4, 1, 2, 3)).cos(),
        left=left, adjoint=adjoint))(left, adjoint)
       for left in (True, False) for adjoint in (True, False)},
    "lu_solve_deprecated": lambda: gt.lu_solve(gt.ones(3, 1), *gt.linalg.lu_factor(
        gt.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]]))),
    "geqrf": lambda: tuple(gt.geqrf((gt.arange(24.0, dtype=gt.float64) ** 2 % 7).reshape(
        2, 4, 3))),
    "geqrf_wide_float32": lambda: tuple(gt.geqrf(gt.arange(8.0).reshape(2, 4).cos())),
    "geqrf_zero_column": lambda: tuple(gt.geqrf(gt.tensor([[1.0, 2.0], [0.0, 3.0], [0.0, 4.0]]))),
    "householder_product": lambda: gt.linalg.householder_product(
        *gt.geqrf((gt.arange(24.0, dtype=gt.float64) ** 2 % 7).reshape(2, 4, 3))),
    "orgqr_float32": lambda: gt.orgqr(gt.arange(12.0).reshape(4, 3).sin(), gt.ones(2)),
    "ormqr_batch": lambda: tuple(gt.ormqr(*gt.geqrf((gt.arange(24.0, dtype=gt.float64) ** 2 % 7)
                                                    .reshape(2, 4, 3)),
                                          gt.arange(16.0, dtype=gt.float64).reshape(2, 4, 2)
                                          .cos(), transpose=transpose)
                                 for transpose in (False, True)),
    "ormqr_method_right": lambda: gt.arange(12.0, dtype=gt.float64).reshape(4, 3).sin().ormqr(
        gt.ones(3, dtype=gt.float64), gt.arange(8.0, dtype=gt.float64).reshape(2, 4).cos(),
        left=False),
    # complex matrices: LAPACK's zgeqrf / zungqr / zunmqr (op(Q) is Q^H), zgetrf's pivots on
    # |Re| + |Im|, linalg.lu's three factors (row-major)
    "geqrf_complex": lambda: tuple(gt.geqrf(_complex_matrix(gt, 2, 4, 3))),
    "geqrf_complex_real_first_column": lambda: tuple(gt.geqrf(gt.tensor(
        [[1 + 0j, 2j, 3], [0, 1 - 1j, 2], [0, 0.5, 1j]]))),
    "householder_product_complex": lambda: gt.linalg.householder_product(
        *gt.geqrf(_complex_matrix(gt, 4, 3))),
    "ormqr_complex": lambda: tuple(gt.ormqr(*gt.geqrf(_complex_matrix(gt, 4, 3)),
                                            _complex_matrix(gt, 4, 2).cos(), left=True,
                                            transpose=transpose) for transpose in (False, True)),
    "ormqr_complex_right": lambda: tuple(gt.ormqr(
        *gt.geqrf(_complex_matrix(gt, 3, 3)), _complex_matrix(gt, 2, 3).sin(), left=False,
        transpose=transpose)
        for transpose in (False, True)),
    "lu_complex": lambda: tuple(gt.linalg.lu(_complex_matrix(gt, 2, 3, 5))),
    "lu_tall_float32": lambda: tuple(gt.linalg.lu(gt.arange(8.0).reshape(4, 2).cos())),
    **{f"lu_solve_complex_{left}_{adjoint}": (lambda left, adjoint: lambda: gt.linalg.lu_solve(
        *gt.linalg.lu_factor(_complex_matrix(gt, 3, 3)),
        _complex_matrix(gt, *((3, 2) if left else (2, 3))).cos(), left=left,
        adjoint=adjoint))(left, adjoint)
       for left in (True, False) for adjoint in (True, False)},
    "lu_factor_layout": lambda: tuple(gt.linalg.lu_factor(gt.arange(12.0).reshape(
        2, 2, 3).cos())),
    "ldl_factor_ex": lambda: tuple(gt.linalg.ldl_factor_ex(gt.tensor(
        [[[1e-3, 2.0, 0.5], [2.0, 1e-3, 1.0], [0.5, 1.0, 3.0]],
         [[4.0, 1.0, 2.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]], dtype=gt.float64))),
    "ldl_factor_float32": lambda: tuple(gt.linalg.ldl_factor(
        (gt.arange(16.0).reshape(4, 4) ** 2 % 5).cos() + (gt.arange(16.0).reshape(4, 4) ** 2
                                                          % 5).cos().mT)),
    # (B's batch the same as LD's: torch 2.13's CPU ldl_solve crashes the process when B's
    # batch broadcasts)
    "ldl_solve": lambda: gt.linalg.ldl_solve(*gt.linalg.ldl_factor(gt.tensor(
        [[[1e-3, 2.0, 0.5], [2.0, 1e-3, 1.0], [0.5, 1.0, 3.0]],
         [[4.0, 1.0, 2.0], [1.0, -1.0, 0.0], [2.0, 0.0, 0.5]]], dtype=gt.float64)),
        gt.arange(12.0, dtype=gt.float64).reshape(2, 3, 2).cos()),
    # a zero on U's diagonal: inf and nan, no error (LAPACK's getrs)
    "lu_solve_singular": lambda: gt.linalg.lu_solve(*gt.linalg.lu_factor_ex(gt.ones(3, 3))[:2],
                                                    gt.ones(3, 1)),
    "cond_singular": lambda: tuple(gt.linalg.cond(gt.eye(2) * gt.tensor([1.0, 0.0]), p)
                                   for p in (None, 2, -2, 1, -1, "fro", "nuc", float("inf"))),
    "cond_batch": lambda: tuple(gt.linalg.cond((gt.arange(18.0) ** 2 % 7).reshape(2, 3, 3), p)
                                for p in (None, -2, -1, "nuc", -float("inf"))),
}


def _matrix_layout(t):
    """Whether contiguous, and the strides where every size is above 1 (the engine's strides
    are numpy's, canonical along a size-1 dim, where torch's LAPACK results keep theirs)."""
    return t.is_contiguous(), (t.stride() if min(t.shape, default=2) > 1 else None)


@pytest.mark.parametrize("name", LINALG_SOLVER_PROGRAMS)
def test_linalg_solver_and_power_results_match_torch(name):
    program = LINALG_SOLVER_PROGRAMS[name]
    results = []
    for fn in (program, as_torch(program)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = fn()
        outs = out if isinstance(out, tuple) else (out,)
        results.append((type(out).__name__,
                        [(str(o.dtype), tuple(o.shape), _matrix_layout(o),
                          np.asarray(o.tolist())) for o in outs]))
    (mine_type, mine), (theirs_type, theirs) = results
    assert mine_type == theirs_type
    for (d1, s1, st1, v1), (d2, s2, st2, v2) in zip(mine, theirs):
        assert (d1.split(".")[-1], s1, st1) == (d2.split(".")[-1], s2, st2)
        np.testing.assert_allclose(v1, v2, rtol=1e-6, atol=1e-12, equal_nan=True)


# ------------------------------ functions without a gradient ------------------------------
def test_nonzero_multinomial_and_scatter_reduce_match_torch():
    """nonzero's indices, multinomial's shapes, dtypes, supports and refusals, and
    scatter(reduce=)'s values (its draws differ: another generator)."""
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    for lib_x in (gt.tensor(x), torch.tensor(x)):
        assert lib_x.nonzero().tolist() == [[0, 1], [1, 0], [1, 2]]
        assert [t.tolist() for t in lib_x.nonzero(as_tuple=True)] == [[0, 1, 1], [1, 0, 2]]
    weights = np.array([[0.0, 3.0, 1.0], [1.0, 0.0, 0.0]])
    for lib in (gt, torch):
        draws = lib.multinomial(lib.tensor(weights), 6, replacement=True)
        assert draws.dtype == lib.int64 and tuple(draws.shape) == (2, 6)
        assert set(draws[0].tolist()) <= {1, 2} and set(draws[1].tolist()) == {0}
        assert sorted(lib.multinomial(lib.tensor(weights[0]), 2).tolist()) == [1, 2]
        assert lib.multinomial(lib.tensor(weights), 2)[1, 0].item() == 0  # then a zero weight
        with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
            lib.multinomial(lib.tensor(weights) * 0, 2)
        with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
            lib.multinomial(lib.tensor(weights), 4)
    index = np.array([[0, 0, 2], [1, 1, 1]])
    src = np.arange(6.0).reshape(2, 3) + 1
    for reduce in ("add", "multiply"):
        got = [lib.tensor(x).scatter(1, lib.tensor(index), lib.tensor(src), reduce=reduce).numpy()
               for lib in (gt, torch)]
        np.testing.assert_array_equal(*got)


# deprecated functions, each called as torch.X and Tensor.X: (setup, the two calls)
DEPRECATED_LINALG = {
    "lu_solve": ("LU, pivots = gt.linalg.lu_factor(gt.eye(2) * 2)",
                 "gt.lu_solve(gt.ones(2, 1), LU, pivots)", "gt.ones(2, 1).lu_solve(LU, pivots)"),
    "cholesky": ("A = gt.eye(2) * 4", "gt.cholesky(A)", "A.cholesky(upper=True)"),
}


@pytest.mark.parametrize("name", DEPRECATED_LINALG)
def test_deprecated_linalg_functions_warn_in_torchs_words(name):
    """torch.lu_solve and torch.cholesky (and their methods) warn as torch's, naming the
    linalg function that replaces them (torch's C++ warns once per process: asked in a fresh
    one)."""
    setup, *calls = DEPRECATED_LINALG[name]
    program = (f"import warnings, torch as gt\nwarnings.simplefilter('always')\n{setup}\n"
               f"with warnings.catch_warnings(record=True) as caught:\n    {calls[0]}\n"
               f"print(str(caught[0].message).split(' (Triggered internally')[0])")
    theirs = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            check=True, timeout=120).stdout.rstrip("\n")
    scope = {"gt": gt}
    exec(setup, scope)
    for call in calls:
        with pytest.warns(UserWarning) as caught:
            eval(call, scope)
        assert [str(w.message) for w in caught] == [theirs]


@settings(max_examples=120, deadline=None, derandomize=True)
@given(n=st.integers(1, 6), seed=st.integers(0, 2 ** 16), small_diagonal=st.booleans(),
       zero_row=st.booleans(), kind=st.sampled_from(["real", "symmetric", "hermitian"]))
def test_ldl_factor_pivots_as_torchs(n, seed, small_diagonal, zero_row, kind):
    """Bunch-Kaufman's choices (1x1 or 2x2 blocks, which row swapped in) are LAPACK's, so the
    pivots are torch's exactly and LD and info too, singular matrices included; complex
    matrices symmetric (zsytrf) or hermitian (zhetrf, hermitian=True); and ldl_solve's
    solutions."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if kind != "real"
                                       else 0)
    a = a + (a.conj().T if kind == "hermitian" else a.T)
    if small_diagonal:  # (2x2 blocks)
        a[np.diag_indices(n)] *= 1e-3
    if zero_row:
        a[n // 2], a[:, n // 2] = 0, 0
    hermitian = kind == "hermitian"
    mine = gt.linalg.ldl_factor_ex(gt.tensor(a), hermitian=hermitian)
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    assert mine.pivots.tolist() == theirs.pivots.tolist()
    assert mine.info.item() == theirs.info.item()
    np.testing.assert_allclose(mine.LD.numpy(), theirs.LD.numpy(), rtol=1e-10, atol=1e-12)
    if theirs.info.item() == 0:
        b = rng.standard_normal((n, 2)) + (1j * rng.standard_normal((n, 2)) if kind != "real"
                                           else 0)
        solutions = [lib.linalg.ldl_solve(*factors[:2], lib.tensor(b), hermitian=hermitian)
                     for lib, factors in ((gt, mine), (torch, theirs))]
        np.testing.assert_allclose(solutions[0].numpy(), solutions[1].numpy(), rtol=1e-8,
                                   atol=1e-10)


def test_ldl_factor_of_a_singular_matrix_raises_torchs_error():
    """torch's CPU build words a zero pivot as an internal assert around LAPACK's code: the
    engine raises the same RuntimeError, its message without the assert's preamble."""
    messages = []
    for lib in (gt, torch):
        with pytest.raises(RuntimeError) as e:
            lib.linalg.ldl_factor(lib.stack([lib.eye(3), lib.zeros(3, 3)]))
        messages.append(str(e.value).split("\n")[0])
    assert messages[1].endswith(" " + messages[0]), messages


@pytest.mark.parametrize("center", [True, False])
def test_lowrank_singular_values_and_gradients_are_torchs(center):
    """svd_lowrank and pca_lowrank of a rank-2 matrix (their random projection aside, exact):
    the two singular values, their gradients, the nodes they record."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))
    results = []
    for lib in (gt, torch):
        A = lib.tensor(a, requires_grad=True)
        S = lib.pca_lowrank(A, q=3, center=center)[1] if center else lib.svd_lowrank(
            A.mT, q=3)[1]
        grad, = lib.autograd.grad(S[:2].sum(), A)
        results.append((S[:2].detach().numpy(), grad.numpy(), S.grad_fn.name()))
    (s1, g1, n1), (s2, g2, n2) = results
    np.testing.assert_allclose(s1, s2, rtol=1e-12)
    # (each library's random projection is its own draw: a gradient entry near zero comes
    # out ~1e-10 apart, so the absolute tolerance is set at the gradients' scale, ~1)
    np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-9)
    assert n1 == n2


@pytest.mark.parametrize("case", [c for c in CASES if sweep.differentiable_once(c)],
                         ids=[c.id for c in CASES if sweep.differentiable_once(c)])
def test_second_order_of_a_row_differentiable_once_is_refused_as_torch(case):
    """The gradient is recorded, and differentiating it raises torch's error (type, words)."""
    gt_inputs, torch_inputs = build_both(case, np.random.default_rng(11))
    refusals = []
    for lib, fn, inputs in ((gt, case.fn, gt_inputs),
                            (torch, TORCH_EQUIVALENTS.get(case.id) or as_torch(case.fn),
                             torch_inputs)):
        out = [o for o in (lambda r: r if isinstance(r, (tuple, list)) else (r,))(fn(*inputs))
               if o.dtype.is_floating_point][0]
        diff = [x for x in inputs if isinstance(x, lib.Tensor) and x.requires_grad]
        grads = lib.autograd.grad((out * out).sum(), diff, create_graph=True)
        with pytest.raises(RuntimeError) as info:
            grads[0].pow(2).sum().backward()
        refusals.append((type(info.value).__name__, str(info.value)))
    assert refusals[0] == refusals[1]
