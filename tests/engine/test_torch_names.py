"""The names real PyTorch files use around the model: legacy and factory forms, dtype limits,
decorators and probes that must simply work, import paths; and the messages for what is still
missing: named as the user wrote it, --engine torch advised only where it would help, the refused
argument named. Parity tests compare with torch itself."""
import importlib.util
import textwrap
import warnings

import numpy as np
import pytest

import cli_util as cu
import gradtool as gt
from cli_util import assert_exit

parity = pytest.mark.parity
TORCH_INSTALLED = importlib.util.find_spec("torch") is not None


def _torch():
    return pytest.importorskip("torch")


def _described(t):
    return (tuple(t.shape), str(t.dtype).split(".")[-1])


# ---------------------------------- legacy and factory forms ----------------------------------
LEGACY = {
    "Tensor_sizes": lambda lib: lib.Tensor(2, 3),
    "Tensor_data": lambda lib: lib.Tensor([1, 2]),
    "Tensor_empty": lambda lib: lib.Tensor(),
    "Tensor_size_object": lambda lib: lib.Tensor(lib.Size([4])),
    "FloatTensor_sizes": lambda lib: lib.FloatTensor(3),
    "FloatTensor_data": lambda lib: lib.FloatTensor([[1, 2], [3, 4]]),
    "LongTensor_data": lambda lib: lib.LongTensor([1.7, -2.2]),
    "DoubleTensor_data": lambda lib: lib.DoubleTensor([0.5]),
    "BoolTensor_data": lambda lib: lib.BoolTensor([1, 0]),
    "new_sizes": lambda lib: lib.ones(2, dtype=lib.float64).new(3, 1),
    "new_data": lambda lib: lib.ones(2, dtype=lib.int32).new([5, 6]),
    "new_empty": lambda lib: lib.ones(2).new(),
    "zeros_size": lambda lib: lib.zeros(size=(2, 3)),
    "ones_size": lambda lib: lib.ones(size=[4], dtype=lib.float64),
    "empty_size": lambda lib: lib.empty(size=(1, 2)),
    "randn_size": lambda lib: lib.randn(size=(2,)),
    "rand_size": lambda lib: lib.rand(size=(3, 1)),
    "range": lambda lib: lib.range(1, 4),
    "range_step": lambda lib: lib.range(0, 1, 0.25, dtype=lib.float64),
    "cat_axis": lambda lib: lib.cat([lib.ones(2, 1), lib.zeros(2, 1)], axis=1),
    "stack_axis": lambda lib: lib.stack([lib.ones(2), lib.zeros(2)], axis=1),
    "flip_dims": lambda lib: lib.arange(6).view(2, 3).flip(dims=(0, 1)),
    "flip_function": lambda lib: lib.flip(lib.arange(4), dims=[0]),
}
VALUES_DEFINED = {"Tensor_data", "FloatTensor_data", "LongTensor_data", "DoubleTensor_data",
                  "BoolTensor_data", "new_data", "zeros_size", "ones_size", "range",
                  "range_step", "cat_axis", "stack_axis", "flip_dims", "flip_function"}


@parity
@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_and_factory_forms_match_torch(name):
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range's deprecation, on both
        mine, theirs = LEGACY[name](gt), LEGACY[name](torch)
    assert _described(mine) == _described(theirs)
    if name in VALUES_DEFINED:
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@parity
def test_typed_tensor_classes_answer_isinstance_by_dtype_as_torch():
    torch = _torch()
    for lib in (gt, torch):
        assert isinstance(lib.zeros(2), lib.FloatTensor)
        assert not isinstance(lib.zeros(2, dtype=lib.float64), lib.FloatTensor)
        assert isinstance(lib.zeros(2, dtype=lib.int64), lib.LongTensor)


def test_range_warns_as_torch():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        gt.range(0, 2)


@parity
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
def test_finfo_matches_torch(dtype):
    torch = _torch()
    mine, theirs = gt.finfo(getattr(gt, dtype)), torch.finfo(getattr(torch, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(mine, field) == pytest.approx(getattr(theirs, field), rel=1e-6), field
    assert mine.dtype == theirs.dtype and gt.finfo().eps == torch.finfo().eps


@parity
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(dtype):
    torch = _torch()
    mine, theirs = gt.iinfo(getattr(gt, dtype)), torch.iinfo(getattr(torch, dtype))
    assert (mine.bits, mine.min, mine.max, mine.dtype) == \
        (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    with pytest.raises(TypeError):
        gt.iinfo(gt.float32)


def test_bfloat16_is_a_name_and_computing_in_it_is_a_clear_error():
    from gradtool.engine.errors import NotInEngineError
    assert repr(gt.bfloat16) == "gradtool.bfloat16" and gt.bfloat16.is_floating_point
    assert gt.bfloat16.itemsize == 2 and gt.bfloat16 is not gt.float16
    with pytest.raises(NotInEngineError, match="does not provide torch.bfloat16 tensors"):
        gt.zeros(2, dtype=gt.bfloat16)
    with pytest.raises(NotInEngineError, match="torch.bfloat16 tensors"):
        gt.ones(2).to(gt.bfloat16)


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
    "gradtool_spelled": ("import gradtool\n\n\ndef f(x):\n    return gradtool.fft.rfft(x).sum()\n",
                         5, "does not provide gradtool.fft (PyTorch's torch.fft)", False),
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
    message = cu.assert_target_error(r, "f", "gradtool's engine does not provide gradtool.fft")
    assert "run the file on PyTorch itself" not in message
