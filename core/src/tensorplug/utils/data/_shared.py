"""How a worker process hands its batches to the main process (internal).

Note [Tensors through shared memory]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A batch travels as one pickle. Plain pickling copies each tensor's bytes three times (into the
pickle, through the pipe, out of the pickle). Here a CPU tensor of at least
:data:`MIN_BYTES` bytes is written once (``pwrite``) into a file of the shared-memory file
system (``/dev/shm``, named ``<prefix><worker>_<counter>``) and only its name, shape and dtype
go into the pickle. The main process maps the file (``MAP_POPULATE``: the pages in one system
call rather than one fault each) and builds the tensor over the mapping without a copy (the
storage backend's ``from_host``).

The files are recycled: when the last reference to a mapping goes (the tensor and every view
of it), a finalizer queues its name, the loader's iterator hands the names back to the worker
that wrote them, and the worker writes its next batch of the same size into one of them. Fresh
shared memory costs a page fault per page on first write, which dominates the hand-over on
machines where faults are slow (a sandboxed kernel: 5 ms for 3 MiB, against 0.6 ms into a
recycled file). A worker never writes a file the main process still maps. The files stay
until the iterator shuts down, which unlinks every name under its prefix (the mappings still
alive keep their memory until their tensors go).

Smaller tensors (under 256 KiB), tensors of other devices and tensors that require grad are
pickled as usual: for small tensors the system calls (open, write, map, close, unmap, the name
handed back) cost more than the copies (bench/data.py: batches of 32 KiB took 1.2x the CPU
time through shared memory on a sandboxed kernel, where system calls are slow). Without ``/dev/shm`` (not Linux)
every tensor is pickled as usual.
"""

from __future__ import annotations

import collections
import io
import itertools
import mmap
import os
import pickle
import weakref
from typing import Any

from ... import _backends
from ...tensor import Tensor

__all__ = [
    "MIN_BYTES", "SHM_DIR", "Freed", "WorkerPool", "cleanup", "dumps", "loads", "register",
    "shm_available", "unlink", "unregister",
]  # fmt: skip

SHM_DIR = "/dev/shm"
MIN_BYTES = 256 * 1024  # below this, pickling the bytes costs less than the system calls
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)


def shm_available() -> bool:
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


class Freed:
    """A task for a worker: these files of yours are no longer mapped; write into them."""

    def __init__(self, names: list[str]) -> None:
        self.names = names


class WorkerPool:
    """A worker's shared-memory files: the free ones by size, and the counter for new names."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.counter = itertools.count()
        self.free: dict[int, list[str]] = collections.defaultdict(list)

    def give_back(self, names: list[str]) -> None:
        for name in names:
            try:
                size = os.stat(os.path.join(SHM_DIR, name)).st_size
            except FileNotFoundError:  # the loader shut down meanwhile
                continue
            self.free[size].append(name)

    def write(self, host: Any) -> str:
        """``host``'s bytes in a free file of their size, or a new one; returns its name."""
        nbytes = host.nbytes
        free = self.free.get(nbytes)
        fd = -1
        while free and fd < 0:
            name = free.pop()
            try:
                fd = os.open(os.path.join(SHM_DIR, name), os.O_RDWR)
            except FileNotFoundError:  # unlinked meanwhile (the loader shutting down)
                pass
        if fd < 0:
            name = f"{self.prefix}{next(self.counter)}"
            fd = os.open(os.path.join(SHM_DIR, name), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            import numpy

            view = memoryview(numpy.ascontiguousarray(host).reshape(-1).view(numpy.uint8).data)
            done = 0
            while done < nbytes:
                done += os.pwrite(fd, view[done:], done)
        finally:
            os.close(fd)
        return name


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, pool: WorkerPool) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._pool = pool

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is not Tensor or obj.device.type != "cpu" or obj.requires_grad:
            return NotImplemented
        host = _backends.for_device_type("cpu").to_host(obj._data)
        if host.nbytes < MIN_BYTES:
            return NotImplemented
        name = self._pool.write(host)
        return _rebuild, (name, host.nbytes, tuple(host.shape), host.dtype)


def dumps(obj: Any, pool: WorkerPool | None) -> bytes:
    """``obj`` pickled, its large CPU tensors in the shared-memory files of ``pool`` (plain
    pickling when ``pool`` is None)."""
    if pool is None:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    buf = io.BytesIO()
    _Pickler(buf, pool).dump(obj)
    return buf.getvalue()


def loads(data: bytes) -> Any:
    return pickle.loads(data)


# prefix of a live loader iterator -> the names whose mappings went (its finalizers append)
_returns: dict[str, collections.deque[str]] = {}


def register(prefix: str) -> collections.deque[str]:
    """The queue of freed names of the iterator whose files start with ``prefix``."""
    q: collections.deque[str] = collections.deque()
    _returns[prefix] = q
    return q


def unregister(prefix: str) -> None:
    _returns.pop(prefix, None)


class _Mapping(mmap.mmap):
    """A shared-memory mapping (a subclass: mmap itself takes no weak references)."""


def unlink(name: str) -> None:
    """Unlink the shared-memory file ``name`` (gone already is fine)."""
    try:
        os.unlink(os.path.join(SHM_DIR, name))
    except FileNotFoundError:
        pass


def _returned(name: str) -> None:
    """A mapping went: give its file back to the iterator, or unlink it if there is none."""
    for prefix, q in list(_returns.items()):
        if name.startswith(prefix):
            q.append(name)  # atomic: safe in a finalizer, whatever thread runs it
            return
    unlink(name)


def _rebuild(name: str, nbytes: int, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """The tensor a worker wrote to shared memory under ``name``, without a copy (Note
    [Tensors through shared memory])."""
    import numpy

    fd = os.open(os.path.join(SHM_DIR, name), os.O_RDWR)
    try:
        mm = _Mapping(fd, nbytes, flags=mmap.MAP_SHARED | _POPULATE)
    finally:
        os.close(fd)
    weakref.finalize(mm, _returned, name)
    host = numpy.ndarray(shape, dtype=dtype, buffer=mm)
    t: Tensor = _backends.for_device_type("cpu").from_host(host, "cpu")
    return t


def cleanup(prefix: str) -> None:
    """Unlink every shared-memory name under ``prefix``."""
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(SHM_DIR, name))
            except FileNotFoundError:
                pass
