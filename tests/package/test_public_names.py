"""The public names stay where users found them: `import gradtool as torch`, the engine's
modules under their old paths (gradtool.nn, gradtool.autograd, ...), the tool's names, files
saved before the engine had a package of its own, and `gradtool.as_torch()`."""
import importlib
import os
import subprocess
import sys

import pytest

import gradtool

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@pytest.mark.parametrize("old, new", [
    ("gradtool.autograd", "gradtool.engine.autograd"),
    ("gradtool.autograd.function", "gradtool.engine.autograd.function"),
    ("gradtool.autograd.ops.derivatives", "gradtool.engine.autograd.ops.derivatives"),
    ("gradtool.nn", "gradtool.engine.nn"),
    ("gradtool.nn.functional", "gradtool.engine.nn.functional"),
    ("gradtool.optim", "gradtool.engine.optim"),
    ("gradtool.utils.data", "gradtool.engine.utils.data"),
    ("gradtool.linalg", "gradtool.engine.linalg"),
    ("gradtool.distributions", "gradtool.engine.distributions"),
    ("gradtool.serialization", "gradtool.engine.serialization"),
    ("gradtool.testing", "gradtool.frontends.testing"),
    ("gradtool.pytest_plugin", "gradtool.frontends.pytest_plugin"),
    ("gradtool.torch_alias", "gradtool.adapters.torch_alias"),
])
def test_an_old_import_path_is_the_very_same_module(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)


def test_old_paths_work_in_a_fresh_interpreter_in_every_import_form():
    code = ("import gradtool.nn.functional as F\n"
            "from gradtool.autograd import Function, gradcheck\n"
            "from gradtool.nn import Linear\n"
            "import gradtool.engine.nn.functional as G\n"
            "import gradtool\n"
            "assert F is G and Linear is gradtool.engine.nn.Linear\n"
            "assert gradtool.nn.functional is G and gradcheck is gradtool.autograd.gradcheck\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_namespace_holds_the_engines_names_and_the_tools():
    assert gradtool.nn is gradtool.engine.nn and gradtool.Tensor is gradtool.engine.Tensor
    assert gradtool.testing.assert_close is gradtool.engine.testing.assert_close
    assert callable(gradtool.testing.assert_gradcheck)  # the tool's, beside torch's
    assert gradtool.autograd.gradcheck is gradtool.checks.gradcheck  # lent to the engine
    # gradtool.no_grad is torch's context manager and, called with a shape, an input spec
    with gradtool.no_grad():
        assert not gradtool.is_grad_enabled()
    assert repr(gradtool.no_grad((2,))) == "gradtool.no_grad((2,))"
    assert gradtool.engine.no_grad is gradtool.engine.autograd.no_grad


def test_a_missing_name_is_torchs_name_in_the_error():
    from gradtool.engine.errors import NotInEngineAttributeError
    with pytest.raises(NotInEngineAttributeError, match=r"does not provide torch\.onnx \(yet\)"):
        gradtool.onnx
    with pytest.raises(NotInEngineAttributeError, match=r"torch\.nn\.utils\.prune \(yet\)"):
        gradtool.nn.utils.prune


def test_a_file_saved_with_the_old_module_paths_loads():
    saved = gradtool.load(os.path.join(DATA, "saved_with_the_old_module_paths.pt"))
    assert list(saved["model"]) == ["weight", "bias"] and saved["model"]["weight"].shape == (2, 3)
    assert saved["x"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert saved["dtype"] is gradtool.float32
    assert isinstance(saved["p"], gradtool.nn.Parameter)


def test_as_torch_gives_the_engine_to_import_torch_and_then_restores_it():
    before = {name: module for name, module in sys.modules.items()
              if name == "torch" or name.startswith("torch.")}
    with gradtool.as_torch():
        import torch
        import torch.nn.functional as F
        from torch.autograd import Function
        assert torch is gradtool.engine and F is gradtool.engine.nn.functional
        assert Function is gradtool.engine.autograd.Function
    after = {name: module for name, module in sys.modules.items()
             if name == "torch" or name.startswith("torch.")}
    assert after == before
    from gradtool.torch_alias import torch_is_gradtool
    assert torch_is_gradtool is gradtool.as_torch  # its name before it was public


def test_the_installed_entry_points_name_modules_that_exist():
    from importlib.metadata import entry_points
    points = [p for p in entry_points(group="console_scripts") if p.name == "gradtool"]
    points += [p for p in entry_points(group="pytest11") if p.name == "gradtool"]
    assert len(points) == 2
    for point in points:
        assert point.load() is not None
