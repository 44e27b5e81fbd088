"""Loading in phases, and the rollback that undoes a plugin: the loader's tables (which plugins
it has seen, which names and tensor methods each set), the phases that run every selected
plugin's hooks, and what undoes them when one fails or is unregistered. The public API over them
is the package's (:mod:`tensorplug.plugins`).

Note [Plugin rollback]
~~~~~~~~~~~~~~~~~~~~~~
A plugin never touches the global tables directly: it is handed a :class:`KeyRegistrar` and a
:class:`KernelRegistry` that create keys, libraries and storage backends *on its behalf* and
record them, and its names and tensor methods are set by the loader, which records them too
(with whatever a method replaced). Removing a plugin -- because it failed in any phase, or
because :func:`tensorplug.plugins.unregister` was called -- undoes those records in reverse
order. A failing plugin is reported with a :class:`PluginLoadWarning` that names it and the
variable that skips it; the other plugins carry on. Any exception counts, ``SystemExit``
included; a ``KeyboardInterrupt`` (or another ``BaseException`` that is not an error) is
re-raised once the rollback is done. A ``tp.Library`` the plugin creates itself while one of
its hooks runs (or while it is imported) is recorded as its own too, and closed with it.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, Final

import pluggy

from .. import _backends
from .. import hookspecs as _hookspecs
from .. import keys as _keys
from .._opset import api as _api
from .._opset import repr as _repr
from .._opset import values as _values
from ..dispatcher import _library as _dispatcher_library
from ._plugin import (
    _ABSENT,
    KernelRegistry,
    KeyRegistrar,
    PluginError,
    PluginLoadWarning,
    _describe,
    _Plugin,
)
from ._versions import IncompatiblePluginError, check_api_version

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
_namespace: list[ModuleType] = []


def bind_namespace(module: ModuleType) -> None:
    """Make ``module`` the one ``tensorplug_add_names`` adds to (the start-up's step)."""
    _namespace[:] = [module]


def _tensorplug_module() -> ModuleType:
    return _namespace[0]


def _tensor_class() -> type:
    from ..tensor import Tensor

    return Tensor


# --- the phases -----------------------------------------------------------------------------


def _hook_results(p: _Plugin, hook: str, **kwargs: Any) -> list[Any]:
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
    check_api_version(p)
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
            for full, m in _module_names(f"{module.__name__}.{name}", value):
                sys.modules.setdefault(full, m)


def _module_names(full: str, value: ModuleType) -> list[tuple[str, ModuleType]]:
    """The import names a module a plugin adds as ``tensorplug.<name>`` answers: its own, and
    those of the plugin's modules it holds as attributes (``tensorplug.autograd.forward_ad``),
    so ``import tensorplug.autograd.forward_ad as fwAD`` works as PyTorch's does."""
    out = [(full, value)]
    package = (value.__name__.rpartition(".")[0] or value.__name__) + "."
    for attr, m in vars(value).items():
        if isinstance(m, ModuleType) and m.__name__.startswith(package) and m is not value:
            out.append((f"{full}.{attr}", m))
    return out


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


_loading = threading.local()  # .plugin: the plugin whose hook runs in this thread


def _record_library(lib: Any) -> None:
    """A ``tp.Library`` created while a plugin's hook runs is that plugin's (Note [Plugin
    rollback]): closed when it fails or is unregistered."""
    p = getattr(_loading, "plugin", None)
    if p is not None and lib not in p.libraries:
        p.libraries.append(lib)


_dispatcher_library.creation_observers.append(_record_library)


def _load(plugins: list[_Plugin], *, raise_errors: bool) -> None:
    """Run the phases over ``plugins``: each phase for all of them before the next phase."""
    try:
        _run_phases(plugins, raise_errors=raise_errors)
    finally:
        _reattach_overrides()


def _reattach_overrides() -> None:
    """Note [Overrides outlive their operator's plugin]."""
    for other in list(_state.records.values()):
        if other.status == "loaded":
            for lib in other.libraries:
                lib._reattach()


# Note [Overrides outlive their operator's plugin]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Plugin B overrides a kernel of an operator that plugin A defines. Unregistering A removes the
# operator, and B's kernel with it; B stays loaded. When A is registered again, its operators
# are new ones: after every load, the kernels of the loaded plugins' libraries whose operator
# was removed and is defined again with the same schema go back on top of its stacks, so B's
# override holds again as it did before A went away.


def _run_phases(plugins: list[_Plugin], *, raise_errors: bool) -> None:
    for phase, run in _PHASES:
        for p in plugins:
            if p.status != "loaded":
                continue
            _loading.plugin = p
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
                warnings.warn(msg, PluginLoadWarning, stacklevel=5)
            finally:
                _loading.plugin = None


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


def _rollback(p: _Plugin) -> list[str]:
    """Undo every recorded registration of ``p`` (Note [Plugin rollback]).

    Best effort: each step runs even if an earlier one failed; what could not be undone is
    returned as messages.
    """
    problems: list[str] = []

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
        if isinstance(value, ModuleType):
            for full, m in _module_names(f"{module.__name__}.{name}", value):
                if sys.modules.get(full) is m:
                    del sys.modules[full]
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
