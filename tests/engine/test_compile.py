"""torch.compile, torch.compiler and torch.jit's tracing and saving on the engine: a compiled
or traced function computes what the Python computes (the engine has no compiler); the
settings are checked as torch's; a compiled module is wrapped as torch's OptimizedModule
(their comparison with torch is tests/parity/test_compile.py)."""
import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.errors import NotInEngineError


def test_a_compiled_function_and_module_compute_the_same_values_and_gradients():
    gt.manual_seed(0)
    model = gt.nn.Linear(3, 2).double()
    compiled = gt.compile(model, mode="reduce-overhead")
    assert compiled._orig_mod is model and compiled.weight is model.weight
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = gt.randn(4, 3, dtype=gt.float64, requires_grad=True)
    (compiled(x) ** 2).sum().backward()
    expected = 2 * (x @ model.weight.T + model.bias).T @ x
    np.testing.assert_allclose(model.weight.grad.numpy(), expected.detach().numpy())

    @gt.compile(fullgraph=True)
    def cube(t):
        return t ** 3
    assert cube.__name__ == "cube" and cube(gt.tensor(2.0)).item() == 8.0
    assert model.compile(backend="eager") is None
    assert gt.compiler.disable(cube)(gt.tensor(3.0)).item() == 27.0
    assert not gt.compiler.is_compiling()


def test_compile_checks_its_settings_as_torch():
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        gt.compile(gt.nn.ReLU(), mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of"):
        gt.compile(gt.nn.ReLU(), mode="fast")
    with pytest.raises(RuntimeError, match="Invalid backend: 'nope'"):
        gt.compile(gt.nn.ReLU(), backend="nope")


def test_jit_trace_runs_the_example_and_save_load_round_trip(tmp_path):
    model = gt.nn.Linear(2, 1)
    assert gt.jit.trace(model, gt.ones(1, 2)) is model
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        gt.jit.trace(model, gt.ones(1, 3))
    path = str(tmp_path / "model.pt")
    gt.jit.save(model, path)
    loaded = gt.jit.load(path)
    assert loaded.weight.tolist() == model.weight.tolist()
    with pytest.raises(ValueError, match="does not exist"):
        gt.jit.load(str(tmp_path / "missing.pt"))
    import zipfile
    with zipfile.ZipFile(tmp_path / "scripted.pt", "w") as archive:
        archive.writestr("scripted/code/__torch__.py", "")
    with pytest.raises(NotInEngineError, match="TorchScript archive"):
        gt.jit.load(str(tmp_path / "scripted.pt"))


def test_jit_annotations_and_classes():
    class Block(gt.jit.ScriptModule):
        scale: gt.jit.Final[float]

        def __init__(self):
            super().__init__()
            self.scale = 2.0

        @gt.jit.script_method
        def forward(self, x):
            return x * self.scale
    assert Block()(gt.tensor(3.0)).item() == 6.0
    assert issubclass(gt.jit.TracerWarning, Warning)
