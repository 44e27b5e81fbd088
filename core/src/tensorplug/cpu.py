"""``tensorplug.cpu``: the CPU's device module (``torch.cpu``), and the generic ``Stream`` and
``Event`` (``torch.Stream``, ``torch.Event``) with PyTorch's semantics for the CPU.

The CPU runs every operation in order when it is called, so it has one stream (id 0) that
is always idle, and events that are always complete: ``query()`` is True and
``synchronize()`` returns at once. As in PyTorch, recording an event on a CPU stream raises
(``cpu backend doesn't support events``), and ``elapsed_time`` needs two events made with
``enable_timing=True``. ``tp.Stream("cuda")`` and ``tp.Event(device="cuda")`` are not made here:
``tp.cuda.Stream`` / ``tp.cuda.Event`` are the CUDA plugin's.

Usage::

    s = tp.Stream()                        # tensorplug.Stream device_type=cpu, ...
    with tp.cpu.stream(tp.cpu.current_stream()):
        ...
    tp.get_device_module("cpu") is tp.cpu
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from .device import canonical as _canonical

__all__ = [
    "Event",
    "Stream",
    "current_device",
    "current_stream",
    "device_count",
    "get_device_module",
    "is_available",
    "set_device",
    "stream",
    "synchronize",
]


def _cpu_only(device: Any, what: str) -> str:
    d = _canonical(device if device is not None else "cpu")
    if d.type != "cpu":
        raise RuntimeError(
            f"tensorplug.{what}: only the cpu device is built in (got '{d.type}'); use the "
            f"device module of its plugin (tp.get_device_module('{d.type}').{what})"
        )
    return d.type


def _no_events() -> RuntimeError:
    return RuntimeError("cpu backend doesn't support events.")


class Stream:
    """A stream of the CPU (``torch.Stream("cpu")``): the one in-order stream, always idle."""

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        _cpu_only(device, "Stream")
        self.device_index = -1
        self.stream_id = 0
        self.priority = priority

    @property
    def device(self) -> Any:
        return _canonical("cpu")

    @property
    def device_type(self) -> str:
        return "cpu"

    def query(self) -> bool:
        """True: all work of a CPU stream is done when its call returns."""
        return True

    def synchronize(self) -> None:
        """Nothing to wait for on the CPU."""

    def wait_event(self, event: Event) -> None:
        """Nothing to wait for: a CPU event is always complete."""

    def wait_stream(self, stream: Stream) -> None:
        raise _no_events()

    def record_event(self, event: Event | None = None) -> Event:
        raise _no_events()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("cpu", self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (
            f"tensorplug.Stream device_type=cpu, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class Event:
    """An event of the CPU (``torch.Event("cpu")``): always complete."""

    def __init__(
        self,
        device: Any = None,
        *,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
    ) -> None:
        _cpu_only(device, "Event")
        self.device_index = -1
        self.event_id = 0
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess

    @property
    def device(self) -> Any:
        return _canonical("cpu")

    def record(self, stream: Stream | None = None) -> None:
        raise _no_events()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing to wait for on the CPU."""

    def wait(self, stream: Stream | None = None) -> None:
        """Nothing to wait for on the CPU."""

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise _no_events()  # never recorded: recording raises on the CPU

    def __repr__(self) -> str:
        flag = 1 if self.enable_timing else 0
        return (
            f"tensorplug.Event device_type=cpu, device_index={self.device_index}, "
            f"event_flag={flag}, event_id={self.event_id}"
        )


_current = Stream()


def current_stream(device: Any = None) -> Stream:
    """The CPU's stream."""
    return _current


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    """Run the block on ``s``: on the CPU, the one stream (nothing changes)."""
    yield


def is_available() -> bool:
    return True


def device_count() -> int:
    """1, as ``torch.cpu.device_count()``."""
    return 1


def current_device() -> str:
    """``"cpu"``, as ``torch.cpu.current_device()``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Only the cpu device is there: nothing to set."""
    _cpu_only(device, "cpu.set_device")


def synchronize(device: Any = None) -> None:
    """Nothing to wait for on the CPU."""
    _cpu_only(device, "cpu.synchronize")


def get_device_module(device: Any = None) -> Any:
    """The module of a device type (``torch.get_device_module``): ``tensorplug.cpu``,
    ``tensorplug.cuda``; the default device's when None."""
    from .device import get_default_device

    d = get_default_device() if device is None else _canonical(device)
    module = sys.modules.get(f"tensorplug.{d.type}")
    if d.type in ("cpu", "cuda"):
        import importlib

        return importlib.import_module(f"tensorplug.{d.type}")
    if module is None:
        raise RuntimeError(
            f"Device '{d.type}' does not have a corresponding module registered as "
            f"'tensorplug.{d.type}'."
        )
    return module
