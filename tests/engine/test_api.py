"""The API real code uses beyond the op sweep: the CPU-only device API, new_* factories,
legacy Variable, post-accumulate-grad hooks, save_on_cpu, the profiler's table, the loss
modules as torch's single nodes, nn's activation and container modules, and the errors of
the new ops. Their gradients are swept in tests/engine/test_op_gradients.py; their comparisons
with torch itself are in tests/parity (test_einsum.py, test_losses.py, test_dtypes.py,
test_torch_names.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradtool.engine import nn
from gradtool.engine.errors import NotInEngineError
from gradtool.engine.nn import functional as F
from gradcheck_util import check_grads


def f64(*shape, seed=0, requires_grad=True):
    data = np.random.default_rng(seed).standard_normal(shape)
    return gt.tensor(data, requires_grad=requires_grad)


# ---------------------------------- devices ----------------------------------
def test_the_cpu_is_accepted_wherever_torch_takes_a_device():
    cpu = gt.device("cpu")
    for where in ("cpu", cpu, None):
        assert gt.zeros(2, device=where).device == cpu
        assert gt.tensor([1.0], device=where).device == cpu
    for factory in (lambda d: gt.ones(2, 3, device=d), lambda d: gt.full((2,), 1.0, device=d),
                    lambda d: gt.arange(3, device=d), lambda d: gt.randn(2, device=d),
                    lambda d: gt.eye(2, device=d), lambda d: gt.zeros_like(gt.ones(2), device=d),
                    lambda d: gt.linspace(0, 1, 3, device=d), lambda d: gt.rand(2, device=d),
                    lambda d: gt.randint(3, (2,), device=d), lambda d: gt.empty(2, device=d),
                    lambda d: gt.as_tensor([1.0], device=d)):
        assert factory("cpu").device == cpu
    x = gt.ones(2, requires_grad=True)
    assert x.to("cpu") is x and x.cpu() is x and x.to(cpu) is x
    assert x.to("cpu", gt.float64).dtype == gt.float64
    assert x.to(device="cpu", dtype=gt.float64).dtype == gt.float64
    assert x.to(dtype=gt.float64).grad_fn.name() == "ToCopyBackward0"
    assert x.to(gt.zeros(1, dtype=gt.float64)).dtype == gt.float64
    assert x.to("cpu", copy=True) is not x
    assert not x.is_cuda and x.is_cpu
    model = nn.Linear(2, 2, device="cpu").to(cpu)
    assert model.to(cpu, gt.float64).weight.dtype == gt.float64
    gt.set_default_device("cpu")
    with gt.device("cpu"):
        assert gt.get_default_device() == cpu


def test_device_agnostic_code_takes_its_cpu_path():
    assert gt.cuda.is_available() is False and gt.cuda.device_count() == 0
    assert gt.backends.mps.is_available() is False
    device = gt.device("cuda" if gt.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU()).to(device)
    out = model(gt.randn(4, 3, device=device))
    assert out.device == device and out.shape == (4, 2)


@pytest.mark.parametrize("use", [
    lambda: gt.zeros(2, device="cuda"), lambda: gt.tensor([1.0], device="cuda:0"),
    lambda: gt.ones(2).to("cuda"), lambda: gt.ones(2).to(gt.device("mps")),
    lambda: gt.ones(2).cuda(), lambda: nn.Linear(2, 2).cuda(),
    lambda: nn.Linear(2, 2).to("cuda"), lambda: nn.Linear(2, 2, device="cuda"),
    lambda: gt.ones(2).new_zeros(3, device="cuda"), lambda: gt.set_default_device("cuda"),
    lambda: gt.device("cuda").__enter__()],
    ids=["factory", "tensor", "to", "to_device", "Tensor.cuda", "Module.cuda", "Module.to",
         "Linear", "new_zeros", "set_default_device", "with_device"])
def test_any_other_device_is_a_clear_error(use):
    with pytest.raises(RuntimeError, match="gradtool runs on the CPU only: device '(cuda|mps)"):
        use()


def test_device_objects_behave_as_torchs():
    assert repr(gt.device("cpu")) == "device(type='cpu')" and str(gt.device("cpu")) == "cpu"
    d = gt.device("cuda:1")  # naming a device is not using it
    assert (d.type, d.index, str(d)) == ("cuda", 1, "cuda:1")
    assert gt.device("cuda", 1) == d and gt.device(d) == d and gt.device("cpu") != d
    assert gt.ones(1).device == gt.device("cpu") and str(gt.ones(1).device) == "cpu"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda.*device string: gpu"):
        gt.device("gpu")


# ---------------------------------- new tensors ----------------------------------
def test_new_factories_take_selfs_dtype_and_never_join_the_graph():
    x = gt.ones(2, dtype=gt.float64, requires_grad=True) * 2
    assert x.new_zeros(2, 3).tolist() == [[0.0] * 3] * 2 and x.new_zeros(2).dtype == gt.float64
    assert x.new_ones((2,)).tolist() == [1.0, 1.0] and not x.new_ones(2).requires_grad
    assert x.new_tensor([1, 2]).dtype == gt.float64  # self's dtype, not the data's
    assert x.new_full((2,), 3.0).tolist() == [3.0, 3.0] and x.new_empty(4).shape == (4,)
    assert x.new_zeros(2, dtype=gt.int64).dtype == gt.int64
    assert x.new_ones(2, requires_grad=True).is_leaf


# ---------------------------------- legacy and hooks ----------------------------------
def test_variable_is_a_tensor_detached_with_the_requires_grad_asked():
    from gradtool.engine.autograd import Variable
    x = gt.ones(2, requires_grad=True)
    v = Variable(x)
    assert isinstance(v, gt.Tensor) and isinstance(x, Variable) and not isinstance(3, Variable)
    assert v is not x and not v.requires_grad
    w = Variable(gt.ones(2), requires_grad=True)
    assert w.requires_grad and w.is_leaf
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    x = gt.ones(3, requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x,
                                                                         t.grad.tolist())))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert seen == [(True, [2.0] * 3), (True, [5.0] * 3)]
    handle.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2
    gt.autograd.grad((x * 2).sum(), x)  # autograd.grad accumulates nothing: no hook
    assert len(seen) == 2


def test_post_accumulate_grad_hook_refuses_non_leaves_and_constants():
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        (gt.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        gt.ones(2).register_post_accumulate_grad_hook(print)


def test_save_on_cpu_keeps_saved_values_and_gradients():
    x = f64(3)
    with gt.autograd.graph.save_on_cpu(pin_memory=True):
        y = (x * x).sin().sum()
    y.backward()
    np.testing.assert_allclose(x.grad._data, np.cos(x._data ** 2) * 2 * x._data)


def test_is_inference_as_a_function():
    with gt.inference_mode():
        t = gt.ones(2)
    assert gt.is_inference(t) and not gt.is_inference(gt.ones(2))


# ---------------------------------- the profiler ----------------------------------
@pytest.mark.parametrize("sort_by", ["self_cpu_time_total", "cpu_time_total", "cpu_time",
                                     "count", "self_cuda_time_total", "cpu_memory_usage"])
def test_profiler_table_sorts_by_torchs_keys(sort_by):
    x = gt.randn(50, 50, requires_grad=True)
    with gt.autograd.profiler.profile() as prof:
        for _ in range(3):
            (x * 2).sin().sum().backward()
        x.exp()
    events = prof.key_averages()
    table = events.table(sort_by=sort_by, row_limit=4)  # the intro tutorial's line
    assert "Self CPU %" in table and "# of Calls" in table and "Self CPU time total" in table
    names = [line.split()[0] for line in table.splitlines()[3:7]]
    by_key = {e.key: e for e in events}
    values = [getattr(by_key[n], sort_by) for n in names]
    assert len(names) == 4 and values == sorted(values, reverse=True)
    assert all(0 < e.self_cpu_time_total <= e.cpu_time_total for e in events)


def test_profiler_table_names_the_sort_keys_for_an_unknown_one():
    with gt.autograd.profiler.profile() as prof:
        gt.ones(2).exp()
    with pytest.raises(AttributeError, match="sort_by is one of .*self_cpu_time_total"):
        prof.key_averages().table(sort_by="fastest")


# ---------------------------------- losses as single nodes ----------------------------------
LABELS = gt.tensor([0, 3, 2, 1, 2])


@pytest.mark.parametrize("loss, node, inputs", [
    (F.mse_loss, "MseLossBackward0", "pair"),
    (nn.MSELoss(reduction="sum"), "MseLossBackward0", "pair"),
    (F.smooth_l1_loss, "SmoothL1LossBackward0", "pair"),
    (nn.SmoothL1Loss(beta=0.5), "SmoothL1LossBackward0", "pair"),
    (nn.HuberLoss(), "HuberLossBackward0", "pair"),
    (F.l1_loss, "MeanBackward0", "pair"),  # torch composes it: sub, abs, mean
    (F.binary_cross_entropy, "BinaryCrossEntropyBackward0", "probabilities"),
    (nn.BCELoss(), "BinaryCrossEntropyBackward0", "probabilities"),
    (F.binary_cross_entropy_with_logits, "BinaryCrossEntropyWithLogitsBackward0", "pair"),
    (nn.BCEWithLogitsLoss(), "BinaryCrossEntropyWithLogitsBackward0", "pair"),
    (F.nll_loss, "NllLossBackward0", "labels"),
    (nn.NLLLoss(), "NllLossBackward0", "labels"),
    (F.cross_entropy, "NllLossBackward0", "labels"),
    (nn.CrossEntropyLoss(), "NllLossBackward0", "labels")],
    ids=lambda v: v if isinstance(v, str) else getattr(v, "__name__", type(v).__name__))
def test_losses_are_single_nodes_with_torchs_names(loss, node, inputs):
    x = f64(5, 4)
    target = {"pair": f64(5, 4, seed=1, requires_grad=False),
              "probabilities": gt.tensor(np.random.default_rng(1).random((5, 4))),
              "labels": LABELS}[inputs]
    if inputs == "probabilities":
        x = gt.tensor(np.random.default_rng(2).uniform(0.1, 0.9, (5, 4)), requires_grad=True)
    out = loss(x, target)
    assert out.grad_fn.name() == node
    if node == "NllLossBackward0" and loss in (F.cross_entropy,) or isinstance(
            loss, nn.CrossEntropyLoss):
        assert out.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    check_grads(lambda x: loss(x, target), [x], order=2)


def test_loss_nodes_save_torchs_values():
    x, t = f64(3, 4), f64(3, 4, seed=1, requires_grad=False)
    node = F.mse_loss(x, t, reduction="sum").grad_fn
    assert node._saved_reduction == 2 and node._saved_target is not None
    node = F.nll_loss(x.log_softmax(1), gt.tensor([0, 3, 1]), ignore_index=1).grad_fn
    assert node._saved_ignore_index == 1 and node._saved_reduction == 1
    assert node._saved_total_weight.item() == 2.0 and node._saved_weight is None
    node = F.layer_norm(x, (4,)).grad_fn
    assert node.name() == "NativeLayerNormBackward0" and node._saved_normalized_shape == (4,)
    assert node._saved_result1.shape == (3, 1) and node._saved_result2.shape == (3, 1)


def test_legacy_size_average_and_reduce_pick_the_reduction():
    x, t = f64(3, 4), f64(3, 4, seed=1, requires_grad=False)
    expected = ((x._data - t._data) ** 2)
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert F.mse_loss(x, t, size_average=False).item() == pytest.approx(expected.sum())
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert F.mse_loss(x, t, reduce=False).shape == (3, 4)
    with pytest.warns(UserWarning, match="please use reduction='mean' instead"):
        l1 = nn.L1Loss(size_average=True)
    assert l1(x, t).item() == pytest.approx(np.abs(x._data - t._data).mean())


def test_nll_loss_with_every_target_ignored_is_nan_with_zero_gradient():
    x = f64(3, 4)
    out = F.nll_loss(x, gt.tensor([1, 1, 1]), ignore_index=1)
    out.backward()
    assert np.isnan(out.item()) and x.grad.tolist() == [[0.0] * 4] * 3


def test_nll_loss_of_many_dims_is_viewed_as_2d_as_torch():
    x = f64(2, 3, 2, 2, 2)
    t = gt.tensor(np.random.default_rng(3).integers(0, 3, (2, 2, 2, 2)))
    out = F.nll_loss(x, t, reduction="none")
    assert out.shape == (2, 2, 2, 2) and out.grad_fn.name() == "ViewBackward0"
    picked = np.take_along_axis(x._data, t._data[:, None], 1)[:, 0]
    np.testing.assert_allclose(out._data, -picked)
    check_grads(lambda x: F.nll_loss(x, t), [x], order=2)


def test_loss_argument_errors_are_torchs():
    p, t = gt.tensor([0.5, 1.5]), gt.tensor([1.0, 0.0])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(p, t)
    # torch checks element by element, the input then the target; NaN is outside [0, 1]
    for p, t, which in (([0.5, 0.2], [0.5, float("nan")], "target"),
                        ([0.5, float("nan")], [1.5, 0.5], "target"),
                        ([float("nan"), 0.5], [1.5, 0.5], "input")):
        with pytest.raises(RuntimeError, match=f"all elements of {which} should be between"):
            F.binary_cross_entropy(gt.tensor(p), gt.tensor(t))
    with pytest.raises(ValueError, match="Using a target size .* is deprecated"):
        F.binary_cross_entropy(gt.tensor([0.5, 0.5]), gt.tensor([1.0]))
    with pytest.raises(ValueError, match=r"Target size \(.*\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(gt.zeros(2), gt.zeros(3))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4"):
        F.nll_loss(gt.zeros(2, 4), gt.tensor([0, 1]), weight=gt.ones(3))
    with pytest.raises(RuntimeError, match="does not support negative values for beta"):
        F.smooth_l1_loss(gt.zeros(2), gt.zeros(2), beta=-1.0)
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        nn.BCELoss(reduction="bad")


def test_bce_clamps_its_logs_at_minus_100_as_torch():
    out = F.binary_cross_entropy(gt.tensor([0.0, 1.0], dtype=gt.float64),
                                 gt.tensor([1.0, 0.0], dtype=gt.float64), reduction="none")
    assert out.tolist() == [100.0, 100.0]


# ---------------------------------- activations and modules ----------------------------------
def test_activation_modules_apply_their_functions():
    x = f64(3, 4)
    for module, fn in ((nn.GELU(), F.gelu), (nn.GELU("tanh"), lambda x: F.gelu(x, "tanh")),
                       (nn.SiLU(), F.silu), (nn.LeakyReLU(0.1), lambda x: F.leaky_relu(x, 0.1)),
                       (nn.ELU(), F.elu), (nn.Softplus(2.0), lambda x: F.softplus(x, 2.0)),
                       (nn.Softmax(dim=1), lambda x: F.softmax(x, 1)),
                       (nn.LogSoftmax(dim=0), lambda x: F.log_softmax(x, 0))):
        np.testing.assert_array_equal(module(x)._data, fn(x)._data)
        assert module(x).grad_fn.name() == fn(x).grad_fn.name()
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.LeakyReLU(0.2, True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="fast")


def test_flatten_keeps_the_batch_dim():
    x = f64(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12) and nn.Flatten(0, 1)(x).shape == (6, 4)
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"


def test_module_dict_registers_its_modules_by_key():
    d = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.ReLU()})
    d["c"] = nn.Linear(3, 1)
    assert list(d) == ["a", "b", "c"] and len(d) == 3 and "b" in d
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias", "c.weight", "c.bias"]
    assert isinstance(d.pop("b"), nn.ReLU) and list(d.keys()) == ["a", "c"]


@pytest.mark.parametrize("name, value", [("asinh", 1.5), ("acosh", 1.5), ("atanh", 0.5)])
def test_inplace_ops_torch_has_no_derivative_for_raise_torchs_errors(name, value):
    """torch's asinh_/acosh_/atanh_: a node of their own whose backward and forward AD raise
    (messages are torch 2.13's)."""
    from gradtool.engine.autograd import forward_ad
    y = gt.full((2,), value, dtype=gt.float64, requires_grad=True) * 1.0
    getattr(y, name + "_")()
    assert y.grad_fn.name() == name.capitalize() + "Backward1" and y._version == 1
    with pytest.raises(RuntimeError, match=f"the derivative for 'inplace version of {name}' "
                                           "is not implemented."):
        y.sum().backward()
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(gt.full((2,), value, dtype=gt.float64), gt.ones(2))
        with pytest.raises(RuntimeError, match=f"forward AD with {name}_ that does not "
                                               "support it"):
            getattr(dual, name + "_")()


def test_inplace_activations_write_into_their_input():
    y = f64(3) * 1.0
    out = F.leaky_relu(y, 0.1, inplace=True)
    assert out is y and y.grad_fn.name() == "LeakyReluBackward1" and y._version == 1
    z = f64(3) * 1.0
    assert F.elu(z, inplace=True).grad_fn.name() == "EluBackward1"
    w = f64(3) * 1.0
    assert F.silu(w, inplace=True) is w and w.grad_fn.name() == "SiluBackward0"


def test_one_hot_checks_its_indices():
    assert F.one_hot(gt.tensor([0, 2]), 4).tolist() == [[1, 0, 0, 0], [0, 0, 1, 0]]
    with pytest.raises(RuntimeError, match="only applicable to index tensor of type Long"):
        F.one_hot(gt.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
        F.one_hot(gt.tensor([0, 5]), 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative"):
        F.one_hot(gt.tensor([-1, 2]))


# ---------------------------------- the new ops' edges ----------------------------------
def test_sort_and_topk_return_named_values_and_indices():
    x = gt.tensor([[3.0, 1.0, 2.0, 1.0]])
    values, indices = x.sort(1)
    assert values.tolist() == [[1.0, 1.0, 2.0, 3.0]] and indices.tolist() == [[1, 3, 2, 0]]
    assert x.sort(descending=True).indices.tolist() == [[0, 2, 1, 3]]
    assert x.argsort().tolist() == [[1, 3, 2, 0]] and x.argsort().dtype == gt.int64
    top = gt.topk(x, 2)
    assert top.values.tolist() == [[3.0, 2.0]] and top.indices.tolist() == [[0, 2]]
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(5)


def test_transpose_in_place_changes_the_shape_and_bumps_the_version():
    y = f64(2, 3) * 1.0
    assert y.transpose_(0, 1) is y and y.shape == (3, 2) and y._version == 1
    assert y.grad_fn.name() == "TransposeBackward1"
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        f64(2, 3).transpose_(0, 1)
    m = gt.ones(2, 3)
    assert m.t_().shape == (3, 2) and not m.requires_grad


def test_scans_of_integers_are_int64_as_torch():
    assert gt.tensor([1, 2, 3], dtype=gt.int32).cumsum(0).dtype == gt.int64
    assert gt.tensor([1, 2, 3]).cumprod(0).tolist() == [1, 2, 6]


def test_index_ops_check_their_index():
    x = f64(3, 4)
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.index_select(0, gt.tensor([0.0]))
    with pytest.raises(IndexError, match="Number of indices should be equal to source.size"):
        x.index_add(0, gt.tensor([0, 1]), f64(3, 4))


def test_bernoulli_draws_from_the_seeded_generator_with_zero_gradient():
    p = gt.tensor(np.full((1000,), 0.3), requires_grad=True)
    gt.manual_seed(0)
    a = gt.bernoulli(p)
    gt.manual_seed(0)
    assert a.tolist() == p.bernoulli().tolist() and a.grad_fn.name() == "BernoulliBackward0"
    assert 0.2 < a._data.mean() < 0.4 and set(a.tolist()) == {0.0, 1.0}
    a.sum().backward()
    assert not p.grad._data.any()
    assert gt.ones(4).bernoulli_(0.0).tolist() == [0.0] * 4
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
        gt.bernoulli(gt.tensor([1.5]))


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk", ((2, 3), (3, 4))), ("ii->i", ((3, 3),)), ("ii", ((3, 3),)),
    ("i...i->...", ((3, 2, 3),)), ("bij,bjj->bi", ((2, 3, 4), (2, 4, 4))),
    ("iii->i", ((2, 2, 2),)), ("Ab,bc->Ac", ((2, 3), (3, 4)))],
    ids=["implicit", "diagonal", "trace_implicit", "ellipsis_between", "diagonal_of_second",
         "triple", "capital"])
def test_einsum_values_match_numpy_with_diagonals_and_implicit_output(equation, shapes):
    xs = [f64(*s, seed=k) for k, s in enumerate(shapes)]
    np.testing.assert_allclose(gt.einsum(equation, xs)._data,
                               np.einsum(equation, *[x._data for x in xs]))


def test_einsum_diagonal_gradient_is_zero_off_the_diagonal():
    x = f64(3, 3)
    (g,) = gt.autograd.grad(gt.einsum("ii->", x), x)
    np.testing.assert_array_equal(g._data, np.eye(3))
    check_grads(lambda x: gt.einsum("ii->i", x) ** 2, [x], order=2)


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij->i", ((2, 3), (3,)), "more operands were provided"),
    ("ij,jk->ik", ((2, 3),), "fewer operands were provided"),
    ("ii->i", ((2, 3),), "subscript i is repeated for operand 0 but the sizes don't match"),
    ("ij,jk->ik", ((2, 3), (4, 5)), "subscript j has size 4 for operand 1 which does not "
                                    "broadcast with previously seen size 3"),
    ("ij->k", ((2, 3),), "output subscript k does not appear"),
    ("ij->ii", ((2, 3),), "output subscript i appears more than once"),
    ("ijk->i", ((2, 3),), "does not match the number of dimensions"),
    ("i1->i", ((2, 3),), "subscripts must be in \\[a-zA-Z\\]")])
def test_einsum_bad_equations_raise_torchs_errors(equation, shapes, message):
    with pytest.raises(RuntimeError, match=message):
        gt.einsum(equation, *[f64(*s) for s in shapes])


def test_diagonal_is_a_writeable_view_sharing_the_version_counter():
    x = f64(3, 3).clone()
    d = x.diagonal()
    d.mul_(0)
    assert x._version == 1 and np.all(np.diag(x._data) == 0)
    assert x.grad_fn.name() == "CopySlices"
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, -2"):
        f64(2, 3, 4).diagonal(0, 1, -2)


def test_norm_p0_counts_nonzeros_and_gives_no_gradient_as_torch():
    x = gt.tensor([[0.0, 2.0, -1.0], [0.0, 0.0, 3.0]], dtype=gt.float64, requires_grad=True)
    y = x.norm(0, dim=1)
    assert y.tolist() == [2.0, 1.0] and y.grad_fn.name() == "LinalgVectorNormBackward0"
    assert gt.autograd.grad(y.sum(), x, allow_unused=True, retain_graph=True) == (None,)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        gt.autograd.grad(y.sum(), x)
    with gt.autograd.forward_ad.dual_level():
        d = gt.autograd.forward_ad.make_dual(x.detach(), gt.ones_like(x))
        assert gt.autograd.forward_ad.unpack_dual(d.norm(0)).tangent.item() == 0.0


def test_norm_saves_ord_dim_and_keepdim_as_torch():
    x = f64(2, 3)
    node = gt.linalg.vector_norm(x, 3, dim=(0, 1), keepdim=True).grad_fn
    assert (node._saved_ord, node._saved_dim, node._saved_keepdim) == (3, (0, 1), True)
    assert x.norm().grad_fn._saved_ord == 2 and x.norm().grad_fn._saved_dim is None
    assert gt.linalg.norm(x).grad_fn._saved_ord == 2.0
    # a matrix 1-norm is the largest column sum: amax over a vector 1-norm, as torch's
    node = gt.linalg.norm(x, 1).grad_fn
    assert node.name() == "AmaxBackward0"
    assert node.next_functions[0][0].name() == "LinalgVectorNormBackward0"


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.norm("abc"), RuntimeError, "linalg.matrix_norm: Order abc not supported."),
    (lambda x: gt.linalg.norm(x, "fro", dim=1), RuntimeError, "dim must be a 2-tuple. Got 1"),
    (lambda x: gt.linalg.norm(x[None], 1), RuntimeError,
     "If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    (lambda x: gt.linalg.norm(x[0], "fro"), RuntimeError, "must have at least 2 dimensions"),
    (lambda x: gt.linalg.vector_norm(x, "fro"), TypeError, "'ord' .* must be Number, not str"),
    (lambda x: gt.linalg.vector_norm(gt.tensor([3, 4])), RuntimeError,
     "Expected a floating point or complex tensor as input. Got Long")])
def test_norm_bad_orders_and_inputs_raise_torchs_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(f64(2, 3))


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_spectral_matrix_norms_are_the_singular_values(ord):
    """ord 2 / -2 / 'nuc': the largest / smallest singular value / their sum, over svdvals
    (AmaxBackward0, AminBackward0, SumBackward1 over LinalgSvdBackward0, as torch's)."""
    x = f64(3, 4)
    for out in (gt.linalg.matrix_norm(x, ord), gt.linalg.norm(x, ord)) + (
            (x.norm("nuc"),) if ord == "nuc" else ()):
        np.testing.assert_allclose(out.item(), np.linalg.norm(x._data, ord), rtol=1e-12)
        assert out.grad_fn.next_functions[0][0].name() == "LinalgSvdBackward0"
    check_grads(lambda x: gt.linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=True),
                [f64(2, 3, 4)], order=2)


# ---- matrix powers, chains of products, triangular and Cholesky solves ----
def _lu_solve_args(lib, LU_dtype, B_dtype="float64", pivots_dtype="int32", LU_shape=(2, 3, 3),
                   B_shape=(2, 3, 2), pivots_shape=None):
    """lu_solve's arguments, each of the given dtype and shape (lib: gradtool or torch)."""
    pivots_shape = LU_shape[:-1] if pivots_shape is None else pivots_shape
    return (lib.ones(LU_shape, dtype=getattr(lib, LU_dtype)),
            lib.ones(pivots_shape, dtype=getattr(lib, pivots_dtype)),
            lib.ones(B_shape, dtype=getattr(lib, B_dtype)))


LINALG_SOLVER_ERRORS = [
    (lambda: gt.linalg.matrix_power(gt.ones(3), 2), RuntimeError,
     "linalg.matrix_power: The input tensor A must have at least 2 dimensions."),
    (lambda: gt.linalg.matrix_power(gt.ones(2, 3), 2), RuntimeError,
     "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.linalg.matrix_power(gt.ones(2, 2, dtype=gt.int64), -1), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: gt.linalg.matrix_power(gt.ones(2, 2), 2.0), TypeError,
     "linalg_matrix_power(): argument 'n' (position 2) must be int, not float"),
    (lambda: gt.linalg.multi_dot([gt.ones(2, 2)]), RuntimeError,
     "multi_dot(): expected at least 2 tensors but got 1"),
    (lambda: gt.linalg.multi_dot([gt.ones(2, 2, 2), gt.ones(2, 2)]), RuntimeError,
     "multi_dot(): the first tensor must be 1D or 2D but got 3D"),
    (lambda: gt.linalg.multi_dot([gt.ones(2, 2), gt.ones(2, 2, 2)]), RuntimeError,
     "multi_dot(): the last tensor must be 1D or 2D but got 3D"),
    (lambda: gt.linalg.multi_dot([gt.ones(2, 2), gt.ones(2, 2, 2), gt.ones(2, 2)]),
     RuntimeError, "multi_dot(): tensor 1 must be 2D but got 3D"),
    (lambda: gt.linalg.multi_dot([gt.ones(2, 3), gt.ones(4, 2)]), RuntimeError,
     "multi_dot(): tensors 0 and 1 with shapes [2, 3] and [4, 2] cannot be multiplied"),
    (lambda: gt.linalg.multi_dot([gt.ones(3), gt.ones(3, 2), gt.ones(4)]), RuntimeError,
     "multi_dot(): tensors 1 and 2 with shapes [3, 2] and [4] cannot be multiplied"),
    (lambda: gt.linalg.multi_dot([gt.ones(2, 2, dtype=gt.int64), gt.ones(2, 2)]), RuntimeError,
     "multi_dot(): all tensors must have be the same dtype but tensor 0 is long int and "
     "tensor 1 float"),
    (lambda: gt.chain_matmul(), RuntimeError, "chain_matmul(): Expected one or more matrices"),
    (lambda: gt.chain_matmul(gt.ones(3), gt.ones(3, 2)), RuntimeError,
     "Tensor dimension is 1, expected 2 instead."),
    (lambda: gt.linalg.solve_triangular(gt.ones(2, 2), gt.ones(2), upper=True), RuntimeError,
     "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."),
    (lambda: gt.linalg.solve_triangular(gt.ones(2, 3), gt.ones(2, 1), upper=True),
     RuntimeError, "linalg.solve_triangular: A must be batches of square matrices, but they "
                   "are 2 by 3 matrices"),
    (lambda: gt.linalg.solve_triangular(gt.ones(2, 2), gt.ones(3, 1), upper=True),
     RuntimeError, "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                   "AX = B (2x2 and 3x1)"),
    (lambda: gt.linalg.solve_triangular(gt.ones(2, 2), gt.ones(1, 3), upper=True, left=False),
     RuntimeError, "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                   "XA = B (2x2 and 1x3)"),
    (lambda: gt.linalg.solve_triangular(gt.ones(2, 2, dtype=gt.int64),
                                        gt.ones(2, 1, dtype=gt.int64), upper=True),
     NotImplementedError, "\"triangular_solve_cpu\" not implemented for 'Long'"),
    (lambda: gt.linalg.solve_triangular(gt.ones(2, 2), gt.ones(2, 1)), TypeError,
     'linalg_solve_triangular() missing 1 required positional arguments: "upper"'),
    (lambda: gt.linalg.solve_triangular(gt.ones(3, 2, 2), gt.ones(2, 2, 1), upper=True),
     RuntimeError, "must match the size of tensor b"),
    (lambda: gt.triangular_solve(gt.ones(2, 1), gt.ones(2, 3)), RuntimeError,
     "A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.triangular_solve(gt.ones(2), gt.ones(2, 2)), RuntimeError,
     "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has 1 "
     "dimensions instead"),
    (lambda: gt.triangular_solve(gt.ones(3, 1), gt.ones(2, 2)), RuntimeError,
     "Incompatible matrix sizes for triangular_solve: each A matrix is 2 by 2 but each b "
     "matrix is 3 by 1"),
    (lambda: gt.cholesky_solve(gt.ones(2, 1), gt.ones(2, 3)), RuntimeError,
     "A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.cholesky_solve(gt.ones(2), gt.ones(2, 2)), RuntimeError,
     "b should have at least 2 dimensions, but has 1 dimensions instead"),
    (lambda: gt.cholesky_solve(gt.ones(2, 1), gt.ones(2, 2, dtype=gt.float64)), RuntimeError,
     "Expected b and A to have the same dtype, but found b of type Float and A of type Double "
     "instead."),
    (lambda: gt.cholesky_inverse(gt.ones(2, 3)), RuntimeError,
     "cholesky_inverse: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.cholesky_inverse(gt.ones(2)), RuntimeError,
     "cholesky_inverse: The input tensor A must have at least 2 dimensions."),
    (lambda: gt.cholesky_inverse(gt.ones(2, 2, dtype=gt.int64)), NotImplementedError,
     "\"cholesky_inverse_out_cpu\" not implemented for 'Long'"),
    (lambda: gt.linalg.lstsq(gt.ones(4, 3), gt.ones(3, 2)), RuntimeError,
     "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"),
    (lambda: gt.linalg.lstsq(gt.ones(4, 3, dtype=gt.float64), gt.ones(4, 2)), RuntimeError,
     "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
     "dtype Double and other's dtype Float"),
    (lambda: gt.linalg.lstsq(gt.ones(4, 3), gt.ones(4, 2), driver="foo"), RuntimeError,
     "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"),
    (lambda: gt.linalg.pinv(gt.ones(3)), RuntimeError,
     "linalg.pinv(Float{[3]}): expected a tensor with 2 or more dimensions of float, double, "
     "cfloat or cdouble types"),
    (lambda: gt.linalg.pinv(gt.ones(2, 2, dtype=gt.int64)), RuntimeError,
     "linalg.pinv(Long{[2, 2]}): expected a tensor with 2 or more dimensions"),
    (lambda: gt.linalg.matrix_exp(gt.ones(2, 3)), RuntimeError,
     "linalg.matrix_exp: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.linalg.matrix_exp(gt.ones(3)), RuntimeError,
     "linalg.matrix_exp: The input tensor A must have at least 2 dimensions."),
    (lambda: gt.linalg.matrix_exp(gt.ones(2, 2, dtype=gt.int64)), RuntimeError,
     "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: gt.linalg.matrix_rank(gt.ones(2, 2, dtype=gt.int64)), RuntimeError,
     "This function doesn't handle types other than float and double"),
    (lambda: gt.linalg.vander(gt.ones(3), N=1), RuntimeError, "N must be greater than 1."),
    (lambda: gt.linalg.cond(gt.ones(3)), RuntimeError,
     "linalg.cond: The input tensor must have at least 2 dimensions."),
    (lambda: gt.linalg.cond(gt.ones(2, 3), 1), RuntimeError,
     "linalg.cond(ord=1): A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.linalg.cond(gt.ones(2, 3), "fro"), RuntimeError,
     "linalg.cond(ord=fro): A must be batches of square matrices"),
    (lambda: gt.linalg.cond(gt.ones(2, 2), 3), RuntimeError,
     "linalg.cond got an invalid norm type: 3"),
    (lambda: gt.linalg.cond(gt.ones(2, 2, dtype=gt.int64), 1), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: gt.linalg.eig(gt.tensor([[0.0, -1.0], [1.0, 0.0]], requires_grad=True))
     .eigenvectors.real.sum().backward(), RuntimeError,
     "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
     "multiplication by e^{i phi}. The specified loss function depends on this quantity, so it "
     "is ill-defined."),
    *[(lambda args=args, kw=kw: gt.linalg.lu_solve(*_lu_solve_args(gt, *args), **kw),
       RuntimeError,
       message) for args, kw, message in [
        (("int32",), {}, "torch.linalg.lu_solve: Expected a floating point or complex tensor as "
                         "input. Got Int"),
        (("float64", "float32"), {}, "linalg.lu_solve: Expected LU and B to have the same "
                                     "dtype, but found LU of type Double and B of type Float "
                                     "instead"),
        (("float64", "float64", "int64"), {}, "linalg.lu_solve: pivots should be a Tensor of "
                                              "scalar type torch.int32"),
        (("float64", "float64", "int32", (3,)), {}, "torch.linalg.lu_solve: The input tensor A "
                                                    "must have at least 2 dimensions."),
        (("float64", "float64", "int32", (2, 3, 2)), {}, "torch.linalg.lu_solve: A must be "
                                                         "batches of square matrices, but they "
                                                         "are 3 by 2 matrices"),
        (("float64", "float64", "int32", (2, 3, 3), (3,)), {}, "linalg.lu_solve: The input "
                                                               "tensor B must have at least 2 "
                                                               "dimensions."),
        (("float64", "float64", "int32", (2, 3, 3), (2, 4)), {}, "linalg.lu_solve: Incompatible "
                                                                 "shapes of A and B for the "
                                                                 "equation AX = B (3x3 and "
                                                                 "2x4)"),
        (("float64", "float64", "int32", (2, 3, 3), (3, 4)), {"left": False},
         "linalg.lu_solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 3x4)"),
        (("float64", "float64", "int32", (2, 3, 3), (3, 2), (2, 2)), {},
         "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
         "matrix"),
        (("float64", "float64", "int32", (2, 3, 3), (3, 2), (3, 3)), {},
         "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got "
         "pivots with shape [3, 3] instead"),
        (("float64", "float64", "int32", (2, 3, 3), (3, 3, 2)), {},
         "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
         "dimension 0"),
    ]],
    (lambda: gt.linalg.lu_factor(gt.stack([gt.eye(3), gt.ones(3, 3)])), RuntimeError,
     "torch.linalg.lu_factor: (Batch element 1): U[2,2] is zero and using it on lu_solve would "
     "result in a division by zero. If you still want to perform the factorization, consider "
     "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"),
    (lambda: gt.linalg.lu_factor(gt.tensor([[1, 2], [3, 4]])), NotImplementedError,
     "\"lu_cpu\" not implemented for 'Long'"),
    (lambda: gt.linalg.lu_factor(gt.ones(3, 3)), RuntimeError,
     "torch.linalg.lu_factor: U[2,2] is zero and using it on lu_solve would result in a "
     "division by zero. If you still want to perform the factorization, consider calling "
     "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"),
    (lambda: gt.geqrf(gt.ones(3)), RuntimeError, "torch.geqrf: input must have at least 2 "
                                                 "dimensions."),
    (lambda: gt.geqrf(gt.ones(3, 3, dtype=gt.int64)), NotImplementedError,
     "\"geqrf_cpu\" not implemented for 'Long'"),
    (lambda: gt.geqrf(gt.ones(3, 2, requires_grad=True)).a.sum().backward(), NotImplementedError,
     "the derivative for 'geqrf' is not implemented."),
    *[(lambda A=A, tau=tau: gt.linalg.householder_product(
        gt.ones(A[0], dtype=getattr(gt, A[1])), gt.ones(tau[0], dtype=getattr(gt, tau[1]))),
       error, message) for A, tau, error, message in [
        (((4, 3), "float32"), ((2,), "float64"), RuntimeError,
         "torch.linalg.householder_product: tau dtype Double does not match input dtype Float"),
        (((3, 4), "float32"), ((2,), "float32"), RuntimeError, "torch.linalg.householder_product: "
         "input.shape[-2] must be greater than or equal to input.shape[-1]"),
        (((4, 3), "float32"), ((4,), "float32"), RuntimeError, "torch.linalg.householder_product: "
         "input.shape[-1] must be greater than or equal to tau.shape[-1]"),
        (((4, 3), "float32"), ((1, 2), "float32"), RuntimeError,
         "torch.linalg.householder_product: Expected tau to have one dimension less than input, "
         "but got tau.ndim equal to 2 and input.ndim is equal to 2"),
        (((3,), "float32"), ((2,), "float32"), RuntimeError,
         "torch.linalg.householder_product: input must have at least 2 dimensions."),
        (((2, 4, 3), "float32"), ((3, 2), "float32"), RuntimeError,
         "torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
         "input.shape[:-2], but got [3]"),
        (((4, 3), "int32"), ((2,), "int32"), NotImplementedError,
         "\"orgqr_cpu\" not implemented for 'Int'"),
    ]],
    *[(lambda shapes=shapes, dtypes=dtypes, left=left: gt.ormqr(
        *[gt.ones(shape, dtype=getattr(gt, dtype)) for shape, dtype in zip(shapes, dtypes)],
        left=left), error, message) for shapes, dtypes, left, error, message in [
        (((4, 3), (2,), (4, 2)), ("float64",) * 3, True, RuntimeError,
         "torch.ormqr: tau.shape[-1] must be equal to min(other.shape[-2], input.shape[-1])"),
        (((4, 3), (3,), (4, 2)), ("float64", "float64", "float32"), True, RuntimeError,
         "torch.ormqr: Expected input and other to have the same dtype, but input has "
         "dtypeDouble and other has dtype Float"),
        (((4, 3), (3,), (4, 2)), ("float64", "float32", "float64"), True, RuntimeError,
         "torch.ormqr: Expected input and tau to have the same dtype, but input has dtypeDouble "
         "and tau has dtype Float"),
        (((4, 3), (3,), (4, 2)), ("float64",) * 3, False, RuntimeError,
         "torch.ormqr: other.shape[-1] must be equal to input.shape[-2]"),
        (((4, 3), (3,), (3, 2)), ("float64",) * 3, True, RuntimeError,
         "torch.ormqr: other.shape[-2] must be equal to input.shape[-2]"),
        (((4, 3), (3,), (4,)), ("float64",) * 3, True, RuntimeError,
         "torch.ormqr: other must have at least 2 dimensions."),
        (((2, 4, 3), (2, 3), (3, 4, 2)), ("float64",) * 3, True, RuntimeError,
         "torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], but "
         "got [3]"),
        (((4, 3), (3,), (4, 2)), ("int32",) * 3, True, NotImplementedError,
         "\"ormqr_cpu\" not implemented for 'Int'"),
    ]],
    (lambda: gt.cholesky(gt.ones(2, 3)), RuntimeError,
     "cholesky: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.cholesky(-gt.eye(2)), gt.linalg.LinAlgError,
     "cholesky: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 1 is not positive-definite)."),
    (lambda: gt.linalg.ldl_factor(gt.ones(2, 3)), RuntimeError,
     "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 2 by 3 "
     "matrices"),
    (lambda: gt.linalg.ldl_factor_ex(gt.ones(3)), RuntimeError,
     "torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 dimensions."),
    (lambda: gt.linalg.ldl_factor(gt.ones(3, 3, dtype=gt.int64)), RuntimeError,
     "torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got "
     "Long"),
    (lambda: gt.linalg.ldl_factor(gt.eye(3, requires_grad=True)).LD.sum().backward(),
     RuntimeError, "derivative for aten::linalg_ldl_factor_ex is not implemented"),
    *[(lambda LD=LD, pivots=pivots, B=B: gt.linalg.ldl_solve(
        gt.eye(LD[0][-1]).expand(LD[0]).to(getattr(gt, LD[1])),
        gt.ones(pivots[0], dtype=getattr(gt, pivots[1])), gt.ones(
            B[0], dtype=getattr(gt, B[1]), requires_grad=B[1] != "int32")).sum().backward(),
       error, message) for LD, pivots, B, error, message in [
        (((3, 3), "float64"), ((3,), "int32"), ((3, 2), "float32"), RuntimeError,
         "Expected b and A to have the same dtype, but found b of type Float and A of type "
         "Double instead."),
        (((3, 3), "float64"), ((3,), "int32"), ((3,), "float64"), IndexError,
         "Dimension out of range (expected to be in range of [-1, 0], but got -2)"),
        (((3, 3), "float64"), ((2,), "int32"), ((3, 2), "float64"), RuntimeError,
         "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but "
         "got pivots with shape [2] instead"),
        (((3, 3), "float64"), ((3,), "float64"), ((3, 2), "float64"), RuntimeError,
         "torch.linalg.ldl_solve: Expected pivots to be integers. Got Double"),
        (((3, 3), "float64"), ((3,), "int32"), ((4, 2), "float64"), RuntimeError,
         "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 3 by 3 but "
         "each b matrix is 4 by 2"),
        (((3, 3), "int32"), ((3,), "int32"), ((3, 2), "int32"), RuntimeError,
         "torch.linalg.ldl_solve: Expected a floating point or complex tensor as input. Got "
         "Int"),
        (((2, 3, 3), "float64"), ((2, 3), "int32"), ((3, 3, 2), "float64"), RuntimeError,
         "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
         "dimension 0"),
        (((3, 3), "float64"), ((3,), "int64"), ((3, 2), "float64"), RuntimeError,
         "derivative for aten::linalg_ldl_solve is not implemented"),
    ]],
    (lambda: gt.linalg.eig(gt.ones(2, 3)), RuntimeError,
     "linalg.eig: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: gt.linalg.eig(gt.ones(3)), RuntimeError,
     "linalg.eig: The input tensor A must have at least 2 dimensions."),
    (lambda: gt.linalg.eigvals(gt.ones(2, 2, dtype=gt.int64)), RuntimeError,
     "Unknown Complex ScalarType for Long"),
    # singular matrices: torch's LinAlgError, a RuntimeError
    (lambda: gt.linalg.inv(gt.zeros(2, 3, 3)), gt.linalg.LinAlgError,
     "linalg.inv: (Batch element 0): The diagonal element 1 is zero, the inversion could not "
     "be completed because the input matrix is singular."),
    (lambda: gt.linalg.matrix_power(gt.zeros(2, 2), -1), gt.linalg.LinAlgError,
     "linalg.inv: The diagonal element 1 is zero"),
    (lambda: gt.linalg.solve(gt.zeros(2, 2), gt.ones(2)), gt.linalg.LinAlgError,
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    (lambda: gt.linalg.cholesky(-gt.eye(2)), gt.linalg.LinAlgError,
     "linalg.cholesky: The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 1 is not positive-definite)."),
    (lambda: gt.cholesky_inverse(gt.tensor([[2.0, 0.0], [1.0, 0.0]])), gt.linalg.LinAlgError,
     "cholesky_inverse: The diagonal element 2 is zero, the inversion could not be completed "
     "because the input matrix is singular."),
]


@pytest.mark.filterwarnings("ignore:torch.(chain_matmul|triangular_solve) is deprecated")
@pytest.mark.parametrize("call, error, message", LINALG_SOLVER_ERRORS)
def test_linalg_solvers_and_powers_raise_torchs_errors(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value)
    assert not issubclass(error, gt.linalg.LinAlgError) or isinstance(e.value, RuntimeError)


def test_linalg_error_is_a_runtime_error_named_as_torchs():
    assert issubclass(gt.linalg.LinAlgError, RuntimeError)
    assert gt.linalg.LinAlgError.__name__ == "_LinAlgError"


def test_triangular_solve_of_a_zero_diagonal_gives_inf_and_nan_not_an_error():
    """LAPACK's trsm divides by the zero: torch's result, no error."""
    out = gt.linalg.solve_triangular(gt.zeros(2, 2), gt.ones(2, 1), upper=True)
    assert np.isnan(out[0, 0].item()) and np.isinf(out[1, 0].item())


def test_solve_triangular_reads_one_triangle_only():
    a, b = f64(3, 3, requires_grad=False) + 3 * gt.eye(3, dtype=gt.float64), f64(3, 2, seed=1)
    for upper, unit in ((True, False), (False, False), (True, True), (False, True)):
        t = (a.triu(int(unit)) if upper else a.tril(-int(unit))) + unit * gt.eye(
            3, dtype=gt.float64)
        x = gt.linalg.solve_triangular(a, b, upper=upper, unitriangular=unit)
        np.testing.assert_allclose((t @ x).detach().numpy(), b.detach().numpy(), atol=1e-12)


def test_matrix_power_of_integers_and_the_zeroth_power():
    """Positive powers of integer matrices stay integers; the zeroth power is the identity,
    with a zero gradient (a copy written over A's clone, as torch's)."""
    m = gt.tensor([[1, 1], [1, 0]])
    assert gt.linalg.matrix_power(m, 10).tolist() == [[89, 55], [55, 34]]
    x = f64(2, 3, 3)
    eye = gt.linalg.matrix_power(x, 0)
    assert eye.tolist() == np.broadcast_to(np.eye(3), (2, 3, 3)).tolist()
    assert eye.grad_fn.name() == "CopyBackwards"
    g, = gt.autograd.grad(eye.sum(), x)
    assert not g.any()


@pytest.mark.filterwarnings("error")
def test_deprecated_triangular_solve_and_chain_matmul_warn_and_return_torchs_results():
    a, b = f64(3, 3) + 3 * gt.eye(3, dtype=gt.float64), f64(3, 2, seed=1)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        result = gt.triangular_solve(b, a, upper=False)
    assert type(result).__name__ == "triangular_solve"
    assert result._fields == ("solution", "cloned_coefficient")
    np.testing.assert_allclose(result.solution.detach().numpy(), gt.linalg.solve_triangular(
        a, b, upper=False).detach().numpy())
    assert result.cloned_coefficient.tolist() == a.tolist()
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        assert gt.chain_matmul(a).grad_fn.name() == "CloneBackward0"


@pytest.mark.parametrize("driver, residuals, rank, values", [
    (None, (0,), (), (0,)), ("gels", (2,), (0,), (0,)), ("gelsd", (2,), (), (3,)),
    ("gelss", (2,), (), (3,))])
def test_lstsq_fills_what_each_driver_computes(driver, residuals, rank, values):
    """torch's CPU drivers: gelsy (the default) the rank only; gels the residuals; gelsd and
    gelss also the singular values. The residuals are |A X - B|^2 per column."""
    a, b = f64(4, 3), f64(4, 2, seed=1)
    out = gt.linalg.lstsq(a, b, driver=driver)
    assert type(out).__name__ == "linalg_lstsq"
    assert [tuple(t.shape) for t in out[1:]] == [residuals, rank, values]
    expected = np.linalg.lstsq(a.detach().numpy(), b.detach().numpy(), rcond=None)
    np.testing.assert_allclose(out.solution.detach().numpy(), expected[0], rtol=1e-10)
    if residuals != (0,):
        np.testing.assert_allclose(out.residuals.detach().numpy(), expected[1], rtol=1e-10)
    if rank == ():
        assert out.rank.item() == 3 and out.rank.dtype == gt.int64


def test_matrix_rank_counts_singular_values_above_the_tolerance():
    diag = gt.diag(gt.tensor([1.0, 1e-3, 1e-9], dtype=gt.float64))
    assert gt.linalg.matrix_rank(diag).item() == 3
    assert gt.linalg.matrix_rank(diag, rtol=1e-5).item() == 2
    assert gt.linalg.matrix_rank(diag, atol=1e-2).item() == 1
    assert gt.linalg.matrix_rank(gt.ones(2, 3, 3)).tolist() == [1, 1]
    assert gt.linalg.matrix_rank(-diag, hermitian=True).item() == 3


def test_pinv_drops_the_singular_values_below_the_tolerance():
    a = gt.diag(gt.tensor([2.0, 1e-20, 4.0], dtype=gt.float64))
    np.testing.assert_allclose(gt.linalg.pinv(a).numpy(), np.diag([0.5, 0.0, 0.25]))
    np.testing.assert_allclose(gt.linalg.pinv(a, atol=3.0).numpy(), np.diag([0.0, 0.0, 0.25]))
    np.testing.assert_allclose(gt.linalg.pinv(-a, hermitian=True).numpy(),
                               np.diag([-0.5, 0.0, -0.25]))


def test_matrix_exp_of_a_rotation_generator_and_of_a_large_matrix():
    """exp of [[0, -t], [t, 0]] is the rotation by t; a norm well above the Pade bound goes
    through squaring (e^(A + A) = (e^A)^2)."""
    t = 0.7
    rotation = gt.linalg.matrix_exp(gt.tensor([[0.0, -t], [t, 0.0]], dtype=gt.float64))
    np.testing.assert_allclose(rotation.numpy(), [[np.cos(t), -np.sin(t)],
                                                  [np.sin(t), np.cos(t)]], atol=1e-15)
    a = f64(3, 3, requires_grad=False) * 4
    np.testing.assert_allclose(gt.matrix_exp(2 * a).numpy(),
                               np.linalg.matrix_power(gt.matrix_exp(a).numpy(), 2), rtol=1e-11)


def test_eig_gives_complex_eigenpairs_and_refuses_a_loss_of_their_phases():
    """A real matrix's eigenvalues are complex (a rotation's: e^(+-i t)); A V = V diag(L).
    Each eigenvector's phase is arbitrary: a loss that depends on it has no gradient, torch's
    error; one that does not (|V|) has one."""
    t = 0.3
    rotation = gt.tensor([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], dtype=gt.float64)
    L, V = gt.linalg.eig(rotation)
    assert L.dtype == gt.complex128 and V.dtype == gt.complex128
    np.testing.assert_allclose(sorted(L.numpy(), key=np.imag), [np.exp(-1j * t), np.exp(1j * t)])
    a = f64(2, 3, 3, requires_grad=False)
    L, V = gt.linalg.eig(a)
    np.testing.assert_allclose(a.numpy() @ V.numpy(), V.numpy() * L.numpy()[:, None, :],
                               atol=1e-12)
    assert gt.linalg.eigvals(a.float()).dtype == gt.complex64
    a = rotation.clone().requires_grad_()  # (complex eigenvectors: their phases matter)
    with pytest.raises(RuntimeError, match=r"linalg_eig_backward: The eigenvectors in the "
                                           r"complex case are specified up to multiplication "
                                           r"by e\^\{i phi\}\. The specified loss function "
                                           r"depends on this quantity, so it is ill-defined\."):
        gt.linalg.eig(a).eigenvectors.real.sum().backward()
    gt.linalg.eig(a).eigenvectors.abs().sum().backward()
    assert a.grad.dtype == gt.float64 and np.all(np.isfinite(a.grad.numpy()))


def test_geqrf_keeps_q_as_reflectors_that_householder_product_multiplies_out():
    """geqrf's R (on and above the diagonal) and reflectors (below it, with tau) give back A:
    householder_product's Q times R, Q with orthonormal columns; a zero column below the
    diagonal needs no reflector (tau 0), as LAPACK's."""
    for shape in [(4, 3), (2, 3, 3), (2, 4)]:
        A = f64(*shape, requires_grad=False)
        a, tau = gt.geqrf(A)
        k = min(shape[-2:])
        Q = gt.linalg.householder_product(a[..., :, :k], tau)
        R = a[..., :k, :].triu()
        np.testing.assert_allclose((Q @ R).numpy(), A.numpy(), atol=1e-12)
        np.testing.assert_allclose((Q.mT @ Q).numpy(), np.broadcast_to(np.eye(k), Q.shape[:-2]
                                                                     + (k, k)), atol=1e-12)
    a, tau = gt.geqrf(gt.tensor([[1.0, 2.0], [0.0, 3.0], [0.0, 4.0]]))
    assert tau.tolist() == [0.0, pytest.approx(1.6)]
    np.testing.assert_allclose(a.numpy(), [[1, 2], [0, -5], [0, 0.5]], atol=1e-6)


def test_svd_and_pca_lowrank_recover_a_low_rank_matrix():
    """A rank-2 matrix: svd_lowrank's U diag(S) V^H is A, its leading singular values A's; M is
    taken out first; pca_lowrank centres the columns; q and niter out of range are torch's
    ValueErrors."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((7, 2)) @ rng.standard_normal((2, 5))
    for A in (gt.tensor(a), gt.tensor(a.T.copy())):
        U, S, V = gt.svd_lowrank(A, q=3)
        assert U.shape == (A.shape[0], 3) and V.shape == (A.shape[1], 3)
        np.testing.assert_allclose((U @ gt.diag(S) @ V.mT).numpy(), A.numpy(), atol=1e-12)
        np.testing.assert_allclose(S[:2].numpy(), np.linalg.svd(a, compute_uv=False)[:2])
    M = gt.ones(7, 5, dtype=gt.float64)
    U, S, V = gt.svd_lowrank(gt.tensor(a) + M, q=2, M=M)
    np.testing.assert_allclose((U @ gt.diag(S) @ V.mT).numpy(), a, atol=1e-12)
    U, S, V = gt.pca_lowrank(gt.tensor(a))
    assert S.shape == (5,)
    np.testing.assert_allclose(S[:2].numpy(), np.linalg.svd(a - a.mean(0), compute_uv=False)[:2])
    with pytest.raises(ValueError, match=r"q\(=6\) must be non-negative integer and not greater "
                                         r"than min\(m, n\)=5"):
        gt.pca_lowrank(gt.tensor(a), q=6)
    with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
        gt.pca_lowrank(gt.tensor(a), niter=-1)


def test_ldl_factor_pivots_as_bunch_kaufman_and_ldl_solve_solves():
    """A symmetric A = P L D L^T P^T: a small diagonal entry next to a large one takes a 2x2
    block of D (both pivots negative, naming the row swapped in), and ldl_solve's X solves
    A X = B for every matrix of B's batch (broadcast); a zero column is info's first zero
    pivot, and ldl_factor's error."""
    A = gt.tensor([[1e-3, 2.0, 0.5], [2.0, 1e-3, 1.0], [0.5, 1.0, 3.0]], dtype=gt.float64)
    LD, pivots, info = gt.linalg.ldl_factor_ex(A)
    assert pivots.tolist() == [-2, -2, 3] and info.item() == 0 and pivots.dtype == gt.int32
    assert np.all(np.triu(LD.numpy(), 1) == 0)
    B = f64(4, 1, 3, 2, requires_grad=False)
    X = gt.linalg.ldl_solve(LD, pivots, B)
    assert X.shape == (4, 1, 3, 2)
    np.testing.assert_allclose((A @ X).numpy(), B.numpy(), atol=1e-12)
    singular = gt.tensor([[2.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]])
    assert gt.linalg.ldl_factor_ex(singular).info.item() == 2
    with pytest.raises(RuntimeError, match="torch.linalg.ldl_factor: Unknown error code: 2."):
        gt.linalg.ldl_factor(singular)


@given(st.lists(st.integers(1, 4), min_size=3, max_size=7), st.booleans(), st.booleans())
@settings(max_examples=25, deadline=None, derandomize=True)
def test_multi_dot_is_the_chain_product_in_any_order(sizes, row_first, column_last):
    """Whatever order the cheapest parenthesisation picks, the product and the gradients are
    the chain's (a 1-D first factor a row, a 1-D last one a column)."""
    rng = np.random.default_rng(len(sizes))
    arrays = [rng.standard_normal((sizes[i], sizes[i + 1])) for i in range(len(sizes) - 1)]
    if row_first:
        arrays[0] = arrays[0][0]
    if column_last and len(arrays) > 1:
        arrays[-1] = arrays[-1][:, 0]
    tensors = [gt.tensor(a, requires_grad=True) for a in arrays]
    out = gt.linalg.multi_dot(tensors)
    expected = np.linalg.multi_dot(arrays)
    assert tuple(out.shape) == np.shape(expected)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    check_grads(lambda *t: gt.linalg.multi_dot(t), tensors, order=1)


def test_normalize_any_p_divides_by_the_p_norm_clamped_at_eps():
    x = gt.tensor([[3.0, -4.0], [0.0, 0.0]], dtype=gt.float64, requires_grad=True)
    np.testing.assert_allclose(F.normalize(x, p=1)._data, [[3 / 7, -4 / 7], [0.0, 0.0]])
    np.testing.assert_allclose(F.normalize(x, p=float("inf"), dim=0)._data,
                               [[1.0, -1.0], [0.0, 0.0]])
    np.testing.assert_allclose(F.normalize(x, p=3, eps=100.0)._data, x._data / 100)
    check_grads(lambda x: F.normalize(x, p=1.5, dim=1), [f64(3, 4)], order=2)


@pytest.mark.parametrize("shapes, names", [
    (((3,), (3, 4)), ["SqueezeBackward4", "MmBackward0", "UnsqueezeBackward0"]),
    (((2, 2, 3), (3, 4)), ["UnsafeViewBackward0", "MmBackward0", "ViewBackward0"]),
    (((2, 3), (5, 3, 4)), ["CloneBackward0", "TransposeBackward0", "UnsafeViewBackward0",
                           "MmBackward0", "UnsafeViewBackward0", "CloneBackward0",
                           "TransposeBackward0", "TBackward0"]),
    (((5, 2, 3), (3,)), ["UnsafeViewBackward0", "MvBackward0", "ViewBackward0"]),
    (((5, 2, 3), (5, 3, 4)), ["UnsafeViewBackward0", "BmmBackward0", "ViewBackward0",
                              "ExpandBackward0", "ViewBackward0", "ExpandBackward0"]),
    (((4, 1, 2, 3), (5, 3, 4)), ["UnsafeViewBackward0", "BmmBackward0", "UnsafeViewBackward0",
                                 "CloneBackward0", "ExpandBackward0", "UnsafeViewBackward0",
                                 "CloneBackward0", "ExpandBackward0"]),
    (((1, 2, 3), (5, 3, 4)), ["CloneBackward0", "TransposeBackward0", "UnsafeViewBackward0",
                              "MmBackward0", "UnsafeViewBackward0", "CloneBackward0",
                              "TransposeBackward0", "TBackward0", "SqueezeBackward1"])],
    ids=["vec_mat", "batch_mat", "mat_batch", "batch_vec", "equal_batch", "broadcast",
         "batch_of_one"])
def test_matmul_records_torchs_nodes_around_mm_and_bmm(shapes, names):
    """torch 2.13's graphs of `a @ b` (both requiring grad), leaves left out."""
    a, b = f64(*shapes[0]), f64(*shapes[1], seed=1)
    nodes, stack = [], [(a @ b).grad_fn]
    while stack:
        fn = stack.pop()
        if fn is not None and fn.name() != "AccumulateGrad":
            nodes.append(fn.name())
            stack.extend(f for f, _ in reversed(fn.next_functions))
    assert nodes == names


def test_bmm_mm_mv_dot_called_by_name_are_one_node_each():
    for node in (f64(5, 2, 3).bmm(f64(5, 3, 4)).grad_fn, f64(2, 3).mm(f64(3, 4)).grad_fn,
                 f64(2, 3).mv(f64(3)).grad_fn, f64(3).dot(f64(3)).grad_fn):
        assert all(f.name() == "AccumulateGrad" for f, _ in node.next_functions)


def test_matmul_with_broadcast_saves_copies_so_a_later_inplace_write_is_fine():
    """torch's bmm of expanded operands saves reshaped copies: writing into an operand after
    the product does not break backward (it does where the operand itself is saved)."""
    a, b = f64(2, 1, 3, 4) * 1, f64(3, 4, 2, seed=1) * 1
    out = a @ b
    a.add_(1)
    out.sum().backward()
    c = f64(2, 3, 4) * 1
    out = c @ f64(4, 2, seed=1)
    c.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_einsum_three_operands_to_second_order():
    a, b, c = f64(2, 3), f64(3, 4, seed=1), f64(4, seed=2)
    out = gt.einsum("ij,jk,k->i", a, b, c)
    np.testing.assert_allclose(out._data, np.einsum("ij,jk,k->i", a._data, b._data, c._data))
    check_grads(lambda a, b, c: gt.einsum("ij,jk,k->i", a, b, c) ** 2, [a, b, c], order=2)


# ------------------------- logical ops, cat, broadcasting errors -------------------------
def test_logical_not_gives_bools_for_any_dtype_and_invert_stays_bitwise():
    # torch: logical_not is `x == 0` as bools for every dtype; `~` is bitwise on integers
    for values, dtype in (([0.0, 2.5, -1.0], gt.float32), ([0, 2, -1], gt.int64),
                          ([True, False, True], gt.bool)):
        x = gt.tensor(values, dtype=dtype)
        for not_x in (x.logical_not(), gt.logical_not(x)):
            assert not_x.dtype == gt.bool
            assert not_x.tolist() == [v == 0 for v in values]
    assert (~gt.tensor([1, 2, 0])).tolist() == [-2, -3, -1]
    assert (~gt.tensor([True, False])).tolist() == [False, True]


def test_concatenate_is_cat():
    a, b = gt.ones(2, requires_grad=True), gt.zeros(3)
    out = gt.concatenate((a, b))
    assert out.tolist() == [1, 1, 0, 0, 0] and type(out.grad_fn).__name__ == "CatBackward0"


def test_masked_fill_with_a_mask_that_does_not_broadcast_is_torchs_error():
    x = gt.zeros(2, 3)
    for mask, words in ((gt.ones(2, 2, dtype=gt.bool), "tensor a (2) must match the size of "
                         "tensor b (3) at non-singleton dimension 1"),
                        (gt.ones(3, 1, dtype=gt.bool), "tensor a (3) must match the size of "
                         "tensor b (2) at non-singleton dimension 0")):
        with pytest.raises(RuntimeError, match=words.replace("(", r"\(").replace(")", r"\)")):
            x.masked_fill(mask, 1.0)


@pytest.mark.parametrize("run, words", [
    (lambda: gt.zeros(3, 4, 1).expand(2, 3, 4), "tensor (3) must match the existing size (4) "
     "at non-singleton dimension 1"),
    (lambda: gt.zeros(3).expand(-1, 3), "tensor (-1) isn't allowed in a leading, non-existing "
     "dimension 0"),
    (lambda: gt.zeros(3, 4).addmm(gt.zeros(2, 5), gt.zeros(5, 4)), "tensor (2) must match the "
     "existing size (3) at non-singleton dimension 0"),
    (lambda: gt.zeros(3, 4, 1).baddbmm(gt.zeros(2, 3, 5), gt.zeros(2, 5, 4)), "tensor (3) must "
     "match the existing size (4) at non-singleton dimension 1"),
])
def test_expand_errors_name_the_dim_torch_names(run, words):
    # torch checks from the last dim, so it names the last one that does not expand
    with pytest.raises(RuntimeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        run()


