"""pytest imports a test file of a directory without ``__init__.py`` by its basename alone
(rootdir-relative "rootdir/conftest" mode): two such files with one name in different
directories collide ("import file mismatch") and one of them never runs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_files_of_package_less_test_directories_have_distinct_names() -> None:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in ROOT.joinpath("tests").rglob("test_*.py"):
        if not (path.parent / "__init__.py").exists():
            seen[path.name].append(str(path.relative_to(ROOT)))
    assert {n: p for n, p in seen.items() if len(p) > 1} == {}
