"""The light entry point scan (Note [Light entry point scan]) against importlib.metadata, the
oracle: same entry points in the same order, same distributions, and the fallback wherever the
environment is not plain."""

from __future__ import annotations

import sys
import textwrap
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from tensorplug import _entry_points

GROUP = "tensorplug_test_group"


def dist_info(site: Path, dirname: str, name: str, version: str, eps: str | None) -> Path:
    info = site / dirname
    info.mkdir(parents=True)
    meta = "METADATA" if dirname.endswith(".dist-info") else "PKG-INFO"
    (info / meta).write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: x: y\n\n"
        "Name: not-this-one\n"
    )
    if eps is not None:
        (info / "entry_points.txt").write_text(textwrap.dedent(eps))
    return info


def seen(eps: list[_entry_points.EntryPoint]) -> list[tuple[str, str, str | None, str | None]]:
    return [(ep.name, ep.value, ep.distribution, ep.version) for ep in eps]


def oracle(group: str) -> list[tuple[str, str, str | None, str | None]]:
    return [
        (ep.name, ep.value, ep.dist.metadata["Name"] if ep.dist else None,
         ep.dist.version if ep.dist else None)
        for ep in metadata.entry_points(group=group)
    ]  # fmt: skip


@pytest.fixture
def sites(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """Two directories on a sys.path of their own."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.setattr(sys, "path", [str(a), str(tmp_path / "missing"), str(b)])
    return a, b


@pytest.fixture
def plain_finders(monkeypatch) -> None:
    """The standard library's metadata finder alone, as in a plain environment: a process that
    imported the ``importlib_metadata`` backport (dask does) has it disable the stdlib finder
    and serve metadata itself, and the scan then rightly leaves the work to importlib."""
    import importlib.metadata
    from importlib.machinery import PathFinder

    def find_distributions(*args: Any, **kwargs: Any) -> Any:
        return importlib.metadata.MetadataPathFinder.find_distributions(*args, **kwargs)

    if getattr(PathFinder, "find_distributions", None) is None:
        monkeypatch.setattr(
            PathFinder, "find_distributions", staticmethod(find_distributions), raising=False
        )
    monkeypatch.setattr(
        sys,
        "meta_path",
        [f for f in sys.meta_path if f is PathFinder or not hasattr(f, "find_distributions")],
    )


def test_scan_matches_importlib_metadata(sites, plain_finders):
    a, b = sites
    dist_info(a, "pkg_one-1.0.dist-info", "pkg-one", "1.0", f"""
        # a comment
        [console_scripts]
        one = pkg_one:main

        [{GROUP}]
        first = pkg_one.plugin
          second=pkg_one.plugin:Hooks.inner [extra]
        """)  # fmt: skip
    dist_info(a, "Pkg.Two-2.0-py3.11.egg-info", "Pkg.Two", "2.0", f"[{GROUP}]\nthird = two\n")
    dist_info(a, "no_entry_points-1.0.dist-info", "no-entry-points", "1.0", None)
    # the same distribution again, later on sys.path: the first one wins
    dist_info(b, "pkg_one-9.0.dist-info", "pkg-one", "9.0", f"[{GROUP}]\nfirst = shadowed\n")
    dist_info(b, "pkg_three-3.0.dist-info", "pkg-three", "3.0", f"[{GROUP}]\nfirst = three\n")

    scanned = _entry_points._scan(GROUP)
    assert scanned is not None  # a plain environment: no fallback
    assert sorted(seen(scanned)) == sorted(oracle(GROUP))
    assert [ep.name for ep in scanned if ep.value == "shadowed"] == []
    by_value = {ep.value: ep for ep in scanned}
    assert by_value["pkg_one.plugin:Hooks.inner [extra]"].name == "second"
    assert by_value["two"].distribution == "Pkg.Two" and by_value["two"].version == "2.0"
    # distributions on later sys.path entries come later, as importlib.metadata orders them
    assert [ep.value for ep in scanned][-1] == "three"


def test_metadata_is_read_only_when_asked(sites):
    a, _ = sites
    info = dist_info(a, "lazy-1.0.dist-info", "lazy", "1.0", f"[{GROUP}]\nlazy = lazy\n")
    [ep] = _entry_points.entry_points(GROUP)
    (info / "METADATA").unlink()  # not read yet: the scan did not need it
    (info / "PKG-INFO").write_text("Name: lazy-from-pkg-info\nVersion: 1.1\n")
    assert (ep.distribution, ep.version) == ("lazy-from-pkg-info", "1.1")


def test_load_imports_the_module_and_attribute(sites):
    a, _ = sites
    (a / "ep_target.py").write_text("class Hooks:\n    class inner:\n        pass\n")
    dist_info(a, "t-1.0.dist-info", "t", "1.0",
              f"[{GROUP}]\nm = ep_target\nattr = ep_target:Hooks.inner\nbad = not a value!\n")  # fmt: skip
    eps = {ep.name: ep for ep in _entry_points.entry_points(GROUP)}
    try:
        assert eps["m"].load().__name__ == "ep_target"
        assert eps["attr"].load().__qualname__ == "Hooks.inner"
        with pytest.raises(ValueError, match="'bad' of group .* has the value 'not a value!'"):
            eps["bad"].load()
    finally:
        sys.modules.pop("ep_target", None)


def test_zip_on_sys_path_falls_back_to_importlib_metadata(sites, monkeypatch):
    a, _ = sites
    dist_info(a, "plain-1.0.dist-info", "plain", "1.0", f"[{GROUP}]\nplain = plain\n")
    archive = a.parent / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-2.0.dist-info/METADATA", "Name: zipped\nVersion: 2.0\n")
        z.writestr("zipped-2.0.dist-info/entry_points.txt", f"[{GROUP}]\nzipped = zipped\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(archive)])
    assert _entry_points._scan(GROUP) is None
    got = seen(_entry_points.entry_points(GROUP))
    assert sorted(got) == sorted(oracle(GROUP))
    assert ("zipped", "zipped", "zipped", "2.0") in got


def test_a_metadata_finder_on_meta_path_falls_back(sites, monkeypatch):
    a, _ = sites
    dist_info(a, "plain-1.0.dist-info", "plain", "1.0", f"[{GROUP}]\nplain = plain\n")
    served = dist_info(a.parent / "elsewhere", "served-1.0.dist-info", "served", "1.0",
                       f"[{GROUP}]\nserved = served\n")  # fmt: skip

    class Finder:
        @staticmethod
        def find_spec(*args):
            return None

        @staticmethod
        def find_distributions(context=None):
            return iter([metadata.PathDistribution(served)])

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert _entry_points._scan(GROUP) is None
    got = seen(_entry_points.entry_points(GROUP))
    assert sorted(got) == [
        ("plain", "plain", "plain", "1.0"),
        ("served", "served", "served", "1.0"),
    ]


@pytest.mark.parametrize("name", ["lib.egg", "Other-1.0.DIST-INFO"])
def test_unusual_layouts_fall_back(sites, name):
    a, _ = sites
    if name.endswith(".egg"):
        sys.path.append(str(a / name))
        (a / name).mkdir()
    else:
        dist_info(a, name, "other", "1.0", f"[{GROUP}]\nother = other\n")
    assert _entry_points._scan(GROUP) is None
    assert sorted(seen(_entry_points.entry_points(GROUP))) == sorted(oracle(GROUP))


def test_the_real_environment_agrees():
    for group in ("tensorplug", "console_scripts", "pytest11"):
        scanned = _entry_points._scan(group)
        if scanned is None:
            pytest.skip("this environment is not plain; the fallback is what runs")
        assert seen(scanned) == oracle(group)
