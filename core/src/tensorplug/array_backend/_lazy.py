"""Array backends whose array library is imported on first use (internal; see register_lazy).

``import tensorplug`` must not import CuPy: it is slow, and on a machine without a GPU it has
nothing to offer. :func:`register_lazy` therefore registers, at plugin load, what needs no array
library: one *stub* kernel per operator the kit provides (so dispatch tables, ``tensorplug
table`` and ``tensorplug ops --key CUDA`` show the backend) and a storage backend. The first
kernel call or storage use runs the plugin's ``load()``, which imports the library (or raises
the error that says why it cannot) and returns :func:`register`'s arguments.

Note [Lazy backends]
~~~~~~~~~~~~~~~~~~~~
Loading registers the real kernels over the stubs (``override=True``) and then removes the
stubs, so from then on calls reach the real kernels directly; a call that had already picked a
stub finishes through it (a stub forwards to the loaded kernel). A failed ``load()`` (or a
``register`` that fails halfway) leaves only the stubs, and the next use tries again. :meth:`LazyArrayBackend.unload` puts stubs back over the
real kernels and removes those (tests swap the array library this way). The storage backend
registered at plugin load stays: it forwards to the loaded backend's storage.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from .. import dispatcher as _dispatcher
from ..device import device as Device
from ..errors import RegistrationError
from . import _register
from ._checks import qualified
from ._kit import Kernel, Kit
from ._register import _MODULES, ArrayBackend, Registry, backend_key, register
from ._storage import ArrayStorage, _default_storage

__all__ = ["LazyArrayBackend", "LazyStorage", "kernel_names", "register_lazy"]

_names: frozenset[str] | None = None


def kernel_names() -> frozenset[str]:
    """The operators (``"add.Tensor"``) the array kit has kernels for, whatever the ``xp``."""
    global _names
    if _names is None and _register.numpy_names is not None:
        _names = _register.numpy_names  # the CPU backend's build had them all
    if _names is None:
        import numpy

        kit = Kit(numpy, "CPU", "cpu", *_default_storage(numpy))
        names: set[str] = set()
        for mod in _MODULES:
            names.update(mod.build(kit))
        _names = frozenset(names)
    return _names


class LazyArrayBackend:
    """A backend registered by :func:`register_lazy`: stubs until :meth:`load`."""

    def __init__(
        self,
        registry: Registry,
        key: str,
        load: Callable[[], Mapping[str, Any]],
        device_type: str,
    ) -> None:
        self.key = key
        self.device_type = device_type
        self._registry = registry
        self._load = load
        self._lock = threading.RLock()
        self._backend: ArrayBackend | None = None
        self._real_storage: ArrayStorage | None = None
        self._stubs: Any = self._register_stubs(override=False)
        plugin = str(getattr(registry, "plugin_name", "") or "?")
        self.storage = LazyStorage(self, key, device_type, plugin)
        registry.add_storage_backend(self.storage)

    @property
    def loaded(self) -> bool:
        return self._backend is not None

    @property
    def backend(self) -> ArrayBackend | None:
        """The real backend once loaded; None before."""
        return self._backend

    def load(self) -> ArrayBackend:
        """Import the array library and register the real kernels (once; Note [Lazy backends]).

        Raises whatever the plugin's ``load()`` raises (the reason the backend is unusable).
        """
        b = self._backend
        if b is not None:
            return b
        with self._lock:
            if self._backend is None:
                options = dict(self._load())
                xp = options.pop("xp")
                installer = _Installer(self._registry, self)
                try:
                    b = register(installer, self.key, xp, **options)
                except BaseException:
                    for lib in installer.libraries:  # the stubs are on top again
                        lib.close()
                    raise
                self._stubs.close()
                self._stubs = None
                self._backend = b
            return self._backend

    def unload(self) -> None:
        """Back to stubs: the next use loads again (Note [Lazy backends])."""
        with self._lock:
            b = self._backend
            if b is None:
                return
            self._stubs = self._register_stubs(override=True)
            b.library.close()
            self._backend = None
            self._real_storage = None

    def _register_stubs(self, *, override: bool) -> Any:
        lib = self._registry.library("aten", "IMPL")
        for name in sorted(kernel_names()):
            try:
                _dispatcher.find_op(qualified(name))
            except RegistrationError:
                continue
            lib.impl(name, self._stub(name), self.key, override=override)
        return lib

    def _stub(self, name: str) -> Kernel:
        def stub(*args: Any, **kwargs: Any) -> Any:
            return self.load().kernels[name](*args, **kwargs)

        stub.__name__ = stub.__qualname__ = f"lazy[{self.key}:{name}]"
        return stub

    def _storage(self) -> ArrayStorage:
        self.load()
        assert self._real_storage is not None
        return self._real_storage

    def __repr__(self) -> str:
        state = repr(self._backend) if self._backend is not None else "not loaded"
        return f"<LazyArrayBackend {self.key}: {state}>"


class LazyStorage:
    """The storage backend of a lazy backend: loads it on first use, then forwards."""

    def __init__(self, lazy: LazyArrayBackend, key_name: str, device_type: str, plugin: str):
        self._lazy = lazy
        self.key_name = key_name
        self.device_type = device_type
        self.plugin = plugin

    def from_python(self, data: Any, dtype: Any, device: Any) -> Any:
        return self._lazy._storage().from_python(data, dtype, device)

    def from_host(self, host: Any, device: Any) -> Any:
        return self._lazy._storage().from_host(host, device)

    def to_host(self, data: Any) -> Any:
        return self._lazy._storage().to_host(data)

    def host_dtype(self, host: Any) -> Any:
        return self._lazy._storage().host_dtype(host)

    def device(self, d: Device) -> Device:
        return self._lazy._storage().device(d)

    def share_host(self, host: Any, device: Any) -> Any:
        share = getattr(self._lazy._storage(), "share_host", None)
        return None if share is None else share(host, device)

    def from_dlpack(self, ext: Any, device: Any) -> Any:
        load = getattr(self._lazy._storage(), "from_dlpack", None)
        if load is None:
            raise BufferError(f"from_dlpack: the {self.key_name} backend does not load DLPack")
        return load(ext, device)


class _Installer:
    """The registry :func:`register` gets when a lazy backend loads: its libraries replace the
    stubs (``override=True``) and its storage is kept by the lazy one, not registered."""

    def __init__(self, registry: Registry, lazy: LazyArrayBackend) -> None:
        self._registry = registry
        self._lazy = lazy
        self.plugin_name = getattr(registry, "plugin_name", "")
        self.libraries: list[_Overriding] = []

    def library(self, ns: str, kind: Any) -> Any:
        lib = _Overriding(self._registry.library(ns, kind))
        self.libraries.append(lib)
        return lib

    def add_storage_backend(self, backend: Any) -> None:
        self._lazy._real_storage = backend


class _Overriding:
    """A library whose ``impl`` always overrides (the stubs below it)."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self.owner = lib.owner

    def impl(self, name: Any, fn: Callable[..., Any], key: str = "", **kwargs: Any) -> None:
        kwargs["override"] = True
        self._lib.impl(name, fn, key, **kwargs)

    def close(self) -> None:
        self._lib.close()


def register_lazy(
    registry: Registry,
    key: str,
    load: Callable[[], Mapping[str, Any]],
    *,
    device_type: str | None = None,
) -> LazyArrayBackend:
    """Register backend ``key`` now and import its array library on first use.

    ``load()`` returns :func:`register`'s arguments after ``key`` as a mapping (``{"xp": cupy,
    "device_context": ..., ...}``), or raises the error that says why the backend cannot be
    used (no library, no device); it runs on the first kernel call or storage use, and again
    after a failure. See Note [Lazy backends].
    """
    k, dev_type = backend_key("register_lazy", key, device_type)
    return LazyArrayBackend(registry, k.name, load, dev_type)
