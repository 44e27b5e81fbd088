"""The op set cache (Note [Op set cache] in _schema_cache.py): data only, private, validated."""

from __future__ import annotations

import json
import os
import pickle
import stat
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import tensorplug as tp
from tensorplug import _schema_cache, schema
from tensorplug._opset import api as _api

CORE_SRC = Path(tp.__file__).resolve().parents[1]
RAW = (Path(_api.__file__).parents[1] / "native_functions.yaml").read_bytes()
TAG = "tests-tag"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty cache home for this test: the cache directory is ``home / "tensorplug"``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def entries() -> _schema_cache.Entries:
    return [({"func": e.func}, schema.parse(e.func)) for e in _api.entries[:40]]


def cache_file(home: Path) -> Path:
    (path,) = (home / "tensorplug").glob("native_functions-*.json")
    return path


def test_the_whole_op_set_decodes_to_what_the_parser_gives():
    parsed = [({"func": e.func}, schema.parse(e.func)) for e in _api.entries]
    decoded = _schema_cache.decode(json.loads(json.dumps(_schema_cache.encode(parsed))))
    assert decoded == parsed
    assert [str(s) for _, s in decoded] == [e.func for e in _api.entries]


def test_store_writes_private_json_that_load_reads_back(home):
    _schema_cache.store(RAW, TAG, entries())
    folder, path = home / "tensorplug", cache_file(home)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert data["format"] == _schema_cache.FORMAT
    assert data["digest"] == _schema_cache.digest(RAW, TAG)
    assert _schema_cache.load(RAW, TAG) == entries()
    assert not list(folder.glob("*.tmp"))


def test_another_yaml_text_or_parser_misses(home):
    _schema_cache.store(RAW, TAG, entries())
    assert _schema_cache.load(RAW + b"\n", TAG) is None
    assert _schema_cache.load(RAW, TAG + "2") is None


def test_a_file_whose_digest_does_not_match_is_ignored(home):
    _schema_cache.store(RAW, TAG, entries())
    path = cache_file(home)
    data = json.loads(path.read_text())
    data["digest"] = "0" * 64
    path.write_text(json.dumps(data))
    assert _schema_cache.load(RAW, TAG) is None


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        '{"format": 1}',
        "[1, 2]",
        '{"format": 1, "digest": "D", "entries": [[{"func": "f"}, ["", "f", "", [["x", "Tensor(", null, null]], [], []]]]}',
        '{"format": 1, "digest": "D", "entries": [[{"func": "f"}, ["", 7, "", [], [], []]]]}',
        '{"format": 1, "digest": "D", "entries": [[["func"], ["", "f", "", [], [], []]]]}',
        '{"format": 1, "digest": "D", "entries": [[{"func": "f"}, ["", "f", "", [["x", "int", 3, null]], [], []]]]}',
    ],
)
def test_a_file_that_is_not_our_layout_is_ignored(home, payload):
    _schema_cache.store(RAW, TAG, entries())
    path = cache_file(home)
    path.write_text(payload.replace('"D"', json.dumps(_schema_cache.digest(RAW, TAG))))
    assert _schema_cache.load(RAW, TAG) is None


def test_a_directory_others_may_write_is_not_read(home):
    _schema_cache.store(RAW, TAG, entries())
    folder = home / "tensorplug"
    folder.chmod(0o777)
    assert _schema_cache.load(RAW, TAG) is None
    _schema_cache.store(RAW, TAG, entries())  # our own directory: made private again
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert _schema_cache.load(RAW, TAG) == entries()


def test_a_file_others_may_read_or_a_link_is_not_read(home, tmp_path_factory):
    _schema_cache.store(RAW, TAG, entries())
    path = cache_file(home)
    path.chmod(0o644)
    assert _schema_cache.load(RAW, TAG) is None
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "planted.json"
    elsewhere.write_bytes(path.read_bytes())
    elsewhere.chmod(0o600)
    path.unlink()
    path.symlink_to(elsewhere)
    assert _schema_cache.load(RAW, TAG) is None


def test_no_private_directory_means_no_cache(home):
    (home / "tensorplug").write_text("a file where the directory would be")
    _schema_cache.store(RAW, TAG, entries())
    assert _schema_cache.load(RAW, TAG) is None


class Planted:
    """What an attacker would put in the old, predictable pickle cache."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "the cache ran code"))


def test_import_never_unpickles_a_cache(tmp_path):
    """The cache of an older tensorplug (a pickle, named by a CRC anyone can compute) is never
    loaded, and is removed when the new cache is written."""
    folder = tmp_path / "tensorplug"
    folder.mkdir(mode=0o755)
    marker = tmp_path / "marker"
    # the very name the pickle cache had: a CRC of the yaml and of what anyone can read
    old_tag = f"tensorplug-{sys.version_info[:2]}-{int(os.stat(schema.__file__).st_mtime)}"
    crc = zlib.crc32(RAW + old_tag.encode())
    for name in (f"native_functions-{crc:08x}.pickle", "native_functions-00000000.pickle"):
        (folder / name).write_bytes(pickle.dumps(Planted(marker)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    env |= {
        "XDG_CACHE_HOME": str(tmp_path),
        "PYTHONPATH": str(CORE_SRC),
        "TENSORPLUG_AUTOLOAD": "0",
    }
    code = (
        "import tensorplug, sys; print(len(tensorplug._opset.api.entries), 'yaml' in sys.modules)"
    )
    for expected in ("True", "False"):  # parsed and cached, then read from the cache
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split() == [str(len(_api.entries)), expected]
    assert not marker.exists()
    assert [p.suffix for p in folder.iterdir()] == [".json"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch):
    # the XDG Base Directory spec: a relative path is invalid and ignored (issue 32, item 5)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _schema_cache.directory() == str(tmp_path / ".cache" / "tensorplug")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "abs"))
    assert _schema_cache.directory() == str(tmp_path / "abs" / "tensorplug")
