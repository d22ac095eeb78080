"""Around the model, what real training files use: optimizers and learning-rate schedulers step for
step against torch, gradient clipping, orthogonal init, distributions' log_prob/entropy/rsample
and their graphs, and torch.utils.data. Tests marked parity run the same code on torch."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gradtool as gt

parity = pytest.mark.parity


def _torch():
    return pytest.importorskip("torch")


def _nodes(t):
    """Backward nodes depth first through next_functions: names in order."""
    out, stack, seen = [], [t.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:  # the node itself: torch's wrappers die, ids repeat
            continue
        seen.add(fn)
        out.append(fn.name().removeprefix("torch::autograd::"))
        stack.extend(f for f, _ in reversed(fn.next_functions))
    return out


# ---------------------------------- optimizers ----------------------------------
OPTIMIZERS = {
    "RMSprop": dict(lr=0.01),
    "RMSprop-centered-momentum": dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1),
    "Adagrad": dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
    "Adagrad-decay": dict(lr=0.1, weight_decay=0.2, maximize=True),
    "Adadelta": dict(lr=1.0),
    "Adadelta-decay": dict(lr=0.5, rho=0.8, weight_decay=0.1),
    "Adamax": dict(lr=0.05),
    "Adamax-decay": dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, maximize=True),
    "ASGD": dict(lr=0.05),
    "ASGD-averaging": dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1),
    "RAdam": dict(lr=0.05),
    "RAdam-decoupled": dict(lr=0.05, betas=(0.5, 0.9), weight_decay=0.1,
                            decoupled_weight_decay=True),
    "RAdam-decay": dict(lr=0.05, betas=(0.5, 0.9), weight_decay=0.1, maximize=True),
    "Rprop": dict(lr=0.05),
    "Rprop-bounded": dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2), maximize=True),
}


def _train(lib, name, options, steps=6):
    """A fixed quadratic-ish problem trained for `steps`: the parameters after each step."""
    rng = np.random.default_rng(3)
    w = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = lib.tensor(rng.standard_normal(2), requires_grad=True)
    x = lib.tensor(rng.standard_normal((5, 3)))
    opt = getattr(lib.optim, name.split("-")[0])([w, b], **options)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w + b).tanh() ** 2).sum()
        loss.backward()
        opt.step()
        history.append(np.concatenate([w.detach().numpy().ravel(), b.detach().numpy()]))
    return np.array(history), opt


@parity
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_matches_torch_step_for_step(name):
    torch = _torch()
    mine, opt = _train(gt, name, OPTIMIZERS[name])
    theirs, topt = _train(torch, name, OPTIMIZERS[name])
    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-13)
    assert ({k: sorted(v) for k, v in opt.state_dict()["state"].items()}
            == {k: sorted(v) for k, v in topt.state_dict()["state"].items()})


# SGD, Adam and AdamW with parameter groups, twenty steps: parameters and optimizer state
CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.05)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.1, amsgrad=True)),
]


@parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                      enumerate(CONFIGS)])
def test_twenty_steps_match_torch(name, kwargs, dtype):
    torch = _torch()
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 2))

    def build(lib):  # the same code for both libraries
        model = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))
        model.to(getattr(lib, dtype))
        groups = [{"params": model[0].parameters()},
                  {"params": model[2].parameters(), "lr": kwargs["lr"] / 2}]
        return model, getattr(lib.optim, name)(groups, **kwargs)

    gt_model, gt_opt = build(gt)
    torch_model, torch_opt = build(torch)
    with torch.no_grad():
        for p, q in zip(gt_model.parameters(), torch_model.parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    for lib, model, opt in ((gt, gt_model, gt_opt), (torch, torch_model, torch_opt)):
        xs = lib.tensor(x, dtype=getattr(lib, dtype))
        ys = lib.tensor(y, dtype=getattr(lib, dtype))
        for _ in range(20):
            opt.zero_grad()
            lib.nn.functional.mse_loss(model(xs), ys).backward()
            opt.step()
    for p, q in zip(gt_model.parameters(), torch_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-6)
    for p, q in zip(gt_model.parameters(), torch_model.parameters()):
        for key, value in torch_opt.state[q].items():
            np.testing.assert_allclose(gt_opt.state[p][key].detach().numpy(), value.numpy(),
                                       rtol=1e-5, atol=1e-6, err_msg=key)



@parity
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch_step_for_step(line_search_fn):
    """LBFGS (its closure re-evaluated within a step): the parameters after each step, the
    evaluations counted, as torch's."""
    torch = _torch()
    seen = []
    for lib in (gt, torch):
        rng = np.random.default_rng(5)
        w = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
        x, y = lib.tensor(rng.standard_normal((6, 3))), lib.tensor(rng.standard_normal((6, 2)))
        opt = lib.optim.LBFGS([w], lr=0.8, max_iter=5, history_size=3,
                              line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = ((x @ w).tanh() - y).pow(2).sum() + 0.1 * (w ** 4).sum()
            loss.backward()
            return loss
        history = []
        for _ in range(4):
            loss = opt.step(closure)
            history.append(np.concatenate([[float(loss)], w.detach().numpy().ravel()]))
        state = opt.state[w]
        seen.append((np.array(history), state["func_evals"], state["n_iter"]))
    np.testing.assert_allclose(seen[0][0], seen[1][0], rtol=1e-9, atol=1e-12)
    assert seen[0][1:] == seen[1][1:]


@parity
def test_new_optimizers_refuse_as_torch():
    torch = _torch()

    def outcome(call):
        try:
            call()
            return "ok"
        except Exception as exc:  # noqa: BLE001 (the comparison is of the exceptions)
            return (type(exc).__name__, str(exc))
    seen = []
    for lib in (gt, torch):
        w = lib.zeros(2, requires_grad=True)
        w.grad = lib.ones(2)
        sparse = lib.optim.SparseAdam([w])
        seen.append([outcome(sparse.step),
                     outcome(lambda: lib.optim.Adamax([w], betas=(1.0, 0.9))),
                     outcome(lambda: lib.optim.Rprop([w], etas=(1.2, 0.5))),
                     outcome(lambda: lib.optim.ASGD([w], lr=-1)),
                     outcome(lambda: lib.optim.LBFGS([w], line_search_fn="armijo").step(
                         lambda: (w * w).sum()))])
    assert seen[0] == seen[1]


def test_optimizers_refuse_bad_hyper_parameters_as_torch():
    w = gt.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        gt.optim.RMSprop([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid rho value: 2"):
        gt.optim.Adadelta([w], rho=2)


# ---------------------------------- schedulers ----------------------------------
SCHEDULERS = {
    "StepLR": lambda s, opt: s.StepLR(opt, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, opt: s.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.3),
    "ExponentialLR": lambda s, opt: s.ExponentialLR(opt, gamma=0.9),
    "CosineAnnealingLR": lambda s, opt: s.CosineAnnealingLR(opt, T_max=4, eta_min=0.01),
    "LambdaLR": lambda s, opt: s.LambdaLR(opt, [lambda e: 0.95 ** e, lambda e: 1 / (e + 1)]),
}


def _schedule(lib, make, epochs=14):
    w = lib.zeros(2, requires_grad=True)
    v = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([{"params": [w]}, {"params": [v], "lr": 0.3}], lr=0.1, momentum=0.9)
    scheduler = make(lib.optim.lr_scheduler, opt)
    lrs = [scheduler.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr())
    return lrs


@parity
@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_scheduler_matches_torch_epoch_for_epoch(name):
    torch = _torch()
    mine, theirs = _schedule(gt, SCHEDULERS[name]), _schedule(torch, SCHEDULERS[name])
    assert mine == theirs  # the same recursive formulas: equal, not just close


@parity
def test_reduce_lr_on_plateau_matches_torch():
    torch = _torch()
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
    runs = []
    for lib in (gt, torch):
        opt = lib.optim.Adam([lib.zeros(1, requires_grad=True)], lr=1.0)
        s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, cooldown=1, factor=0.5,
                                                     min_lr=0.1)
        runs.append([(s.step(m), s.get_last_lr())[1] for m in metrics])
    assert runs[0] == runs[1]


def test_scheduler_state_dict_round_trips():
    opt = gt.optim.SGD([gt.zeros(1, requires_grad=True)], lr=1.0)
    s = gt.optim.lr_scheduler.StepLR(opt, 2)
    for _ in range(3):
        s.step()
    again = gt.optim.lr_scheduler.StepLR(gt.optim.SGD([gt.zeros(1, requires_grad=True)], lr=1.0), 2)
    again.load_state_dict(s.state_dict())
    assert again.last_epoch == 3 and again.get_last_lr() == s.get_last_lr()


# ---------------------------------- clipping and init ----------------------------------
@parity
@given(st.floats(0.01, 10), st.sampled_from([1.0, 2.0, 3.0, math.inf]),
       st.integers(0, 2 ** 16))
@settings(max_examples=25, deadline=None)
def test_clip_grad_norm_matches_torch(max_norm, norm_type, seed):
    torch = _torch()
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(s) for s in ((3, 2), (4,))]
    results = []
    for lib in (gt, torch):
        params = [lib.zeros(g.shape, dtype=lib.float64, requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
        results.append([total.item()] + [p.grad.numpy().copy() for p in params])
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    for mine, theirs in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-15)


@parity
def test_clip_grad_value_matches_torch():
    torch = _torch()
    g = np.linspace(-2, 2, 9)
    for lib in (gt, torch):
        p = lib.zeros(9, dtype=lib.float64, requires_grad=True)
        p.grad = lib.tensor(g)
        lib.nn.utils.clip_grad_value_([p], 0.5)
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(g, -0.5, 0.5))


def test_clip_grad_norm_without_gradients_and_nonfinite():
    assert gt.nn.utils.clip_grad_norm_([gt.zeros(2, requires_grad=True)], 1.0).item() == 0.0
    p = gt.zeros(2, requires_grad=True)
    p.grad = gt.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        gt.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal_init_gives_orthonormal_rows_or_columns(shape):
    w = gt.nn.Parameter(gt.empty(shape, dtype=gt.float64))
    out = gt.nn.init.orthogonal_(w, gain=2.0)
    assert out is w and w.requires_grad and w.grad_fn is None
    flat = w.detach().numpy().reshape(shape[0], -1) / 2.0
    small = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(small, np.eye(min(flat.shape)), atol=1e-12)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        gt.nn.init.orthogonal_(gt.empty(3))


# ---------------------------------- distributions ----------------------------------
def _categorical_case(lib, by):
    rng = np.random.default_rng(1)
    raw = rng.standard_normal((2, 4)) if by == "logits" else rng.uniform(0.1, 1, (2, 4))
    param = lib.tensor(raw, requires_grad=True)
    d = lib.distributions.Categorical(**{by: param})
    value = lib.tensor([3, 0])
    outs = {"log_prob": d.log_prob(value), "entropy": d.entropy(), "probs": d.probs,
            "logits": d.logits}
    return param, outs


@parity
@pytest.mark.parametrize("by", ["logits", "probs"])
@pytest.mark.parametrize("what", ["log_prob", "entropy", "probs", "logits"])
def test_categorical_matches_torch_values_gradients_and_nodes(by, what):
    torch = _torch()
    results = []
    for lib in (gt, torch):
        param, outs = _categorical_case(lib, by)
        out = outs[what]
        (g,) = lib.autograd.grad(out.sum(), param)
        results.append((out.detach().numpy(), g.numpy(), _nodes(out)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-14)
    assert results[0][2] == results[1][2]


@parity
@pytest.mark.parametrize("what", ["log_prob", "entropy", "rsample", "cdf", "kl"])
@pytest.mark.parametrize("scale_kind", ["tensor", "number"])
def test_normal_matches_torch_values_gradients_and_nodes(what, scale_kind):
    torch = _torch()
    rng = np.random.default_rng(2)
    loc0, scale0 = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    value = rng.standard_normal(3)
    results = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        loc = lib.tensor(loc0, requires_grad=True)
        scale = lib.tensor(scale0, requires_grad=True) if scale_kind == "tensor" else 1.5
        d = lib.distributions.Normal(loc, scale)
        if what == "rsample":
            out = d.rsample((2,))
            eps = ((out - d.loc) / d.scale).detach()  # the draw itself differs between engines
            out = d.loc + eps.new_tensor(np.ones((2, 3))) * d.scale
        elif what == "kl":
            out = lib.distributions.kl_divergence(d, lib.distributions.Normal(0.5, 2.0))
        else:
            out = getattr(d, what)(lib.tensor(value)) if what != "entropy" else d.entropy()
        inputs = [loc] + ([scale] if scale_kind == "tensor" else [])
        grads = lib.autograd.grad(out.sum(), inputs, allow_unused=True) if out.requires_grad else []
        results.append((out.detach().numpy(), [g if g is None else g.numpy() for g in grads],
                        _nodes(out) if what != "rsample" else None))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    for mine, theirs in zip(results[0][1], results[1][1]):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)
    assert results[0][2] == results[1][2]


def test_categorical_samples_follow_the_probabilities():
    gt.manual_seed(0)
    d = gt.distributions.Categorical(probs=gt.tensor([[0.1, 0.6, 0.3], [1.0, 0.0, 0.0]]))
    s = d.sample((20000,))
    assert s.shape == (20000, 2) and s.dtype == gt.int64
    freq = np.bincount(s.numpy()[:, 0], minlength=3) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.6, 0.3], atol=0.015)
    assert (s.numpy()[:, 1] == 0).all()
    assert d.sample().shape == (2,) and d.batch_shape == (2,) and d.event_shape == ()


def test_normal_samples_and_rsample_gradient():
    gt.manual_seed(0)
    loc = gt.tensor([1.0, -2.0], dtype=gt.float64, requires_grad=True)
    d = gt.distributions.Normal(loc, gt.tensor([0.5, 2.0], dtype=gt.float64))
    s = d.sample((50000,))
    assert s.grad_fn is None and s.shape == (50000, 2)
    np.testing.assert_allclose(s.numpy().mean(0), [1, -2], atol=0.05)
    np.testing.assert_allclose(s.numpy().std(0), [0.5, 2], atol=0.05)
    (g,) = gt.autograd.grad(d.rsample((7,)).sum(), loc)
    np.testing.assert_allclose(g.numpy(), [7, 7])


@parity
def test_distribution_argument_validation_matches_torch():
    torch = _torch()
    for lib in (gt, torch):
        with pytest.raises(ValueError, match="constraint GreaterThan"):
            lib.distributions.Normal(lib.tensor([0.0]), lib.tensor([-1.0]))
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            lib.distributions.Categorical()
        with pytest.raises(ValueError, match=r"to be within the support \(IntegerInterval\("
                                             r"lower_bound=0, upper_bound=2\)\)"):
            lib.distributions.Categorical(logits=lib.zeros(3)).log_prob(lib.tensor(3))


# ---------------------------------- utils.data ----------------------------------
def test_dataloader_batches_shuffles_and_collates():
    from gradtool.engine.utils.data import DataLoader, TensorDataset, random_split
    gt.manual_seed(0)
    x, y = gt.arange(10.0).reshape(10, 1), gt.arange(10)
    ds = TensorDataset(x, y)
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[0].shape for b in batches] == [(4, 1), (4, 1), (2, 1)]
    assert batches[0][1].tolist() == [0, 1, 2, 3]
    loader = DataLoader(ds, batch_size=3, shuffle=True, drop_last=True, num_workers=2)
    seen = [i for _, yb in loader for i in yb.tolist()]
    assert len(loader) == 3 and len(seen) == 9 and len(set(seen)) == 9
    assert seen != sorted(seen)  # shuffled (seeded: the same order on every run)
    train, test = random_split(ds, [0.8, 0.2])
    assert (len(train), len(test)) == (8, 2)
    assert sorted(train.indices + test.indices) == list(range(10))
    dicts = list(DataLoader([{"a": 1.0, "b": [1, 2]}, {"a": 2.0, "b": [3, 4]}], batch_size=2))
    assert dicts[0]["a"].dtype == gt.float64 and dicts[0]["b"][1].tolist() == [2, 4]


@parity
def test_default_collate_matches_torch():
    torch = _torch()
    samples = [(np.float64(1.5), 3, [True, 2.0]), (np.float64(2.5), 4, [False, 1.0])]
    out = []
    for lib in (gt, torch):
        samples_lib = [(lib.tensor([a]), b, c) for a, b, c in samples]
        batch = lib.utils.data.default_collate(samples_lib) if lib is gt else \
            torch.utils.data.default_collate(samples_lib)
        out.append([(str(t.dtype).split(".")[-1], t.tolist()) for t in
                    [batch[0], batch[1], batch[2][0], batch[2][1]]])
    assert out[0] == out[1]
