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

Note [Plugin rollback]
~~~~~~~~~~~~~~~~~~~~~~
A plugin never touches the global tables directly: it is handed a :class:`KeyRegistrar` and a
:class:`KernelRegistry` that create keys, libraries and storage backends *on its behalf* and
record them, and its names and tensor methods are set by the loader, which records them too
(with whatever a method replaced). Removing a plugin -- because it failed in any phase, or
because :func:`unregister` was called -- undoes those records in reverse order. A failing plugin
is reported with a :class:`PluginLoadWarning` that names it and the variable that skips it; the
other plugins carry on. Any exception counts, ``SystemExit`` included; a ``KeyboardInterrupt``
(or another ``BaseException`` that is not an error) is re-raised once the rollback is done.
Registrations a plugin makes behind the loader's back (a ``tp.Library`` it creates itself) are
not recorded and cannot be rolled back.

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
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, Final

import pluggy

from . import _api, _backends, _entry_points, _manifest, _repr, _values
from . import hookspecs as _hookspecs
from . import keys as _keys
from ._plugin import (
    _ABSENT,
    KernelRegistry,
    KeyRegistrar,
    PluginError,
    PluginInfo,
    PluginLoadWarning,
    _describe,
    _Plugin,
)
from ._plugin_selection import (
    FIRST_PARTY_PLUGINS,
    _check_environment,
    _choose_entry_point,
    _disabled_reason,
)
from ._version import __version__
from .errors import MissingPluginError

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

# Note [Plugin API version]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# The version of the plugin API (the hooks and the table "The plugin API" of docs/plugins.md),
# "MAJOR.MINOR", re-exported as tensorplug.PLUGIN_API_VERSION. MINOR grows when the API gains
# something; MAJOR grows, and MINOR restarts at 0, when something is removed or changes meaning.
# A plugin sets PLUGIN_API_VERSION in its module to the version it was written for, and loads
# when MAJOR is the same and its MINOR is at most the core's; one that sets none was written
# before versions were declared, for 1.0. docs/plugins.md, "Versions", is the policy.
PLUGIN_API_VERSION: Final = "1.2"

# --- state ----------------------------------------------------------------------------------


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.pm = pluggy.PluginManager(_hookspecs.PROJECT)
        self.pm.add_hookspecs(_hookspecs)
        self.records: dict[str, _Plugin] = {}  # every plugin seen, in load order
        self.name_owner: dict[str, str] = {}  # tensorplug.<name> -> plugin
        self.method_owner: dict[str, str] = {}  # Tensor.<name> -> plugin
        self.entry_points_loaded = False


_state = _State()


# The module plugins add names to: ``tensorplug`` itself, which binds itself here at start-up
# (this module stays below the package face, Note [Layers] in docs/architecture.md).
_namespace: builtins.list[ModuleType] = []


def bind_namespace(module: ModuleType) -> None:
    """Make ``module`` the one ``tensorplug_add_names`` adds to (the start-up's step)."""
    _namespace[:] = [module]


def _tensorplug_module() -> ModuleType:
    return _namespace[0]


def _tensor_class() -> type:
    from .tensor import Tensor

    return Tensor


# --- the phases -----------------------------------------------------------------------------


def _hook_results(p: _Plugin, hook: str, **kwargs: Any) -> builtins.list[Any]:
    """Call ``p``'s implementation of ``hook`` (if any) with the arguments it asks for."""
    caller = getattr(_state.pm.hook, hook)
    out = []
    for impl in caller.get_hookimpls():
        if impl.plugin is p.obj:
            if impl.wrapper or impl.hookwrapper:
                raise PluginError(
                    f"plugin {p.name!r}: {hook} is marked as a hook wrapper; tensorplug hooks "
                    "are plain implementations (@tensorplug.hookimpl)",
                    plugin=p.name,
                )
            out.append(impl.function(*(kwargs[a] for a in impl.argnames)))
    return out


def _phase_import(p: _Plugin) -> None:
    if p.entry_point is not None:
        p.obj = p.entry_point.load()
        if getattr(getattr(p.obj, "__spec__", None), "_initializing", False):
            # `import tensorplug_x` before tensorplug: the plugin's module imports tensorplug
            # (which loads the plugins) before it has defined its hooks
            raise PluginError(
                f"its module {p.entry_point.value!r} was still being imported when tensorplug "
                "loaded its plugins (it was imported before tensorplug); import tensorplug "
                "first, and the plugin loads with it",
                plugin=p.name,
                distribution=p.distribution,
            )
    _check_api_version(p)
    # pluggy leaves a half-registered plugin behind when validation fails: mark it registered
    # first so that the rollback unregisters it (but see _rollback: only if it is really ours)
    p.registered = True
    _state.pm.register(p.obj, name=p.name)
    known = sorted(n for n in dir(_hookspecs) if n.startswith("tensorplug_"))
    callers = _state.pm.get_hookcallers(p.obj) or ()
    if not callers and p.entry_point is not None:
        # e.g. an empty namespace package, left behind by an incomplete install or uninstall
        raise PluginError(
            f"its entry point {p.entry_point.value!r} gives {_what(p.obj)}, which implements "
            f"none of the tensorplug hooks ({', '.join(known)}), so the plugin would do "
            "nothing; reinstall its distribution",
            plugin=p.name,
            distribution=p.distribution,
        )
    for hc in callers:
        if not hc.has_spec():
            raise PluginError(
                f"plugin {p.name!r} implements unknown hook {hc.name!r}; the tensorplug hooks "
                f"are: {', '.join(known)}",
                plugin=p.name,
                distribution=p.distribution,
            )


class IncompatiblePluginError(PluginError):
    """A plugin written for a plugin API version this tensorplug does not provide."""


def _parse_api_version(text: object) -> tuple[int, int] | None:
    if not isinstance(text, str):
        return None
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        return None
    return int(major), int(minor)


def _check_api_version(p: _Plugin) -> None:
    """Refuse ``p`` unless the plugin API version it declares is one this core provides
    (Note [Plugin API version])."""
    declared = getattr(p.obj, "PLUGIN_API_VERSION", None)
    if declared is None:
        return
    p.api_version = str(declared)
    wanted = _parse_api_version(declared)
    if wanted is None:
        raise PluginError(
            f"plugin {p.name!r} declares PLUGIN_API_VERSION = {declared!r}, which is not "
            f"'MAJOR.MINOR'; set it to the tensorplug.PLUGIN_API_VERSION it was written for "
            f"(this tensorplug's is {PLUGIN_API_VERSION!r})",
            plugin=p.name,
            distribution=p.distribution,
        )
    have = _parse_api_version(PLUGIN_API_VERSION)
    assert have is not None
    if wanted[0] == have[0] and wanted[1] <= have[1]:
        return
    dist = p.distribution or "the plugin"
    if wanted > have:
        remedy = (
            f"upgrade tensorplug to a release with plugin API {wanted[0]}.{wanted[1]} or a later "
            f"{wanted[0]}.x (pip install -U tensorplug), or install a release of {dist} written "
            f"for plugin API {have[0]}.x"
        )
    else:
        remedy = (
            f"upgrade {dist} to a release written for plugin API {have[0]}.x"
            + (f" (pip install -U {p.distribution})" if p.distribution else "")
            + f", or install a tensorplug with plugin API {wanted[0]}.x"
        )
    raise IncompatiblePluginError(
        f"plugin {p.name!r} was written for plugin API {declared}, but tensorplug "
        f"{__version__} provides plugin API {PLUGIN_API_VERSION}: {remedy}",
        plugin=p.name,
        distribution=p.distribution,
    )


def _what(obj: object) -> str:
    if isinstance(obj, ModuleType):
        if getattr(obj, "__file__", None) is None:
            return f"the empty package {obj.__name__!r} (a namespace package)"
        return f"the module {obj.__name__!r}"
    return repr(obj)


def _phase_keys(p: _Plugin) -> None:
    _hook_results(p, "tensorplug_add_keys", keys=KeyRegistrar(p))


def _phase_kernels(p: _Plugin) -> None:
    _hook_results(p, "tensorplug_register_kernels", registry=KernelRegistry(p))


def _returned_dict(p: _Plugin, hook: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for result in _hook_results(p, hook):
        if result is None:
            continue
        if not isinstance(result, dict) or not all(isinstance(k, str) for k in result):
            raise PluginError(
                f"plugin {p.name!r}: {hook} must return a dict of str -> object, "
                f"got {type(result).__name__}",
                plugin=p.name,
            )
        merged.update(result)
    for name in merged:
        if not name.isidentifier():
            raise PluginError(
                f"plugin {p.name!r}: {hook} returned {name!r}, which is not an identifier",
                plugin=p.name,
            )
    return merged


def _phase_names(p: _Plugin) -> None:
    module = _tensorplug_module()
    new = _returned_dict(p, "tensorplug_add_names")
    for name in new:
        owner = _state.name_owner.get(name)
        if owner is not None:
            raise PluginError(
                f"plugins {owner!r} and {p.name!r} both add the name tensorplug.{name}; "
                f"disable one of them (TENSORPLUG_DISABLE_PLUGINS={p.name})",
                plugin=p.name,
            )
        if name in vars(module) or name in _api.function_names:
            raise PluginError(
                f"plugin {p.name!r} adds tensorplug.{name}, which the core already defines; "
                "a plugin may add names, not replace them",
                plugin=p.name,
            )
    for name, value in new.items():
        setattr(module, name, value)
        p.names[name] = value
        _state.name_owner[name] = p.name
        if isinstance(value, ModuleType):  # `from tensorplug.func import grad` works too
            sys.modules.setdefault(f"{module.__name__}.{name}", value)


def _phase_methods(p: _Plugin) -> None:
    # Unlike module names, a plugin may replace what the core defines on Tensor: the core's
    # `requires_grad` and `is_leaf` are placeholders that the autograd plugin replaces.
    tensor = _tensor_class()
    new = _returned_dict(p, "tensorplug_add_tensor_methods")
    for name in new:
        owner = _state.method_owner.get(name)
        if owner is not None:
            raise PluginError(
                f"plugins {owner!r} and {p.name!r} both set Tensor.{name}; "
                f"disable one of them (TENSORPLUG_DISABLE_PLUGINS={p.name})",
                plugin=p.name,
            )
    for name, value in new.items():
        p.methods[name] = tensor.__dict__.get(name, _ABSENT)
        setattr(tensor, name, value)
        _state.method_owner[name] = p.name


_PHASES: Final[tuple[tuple[str, Callable[[_Plugin], None]], ...]] = (
    ("import", _phase_import),
    ("tensorplug_add_keys", _phase_keys),
    ("tensorplug_register_kernels", _phase_kernels),
    ("tensorplug_add_names", _phase_names),
    ("tensorplug_add_tensor_methods", _phase_methods),
)


def _load(plugins: builtins.list[_Plugin], *, raise_errors: bool) -> None:
    """Run the phases over ``plugins``: each phase for all of them before the next phase."""
    for phase, run in _PHASES:
        for p in plugins:
            if p.status != "loaded":
                continue
            try:
                run(p)
            except BaseException as e:  # noqa: B036 - rolled back whatever it is
                # Note [Plugin rollback]: a plugin interrupted (KeyboardInterrupt) is rolled
                # back, then the interrupt goes on; a plugin that calls sys.exit() has failed,
                # it does not end the program that imports tensorplug.
                p.status = "failed"
                p.error = e
                problems = _rollback(p)
                if not isinstance(e, Exception | SystemExit):
                    raise
                msg = _failure_message(p, e, phase, problems)
                if raise_errors:
                    raise PluginError(msg, plugin=p.name, distribution=p.distribution) from e
                warnings.warn(msg, PluginLoadWarning, stacklevel=4)


def _failure_message(p: _Plugin, e: BaseException, phase: str, problems: Iterable[str]) -> str:
    if isinstance(e, IncompatiblePluginError):  # refused before it registered anything
        msg = f"tensorplug plugin {p.name!r} ({p.origin}) was not loaded: {e}"
        if p.distribution is not None:
            msg += f"; set TENSORPLUG_DISABLE_PLUGINS={p.name} to skip it"
        return msg + "."
    if phase == "import":
        where = "while importing it" if p.entry_point is not None else "while registering it"
    else:
        where = f"in {phase}"
    msg = (
        f"tensorplug plugin {p.name!r} ({p.origin}) failed to load {where}: "
        f"{_describe(e).rstrip('.')}. Everything it registered was rolled back"
    )
    extra = "; ".join(problems)
    if extra:
        msg += f" (except: {extra})"
    if p.distribution is not None:
        msg += f"; set TENSORPLUG_DISABLE_PLUGINS={p.name} to skip it."
    else:
        msg += "."
    return msg


def _rollback(p: _Plugin) -> builtins.list[str]:
    """Undo every recorded registration of ``p`` (Note [Plugin rollback]).

    Best effort: each step runs even if an earlier one failed; what could not be undone is
    returned as messages.
    """
    problems: builtins.list[str] = []

    def attempt(what: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as e:
            problems.append(f"{what}: {_describe(e)}")

    tensor = _tensor_class()
    for name, before in reversed(p.methods.items()):
        if before is _ABSENT:
            attempt(f"Tensor.{name}", lambda n=name: delattr(tensor, n))  # type: ignore[misc]
        else:
            attempt(f"Tensor.{name}", lambda n=name, b=before: setattr(tensor, n, b))  # type: ignore[misc]
        _state.method_owner.pop(name, None)
    p.methods.clear()
    module = _tensorplug_module()
    for name, value in reversed(p.names.items()):
        if vars(module).get(name) is value:
            attempt(f"tensorplug.{name}", lambda n=name: delattr(module, n))  # type: ignore[misc]
        if sys.modules.get(f"{module.__name__}.{name}") is value:
            del sys.modules[f"{module.__name__}.{name}"]
        _state.name_owner.pop(name, None)
    p.names.clear()
    for fn in reversed(p.key_listeners):
        attempt(f"key listener {_what(fn)}", lambda f=fn: _keys.remove_listener(f))  # type: ignore[misc]
    p.key_listeners.clear()
    for fn in reversed(p.repr_suffixes):
        if fn in _repr.suffix_hooks:
            attempt(f"repr suffix {_what(fn)}", lambda f=fn: _repr.suffix_hooks.remove(f))  # type: ignore[misc]
    p.repr_suffixes.clear()
    for fn in reversed(p.value_read_hooks):
        if fn in _values.value_read_hooks:
            what = f"value read hook {_what(fn)}"
            attempt(what, lambda f=fn: _values.value_read_hooks.remove(f))  # type: ignore[misc]
    p.value_read_hooks.clear()
    for lib in reversed(p.libraries):
        attempt(repr(lib), lib.close)
    for rt in reversed(p.runtimes):
        attempt(f"device runtime {rt.device_type}", lambda r=rt: _backends.unregister_runtime(r))  # type: ignore[misc]
    p.runtimes.clear()
    for sb in reversed(p.storage):
        attempt(f"storage backend {sb.key_name}", lambda s=sb: _backends.unregister(s))  # type: ignore[misc]
    p.storage.clear()
    for key in reversed(p.keys):
        attempt(f"dispatch key {key}", lambda k=key: _keys.unregister(k))  # type: ignore[misc]
    p.keys.clear()
    if p.registered and _state.pm.get_name(p.obj) == p.name:
        attempt("plugin manager", lambda: _state.pm.unregister(p.obj))
    p.registered = False
    return problems


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
