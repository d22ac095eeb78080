"""gradtool.nn: Parameter, Module (registration, modes, state_dict, hooks, repr), layers and
losses (gradients against central differences in float64), default initialisation, nn.init,
train/eval behaviour of Dropout and BatchNorm and its independence from grad mode, the
module tags on graph nodes, and the MLP example reaching its stated accuracy."""
import collections
import copy
import importlib.util
import math
import os

import numpy as np
import pytest

import gradtool as gt
import gradtool.engine.nn.functional as F
from gradtool.engine import nn
from gradtool.engine.autograd.node import AccumulateGrad
from gradtool.engine.autograd.walk import topological_order

from gradcheck_util import check_grads


def f64(*shape, requires_grad=True, seed=0, scale=1.0, shift=0.0):
    rng = np.random.default_rng(seed)
    return gt.tensor(rng.standard_normal(shape) * scale + shift, dtype=gt.float64,
                     requires_grad=requires_grad)


def labels(*values):
    return gt.tensor(list(values))


# ---------------- Parameter ----------------
def test_parameter_requires_grad_and_prints_as_torch():
    p = nn.Parameter(gt.ones(2))
    assert p.requires_grad and p.is_leaf and isinstance(p, gt.Tensor)
    assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    assert not nn.Parameter(gt.ones(2), requires_grad=False).requires_grad


def test_parameter_shares_memory_with_its_data_and_ops_give_plain_tensors():
    t = gt.zeros(3)
    p = nn.Parameter(t)
    assert np.shares_memory(p._data, t._data)
    assert type(p * 2) is gt.Tensor and type(p.detach()) is gt.Tensor


def test_deepcopy_keeps_parameters_parameters_with_their_own_memory():
    model = nn.Linear(2, 2)
    clone = copy.deepcopy(model)
    assert type(clone.weight) is nn.Parameter and clone.weight.requires_grad
    assert clone.weight.equal(model.weight)
    assert not np.shares_memory(clone.weight._data, model.weight._data)


# ---------------- Module: registration and iteration ----------------
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 3)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc1(x)) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Block()
        self.head = nn.Linear(3, 1)
        self.scale = 3.0  # a plain attribute

    def forward(self, x):
        return self.head(self.encoder(x)).sum()


def test_attribute_assignment_registers_parameters_buffers_and_modules():
    model = Model()
    assert [n for n, _ in model.named_parameters()] == [
        "encoder.fc1.weight", "encoder.fc1.bias", "head.weight", "head.bias"]
    assert [n for n, _ in model.named_modules()] == ["", "encoder", "encoder.fc1",
                                                     "encoder.act", "head"]
    assert list(model.children()) == [model.encoder, model.head]
    assert model.get_submodule("encoder.fc1") is model.encoder.fc1
    assert model.scale == 3.0 and "scale" not in model._parameters
    model.register_buffer("steps", gt.tensor(0))
    assert "steps" in model.state_dict() and list(model.buffers())[0] is model.steps
    model.register_buffer("cache", gt.zeros(1), persistent=False)
    assert "cache" not in model.state_dict()


def test_assigning_a_plain_tensor_to_a_parameter_name_is_refused():
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign .* as parameter 'weight'"):
        lin.weight = gt.zeros(2, 2)
    lin.bias = None
    assert lin.bias is None and [n for n, _ in lin.named_parameters()] == ["weight"]
    with pytest.raises(TypeError, match="cannot assign 'gradtool.Tensor' object to parameter"):
        lin.register_parameter("w2", nn.Parameter(gt.ones(1)) * 1)
    del lin.weight
    assert list(lin.parameters()) == []


def test_shared_parameters_are_listed_once():
    a = nn.Linear(2, 2)
    model = nn.Sequential(a, nn.Tanh(), a)
    assert len(list(model.parameters())) == 2
    assert len(model.state_dict()) == 4  # as torch: both names are saved


def test_train_eval_requires_grad_and_zero_grad_reach_every_submodule():
    model = Model()
    assert model.eval() is model and not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    assert not model(gt.randn(2, 3)).requires_grad
    model.requires_grad_()
    model(gt.randn(2, 3)).backward()
    grad = model.head.weight.grad
    model.zero_grad(set_to_none=False)
    assert model.head.weight.grad is grad and not grad._data.any()
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_double_converts_in_place_keeping_the_parameter_objects():
    bn = nn.BatchNorm1d(3)
    weight = bn.weight
    bn.double()
    assert bn.weight is weight and weight.dtype == gt.float64
    assert bn.running_mean.dtype == gt.float64 and bn.num_batches_tracked.dtype == gt.int64


# ---------------- state_dict ----------------
def test_state_dict_shares_memory_and_load_state_dict_copies_in_place():
    gt.manual_seed(0)
    a, b = Model(), Model()
    sd = a.state_dict()
    assert list(sd) == ["encoder.fc1.weight", "encoder.fc1.bias", "head.weight", "head.bias"]
    assert not sd["head.weight"].requires_grad
    assert np.shares_memory(sd["head.weight"]._data, a.head.weight._data)
    weight, version = b.head.weight, b.head.weight._version
    result = b.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    assert b.head.weight is weight and weight._version == version + 1
    assert all(p.equal(q) for p, q in zip(a.parameters(), b.parameters()))


def test_load_state_dict_reports_missing_unexpected_and_mismatched_keys():
    lin = nn.Linear(2, 2)
    sd = collections.OrderedDict(weight=gt.zeros(2, 2), extra=gt.zeros(1))
    with pytest.raises(RuntimeError) as e:
        lin.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Linear:\n\t'
                            'Missing key(s) in state_dict: "bias". \n\t'
                            'Unexpected key(s) in state_dict: "extra". ')
    missing, unexpected = lin.load_state_dict(sd, strict=False)
    assert (missing, unexpected) == (["bias"], ["extra"]) and not lin.weight._data.any()
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with "
                                           r"shape .*\[3, 2\].* from checkpoint"):
        lin.load_state_dict({"weight": gt.zeros(3, 2), "bias": gt.zeros(2)})


# ---------------- hooks and repr ----------------
def test_forward_hooks_can_replace_inputs_and_outputs_and_be_removed():
    lin = nn.Linear(2, 2)
    seen = []
    pre = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = lin.register_forward_hook(lambda m, args, out: seen.append(out.shape) or out + 1)
    out = lin(gt.randn(4, 2))
    assert seen == [gt.Size([4, 2])]
    assert np.allclose(out._data, lin.bias._data + 1)
    pre.remove()
    post.remove()
    x = gt.randn(4, 2)
    assert lin(x).allclose(F.linear(x, lin.weight, lin.bias))
    kw = lin.register_forward_hook(lambda m, args, kwargs, out: out * 0, with_kwargs=True)
    assert not lin(x)._data.any()
    kw.remove()


def test_repr_is_torchs():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Dropout(0.2), nn.BatchNorm1d(3),
                          nn.LayerNorm(3), nn.Embedding(4, 5, padding_idx=0),
                          nn.CrossEntropyLoss(), nn.ReLU(inplace=True))
    assert repr(model) == """Sequential(
  (0): Linear(in_features=2, out_features=3, bias=True)
  (1): ReLU()
  (2): Dropout(p=0.2, inplace=False)
  (3): BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
  (4): LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
  (5): Embedding(4, 5, padding_idx=0)
  (6): CrossEntropyLoss()
  (7): ReLU(inplace=True)
)"""
    assert repr(Model()).startswith("Model(\n  (encoder): Block(\n    (fc1): Linear(")


def test_sequential_indexing():
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh(), nn.Linear(2, 1))
    assert len(model) == 3 and model[-1] is model[2] and list(model)[1] is model[1]
    assert isinstance(model[:2], nn.Sequential) and len(model[:2]) == 2
    named = nn.Sequential(collections.OrderedDict(fc=nn.Linear(2, 2), act=nn.Tanh()))
    assert [n for n, _ in named.named_children()] == ["fc", "act"]
    with pytest.raises(IndexError):
        model[3]
    blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(list(blocks.parameters())) == 6 and blocks[1] is list(blocks)[1]


# ---------------- default initialisation and nn.init ----------------
def test_linear_default_init_is_kaiming_uniform_with_a_sqrt5():
    gt.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # gain(leaky_relu, sqrt 5) * sqrt(3 / fan_in)
    w = lin.weight._data
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    assert np.abs(lin.bias._data).max() <= bound
    gt.manual_seed(0)
    assert nn.Linear(400, 300).weight.equal(lin.weight)  # seeded by manual_seed


def test_other_layers_default_init():
    gt.manual_seed(0)
    emb = nn.Embedding(1000, 20, padding_idx=3)
    assert emb.weight._data.std() == pytest.approx(1.0, rel=0.02)
    assert not emb.weight._data[3].any()
    bn, ln = nn.BatchNorm1d(4), nn.LayerNorm(4)
    for layer in (bn, ln):
        assert (layer.weight._data == 1).all() and not layer.bias._data.any()
    assert not bn.running_mean._data.any() and (bn.running_var._data == 1).all()
    assert bn.num_batches_tracked.item() == 0


def test_init_functions_work_in_place_on_parameters_without_recording():
    p = nn.Parameter(gt.empty(50, 40))
    version = p._version
    for fill in (nn.init.xavier_uniform_, nn.init.kaiming_normal_, nn.init.zeros_,
                 nn.init.ones_, nn.init.eye_, lambda t: nn.init.constant_(t, 0.5),
                 nn.init.trunc_normal_):
        assert fill(p) is p
        assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p._version == version + 7 and gt.is_grad_enabled()
    nn.init.xavier_uniform_(p, gain=2.0)
    assert np.abs(p._data).max() <= 2.0 * math.sqrt(6 / 90)
    nn.init.kaiming_normal_(p, nonlinearity="relu")
    assert p._data.std() == pytest.approx(math.sqrt(2 / 40), rel=0.1)
    nn.init.trunc_normal_(p, std=1.0, a=-0.5, b=0.5)
    assert np.abs(p._data).max() <= 0.5


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("fill, method", [
    (lambda t: nn.init.uniform_(t, -0.3, 0.7), lambda t: t.uniform_(-0.3, 0.7)),
    (lambda t: nn.init.normal_(t, 0.2, 1.5), lambda t: t.normal_(0.2, 1.5)),
    (lambda t: nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
     lambda t: t.uniform_(-1 / math.sqrt(7), 1 / math.sqrt(7)))])
def test_init_fills_draw_and_count_as_the_in_place_methods(fill, method, dtype):
    """nn.init writes a plain tensor's draw without the in-place dispatch: the values are the
    Tensor method's under no_grad bit for bit, from the same generator state, and the version
    moves and names the line as any in-place write."""
    def filled(how, make):
        gt.manual_seed(3)
        t = make()
        with gt.no_grad():
            how(t)
        return t
    for make in (lambda: nn.Parameter(gt.empty(5, 7, dtype=getattr(gt, dtype))),
                 lambda: gt.empty(5, 7, dtype=getattr(gt, dtype)),
                 lambda: nn.Parameter(gt.empty(5, 14, dtype=getattr(gt, dtype))[:, ::2])):
        ours, theirs = filled(fill, make), filled(method, make)
        assert ours._data.tobytes() == theirs._data.tobytes()
        assert ours._data.dtype == theirs._data.dtype and ours._version == theirs._version == 1
        # the write is the user's: this file's lambda (the two lambdas are on two lines)
        assert ours._version_counter[1][::2] == theirs._version_counter[1][::2] == (
            __file__, "<lambda>")
        assert ours.requires_grad == theirs.requires_grad and ours.grad_fn is None
    gt.manual_seed(5)
    a = gt.empty(4, 4)
    fill(a)
    after_ours = gt.rand(3)
    gt.manual_seed(5)
    b = gt.empty(4, 4)
    method(b)
    assert gt.rand(3).equal(after_ours)  # the generator moved on by the same draw


def test_init_fills_are_seen_by_the_profiler_and_refuse_what_in_place_ops_refuse():
    p = nn.Parameter(gt.empty(3, 4))

    def profiled(uniform, normal):
        with gt.autograd.profiler.profile() as prof:
            uniform(p)
            normal(p)
        return [(e.key, e.count) for e in prof.key_averages()]
    with gt.no_grad():
        methods = profiled(lambda t: t.uniform_(), lambda t: t.normal_())
    assert profiled(nn.init.uniform_, nn.init.normal_) == methods and len(methods) == 2
    with gt.inference_mode():
        frozen = gt.empty(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        nn.init.uniform_(frozen)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        nn.init.normal_(gt.empty(1).expand(3))


def test_calculate_gain_is_torchs_table():
    gain = nn.init.calculate_gain
    assert (gain("linear"), gain("sigmoid"), gain("tanh"), gain("relu"), gain("selu")) == (
        1, 1, 5 / 3, math.sqrt(2), 0.75)
    assert gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        nn.init.xavier_uniform_(gt.empty(3))


# ---------------- Dropout and BatchNorm: train vs eval ----------------
def test_dropout_zeroes_and_rescales_in_training_and_is_the_identity_in_eval():
    gt.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = gt.ones(100, 100, requires_grad=True)
    y = drop(x)
    kept = y._data != 0
    assert kept.mean() == pytest.approx(0.75, abs=0.02)
    assert np.allclose(y._data[kept], 1 / 0.75)
    y.sum().backward()
    assert np.allclose(x.grad._data, y._data)  # the gradient is the mask times 1/(1-p)
    drop.eval()
    assert drop(x) is x
    assert nn.Dropout(1.0)(x).sum().item() == 0
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)


def test_batchnorm_uses_batch_statistics_in_training_and_updates_running_ones():
    bn = nn.BatchNorm1d(2).double()
    x = f64(8, 2, requires_grad=False, scale=3.0, shift=1.0)
    y = bn(x)
    assert np.allclose(y._data.mean(0), 0, atol=1e-12)
    assert np.allclose(y._data.var(0), 1, atol=1e-4)  # var/(var + eps)
    mean, unbiased = x._data.mean(0), x._data.var(0, ddof=1)
    assert np.allclose(bn.running_mean._data, 0.9 * 0 + 0.1 * mean)
    assert np.allclose(bn.running_var._data, 0.9 * 1 + 0.1 * unbiased)
    bn(x)
    assert np.allclose(bn.running_mean._data, 0.9 * (0.1 * mean) + 0.1 * mean)
    assert bn.num_batches_tracked.item() == 2


def test_batchnorm_uses_running_statistics_in_eval_and_leaves_them_alone():
    bn = nn.BatchNorm1d(3).double()
    x = f64(4, 3, 5, requires_grad=False, scale=2.0)  # (N, C, L): statistics over N and L
    bn(x)
    bn.eval()
    state = {k: v.clone() for k, v in bn.state_dict().items()}
    y = bn(x)
    rm, rv = bn.running_mean._data[:, None], bn.running_var._data[:, None]
    assert np.allclose(y._data, (x._data - rm) / np.sqrt(rv + 1e-5))
    assert all(v.equal(bn.state_dict()[k]) for k, v in state.items())
    bn.train()
    assert not np.allclose(bn(x)._data, y._data)


def test_batchnorm_momentum_none_is_the_cumulative_average():
    bn = nn.BatchNorm1d(1, momentum=None).double()
    batches = [f64(5, 1, requires_grad=False, seed=s) for s in range(3)]
    for b in batches:
        bn(b)
    assert bn.running_mean.item() == pytest.approx(np.mean([b._data.mean() for b in batches]))


def test_batchnorm_needs_more_than_one_value_per_channel_in_training():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        bn(gt.randn(1, 3))
    bn.eval()
    assert bn(gt.randn(1, 3)).shape == (1, 3)


def test_eval_and_no_grad_are_orthogonal():
    """eval() changes what forward computes; no_grad() whether it is recorded. Each alone
    does only its own job."""
    gt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.BatchNorm1d(8))
    x = gt.randn(16, 4)

    model.eval()  # eval alone: deterministic, running statistics untouched, still recorded
    out = model(x)
    assert out.requires_grad and out.grad_fn is not None
    assert model(x).equal(out) and model[2].num_batches_tracked.item() == 0
    out.sum().backward()
    assert model[0].weight.grad is not None

    model.train()
    with gt.no_grad():  # no_grad alone: nothing recorded, but Dropout drops and BN updates
        a, b = model(x), model(x)
    assert not a.requires_grad and a.grad_fn is None
    assert not a.equal(b)
    assert model[2].num_batches_tracked.item() == 2 and model[2].running_mean._data.any()

    model.eval()
    with gt.no_grad():  # both: the evaluation setting
        a, b = model(x), model(x)
    assert a.equal(b) and not a.requires_grad and model[2].num_batches_tracked.item() == 2


# ---------------- gradients against central differences (float64) ----------------
def reseeded(fn):
    """fn with the random generator reset before each call: the same Dropout mask for the
    analytic pass and every finite-difference evaluation."""
    def wrapped(*args):
        gt.manual_seed(0)
        return fn(*args)
    return wrapped


def module_case(module, *inputs, order=1):
    module = module.double()
    params = list(module.parameters())
    check_grads(lambda *xs: module(*xs[:len(inputs)]), [*inputs, *params], order=order)


def test_linear_gradients():
    module_case(nn.Linear(3, 2), f64(4, 3), order=2)
    module_case(nn.Linear(3, 2, bias=False), f64(3))
    module_case(nn.Linear(3, 2), f64(2, 4, 3))
    check_grads(F.linear, [f64(4, 3), f64(2, 3, seed=1), f64(2, seed=2)], order=2)


@pytest.mark.parametrize("module", [nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Identity()],
                         ids=lambda m: type(m).__name__)
def test_activation_gradients(module):
    module_case(module, f64(3, 4), order=2)


def test_softmax_gradients():
    check_grads(lambda x: F.softmax(x, dim=1), [f64(3, 4)], order=2)
    check_grads(lambda x: F.log_softmax(x, dim=0), [f64(3, 4)], order=2)


def test_dropout_gradients():
    drop = nn.Dropout(0.4)
    check_grads(reseeded(drop), [f64(5, 4)], order=2)
    check_grads(reseeded(lambda x: F.dropout(x.clone(), 0.3, inplace=True)), [f64(6)])


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 2)])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_batchnorm_gradients(shape, mode):
    bn = nn.BatchNorm1d(3).double()
    bn(f64(*shape, requires_grad=False, seed=3, scale=2.0))  # non-trivial running statistics
    bn.train(mode == "train")
    module_case(bn, f64(*shape, scale=2.0, shift=0.5), order=2 if shape == (6, 3) else 1)


def test_layernorm_gradients():
    module_case(nn.LayerNorm(4), f64(3, 4), order=2)
    module_case(nn.LayerNorm((2, 3)), f64(2, 2, 3))
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\]"):
        nn.LayerNorm(4)(gt.randn(2, 3))


def test_embedding_gradients_and_padding_row():
    idx = labels([0, 1, 4], [1, 1, 2])
    module_case(nn.Embedding(5, 3), idx)
    # torch's padding_idx: the row is used in forward, but gets no gradient (by design, so
    # not what central differences see)
    emb = nn.Embedding(5, 3, padding_idx=1).double()
    with gt.no_grad():
        emb.weight[1] = 7.0
    assert emb(idx)._data[1, 0].tolist() == [7.0] * 3
    emb(idx).pow(2).sum().backward()
    assert not emb.weight.grad._data[1].any() and not emb.weight.grad._data[3].any()
    assert emb.weight.grad._data[0].any()
    with pytest.raises(IndexError, match="index out of range in self"):
        emb(labels(5))
    frozen = nn.Embedding.from_pretrained(gt.eye(3))
    assert not frozen.weight.requires_grad and frozen(gt.tensor(2)).tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_gradients(reduction):
    module_case(nn.MSELoss(reduction=reduction), f64(3, 2), f64(3, 2, seed=1), order=2)
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(gt.zeros(3, 1), gt.zeros(3))


CE_CASES = {
    "indices": dict(),
    "sum": dict(reduction="sum"),
    "none": dict(reduction="none"),
    "weights": dict(weight=True),
    "ignore_index": dict(ignore_index=2),
    "smoothing": dict(label_smoothing=0.2),
    "everything": dict(weight=True, ignore_index=2, label_smoothing=0.1),
    "probabilities": dict(probabilities=True),
    "probabilities_smoothing_weights": dict(probabilities=True, label_smoothing=0.3,
                                            weight=True, reduction="sum"),
}


@pytest.mark.parametrize("case", sorted(CE_CASES))
def test_cross_entropy_gradients(case):
    kwargs = dict(CE_CASES[case])
    if kwargs.pop("weight", False):
        kwargs["weight"] = gt.tensor(np.array([0.5, 2.0, 1.0, 1.5]))
    if kwargs.pop("probabilities", False):
        p = np.random.default_rng(1).random((5, 4))
        target = gt.tensor(p / p.sum(1, keepdims=True))
    else:
        target = labels(0, 3, 2, 1, 2)
    module_case(nn.CrossEntropyLoss(**kwargs), f64(5, 4), target, order=2)


def test_cross_entropy_shapes_and_values():
    x = f64(4, requires_grad=False)
    expected = -np.log(np.exp(x._data[2]) / np.exp(x._data).sum())
    assert F.cross_entropy(x, gt.tensor(2)).item() == pytest.approx(expected)  # one sample
    check_grads(lambda x: F.cross_entropy(x, labels([0, 2], [1, 1])), [f64(2, 3, 2)])
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(gt.randn(2, 3), labels(0, 7))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 2\], got \[2, 3\]"):
        F.cross_entropy(gt.randn(2, 3, 2), labels([0, 1, 2], [1, 1, 1]))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        nn.CrossEntropyLoss(reduction="bad")


# ---------------- graph nodes know their module ----------------
def module_of(node):
    return node.metadata.get("module")


def nodes(out):
    return topological_order([out.grad_fn])


def test_nodes_are_tagged_with_the_innermost_module_by_qualified_name():
    model = Model()
    x = gt.randn(2, 3, requires_grad=True)
    out = model(x)
    tags = {(n.name(), module_of(n)) for n in nodes(out)}
    assert ("SumBackward0", "") in tags  # the root's own op
    assert ("MulBackward0", "encoder") in tags  # Block.forward's own op
    assert ("ReluBackward0", "encoder.act") in tags
    assert {("AddmmBackward0", "encoder.fc1"), ("AddmmBackward0", "head")} <= tags
    assert {("TBackward0", "encoder.fc1"), ("TBackward0", "head")} <= tags
    mm = next(n for n in nodes(out)
              if n.name() == "AddmmBackward0" and module_of(n) == "encoder.fc1")
    assert mm.metadata["module_type"] == "Linear"
    assert [name for name, _ in mm.metadata["nn_module_stack"]] == ["", "encoder", "encoder.fc1"]
    assert mm.metadata["nn_module_stack"][-1][1] is model.encoder.fc1


def test_a_child_registered_or_replaced_during_forward_is_tagged_by_its_name():
    """Each call's name comes from its caller's children as they are when it is called: a
    child added by forward after a first call, or put in another's place, is named by its
    key (the caller's children are looked up, not scanned, and a stale lookup is redone)."""
    class Growing(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = nn.Linear(3, 3)

        def forward(self, x):
            x = self.first(x)
            self.second = nn.Linear(3, 3)   # registered after `first` was called
            x = self.second(x)
            self.first = nn.Linear(3, 3)    # replaced after its call
            return self.first(x).sum()
    model = Growing()
    out = model(gt.randn(2, 3, requires_grad=True))
    calls = [(module_of(n), n.metadata["module_calls"]) for n in nodes(out)
             if n.name() == "AddmmBackward0"]
    assert sorted(name for name, _ in calls) == ["first", "first", "second"]
    assert len({c for _, c in calls}) == 3  # three calls, each its own


def test_each_call_of_a_module_is_its_own_instance_nested_in_its_callers_call():
    block = Block()
    x = gt.randn(2, 3, requires_grad=True)
    out = block(block(x))
    calls = {n.metadata["module_calls"] for n in nodes(out) if "module_calls" in n.metadata}
    outer = {c[:1] for c in calls}
    assert len(outer) == 2  # two calls of one module: two instances, not one merged box
    assert {len(c) for c in calls} == {1, 2}  # fc1 and act nested inside each call
    assert all(c[:1] in outer for c in calls)


def test_a_forward_hook_anywhere_leaves_every_nodes_tags_as_they_are():
    """Calls with no hook take a shorter way than calls with one: both tag each node alike
    (its module's name and type, the stack of module calls, a dict of its own)."""
    def tags(out):
        order = nodes(out)
        calls = sorted({c for n in order for c in n.metadata.get("module_calls", ())})
        renumber = {c: i for i, c in enumerate(calls)}  # call ids go on increasing
        return [(n.name(), n.metadata.get("module"), n.metadata.get("module_type"),
                 [(name, type(m).__name__) for name, m in n.metadata.get("nn_module_stack", ())],
                 [renumber[c] for c in n.metadata.get("module_calls", ())]) for n in order]

    gt.manual_seed(0)
    model = nn.Sequential(nn.Sequential(nn.Linear(3, 3), nn.ReLU()), nn.Tanh(), Model())
    x = gt.randn(2, 3, requires_grad=True)
    plain = tags(model(x))
    handle = nn.modules.module.register_module_forward_hook(lambda module, args, out: None)
    try:
        hooked = tags(model(x))
    finally:
        handle.remove()
    assert hooked == plain and len(plain) > 10
    out = model(x)
    assert len({id(n.metadata) for n in nodes(out)}) == len(nodes(out))


def test_parameter_leaves_belong_to_their_module_and_input_leaves_to_none():
    model = Model()
    x = gt.randn(2, 3, requires_grad=True)
    out = model(x)
    leaves = {id(n.variable): module_of(n) for n in nodes(out) if type(n) is AccumulateGrad}
    assert leaves[id(model.encoder.fc1.weight)] == "encoder.fc1"
    assert leaves[id(model.head.bias)] == "head"
    assert leaves[id(x)] is None


def test_a_parameter_used_only_inside_a_child_still_belongs_to_its_owner():
    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(gt.ones(3))
            self.act = nn.Sigmoid()

        def forward(self, x):
            return self.act(self.w) * x

    gate = nn.Sequential(nn.Linear(3, 3), Gate())
    out = gate(gt.randn(2, 3))
    tags = {n.name(): module_of(n) for n in nodes(out)}
    assert tags["SigmoidBackward0"] == "1.act" and tags["MulBackward0"] == "1"
    leaf = next(n for n in nodes(out) if type(n) is AccumulateGrad and n.variable is gate[1].w)
    assert module_of(leaf) == "1"


def test_the_inputs_history_is_not_tagged():
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True), nn.Identity(),
                          nn.Dropout(0.5).eval())
    leaf = gt.randn(2, 3, requires_grad=True)
    x = leaf * 3  # before the model: belongs to no module
    out = model(x)
    tags = {n.name(): module_of(n) for n in nodes(out)}
    assert tags["MulBackward0"] is None
    assert tags["ReluBackward0"] == "1" and tags["AddmmBackward0"] == "0"
    assert "2" not in tags.values() and "3" not in tags.values()  # they returned their input


def test_a_module_called_alone_is_the_root_and_no_grad_tags_nothing():
    lin = nn.Linear(2, 2)
    out = lin(gt.randn(1, 2))
    assert {module_of(n) for n in nodes(out)} == {""}
    with gt.no_grad():
        assert lin(gt.randn(1, 2)).grad_fn is None


# ---------------- the example ----------------
def test_train_mlp_example_reaches_its_stated_accuracy():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_mlp.py")
    spec = importlib.util.spec_from_file_location("train_mlp_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    accuracy = example.main(verbose=False)
    assert accuracy >= example.TARGET_ACCURACY
    assert f"{example.TARGET_ACCURACY:.0%}" in example.__doc__.replace(" ", "").replace(
        "at least", "")


# ---- the modules and names added after the census of real files (docs/census.md); their
# values and gradients against torch are in tests/parity/test_nn.py
def test_parameter_list_indexes_slices_and_grows_like_a_list():
    plist = nn.ParameterList([gt.ones(2), nn.Parameter(gt.zeros(1))])
    assert isinstance(plist[0], nn.Parameter) and plist[-1].shape == (1,)
    plist += [gt.ones(3)]
    assert len(plist) == 3 and [p.shape[0] for p in plist] == [2, 1, 3]
    assert len(plist[1:]) == 2 and plist[1:][1] is plist[2]
    with pytest.raises(IndexError):
        plist[3]
    plist[0] = gt.full((4,), 2.0)
    assert [n for n, _ in plist.named_parameters()] == ["0", "1", "2"]
    assert plist[0].shape == (4,) and isinstance(plist[0], nn.Parameter)


def test_parameter_dict_keeps_pairs_in_order_and_pops():
    pdict = nn.ParameterDict([("z", gt.ones(1)), ("a", gt.ones(2))])
    assert list(pdict) == ["z", "a"] and "a" in pdict and pdict.get("b") is None
    assert pdict.pop("z").shape == (1,) and list(pdict.keys()) == ["a"]
    assert [n for n, _ in pdict.named_parameters()] == ["a"]


def test_weight_norm_refuses_a_second_hook_and_a_missing_one():
    layer = nn.utils.weight_norm(nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="two weight_norm hooks"):
        nn.utils.weight_norm(layer)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
        nn.utils.remove_weight_norm(layer, "bias")
    x = gt.randn(4, 3)
    with gt.no_grad():
        layer.weight_g.mul_(2.0)  # the next forward recomputes the weight from g and v
    v = layer.weight_v
    weight = v * (2.0 * v.norm(2, dim=1, keepdim=True) / v.norm(2, dim=1, keepdim=True))
    assert gt.allclose(layer(x), x @ weight.T + layer.bias)


def test_the_old_init_spellings_warn_and_fill_in_place():
    w = gt.zeros(3, 4)
    with pytest.warns(FutureWarning, match="nn.init.xavier_uniform_"):
        assert nn.init.xavier_uniform(w) is w
    assert w.abs().sum().item() > 0
    with pytest.warns(FutureWarning, match="nn.init.constant_"):
        nn.init.constant(w, 0.5)
    assert w.eq(0.5).all()


def test_data_parallel_is_the_module_and_checkpoint_the_call():
    inner = nn.Linear(3, 2)
    model = nn.DataParallel(inner)
    x = gt.randn(5, 3)
    assert gt.equal(model(x), inner(x)) and list(model.state_dict())[0] == "module.weight"
    from gradtool.engine.utils.checkpoint import checkpoint, checkpoint_sequential
    seq = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
    assert gt.equal(checkpoint(seq, x, use_reentrant=False), seq(x))
    assert gt.equal(checkpoint_sequential(seq, 2, x), seq(x))


def test_activation_modules_say_what_they_refuse():
    with pytest.raises(ValueError, match="min_val cannot be greater"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        nn.GLU()(gt.ones(2, 3))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        nn.PReLU(3)(gt.ones(2, 4))


def test_module_type_casts_integer_buffers_too():
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    weight = model[0].weight
    assert model.type(gt.float64) is model and model[0].weight is weight
    assert weight.dtype == gt.float64 and model[1].num_batches_tracked.dtype == gt.float64


def test_instance_norm_normalises_each_sample_and_channel_alone():
    x = gt.randn(2, 3, 8, dtype=gt.float64) * 3 + 2
    y = nn.InstanceNorm1d(3)(x)
    assert gt.allclose(y.mean(-1), gt.zeros(2, 3, dtype=gt.float64), atol=1e-12)
    assert gt.allclose(y.var(-1, unbiased=False), gt.ones(2, 3, dtype=gt.float64), atol=1e-4)
    assert nn.InstanceNorm1d(3)(x[0]).shape == (3, 8)  # an unbatched input
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(gt.ones(1, 2, 3, 4))


@pytest.mark.parametrize("module", [nn.AvgPool1d(3, stride=2, padding=1),
                                    nn.AdaptiveAvgPool1d(3), nn.InstanceNorm1d(3, affine=True),
                                    nn.PReLU(3), nn.Mish(), nn.GLU(1)],
                         ids=["avg_pool1d", "adaptive_avg_pool1d", "instance_norm",
                              "prelu", "mish", "glu"])
def test_census_modules_gradients_against_central_differences(module):
    module = module.double()
    check_grads(lambda x: module(x), [f64(2, 4 if isinstance(module, nn.GLU) else 3, 6)],
                order=2)


# ---- the layers of the census's long tail (their comparison with torch: tests/parity/test_nn.py)
def test_long_tail_layers_compute_their_closed_forms():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4))
    norm = gt.nn.RMSNorm(4, eps=0.0)
    np.testing.assert_allclose(norm(gt.tensor(x)).detach().numpy(),
                               x / np.sqrt((x ** 2).mean(-1, keepdims=True)))
    p, q = rng.dirichlet(np.ones(4), 3), rng.dirichlet(np.ones(4), 3)
    kl = gt.nn.KLDivLoss(reduction="batchmean")(gt.tensor(np.log(q)), gt.tensor(p))
    np.testing.assert_allclose(kl.item(), (p * np.log(p / q)).sum() / 3)
    y = rng.standard_normal((3, 4))
    cos = gt.nn.CosineSimilarity(1)(gt.tensor(x), gt.tensor(y))
    np.testing.assert_allclose(cos.numpy(), (x * y).sum(1) / np.linalg.norm(x, axis=1)
                               / np.linalg.norm(y, axis=1))
    assert gt.nn.Unflatten(1, (2, 2))(gt.tensor(x)).shape == (3, 2, 2)
    image = gt.tensor(rng.standard_normal((1, 2, 3, 4, 5)))
    assert gt.nn.functional.pixel_unshuffle(gt.nn.PixelShuffle(1)(image[0]), 1).equal(image[0])


def test_dirac_makes_a_convolution_the_identity():
    conv = gt.nn.Conv3d(2, 2, 3, padding=1, bias=False)
    gt.nn.init.dirac_(conv.weight)
    x = gt.randn(1, 2, 3, 4, 2)
    assert conv(x).allclose(x)
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        gt.nn.init.dirac_(gt.empty(3, 1, 3), groups=2)


def test_gumbel_softmax_samples_the_argmax_of_perturbed_logits():
    gt.manual_seed(0)
    logits = gt.tensor([[10.0, 0.0, -10.0]] * 200, requires_grad=True)
    soft = gt.nn.functional.gumbel_softmax(logits, tau=0.5)
    assert soft.sum(-1).allclose(gt.ones(200))
    hard = gt.nn.functional.gumbel_softmax(logits, hard=True)
    assert set(hard.flatten().tolist()) == {0.0, 1.0} and hard.sum().item() == 200
    assert hard[:, 0].mean().item() > 0.95  # e^10 against e^0: almost always the first
    hard.select(1, 0).sum().backward()  # straight through: the soft sample's gradient
    assert logits.grad.abs().sum().item() > 0


def test_sync_batch_norm_in_one_process_is_batch_norm(tmp_path):
    gt.manual_seed(0)
    x = gt.randn(4, 3, 5)
    sync, plain = gt.nn.SyncBatchNorm(3), gt.nn.BatchNorm1d(3)
    assert sync(x).allclose(plain(x)) and sync.running_var.allclose(plain.running_var)
    gt.distributed.init_process_group("gloo", init_method=f"file://{tmp_path}/s", rank=0,
                                      world_size=1)
    try:
        with pytest.raises(ValueError, match="expected input tensor to be on GPU"):
            sync(x)
        sync.eval()
        assert sync(x).allclose(plain.eval()(x))
    finally:
        gt.distributed.destroy_process_group()


def test_a_packed_batch_runs_each_sequence_to_its_own_length():
    """Packing round-trips, and a recurrent layer over a packed batch gives each sequence
    the outputs and last hidden state of running it alone."""
    rnn_utils = gt.nn.utils.rnn
    gt.manual_seed(0)
    x = gt.randn(4, 3, 2, dtype=gt.float64)
    lengths = [2, 4, 1]
    packed = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 0, 2]
    padded, got = rnn_utils.pad_packed_sequence(packed)
    assert got.tolist() == lengths
    for b, n in enumerate(lengths):
        assert padded[:n, b].equal(x[:n, b]) and not padded[n:, b].any()
    gru = gt.nn.GRU(2, 3, bidirectional=True).double()
    out, h_n = gru(packed)
    out, _ = rnn_utils.pad_packed_sequence(out)
    for b, n in enumerate(lengths):
        alone, h_alone = gru(x[:n, b:b + 1])
        assert alone.allclose(out[:n, b:b + 1]) and h_alone.allclose(h_n[:, b:b + 1])
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(x, lengths)


def test_spectral_norm_divides_the_weight_by_its_largest_singular_value():
    gt.manual_seed(0)
    layer = gt.nn.utils.spectral_norm(gt.nn.Conv2d(2, 3, 2).double())
    assert sorted(layer.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    for _ in range(50):  # the power iteration converges over the training forwards
        layer(gt.ones(1, 2, 3, 3, dtype=gt.float64))
    matrix = layer.weight.detach().numpy().reshape(3, -1)
    np.testing.assert_allclose(np.linalg.svd(matrix, compute_uv=False)[0], 1.0, rtol=1e-8)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        gt.nn.utils.spectral_norm(layer)
    gt.nn.utils.remove_spectral_norm(layer)
    assert sorted(layer.state_dict()) == ["bias", "weight"]


# ---- the rest of torch.nn's activations (gradients: the op sweep; against torch:
# tests/parity/test_nn.py)
def test_rrelu_draws_a_slope_per_negative_element_in_training_and_uses_their_mean_in_eval():
    gt.manual_seed(0)
    x = gt.tensor(-np.linspace(0.5, 2.0, 400), requires_grad=True)
    layer = nn.RReLU(0.1, 0.3)
    slopes = layer(x).detach() / x.detach()
    assert 0.1 <= slopes.min().item() and slopes.max().item() <= 0.3
    assert slopes.std().item() > 0.03  # drawn, not one slope
    y = layer(x)
    y.sum().backward()
    assert gt.allclose(x.grad, y.detach() / x.detach())  # the slopes drawn for this call
    layer.eval()
    assert gt.allclose(layer(x) / x, gt.full((400,), 0.2, dtype=gt.float64))
    assert gt.equal(layer(-x), -x)  # the positive side is the identity
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal"):
        F.rrelu(x, 0.5, 0.2)


def test_the_in_place_activations_write_into_their_input_and_refuse_a_leaf():
    cases = {"relu_": (), "hardtanh_": (-0.5, 0.5), "elu_": (1.5,), "selu_": (),
             "celu_": (1.5,), "leaky_relu_": (0.2,), "rrelu_": (0.1, 0.3),
             "threshold_": (0.1, 2.0)}
    for name, args in cases.items():
        x = f64(3, 4)
        h = x * 1.0
        version = h._version
        out = getattr(F, name)(h, *args)
        assert out is h and h._version == version + 1, name
        out_of_place = getattr(F, name[:-1])(x.detach(), *args)
        assert gt.allclose(h.detach(), out_of_place), name
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            getattr(F, name)(x, *args)


def test_the_shrinks_and_threshold_compute_their_closed_forms():
    x = gt.tensor([-2.0, -0.5, -0.2, 0.0, 0.3, 0.6, 3.0], dtype=gt.float64)
    assert nn.Hardshrink(0.4)(x).tolist() == [-2.0, -0.5, 0.0, 0.0, 0.0, 0.6, 3.0]
    assert gt.allclose(nn.Softshrink(0.4)(x), gt.tensor([-1.6, -0.1, 0, 0, 0, 0.2, 2.6],
                                                        dtype=gt.float64))
    assert nn.Threshold(0.3, -1.0)(x).tolist() == [-1.0] * 5 + [0.6, 3.0]
    assert gt.allclose(nn.CELU(2.0)(x), gt.where(x > 0, x, 2.0 * ((x / 2.0).exp() - 1)))
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for "
                                           r"input dtype Float, but found -1"):
        F.softshrink(gt.ones(2), -1.0)
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        nn.CELU(0.0)(x)
    assert [repr(m) for m in (nn.Threshold(0.1, 2.0, True), nn.CELU(), nn.RReLU(),
                              nn.Hardshrink(), nn.Softshrink(0.25))] == [
        "Threshold(threshold=0.1, value=2.0, inplace=True)", "CELU(alpha=1.0)",
        "RReLU(lower=0.125, upper=0.3333333333333333)", "Hardshrink(0.5)", "Softshrink(0.25)"]


def test_two_input_layers_gradients_against_central_differences():
    """Bilinear's gradients with respect to both inputs, its weight and bias (the functional
    the module calls), PairwiseDistance's with respect to a broadcast pair."""
    check_grads(F.bilinear, [f64(4, 3), f64(4, 2, seed=1), f64(2, 3, 2, seed=2),
                             f64(2, seed=3)], order=2)
    check_grads(nn.PairwiseDistance(3.0), [f64(4, 3), f64(3, seed=1)], order=2)


def test_bilinear_is_a_quadratic_form_per_output_and_pdist_the_pairs_distances():
    rng = np.random.default_rng(0)
    a, b, w = rng.standard_normal((5, 3)), rng.standard_normal((5, 2)), rng.standard_normal(
        (4, 3, 2))
    y = F.bilinear(gt.tensor(a), gt.tensor(b), gt.tensor(w))
    np.testing.assert_allclose(y.numpy(), np.einsum("bi,oij,bj->bo", a, w, b))
    d = F.pdist(gt.tensor(a), 1.5).numpy()
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    np.testing.assert_allclose(d, [(np.abs(a[i] - a[j]) ** 1.5).sum() ** (1 / 1.5)
                                   for i, j in pairs])
    assert F.pdist(gt.ones(1, 3)).shape == (0,)
    with pytest.raises(ValueError, match="in1_features must be > 0"):
        nn.Bilinear(0, 2, 3)


# ---- the Transformer's decoder (against torch: tests/parity/test_recurrent_attention.py)
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_decoder_layer_gradients_against_central_differences(norm_first):
    gt.manual_seed(0)
    layer = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=norm_first,
                                       activation="gelu").double()
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=gt.float64)
    check_grads(lambda tgt, memory: layer(tgt, memory, tgt_mask=mask),
                [f64(3, 2, 4), f64(5, 2, 4, seed=1)])


def test_transformer_decoder_is_causal_under_the_causal_mask():
    """With the causal mask (given or detected) an output depends on the target's earlier
    positions only, and on all of the source."""
    gt.manual_seed(0)
    model = nn.Transformer(8, 2, 1, 2, 16, dropout=0.0, batch_first=True).double()
    src, tgt = f64(2, 5, 8, requires_grad=False), f64(2, 4, 8, seed=1, requires_grad=False)
    mask = model.generate_square_subsequent_mask(4, dtype=gt.float64)
    out = model(src, tgt, tgt_mask=mask)
    changed_tgt, changed_src = tgt.clone(), src.clone()
    changed_tgt[:, 2:] += 1.0
    changed_src[:, -1] += 1.0
    later = model(src, changed_tgt, tgt_mask=mask)
    assert out.shape == (2, 4, 8) and gt.allclose(later[:, :2], out[:, :2])
    assert not gt.allclose(later[:, 2:], out[:, 2:])
    assert not gt.allclose(model(changed_src, tgt, tgt_mask=mask)[:, 0], out[:, 0])
    assert [len(model.encoder.layers), len(model.decoder.layers)] == [1, 2]
    assert model.decoder.layers[0].activation is F.relu
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(src, tgt[:1])


# ---- the lazy modules (against torch: tests/parity/test_nn.py)
LAZY = [(lambda: nn.LazyLinear(3), (2, 5), nn.Linear, (3, 5)),
        (lambda: nn.LazyConv1d(4, 3), (2, 5, 7), nn.Conv1d, (4, 5, 3)),
        (lambda: nn.LazyConv2d(4, 3, groups=2), (2, 6, 5, 5), nn.Conv2d, (4, 3, 3, 3)),
        (lambda: nn.LazyConv3d(2, 1), (5, 3, 3, 3), nn.Conv3d, (2, 5, 1, 1, 1)),
        (lambda: nn.LazyConvTranspose1d(4, 3), (2, 5, 7), nn.ConvTranspose1d, (5, 4, 3)),
        (lambda: nn.LazyConvTranspose2d(4, 3), (2, 5, 4, 4), nn.ConvTranspose2d, (5, 4, 3, 3)),
        (lambda: nn.LazyConvTranspose3d(4, 1), (1, 5, 2, 2, 2), nn.ConvTranspose3d,
         (5, 4, 1, 1, 1)),
        (lambda: nn.LazyBatchNorm1d(), (4, 5), nn.BatchNorm1d, (5,)),
        (lambda: nn.LazyBatchNorm2d(), (2, 5, 3, 3), nn.BatchNorm2d, (5,)),
        (lambda: nn.LazyBatchNorm3d(), (2, 5, 2, 2, 2), nn.BatchNorm3d, (5,)),
        (lambda: nn.LazyInstanceNorm1d(), (2, 5, 4), nn.InstanceNorm1d, (5,)),
        (lambda: nn.LazyInstanceNorm2d(), (2, 5, 3, 3), nn.InstanceNorm2d, (5,))]


@pytest.mark.parametrize("make, shape, becomes, weight_shape", LAZY,
                         ids=[b.__name__ for _, _, b, _ in LAZY])
def test_a_lazy_module_takes_its_shapes_from_its_first_input_and_becomes_its_class(
        make, shape, becomes, weight_shape):
    module = make().double()
    assert module.has_uninitialized_params() and type(module).__name__ == "Lazy" + \
        becomes.__name__
    assert {name: type(t).__name__ for name, t in module.state_dict().items()
            if name != "num_batches_tracked"} == {
        name: "UninitializedParameter" if name in ("weight", "bias") else "UninitializedBuffer"
        for name in module.state_dict() if name != "num_batches_tracked"}
    x = f64(*shape)
    module(x)
    assert type(module) is becomes and not hasattr(module, "_initialize_hook")
    assert module.weight.shape == weight_shape and module.weight.dtype == gt.float64
    check_grads(module, [x])  # a plain module now: its gradients are its class's


def test_uninitialized_parameters_refuse_use_and_load_their_shapes():
    layer = nn.LazyLinear(3)
    with pytest.raises(ValueError, match=r"Attempted to use an uninitialized parameter in "
                                         r"<method 'sum' of 'torch._C.TensorBase' objects>"):
        layer.weight.sum()
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        layer.weight.shape
    assert repr(layer.weight) == "<UninitializedParameter>"
    assert [repr(v) for v in layer.state_dict().values()] == ["<UninitializedParameter>"] * 2
    copied = copy.deepcopy(layer)
    assert copied.has_uninitialized_params() and copied.weight is not layer.weight
    trained = nn.Linear(4, 3)
    layer.load_state_dict(trained.state_dict())  # loading materialises the shapes
    assert not layer.has_uninitialized_params() and type(layer) is nn.LazyLinear
    x = gt.randn(2, 4)
    assert gt.equal(layer(x), trained(x)) and type(layer) is nn.Linear
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(gt.ones(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match=r"Expected 2D \(unbatched\) or 3D \(batched\) input "
                                           r"to LazyConv1d"):
        nn.LazyConv1d(4, 3)(gt.ones(5))


def test_buffer_assigned_to_a_module_is_registered_persistent_or_not():
    module = nn.Module()
    module.kept = nn.Buffer(gt.ones(2))
    module.scratch = nn.Buffer(gt.zeros(3), persistent=False)
    assert list(module.state_dict()) == ["kept"]
    assert [name for name, _ in module.named_buffers()] == ["kept", "scratch"]
    assert module.double().kept.dtype == gt.float64


def test_the_deprecated_container_warns_and_holds_its_keyword_children():
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        container = nn.Container(act=nn.ReLU(), out=nn.Linear(2, 1))
    assert list(dict(container.named_children())) == ["act", "out"]
    with pytest.warns(FutureWarning, match="Subclass that instead"):
        class Old(nn.Container):
            pass


def test_the_new_layers_import_from_torchs_module_paths():
    from gradtool.nn.modules.activation import CELU, Hardshrink
    from gradtool.nn.modules.container import Container
    from gradtool.nn.modules.conv import LazyConvTranspose2d
    from gradtool.nn.modules.lazy import LazyModuleMixin
    from gradtool.nn.modules.linear import Bilinear, LazyLinear
    from gradtool.nn.modules.transformer import TransformerDecoder
    from gradtool.nn.parameter import UninitializedBuffer
    assert (CELU, Hardshrink, Container, LazyConvTranspose2d, Bilinear, LazyLinear,
            TransformerDecoder, UninitializedBuffer) == (
        nn.CELU, nn.Hardshrink, nn.Container, nn.LazyConvTranspose2d, nn.Bilinear,
        nn.LazyLinear, nn.TransformerDecoder, nn.UninitializedBuffer)
    assert issubclass(nn.LazyLinear, LazyModuleMixin)


def test_embedding_bag_reduces_each_bag_and_says_what_it_refuses():
    from gradtool.engine.errors import NotInEngineError
    weight = gt.tensor(np.arange(12.0).reshape(4, 3))
    bags = nn.EmbeddingBag.from_pretrained(weight, mode="sum", padding_idx=3)
    out = bags(gt.tensor([1, 3, 2, 0]), gt.tensor([0, 2, 2]))  # bags [1, 3], [], [2, 0]
    assert out.tolist() == [[3.0, 4.0, 5.0], [0.0, 0.0, 0.0], [6.0, 8.0, 10.0]]
    mean = F.embedding_bag(gt.tensor([[0, 2], [1, 1]]), weight)  # a 2-d input: rows are bags
    assert mean.tolist() == [[3.0, 4.0, 5.0], [3.0, 4.0, 5.0]]
    assert F.embedding_bag(gt.tensor([[0, 2]]), weight, mode="max").tolist() == [[6.0, 7.0, 8.0]]
    with pytest.raises(NotInEngineError, match="scale_grad_by_freq"):
        F.embedding_bag(gt.tensor([0, 1]), weight, gt.tensor([0]), scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(gt.tensor([0, 1]), weight, gt.tensor([0]), mode="median")


# ---- AdaptiveLogSoftmaxWithLoss (against torch: tests/parity/test_nn.py)
def test_adaptive_log_softmax_is_a_distribution_over_all_classes():
    gt.manual_seed(0)
    model = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    x = f64(5, 8)
    target = gt.tensor([0, 4, 9, 2, 7])
    log_prob = model.log_prob(x)
    assert gt.allclose(log_prob.exp().sum(1), gt.ones(5, dtype=gt.float64))
    output, loss = model(x, target)
    assert gt.allclose(output, log_prob.gather(1, target.unsqueeze(1)).squeeze(1))
    assert gt.allclose(loss, -output.mean())
    assert gt.equal(model.predict(x), log_prob.argmax(1))
    assert model(x[1], target[1]).output.shape == ()  # one example: a 0-d target
    check_grads(lambda x: model(x, target).loss, [x])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
        model(x, gt.tensor([0, 1, 2, 3, 10]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])

