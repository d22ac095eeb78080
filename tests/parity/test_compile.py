"""torch.compile and torch.jit's tracing against torch's: the compiled module's wrapper, its
values and gradients (torch with its eager backend), the settings' errors, and trace's.
Tests marked parity, skipped without torch."""
import sys

import numpy as np
import pytest

import gradtool as gt

pytestmark = pytest.mark.parity


@pytest.fixture(autouse=True)
def _distribution_checks_back_on():
    """Starting torch's compiler turns torch.distributions' argument checks off for the whole
    process, once: the tests after these compare those checks."""
    yield
    if "torch" in sys.modules:
        sys.modules["torch"].distributions.Distribution.set_default_validate_args(True)


def _outcome(call):
    try:
        call()
        return "ok"
    except Exception as exc:  # noqa: BLE001 (the comparison is of the exceptions)
        return (type(exc).__name__, str(exc))


@pytest.mark.slow  # (torch's compiler, even its eager backend, takes most of a minute here)
def test_compile_and_trace_are_torchs():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((4, 3))
    seen, numbers = [], []
    for lib in (gt, torch):
        model = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 5))
            model.bias.copy_(lib.tensor([0.5, -0.5]))
        compiled = lib.compile(model, backend="eager")
        inp = lib.tensor(x, requires_grad=True)
        out = compiled(inp).tanh()
        out.sum().backward()
        numbers.append([out.detach().numpy(), inp.grad.numpy(), model.weight.grad.numpy()])
        relu, fresh = lib.nn.ReLU(), lib.nn.Linear(3, 2).double()
        seen.append((type(compiled).__name__, repr(compiled), list(compiled.state_dict()),
                     compiled._orig_mod is model, compiled.in_features,
                     model.compile(backend="eager"),
                     _outcome(lambda: lib.compile(relu, mode="default", options={})),
                     _outcome(lambda: lib.compile(relu, mode="fast")),
                     str(_outcome(lambda: lib.compile(relu, backend="nope"))),
                     lib.compiler.is_compiling(),
                     _outcome(lambda: lib.jit.trace(fresh, lib.ones(1, 2, dtype=lib.float64))),
                     _outcome(lambda: lib.jit.trace(fresh)),
                     _outcome(lambda: lib.jit.load("/no/such/file.pt")),
                     lib.jit.Final[int], [c.__name__ for c in lib.jit.TracerWarning.__mro__]))
    assert seen[0] == seen[1]
    for ours, theirs in zip(*numbers):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
