"""gradtool.save / gradtool.load: round trips, and weights_only (the default, as torch 2.6+)
building only tensors, containers and numbers: a checkpoint never runs code unless asked."""
import collections
import io
import os
import pickle
import re
import subprocess
import zipfile

import numpy as np
import pytest

import gradtool as gt
from gradtool.engine import serialization


class _RunsCode:
    """A pickle that runs a command when unpickled: what a malicious checkpoint holds."""

    def __init__(self, marker, via=subprocess.call):
        self.marker, self.via = marker, via

    def __reduce__(self):
        if self.via is os.system:
            return (os.system, (f"touch {self.marker}",))
        return (self.via, (["touch", str(self.marker)],))


def _roundtrip(obj, **load_args):
    buffer = io.BytesIO()
    gt.save(obj, buffer)
    buffer.seek(0)
    return gt.load(buffer, **load_args)


def test_weights_only_round_trip_keeps_tensors_parameters_containers_and_numbers(tmp_path):
    model = gt.nn.Linear(3, 2)
    checkpoint = {
        "model": model.state_dict(), "weight": model.weight, "step": 7, "lr": 0.1,
        "name": "run", "flags": [True, None], "pair": (1, 2.5j), "tags": {"a"},
        "frozen": frozenset({1}), "raw": b"\x00\x01", "counts": collections.Counter("aab"),
        "x": gt.tensor([1.0, 2.0], requires_grad=True), "ints": gt.arange(4).reshape(2, 2),
        "half": gt.ones(2, dtype=gt.float16), "empty": gt.zeros(0, 3), "scalar": gt.tensor(3.0),
        "strided": gt.arange(6.0)[::2], "transposed": gt.ones(2, 3).T, "dtype": gt.float64,
        "complex": gt.tensor([1 + 2j]), "mask": gt.tensor([True, False]), "size": gt.Size([2]),
        "device": gt.device("cpu"),
    }
    path = tmp_path / "ckpt.pt"
    gt.save(checkpoint, path)
    loaded = gt.load(path)  # weights_only by default
    assert type(loaded["model"]) is collections.OrderedDict
    assert list(loaded["model"]) == ["weight", "bias"]
    assert type(loaded["weight"]) is gt.nn.Parameter and loaded["weight"].requires_grad
    assert loaded["x"].requires_grad and loaded["x"].is_leaf and not loaded["ints"].requires_grad
    for key in ("x", "ints", "half", "empty", "scalar", "strided", "transposed", "complex",
                "mask"):
        assert loaded[key].dtype is checkpoint[key].dtype
        assert loaded[key].shape == checkpoint[key].shape
        np.testing.assert_array_equal(loaded[key].detach().numpy(),
                                      checkpoint[key].detach().numpy())
    assert loaded["dtype"] is gt.float64
    for key in ("step", "lr", "name", "flags", "pair", "tags", "frozen", "raw", "counts"):
        assert loaded[key] == checkpoint[key] and type(loaded[key]) is type(checkpoint[key])
    assert loaded["size"] == (2,) and type(loaded["size"]) is gt.Size
    assert loaded["device"] == gt.device("cpu")
    # a loaded state dict restores a model (the everyday use)
    fresh = gt.nn.Linear(3, 2)
    fresh.load_state_dict(loaded["model"])
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), model.weight.detach().numpy())


def test_a_training_checkpoint_loads_under_weights_only():
    model = gt.nn.Sequential(gt.nn.Linear(2, 3), gt.nn.BatchNorm1d(3))
    opt = gt.optim.Adam(model.parameters(), lr=0.1)
    model(gt.randn(4, 2)).sum().backward()
    opt.step()
    loaded = _roundtrip({"model": model.state_dict(), "optim": opt.state_dict()},
                        map_location="cpu")
    fresh_opt = gt.optim.Adam(model.parameters(), lr=0.1)
    fresh_opt.load_state_dict(loaded["optim"])
    model.load_state_dict(loaded["model"])
    assert fresh_opt.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    for mine, theirs in zip(fresh_opt.state.values(), opt.state.values()):
        assert mine.keys() == theirs.keys()
        for key in mine:
            np.testing.assert_array_equal(mine[key].numpy(), theirs[key].numpy())


def test_the_file_is_torch_s_archive_and_views_keep_sharing_their_storage(tmp_path):
    """torch.save's layout: one folder named after the file, data.pkl and a record per
    storage; a view saved with its base shares the base's record and, loaded, its memory."""
    base = gt.arange(6.0).view(2, 3)
    gt.save({"base": base, "view": base[:, 1:], "own": gt.ones(2)}, tmp_path / "ckpt.pt")
    with zipfile.ZipFile(tmp_path / "ckpt.pt") as archive:
        names = archive.namelist()
        assert archive.read("ckpt/version") == b"3\n"
    assert {"ckpt/data.pkl", "ckpt/data/0", "ckpt/data/1", "ckpt/byteorder"} <= set(names)
    assert "ckpt/data/2" not in names  # the view wrote no record of its own
    loaded = gt.load(tmp_path / "ckpt.pt")
    loaded["base"][0, 1] = 100.0
    assert loaded["view"].tolist() == [[100.0, 2.0], [4.0, 5.0]]


def test_numpy_values_are_refused_under_weights_only_as_torch_refuses_them():
    data = io.BytesIO()
    gt.save({"array": np.arange(3.0), "scalar": np.int64(5)}, data)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL numpy"):
        gt.load(io.BytesIO(data.getvalue()))
    loaded = gt.load(io.BytesIO(data.getvalue()), weights_only=False)
    assert loaded["array"].tolist() == [0.0, 1.0, 2.0] and loaded["scalar"] == 5


class _EarlierPickler(pickle.Pickler):
    """What gradtool.save wrote before it wrote torch's archive: a plain pickle, each array as
    dtype, shape and raw bytes."""

    def reducer_override(self, obj):
        if isinstance(obj, np.ndarray):
            return serialization._rebuild_array, (obj.dtype.str, obj.shape, obj.tobytes())
        return NotImplemented


def test_a_file_earlier_gradtool_versions_wrote_still_loads():
    data = io.BytesIO()
    model = gt.nn.Linear(2, 1)
    _EarlierPickler(data, protocol=pickle.HIGHEST_PROTOCOL).dump(
        {"model": model.state_dict(), "weight": model.weight, "dtype": gt.float16})
    loaded = gt.load(io.BytesIO(data.getvalue()))
    assert loaded["model"]["bias"].tolist() == model.bias.tolist()
    assert type(loaded["weight"]) is gt.nn.Parameter and loaded["dtype"] is gt.float16


@pytest.mark.parametrize("size, stride, offset", [(4, 1, 0), (2, 3, 0), (1, 1, 3)])
def test_a_view_reaching_past_its_storage_is_refused(tmp_path, size, stride, offset):
    """A crafted archive cannot make a tensor read bytes beyond its storage's record."""
    path = tmp_path / "c.pt"
    gt.save({"w": gt.ones(3)}, path)
    with zipfile.ZipFile(path) as archive:
        records = {n: archive.read(n) for n in archive.namelist()}
    # offset 0, size (3,), stride (1,) as written (K: a one-byte int, \x85: a 1-tuple)
    written = re.compile(rb"K\x00K\x03\x85(q.)K\x01\x85", re.DOTALL)
    assert written.search(records["c/data.pkl"])
    records["c/data.pkl"] = written.sub(
        lambda m: b"K%cK%c\x85%sK%c\x85" % (offset, size, m.group(1), stride),
        records["c/data.pkl"])
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in records.items():
            archive.writestr(name, data)
    with pytest.raises(RuntimeError, match="lie outside a storage of 3 elements"):
        gt.load(path)


def test_loaded_tensors_own_writable_memory():
    loaded = _roundtrip({"w": gt.ones(3)})
    loaded["w"].add_(1)
    np.testing.assert_array_equal(loaded["w"].numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("weights_only", [None, True])
def test_a_checkpoint_that_runs_code_is_refused_by_default(tmp_path, weights_only):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    gt.save({"w": gt.ones(2), "payload": _RunsCode(marker)}, path)
    args = {} if weights_only is None else {"weights_only": weights_only}
    with pytest.raises(pickle.UnpicklingError) as info:
        gt.load(path, **args)
    assert not marker.exists(), "loading ran the checkpoint's code"
    message = str(info.value)
    assert message.startswith("Weights only load failed.")
    # (protocol 2, torch's, spells subprocess "commands")
    assert re.search(r"GLOBAL \w+\.call was not an allowed global by default", message)
    assert "`weights_only` set to `False`" in message
    assert "arbitrary code execution" in message


def test_os_and_sys_globals_are_blocked_even_when_allowlisted(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    gt.save(_RunsCode(marker, via=os.system), path)
    with serialization.safe_globals([os.system]), pytest.raises(pickle.UnpicklingError) as info:
        gt.load(path)
    assert not marker.exists()
    assert "GLOBAL posix.system whose module posix is blocked" in str(info.value)
    assert "`weights_only` set to `False`" in str(info.value)


def test_weights_only_false_is_the_explicit_choice_to_run_code(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "trusted.pt"
    gt.save(_RunsCode(marker), path)
    assert gt.load(path, weights_only=False) == 0
    assert marker.exists()


def test_a_pickle_module_means_full_pickle_as_in_torch(tmp_path):
    path = tmp_path / "p.pt"
    gt.save({"w": gt.ones(1)}, path)
    assert gt.load(path, pickle_module=pickle)["w"].tolist() == [1.0]
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        gt.load(path, pickle_module=pickle, weights_only=True)


def _crafted(rebuild_name, args):
    """A pickle calling an allowed rebuild function with arguments it did not write."""
    module, _, name = rebuild_name.rpartition(".")
    return (b"\x80\x05" + pickle.dumps(module, 5)[2:-1] + pickle.dumps(name, 5)[2:-1]
            + b"\x93" + pickle.dumps(args, 5)[2:-1] + b"R.")


@pytest.mark.parametrize("rebuild, args, why", [
    ("gradtool.serialization._rebuild_array", ("|O", (1,), b"\x41" * 8), "not a plain numeric"),
    ("gradtool.serialization._rebuild_array", ("<f8", (1000000,), b"\x00" * 8), "needs"),
    ("gradtool.serialization._rebuild_array", ("<f8", (-1,), b""), "not a tuple of sizes"),
    ("gradtool.serialization._rebuild_array", ("<f8", None, "text"), "not bytes"),
    ("gradtool.autograd.tensor._rebuild", ("data", False), "not (array, bool)"),
    ("gradtool.autograd.dtypes._by_name", ("__class__",), "not a gradtool dtype"),
])
def test_allowed_rebuild_functions_check_their_arguments(rebuild, args, why):
    data = _crafted(rebuild, args)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as info:
        gt.load(io.BytesIO(data))
    assert why in str(info.value)


def test_numpy_own_pickles_are_refused_under_weights_only():
    """A tensor pickled by plain pickle carries numpy's reconstruct functions: not loaded."""
    data = pickle.dumps(gt.ones(2))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL numpy"):
        gt.load(io.BytesIO(data))
    assert gt.load(io.BytesIO(data), weights_only=False).tolist() == [1.0, 1.0]


class _Point:
    def __init__(self, x):
        self.x = x


def test_add_safe_globals_and_safe_globals_allow_a_trusted_class():
    data = io.BytesIO()
    gt.save(_Point(3), data)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        gt.load(io.BytesIO(data.getvalue()))
    with serialization.safe_globals([_Point]):
        assert gt.load(io.BytesIO(data.getvalue())).x == 3
    assert _Point not in serialization.get_safe_globals()
    serialization.add_safe_globals([_Point])
    try:
        assert gt.load(io.BytesIO(data.getvalue())).x == 3
    finally:
        serialization.clear_safe_globals()


