"""torch.hub against torch's: the cache folder, downloads from file:// URLs with and without
the hash check, legacy zipped checkpoints, and hubconf.py's entry points and errors. Tests
marked parity, skipped without torch."""
import hashlib
import zipfile

import pytest

import gradtool as gt

pytestmark = pytest.mark.parity

HUBCONF = '''
dependencies = ["json"]


def config(width=2, **extra):
    """A model's configuration."""
    return {"width": width, **extra}


NOT_CALLABLE = 3
'''


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as exc:  # noqa: BLE001 (the comparison is of the exceptions)
        return (type(exc).__name__, str(exc).replace("gt", "LIB").replace("torch", "LIB"))


def test_hub_is_torchs(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import torch.hub  # noqa: F401
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "hubconf.py").write_text("dependencies = ['no_such_module_q']\n")
    seen = []
    for lib in (gt, torch):
        home = tmp_path / lib.__name__
        monkeypatch.setenv("TORCH_HOME", str(home))
        lib.hub._hub_dir = None
        folder = lib.hub.get_dir()
        weights = tmp_path / f"{lib.__name__}.pt"
        lib.save({"w": lib.arange(3.0)}, str(weights))
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()
        good = tmp_path / f"{lib.__name__}-{digest[:6]}.pt"
        good.write_bytes(weights.read_bytes())
        bad = tmp_path / f"{lib.__name__}-abc123.pt"
        bad.write_bytes(weights.read_bytes())
        with zipfile.ZipFile(tmp_path / f"{lib.__name__}-legacy.zip", "w") as archive:
            archive.write(weights, "inner.pt")
        loaded = lib.hub.load_state_dict_from_url(good.as_uri(), check_hash=True)
        with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
            legacy = lib.hub.load_state_dict_from_url(
                (tmp_path / f"{lib.__name__}-legacy.zip").as_uri(), weights_only=False)
        seen.append((folder.replace(str(home), "HOME"), loaded["w"].tolist(),
                     legacy["w"].tolist(),
                     _outcome(lambda: lib.hub.load_state_dict_from_url(bad.as_uri(),
                                                                       check_hash=True)),
                     sorted(p.name.replace(lib.__name__, "LIB").replace(digest[:6], "HASH") for p in
                            (home / "hub" / "checkpoints").iterdir()),
                     lib.hub.load(str(repo), "config", 3, source="local", depth=4),
                     _outcome(lambda: lib.hub.load(str(repo), "NOT_CALLABLE", source="local")),
                     _outcome(lambda: lib.hub.load(str(repo), "missing", source="local")),
                     _outcome(lambda: lib.hub.load(str(repo), 3, source="local")),
                     _outcome(lambda: lib.hub.load(str(repo), "config", source="svn")),
                     _outcome(lambda: lib.hub.load(str(tmp_path / "bad"), "x", source="local"))))
        lib.hub.set_dir("~/x")
        seen[-1] += (lib.hub.get_dir(),)
        lib.hub._hub_dir = None
    bad_hash = seen[0][3]
    assert bad_hash[0] == "RuntimeError" and bad_hash[1].startswith('invalid hash value (exp')
    assert seen[0][:3] + seen[0][4:] == seen[1][:3] + seen[1][4:]
