"""The device runtime behind ``tp.cuda``: devices, streams, events and memory over CuPy.

``tensorplug.cuda`` (core) checks device arguments and answers when CUDA is unavailable; it
calls this object, registered with ``registry.add_device_runtime``, with device indices.

Note [Peak memory]
~~~~~~~~~~~~~~~~~~
CuPy's memory pool reports the bytes in use (``used_bytes``) but keeps no peak, which
``max_memory_allocated`` needs. Peaks only rise when memory is allocated, so the runtime puts a
small allocator around CuPy's current one (its default memory pool) that records the bytes in
use after each allocation, per device. It is installed when CUDA is first used, and it is
process-wide: CuPy arrays made outside tensorplug count too, as they share the pool.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

import tensorplug as tp

from . import loader

__all__ = ["CudaEvent", "CudaRuntime", "CudaStream"]


def _index(device: Any) -> int:
    """A device argument (None, an index, "cuda:1", a tp.device) as a device index."""
    if device is None:
        return tp.cuda.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = tp.device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return tp.cuda.current_device() if d.index is None else int(d.index)


class CudaStream:
    """A CUDA stream (``torch.cuda.Stream``): kernels queued on it run in order.

    ``with s:`` (or ``with tp.cuda.stream(s):``) queues the block's kernels on it.
    """

    def __init__(self, device: Any = None, priority: int = 0) -> None:
        cp = loader.cupy()
        index = _index(device)
        with cp.cuda.Device(index):
            self.cupy_stream = cp.cuda.Stream(non_blocking=False, priority=priority)
        self.device = tp.device("cuda", index)
        self.priority = priority

    @classmethod
    def _wrap(cls, cupy_stream: Any, index: int) -> CudaStream:
        s = object.__new__(cls)
        s.cupy_stream = cupy_stream
        s.device = tp.device("cuda", index)
        s.priority = 0
        return s

    def synchronize(self) -> None:
        """Wait until every kernel queued on this stream has finished."""
        self.cupy_stream.synchronize()

    def query(self) -> bool:
        """Whether every kernel queued on this stream has finished."""
        return bool(self.cupy_stream.done)

    def wait_event(self, event: CudaEvent) -> None:
        """Make later work on this stream wait for ``event``."""
        self.cupy_stream.wait_event(event.cupy_event)

    def wait_stream(self, stream: CudaStream) -> None:
        """Make later work on this stream wait for what ``stream`` has queued so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: CudaEvent | None = None) -> CudaEvent:
        """Record ``event`` (a new one if None) on this stream; returns it."""
        e = event if event is not None else CudaEvent()
        e.record(self)
        return e

    @property
    def cuda_stream(self) -> int:
        """The raw ``cudaStream_t`` handle."""
        return int(self.cupy_stream.ptr)

    def __enter__(self) -> CudaStream:
        self.cupy_stream.__enter__()
        return self

    def __exit__(
        self, tp_: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cupy_stream.__exit__(tp_, e, tb)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CudaStream):
            return NotImplemented
        return bool(self.cupy_stream.ptr == other.cupy_stream.ptr) and self.device == other.device

    def __hash__(self) -> int:
        return hash((self.cupy_stream.ptr, self.device))

    def __repr__(self) -> str:
        return f"<tensorplug.cuda.Stream device={self.device} cuda_stream={hex(self.cuda_stream)}>"


class CudaEvent:
    """A CUDA event (``torch.cuda.Event``): a marker in a stream, to wait on or to time."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        cp = loader.cupy()
        self._cp = cp
        self.cupy_event = cp.cuda.Event(
            block=blocking, disable_timing=not enable_timing, interprocess=interprocess
        )
        self.enable_timing = enable_timing
        self._recorded = False

    def record(self, stream: CudaStream | None = None) -> None:
        """Record the event on ``stream`` (default: the current stream)."""
        s = stream if stream is not None else tp.cuda.current_stream()
        self.cupy_event.record(s.cupy_stream)
        self._recorded = True

    def wait(self, stream: CudaStream | None = None) -> None:
        """Make later work on ``stream`` (default: the current one) wait for this event."""
        s = stream if stream is not None else tp.cuda.current_stream()
        s.wait_event(self)

    def query(self) -> bool:
        """Whether the work before the event has finished."""
        return bool(self.cupy_event.done)

    def synchronize(self) -> None:
        """Wait until the work before the event has finished."""
        self.cupy_event.synchronize()

    def elapsed_time(self, end_event: CudaEvent) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError(
                "Both events must be created with argument 'enable_timing=True' to measure "
                "the elapsed time: tp.cuda.Event(enable_timing=True)"
            )
        if not (self._recorded and end_event._recorded):
            raise RuntimeError(
                "Both events must be recorded before calculating elapsed time: call "
                "event.record() on each first"
            )
        return float(self._cp.cuda.get_elapsed_time(self.cupy_event, end_event.cupy_event))

    def __repr__(self) -> str:
        return f"<tensorplug.cuda.Event enable_timing={self.enable_timing}>"


class CudaRuntime:
    """What ``tp.cuda`` asks (``registry.add_device_runtime``), answered by CuPy."""

    device_type = "cuda"
    Stream = CudaStream
    Event = CudaEvent

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._peaks: dict[int, int] = {}  # device index -> peak bytes in use (Note [Peak memory])
        self._tracked: Any = None  # the CuPy module whose allocator records peaks

    def unavailable_reason(self) -> str | None:
        return loader.reason()

    def cupy(self) -> Any:
        """CuPy with peak tracking installed (Note [Peak memory])."""
        cp = loader.cupy()
        if self._tracked is not cp:
            self._track_peaks(cp)
        return cp

    def device_count(self) -> int:
        return int(self.cupy().cuda.runtime.getDeviceCount())

    def current_device(self) -> int:
        return int(self.cupy().cuda.runtime.getDevice())

    def set_device(self, index: int) -> None:
        self.cupy().cuda.runtime.setDevice(index)

    def synchronize(self, index: int) -> None:
        cp = self.cupy()
        cp.cuda.Device(index).synchronize()

    def get_device_name(self, index: int) -> str:
        name = self.cupy().cuda.runtime.getDeviceProperties(index)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def current_stream(self, index: int) -> CudaStream:
        cp = self.cupy()
        with cp.cuda.Device(index):
            return CudaStream._wrap(cp.cuda.get_current_stream(), index)

    # --- memory --------------------------------------------------------------------------

    def memory_allocated(self, index: int) -> int:
        cp = self.cupy()
        with cp.cuda.Device(index):
            return int(cp.get_default_memory_pool().used_bytes())

    def max_memory_allocated(self, index: int) -> int:
        return max(self._peaks.get(index, 0), self.memory_allocated(index))

    def memory_reserved(self, index: int) -> int:
        cp = self.cupy()
        with cp.cuda.Device(index):
            return int(cp.get_default_memory_pool().total_bytes())

    def reset_peak_memory_stats(self, index: int) -> None:
        self._peaks[index] = self.memory_allocated(index)

    def empty_cache(self) -> None:
        cp = self.cupy()
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()

    def _track_peaks(self, cp: Any) -> None:
        with self._lock:
            if self._tracked is cp:
                return
            self._peaks.clear()
            allocate = cp.cuda.get_allocator()
            used_bytes = cp.get_default_memory_pool().used_bytes
            peaks = self._peaks

            def allocate_and_track(size: int) -> Any:
                mem = allocate(size)
                used = used_bytes()  # of the current device, where mem was allocated
                device = mem.device_id
                if used > peaks.get(device, 0):
                    peaks[device] = used
                return mem

            cp.cuda.set_allocator(allocate_and_track)
            self._tracked = cp
