"""The standard operator set's loading (tensorplug._api): the parsed-yaml cache."""

from __future__ import annotations

import os
import pickle
import sys

import pytest

from tensorplug import _api
from tensorplug.schema import parse


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "tensorplug"


def no_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import yaml`` fail: only the cache can answer."""
    monkeypatch.setitem(sys.modules, "yaml", None)


def test_the_cache_answers_the_second_load(cache_home, monkeypatch):
    first = _api._load_yaml()
    [cache_file] = os.listdir(cache_home)
    assert cache_file.startswith("native_functions-") and cache_file.endswith(".pickle")
    no_yaml(monkeypatch)
    second = _api._load_yaml()
    assert [(d["func"], str(s)) for d, s in second] == [(d["func"], str(s)) for d, s in first]
    assert all(s == parse(d["func"]) for d, s in second[:20])


def test_a_cache_of_other_yaml_text_is_not_used(cache_home, monkeypatch):
    good = _api._load_yaml()
    [cache_file] = os.listdir(cache_home)
    path = cache_home / cache_file
    raw, tag, parsed = pickle.loads(path.read_bytes())
    # same file name (as a checksum collision would give), other content: parsed again
    path.write_bytes(pickle.dumps((raw + b"\n# edited", tag, parsed[:1])))
    assert len(_api._load_yaml()) == len(good)
    path.write_bytes(b"not a pickle")
    assert len(_api._load_yaml()) == len(good)
    no_yaml(monkeypatch)  # and the rewritten cache serves the next load
    assert len(_api._load_yaml()) == len(good)
