"""Tensors on any device under --engine torch (GPU kernels are what the reference check is for):
every value read goes through the engine adapter's one host copy, inputs off the host are
perturbed where they live, --device places generated inputs, reports show devices, a device torch
lacks is a clear error. Without a GPU, tested through OffHost (tests/torch_files/off_host.py: CPU
memory that refuses .numpy() as a CUDA tensor does) and torch's meta device (no values); the
`cuda` tests run the same commands on a GPU and skip without one."""
import os
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import cli_util as cu
from cli_util import assert_clean_user_error, assert_exit

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

FILES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torch_files")
OFF_HOST = os.path.join(FILES, "off_host.py")
HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU (or a CPU build of torch)")

SHAPES = textwrap.dedent("""\
    import torch

    import gradtool


    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x ** 2


    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh()).double()


    @gradtool.example((2, 4))
    def mlp(x):
        return model.to(x.device)(x).sum()
    """)


# a model moved to a device: generated inputs follow it without --device
MOVED_MODEL = textwrap.dedent("""\
    import torch

    import gradtool

    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1)).double().to("{device}")


    @gradtool.example((4, 8))
    def mlp(x):
        return model(x).sum()
    """)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("devices")
    user = folder / "shapes.py"
    user.write_text(SHAPES)
    moved = folder / "moved.py"
    moved.write_text(MOVED_MODEL.format(device="meta"))
    commands = {
        "gradcheck": ("gradcheck", "--engine", "torch", "--json", OFF_HOST),
        "inspect": ("inspect", "--engine", "torch", "--json", f"{OFF_HOST}::Legendre"),
        "meta_inspect": ("inspect", "--engine", "torch", "--json", "--device", "meta", user),
        "meta_render": ("render", "--engine", "torch", "--device", "meta", user, "-o",
                        folder / "meta.svg"),
        "meta_gradcheck": ("gradcheck", "--engine", "torch", "--device", "meta",
                           f"{user}::Cube"),
        "cuda_missing": ("gradcheck", "--engine", "torch", "--device", "cuda", user),
        "gradtool_cuda": ("inspect", "--device", "cuda", user),
        "bad_name": ("inspect", "--engine", "torch", "--device", "warp9", user),
        "moved": ("inspect", "--engine", "torch", "--json", moved),
    }
    results = dict(zip(commands, cu.run_many(list(commands.values()))))
    results["meta_svg"] = folder / "meta.svg"
    return results


def test_off_host_inputs_are_checked_as_cpu_ones(runs):
    """gradcheck (with the reference check), where every read of an OffHost input must go
    through .cpu(): the right Function passes, the wrong one fails, nothing crashes."""
    r = runs["gradcheck"]
    assert_exit(r, 1)
    targets = {t["name"]: t for t in r.json()["targets"]}
    right, wrong = targets["Legendre"], targets["WrongLegendre"]
    assert right["passed"] and right["reference"]["passed"]
    assert not wrong["passed"] and not wrong["reports"][0]["pairs"][0]["passed"]
    assert right["reports"][0]["inputs"][0]["device"] == "cpu"


def test_off_host_inspect_reads_values_through_the_adapter(runs):
    r = runs["inspect"]
    assert_exit(r, 0)
    [target] = r.json()["targets"]
    saved = target["graph"]["nodes"][0]["saved"][0]
    assert saved["min"] == pytest.approx(-0.9) and saved["max"] == pytest.approx(0.8)
    leaf = next(n["leaf"] for n in target["graph"]["nodes"] if n["leaf"])
    assert leaf["grad_norm"] > 0 and leaf["device"] == "cpu"


def test_meta_device_inspect_and_render_show_the_device_without_values(runs):
    r = runs["meta_inspect"]
    assert_exit(r, 0)
    targets = {t["name"]: t for t in r.json()["targets"]}
    for target in targets.values():
        assert {i["device"] for i in target["inputs"]} == {"meta"}
        leaves = [n["leaf"] for n in target["graph"]["nodes"] if n["leaf"]]
        inputs = [leaf for leaf in leaves if leaf["name"] == "x"]
        assert inputs and all(leaf["device"] == "meta" and leaf["grad_norm"] is None
                              for leaf in inputs)
    saved = targets["Cube"]["graph"]["nodes"][0]["saved"][0]
    assert saved["shape"] == [3] and saved["min"] is None
    assert_exit(runs["meta_render"], 0)
    ET.parse(runs["meta_svg"])


def test_generated_inputs_follow_the_files_model_to_its_device(runs):
    r = runs["moved"]
    assert_exit(r, 0)
    [target] = r.json()["targets"]
    assert [i["device"] for i in target["inputs"]] == ["meta"]


def test_meta_device_gradcheck_says_it_has_no_values(runs):
    r = runs["meta_gradcheck"]
    assert_exit(r, 2)
    assert "meta device, which holds no values" in cu.flat(r.stdout), str(r)


@pytest.mark.skipif(HAS_CUDA, reason="CUDA is available here")
def test_a_device_torch_lacks_is_a_clear_error(runs):
    assert_clean_user_error(runs["cuda_missing"], "--device cuda", "torch cannot place")
    assert_clean_user_error(runs["gradtool_cuda"], "--device cuda", "CPU only")
    assert_clean_user_error(runs["bad_name"], "--device warp9")


def test_adapter_copies_off_host_values_and_perturbs_them_in_place():
    """The adapter's two doors: array() copies a tensor that is not in host memory (never
    .numpy() on it); writable() writes where the values live, moving no version counter."""
    from gradtool.adapters import torch as torch_engine
    from gradtool.adapters.torch import DeviceValues
    import importlib.util
    spec = importlib.util.spec_from_file_location("off_host", OFF_HOST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = module.off_host(2, 3)
    host = torch_engine.array(x)
    host[0, 0] = 99.0
    assert x[0, 0].item() == pytest.approx(-0.9)  # a copy
    values = torch_engine.writable(x)
    assert isinstance(values, DeviceValues) and values.shape == (2, 3)
    version = x._version
    values.flat[4] = 7.0
    assert x.detach()[1, 1].item() == 7.0 and values.flat[4] == 7.0
    values[...] = np.zeros((2, 3))
    assert float(x.detach().abs().sum()) == 0.0 and x._version == version
    plain = torch.zeros(3, dtype=torch.float64)
    assert isinstance(torch_engine.writable(plain), np.ndarray)  # CPU: shares memory
    half = torch.zeros(2, dtype=torch.bfloat16)
    assert torch_engine.array(half).dtype == np.float32  # numpy has no bfloat16


# ------------------------------------------------------------------ on a GPU
@pytest.fixture(scope="module")
def cuda_runs(tmp_path_factory):
    if not HAS_CUDA:
        pytest.skip("no CUDA GPU (or a CPU build of torch)")
    folder = tmp_path_factory.mktemp("cuda")
    user = folder / "shapes.py"
    user.write_text(SHAPES)
    moved = folder / "moved.py"
    moved.write_text(MOVED_MODEL.format(device="cuda"))
    commands = {c: (c, "--engine", "torch", "--json", "--device", "cuda", user)
                for c in ("inspect", "gradcheck")}
    commands["moved"] = ("gradcheck", "--engine", "torch", "--json", moved)
    commands["render"] = ("render", "--engine", "torch", "--device", "cuda", user, "-o",
                          folder / "cuda.svg")
    return dict(zip(commands, [cu.run(*c) for c in commands.values()]))


@pytest.mark.cuda
@needs_cuda
def test_cuda_inputs_work_in_every_command(cuda_runs):
    assert_exit(cuda_runs["gradcheck"], 0)
    for target in cuda_runs["gradcheck"].json()["targets"]:
        assert target["passed"]
        assert target["reports"][0]["inputs"][0]["device"] == "cuda:0"
    assert_exit(cuda_runs["inspect"], 0)
    for target in cuda_runs["inspect"].json()["targets"]:
        assert {i["device"] for i in target["inputs"]} == {"cuda:0"}
    assert_exit(cuda_runs["render"], 0)


@pytest.mark.cuda
@needs_cuda
def test_cuda_model_gets_cuda_inputs_without_device_option(cuda_runs):
    r = cuda_runs["moved"]
    assert_exit(r, 0)
    [target] = r.json()["targets"]
    assert target["passed"] and target["reports"][0]["inputs"][0]["device"] == "cuda:0"


@pytest.mark.cuda
@needs_cuda
def test_cuda_reference_check_and_testing_api():
    from gradtool.frontends.testing import assert_matches_reference
    spec_x = torch.randn(16, 32, dtype=torch.float64, device="cuda", requires_grad=True)

    def reference(x):
        return torch.softmax(x, -1)

    def fused(x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)
    assert_matches_reference(fused, reference, (spec_x,),
                             dtypes=["float32", "bfloat16", "float16"])
