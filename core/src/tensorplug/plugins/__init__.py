"""Plugins: discovery through entry points, loading in phases, and removal (DESIGN §7).

Every dispatch key beyond the built-in ones, every kernel, and every public name that is not
core comes from a plugin: a module named by an entry point of the group ``tensorplug`` whose
hook implementations (:mod:`tensorplug.hookspecs`) run in four phases -- every plugin's
``tensorplug_add_keys`` before any plugin's ``tensorplug_register_kernels``, then
``tensorplug_add_names``, then ``tensorplug_add_tensor_methods``.

Discovery reads the entry point group once (:func:`load_entry_points`, called at the end of
``import tensorplug``), by hand where the environment allows it and through
``importlib.metadata`` otherwise (Note [Light entry point scan] in _entry_points.py). Selection happens before any plugin module is imported:

* ``TENSORPLUG_PLUGINS=cpu,autograd`` -- only these (an empty value: none);
* ``TENSORPLUG_DISABLE_PLUGINS=autocast`` -- all but these;
* ``TENSORPLUG_AUTOLOAD=0`` -- none at all (plugins can still be registered by hand).

Each phase runs for every selected plugin before the next phase, and a plugin that fails in any
of them is rolled back, as :func:`unregister` rolls one back (Note [Plugin rollback] in
_phases.py, where the phases are). A plugin written for another plugin API version is refused
before it registers anything (Note [Plugin API version] in _versions.py).

Usage::

    import tensorplug as tp
    for info in tp.plugins.list():
        print(info.name, info.status, info.keys, info.op_count)

    class MyPlugin:                        # in-process plugin, e.g. in a test or notebook
        @tp.hookimpl
        def tensorplug_register_kernels(registry):
            registry.library("aten", "IMPL").impl("add.Tensor", my_add, "CPU", override=True)

    tp.plugins.register(MyPlugin, name="mine")
    tp.plugins.unregister("mine")          # removes everything it registered
"""

from __future__ import annotations

import builtins
from typing import Any, Final

from .. import _entry_points, _manifest
from ..errors import MissingPluginError
from ._phases import _load, _namespace, _rollback, _state, _tensorplug_module
from ._phases import bind_namespace as bind_namespace
from ._plugin import (
    KernelRegistry,
    KeyRegistrar,
    PluginError,
    PluginInfo,
    PluginLoadWarning,
    _Plugin,
)
from ._selection import (
    FIRST_PARTY_PLUGINS,
    _check_environment,
    _choose_entry_point,
    _disabled_reason,
)
from ._versions import PLUGIN_API_VERSION, IncompatiblePluginError

__all__ = [
    "ENTRY_POINT_GROUP",
    "IncompatiblePluginError",
    "PLUGIN_API_VERSION",
    "KernelRegistry",
    "KeyRegistrar",
    "PluginError",
    "PluginInfo",
    "PluginLoadWarning",
    "FIRST_PARTY_PLUGINS",
    "absent_plugin_remedy",
    "get",
    "list",
    "load_entry_points",
    "loaded_names",
    "missing_name",
    "register",
    "unregister",
]

ENTRY_POINT_GROUP: Final = "tensorplug"


def load_entry_points() -> builtins.list[PluginInfo]:
    """Discover and load the installed plugins, once per process (later calls do nothing).

    The environment selects plugins before any of their modules is imported. A plugin that
    fails is rolled back and reported with a :class:`PluginLoadWarning`.
    """
    with _state.lock:
        if _state.entry_points_loaded:
            return list()
        _state.entry_points_loaded = True
        candidates: dict[str, builtins.list[_entry_points.EntryPoint]] = {}
        for ep in _entry_points.entry_points(ENTRY_POINT_GROUP):
            candidates.setdefault(ep.name, []).append(ep)
        found = {
            name: _Plugin(name, entry_point=_choose_entry_point(name, eps))
            for name, eps in candidates.items()
        }
        _check_environment(found)
        selected = []
        for name in sorted(found):
            p = found[name]
            p.reason = _disabled_reason(name)
            if p.reason is not None:
                p.status = "disabled"
            else:
                selected.append(p)
            _state.records[name] = p
        _load(selected, raise_errors=False)
        return list()


# --- public API -----------------------------------------------------------------------------


def list() -> builtins.list[PluginInfo]:  # noqa: A001 - the public name is tp.plugins.list
    """Every plugin discovered or registered: loaded, failed and disabled ones."""
    with _state.lock:
        return [p.info() for p in _state.records.values()]


def get(name: str) -> PluginInfo:
    """The record of plugin ``name``; unknown names raise :class:`PluginError`."""
    with _state.lock:
        p = _state.records.get(name)
        if p is None:
            raise _unknown(name)
        return p.info()


def loaded_names() -> set[str]:
    """Names of the plugins that are loaded now (the dispatcher uses it for error remedies)."""
    return {n for n, p in _state.records.items() if p.status == "loaded"}


def register(plugin: object, name: str | None = None) -> PluginInfo:
    """Load an in-process plugin: a module, class or object with ``@hookimpl`` functions.

    Its hooks run in the usual phase order. If one raises, everything it registered is rolled
    back and :class:`PluginError` is raised (chained to the original exception).
    """
    if name is None:
        name = getattr(plugin, "__name__", None) or type(plugin).__name__
    with _state.lock:
        old = _state.records.get(name)
        if old is not None and old.status == "loaded":
            raise PluginError(
                f"a plugin named {name!r} is already loaded ({old.origin}); "
                f"call tensorplug.plugins.unregister({name!r}) first, or pass another name=",
                plugin=name,
            )
        if _state.pm.is_registered(plugin):
            raise PluginError(
                f"this plugin object is already registered as "
                f"{_state.pm.get_name(plugin)!r}; unregister it first",
                plugin=name,
            )
        p = _Plugin(name, plugin)
        _state.records[name] = p
        _load([p], raise_errors=True)
        return p.info()


def unregister(name: str) -> PluginInfo:
    """Remove plugin ``name`` with all its registrations; returns its last record.

    A failed or disabled plugin's record is simply forgotten.
    """
    with _state.lock:
        p = _state.records.get(name)
        if p is None:
            raise _unknown(name)
        info = p.info()
        del _state.records[name]
        if p.status != "loaded":
            return info
        problems = _rollback(p)
        if problems:
            raise PluginError(
                f"plugin {name!r} was unregistered, but not everything it registered could be "
                f"removed: {'; '.join(problems)}",
                plugin=name,
                distribution=p.distribution,
            )
        return info


def _unknown(name: str) -> PluginError:
    known = ", ".join(sorted(_state.records)) or "none"
    return PluginError(f"no tensorplug plugin named {name!r}; known plugins: {known}", plugin=name)


# --- names only an absent first-party plugin provides --------------------------------------

# public name -> (plugin name, distribution) (Note [First-party manifest] in _manifest.py)
_FIRST_PARTY_NAMES: Final = {
    name: (p.name, p.distribution) for p in _manifest.MANIFEST for name in p.names
}


def added_name(name: str) -> Any:
    """What a loaded plugin added as ``tensorplug.<name>`` (``tp.autograd``); the
    :func:`missing_name` error when only an absent plugin provides it, else AttributeError."""
    value = vars(_tensorplug_module()).get(name) if _namespace else None
    if value is not None:
        return value
    err = missing_name(name)
    if err is not None:
        raise err
    raise AttributeError(f"module 'tensorplug' has no attribute '{name}'")


def missing_name(name: str) -> Exception | None:
    """The error for ``tensorplug.<name>`` when only an absent first-party plugin provides it.

    ``None`` when no first-party plugin is known to provide ``name``, or when that plugin is
    loaded (then the name is simply not there: an ``AttributeError`` is right).
    """
    provider = _FIRST_PARTY_NAMES.get(name)
    if provider is None:
        return None
    plugin, dist = provider
    if plugin in loaded_names():
        return None
    remedy = absent_plugin_remedy(plugin, dist) or (
        f"the {dist} plugin, which is not installed (or not loaded): pip install {dist}"
    )
    return MissingPluginError(f"tensorplug.{name} is provided by {remedy}", distribution=dist)


def absent_plugin_remedy(plugin: str, distribution: str) -> str | None:
    """``"the <dist> plugin, which ..."``: why an installed plugin is not loaded and what to do
    (take it out of a selection variable, or see its failure); ``None`` when it is loaded or
    not known here (not installed, or unregistered): the caller then says to install it. Error
    messages about missing keys, devices and names end with it."""
    p = _state.records.get(plugin)
    head = f"the {distribution} plugin, which "
    if p is None:
        return None
    if p.status == "disabled":
        return f"{head}is installed but not loaded ({p.reason}): change that setting"
    if p.status == "failed":
        return (
            f"{head}failed to load ({p.info().error}); see the PluginLoadWarning at import, "
            "or run `tensorplug plugins`"
        )
    return None


_manifest.register_loader(loaded_names, absent_plugin_remedy)  # Note [Loader state for remedies]
