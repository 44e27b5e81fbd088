"""What the core needs to know about each backend's storage (internal).

Kernels go through the dispatcher; a few things do not: turning Python data into a tensor
(``tp.tensor``), reading a tensor back to the host (``.item()``, ``.tolist()``, ``.numpy()``,
``repr``), and moving data between backends (``.to("cuda")``). A backend plugin describes those
with a :class:`StorageBackend` registered for its key (``tensorplug.array_backend.register``
does it for array-API libraries). The core never imports numpy: it only calls these methods.

A backend with devices to manage (``tp.cuda``: device count, current device, streams, memory)
also registers a *device runtime* for its device type (``registry.add_device_runtime``); see
``tensorplug.cuda`` for what a runtime provides.
"""

from __future__ import annotations

from typing import Any, Protocol

from . import _manifest, keys
from .errors import MissingPluginError

__all__ = [
    "StorageBackend", "register", "unregister", "for_key", "for_device_type", "resolve_device",
    "register_runtime", "unregister_runtime", "runtime",
]  # fmt: skip


class StorageBackend(Protocol):
    key_name: str  # the backend dispatch key, e.g. "CPU"
    device_type: str  # e.g. "cpu"
    plugin: str  # the plugin that registered it

    def from_python(self, data: Any, dtype: Any, device: Any) -> Any:
        """Python data (nested sequences, scalars, host arrays) -> (array, tensorplug dtype)."""
        ...

    def to_host(self, data: Any) -> Any:
        """The backend array as a numpy array on the host (no copy where possible)."""
        ...

    def from_host(self, host: Any, device: Any) -> Any:
        """A host numpy array -> a backend array on ``device``."""
        ...

    # Optional: ``device(d)``, the device a tensor made for ``d`` lives on ("cuda" is the
    # current CUDA device, "cuda:1" itself); without it, ``d`` as it is (see resolve_device).
    # Optional: ``share_host(host, device)``, a tensor over a host numpy array's memory (None
    # when the backend's arrays cannot be host arrays), and ``from_dlpack(obj, device)``, a
    # tensor over a DLPack producer's memory (Note [Memory sharing] in _opset/interop.py).


_by_key: dict[str, StorageBackend] = {}


# Note [Backend of a device]: a factory asks for the backend of its device on every call; a
# device object seen before is found by its id (hashing a device runs Python), each entry
# holding the object so that its id is not reused while the entry lives. Emptied whenever the
# backends change, and when it grows (devices made per call)
_of_device: dict[int, tuple[Any, StorageBackend]] = {}


# Note [Factory targets]: what a factory's ``device=`` argument means, for the generated
# ``BackendSelect`` kernels (Note [Generated BackendSelect kernels] in _opset/api.py): the
# argument's id -> (the argument, its canonical device, the key set of its backend's
# tensors). The entry holds the argument, so its id is not reused while the entry lives (a
# string such as "cpu" is found by identity too). Emptied whenever the backends or the keys
# change (the key set of a backend's tensors follows the keys), and when it grows.
factory_targets: dict[int, tuple[Any, Any, int]] = {}


def factory_target(d: Any) -> tuple[Any, Any, int]:
    """The entry of :data:`factory_targets` for device argument ``d`` (not ``None``), made
    now: its canonical device (a bad device string raises here) and the key set of the tensors
    of the backend that serves it (none loaded: :class:`MissingPluginError`)."""
    from .device import canonical

    dev = canonical(d)
    b = for_device(dev)
    got = (d, dev, keys.tensor_keyset(b.key_name))
    if len(factory_targets) > 64:  # devices made per call: keep it small
        factory_targets.clear()
    factory_targets[id(d)] = got
    return got


keys.add_listener(factory_targets.clear)


def register(backend: StorageBackend) -> None:
    _by_key[backend.key_name] = backend
    _of_device.clear()
    factory_targets.clear()


def unregister(backend: StorageBackend) -> None:
    if _by_key.get(backend.key_name) is backend:
        del _by_key[backend.key_name]
    _of_device.clear()
    factory_targets.clear()


def for_device(device: Any) -> StorageBackend:
    """The backend of ``device`` (a ``tensorplug.device``): :func:`for_device_type` of its
    type, remembered by identity (Note [Backend of a device])."""
    got = _of_device.get(id(device))
    if got is not None and got[0] is device:
        return got[1]
    b = for_device_type(device.type)
    if len(_of_device) > 64:
        _of_device.clear()
    _of_device[id(device)] = (device, b)
    return b


def for_key(key_name: str) -> StorageBackend:
    b = _by_key.get(key_name)
    if b is None:
        raise _missing_backend(key_name, key_name.lower())
    return b


def for_device_type(device_type: str) -> StorageBackend:
    for b in _by_key.values():
        if b.device_type == device_type:
            return b
    k = keys.backend_for_device_type(device_type)
    raise _missing_backend(k.name if k is not None else None, device_type)


def resolve_device(d: Any) -> Any:
    """The device a tensor made for device ``d`` lives on: ``cuda`` is ``cuda:<current>``."""
    if d.index is not None or d.type == "cpu":
        return d
    resolve = getattr(for_device_type(d.type), "device", None)
    return d if resolve is None else resolve(d)


# --- device runtimes ------------------------------------------------------------------------

_runtimes: dict[str, Any] = {}  # device type -> its runtime (tensorplug.cuda documents one)


def register_runtime(rt: Any) -> None:
    _runtimes[rt.device_type] = rt


def unregister_runtime(rt: Any) -> None:
    device_type: str = rt.device_type
    if _runtimes.get(device_type) is rt:
        del _runtimes[device_type]


def runtime(device_type: str) -> Any | None:
    """The device runtime of ``device_type``; None when no loaded plugin registered one."""
    return _runtimes.get(device_type)


# device type -> (plugin, distribution) that provides it, for errors when none is loaded
# (Note [First-party manifest] in _manifest.py)
FIRST_PARTY_DEVICES = {d: (p.name, p.distribution) for p in _manifest.MANIFEST for d in p.devices}


def _missing_backend(key_name: str | None, device_type: str) -> Exception:
    provider = FIRST_PARTY_DEVICES.get(device_type)
    if provider is not None:
        plugin, dist = provider
        # installed and left out by a setting, failed, or not installed: say which
        why = _manifest.absent_plugin_remedy(plugin, dist)  # Note [Loader state for remedies]
        if why is not None:
            return MissingPluginError(
                f"No backend is loaded for device type '{device_type}': it is provided by {why}.",
                distribution=dist,
            )
        return MissingPluginError(
            f"No backend is loaded for device type '{device_type}': it is provided by the "
            f"{dist} plugin. Install it with `pip install {dist}` (or check "
            "TENSORPLUG_PLUGINS / TENSORPLUG_DISABLE_PLUGINS).",
            distribution=dist,
        )
    known = sorted(keys.device_types())
    loaded = sorted(b.device_type for b in _by_key.values())
    if key_name is None:
        return RuntimeError(
            f"Unknown device type '{device_type}'. Known device types: {', '.join(known)}; "
            f"with a backend loaded: {', '.join(loaded) or 'none'}. A third-party plugin may "
            "provide it: see `tensorplug plugins`."
        )
    return RuntimeError(
        f"The '{key_name}' backend (device type '{device_type}') has no storage backend "
        f"loaded; loaded device types: {', '.join(loaded) or 'none'}."
    )
