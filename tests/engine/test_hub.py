"""torch.hub on the engine: downloads (file:// URLs here, never the network) into the hub's
cache folder, once, with the hash check; models from a hubconf.py, in a local folder or in a
GitHub repository's cached copy (their comparison with torch is tests/parity/test_hub.py)."""
import hashlib
import os
import textwrap
import zipfile

import pytest

import gradtool as gt
from gradtool.engine import hub
from gradtool.engine.utils import model_zoo

HUBCONF = '''
dependencies = ["numpy"]
import helper


def tiny(width=2, scale=1.0):
    """A Linear of the given width."""
    import gradtool as torch
    layer = torch.nn.Linear(width, 1)
    layer.scale = scale * helper.FACTOR
    return layer


_private = tiny
NOT_CALLABLE = 3
'''


@pytest.fixture
def hub_dir(tmp_path):
    hub.set_dir(str(tmp_path / "hub"))
    yield tmp_path / "hub"
    hub._hub_dir = None


def test_the_cache_folder_follows_torch_home(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    hub.set_dir("~/elsewhere")
    assert hub.get_dir() == os.path.expanduser("~/elsewhere")


def test_a_state_dict_downloads_once_and_loads(hub_dir, tmp_path):
    source = tmp_path / "weights.pt"
    gt.save({"w": gt.arange(3.0)}, str(source))
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    named = tmp_path / f"weights-{digest[:8]}.pt"
    named.write_bytes(source.read_bytes())
    state = gt.hub.load_state_dict_from_url(named.as_uri(), check_hash=True)
    assert state["w"].tolist() == [0.0, 1.0, 2.0]
    cached = hub_dir / "checkpoints" / named.name
    assert cached.exists()
    named.unlink()  # the second call reads the cache
    assert model_zoo.load_url(named.as_uri())["w"].tolist() == [0.0, 1.0, 2.0]
    wrong = tmp_path / "weights-0000abcd.pt"
    wrong.write_bytes(source.read_bytes())
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "0000abcd"'):
        gt.hub.load_state_dict_from_url(wrong.as_uri(), check_hash=True)
    assert not (hub_dir / "checkpoints" / wrong.name).exists()
    assert not [p for p in os.listdir(hub_dir / "checkpoints") if p.endswith(".partial")]


def test_a_zipped_legacy_checkpoint_is_unzipped(hub_dir, tmp_path):
    gt.save({"b": gt.ones(2)}, str(tmp_path / "inner.pt"))
    with zipfile.ZipFile(tmp_path / "old.zip", "w") as archive:
        archive.write(tmp_path / "inner.pt", "inner.pt")
    with pytest.warns(FutureWarning, match="old format"):
        state = gt.hub.load_state_dict_from_url((tmp_path / "old.zip").as_uri(),
                                                model_dir=str(tmp_path / "models"))
    assert state["b"].tolist() == [1.0, 1.0]


def _repo(folder):
    folder.mkdir(parents=True)
    (folder / "hubconf.py").write_text(textwrap.dedent(HUBCONF))
    (folder / "helper.py").write_text("FACTOR = 10\n")
    return str(folder)


def test_hubconf_entry_points_from_a_folder_and_a_cached_repository(hub_dir, tmp_path,
                                                                  monkeypatch):
    local = _repo(tmp_path / "repo")
    model = gt.hub.load(local, "tiny", 3, source="local", scale=0.5)
    assert model.weight.shape == (1, 3) and model.scale == 5.0
    _repo(hub_dir / "someone_models_main")  # what a download of someone/models:main leaves
    assert gt.hub.list("someone/models:main") == ["tiny"]
    assert gt.hub.help("someone/models", "tiny") == "A Linear of the given width."
    assert gt.hub.load("someone/models", "tiny").weight.shape == (1, 2)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")  # trust_repo=False asks
    with pytest.raises(Exception, match="Untrusted repository."):
        gt.hub.load("someone/models", "tiny", trust_repo=False)
    with pytest.raises(RuntimeError, match="Cannot find callable NOT_CALLABLE in hubconf"):
        gt.hub.load(local, "NOT_CALLABLE", source="local")
    with pytest.raises(ValueError, match='Unknown source: "pypi"'):
        gt.hub.load(local, "tiny", source="pypi")


def test_missing_dependencies_are_named(tmp_path):
    folder = tmp_path / "needs"
    folder.mkdir()
    (folder / "hubconf.py").write_text("dependencies = ['no_such_package_x', 'numpy']\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_x$"):
        gt.hub.load(str(folder), "anything", source="local")
