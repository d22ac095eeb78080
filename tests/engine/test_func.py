"""torch.func on the engine: the transforms against closed forms and against torch.autograd
on the engine (per-sample gradients = the loop of per-example grads, hessian =
autograd.functional.hessian, jvp = forward_ad), their compositions, vmap's batching (the
common ops of an MLP and a CNN run no per-example fallback), functional_call, torch's
errors. The PROGRAMS take the torch module, so tests/parity/test_func.py runs the same ones
on PyTorch."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradtool as gt
from gradtool.engine.autograd import forward_ad as fwAD
from gradtool.engine.autograd import functional as AF
from gradtool.engine.func import rules
from gradtool.engine import func

RNG = np.random.default_rng(0)


def t(data, requires_grad=False):
    return gt.tensor(np.asarray(data), dtype=gt.float64, requires_grad=requires_grad)


def close(a, b, tol=1e-10):
    a = a.detach().numpy() if isinstance(a, gt.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, gt.Tensor) else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---------------- programs shared with the parity tests ----------------
def _same_weights(torch, model):
    """The same weights on either engine (their initialisers draw differently)."""
    rng = np.random.default_rng(3)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    return model


def mlp(torch, seed=0):
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    return _same_weights(torch, model.double())


def per_sample_grads(torch, x, y):
    """torch.func's tutorial: vmap(grad(loss)) over examples with functional_call."""
    model = mlp(torch)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xb, yb):
        out = torch.func.functional_call(model, p, (xb.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, yb.unsqueeze(0))
    return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


def cnn_per_sample_grads(torch, x, y):
    torch.manual_seed(0)
    F = torch.nn.functional
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 3, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(12, 4)).double()
    _same_weights(torch, model)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xb, yb):
        out = torch.func.functional_call(model, p, (xb.unsqueeze(0),))
        return F.cross_entropy(out, yb.unsqueeze(0)) + F.mse_loss(out.softmax(-1).sum(), out.sum())
    return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


def f_scalar(torch):
    return lambda x: (x.sin() * x.pow(2)).sum() + x.exp().mean()


def composed(torch, x):
    """The compositions torch documents, on one function."""
    F = torch.func
    f = f_scalar(torch)
    v = torch.ones_like(x)
    return {
        "grad": F.grad(f)(x),
        "grad_grad": F.grad(lambda x: F.grad(f)(x).sum())(x),
        "jacrev_jacrev": F.jacrev(F.jacrev(f))(x),
        "jacfwd_jacrev": F.jacfwd(F.jacrev(f))(x),
        "hessian": F.hessian(f)(x),
        "jvp_grad": F.jvp(F.grad(f), (x,), (v,))[1],
        "vmap_grad": F.vmap(F.grad(f))(torch.stack([x, 2 * x])),
        "grad_vmap": F.grad(lambda x: F.vmap(f)(torch.stack([x, x * x])).sum())(x),
        "jacrev_sin": F.jacrev(torch.sin)(x),
        "jacfwd_sin": F.jacfwd(torch.sin)(x),
        "vjp": F.vjp(torch.sin, x)[1](v)[0],
        "jvp": F.jvp(torch.sin, (x,), (v,))[1],
    }


def vmap_ops(torch, x, y, w):
    """vmap over the common ops, against their batched results."""
    V = torch.func.vmap
    return {
        "elementwise": V(lambda a, b: a * b + a.tanh() - b.exp() / 3)(x, y),
        "broadcast_unbatched": V(lambda a: a + w[:, 0])(x),
        "sum_dim": V(lambda a: a.sum(-1, keepdim=True))(x),
        "mean": V(lambda a: a.mean())(x),
        "matmul": V(lambda a: a @ w)(x),
        "mv": V(lambda m: m @ y[0])(torch.stack([w.t(), w.t()])),
        "softmax": V(lambda a: a.softmax(0))(x),
        "log_softmax_out1": V(lambda a: a.log_softmax(-1), out_dims=1)(x),
        "in_dims_1": V(lambda a: a.sum(0), in_dims=1)(x),
        "none_in_dim": V(lambda a, b: a * b, in_dims=(0, None))(x, y[0]),
        "nested": V(V(lambda a: a * a.sum()))(x.reshape(2, -1, x.shape[1])),
        "transpose_view": V(lambda a: a.reshape(2, -1).t().reshape(-1))(x),
        "index": V(lambda a: a[1:] * a[0])(x),
        "cat_stack": V(lambda a, b: torch.cat([a, b, w[:, 0]]).reshape(3, -1).sum(0))(x, y),
        "max_dim": V(lambda a: a.max(0).values)(x),
        "where": V(lambda a: torch.where(a > 0, a, a * 0.1))(x),
        "chunked": V(lambda a: a.cos(), chunk_size=3)(x),
        "tuple_out": V(lambda a: (a.sum(), a * 2), out_dims=(0, 1))(x),
    }


def functional_call_program(torch):
    """functional_call with a buffer and tied weights (one tensor under two names)."""
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 3, bias=False)
            self.b = torch.nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight
            self.register_buffer("shift", torch.ones(3))

        def forward(self, x):
            return self.b(self.a(x)) + self.shift
    torch.manual_seed(0)
    model = Tied().double()
    w = torch.eye(3, dtype=torch.float64) * 2
    x = torch.ones(2, 3, dtype=torch.float64)
    tied = torch.func.functional_call(model, {"a.weight": w}, (x,))
    with_buffer = torch.func.functional_call(
        model, ({"a.weight": w}, {"shift": torch.zeros(3, dtype=torch.float64)}), x)
    untied = torch.func.functional_call(model, {"a.weight": w}, (x,), tie_weights=False)
    return {"tied": tied, "with_buffer": with_buffer, "untied": untied,
            "model_weight_kept": model.a.weight.detach()}


def ensemble_program(torch):
    torch.manual_seed(0)
    models = [torch.nn.Linear(3, 2).double() for _ in range(4)]
    params, buffers = torch.func.stack_module_state(models)
    x = torch.ones(5, 3, dtype=torch.float64)

    def run(p, b, x):
        return torch.func.functional_call(models[0], (p, b), (x,))
    out = torch.func.vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    return {"out": out, "loop": torch.stack([m(x) for m in models]),
            "weight_requires_grad": params["weight"].requires_grad}


ERRORS = {  # name -> a program that raises torch's error
    "item": lambda torch, x: torch.func.vmap(lambda a: a.sum().item())(x),
    "control_flow": lambda torch, x: torch.func.vmap(lambda a: a if a.sum() > 0 else -a)(x),
    "randomness_error": lambda torch, x: torch.func.vmap(lambda a: a + torch.rand(3))(x),
    "randomness_name": lambda torch, x: torch.func.vmap(lambda a: a, randomness="foo")(x),
    "in_dim_range": lambda torch, x: torch.func.vmap(lambda a: a, in_dims=2)(x),
    "in_dims_structure": lambda torch, x: torch.func.vmap(lambda a: a, in_dims=(0, 0))(x),
    "sizes": lambda torch, x: torch.func.vmap(lambda a, b: a + b)(x, x[:2]),
    "non_tensor": lambda torch, x: torch.func.vmap(lambda a: a, in_dims=0)(1.0),
    "returns_float": lambda torch, x: torch.func.vmap(lambda a: 1.0)(x),
    "no_inputs": lambda torch, x: torch.func.vmap(lambda: x)(),
    "grad_not_scalar": lambda torch, x: torch.func.grad(lambda a: a)(x),
    "grad_argnum": lambda torch, x: torch.func.grad(lambda a: a.sum(), argnums=2)(x),
    "grad_aux": lambda torch, x: torch.func.grad(lambda a: a.sum(), has_aux=True)(x),
    "jvp_primals": lambda torch, x: torch.func.jvp(lambda a: a, x, x),
    "jvp_structure": lambda torch, x: torch.func.jvp(lambda a: a, (x,), (x, x)),
    "vjp_non_tensor": lambda torch, x: torch.func.vjp(lambda a: (a, 1), x),
    "stack_no_models": lambda torch, x: torch.func.stack_module_state([]),
    "out_dims_range": lambda torch, x: torch.func.vmap(lambda a: a, out_dims=3)(x),
    "out_dims_none_batched": lambda torch, x: torch.func.vmap(lambda a: a, out_dims=None)(x),
    "out_dims_structure":
        lambda torch, x: torch.func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x),
    "in_dims_list": lambda torch, x: torch.func.vmap(lambda a: a, in_dims=[0])(x),
    "in_dim_float": lambda torch, x: torch.func.vmap(lambda a: a, in_dims=(0.5,))(x),
    "chunk_size": lambda torch, x: torch.func.vmap(lambda a: a, chunk_size=0)(x),
    "grad_int_input": lambda torch, x: torch.func.grad(lambda a: a.sum())(torch.tensor([1, 2])),
    "grad_argnums_repeated":
        lambda torch, x: torch.func.grad(lambda a, b: a.sum(), argnums=(0, 0))(x, x),
    "jacrev_chunk_size": lambda torch, x: torch.func.jacrev(lambda a: a, chunk_size=0)(x),
    "vjp_cotangent_structure": lambda torch, x: torch.func.vjp(lambda a: (a, a), x)[1](x),
    "inplace_into_unbatched": lambda torch, x: torch.func.vmap(lambda a: x[0].clone().add_(a))(x),
    "functional_call_repeated_key": lambda torch, x: torch.func.functional_call(
        torch.nn.Linear(4, 2), ({"weight": x}, {"weight": x}), (x,)),
    "functional_call_not_a_dict":
        lambda torch, x: torch.func.functional_call(torch.nn.Linear(4, 2), 3, (x,)),
    "stack_modes": lambda torch, x: torch.func.stack_module_state(
        [torch.nn.Linear(1, 1), torch.nn.Linear(1, 1).eval()]),
    "vmap_rule_one_return": lambda torch, x: torch.func.vmap(_rule_returning(torch, 1))(x),
    "vmap_rule_out_dims": lambda torch, x: torch.func.vmap(_rule_returning(torch, 2))(x),
}


def _rule_returning(torch, kind):
    """A Function whose vmap staticmethod returns only its output (1), or out_dims that do
    not fit its outputs (2)."""
    class Rule(torch.autograd.Function):
        @staticmethod
        def forward(a):
            return a * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, a):
            return a * 2 if kind == 1 else ((a * 2, a * 3), (0, 0, 0))
    return Rule.apply


def error_of(torch, name, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            ERRORS[name](torch, x)
    return type(info.value).__name__, str(info.value)


def data(torch, n=6):
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((n, 4)), dtype=torch.float64)
    y = torch.tensor(rng.standard_normal((n, 4)), dtype=torch.float64)
    w = torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float64)
    return x, y, w


# ---------------- values ----------------
def test_per_sample_grads_of_an_mlp_are_the_loop_of_per_example_grads():
    x = t(RNG.standard_normal((7, 6)))
    y = gt.tensor([0, 1, 2, 0, 1, 2, 1])
    rules.FALLBACKS.clear()
    grads = per_sample_grads(gt, x, y)
    assert not rules.FALLBACKS, "an MLP's ops all have batching rules"
    model = mlp(gt)
    for i in range(7):
        loss = gt.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1])
        expected = gt.autograd.grad(loss, list(model.parameters()))
        for (name, _), e in zip(model.named_parameters(), expected):
            close(grads[name][i], e)
    assert all(g.grad_fn is None and not g.requires_grad for g in grads.values())


def test_per_sample_grads_of_a_cnn_run_no_per_example_fallback():
    x = t(RNG.standard_normal((3, 1, 6, 6)))
    y = gt.tensor([0, 3, 1])
    rules.FALLBACKS.clear()
    grads = cnn_per_sample_grads(gt, x, y)
    assert not rules.FALLBACKS
    assert grads["0.weight"].shape == (3, 3, 1, 3, 3)


def test_composed_transforms_match_autograd_on_the_engine():
    x = t(RNG.standard_normal(4))
    out = composed(gt, x)
    f = f_scalar(gt)
    hess = AF.hessian(f, x)
    d = (2 * x * x.sin() + x * x * x.cos() + x.exp() / 4)
    close(out["grad"], d)
    for name in ("jacrev_jacrev", "jacfwd_jacrev", "hessian"):
        close(out[name], hess)
    close(out["grad_grad"], hess.sum(0))
    close(out["jvp_grad"], hess @ gt.ones_like(x))
    close(out["vmap_grad"][1], gt.func.grad(f)(2 * x))
    xs = x.detach().requires_grad_()
    close(out["grad_vmap"], gt.autograd.grad(f(xs) + f(xs * xs), xs)[0])
    close(out["jacrev_sin"], AF.jacobian(gt.sin, x))
    close(out["jacfwd_sin"], AF.jacobian(gt.sin, x))
    close(out["vjp"], x.cos())
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(gt.sin(fwAD.make_dual(x, gt.ones_like(x)))).tangent
    close(out["jvp"], tangent)
    assert all(v.grad_fn is None for v in out.values())


def test_vmap_ops_equal_the_per_example_loop():
    x, y, w = data(gt)
    out = vmap_ops(gt, x, y, w)
    assert not rules.FALLBACKS.get("mul")
    close(out["elementwise"], x * y + x.tanh() - y.exp() / 3)
    close(out["sum_dim"], x.sum(-1, keepdim=True))
    close(out["mean"], x.mean(1))
    close(out["matmul"], x @ w)
    close(out["softmax"], x.softmax(1))
    close(out["log_softmax_out1"], x.log_softmax(-1).t())
    close(out["in_dims_1"], x.sum(0))
    close(out["nested"], (x.reshape(2, -1, 4) * x.reshape(2, -1, 4).sum(-1, keepdim=True)))
    close(out["index"], x[:, 1:] * x[:, :1])
    close(out["max_dim"], x.max(1).values)
    close(out["where"], gt.where(x > 0, x, x * 0.1))
    close(out["chunked"], x.cos())
    close(out["tuple_out"][1], (x * 2).t())


def test_vmap_of_grad_is_per_sample_and_grad_of_vmap_sums():
    x = t(RNG.standard_normal((3, 2)))
    per_sample = func.vmap(func.grad(lambda a: (a ** 3).sum()))(x)
    close(per_sample, 3 * x ** 2)
    total = func.grad(lambda a: func.vmap(lambda r: (r ** 3).sum())(a).sum())(x)
    close(total, 3 * x ** 2)


def test_grad_sees_differentiable_copies_and_leaks_no_graph():
    x = t([1.0, 2.0])
    seen = []

    def f(a):
        seen.append(a.requires_grad)
        return (a * a).sum()
    g, value = func.grad_and_value(f)(x)
    assert seen == [True] and not x.requires_grad
    assert g.grad_fn is None and value.grad_fn is None
    close(g, 2 * x)
    # an outer regular autograd level: the result is differentiable, as torch's
    xr = t([1.0, 2.0], requires_grad=True)
    g = func.grad(lambda a: (a ** 3).sum())(xr)
    assert g.requires_grad
    close(gt.autograd.grad(g.sum(), xr)[0], 6 * xr)


def test_grad_argnums_and_aux():
    x, y = t([1.0, 2.0]), t([3.0, 4.0])
    gx, gy = func.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y)
    close(gx, y)
    close(gy, x)
    g, aux = func.grad(lambda a: ((a * a).sum(), {"double": a * 2}), has_aux=True)(x)
    close(aux["double"], 2 * x)
    assert aux["double"].grad_fn is None


def test_jacrev_and_jacfwd_of_several_outputs_and_arguments():
    x, y = t([1.0, 2.0]), t([3.0, 4.0, 5.0])

    def f(a, b):
        return a.sum() * b, (a * a)
    for jac in (func.jacrev, func.jacfwd):
        (ja, jb), (ja2, jb2) = jac(f, argnums=(0, 1))(x, y)
        close(ja, y.unsqueeze(1).expand(3, 2))
        close(jb, gt.eye(3, dtype=gt.float64) * 3)
        close(ja2, np.diag(2 * x.numpy()))
        close(jb2, np.zeros((2, 3)))


def test_vjp_and_jvp_have_torchs_structure():
    x = t([0.5, 1.0])
    out, fn = func.vjp(lambda a: (a.sin(), a.cos()), x)
    (g,) = fn((gt.ones_like(x), gt.ones_like(x)))
    close(g, x.cos() - x.sin())
    value, tangent = func.jvp(lambda a, b: a * b, (x, x), (gt.ones_like(x), gt.zeros_like(x)))
    close(value, x * x)
    close(tangent, x)


def test_functional_call_with_tied_weights_and_buffers():
    out = functional_call_program(gt)
    w = np.eye(3) * 2
    close(out["tied"], np.ones((2, 3)) @ w @ w + 1)
    close(out["with_buffer"], np.ones((2, 3)) @ w @ w)
    assert not np.allclose(out["untied"].detach().numpy(), out["tied"].detach().numpy())
    assert not np.allclose(out["model_weight_kept"].numpy(), w)  # the module is restored


def test_functional_call_strict_names_missing_and_unexpected_keys():
    model = gt.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'.\n\tMissing key\\(s\\): "
                                           "'weight', 'bias'."):
        func.functional_call(model, {"nope": gt.ones(2)}, (gt.ones(2),), strict=True)


def test_stack_module_state_runs_an_ensemble_under_vmap():
    out = ensemble_program(gt)
    close(out["out"], out["loop"])
    assert out["weight_requires_grad"]


def test_torch_func_and_functorch_names():
    assert gt.func.vmap is func.vmap and gt.vmap is func.vmap  # (torch.vmap too)
    from gradtool.engine.func import functorch
    assert functorch.grad is func.grad and functorch.jacrev is func.jacrev
    with gt.as_torch():
        import functorch as old
        import torch.func as new
        assert old.vmap is new.vmap is func.vmap
    with pytest.raises(gt.engine.errors.NotInEngineError, match="make_functional"):
        functorch.make_functional(gt.nn.Linear(1, 1))


# ---------------- errors ----------------
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    kind, message = error_of(gt, name, data(gt)[0])
    assert kind in ("RuntimeError", "ValueError", "IndexError"), message


def test_item_and_control_flow_messages():
    x = data(gt)[0]
    assert error_of(gt, "item", x)[1].startswith("vmap: It looks like you're calling .item()")
    assert "data-dependent control flow" in error_of(gt, "control_flow", x)[1]
    assert "randomness error mode" in error_of(gt, "randomness_error", x)[1]


def test_randomness_same_and_different():
    x = gt.zeros(4, 3)
    gt.manual_seed(0)
    same = func.vmap(lambda a: a + gt.rand(3), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        different = func.vmap(lambda a: a + gt.rand(3), randomness="different")(x)
    assert not np.allclose(different.numpy(), different.numpy()[0])


# ---------------- custom Functions ----------------
class Double(gt.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def vmap(info, in_dims, x):
        return x * 2, in_dims[0]


class Cube(gt.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class OldStyle(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_functions_under_vmap_and_grad():
    x = t(RNG.standard_normal((3, 2)))
    close(func.vmap(Double.apply)(x), 2 * x)
    close(func.vmap(Cube.apply)(x), x ** 3)
    close(func.vmap(func.grad(lambda a: Cube.apply(a).sum()))(x), 3 * x ** 2)
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        func.grad(lambda a: OldStyle.apply(a).sum())(x)
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        func.vmap(OldStyle.apply)(x)


# ---------------- in_dims, out_dims and batch sizes ----------------
OPS = {
    "exp": lambda a: a.exp(), "mul_self": lambda a: a * a + 1, "sum": lambda a: a.sum(),
    "sum_last": lambda a: a.sum(-1), "mean_first": lambda a: a.mean(0, keepdim=True),
    "amax": lambda a: a.amax(-1), "softmax": lambda a: a.softmax(-1),
    "logsumexp": lambda a: a.logsumexp(0), "var": lambda a: a.var(-1),
}


@settings(max_examples=20, deadline=None, derandomize=True)
@given(op=st.sampled_from(sorted(OPS)), batch=st.integers(1, 4), in_dim=st.integers(-3, 2),
       out_dim=st.integers(-1, 0), shape=st.lists(st.integers(1, 3), min_size=2, max_size=2))
def test_vmap_equals_the_loop_over_in_dims_and_out_dims(op, batch, in_dim, out_dim, shape):
    fn = OPS[op]
    full = list(shape)
    full.insert(in_dim % 3, batch)
    x = t(np.random.default_rng(batch).standard_normal(full))
    rules.FALLBACKS.clear()
    out = func.vmap(fn, in_dims=in_dim, out_dims=out_dim)(x)
    assert not rules.FALLBACKS
    expected = gt.stack([fn(x.select(in_dim % 3, b)) for b in range(batch)], out_dim)
    close(out, expected)


def structures(torch, x, y):
    """Output structures: argnums tuples, several outputs, has_aux, pytrees in and out."""
    F = torch.func

    def f(a, b):
        return {"prod": a * b.sum(), "sq": (a * a).sum()}, a.cos()

    def g(d, s):
        return (d["u"] * d["v"]).sum() * s
    jr, aux_r = F.jacrev(f, argnums=(0, 1), has_aux=True)(x, y)
    jf, aux_f = F.jacfwd(f, argnums=(0, 1), has_aux=True)(x, y)
    value, jvp_out, jvp_aux = F.jvp(f, (x, y), (torch.ones_like(x), torch.zeros_like(y)),
                                    has_aux=True)
    grads, value_g = F.grad_and_value(g)({"u": x, "v": y}, 2.0)
    batched = F.vmap(lambda d, c: (d["u"] + c[0], d["v"] * c[1]),
                     in_dims=({"u": 0, "v": 1}, (None, 0)))(
        {"u": x.reshape(2, -1), "v": y.reshape(-1, 2)}, (x[0], y[:2]))
    return {"jacrev": jr, "jacrev_aux": aux_r, "jacfwd": jf, "jacfwd_aux": aux_f,
            "jvp_value": value, "jvp": jvp_out, "jvp_aux": jvp_aux, "grad_dict": grads,
            "value": value_g, "vmap_trees": batched}


def test_structures_of_the_transforms():
    x, y = t(RNG.standard_normal(4)), t(RNG.standard_normal(4))
    out = structures(gt, x, y)
    for a, b in zip(out["jacrev"]["prod"], out["jacfwd"]["prod"]):
        close(a, b)
    close(out["jacrev"]["sq"][0], 2 * x)
    close(out["jacrev_aux"], x.cos())
    close(out["grad_dict"]["u"], 2.0 * y)
    close(out["vmap_trees"][0], x.reshape(2, -1) + x[0])


def custom_function_program(torch, x, w):
    """Custom Functions under vmap: a vmap staticmethod, and generate_vmap_rule (forward and
    backward on the batched values), with vmap(grad) and grad(vmap)."""
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(a, b):
            return a * b

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

        @staticmethod
        def vmap(info, in_dims, a, b):
            a = a if in_dims[0] is not None else a.expand(info.batch_size, *a.shape)
            return a * b, 0

    class Generated(Scale):
        generate_vmap_rule = True
        vmap = torch.autograd.Function.vmap

    V, G = torch.func.vmap, torch.func.grad
    return {
        "vmap_rule": V(Scale.apply, in_dims=(0, None))(x, w),
        "generated": V(Generated.apply, in_dims=(0, None))(x, w),
        "vmap_grad": V(G(lambda a: Generated.apply(a, w).pow(2).sum()))(x),
        "grad_vmap": G(lambda b: V(Generated.apply, in_dims=(0, None))(x, b).sum())(w),
    }


def test_custom_function_program():
    x, w = t(RNG.standard_normal((3, 2))), t(RNG.standard_normal(2))
    out = custom_function_program(gt, x, w)
    close(out["vmap_rule"], x * w)
    close(out["generated"], x * w)
    close(out["vmap_grad"], 2 * x * w * w)
    close(out["grad_vmap"], x.sum(0))


def telltale_function_program(torch, x, w):
    """Which formula differentiates a Function with a vmap staticmethod: its forward a * b,
    its vmap rule a * b * 3 and its backward (g * 100 * b, g * 7 * a) deliberately
    disagree. With the grad transform inside the vmap (vmap(grad), vmap(vjp), vmap(jacrev))
    torch's grad level records the Function, differentiated by its backward (per example);
    with the vmap inside (grad(vmap), jacrev(vmap), backward through vmap's result) the
    rule's ops are recorded and differentiated."""
    class Telltale(torch.autograd.Function):
        @staticmethod
        def forward(a, b):
            return a * b

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * 100 * b, g * 7 * a

        @staticmethod
        def vmap(info, in_dims, a, b):
            a = a if in_dims[0] is not None else a.expand(info.batch_size, *a.shape)
            b = b if in_dims[1] is not None else b.expand(info.batch_size, *b.shape)
            return a * b * 3, 0

    F = torch.func
    both = F.vmap(F.grad(lambda a, b: Telltale.apply(a, b).sum(), argnums=(0, 1)),
                  in_dims=(0, None))(x, w)
    value, pull = F.vjp(lambda a: F.vmap(Telltale.apply, in_dims=(0, None))(a, w), x)
    leaf = x.detach().requires_grad_()
    (through_result,) = torch.autograd.grad(
        F.vmap(Telltale.apply, in_dims=(0, None))(leaf, w).sum(), leaf)
    return {
        "vmap_grad": both,
        "vmap_vjp": F.vmap(lambda a: F.vjp(lambda c: Telltale.apply(c, w), a)[0])(x),
        "vmap_vjp_pull": F.vmap(lambda a: F.vjp(lambda c: Telltale.apply(c, w), a)[1](
            torch.ones_like(a)))(x),
        "vmap_jacrev": F.vmap(F.jacrev(Telltale.apply), in_dims=(0, None))(x, w),
        "grad_vmap": F.grad(lambda b: F.vmap(Telltale.apply, in_dims=(0, None))(x, b).sum())(
            w),
        "vjp_vmap": (value, pull(torch.ones_like(value))),
        "backward_through_vmap": through_result,
    }


def nested_forward_program(torch, x, v, w):
    """Forward mode inside forward mode: jvp(jvp), jacfwd(jacfwd), three jacfwds, jacfwd
    over jacrev, and a vmap over jvp(jvp)."""
    F = torch.func

    def f(a):
        return (a.sin() * a.exp()).sum() * a[0] + a.pow(3)

    def inner(a):
        return F.jvp(f, (a,), (v,))[1]

    def scalar(a):
        return (a.sin() * a.exp()).sum() * a[0]
    return {
        "jvp_jvp": F.jvp(inner, (x,), (w,)),
        "jacfwd_jacfwd": F.jacfwd(F.jacfwd(scalar))(x),
        "jacfwd_cubed": F.jacfwd(F.jacfwd(F.jacfwd(lambda a: a.sin().sum() * a[0])))(x),
        "jacfwd_jacrev": F.jacfwd(F.jacrev(lambda a: (a.tanh() * a).sum()))(x),
        "vmap_jvp_jvp": F.vmap(lambda a: F.jvp(inner, (a,), (w,))[1])(
            torch.stack([x, 2 * x])),
    }


def test_forward_mode_nests():
    x, v, w = t([0.3, -0.7, 1.1]), t([1.0, 0.5, -2.0]), t([0.2, 1.0, 0.4])
    out = nested_forward_program(gt, x, v, w)

    def f(a):
        return (a.sin() * a.exp()).sum() * a[0] + a.pow(3)
    # the second directional derivative, from the Hessians of reverse mode
    hessians = AF.jacobian(lambda a: AF.jacobian(f, a, create_graph=True), x)  # (3, 3, 3)
    expected = (hessians * v.reshape(1, 3, 1) * w.reshape(1, 1, 3)).sum((1, 2))
    close(out["jvp_jvp"][1], expected)
    close(out["jvp_jvp"][0], AF.jacobian(f, x) @ v)

    def directional(a):  # central differences of the inner jvp along w
        return AF.jacobian(f, a) @ v
    eps = 1e-6
    close(out["jvp_jvp"][1], (directional(x + eps * w) - directional(x - eps * w)) / (2 * eps),
          tol=1e-6)
    scalar = lambda a: (a.sin() * a.exp()).sum() * a[0]  # noqa: E731
    close(out["jacfwd_jacfwd"], AF.hessian(scalar, x))
    sech2 = 1 - x.tanh() ** 2
    close(out["jacfwd_jacrev"], gt.diag(2 * sech2 - 2 * x * x.tanh() * sech2))
    third = out["jacfwd_cubed"]  # d3/da3 of sin(a).sum() * a0: closed form
    assert tuple(third.shape) == (3, 3, 3)
    close(third[0, 0, 0], -x[0].cos() * x[0] - 3 * x[0].sin())
    close(third[1, 1, 0], -x[1].sin())
    close(out["vmap_jvp_jvp"][0], out["jvp_jvp"][1])


def test_a_function_with_a_vmap_rule_is_differentiated_as_torch_does():
    x, w = t(RNG.standard_normal((3, 2))), t(RNG.standard_normal(2))
    out = telltale_function_program(gt, x, w)
    per_example = gt.ones_like(x)
    close(out["vmap_grad"][0], 100 * w * per_example)  # the backward, each example's own
    close(out["vmap_grad"][1], 7 * x)
    close(out["vmap_vjp"], 3 * x * w)  # the value: the rule's
    close(out["vmap_vjp_pull"][0], 100 * w * per_example)
    close(out["vmap_jacrev"], gt.stack([gt.diag(100 * w)] * 3))
    close(out["grad_vmap"], 3 * x.sum(0))  # the rule's ops
    close(out["vjp_vmap"][0], 3 * x * w)
    close(out["vjp_vmap"][1][0], 3 * w * per_example)
    close(out["backward_through_vmap"], 3 * w * per_example)


# ---------------- a sweep of ops: vmap and vmap(grad) equal the per-example loop ----------------
_SWEEP_RNG = np.random.default_rng(0)


def _T(*shape):
    return gt.tensor(_SWEEP_RNG.standard_normal(shape), dtype=gt.float64)


F = gt.nn.functional
W = _T(4, 3)
V = _T(4)
IDX = gt.tensor([2, 0, 1])
CLASS_WEIGHTS = gt.tensor([1., 2., 3., 4.], dtype=gt.float64)
TARGET = _T(3, 4).sigmoid()  # unbatched targets and weights of the losses
SCATTER_INDEX = gt.tensor([[0, 1, 2, 3]] * 3)
SWEEP = {  # name -> one example's computation, on a (3, 4) float64 example
    "scatter_add_into_self": lambda a: a.scatter_add(1, SCATTER_INDEX, a * a),
    "scatter_value": lambda a: a.scatter(1, SCATTER_INDEX[:, :2], 0.5),
    "index_add": lambda a: a.index_add(1, IDX[:2], a[:, :2]),
    "index_add_": lambda a: a.clone().index_add_(0, IDX[:2], a[:2] * 2),
    "transpose_": lambda a: a.clone().transpose_(0, 1),
    "mse_shared_target": lambda a: F.mse_loss(a, TARGET),
    "bce_weight": lambda a: F.binary_cross_entropy(a.sigmoid(), TARGET, weight=V),
    "bcel_pos_weight": lambda a: F.binary_cross_entropy_with_logits(a, TARGET, pos_weight=V),
    "huber_sum": lambda a: F.huber_loss(a, TARGET, reduction="sum"),
    "var_corr": lambda a: a.var(0, correction=0),
    "std": lambda a: a.std(),
    "norm": lambda a: a.norm(),
    "norm_dim": lambda a: a.norm(dim=1),
    "topk": lambda a: a.topk(2, dim=-1).values,
    "sort": lambda a: a.sort(0).values,
    "argsort": lambda a: a.argsort(-1),
    "split": lambda a: a.split(2, dim=1)[1],
    "unbind": lambda a: a.unbind(1)[0],
    "chunk": lambda a: a.chunk(2, 0)[0],
    "squeeze": lambda a: a.unsqueeze(1).squeeze(),
    "squeeze1": lambda a: a.unsqueeze(1).squeeze(1),
    "expand": lambda a: a[:, :1].expand(3, 4),
    "repeat": lambda a: a.repeat(2, 1, 1),
    "flip": lambda a: a.flip(0),
    "roll": lambda a: a.roll(1, 1),
    "cumsum": lambda a: a.cumsum(1),
    "cumprod": lambda a: a.cumprod(0),
    "gather": lambda a: a.gather(1, gt.tensor([[0], [1], [2]])),
    "index_tensor": lambda a: a[IDX],
    "index_2d": lambda a: a[:, IDX],
    "index_bool": lambda a: a[a.new_ones(3).bool()],
    "embedding": lambda a: F.embedding(gt.tensor([0, 2]), a),
    "layer_norm": lambda a: F.layer_norm(a, (4,)),
    "mse_none": lambda a: F.mse_loss(a, a * 2, reduction="none"),
    "mse_sum": lambda a: F.mse_loss(a, a.detach() + 1, reduction="sum"),
    "bce_logits": lambda a: F.binary_cross_entropy_with_logits(a, a.sigmoid().detach()),
    "smooth_l1": lambda a: F.smooth_l1_loss(a, a.flip(0)),
    "ce_2d": lambda a: F.cross_entropy(a, gt.tensor([0, 1, 3])),
    "ce_mean_w": lambda a: F.cross_entropy(a, gt.tensor([0, 1, 3]), weight=CLASS_WEIGHTS),
    "ce_none": lambda a: F.cross_entropy(a, gt.tensor([0, 1, 3]), reduction="none"),
    "ce_ignore": lambda a: F.cross_entropy(a, gt.tensor([0, -100, 3])),
    "nll_1d": lambda a: F.nll_loss(a[0].log_softmax(0), gt.tensor(2)),
    "linear1d": lambda a: F.linear(a[0], W.t(), V[:3]),
    "linear2d": lambda a: F.linear(a, W.t()),
    "bmm": lambda a: gt.bmm(a.unsqueeze(0), W.unsqueeze(0)),
    "baddbmm":
        lambda a: gt.baddbmm(gt.zeros(1, 3, 3, dtype=gt.float64), a.unsqueeze(0), W.unsqueeze(0)),
    "dot": lambda a: gt.dot(a[0], V),
    "mv": lambda a: gt.mv(a, V),
    "matmul_vec": lambda a: V @ a.t(),
    "clamp": lambda a: a.clamp(-0.5, 0.5),
    "where_b": lambda a: gt.where(a > 0, a, V),
    "inplace_add": lambda a: a.clone().add_(1),
    "inplace_mul_b": lambda a: a.clone().mul_(a),
    "relu_": lambda a: F.relu(a.clone(), inplace=True),
    "setitem": lambda a: _setitem(a),
    "zeros_like": lambda a: gt.zeros_like(a) + a,
    "new_zeros": lambda a: a.new_zeros(4) + a[0],
    "to_float": lambda a: a.float().double(),
    "compare": lambda a: (a > 0).double(),
    "argmax": lambda a: a.argmax(-1),
    "any": lambda a: (a > 0).any(),
    "pow": lambda a: a ** 2 + 2 ** a,
    "rsub": lambda a: 1 - a,
    "div_num": lambda a: 2 / a,
    "abs_sign": lambda a: a.abs() * a.sign(),
    "maximum": lambda a: gt.maximum(a, V),
    "mean_dims": lambda a: a.mean((0, 1)),
    "sum_keep": lambda a: a.sum(0, keepdim=True),
    "prod": lambda a: a.prod(),
    "max_all": lambda a: a.max(),
    "min_dim": lambda a: a.min(1)[1],
    "amax": lambda a: a.amax((0, 1)),
    "logsumexp": lambda a: a.logsumexp(1),
    "softmax0": lambda a: F.softmax(a, 0),
    "gelu": lambda a: F.gelu(a),
    "silu": lambda a: F.silu(a),
    "elu": lambda a: F.elu(a),
    "softplus": lambda a: F.softplus(a),
    "leaky": lambda a: F.leaky_relu(a),
    "dropout_eval": lambda a: F.dropout(a, 0.5, training=False),
    "permute": lambda a: a.permute(1, 0),
    "transpose": lambda a: a.transpose(0, 1),
    "mT": lambda a: a.mT,
    "view": lambda a: a.view(-1),
    "flatten": lambda a: a.flatten(),
    "reshape_nc": lambda a: a.t().reshape(-1),
    "narrow": lambda a: a.narrow(1, 1, 2),
    "select": lambda a: a[1, 2],
    "slice_step": lambda a: a[::2, 1:],
    "none_index": lambda a: a[None, :, None],
    "cat0": lambda a: gt.cat([a, a], 0),
    "stack1": lambda a: gt.stack([a, a * 2], 1),
    "tril": lambda a: a.tril(),
    "diag": lambda a: gt.diag(a[:, :3]),
    "diagonal": lambda a: a.diagonal(),
    "einsum": lambda a: gt.einsum("ij,jk->ik", a, W),
    "outer": lambda a: gt.outer(a[0], V),
    "tile": lambda a: a.tile(2),
    "conv1d_unb": lambda a: F.conv1d(a.unsqueeze(0), gt.ones(2, 3, 2, dtype=gt.float64)),
    "maxpool": lambda a: F.max_pool2d(a.reshape(1, 1, 3, 4), 2, ceil_mode=True),
    "avgpool": lambda a: F.avg_pool2d(a.reshape(1, 3, 4), (1, 2)),
    "adaptive": lambda a: F.adaptive_avg_pool2d(a.reshape(1, 1, 3, 4), 1),
    "pad": lambda a: F.pad(a, (1, 1)),
    "normalize": lambda a: F.normalize(a, dim=1),
    "one_hot": lambda a: F.one_hot(a.argmax(-1), 4),
    "sum_to_size": lambda a: a.sum_to_size(1, 4),
    "masked_fill": lambda a: a.masked_fill(a > 0, 0.0),
    "item_free_len": lambda a: a[: len(a) - 1],
    "numel_shape": lambda a: a.reshape(a.shape[0], -1) * a.numel(),
    "std_mean": lambda a: gt.std_mean(a, 1)[0],
    "inv": lambda a: gt.linalg.inv(a[:, :3] + 3 * gt.eye(3, dtype=gt.float64)),
    "det": lambda a: gt.linalg.det(a[:, :3]),
    "sigmoid_bce": lambda a: F.binary_cross_entropy(a.sigmoid(), (a > 0).double()),
    "index_select": lambda a: a.index_select(1, IDX),
    "scatter_add":
        lambda a: gt.zeros(3, 4, dtype=gt.float64).scatter_add(1, gt.tensor([[0, 1, 2, 3]] * 3), a),
    # indices that differ per example (computed from it): one advanced indexing for the batch
    "index_per_example": lambda a: a[a.argmax(0)],
    "index_per_example_cols": lambda a: a[:, a[0].argsort()[:2]],
    "index_per_example_pair": lambda a: a[a.argmax(0) % 3, a.argmin(0)],
    "index_per_example_int": lambda a: a[1, a.argmax(1)],
    "index_per_example_ellipsis": lambda a: a[..., a.argmin(1) % 4],
    "index_per_example_separated":
        lambda a: a.reshape(3, 2, 2)[a.argmax(1)[:2] % 3, :, a.argmin(0)[:2] % 2],
    "index_shared_table": lambda a: W[a.argmax(1)] * a[:, :1],
    "remainder": lambda a: a.remainder(0.3) + a.fmod(0.4) + a.floor() + a.ceil() + a.trunc(),
    "hard_acts": lambda a: F.hardtanh(a) + F.hardsigmoid(a) + F.hardswish(a) + F.mish(a),
    "log2_exp2": lambda a: a.exp2().log2() + a.abs().log10() + gt.lerp(a, a * 2, 0.3),
    "log_sigmoid": lambda a: F.logsigmoid(a),
    "batch_norm_eval": lambda a: F.batch_norm(a, V[:4] * 0.1, V[:4].abs() + 0.5, V, V * 2),
    "batch_norm_train": lambda a: F.batch_norm(a, None, None, V, V * 2, training=True),
    "batch_norm_3d": lambda a: F.batch_norm(a.reshape(1, 4, 3), None, None, training=True),
    "group_norm": lambda a: F.group_norm(a.reshape(1, 4, 3), 2, V, V),
    "rnn_cell": lambda a: _cell(gt.nn.RNNCell)(a, a[:, :3]),
    "lstm_cell": lambda a: _cell(gt.nn.LSTMCell)(a, (a[:, :3], a[:, 1:]))[1],
    "gru_cell": lambda a: _cell(gt.nn.GRUCell)(a),
    "lstm_layers": lambda a: _cell(gt.nn.LSTM, num_layers=2)(a)[0],
    "gru_bidirectional": lambda a: _cell(gt.nn.GRU, bidirectional=True, batch_first=True)(
        a.unsqueeze(0))[1],
    "rnn_relu": lambda a: _cell(gt.nn.RNN, nonlinearity="relu")(a.unsqueeze(1))[0],
}


def _recurrent(kind, **kwargs):
    """A module (4 inputs, hidden 3) with weights of its own, made outside vmap."""
    module = kind(4, 3, **kwargs).double()
    rng = np.random.default_rng(2)
    with gt.no_grad():
        for p in module.parameters():
            p.copy_(gt.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    return module


_CELLS = {(gt.nn.RNNCell, ()): _recurrent(gt.nn.RNNCell),
          (gt.nn.LSTMCell, ()): _recurrent(gt.nn.LSTMCell),
          (gt.nn.GRUCell, ()): _recurrent(gt.nn.GRUCell),
          (gt.nn.LSTM, (("num_layers", 2),)): _recurrent(gt.nn.LSTM, num_layers=2),
          (gt.nn.GRU, (("batch_first", True), ("bidirectional", True))):
              _recurrent(gt.nn.GRU, bidirectional=True, batch_first=True),
          (gt.nn.RNN, (("nonlinearity", "relu"),)): _recurrent(gt.nn.RNN, nonlinearity="relu")}


def _cell(kind, **kwargs):
    return _CELLS[(kind, tuple(sorted(kwargs.items())))]


def _setitem(a):
    b = a.clone()
    b[0] = b[1] * 2
    b[:, 1] = 0.0
    return b


# ops with no batching rule yet (the fallback runs them): one_hot reads its indices' values
# with numpy (their range, the class count)
ONE_AT_A_TIME = {"one_hot"}


@pytest.mark.parametrize("name", sorted(SWEEP))
def test_vmap_and_per_sample_grads_of_each_op_equal_the_loop(name):
    fn = SWEEP[name]
    x = t(np.random.default_rng(7).standard_normal((5, 3, 4)))
    rules.FALLBACKS.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        close(func.vmap(fn)(x), gt.stack([fn(x[i]) for i in range(5)]))
        # (nor the whole function one example at a time)
        assert not [w for w in caught if "one example at a time" in str(w.message)] or \
            name in ONE_AT_A_TIME
        if not fn(x[0]).is_floating_point():
            return

        def f(a):
            return fn(a).sin().sum()
        expected = []
        for i in range(5):
            xi = x[i].detach().requires_grad_()
            y = f(xi)
            g = gt.autograd.grad(y, xi, allow_unused=True)[0] if y.requires_grad else None
            expected.append(gt.zeros_like(xi) if g is None else g)
        close(func.vmap(func.grad(f))(x), gt.stack(expected))
    assert not rules.FALLBACKS or name in ONE_AT_A_TIME, dict(rules.FALLBACKS)


def batching_rules_program(torch, x, w):
    """Per-example indices, batch norm (eval; training with and without running statistics;
    torch's refusal of shared running statistics that each example would update) and the
    RNN cells torch batches, under vmap, with per-sample gradients."""
    F, Fn = torch.func, torch.nn.functional
    idx = torch.tensor([[0, 2], [1, 1], [3, 0], [2, 2]])
    means, variances = torch.zeros(4, 3, dtype=x.dtype), torch.ones(4, 3, dtype=x.dtype)
    out = {
        "rows": F.vmap(lambda a, i: a[i])(x, idx),
        "cols": F.vmap(lambda a, i: a[:, i])(x, idx % 3),
        "pairs": F.vmap(lambda a, i: a[i, i.flip(0) % 3])(x, idx),
        "shared_table": F.vmap(lambda i: x[0][i])(idx),
        "rows_grad": F.vmap(F.grad(lambda a, i: a[i].sin().sum()))(x, idx),
        "bn_eval": F.vmap(lambda a: Fn.batch_norm(a, w * 0.1, w.abs() + 0.5, w, w * 2))(x),
        "bn_train": F.vmap(lambda a: Fn.batch_norm(a, None, None, w, None, training=True))(x),
        "bn_train_stats": F.vmap(lambda a, m, v: Fn.batch_norm(a, m, v, training=True))(
            x, means, variances),
        "running": (means, variances),
        "bn_grad": F.vmap(F.grad(lambda a: Fn.batch_norm(a, None, None, w, w,
                                                         training=True).pow(3).sum()))(x),
    }
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(3, 2).double()
    with torch.no_grad():
        for p in cell.parameters():
            p.copy_(torch.linspace(-1, 1, p.numel(), dtype=torch.float64).reshape(p.shape))
    out["gru_cell"] = F.vmap(cell)(x)
    for name, run in {
        "bn_shared_stats": lambda: F.vmap(lambda a: Fn.batch_norm(
            a, torch.zeros(3, dtype=x.dtype), torch.ones(3, dtype=x.dtype), training=True))(x),
        "boolean_mask": lambda: F.vmap(lambda a: a[a > 0])(x),
    }.items():
        try:
            run()
            out[name] = "no error"
        except RuntimeError as e:
            out[name] = str(e)
    return out


def test_batching_rules_for_indexing_batch_norm_and_rnn_cells_equal_the_loop():
    x, w = t(RNG.standard_normal((4, 5, 3))), t(RNG.standard_normal(3))
    rules.FALLBACKS.clear()
    out = batching_rules_program(gt, x, w)
    assert not rules.FALLBACKS, dict(rules.FALLBACKS)
    idx = [[0, 2], [1, 1], [3, 0], [2, 2]]
    close(out["rows"], gt.stack([x[b][gt.tensor(i)] for b, i in enumerate(idx)]))
    close(out["pairs"], gt.stack([x[b][gt.tensor(i), gt.tensor(i[::-1]) % 3]
                                  for b, i in enumerate(idx)]))
    Fn = gt.nn.functional
    expected, means, variances = [], [], []
    for b in range(4):
        m, v = gt.zeros(3, dtype=gt.float64), gt.ones(3, dtype=gt.float64)
        expected.append(Fn.batch_norm(x[b], m, v, training=True))
        means.append(m)
        variances.append(v)
    close(out["bn_train_stats"], gt.stack(expected))
    close(out["running"][0], gt.stack(means))  # each example moved its own statistics
    close(out["running"][1], gt.stack(variances))
    close(out["bn_train"], gt.stack([Fn.batch_norm(x[b], None, None, w, None, training=True)
                                     for b in range(4)]))
    assert out["bn_shared_stats"].startswith("Batch norm got a batched tensor as input while "
                                             "the running_mean or running_var")
    assert out["boolean_mask"].startswith("vmap: We do not support batching operators that "
                                          "can support dynamic shape")


def test_embedding_of_per_example_tables_and_indices_batches():
    tables = t(RNG.standard_normal((5, 4, 3)))
    ids = gt.tensor(RNG.integers(0, 4, (5, 2)))
    lookup = gt.nn.functional.embedding
    rules.FALLBACKS.clear()
    close(func.vmap(lambda w, i: lookup(i, w))(tables, ids),
          gt.stack([lookup(ids[k], tables[k]) for k in range(5)]))
    grads = func.vmap(func.grad(lambda w, i: lookup(i, w).sin().sum()))(tables, ids)
    close(grads, gt.stack([func.grad(lambda w: lookup(ids[k], w).sin().sum())(tables[k])
                           for k in range(5)]))
    assert not rules.FALLBACKS


def outer_gradients(torch, x, w):
    """Regular autograd around the transforms, through what they did not differentiate: an
    argument outside argnums, and a parameter the function closes over."""
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_()
    per_example = torch.func.vmap(torch.func.grad(lambda p, xb: (p * xb * w).sin().sum()),
                                  in_dims=(None, 0))(torch.ones_like(w), x)
    closed = torch.func.grad(lambda a: (a * w).tanh().sum())(x[0])
    total = (per_example ** 2).sum() + closed.sum()
    gx, gw = torch.autograd.grad(total, (x, w))
    return {"per_example": per_example.detach(), "gx": gx, "gw": gw,
            "requires_grad": (per_example.requires_grad, closed.requires_grad)}


def test_outer_autograd_differentiates_through_arguments_and_closures():
    x, w = t(RNG.standard_normal((3, 2))), t(RNG.standard_normal(2))
    out = outer_gradients(gt, x, w)
    assert out["requires_grad"] == (True, True)

    def total(x, w):
        per_example = (x * w).cos() * x * w
        return (per_example ** 2).sum() + (1 - (x[0] * w).tanh() ** 2).mul(w).sum()
    xs, ws = x.detach().requires_grad_(), w.detach().requires_grad_()
    gx, gw = gt.autograd.grad(total(xs, ws), (xs, ws))
    close(out["gx"], gx)
    close(out["gw"], gw)


@pytest.mark.parametrize("draw", ["dropout", "normal_", "bernoulli"])
def test_random_ops_draw_per_example_or_once(draw):
    fn = {"dropout": lambda a: gt.nn.functional.dropout(a, 0.5),
          "normal_": lambda a: a.clone().normal_(),
          "bernoulli": lambda a: (a * 0.5).bernoulli()}[draw]
    x = gt.ones(4, 500)
    rules.FALLBACKS.clear()
    different = func.vmap(fn, randomness="different")(x).numpy()
    assert not rules.FALLBACKS  # one draw for the whole batch
    assert not np.allclose(different, different[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = func.vmap(fn, randomness="same")(x).numpy()
    assert np.allclose(same, same[0])
    with pytest.raises(RuntimeError, match="randomness error mode"):
        func.vmap(fn)(x)
