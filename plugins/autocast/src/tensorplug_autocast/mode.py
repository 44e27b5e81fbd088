"""Autocast regions (``tp.autocast``) and the per-thread state the policy kernels read.

Note [Autocast state]
~~~~~~~~~~~~~~~~~~~~~
Whether autocast is on for a device type *is* whether this thread's dispatch state excludes
the ``Autocast<B>`` key of that device type's backend. Every thread starts with all of them
excluded (Note [Autocast bits] in keys.py); a region un-excludes its key (``enabled=False``
excludes it) and puts the bit back on exit, on an exception too. So a call outside any region
never sees an ``Autocast<B>`` key and pays nothing, and a new thread starts with autocast off.

The rest of the state is per thread, as in PyTorch: each device type's autocast dtype, whether
the cast cache is on, how deeply regions are nested, the cache itself (Note [Cast cache] in
casting.py), and a stack of what each open region replaced. A stack rather than attributes of
the region object, so that one ``autocast`` object can be open twice (a decorated function that
recurses) or in two threads at once.

Entering and leaving is on the hot path of code that wraps small steps in a region; both are a
few attribute reads and writes: the thread's dispatch masks are saved and restored directly
(``tp.dispatch.local_state.masks``, the documented fast path) rather than through a guard.

Usage::

    with tp.autocast("cpu"):                  # bfloat16 on CPU, float16 on CUDA by default
        y = model(x)                          # mm/linear in bfloat16, losses in float32
    @tp.autocast("cpu", dtype=tp.float16)
    def forward(x): ...
    tp.is_autocast_enabled("cpu"), tp.get_autocast_dtype("cpu")
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import tensorplug as tp
from tensorplug.dispatch import local_state
from tensorplug.dtypes import dtype
from tensorplug.keys import DispatchKey

__all__ = [
    "DeviceInfo",
    "ThreadState",
    "autocast",
    "clear_autocast_cache",
    "device_info",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "refresh",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "state",
]

F = TypeVar("F", bound=Callable[..., Any])


# --- device types ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceInfo:
    """What autocast knows about one device type: its backend, ``Autocast<B>`` key and dtypes."""

    device_type: str
    backend: DispatchKey
    key: DispatchKey  # Autocast<B>
    mask: int  # the key's bit
    default: dtype | None  # Note [Autocast dtypes of a backend] in keys.py
    supported: tuple[dtype, ...]

    def check_supported(self) -> None:
        if self.default is None:
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device_type}': its "
                f"backend '{self.backend.name}' (registered by {self.backend.owner}) declares no "
                "autocast dtypes. A backend declares them when it creates its key: "
                "keys.register_backend(name, device_type, autocast_dtype=..., "
                "autocast_dtypes=(...))."
            )


_devices: dict[str, DeviceInfo] = {}


def device_info(device_type: str) -> DeviceInfo:
    """The :class:`DeviceInfo` of ``device_type``; an unknown device type raises."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    info = _devices.get(device_type)
    if info is not None:
        return info
    backend = tp.keys.backend_for_device_type(device_type)
    if backend is None:
        known = ", ".join(sorted(tp.keys.device_types()))
        raise RuntimeError(
            f"autocast: unknown device type '{device_type}'; the known device types are "
            f"{known}. A backend plugin adds its device type (`tensorplug plugins` lists what "
            "is installed)."
        )
    key = tp.keys.per_backend("Autocast", backend)
    info = DeviceInfo(
        device_type, backend, key, key.mask, backend.autocast_dtype, backend.autocast_dtypes
    )
    _devices[device_type] = info
    return info


def refresh() -> None:
    """The dispatch keys changed (a backend added or removed): forget what was derived."""
    _devices.clear()


# --- per-thread state -----------------------------------------------------------------------


class ThreadState:
    """One thread's autocast state besides the dispatch masks (Note [Autocast state])."""

    __slots__ = ("dtypes", "cache_enabled", "nesting", "saved", "cache")

    def __init__(self) -> None:
        self.dtypes: dict[str, dtype] = {}  # device type -> dtype set in this thread
        self.cache_enabled = True
        self.nesting = 0  # open regions, enabled or not
        # per open region: (its key's bit as it was, the device's dtype before, cache_enabled)
        self.saved: list[tuple[int, dtype | None, bool]] = []
        self.cache: dict[int, Any] = {}  # Note [Cast cache] in casting.py


class _Local(threading.local):
    def __init__(self) -> None:
        self.state = ThreadState()


_local = _Local()


def state() -> ThreadState:
    """This thread's :class:`ThreadState` (one thread-local read)."""
    return _local.state


def dtype_for(st: ThreadState, info: DeviceInfo) -> dtype:
    """The autocast dtype of ``info``'s device type in this thread."""
    d = st.dtypes.get(info.device_type)
    if d is None:
        info.check_supported()
        assert info.default is not None
        d = info.default
    return d


# --- the public functions -------------------------------------------------------------------


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` names a backend that declares autocast dtypes."""
    if not isinstance(device_type, str) or tp.keys.backend_for_device_type(device_type) is None:
        return False
    return device_info(device_type).default is not None


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread (PyTorch's default: cuda)."""
    return bool(local_state.masks.nexc & device_info(device_type).mask)


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` in this thread, outside any region's
    bookkeeping (a region restores what it found when it exits)."""
    info = device_info(device_type)
    info.check_supported()
    m = local_state.masks
    m.nexc = (m.nexc | info.mask) if enabled else (m.nexc & ~info.mask)


def get_autocast_dtype(device_type: str) -> dtype:
    """The lower precision dtype autocast uses for ``device_type`` in this thread."""
    return dtype_for(_local.state, device_info(device_type))


def set_autocast_dtype(device_type: str, dtype_: dtype) -> None:
    """Set the autocast dtype of ``device_type`` for this thread (a region sets and restores it).

    As in PyTorch, any dtype is accepted here; a region that would use an unsupported one warns
    and is disabled.
    """
    info = device_info(device_type)
    info.check_supported()
    if not isinstance(dtype_, dtype):
        raise TypeError(
            f"set_autocast_dtype(): argument 'dtype' must be tensorplug.dtype, not "
            f"{type(dtype_).__name__}"
        )
    _local.state.dtypes[device_type] = dtype_


def is_autocast_cache_enabled() -> bool:
    return _local.state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _local.state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop this thread's cast cache (the outermost region does it on exit)."""
    _local.state.cache.clear()


# --- the region -----------------------------------------------------------------------------


def _cuda_available() -> bool:
    return bool(tp.cuda.is_available())  # False without tensorplug-cuda, or without a GPU


class autocast:  # noqa: N801 - PyTorch's name
    """A region (context manager or decorator) in which ops run in an op-specific dtype.

    ``device_type`` names the backend (``"cpu"``, ``"cuda"``, a plugin's); ``dtype`` defaults to
    :func:`get_autocast_dtype` (bfloat16 on cpu, float16 on cuda); ``enabled=False`` turns
    autocast off inside; ``cache_enabled`` (default :func:`is_autocast_cache_enabled`) keeps
    one cast per float32 leaf that requires grad for the outermost region.
    A dtype the device does not support warns and disables the region, as PyTorch does.
    """

    def __init__(
        self,
        device_type: str,
        dtype: dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        info = device_info(device_type)
        info.check_supported()
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        )
        if enabled:
            name = device_type.upper()
            if device_type == "cuda" and not _cuda_available():
                warnings.warn(
                    "CUDA is not available (tensorplug-cuda is not loaded, or it finds no GPU). "
                    "Disabling autocast.",
                    stacklevel=2,
                )
                enabled = False
            elif (
                device_type == "cuda"
                and self.fast_dtype is tp.bfloat16
                and not tp.cuda.is_bf16_supported()
            ):
                raise RuntimeError(
                    "Current CUDA Device does not support bfloat16. Please switch dtype to float16."
                )
            elif self.fast_dtype not in info.supported:
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of "
                    + ", ".join(map(str, info.supported))
                    + " currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = bool(enabled)
        self._mask = info.mask

    def __enter__(self) -> autocast:
        st = _local.state
        m = local_state.masks
        mask = self._mask
        old = m.nexc
        st.saved.append((old & mask, st.dtypes.get(self.device), st.cache_enabled))
        m.nexc = (old | mask) if self._enabled else (old & ~mask)
        st.dtypes[self.device] = self.fast_dtype
        st.nesting += 1
        st.cache_enabled = self._cache_enabled
        return self

    def __exit__(self, *exc: object) -> None:
        st = _local.state
        bit, old_dtype, cache_enabled = st.saved.pop()
        st.nesting -= 1
        if not st.nesting and st.cache:
            st.cache.clear()  # the outermost region: drop the casts it kept
        m = local_state.masks
        m.nexc = (m.nexc & ~self._mask) | bit
        if old_dtype is None:
            del st.dtypes[self.device]
        else:
            st.dtypes[self.device] = old_dtype
        st.cache_enabled = cache_enabled

    def __call__(self, func: F) -> F:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with tp.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorate_autocast  # type: ignore[return-value]

    def __repr__(self) -> str:
        state = "enabled" if self._enabled else "disabled"
        return f"tp.autocast({self.device!r}, dtype={self.fast_dtype}, {state})"
