"""`--engine torch` gives a verdict on every file plain torch runs: the torch features that
once stopped gradtool's recording or reading of torch's graph (conjugate and negative bits,
ZeroTensors, a module's own parameters(), torch.func transforms, grad-mode decorators, tensor
subclasses), each in a small user file. Each file is run by `gradtool inspect` and `gradtool
gradcheck --engine torch`: a verdict (never exit 2 or 3), and gradients that are torch's own.
Parity tests: they skip without PyTorch."""
import importlib.util
import os
import sys
import textwrap

import numpy as np
import pytest

import cli_util as cu
from cli_util import assert_exit

try:
    import torch
except ImportError:
    torch = None

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(torch is None, reason="torch is not installed")]

FILES = {
    "conjugate_bits.py": """\
        import torch


        def power_spectrum(x):
            X = torch.fft.rfft(x)
            return (X * torch.conj(X)).real.sum()


        def conj_and_neg_views(x):
            z = torch.complex(x, x * 2)
            return (z.conj() * z.conj()).real.sum() + torch._neg_view(x).mul(x).sum()
        """,
    "zero_tensors.py": """\
        import torch
        from torch.func import grad, jvp


        def _cube(x):
            return (x ** 3).sum()


        def forward_over_reverse_hvp(x):
            _, hv = jvp(grad(_cube), (x,), (torch.ones_like(x),))
            return hv.sum()


        def hvp(x):
            _, hv = torch.autograd.functional.hvp(_cube, x, torch.ones_like(x), create_graph=True)
            return hv.sum()
        """,
    "maml_learner.py": """\
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)  # the same weights wherever the file is imported

        class Learner(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.vars = torch.nn.ParameterList([
                    torch.nn.Parameter(torch.randn(4, 3, dtype=torch.float64)),
                    torch.nn.Parameter(torch.zeros(4, dtype=torch.float64))])

            def forward(self, x, vars=None):
                vars = self.vars if vars is None else vars
                return F.linear(x, vars[0], vars[1])

            def parameters(self):  # MAML's: no `recurse`
                return self.vars


        net = Learner()


        def maml_loss(x):
            y = net(x.reshape(1, 3))
            grads = torch.autograd.grad(y.pow(2).sum(), net.parameters(), create_graph=True)
            fast = [p - 0.1 * g for p, g in zip(net.parameters(), grads)]
            return net(x.reshape(1, 3), fast).pow(2).sum()
        """,
    "func_transforms.py": """\
        import torch
        from torch.func import functional_call, grad, jacrev, vmap

        torch.manual_seed(0)  # the same weights wherever the file is imported
        model = torch.nn.Linear(3, 2).double()
        params = {k: v.detach() for k, v in model.named_parameters()}


        def per_sample_grads(x):
            def loss(p, xi):
                return functional_call(model, p, (xi,)).pow(2).sum()
            g = vmap(grad(loss), in_dims=(None, 0))(params, x.reshape(1, 3).expand(4, 3) * x)
            return g["weight"].sum() * x.sum()


        def batched_jacobian(x):
            J = vmap(jacrev(torch.sin))(x.reshape(3, 1))
            return (J.sum() * x).sum()
        """,
    "grad_mode_decorators.py": """\
        import torch


        @torch.enable_grad()
        def enabled(x):
            return (x.sin() * x).sum()


        @torch.set_grad_enabled(True)
        def set_enabled(x):
            return x.exp().sum()
        """,
    "tensor_subclasses.py": """\
        import torch


        class MyParameter(torch.nn.Parameter):
            pass


        class Logged(torch.Tensor):
            calls = []

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                cls.calls.append(getattr(func, "__name__", str(func)))
                return super().__torch_function__(func, types, args, kwargs or {})


        torch.manual_seed(0)  # the same weights wherever the file is imported
        w = MyParameter(torch.randn(3, dtype=torch.float64))


        def with_parameter_subclass(x):
            return (x * w).sum()


        def with_subclass(x):
            y = x.as_subclass(Logged)
            return (y * y.tanh()).sum()
        """,
}


def _write(tmp_path, name):
    path = tmp_path / name
    path.write_text(textwrap.dedent(FILES[name]))
    return path


def _torch_gradients(path, name, x):
    """What plain torch computes: the target's gradient at x (no gradtool in the way)."""
    spec = importlib.util.spec_from_file_location(f"plain_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = x.detach().clone().requires_grad_(True)
    out = getattr(module, name)(x)
    return torch.autograd.grad(out, x)[0].numpy()


@pytest.mark.parametrize("name,targets", [
    ("conjugate_bits.py", ["power_spectrum", "conj_and_neg_views"]),
    ("zero_tensors.py", ["forward_over_reverse_hvp", "hvp"]),
    ("maml_learner.py", ["maml_loss"]),
    ("func_transforms.py", ["per_sample_grads", "batched_jacobian"]),
    ("grad_mode_decorators.py", ["enabled", "set_enabled"]),
    ("tensor_subclasses.py", ["with_parameter_subclass", "with_subclass"]),
])
def test_engine_torch_gives_a_verdict_and_torchs_gradients(tmp_path, name, targets):
    path = _write(tmp_path, name)
    inspected, checked = cu.run_many([
        ("inspect", "--engine", "torch", "--json", path),
        ("gradcheck", "--engine", "torch", "--json", "--order", "2", path)])
    assert_exit(inspected, 0)
    assert_exit(checked, 0)
    found = {t["name"]: t for t in cu.check_inspect_document(inspected.json()).values()}
    assert sorted(found) == sorted(targets)
    for target in checked.json()["targets"]:
        assert target["passed"], target
    # the gradient gradtool read from torch's graph is the one plain torch computes at the
    # same input (gradtool's first generated input: seed 0's standard normal)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(3))
    for target_name, target in found.items():
        [leaf] = [n["leaf"] for n in target["graph"]["nodes"]
                  if n["kind"] == "leaf" and n["leaf"]["name"] == "x"]
        expected = np.linalg.norm(_torch_gradients(path, target_name, x))
        assert leaf["grad_norm"] == pytest.approx(expected, rel=1e-10), target_name


def test_saved_tensors_with_conj_neg_bits_and_zero_tensors_are_read_as_their_values():
    from gradtool.adapters import torch as torch_engine
    z = torch.complex(torch.ones(2, dtype=torch.float64), torch.full((2,), 2.0,
                                                                      dtype=torch.float64))
    np.testing.assert_array_equal(torch_engine.array(z.conj()), [1 - 2j, 1 - 2j])
    np.testing.assert_array_equal(torch_engine.array(torch._neg_view(torch.ones(2))), [-1, -1])
    zeros = torch._efficientzerotensor(3, dtype=torch.float64)
    np.testing.assert_array_equal(torch_engine.array(zeros), np.zeros(3))
    info = torch_engine.saved_info("_saved_other", zeros)
    assert (info.shape, info.min, info.max) == ((3,), 0.0, 0.0)


def test_a_subclass_torch_function_never_sees_gradtools_reads(tmp_path):
    """The trace reads values (is a result finite?) with torch's own tensors: the user's
    __torch_function__ logs exactly the ops of their own code, traced or not."""
    path = _write(tmp_path, "tensor_subclasses.py")
    from gradtool.adapters import use
    from gradtool.adapters.torch_trace import TorchTrace
    from gradtool.capture import loader
    with use("torch"):
        [target] = loader.load(f"{path}::with_subclass")
        calls = sys.modules[target.obj.__module__].Logged.calls
        loader.run_target(target, 0, (3,))
        untraced = list(calls)
        calls.clear()
        loader.run_target(target, 0, (3,), observe=TorchTrace(target.obj.__code__))
    assert calls == untraced and untraced


def test_an_error_of_gradtools_recording_is_gradtools_bug_never_the_users(tmp_path,
                                                                           monkeypatch):
    """A recording that fails (as the module hook once did, calling a user's parameters()
    with `recurse`) is named as gradtool's bug with a plea to report it: not the user's
    error, not "gradtool's engine does not take the argument"."""
    path = _write(tmp_path, "maml_learner.py")
    from gradtool.adapters import torch_trace, use
    from gradtool.capture import loader
    namespace = {}
    exec(compile("def entered(self, module, args):\n    module.parameters(recurse=False)\n",
                 torch_trace.__file__, "exec"), namespace)  # a hook of the recording's own
    monkeypatch.setattr(torch_trace.TorchTrace, "_module_entered", namespace["entered"])
    with use("torch"):
        [target] = loader.load(f"{path}::maml_loss")
        with pytest.raises(loader.GradtoolBug) as caught:
            loader.run_target(target, 0, (3,), observe=torch_trace.TorchTrace())
    message = str(caught.value)
    assert "bug in gradtool" in message and "report it" in message
    assert "gradtool's engine" not in message and "got an unexpected keyword" in message
    assert caught.value.details_title != loader.UserCodeError.details_title


def test_an_error_of_the_users_op_under_the_recording_stays_the_users(tmp_path):
    """torch's own refusal of the user's op (raised in C, under the recording's
    __torch_function__) is the user's error at the user's line, exit 2: never gradtool's."""
    user = tmp_path / "shapes.py"
    user.write_text(textwrap.dedent("""\
        import torch


        def matrix_of_a_vector(x):
            return torch.mm(x, x).sum()
        """))
    result = cu.run("gradcheck", "--engine", "torch", user)
    message = cu.assert_target_error(result, "matrix_of_a_vector", f"{user}:5",
                                     "self must be a matrix")
    assert "bug in gradtool" not in message
