"""gradtool.optim: SGD (momentum, dampening, nesterov, weight decay), Adam and AdamW checked
against updates computed by hand; param_groups and state share memory with the model's
parameters and are updated in place under no_grad; state_dict round trips. Twenty steps of
each against torch's are in tests/parity/test_training_parity.py."""
import copy
import math

import numpy as np
import pytest

import gradtool as gt
from gradtool.engine import nn


def f64(values):
    # from a float64 array: gt.tensor(floats, dtype=gt.float64) rounds through float32 (engine bug)
    return gt.tensor(np.asarray(values, dtype=np.float64))


def scalar_param(value=1.0):
    return nn.Parameter(f64([value]))


def run(optimizer, param, grads):
    """Apply one step per gradient in grads (set by hand) and return the parameter values."""
    values = []
    for g in grads:
        param.grad = f64([g])
        optimizer.step()
        values.append(param.item())
    return values


# ---------------- closed form: SGD ----------------
def test_sgd_plain_step_is_p_minus_lr_grad():
    p = scalar_param(1.0)
    assert run(gt.optim.SGD([p], lr=0.1), p, [0.5, 0.5]) == pytest.approx([0.95, 0.9])


def test_sgd_momentum_buffer_starts_at_the_gradient():
    # buf1 = g = 0.5, p1 = 1 - 0.1*0.5 = 0.95
    # buf2 = 0.9*0.5 + 0.5 = 0.95, p2 = 0.95 - 0.095 = 0.855
    # buf3 = 0.9*0.95 + 0.5 = 1.355, p3 = 0.855 - 0.1355 = 0.7195
    p = scalar_param(1.0)
    opt = gt.optim.SGD([p], lr=0.1, momentum=0.9)
    assert run(opt, p, [0.5, 0.5, 0.5]) == pytest.approx([0.95, 0.855, 0.7195])
    assert opt.state[p]["momentum_buffer"].item() == pytest.approx(1.355)


def test_sgd_dampening_scales_new_gradients_after_the_first_step():
    # buf1 = 0.5 (no dampening on the first step), p1 = 0.95
    # buf2 = 0.9*0.5 + (1 - 0.5)*0.5 = 0.7, p2 = 0.95 - 0.07 = 0.88
    p = scalar_param(1.0)
    opt = gt.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5)
    assert run(opt, p, [0.5, 0.5]) == pytest.approx([0.95, 0.88])


def test_sgd_nesterov_looks_ahead_along_the_buffer():
    # buf1 = 0.5, step = g + 0.9*buf1 = 0.95, p1 = 1 - 0.095 = 0.905
    # buf2 = 0.9*0.5 + 0.5 = 0.95, step = 0.5 + 0.855 = 1.355, p2 = 0.905 - 0.1355 = 0.7695
    p = scalar_param(1.0)
    opt = gt.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    assert run(opt, p, [0.5, 0.5]) == pytest.approx([0.905, 0.7695])


def test_sgd_weight_decay_adds_decay_times_p_to_the_gradient():
    # g1 = 0.5 + 0.1*1 = 0.6, p1 = 1 - 0.06 = 0.94
    # g2 = 0.5 + 0.1*0.94 = 0.594, p2 = 0.94 - 0.0594 = 0.8806
    p = scalar_param(1.0)
    opt = gt.optim.SGD([p], lr=0.1, weight_decay=0.1)
    assert run(opt, p, [0.5, 0.5]) == pytest.approx([0.94, 0.8806])


def test_sgd_maximize_climbs():
    p = scalar_param(1.0)
    assert run(gt.optim.SGD([p], lr=0.1, maximize=True), p, [0.5]) == pytest.approx([1.05])


# ---------------- closed form: Adam, AdamW ----------------
def adam_by_hand(p, grads, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0,
                 decoupled=False, amsgrad=False):
    """The Adam recursion on plain floats, one line per formula of the paper."""
    m = v = v_max = 0.0
    values = []
    for t, g in enumerate(grads, start=1):
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g += weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)
        m_hat = m / (1 - beta1 ** t)
        v_hat = (v_max if amsgrad else v) / (1 - beta2 ** t)
        p -= lr * m_hat / (math.sqrt(v_hat) + eps)
        values.append(p)
    return values


def test_adam_first_step_moves_by_lr_times_the_sign_of_the_gradient():
    # m_hat = g and v_hat = g*g after one step: the update is lr * g / (|g| + eps)
    p = scalar_param(1.0)
    [value] = run(gt.optim.Adam([p], lr=0.1), p, [0.5])
    assert value == pytest.approx(1 - 0.1 * 0.5 / (0.5 + 1e-8), abs=1e-15)


def test_adam_matches_the_recursion_by_hand():
    grads = [0.5, -1.0, 0.25, 2.0]
    p = scalar_param(1.0)
    got = run(gt.optim.Adam([p], lr=0.1, betas=(0.8, 0.99)), p, grads)
    assert got == pytest.approx(adam_by_hand(1.0, grads, 0.1, 0.8, 0.99), abs=1e-12)
    # second step by hand: m = 0.8*0.1 + 0.2*(-1) = -0.12, v = 0.99*0.0025 + 0.01 = 0.012475
    m_hat, v_hat = -0.12 / (1 - 0.8 ** 2), 0.012475 / (1 - 0.99 ** 2)
    assert got[1] == pytest.approx(got[0] - 0.1 * m_hat / (math.sqrt(v_hat) + 1e-8))


def test_adam_weight_decay_is_l2_on_the_gradient():
    grads = [0.5, -1.0, 0.25]
    p = scalar_param(1.0)
    got = run(gt.optim.Adam([p], lr=0.1, weight_decay=0.5), p, grads)
    assert got == pytest.approx(adam_by_hand(1.0, grads, 0.1, weight_decay=0.5), abs=1e-12)


def test_adamw_decays_the_parameter_not_the_gradient():
    # step 1: p = 1 * (1 - 0.1*0.1) = 0.99, then the Adam step of about lr: 0.89
    # (Adam's L2 form would give 1 - 0.1 = 0.9: the decay enters g and the first step is sign(g))
    p = scalar_param(1.0)
    got = run(gt.optim.AdamW([p], lr=0.1, weight_decay=0.1), p, [0.5, -1.0])
    assert got[0] == pytest.approx(0.89, abs=1e-8)
    assert got == pytest.approx(adam_by_hand(1.0, [0.5, -1.0], 0.1, weight_decay=0.1,
                                             decoupled=True), abs=1e-12)
    assert gt.optim.AdamW([p]).defaults["weight_decay"] == 0.01  # torch's default


def test_amsgrad_keeps_the_largest_second_moment():
    grads = [1.0, 0.01, 0.01]  # v shrinks after the first step; amsgrad keeps the maximum
    p = scalar_param(0.0)
    opt = gt.optim.Adam([p], lr=0.1, amsgrad=True)
    got = run(opt, p, grads)
    assert got == pytest.approx(adam_by_hand(0.0, grads, 0.1, amsgrad=True), abs=1e-12)
    assert got != pytest.approx(adam_by_hand(0.0, grads, 0.1), abs=1e-6)
    assert opt.state[p]["max_exp_avg_sq"].item() == pytest.approx(0.001)


def test_adam_state_has_torchs_entries():
    p = scalar_param()
    opt = gt.optim.Adam([p])
    run(opt, p, [1.0, 1.0])
    state = opt.state[p]
    assert sorted(state) == ["exp_avg", "exp_avg_sq", "step"]
    assert state["step"].dtype == gt.float32 and state["step"].item() == 2.0
    assert state["exp_avg"].dtype == gt.float64  # follows the parameter


# ---------------- sharing memory, no_grad, grads ----------------
def trained_pair():
    gt.manual_seed(0)
    model = nn.Linear(3, 2)
    x = gt.randn(4, 3)
    return model, x


def test_param_groups_hold_the_models_parameters_and_update_their_memory_in_place():
    model, x = trained_pair()
    opt = gt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["params"][0] is model.weight
    assert opt.param_groups[0]["params"][1] is model.bias
    array, version = model.weight._data, model.weight._version
    before = array.copy()
    model(x).sum().backward()
    opt.step()
    assert model.weight._data is array  # the same memory, written in place
    assert not np.array_equal(array, before)
    assert model.weight._version == version + 1
    assert list(opt.state) == [model.weight, model.bias]  # state is keyed by the parameters
    assert opt.state_dict()["state"][0]["momentum_buffer"] is opt.state[model.weight][
        "momentum_buffer"]


def test_step_runs_under_no_grad_so_it_may_modify_leaves_in_place():
    model, x = trained_pair()
    opt = gt.optim.Adam(model.parameters())
    model(x).sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        model.weight.sub_(model.weight.grad)  # what step() must not do with grad mode on
    opt.step()
    assert gt.is_grad_enabled()
    assert model.weight.is_leaf and model.weight.requires_grad and model.weight.grad_fn is None
    out = model(x)  # the updated parameters are used normally in the next forward
    assert out.grad_fn is not None


def test_parameters_without_grad_are_left_alone():
    model, x = trained_pair()
    opt = gt.optim.Adam(model.parameters(), lr=0.1)
    model(x).sum().backward()
    model.bias.grad = None
    bias = model.bias.detach().clone()
    opt.step()
    assert model.bias.equal(bias) and model.bias not in opt.state


def test_zero_grad_sets_none_by_default_or_zeros_in_place():
    model, x = trained_pair()
    opt = gt.optim.SGD(model.parameters(), lr=0.1)
    model(x).sum().backward()
    grad = model.weight.grad
    opt.zero_grad(set_to_none=False)
    assert model.weight.grad is grad and not grad._data.any()
    opt.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None


def test_step_with_closure_returns_the_loss_computed_with_grad_enabled():
    model, x = trained_pair()
    opt = gt.optim.SGD(model.parameters(), lr=0.1)

    def closure():
        opt.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        return loss
    with gt.no_grad():
        loss = opt.step(closure)
    assert loss.requires_grad


def test_param_groups_take_their_own_hyperparameters():
    gt.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    opt = gt.optim.SGD([{"params": model[0].parameters()},
                        {"params": model[1].parameters(), "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    for p in model.parameters():
        p.grad = gt.ones_like(p)
    w0, w1 = model[0].weight.detach().clone(), model[1].weight.detach().clone()
    opt.step()
    assert np.allclose(model[0].weight._data, w0._data - 0.1)
    assert np.allclose(model[1].weight._data, w1._data - 0.5)


def test_named_parameters_are_accepted():
    model, _ = trained_pair()
    opt = gt.optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"][0] is model.weight


@pytest.mark.parametrize("make, error, message", [
    (lambda p: gt.optim.SGD([], lr=0.1), ValueError, "empty parameter list"),
    (lambda p: gt.optim.SGD(p, lr=0.1), TypeError, "iterable of Tensors or dicts"),
    (lambda p: gt.optim.SGD([p * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda p: gt.optim.SGD([p], lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda p: gt.optim.SGD([p], lr=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: gt.optim.Adam([p], betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda p: gt.optim.Adam([p], eps=-1), ValueError, "Invalid epsilon value"),
    (lambda p: gt.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1), ValueError,
     "some parameters appear in more than one parameter group"),
])
def test_invalid_arguments_raise_torchs_errors(make, error, message):
    with pytest.raises(error, match=message):
        make(scalar_param())


def test_repr_lists_each_group_sorted():
    opt = gt.optim.SGD([scalar_param()], lr=0.1, momentum=0.9)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
                         "    foreach: None\n    fused: None\n    lr: 0.1\n    maximize: False\n"
                         "    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)")


# ---------------- state_dict ----------------
def test_state_dict_numbers_parameters_and_round_trips():
    model, x = trained_pair()
    opt = gt.optim.Adam(model.parameters(), lr=0.05)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            opt.step()
    train(model, opt, 3)
    sd = opt.state_dict()
    assert list(sd["state"]) == [0, 1] and sd["param_groups"][0]["params"] == [0, 1]
    assert sd["param_groups"][0]["lr"] == 0.05

    clone = copy.deepcopy(model)
    opt2 = gt.optim.Adam(clone.parameters(), lr=1.0)
    opt2.load_state_dict(copy.deepcopy(sd))
    assert opt2.param_groups[0]["lr"] == 0.05
    assert opt2.param_groups[0]["params"][0] is clone.weight
    train(model, opt, 3)
    train(clone, opt2, 3)
    assert np.array_equal(model.weight._data, clone.weight._data)


def test_load_state_dict_refuses_a_different_layout():
    model, _ = trained_pair()
    opt = gt.optim.SGD(model.parameters(), lr=0.1)
    other = gt.optim.SGD([model.weight], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        other.load_state_dict(opt.state_dict())
    two_groups = gt.optim.SGD([{"params": [model.weight]}, {"params": [model.bias]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        two_groups.load_state_dict(opt.state_dict())


# ---- Adamax, ASGD, Rprop, LBFGS, SparseAdam (step for step against torch:
# tests/parity/test_training_parity.py)
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_solves_a_least_squares_problem(line_search_fn):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 3)), rng.standard_normal(8)
    x = gt.zeros(3, dtype=gt.float64, requires_grad=True)
    opt = gt.optim.LBFGS([x], max_iter=50, tolerance_grad=1e-12, tolerance_change=1e-15,
                         line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = ((gt.tensor(a) @ x - gt.tensor(b)) ** 2).sum()
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.lstsq(a, b, rcond=None)[0],
                               atol=1e-6)


@pytest.mark.parametrize("name, kwargs", [("Adamax", {"lr": 0.1}), ("ASGD", {"lr": 0.1}),
                                          ("Rprop", {"lr": 0.1})])
def test_first_order_optimizers_descend(name, kwargs):
    w = gt.tensor([2.0, -3.0], requires_grad=True)
    opt = getattr(gt.optim, name)([w], **kwargs)
    for _ in range(30):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
    assert (w ** 2).sum().item() < 1.0


def test_sparse_adam_refuses_the_engines_dense_gradients():
    w = gt.zeros(2, requires_grad=True)
    w.grad = gt.ones(2)
    with pytest.raises(RuntimeError, match="does not support dense gradients"):
        gt.optim.SparseAdam([w]).step()
