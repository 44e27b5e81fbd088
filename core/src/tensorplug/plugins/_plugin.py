"""One plugin as the loader keeps it (:class:`_Plugin`, what it registered: Note [Plugin rollback]
in plugins/_phases.py), what :func:`tensorplug.plugins.list` reports of it (:class:`PluginInfo`),
the errors and warning that name it, and what its hooks are handed (:class:`KeyRegistrar`,
:class:`KernelRegistry`)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from .. import _backends, _entry_points
from .. import keys as _keys
from .._opset import repr as _repr
from .._opset import values as _values
from ..dispatcher._library import Library, LibraryKind
from ..keys import DispatchKey, KeyLike

Status = Literal["loaded", "failed", "disabled"]


class PluginLoadWarning(UserWarning):
    """An installed plugin could not be loaded; it was rolled back and the others work."""


class PluginError(RuntimeError):
    """A plugin that cannot be registered or unregistered as asked.

    ``plugin`` is the plugin name; ``distribution`` the distribution that provides it, if any.
    """

    def __init__(self, message: str, *, plugin: str, distribution: str | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.distribution = distribution


@dataclass(frozen=True)
class PluginInfo:
    """What :func:`list` reports about one plugin."""

    name: str  # the entry point name (or the name given to register())
    distribution: str | None  # None for in-process plugins
    version: str | None
    status: Status
    keys: tuple[str, ...] = ()  # dispatch keys it created (backends: without Autograd<B>...)
    op_count: int = 0  # kernels it registered, summed over its libraries
    fallbacks: int = 0  # boxed fallbacks it registered
    names: tuple[str, ...] = ()  # attributes it added to the tensorplug module
    tensor_methods: tuple[str, ...] = ()  # attributes it set on tensorplug.Tensor
    devices: tuple[str, ...] = ()  # device types whose runtime it registered (tp.cuda)
    error: str | None = None  # status "failed": the exception, as "Type: message"
    reason: str | None = None  # status "disabled": which setting disabled it
    api_version: str | None = None  # the PLUGIN_API_VERSION it declares (None: none)


_ABSENT: Final = object()


class _Plugin:
    """One plugin and everything it registered (Note [Plugin rollback])."""

    def __init__(
        self,
        name: str,
        obj: object = None,
        *,
        entry_point: _entry_points.EntryPoint | None = None,
    ) -> None:
        self.name = name
        self.obj = obj
        self.entry_point = entry_point
        self.status: Status = "loaded"
        self.api_version: str | None = None
        self.error: BaseException | None = None
        self.reason: str | None = None
        self.registered = False  # with the pluggy manager
        self.keys: builtins.list[str] = []
        self.libraries: builtins.list[Library] = []
        self.storage: builtins.list[_backends.StorageBackend] = []
        self.runtimes: builtins.list[Any] = []
        self.repr_suffixes: builtins.list[Callable[[Any], builtins.list[str]]] = []
        self.key_listeners: builtins.list[Callable[[], None]] = []
        self.value_read_hooks: builtins.list[Callable[[Any, str], None]] = []
        self.names: dict[str, object] = {}  # name -> the value it set
        self.methods: dict[str, object] = {}  # name -> what Tensor.__dict__ held before

    def info(self) -> PluginInfo:
        return PluginInfo(
            name=self.name,
            distribution=self.distribution,
            version=self.version,
            status=self.status,
            keys=tuple(self.keys),
            op_count=sum(len(lib._kernels) for lib in self.libraries),
            fallbacks=sum(len(lib._fallbacks) for lib in self.libraries),
            names=tuple(self.names),
            tensor_methods=tuple(self.methods),
            devices=tuple(rt.device_type for rt in self.runtimes),
            error=None if self.error is None else _describe(self.error),
            reason=self.reason,
            api_version=self.api_version,
        )

    # read from the distribution's metadata only when asked (Note [Light entry point scan])
    @property
    def distribution(self) -> str | None:
        return None if self.entry_point is None else self.entry_point.distribution

    @property
    def version(self) -> str | None:
        return None if self.entry_point is None else self.entry_point.version

    @property
    def origin(self) -> str:
        if self.distribution is None:
            return "in-process plugin"
        return f"distribution {self.distribution} {self.version or ''}".rstrip()


# --- what a plugin is handed ----------------------------------------------------------------


class KeyRegistrar:
    """The ``keys`` argument of ``tensorplug_add_keys``: creates keys owned by one plugin."""

    def __init__(self, plugin: _Plugin) -> None:
        self._plugin = plugin

    @property
    def plugin_name(self) -> str:
        return self._plugin.name

    def register_backend(
        self,
        name: str,
        device_type: str,
        *,
        autocast_dtype: Any = None,
        autocast_dtypes: Iterable[Any] | None = None,
    ) -> DispatchKey:
        """A backend key (and its ``Autograd<B>``/``Autocast<B>`` keys): keys.register_backend,
        with the autocast dtypes it declares (Note [Autocast dtypes of a backend])."""
        key = _keys.register_backend(
            name,
            device_type,
            owner=self._plugin.name,
            autocast_dtype=autocast_dtype,
            autocast_dtypes=autocast_dtypes,
        )
        self._plugin.keys.append(key.name)
        return key

    def register_functionality(
        self,
        name: str,
        *,
        before: KeyLike | Iterable[KeyLike] | None = None,
        after: KeyLike | Iterable[KeyLike] | None = None,
    ) -> DispatchKey:
        """A functionality key placed by ``before=``/``after=``: keys.register_functionality."""
        key = _keys.register_functionality(
            name, before=before, after=after, owner=self._plugin.name
        )
        self._plugin.keys.append(key.name)
        return key

    def get(self, name: KeyLike) -> DispatchKey:
        return _keys.get(name)


class KernelRegistry:
    """The ``registry`` argument of ``tensorplug_register_kernels``."""

    def __init__(self, plugin: _Plugin) -> None:
        self._plugin = plugin

    @property
    def plugin_name(self) -> str:
        return self._plugin.name

    def library(self, ns: str, kind: LibraryKind, dispatch_key: str = "") -> Library:
        """A :class:`~tensorplug.Library` owned by this plugin, closed when it is removed."""
        lib = Library(ns, kind, dispatch_key, owner=self._plugin.name)
        if lib not in self._plugin.libraries:  # (recorded already while a hook runs)
            self._plugin.libraries.append(lib)
        return lib

    def add_storage_backend(self, backend: _backends.StorageBackend) -> None:
        """Make ``backend`` the storage of its key (tensor creation, host transfers)."""
        other = _backends._by_key.get(backend.key_name)
        if other is not None:
            raise PluginError(
                f"plugin {self._plugin.name!r} adds a storage backend for key "
                f"{backend.key_name!r}, which already has one from plugin "
                f"{getattr(other, 'plugin', '?')!r}; unregister that plugin first.",
                plugin=self._plugin.name,
            )
        _backends.register(backend)
        self._plugin.storage.append(backend)

    def add_device_runtime(self, runtime: Any) -> None:
        """Make ``runtime`` the device runtime of ``runtime.device_type``: what ``tp.cuda``
        asks for devices, streams and memory (see ``tensorplug.cuda``); removed with the
        plugin."""
        other = _backends.runtime(runtime.device_type)
        if other is not None:
            raise PluginError(
                f"plugin {self._plugin.name!r} adds a device runtime for device type "
                f"{runtime.device_type!r}, which already has one from another plugin; "
                "unregister that plugin first.",
                plugin=self._plugin.name,
            )
        _backends.register_runtime(runtime)
        self._plugin.runtimes.append(runtime)

    def add_repr_suffix(self, fn: Callable[[Any], builtins.list[str]]) -> None:
        """Add ``fn(tensor) -> ["name=value", ...]`` to every tensor's ``repr`` suffix (the
        autograd plugin's ``requires_grad=True``, ``grad_fn=<...>``); removed with the plugin."""
        _repr.suffix_hooks.append(fn)
        self._plugin.repr_suffixes.append(fn)

    def add_key_listener(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` after every change of the dispatch keys (``keys.add_listener``), for as
        long as this plugin is loaded: a backend registered later gets this plugin's masks."""
        _keys.add_listener(fn)
        self._plugin.key_listeners.append(fn)

    def add_value_read_hook(self, fn: Callable[[Any, str], None]) -> None:
        """Call ``fn(tensor, method)`` before ``tolist()`` or ``numpy()`` hands a tensor's
        values to Python outside the dispatcher (``item()``, ``bool()``, ``int()`` and
        ``float()`` go through ``aten::_local_scalar_dense``, which fallbacks see); the
        tracer warns there. Removed with the plugin."""
        _values.value_read_hooks.append(fn)
        self._plugin.value_read_hooks.append(fn)


def _describe(e: BaseException) -> str:
    """``Type: message`` on one line (pluggy's validation errors span several)."""
    if isinstance(e, SystemExit):
        return f"SystemExit: the plugin called sys.exit({'' if e.code is None else repr(e.code)})"
    text = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


for _cls in (PluginLoadWarning, PluginError, PluginInfo, KeyRegistrar, KernelRegistry):
    _cls.__module__ = "tensorplug.plugins"  # where users find them
del _cls
