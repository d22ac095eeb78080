"""engine/frames.location: the one formatter of a place in the user's code."""
import os

from gradtool.engine.frames import location, site_location


def test_a_location_is_file_colon_line_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inside = str(tmp_path / "pkg" / "model.py")
    assert location(inside, 12) == os.path.join("pkg", "model.py") + ":12"
    outside = str(tmp_path.parent / "other.py")
    assert location(outside, 3) == os.path.join("..", "other.py") + ":3"
    assert location(inside) == os.path.join("pkg", "model.py")  # no line: the file alone


def test_a_location_as_given_keeps_the_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = str(tmp_path / "model.py")
    assert location(path, 5, relative=False) == f"{path}:5"


def test_no_file_is_no_location():
    assert location(None, 3) is None and location("", 3) is None
    assert site_location(None) is None


def test_a_site_is_formatted_from_its_file_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    site = (str(tmp_path / "model.py"), 7, "forward")  # (file, line, function) of a frame
    assert site_location(site) == "model.py:7"
    assert site_location(site, relative=False) == f"{tmp_path / 'model.py'}:7"


def test_the_working_directory_is_read_at_each_call(tmp_path, monkeypatch):
    path = str(tmp_path / "a" / "model.py")
    monkeypatch.chdir(tmp_path)
    first = location(path, 1)
    monkeypatch.chdir(tmp_path.parent)
    assert first == os.path.join("a", "model.py") + ":1"
    assert location(path, 1) == os.path.join(tmp_path.name, "a", "model.py") + ":1"
