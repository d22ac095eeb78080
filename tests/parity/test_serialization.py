"""Checkpoints against torch's: a file either one saves loads in the other, and gradtool.load
refuses what torch.load refuses (code, a GPU's storages) with the same message. Tests marked
parity, skipped without torch."""
import os
import pickle
import re
import subprocess

import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.errors import NotInEngineError
from tests.engine.test_serialization import _RunsCode

pytestmark = pytest.mark.parity


def test_refusal_reads_as_torch_s(tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    torch_path, gt_path = tmp_path / "torch.pt", tmp_path / "gt.pt"
    # (torch pickles with protocol 2, where subprocess is spelled "commands")
    for via, expected in ((subprocess.call, r"WeightsUnpickler error: Unsupported global: "
                                            r"GLOBAL \w+\.call was not an allowed global by "
                                            r"default\. Please use `\w+\.serialization\."
                                            r"add_safe_globals\(\[\w+\.call\]\)`"),
                          (os.system, r"\n\n\nTrying to load unsupported GLOBAL posix\.system "
                                      r"whose module posix is blocked\.")):
        torch.save({"payload": _RunsCode(marker, via)}, torch_path)
        gt.save({"payload": _RunsCode(marker, via)}, gt_path)
        for load, path in ((torch.load, torch_path), (gt.load, gt_path)):
            with pytest.raises(pickle.UnpicklingError) as info:
                load(path)
            message = str(info.value)
            assert message.startswith("Weights only load failed."), message
            assert re.search(expected, message), message
            assert "Re-running" in message and "`weights_only` set to `False`" in message
        assert not marker.exists()


def _checkpoint(lib):
    """A training checkpoint: a model's state dict, a parameter, views sharing a base, and
    the values torch pickles by name (dtype, Size, device)."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    base = lib.arange(6.0).view(2, 3)
    return {"model": model.state_dict(), "weight": model[0].weight, "base": base,
            "view": base[:, 1:], "half": lib.ones(2, dtype=lib.float16),
            "complex": lib.tensor([1 + 2j]), "ints": lib.arange(3), "mask": lib.tensor([True]),
            "grad": lib.ones(2, requires_grad=True), "dtype": lib.float64,
            "size": lib.Size([2, 3]), "device": lib.device("cpu"), "step": 7,
            "bytes": b"\x00\xff", "complex_number": 1 + 2j, "tags": {"a"}}


@pytest.mark.parametrize("writer, reader", [("gradtool", "torch"), ("torch", "gradtool")])
def test_a_checkpoint_travels_between_torch_and_gradtool(tmp_path, writer, reader):
    torch = pytest.importorskip("torch")
    libs = {"gradtool": gt, "torch": torch}
    written = _checkpoint(libs[writer])
    libs[writer].save(written, tmp_path / "ckpt.pt")
    loaded = libs[reader].load(tmp_path / "ckpt.pt")  # weights_only, the default
    assert list(loaded) == list(written)
    for key, value in written.items():
        if hasattr(value, "detach"):
            assert loaded[key].dtype == getattr(libs[reader], str(value.dtype).split(".")[1])
            assert loaded[key].requires_grad == value.requires_grad
            assert np.array_equal(loaded[key].detach().numpy(), value.detach().numpy())
        elif key == "model":
            assert list(loaded[key]) == list(value)
    assert type(loaded["weight"]).__name__ == "Parameter"
    assert loaded["dtype"] is libs[reader].float64 and loaded["size"] == (2, 3)
    assert str(loaded["device"]) == "cpu"
    assert loaded["bytes"] == b"\x00\xff" and loaded["complex_number"] == 1 + 2j
    loaded["base"][0, 1] = 100.0  # the view shares its base's storage, as it did when saved
    assert loaded["view"][0, 0].item() == 100.0
    # the state dict restores the reader's own model to the writer's numbers
    model = libs[reader].nn.Sequential(libs[reader].nn.Linear(3, 2),
                                       libs[reader].nn.BatchNorm1d(2))
    model.load_state_dict(loaded["model"])
    assert np.array_equal(model[0].weight.detach().numpy(),
                          written["model"]["0.weight"].detach().numpy())


def test_a_checkpoint_saved_on_a_gpu_needs_map_location_as_in_torch(tmp_path):
    """torch's CPU build refuses storages saved on cuda unless map_location says where."""
    torch = pytest.importorskip("torch")
    import zipfile
    path = tmp_path / "gpu.pt"
    torch.save({"w": torch.ones(2)}, path)
    with zipfile.ZipFile(path) as archive:
        records = {name: archive.read(name) for name in archive.namelist()}
    # the location 'cpu' in the storage's persistent id, as a GPU run writes 'cuda:0'
    records["gpu/data.pkl"] = records["gpu/data.pkl"].replace(
        b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in records.items():
            archive.writestr(name, data)
    messages = []
    for load in (torch.load, gt.load):
        with pytest.raises(RuntimeError) as info:
            load(path)
        messages.append(str(info.value))
        assert load(path, map_location="cpu")["w"].tolist() == [1.0, 1.0]
    assert messages[0] == messages[1]


def test_torch_s_pre_zip_format_is_a_clear_refusal_not_a_number(tmp_path):
    """That format's first pickle is a magic number: loaded as a plain pickle it would be
    returned as the checkpoint."""
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.ones(2)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(NotInEngineError, match="pre-1.6 checkpoint format"):
        gt.load(tmp_path / "old.pt")
    with pytest.raises(NotInEngineError, match="pre-1.6 format"):
        gt.save({"w": gt.ones(2)}, tmp_path / "mine.pt", _use_new_zipfile_serialization=False)
