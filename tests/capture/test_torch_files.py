"""Users' PyTorch files, unchanged (`import torch`), run by the CLI on gradtool's engine: the
PyTorch docs' extending examples, a tutorial Function with its training loop at import time, an
nn model with a local module and a lazy import, and names gradtool lacks, which are clear errors.
All pass whether or not torch is installed: the alias wins over real torch, and leaves it as it
was."""
import importlib.util
import os
import sys
import textwrap

import numpy as np
import pytest

import cli_util as cu
from cli_util import assert_clean_user_error, assert_exit

FILES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch_files")
TORCH_INSTALLED = importlib.util.find_spec("torch") is not None


def tf(name):
    return os.path.join(FILES, name)


RUNS = {
    "exp": ("gradcheck", "--json", tf("extending.py::Exp")),
    "my_cube": ("gradcheck", "--json", "--order", "2", tf("extending.py::my_cube")),
    "linear_layer": ("gradcheck", "--json", tf("extending.py::linear_layer")),
    "times_five": ("gradcheck", "--json", tf("extending.py::times_five")),
    "inspect_cube": ("inspect", "--json", tf("extending.py::MyCube")),
    "tutorial": ("gradcheck", "--json", tf("tutorial_legendre.py")),
    "model": ("gradcheck", "--json", tf("nn_model.py")),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each file through the real CLI, once, in parallel: {key: Result}; "render" wrote the
    DOT file at runs["render_path"]."""
    out = tmp_path_factory.mktemp("render") / "model.dot"
    commands = {**RUNS, "render": ("render", tf("nn_model.py::loss_of"), "-o", out)}
    results = dict(zip(commands, cu.run_many(list(commands.values()))))
    results["render_path"] = out
    return results


def _passed_targets(result):
    assert_exit(result, 0)
    return {t["name"]: t for t in result.json()["targets"] if t["passed"]}


def test_pytorch_docs_extending_examples_pass_gradcheck_unchanged(runs):
    assert set(_passed_targets(runs["exp"])) == {"Exp"}
    assert set(_passed_targets(runs["linear_layer"])) == {"linear_layer"}  # nn.Module + Function
    assert set(_passed_targets(runs["times_five"])) == {"times_five"}      # setup_context style
    cube = _passed_targets(runs["my_cube"])["my_cube"]
    # MyCube's backward is differentiable, as the docs say: both orders checked and passed
    assert [(rep["order"], rep["passed"]) for rep in cube["reports"]] == [(1, True), (2, True)]


def test_pytorch_docs_mycube_graph_has_one_node_for_both_outputs(runs):
    r = runs["inspect_cube"]
    assert_exit(r, 0)
    (target,) = cu.check_inspect_document(r.json()).values()
    names = sorted(n["name"] for n in target["graph"]["nodes"])
    assert names == ["AccumulateGrad", "MyCubeBackward"]


def test_tutorial_function_file_trains_at_import_then_passes_gradcheck(runs):
    r = runs["tutorial"]
    assert set(_passed_targets(r)) == {"LegendrePolynomial3"}
    assert "Result: y = " in r.stderr  # its print()s went to stderr: stdout is the JSON


def test_nn_model_file_with_local_module_and_lazy_torch_import(runs):
    # lazy_softmax_loss imports torch.nn.functional when gradtool calls it, after the load
    assert set(_passed_targets(runs["model"])) == {"loss_of", "lazy_softmax_loss"}


def test_render_draws_a_torch_files_graph(runs):
    assert_exit(runs["render"], 0)
    source = runs["render_path"].read_text()
    assert "TanhBackward0" in source and "fc1.weight" in source


# names gradtool lacks, each used the way real files use them: (file text, line, name)
UNSUPPORTED = {
    "attribute_in_a_target": ("import torch\n\n\ndef f(x):\n"
                              "    return torch.onnx.export(x)\n", 5, "torch.onnx"),
    "tensor_method": ("def f(x):\n    return x.to_mkldnn().abs().sum()\n", 2,
                      "torch.Tensor.to_mkldnn"),
    "import_submodule": ("import torch\nimport torch.onnx\n\n\ndef f(x):\n    return x.sum()\n",
                         2, "torch.onnx"),
    "from_torch_import": ("from torch import onnx\n\n\ndef f(x):\n    return x.sum()\n",
                          1, "torch.onnx"),
    "from_module_import_function": ("from torch.nn.functional import handle_torch_function\n"
                                    "\n\ndef f(x):\n    return x.sum()\n",
                                    1, "torch.nn.functional.handle_torch_function"),
    "from_utils_import": ("import torch\nfrom torch.nn.utils import prune\n\n\n"
                          "def f(x):\n    return x.sum()\n", 2, "torch.nn.utils.prune"),
    "from_missing_submodule_import": ("from torch.utils.mobile_optimizer import "
                                      "optimize_for_mobile\n\n\n"
                                      "def f(x):\n    return x.sum()\n",
                                      1, "torch.utils.mobile_optimizer"),
    "layer_at_import": ("import torch\n\nact = torch.nn.quantized.Linear(2, 2)\n\n\n"
                        "def f(x):\n    return x.sum()\n", 3, "torch.nn.quantized"),
    "from_import_in_a_target": ("import torch\n\n\ndef f(x):\n"
                                "    from torch.nn.utils import prune\n"
                                "    return x.sum()\n", 5, "torch.nn.utils.prune"),
    "import_in_a_target": ("import torch\n\n\ndef f(x):\n    import torch.export\n"
                           "    return x.sum()\n", 5, "torch.export"),
    "missing_tensor_method": ("def f(x):\n    return x.int_repr()\n", 2,
                              "torch.Tensor.int_repr"),
    "nn_layer_in_a_module": (textwrap.dedent("""\
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.quantized.Conv2d(1, 1, 3)


        net = Net()


        def f(x):
            return x.sum()
        """), 8, "torch.nn.quantized"),
}


IN_A_TARGET = {"attribute_in_a_target", "tensor_method", "from_import_in_a_target",
               "import_in_a_target", "missing_tensor_method"}


@pytest.fixture(scope="module")
def unsupported_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("unsupported")
    paths = {}
    for key, (source, _, _) in UNSUPPORTED.items():
        paths[key] = folder / f"{key}.py"
        paths[key].write_text(source)
    results = cu.run_many([("gradcheck", str(p)) for p in paths.values()])
    return {key: (paths[key], r) for key, r in zip(paths, results)}


@pytest.mark.parametrize("key", sorted(UNSUPPORTED))
def test_a_torch_name_gradtool_lacks_is_a_clear_error_naming_it_and_the_line(
        unsupported_runs, key):
    path, result = unsupported_runs[key]
    _, line, name = UNSUPPORTED[key]
    mentions = (f"{path}:{line}", f"gradtool's engine does not provide {name} (yet);")
    if key in IN_A_TARGET:  # raised when the target runs: reported in its place, others run
        message = cu.assert_target_error(result, "f", *mentions)
    else:                   # raised when the file loads: the whole run's error
        message = assert_clean_user_error(result, *mentions)
    assert "AttributeError" not in message and "ImportError" not in message
    # --engine torch is suggested where it can run, and PyTorch's absence said otherwise
    if TORCH_INSTALLED:
        assert "run the file on PyTorch itself with --engine torch" in message, message
    else:
        assert "needs PyTorch itself (--engine torch), which is not installed here" in message


def test_probing_for_missing_names_works_as_with_torch(tmp_path):
    """hasattr, getattr with a default and `except ImportError` see a missing name as
    missing (the error is an AttributeError / ModuleNotFoundError still)."""
    user = tmp_path / "probing.py"
    user.write_text(textwrap.dedent("""\
        import torch

        HAS_ONNX = hasattr(torch, "onnx")
        CONV = getattr(torch.nn, "quantized", None)
        try:
            import torch.onnx
            IMPORTED = True
        except ImportError:
            IMPORTED = False


        def f(x):
            assert (HAS_ONNX, CONV, IMPORTED) == (False, None, False)
            return (x * 2).sum()
        """))
    r = cu.run("gradcheck", "--json", user)
    assert_exit(r, 0)
    assert r.json()["targets"][0]["passed"]



def test_a_file_using_fft_stft_and_special_is_checked_on_the_engine(tmp_path):
    """torch.fft, torch.stft with a window and torch.special as real files write them: every
    target's gradient passes the check (exit 0), on gradtool's engine."""
    user = tmp_path / "spectral.py"
    user.write_text(textwrap.dedent("""\
        import gradtool
        import torch
        import torch.fft
        from torch.special import i0e, xlogy


        @gradtool.example((4, 6), (4, 4))
        def spectral_conv(x, w):
            X = torch.fft.rfft2(x, norm="ortho")
            return torch.fft.irfft2(X * w, s=x.shape[-2:], norm="ortho").pow(2).sum()


        @gradtool.example((40,))
        def spectrogram(x):
            window = torch.hann_window(8, dtype=x.dtype)
            S = torch.stft(x, 8, hop_length=2, window=window, return_complex=True)
            return S.abs().pow(2).sum()


        def special(x):
            return (i0e(x) + xlogy(x, x.abs() + 1) + torch.lgamma(x.abs() + 1)).sum()
        """))
    r = cu.run("gradcheck", "--json", user)
    assert_exit(r, 0)
    results = {t["name"]: t["passed"] for t in r.json()["targets"]}
    assert results == {"spectral_conv": True, "spectrogram": True, "special": True}


# ------------------------------------------------------------------ in process: no leaks

def _torch_entries():
    return {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}


def test_loading_a_torch_file_leaves_sys_modules_and_meta_path_as_they_were():
    from gradtool.capture.loader import load
    before, finders = _torch_entries(), list(sys.meta_path)
    targets = load(tf("extending.py::Exp"))
    assert targets[0].obj.__module__.startswith("gradtool_user_")
    after = _torch_entries()
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)
    assert sys.meta_path == finders


def test_alias_maps_torch_modules_to_gradtools_and_refuses_others():
    import gradtool
    from gradtool.engine.errors import NotInEngineImportError
    from gradtool.adapters.torch_alias import torch_is_gradtool
    before = _torch_entries()  # real torch's, if an earlier test imported it
    with torch_is_gradtool():
        import torch
        import torch.autograd.functional
        import torch.nn.functional as F
        from torch import nn, optim
        from torch.autograd import Function, gradcheck
        from torch.testing import assert_close
        assert torch is gradtool.engine and F is gradtool.nn.functional
        assert (nn, optim, Function) == (gradtool.nn, gradtool.optim,
                                         gradtool.autograd.Function)
        assert gradcheck is gradtool.autograd.gradcheck
        assert assert_close is gradtool.testing.assert_close
        assert torch.autograd.functional is gradtool.autograd.functional
        with pytest.raises(NotInEngineImportError, match=r"does not provide torch\.onnx \(yet\)"):
            import torch.onnx  # noqa: F401
        with torch_is_gradtool():  # re-entrant: the inner exit keeps the outer mapping
            pass
        import torch as again
        assert again is gradtool.engine
    after = _torch_entries()
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)


@pytest.mark.skipif(not TORCH_INSTALLED, reason="needs PyTorch installed")
def test_alias_wins_over_an_imported_real_torch_and_gives_it_back():
    import torch as real_torch
    import torch.nn as real_nn

    import gradtool
    from gradtool.adapters.torch_alias import torch_is_gradtool
    with torch_is_gradtool():
        import torch
        import torch.nn
        assert torch is gradtool.engine and torch.nn is gradtool.nn
    import torch
    import torch.nn
    assert torch is real_torch and torch.nn is real_nn
    assert sys.modules["torch.nn"] is real_nn


# ------------------------------------------------------------------ training files, both engines

def _on_both_engines(name):
    """The file imported on gradtool's engine and on torch's, gradtool's modules holding
    torch's initial weights: (ours, theirs) module namespaces."""
    import gradtool.adapters as engines
    from gradtool.capture.loader import import_user_file
    with engines.use("gradtool"):
        ours = import_user_file(tf(name))
    with engines.use("torch"):
        theirs = import_user_file(tf(name))
    import gradtool
    ours.model.load_state_dict({k: gradtool.tensor(v.detach().numpy())
                                for k, v in theirs.model.state_dict().items()})
    return ours, theirs


def _parameters(module):
    return [p.detach().numpy().copy() for p in module.model.parameters()]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_char_lstm_file_trains_as_on_torch(dtype):
    """Three steps of the char-level LSTM (embedding, 2-layer batch-first LSTM, cross-entropy,
    clipping, Adam, StepLR) give torch's losses and weights: to float64 rounding when the
    model is made float64, to float32 rounding as written (torch's float32 LSTM is oneDNN's
    fused kernel there)."""
    pytest.importorskip("torch")
    ours, theirs = _on_both_engines("char_lstm.py")
    if dtype == "float64":
        ours.model.double()
        theirs.model.double()
    rng = np.random.default_rng(0)
    starts = rng.integers(0, len(ours.TEXT) - ours.BLOCK - 1, (3, 8))
    losses = []
    for module in (ours, theirs):
        data = module.CharDataset(module.TEXT, module.BLOCK)
        run = []
        for batch in starts:
            x, y = (module.torch.stack(list(t)) for t in zip(*(data[int(i)] for i in batch)))
            run.append(module.train_step(x, y))
        losses.append(run)
    rtol = 1e-10 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(losses[0], losses[1], rtol=rtol)
    for mine, theirs_p in zip(_parameters(ours), _parameters(theirs)):
        np.testing.assert_allclose(mine, theirs_p, rtol=rtol, atol=1e-12 if dtype == "float64"
                                   else 2e-6)
    assert ours.scheduler.get_last_lr() == theirs.scheduler.get_last_lr()
    assert len(ours.sample(n=5)) == 9  # sampling runs (its draws are each engine's own)


@pytest.mark.parity
def test_actor_critic_file_replays_an_episode_as_on_torch():
    """The same episode replayed on both engines: Categorical log-probabilities and entropy,
    returns, smooth-L1 value loss, one Adam step: torch's loss, gradients and weights."""
    pytest.importorskip("torch")
    ours, theirs = _on_both_engines("actor_critic.py")
    actions = [1, 0, 1, 0, 0, 1, 1, 1]  # reaches the end at the last one
    results = []
    for module in (ours, theirs):
        taken, loss = module.run_episode(module.Walk(), actions)
        assert taken == actions
        grads = [p.grad.numpy().copy() for p in module.model.parameters()]
        results.append((loss, grads, _parameters(module)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for mine, theirs_g in zip(results[0][1] + results[0][2], results[1][1] + results[1][2]):
        np.testing.assert_allclose(mine, theirs_g, rtol=1e-4, atol=1e-6)


def test_actor_critic_file_learns_on_gradtool():
    """Sampled episodes on gradtool's engine: the agent learns to walk right (episodes get
    shorter)."""
    import gradtool.adapters as engines
    from gradtool.capture.loader import import_user_file
    with engines.use("gradtool"):
        module = import_user_file(tf("actor_critic.py"))
    module.torch.manual_seed(1)
    lengths = module.main(episodes=60)
    assert np.mean(lengths[-10:]) < np.mean(lengths[:10]) and np.mean(lengths[-10:]) <= 4


def _train_both(name, dtype, steps, make_batch, prepare=None):
    """`steps` training steps of a file's model on both engines from torch's initial weights
    (float64 when asked): (ours, theirs, [losses ours, losses theirs])."""
    ours, theirs = _on_both_engines(name)
    losses = []
    for module in (ours, theirs):
        if dtype == "float64":
            module.model.double()
        if prepare is not None:
            prepare(module)
        run = []
        for step in range(steps):
            batch = make_batch(module, step)
            run.append(module.train_step(*batch))
        losses.append(run)
    return ours, theirs, losses


def _assert_trained_alike(ours, theirs, losses, dtype):
    rtol = 1e-9 if dtype == "float64" else 2e-4
    np.testing.assert_allclose(losses[0], losses[1], rtol=rtol)
    mine = dict(ours.model.state_dict())
    for key, value in theirs.model.state_dict().items():  # parameters and BatchNorm's buffers
        np.testing.assert_allclose(mine[key].numpy(), value.numpy(), rtol=rtol,
                                   atol=1e-10 if dtype == "float64" else 1e-5, err_msg=key)


def _images(module, step, shape, dtype, binary=False):
    rng = np.random.default_rng(step)
    x = rng.uniform(0, 1, shape) if binary else rng.standard_normal(shape)
    return module.torch.tensor(x.astype(dtype))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_small_cnn_file_trains_as_on_torch(dtype):
    """Three SGD-with-momentum steps of a CNN with Conv2d, BatchNorm2d, in-place ReLU, max and
    average pooling, adaptive average pooling and a Linear head give torch's losses, weights
    and running statistics (Dropout2d at p=0: each engine draws its own mask); evaluation
    mode uses the running statistics as torch's does."""
    pytest.importorskip("torch")

    def prepare(module):
        module.model.features[7].p = 0.0

    def batch(module, step):
        labels = module.torch.tensor(np.random.default_rng(10 + step).integers(0, 10, 8))
        return _images(module, step, (8, 1, 28, 28), dtype), labels
    ours, theirs, losses = _train_both("small_cnn.py", dtype, 3, batch, prepare)
    _assert_trained_alike(ours, theirs, losses, dtype)
    images, labels = batch(ours, 7)
    t_images, t_labels = batch(theirs, 7)
    assert ours.accuracy(images, labels) == theirs.accuracy(t_images, t_labels)
    assert int(ours.model.features[1].num_batches_tracked) == 3


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv_vae_file_trains_as_on_torch(dtype):
    """Two Adam steps of a convolutional VAE (strided Conv2d, GroupNorm, ConvTranspose2d,
    Upsample, BCE + KL) give torch's losses and weights, the reparameterisation's noise fixed
    to the same values on both engines; sampling runs."""
    pytest.importorskip("torch")
    noise = np.random.default_rng(99).standard_normal((2, 4, 8))

    def prepare(module):
        torch = module.torch
        steps = iter(noise)

        def reparameterize(mu, logvar):  # the file's own formula, with fixed noise
            return mu + torch.tensor(next(steps)).to(mu.dtype) * torch.exp(0.5 * logvar)
        module.model.reparameterize = reparameterize

    def batch(module, step):
        return (_images(module, step, (4, 1, 28, 28), dtype, binary=True),)
    ours, theirs, losses = _train_both("conv_vae.py", dtype, 2, batch, prepare)
    _assert_trained_alike(ours, theirs, losses, dtype)
    if dtype == "float32":  # (sample draws float32 latents, as the file is written)
        assert tuple(ours.sample(3).shape) == (3, 1, 28, 28)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_resnet_file_trains_as_on_torch(dtype):
    """Two steps of a torchvision-style ResNet (in-place `out += identity`, downsample,
    kaiming init, label-smoothed cross-entropy, Nesterov SGD with weight decay, MultiStepLR)
    on the data torch drew as the file was imported: torch's losses, weights and BatchNorm
    statistics, and its learning rate after the schedule."""
    pytest.importorskip("torch")
    ours, theirs = _on_both_engines("resnet_block.py")
    ours.x = ours.torch.tensor(theirs.x.numpy())
    losses = []
    for module in (ours, theirs):
        if dtype == "float64":
            module.model.double()
            module.x = module.x.double()
        losses.append([module.train().item()])
    _assert_trained_alike(ours, theirs, losses, dtype)
    assert ours.optimizer.param_groups[0]["lr"] == theirs.optimizer.param_groups[0]["lr"]


def test_every_module_import_torch_mirrors_names_a_missing_name_by_torchs_path():
    """torch.autograd.function, torch.backends.cudnn, torch.nn.modules.loss, ...: each module
    `import torch` gives on gradtool's engine says torch's name of what it lacks."""
    from gradtool.adapters.torch_alias import MIRRORED, _gradtool_modules
    from gradtool.engine.errors import NotInEngineAttributeError
    modules = _gradtool_modules()
    for name in MIRRORED:
        with pytest.raises(NotInEngineAttributeError) as caught:
            getattr(modules[name], "not_a_torch_name")
        assert caught.value.torch_name == f"{name}.not_a_torch_name"


def test_functions_under_grad_mode_decorators_are_targets(tmp_path):
    """@torch.enable_grad(), @torch.no_grad(), @torch.inference_mode() and
    @torch.set_grad_enabled(...) wrap the function (functools.wraps) in the library's code:
    the target is the user's function, at the user's line, called through the wrapper."""
    from gradtool.capture.loader import load
    user = tmp_path / "decorated.py"
    user.write_text(textwrap.dedent("""\
        import torch


        @torch.enable_grad()
        def enabled(x):
            return (x.sin() * x).sum()


        @torch.no_grad()
        def under_no_grad(x):
            return x.sum()


        @torch.inference_mode()
        def under_inference(x):
            return x.sum()


        @torch.set_grad_enabled(True)
        def set_enabled(x):
            return x.exp().sum()
        """))
    targets = load(str(user))
    assert [(t.name, t.lineno, t.param_names) for t in targets] == [
        ("enabled", 4, ["x"]), ("under_no_grad", 9, ["x"]), ("under_inference", 14, ["x"]),
        ("set_enabled", 19, ["x"])]
    result = cu.run("gradcheck", "--json", f"{user}::enabled")
    assert_exit(result, 0)
