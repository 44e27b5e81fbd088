"""``tp.cuda``: CUDA devices, streams, events, memory and seeds, with PyTorch's names.

This module belongs to the core, so it imports and answers everywhere: without the
tensorplug-cuda plugin (or without a GPU) ``is_available()`` is False and ``device_count()``
is 0, and ``"cuda" if tp.cuda.is_available() else "cpu"`` picks a device on any machine. The
answers that PyTorch gives without CUDA are given here too (``memory_allocated()`` is 0,
``empty_cache()`` and ``manual_seed()`` do nothing); everything else raises
:class:`CudaUnavailableError` saying why (the plugin, CuPy, the driver) and what to install.

With the plugin, every call goes to its *device runtime* (``registry.add_device_runtime`` in
docs/plugins.md), an object with ``device_type = "cuda"`` and these methods, which take device
indices that this module has already checked:

* ``unavailable_reason() -> str | None``: None when devices can be used, else why not;
* ``device_count()``, ``current_device()``, ``set_device(i)``, ``synchronize(i)``,
  ``get_device_name(i)``;
* ``Stream`` and ``Event``: classes with PyTorch's constructor arguments and methods
  (``Stream(device, priority)``, ``Event(enable_timing, blocking, interprocess)``), the
  stream usable as a context manager that makes it current; ``current_stream(i)``;
* ``memory_allocated(i)``, ``max_memory_allocated(i)``, ``memory_reserved(i)``,
  ``reset_peak_memory_stats(i)``, ``empty_cache()``.

Seeds are the core's: ``manual_seed`` reseeds the default ``cuda`` generator
(``tensorplug.random``), which the backend draws from.

Usage::

    import tensorplug as tp
    dev = "cuda" if tp.cuda.is_available() else "cpu"
    with tp.cuda.device(1):                # makes cuda:1 current for "cuda" inside
        x = tp.ones(3, device="cuda")      # on cuda:1
    start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)
    start.record(); y = x @ x; end.record(); tp.cuda.synchronize()
    start.elapsed_time(end)                # milliseconds
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _backends
from . import random as _random
from .device import device as _Device
from .errors import MissingPluginError

__all__ = [
    "CudaUnavailableError", "Event", "Stream", "current_device", "current_stream", "device",
    "device_count", "empty_cache", "get_device_name", "initial_seed", "is_available",
    "is_bf16_supported", "manual_seed", "manual_seed_all", "max_memory_allocated",
    "memory_allocated", "memory_reserved", "reset_peak_memory_stats", "set_device", "stream",
    "synchronize",
]  # fmt: skip

_DIST = "tensorplug-cuda"
_INSTALL = 'pip install "tensorplug-cuda[cuda12]" (or [cuda13] for CUDA 13)'


class CudaUnavailableError(RuntimeError):
    """CUDA cannot be used: no plugin, no CuPy, no driver or no GPU. ``reason`` says which."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def _runtime() -> Any | None:
    return _backends.runtime("cuda")


def _require(what: str) -> Any:
    """The runtime, ready to use; otherwise the error that says why ``what`` cannot run."""
    rt = _runtime()
    if rt is None:
        raise _no_plugin(what)
    reason = rt.unavailable_reason()
    if reason is not None:
        raise CudaUnavailableError(f"{what}: CUDA is not available: {reason}", reason=reason)
    return rt


def _no_plugin(what: str) -> Exception:
    from . import plugins

    status = {i.name: i for i in plugins.list()}.get("cuda")
    if status is None:
        why = f"which is not installed: {_INSTALL}"
    elif status.status == "disabled":
        why = f"which is installed but not loaded ({status.reason}): remove it from that setting"
    elif status.status == "failed":
        why = f"which failed to load ({status.error}); run `tensorplug plugins`"
    else:
        why = "which registered no CUDA runtime; reinstall it"
    return MissingPluginError(f"{what} needs the {_DIST} plugin, {why}", distribution=_DIST)


def _index(dev: Any, what: str, rt: Any) -> int:
    """A device argument (None: the current device; an int; "cuda:1"; a tp.device) as an
    index of a visible device, with PyTorch's error for another device type."""
    if dev is None or (isinstance(dev, int) and not isinstance(dev, bool) and dev == -1):
        return int(rt.current_device())
    if isinstance(dev, bool) or not isinstance(dev, int | str | _Device):
        raise TypeError(
            f"{what}: expected a device index, a device string such as 'cuda:0' or a "
            f"tensorplug.device, got {type(dev).__name__}"
        )
    if isinstance(dev, int):
        index = dev
    else:
        d = _Device(dev)
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        index = d.index if d.index is not None else int(rt.current_device())
    count = int(rt.device_count())
    if not 0 <= index < count:
        raise RuntimeError(
            f"{what}: invalid CUDA device index {index}: {count} CUDA device(s) are visible; "
            "check the index and CUDA_VISIBLE_DEVICES"
        )
    return index


# --- devices --------------------------------------------------------------------------------


def is_available() -> bool:
    """Whether CUDA tensors can be made: the plugin, CuPy, a driver and a GPU are there."""
    rt = _runtime()
    return rt is not None and rt.unavailable_reason() is None


def device_count() -> int:
    """The number of visible CUDA devices (0 without the plugin, CuPy or a driver)."""
    rt = _runtime()
    if rt is None or rt.unavailable_reason() is not None:
        return 0
    return int(rt.device_count())


def current_device() -> int:
    """The index of the current device: the one ``device="cuda"`` means."""
    return int(_require("tp.cuda.current_device()").current_device())


def set_device(device: Any) -> None:
    """Make ``device`` (an index, ``"cuda:1"`` or a tp.device) the current device."""
    rt = _require("tp.cuda.set_device()")
    rt.set_device(_index(device, "tp.cuda.set_device()", rt))


def get_device_name(device: Any = None) -> str:
    rt = _require("tp.cuda.get_device_name()")
    return str(rt.get_device_name(_index(device, "tp.cuda.get_device_name()", rt)))


def synchronize(device: Any = None) -> None:
    """Wait for every kernel queued on ``device`` (default: the current one) to finish."""
    rt = _require("tp.cuda.synchronize()")
    rt.synchronize(_index(device, "tp.cuda.synchronize()", rt))


def is_bf16_supported() -> bool:
    """False: the CUDA backend has no bfloat16 (CuPy has none; see docs/cuda.md)."""
    return False


class device:
    """``with tp.cuda.device(1):`` makes cuda:1 current inside the block and restores the
    previous device after it. ``None`` or ``-1`` changes nothing, as in PyTorch."""

    def __init__(self, device: Any) -> None:
        self._target = device
        self._previous: int | None = None

    def __enter__(self) -> None:
        if self._target is None or self._target == -1:
            return
        rt = _require("tp.cuda.device()")
        index = _index(self._target, "tp.cuda.device()", rt)
        previous = int(rt.current_device())
        if index != previous:
            rt.set_device(index)
            self._previous = previous

    def __exit__(
        self, tp: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._previous is not None:
            rt = _require("tp.cuda.device()")
            rt.set_device(self._previous)
            self._previous = None


# --- streams and events ---------------------------------------------------------------------

if TYPE_CHECKING:
    Stream: Any
    Event: Any


class _NoStream:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _require("tp.cuda.Stream()")
        raise AssertionError("unreachable: the runtime provides Stream")  # pragma: no cover


class _NoEvent:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _require("tp.cuda.Event()")
        raise AssertionError("unreachable: the runtime provides Event")  # pragma: no cover


def __getattr__(name: str) -> Any:
    # Stream and Event are the runtime's classes (PyTorch's methods, over CuPy's streams);
    # without a runtime, classes whose construction says why CUDA cannot be used.
    if name in ("Stream", "Event"):
        rt = _runtime()
        if rt is None:
            return _NoStream if name == "Stream" else _NoEvent
        return getattr(rt, name)
    raise AttributeError(f"module 'tensorplug.cuda' has no attribute '{name}'")


def current_stream(device: Any = None) -> Any:
    """The stream new kernels on ``device`` are queued on."""
    rt = _require("tp.cuda.current_stream()")
    return rt.current_stream(_index(device, "tp.cuda.current_stream()", rt))


@contextlib.contextmanager
def stream(s: Any) -> Iterator[None]:
    """``with tp.cuda.stream(s):`` queues the block's kernels on ``s`` (on its device);
    ``None`` changes nothing, as in PyTorch."""
    if s is None:
        yield
        return
    with device(s.device), s:
        yield


# --- memory (CuPy's memory pool) ------------------------------------------------------------


def _memory(what: str, device: Any, default: int) -> int:
    rt = _runtime()
    if rt is None or rt.unavailable_reason() is not None:
        return default  # as PyTorch without CUDA
    return int(getattr(rt, what)(_index(device, f"tp.cuda.{what}()", rt)))


def memory_allocated(device: Any = None) -> int:
    """Bytes held by tensors on ``device`` now (0 when CUDA is not available)."""
    return _memory("memory_allocated", device, 0)


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated` since the start or the last
    :func:`reset_peak_memory_stats`."""
    return _memory("max_memory_allocated", device, 0)


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds on ``device``, in use or cached."""
    return _memory("memory_reserved", device, 0)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start :func:`max_memory_allocated` over from the memory allocated now."""
    rt = _require("tp.cuda.reset_peak_memory_stats()")
    rt.reset_peak_memory_stats(_index(device, "tp.cuda.reset_peak_memory_stats()", rt))


def empty_cache() -> None:
    """Give the cached, unused blocks back to the driver (nothing to do without CUDA)."""
    rt = _runtime()
    if rt is not None and rt.unavailable_reason() is None:
        rt.empty_cache()


# --- seeds ----------------------------------------------------------------------------------


def manual_seed(seed: int) -> None:
    """Reseed the default CUDA generator (every device; safe without CUDA, as in PyTorch)."""
    _random.default_generator("cuda").manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """The same as :func:`manual_seed`: the default CUDA generator serves every device."""
    _random.default_generator("cuda").manual_seed(seed)


def initial_seed() -> int:
    """The seed the default CUDA generator started from."""
    return _random.default_generator("cuda").initial_seed()
