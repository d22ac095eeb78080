"""`import gradtool as torch` (a script, a notebook, no CLI): every torch name the engine lacks,
however it is reached, is one message naming torch's name as the user wrote it, saying the engine
does not provide it (yet) and advising --engine torch; the exception is still the one Python's
probes expect (AttributeError for hasattr and getattr with a default, ImportError for `except
ImportError`)."""
import subprocess
import sys
import textwrap

import pytest

import gradtool as torch
from gradtool.engine.errors import (NotInEngineAttributeError, NotInEngineError,
                                    NotInEngineImportError)

# (statement, the torch name the message names, the exception Python's code expects)
PATHS = [
    ("import gradtool.onnx", "torch.onnx", ImportError),
    ("from gradtool import onnx", "torch.onnx", ImportError),
    ("torch.onnx.export", "torch.onnx", AttributeError),
    ("from gradtool.nn.utils import prune", "torch.nn.utils.prune", ImportError),
    ("from gradtool.nn.functional import handle_torch_function",
     "torch.nn.functional.handle_torch_function", ImportError),
    ("torch.nn.quantized", "torch.nn.quantized", AttributeError),
    ("torch.nn.utils.prune", "torch.nn.utils.prune", AttributeError),
    ("torch.utils.mobile_optimizer", "torch.utils.mobile_optimizer", AttributeError),
    ("import gradtool.utils.mobile_optimizer", "torch.utils.mobile_optimizer", ImportError),
    ("from gradtool.utils.mobile_optimizer import optimize_for_mobile",
     "torch.utils.mobile_optimizer", ImportError),
    ("torch.quantization", "torch.quantization", AttributeError),
    ("torch.quantization.quantize_dynamic", "torch.quantization", AttributeError),
    ("import gradtool.quantization", "torch.quantization", ImportError),
    ("torch.tensor([1.0]).q_scale()", "torch.Tensor.q_scale", AttributeError),
    ("torch.ones(2).to_mkldnn()", "torch.Tensor.to_mkldnn", AttributeError),
    ("torch.Tensor.to_mkldnn", "torch.Tensor.to_mkldnn", AttributeError),
]


@pytest.mark.parametrize("statement,name,expected", PATHS, ids=[p[0] for p in PATHS])
def test_a_missing_name_is_one_clear_message_of_the_expected_type(statement, name, expected):
    with pytest.raises(NotInEngineError) as caught:
        exec(statement, {"torch": torch})
    assert isinstance(caught.value, expected)
    assert caught.value.torch_name == name
    assert str(caught.value) == (
        f"gradtool's engine does not provide {name} (yet); run the code on PyTorch itself for "
        f"it (the gradtool command's --engine torch)")
    assert "gradtool.engine" not in str(caught.value)


def test_probes_see_a_missing_name_as_missing():
    """hasattr, getattr with a default and `except ImportError` work as on torch."""
    assert not hasattr(torch, "onnx") and not hasattr(torch.nn, "quantized")
    assert not hasattr(torch.ones(2), "to_mkldnn") and getattr(torch.nn.utils, "prune",
                                                          None) is None
    assert isinstance(pytest.raises(AttributeError, getattr, torch.ones(2), "_private").value,
                      AttributeError)
    try:
        from gradtool.nn.utils import prune  # noqa: F401
    except ImportError as e:
        assert isinstance(e, NotInEngineImportError)
    with pytest.raises(ModuleNotFoundError):
        import gradtool.onnx  # noqa: F401


def test_what_the_engine_has_under_torchs_paths_imports():
    """torch.distributions.normal.Normal and torch.nn.modules.loss: the classes gradtool has,
    where torch keeps them."""
    import gradtool.distributions.normal
    import gradtool.nn.modules.loss
    from gradtool.distributions.kl import kl_divergence
    assert gradtool.distributions.normal.Normal is torch.distributions.Normal
    assert torch.distributions.categorical.Categorical is torch.distributions.Categorical
    assert kl_divergence is torch.distributions.kl_divergence
    assert gradtool.nn.modules.loss.MSELoss is torch.nn.MSELoss
    with pytest.raises(NotInEngineAttributeError, match="torch.distributions.normal.Foo"):
        torch.distributions.normal.Foo


def test_a_name_torchs_tensor_lacks_too_is_a_plain_attribute_error_as_on_torch():
    """Only torch's own Tensor names (torch_tensor_names.txt) get the message: a misspelling
    is Python's error, worded as torch's."""
    for owner, words in ((torch.ones(2), "'Tensor' object"), (torch.Tensor, "type object "
                                                               "'Tensor'")):
        with pytest.raises(AttributeError) as caught:
            owner.some_missing_method
        assert not isinstance(caught.value, NotInEngineError)
        assert str(caught.value) == f"{words} has no attribute 'some_missing_method'"
        assert not hasattr(owner, "some_missing_method") and not hasattr(owner, "q_scale")


def test_every_torch_tensor_name_is_the_engines_or_named_as_missing():
    """Each public name of torch's Tensor is gradtool's, or reading it (of a tensor or of the
    class) raises the message naming it and hasattr() is False."""
    import inspect
    from pathlib import Path
    import gradtool.engine.autograd.tensor as tensor_module
    lines = (Path(tensor_module.__file__).parent / "torch_tensor_names.txt").read_text()
    names = [n for n in lines.splitlines() if n and not n.startswith("#")]
    assert len(names) > 500 and "view" in names
    t = torch.ones(2)
    missing = [n for n in names if isinstance(inspect.getattr_static(torch.Tensor, n),
                                              tensor_module._MissingTorchAttribute)]
    assert "to_mkldnn" in missing and "view" not in missing and len(missing) < len(names) / 4
    for name in missing:
        for owner in (t, torch.Tensor):
            with pytest.raises(NotInEngineAttributeError) as caught:
                getattr(owner, name)
            assert caught.value.torch_name == f"torch.Tensor.{name}"
            assert caught.value.name == name and not hasattr(owner, name)


def test_a_private_or_dunder_tensor_attribute_is_a_plain_attribute_error():
    with pytest.raises(AttributeError) as caught:
        torch.ones(2)._no_such_slot
    assert not isinstance(caught.value, NotInEngineError)


def test_the_missing_name_paths_import_nothing_heavy_until_used():
    """`import gradtool` stays light (no numpy): the missing-name machinery is the slow path."""
    code = textwrap.dedent("""\
        import sys
        import gradtool
        assert "numpy" not in sys.modules, "import gradtool imported numpy"
        """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_module_method_of_torchs_gradtool_lacks_is_named_a_misspelled_layer_is_not(
        monkeypatch):
    """The engine has every public method of torch 2.13's Module (the parity test keeps
    TORCH_METHODS_NOT_HERE to torch's it lacks): one a later torch adds is played here."""
    from gradtool.engine.nn import module
    monkeypatch.setattr(module, "TORCH_METHODS_NOT_HERE", frozenset({"to_new_accelerator"}))
    model = torch.nn.Linear(2, 2)
    with pytest.raises(NotInEngineAttributeError,
                       match=r"does not provide torch\.nn\.Module\.to_new_accelerator"):
        model.to_new_accelerator()
    with pytest.raises(AttributeError) as caught:
        model.fc2
    assert not isinstance(caught.value, NotInEngineError)
    assert str(caught.value) == "'Linear' object has no attribute 'fc2'"
    assert not hasattr(model, "to_new_accelerator")
