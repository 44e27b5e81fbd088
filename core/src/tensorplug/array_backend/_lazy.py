"""Array backends whose array library and kernels load on first use (internal; see
register_lazy).

``import tensorplug`` must not import CuPy: it is slow, and on a machine without a GPU it has
nothing to offer. Nor should it import the array kit's ~40 kernel modules and build its kernels
for the CPU backend, which most programs use a small part of (issue 34). :func:`register_lazy`
therefore registers, at plugin load, what needs neither: one *stub* kernel per operator the
kit provides (so dispatch tables, ``tensorplug table``, ``tensorplug plugins`` and ``tensorplug
ops --key CUDA`` show the backend) and a storage backend. The first kernel call or storage use
runs the plugin's ``load()``, which imports the library (or raises the error that says why it
cannot) and returns :func:`register`'s arguments.

Note [Lazy backends]
~~~~~~~~~~~~~~~~~~~~
Loading registers the real kernels over the stubs (``override=True``) and then removes the
stubs, so from then on calls reach the real kernels directly; a call that had already picked a
stub finishes through it (a stub forwards to the loaded kernel). Two threads making the first
call at once both reach :meth:`LazyArrayBackend.load`, whose lock lets one register while the
other waits, then both call the same kernel. A failed ``load()`` (or a ``register`` that fails
halfway) leaves only the stubs, and the next use tries again. :meth:`LazyArrayBackend.unload`
puts stubs back over the real kernels and removes those (tests swap the array library this
way). The storage backend registered at plugin load stays: it forwards to the loaded backend's
storage. The stubs and the real kernels are registered by the same plugin, under the same
names, so ``tensorplug plugins`` and ``tensorplug ops`` read the same before and after.

Note [Kit kernel names]
~~~~~~~~~~~~~~~~~~~~~~~
The stubs need the names of the kit's kernels, which are what building every kernel module
(``_register._MODULES``) over numpy returns; building imports those modules, the cost the
stubs are there to avoid. So the names are cached between runs beside the op set, in the same
directory and under the same rules (Note [Op set cache] in tensorplug/_schema_cache.py: JSON
data only, private to the user, written whole): ``kit_kernels-<digest>.json``, the digest over
the path, size and modification time of each of the kit's source files, the evidence Python's
own bytecode cache trusts. An edited kernel module changes the digest, and the next import
builds the names once and writes them again; where no private cache directory can be had,
every import builds them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .. import _schema_cache
from .. import dispatcher as _dispatcher
from ..device import device as Device
from ..errors import RegistrationError
from ._checks import backend_key, qualified

if TYPE_CHECKING:
    from ._register import ArrayBackend, Registry
    from ._storage import ArrayStorage

__all__ = ["LazyArrayBackend", "LazyStorage", "kernel_names", "register_lazy"]

_names: frozenset[str] | None = None
_names_lock = threading.Lock()


def kernel_names() -> frozenset[str]:
    """The operators (``"add.Tensor"``) the array kit has kernels for, whatever the ``xp``:
    read from the cache of a previous run, else built (Note [Kit kernel names])."""
    global _names
    if _names is None:
        with _names_lock:
            if _names is None:
                key = _sources_digest()
                names = _cached_names(key)
                if names is None:
                    names = _built_names()
                    _schema_cache.write_private(_CACHE, key, {"names": sorted(names)})
                _names = names
    return _names


_CACHE = "kit_kernels"  # the cache file's prefix: kit_kernels-<digest>.json


def _sources_digest() -> str:
    """What the kit's kernel names are made from: the path, size and modification time of each
    of its source files (Note [Kit kernel names])."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts: list[str] = []
    folders = [here]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if not e.name.startswith((".", "__pycache__")):
                        folders.append(e.path)
                elif e.name.endswith(".py"):
                    st = e.stat()
                    parts.append(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}")
    parts.sort()
    return _schema_cache.digest("\n".join(parts).encode(), f"kit-kernel-names-{_FORMAT}")


_FORMAT = 1  # bump when what the names are (or how they are keyed) changes


def _cached_names(key: str) -> frozenset[str] | None:
    data = _schema_cache.read_private(_CACHE, key)
    names = None if data is None else data.get("names")
    if not isinstance(names, list) or not names:
        return None
    if not all(isinstance(n, str) and n for n in names):
        return None  # not our layout: build, and write a good one
    return frozenset(names)


def _built_names() -> frozenset[str]:
    """The names a build of every kernel module over numpy makes. A build's names do not
    depend on the kit's options (``special``, ``fft``, ``overrides`` are not in them), only on
    the modules, and with numpy each module builds."""
    import numpy

    from ._kit import Kit
    from ._register import _MODULES
    from ._storage import _default_storage

    kit = Kit(numpy, "CPU", "cpu", *_default_storage(numpy))
    names: set[str] = set()
    for mod in _MODULES:
        names.update(mod.build(kit))
    return frozenset(names)


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
                from ._register import register  # the kernel modules: on first use

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
                op = _dispatcher.find_op(qualified(name))
            except RegistrationError:
                continue
            lib.impl(op, _Stub(self, name), self.key, override=override)
        return lib

    def _storage(self) -> ArrayStorage:
        self.load()
        assert self._real_storage is not None
        return self._real_storage

    def __repr__(self) -> str:
        state = repr(self._backend) if self._backend is not None else "not loaded"
        return f"<LazyArrayBackend {self.key}: {state}>"


class _Stub:
    """The kernel of one operator until its backend loads: loads it, then calls the real
    kernel (Note [Lazy backends]). Named ``lazy[KEY:op.overload]`` (``explain``, ``tensorplug
    source``). One slotted object and its name per operator: a closure was five objects, and a
    lazy backend registers one per kit kernel at ``import tensorplug`` (issue 34)."""

    __slots__ = ("__qualname__", "_lazy", "_name")

    def __init__(self, lazy: LazyArrayBackend, name: str) -> None:
        self._lazy = lazy
        self._name = name
        self.__qualname__ = f"lazy[{lazy.key}:{name}]"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._lazy.load().kernels[self._name](*args, **kwargs)

    @property
    def __name__(self) -> str:
        return self.__qualname__

    def __repr__(self) -> str:
        return f"<{self.__qualname__} of {self._lazy!r}>"


class LazyStorage:
    """The storage backend of a lazy backend: loads it on first use, then forwards every
    method of ``tensorplug._backends.StorageBackend`` and of the strided storage (``strided``,
    ``memory_layout``, ``as_strided``, ``from_buffer``: Note [Strided layout] in
    tensorplug/_strides.py) to the loaded backend's :class:`ArrayStorage`, and its ``kit`` and
    host dtypes."""

    def __init__(self, lazy: LazyArrayBackend, key_name: str, device_type: str, plugin: str):
        self._lazy = lazy
        self.key_name = key_name
        self.device_type = device_type
        self.plugin = plugin

    def _real(self) -> ArrayStorage:
        real = self._lazy._real_storage
        return real if real is not None else self._lazy._storage()

    def from_python(self, data: Any, dtype: Any, device: Any) -> Any:
        return self._real().from_python(data, dtype, device)

    def from_host(self, host: Any, device: Any) -> Any:
        return self._real().from_host(host, device)

    def to_host(self, data: Any) -> Any:
        return self._real().to_host(data)

    def host_dtype(self, host: Any) -> Any:
        return self._real().host_dtype(host)

    def device(self, d: Device) -> Device:
        return self._real().device(d)

    def share_host(self, host: Any, device: Any) -> Any:
        share = getattr(self._real(), "share_host", None)
        return None if share is None else share(host, device)

    def from_dlpack(self, ext: Any, device: Any) -> Any:
        load = getattr(self._real(), "from_dlpack", None)
        if load is None:
            raise BufferError(f"from_dlpack: the {self.key_name} backend does not load DLPack")
        return load(ext, device)

    @property
    def kit(self) -> Any:
        return self._real().kit

    @property
    def _host_dtypes(self) -> dict[Any, Any]:  # the CPU's, read by tp.frombuffer and from_file
        return self._real()._host_dtypes

    @property
    def strided(self) -> bool:
        return self._real().strided

    def memory_layout(self, data: Any) -> tuple[int, tuple[int, ...], int] | None:
        return self._real().memory_layout(data)

    def as_strided(
        self, data: Any, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
    ) -> Any:
        return self._real().as_strided(data, shape, strides, offset)

    def from_buffer(self, buffer: Any, dtype: Any, byteorder: str, device: Any) -> Any:
        return self._real().from_buffer(buffer, dtype, byteorder, device)


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
