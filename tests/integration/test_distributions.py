"""Every distribution of the tree is release-ready: complete metadata, its README and LICENSE,
and a dependency range on tensorplug that matches the plugin API version the plugin declares
(docs/plugins.md, 'Versions'). tests/combos/test_matrix.py builds and installs the wheels."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

import tensorplug as tp

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
PLUGINS = sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/pyproject.toml"))
CLASSIFIERS = ("Development Status :: ", "Programming Language :: Python :: 3.11", "License")


def _project(root: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    return project


def _version(text: str) -> tuple[int, ...]:
    """``"0.1"`` -> ``(0, 1, 0)``: a release number, comparable as PEP 440 compares them."""
    return (*(int(n) for n in text.split(".")), 0, 0, 0)[:3]


def _api_releases() -> dict[str, str]:
    """plugin API version -> the first tensorplug release that has it, from docs/plugins.md."""
    rows = re.findall(
        r"^\| (\d+\.\d+\.\d+)(?: \(this tree\))? \| (\d+\.\d+)\b",
        (ROOT / "docs/plugins.md").read_text(),
        re.M,
    )
    releases: dict[str, str] = {}
    for release, api in rows:
        releases.setdefault(api, release)
    return releases


def _declared_api(root: Path, project: dict[str, Any]) -> str:
    """The PLUGIN_API_VERSION of the module the distribution's entry point names."""
    (module,) = project["entry-points"]["tensorplug"].values()
    init = root / "src" / module.split(":")[0] / "__init__.py"
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "PLUGIN_API_VERSION" for t in node.targets
        ):
            value: str = ast.literal_eval(node.value)
            return value
    return "1.0"  # none declared: written for 1.0 (docs/plugins.md)


@pytest.mark.parametrize("root", [CORE, *PLUGINS, *EXAMPLES], ids=lambda p: p.name)
def test_metadata_is_complete(root: Path) -> None:
    project = _project(root)
    for field in ("name", "version", "description", "readme", "license", "requires-python"):
        assert project.get(field), f"{root.name}/pyproject.toml: no project.{field}"
    assert (root / project["readme"]).is_file(), f"{root.name}: no {project['readme']}"
    for f in project.get("license-files", []):
        assert (root / f).is_file(), f"{root.name}: no {f}"
    assert project.get("license-files"), f"{root.name}/pyproject.toml: no license-files"
    classifiers = project.get("classifiers", [])
    missing = [c for c in CLASSIFIERS[:2] if not any(x.startswith(c) for x in classifiers)]
    assert not missing, f"{root.name}/pyproject.toml: no classifier {missing}"
    urls = project.get("urls", {})
    assert {"Homepage", "Source", "Issues"} <= set(urls), f"{root.name}: project.urls {urls}"


def test_the_core_release_has_the_current_plugin_api() -> None:
    releases = _api_releases()
    assert _project(CORE)["version"] == tp.__version__
    assert releases.get(tp.PLUGIN_API_VERSION) == tp.__version__, (
        f"docs/plugins.md's table gives plugin API {tp.PLUGIN_API_VERSION} to "
        f"{releases.get(tp.PLUGIN_API_VERSION)}, the core is {tp.__version__}"
    )


@pytest.mark.parametrize("root", [*PLUGINS, *EXAMPLES], ids=lambda p: p.name)
def test_the_dependency_range_matches_the_plugin_api(root: Path) -> None:
    project = _project(root)
    api = _declared_api(root, project)
    core_major, core_minor = (int(n) for n in tp.PLUGIN_API_VERSION.split("."))
    major, minor = (int(n) for n in api.split("."))
    assert major == core_major and minor <= core_minor, f"{root.name} declares API {api}"
    (req,) = [d for d in project["dependencies"] if re.match(r"tensorplug\b(?!-)", d)]
    m = re.fullmatch(r"tensorplug>=([\d.]+),<([\d.]+)", req)
    assert m, f"{root.name}: {req!r} is not a range tensorplug>=FLOOR,<CEILING"
    floor, ceiling = m.groups()
    first = _api_releases()[api]
    assert _version(floor) >= _version(first), (
        f"{root.name} is written for plugin API {api}, which tensorplug has from {first} on, "
        f"but accepts tensorplug {floor}"
    )
    rel_major, rel_minor = _version(first)[:2]
    expected = f"0.{rel_minor + 1}" if rel_major == 0 else f"{rel_major + 1}"
    assert ceiling == expected, (
        f"{root.name}: <{ceiling}, the next MAJOR of API {api} is {expected}"
    )


# first-party plugins that tensorplug[all] leaves out: each brings a library of its own that a
# user asks for (`pip install tensorplug-dask`; docs/combinations.md)
NOT_IN_ALL = {"tensorplug-dask"}


def test_the_all_extra_installs_every_first_party_plugin() -> None:
    extra = _project(CORE)["optional-dependencies"]["all"]
    names = {re.match(r"[\w-]+", d).group(0) for d in extra}  # type: ignore[union-attr]
    assert names == {_project(p)["name"] for p in PLUGINS} - NOT_IN_ALL
