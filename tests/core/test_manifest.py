"""The first-party manifest (Note [First-party manifest] in _manifest.py) against the plugins
themselves: what each plugin's hooks add, the keys its kernels are registered for, and its
entry point, so that a name added to a plugin and not to the manifest fails here."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

import tensorplug as tp
from tensorplug import _backends, _manifest, cli, plugins
from tensorplug._manifest import MANIFEST, FirstPartyPlugin
from tensorplug.dispatcher import provider_of
from tensorplug.plugins import _missing as _missing_attributes
from tensorplug.plugins._plugin import _ABSENT

ROOT = Path(__file__).resolve().parents[2]
PARAMS = [pytest.param(p, id=p.name) for p in MANIFEST]


def _module(p: FirstPartyPlugin) -> Any:
    return pytest.importorskip(p.module, reason=f"{p.distribution} is not installed")


def _record(p: FirstPartyPlugin) -> Any:
    record = plugins._state.records.get(p.name)
    if record is None or record.status != "loaded":
        pytest.skip(f"the {p.name} plugin is not loaded here")
    return record


def _hook(module: Any, hook: str) -> dict[str, Any]:
    fn = getattr(module, hook, None)
    return {} if fn is None else dict(fn())


@pytest.mark.parametrize("p", PARAMS)
def test_the_names_its_hook_adds_are_the_manifest_s(p: FirstPartyPlugin) -> None:
    added = _hook(_module(p), "tensorplug_add_names")
    assert set(added) == set(p.names), f"add {sorted(set(added) - set(p.names))} to its entry"
    assert len(p.names) == len(set(p.names))


@pytest.mark.parametrize("p", PARAMS)
def test_the_tensor_attributes_its_hook_adds_are_the_manifest_s(p: FirstPartyPlugin) -> None:
    added = _hook(_module(p), "tensorplug_add_tensor_methods")
    assert set(added) == p.tensor_methods, sorted(set(added) ^ p.tensor_methods)
    listed = (*p.tensor_attributes, *p.tensor_replaces, *p.tensor_state)
    assert len(listed) == len(p.tensor_methods), "an attribute is listed twice"


@pytest.mark.parametrize("p", PARAMS)
def test_what_a_loaded_plugin_replaced_on_tensor_matches_its_kind(p: FirstPartyPlugin) -> None:
    """The loader records what each Tensor attribute held before the plugin set it: a
    placeholder for ``tensor_attributes``, the core's own answer for ``tensor_replaces``,
    nothing for ``tensor_state``."""
    replaced = _record(p).methods
    for name in p.tensor_attributes:
        assert getattr(replaced[name], "__doc__", None) == (
            f"Provided by the {p.distribution} plugin."
        ), name
    for name in p.tensor_replaces:
        before = replaced[name]
        assert before is not _ABSENT, name
        assert "Provided by" not in (getattr(before, "__doc__", None) or ""), name
    for name in p.tensor_state:
        assert replaced[name] is _ABSENT, name


@pytest.mark.parametrize("p", PARAMS)
def test_plugins_list_agrees_with_the_manifest(p: FirstPartyPlugin) -> None:
    _record(p)
    info = tp.plugins.get(p.name)
    assert info.distribution == p.distribution
    assert set(info.keys) == set(p.keys)
    assert set(info.names) == set(p.names)
    assert set(info.tensor_methods) == p.tensor_methods


@pytest.mark.parametrize("p", PARAMS)
def test_its_kernels_are_for_the_keys_it_serves_and_adds(p: FirstPartyPlugin) -> None:
    registered: set[str] = set()
    for lib in _record(p).libraries:
        kernels = [k for _, k in lib._kernels] + list(lib._fallbacks)
        registered |= {k.key.family or k.key.name for k in kernels}
    assert registered == set(p.serves) | set(p.keys)
    for name in p.serves:
        key = tp.keys.get(name)
        assert provider_of(key) == (p.name, p.distribution)
        assert key.owner == "tensorplug", f"{name} is the core's: a remedy names the plugin"
    for name in p.keys:
        assert tp.keys.get(name).owner == p.name


@pytest.mark.parametrize("p", PARAMS)
def test_its_devices_are_those_of_the_backends_it_serves(p: FirstPartyPlugin) -> None:
    served = {tp.keys.get(k).device_type for k in (*p.serves, *p.keys)}
    assert set(p.devices) <= served
    for d in p.devices:
        assert _backends.FIRST_PARTY_DEVICES[d] == (p.name, p.distribution)


@pytest.mark.parametrize("p", PARAMS)
def test_its_entry_point_is_the_manifest_s(p: FirstPartyPlugin) -> None:
    folder = ROOT / "plugins" / p.name
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    assert project["name"] == p.distribution
    assert project["entry-points"]["tensorplug"] == {p.name: p.module}
    assert (folder / "src" / p.module / "__init__.py").is_file()


def test_every_plugin_of_the_repository_is_in_the_manifest() -> None:
    folders = {d.name for d in (ROOT / "plugins").iterdir() if (d / "pyproject.toml").is_file()}
    assert folders == set(_manifest.BY_NAME)


@pytest.mark.parametrize(
    "field", ["serves", "keys", "devices", "names", "tensor_attributes", "tensor_replaces"]
)
def test_no_item_belongs_to_two_plugins(field: str) -> None:
    seen: dict[str, str] = {}
    for p in MANIFEST:
        for item in getattr(p, field):
            assert item not in seen, f"{field} {item!r}: {seen[item]} and {p.name}"
            seen[item] = p.name


def test_the_core_s_tables_are_read_from_the_manifest() -> None:
    assert plugins.FIRST_PARTY_PLUGINS == {p.name: p.distribution for p in MANIFEST}
    assert plugins._FIRST_PARTY_NAMES == {
        n: (p.name, p.distribution) for p in MANIFEST for n in p.names
    }
    assert _missing_attributes.TENSOR_ATTRIBUTES == {
        n: (p.name, p.distribution) for p in MANIFEST for n in p.tensor_attributes
    }
    sections = {s.plugin: s.distribution for s in cli.SECTIONS if s.plugin is not None}
    assert sections == plugins.FIRST_PARTY_PLUGINS  # every first-party plugin has its demo


@pytest.mark.parametrize(
    ("lookup", "item", "plugin"),
    [
        (_manifest.provider_of_key, "Autograd", "autograd"),
        (_manifest.provider_of_key, "ADView", None),  # the plugin's own key: it is loaded
        (_manifest.provider_of_device, "cuda", "cuda"),
        (_manifest.provider_of_device, "dask", "dask"),
        (_manifest.provider_of_device, "foo", None),
        (_manifest.provider_of_name, "vmap", "batched"),
        (_manifest.provider_of_name, "add", None),
        (_manifest.provider_of_attribute, "grad", "autograd"),
        (_manifest.provider_of_attribute, "is_leaf", None),  # the core answers it
    ],
)
def test_providers(lookup: Any, item: str, plugin: str | None) -> None:
    found = lookup(item)
    assert (None if found is None else found.name) == plugin
