"""The names real PyTorch files use around the model: legacy and factory forms, dtype limits,
decorators and probes that must simply work, import paths; and the messages for what is still
missing: named as the user wrote it, --engine torch advised only where it would help, the refused
argument named. The forms and limits against torch itself are in tests/parity
(test_torch_names.py, test_dtypes.py)."""
import importlib.util
import textwrap

import pytest

import cli_util as cu
import gradtool as gt
from cli_util import assert_exit

TORCH_INSTALLED = importlib.util.find_spec("torch") is not None


# ---------------------------------- torch.range ----------------------------------
def test_range_warns_as_torch():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        gt.range(0, 2)


# ---------------------------------- decorators and probes ----------------------------------
def test_amp_and_jit_decorators_are_no_ops_and_probes_answer_false():
    def f(x):
        return x
    for decorator in (gt.cuda.amp.custom_fwd, gt.cuda.amp.custom_bwd, gt.amp.custom_bwd,
                      gt.jit.script, gt.jit.ignore, gt.jit.unused, gt.jit.export):
        assert decorator(f) is f
    assert gt.amp.custom_fwd(device_type="cuda")(f) is f
    assert gt.cuda.amp.custom_fwd(cast_inputs=gt.float32)(f) is f
    assert gt.jit.ignore(drop=True)(f) is f
    assert not gt.cuda.is_available() and not gt.accelerator.is_available()
    assert not gt.cuda.is_bf16_supported() and not gt.jit.is_scripting()
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
        with gt.autocast("cuda"):
            pass
    with gt.cuda.amp.autocast(enabled=False):
        pass
    scaler = gt.cuda.amp.GradScaler()
    loss = gt.ones(1)
    assert scaler.scale(loss) is loss and not scaler.is_enabled()


def test_a_torch_file_with_the_boilerplate_runs_unchanged(tmp_path):
    """Import paths and decorators real files use: torch.nn.modules.*, torch.backends.cudnn,
    torch.cuda.amp's custom_fwd/custom_bwd on a custom Function, jit decorators, probes."""
    user = tmp_path / "boilerplate.py"
    user.write_text(textwrap.dedent("""\
        import torch
        import torch.backends.cudnn as cudnn
        import torch.backends.mkldnn
        import torch.cuda.amp
        from torch.cuda.amp import custom_bwd, custom_fwd
        from torch.nn.modules.loss import _Loss
        from torch.nn.modules.module import Module
        from torch.nn.modules.utils import _pair
        from torch.utils.data import DataLoader, TensorDataset

        cudnn.benchmark = True
        assert torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
        DEVICE = "cuda" if torch.cuda.is_available() or torch.accelerator.is_available() else "cpu"
        assert DEVICE == "cpu" and _pair(3) == (3, 3) and Module is torch.nn.Module


        class Scale(torch.autograd.Function):
            @staticmethod
            @custom_fwd(cast_inputs=torch.float32)
            def forward(ctx, x):
                return x * 3

            @staticmethod
            @custom_bwd
            def backward(ctx, grad):
                return grad * 3


        class SquaredLoss(_Loss):
            def forward(self, a, b):
                return ((a - b) ** 2).sum()


        @torch.jit.ignore
        def helper(x):
            return x.flip(dims=[0])


        def loss_of(x):
            batches = list(DataLoader(TensorDataset(x.detach()), batch_size=2))
            assert len(batches) == 2
            return SquaredLoss()(Scale.apply(x), helper(x))
        """))
    r = cu.run("gradcheck", "--json", user)
    assert_exit(r, 0)
    assert {t["name"]: t["passed"] for t in r.json()["targets"]} == {
        "Scale": True, "helper": True, "loss_of": True}


# ---------------------------------- messages for what is missing ----------------------------------
MISSING = {
    # (file text, line, what the message must say, whether it advises --engine torch)
    "gradtool_spelled": ("import gradtool\n\n\ndef f(x):\n    return gradtool.onnx.export(x)\n",
                         5, "does not provide gradtool.onnx (PyTorch's torch.onnx)", False),
    "submodule_import": ("import torch\nimport torch.nn.functional.extra\n\n\n"
                         "def f(x):\n    return x.sum()\n", 2,
                         "does not provide torch.nn.functional.extra", True),
    "private_C": ("import torch\n\n\ndef f(x):\n    return torch._C._get_tracing_state()\n", 5,
                  "does not provide torch._C", True),
    "refused_keyword": ("import torch\n\n\ndef f(x):\n    w = torch.ones(3, pin=True)\n"
                        "    return (x * w).sum()\n", 5,
                        "torch.ones() on gradtool's engine does not take the argument pin=", False),
    "refused_in_a_class": ("import torch\nfrom torch import nn\n\n\ndef f(x):\n"
                           "    lstm = nn.LSTM(3, 3, projection=1)\n    return x.sum()\n", 6,
                           "nn.LSTM() on gradtool's engine does not take the argument "
                           "projection=", False),
    "refused_method": ("def f(x):\n    return x.sum(dim=0, weird=1)\n", 2,
                       "x.sum() on gradtool's engine does not take the argument weird=", False),
}


@pytest.fixture(scope="module")
def missing_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("missing")
    paths = {}
    for key, (source, *_) in MISSING.items():
        paths[key] = folder / f"{key}.py"
        paths[key].write_text(source)
    results = cu.run_many([("gradcheck", str(p)) for p in paths.values()])
    return {key: (paths[key], r) for key, r in zip(paths, results)}


@pytest.mark.parametrize("key", sorted(MISSING))
def test_a_missing_name_or_argument_is_named_as_written_with_the_line(missing_runs, key):
    path, result = missing_runs[key]
    _, line, says, advises = MISSING[key]
    mentions = (f"{path}:{line}", says)
    if key == "submodule_import":
        message = cu.assert_clean_user_error(result, *mentions)
    else:
        message = cu.assert_target_error(result, "f", *mentions)
    assert "is not a package" not in message and "TypeError" not in message
    if TORCH_INSTALLED:  # (without torch, where it would help, it says torch is not installed)
        assert ("run the file on PyTorch itself with --engine torch" in message) == advises


@pytest.mark.skipif(not TORCH_INSTALLED, reason="needs PyTorch installed")
def test_engine_torch_is_not_advised_to_a_run_that_already_has_it(missing_runs):
    path, _ = missing_runs["gradtool_spelled"]
    r = cu.run("gradcheck", "--engine", "torch", path)
    message = cu.assert_target_error(r, "f", "gradtool's engine does not provide gradtool.onnx")
    assert "run the file on PyTorch itself" not in message


def test_a_file_imports_distributions_submodules_and_checkpoint(tmp_path):
    """The import forms the census found in real files (docs/census.md) load on the engine."""
    import gradtool
    with gradtool.as_torch():
        import torch
        from torch.distributions.normal import Normal
        from torch.utils.checkpoint import checkpoint
        import torch.distributions.kl
        assert Normal is gt.distributions.Normal and torch.distributions.kl.kl_divergence
        assert checkpoint(torch.tanh, torch.zeros(2)).tolist() == [0.0, 0.0]
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            torch.cuda.synchronize()


def test_utils_data_submodules_give_the_same_classes():
    import gradtool
    with gradtool.as_torch():
        from torch.utils.data.dataloader import DataLoader
        from torch.utils.data.dataset import Dataset, TensorDataset
        from torch.utils.data.sampler import RandomSampler
        import torch.utils.data as data
        assert (DataLoader, Dataset, TensorDataset, RandomSampler) == (
            data.DataLoader, data.Dataset, data.TensorDataset, data.RandomSampler)


def test_cuda_typed_classes_exist_and_hold_no_tensor():
    assert not isinstance(gt.ones(1), gt.cuda.FloatTensor)
    assert gt.cuda.LongTensor.dtype is gt.int64
    with pytest.raises(TypeError, match="torch.cuda.HalfTensor not available"):
        gt.cuda.HalfTensor(3)
