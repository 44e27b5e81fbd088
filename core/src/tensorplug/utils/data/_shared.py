"""How a worker process hands its batches to the main process (internal).

Note [Tensors through shared memory]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A batch travels as one pickle. Plain pickling copies each tensor's bytes three times (into the
pickle, through the pipe, out of the pickle). Here a CPU tensor of at least
:data:`MIN_BYTES` bytes is written once into a fresh file of the shared-memory file system
(``/dev/shm``, named ``<prefix><worker>_<counter>``) and only its name, shape and dtype go into the
pickle. The main process maps the file, builds the tensor over the mapping without a copy
(the storage backend's ``from_host``) and unlinks the name at once: the memory lives as long as
the tensor (the mapping's last reference), and no name outlives the hand-over. The loader
unlinks the names of batches never received (a loader shut down early) by their prefix.

Smaller tensors, tensors of other devices and tensors that require grad are pickled as usual
(for small tensors the two system calls cost more than the copy). Without ``/dev/shm`` (not
Linux) every tensor is pickled as usual.
"""

from __future__ import annotations

import io
import itertools
import mmap
import os
import pickle
from typing import Any

from ... import _backends
from ...tensor import Tensor

__all__ = ["MIN_BYTES", "SHM_DIR", "cleanup", "dumps", "loads", "shm_available"]

SHM_DIR = "/dev/shm"
MIN_BYTES = 16 * 1024  # below this, pickling the bytes is cheaper than a file


def shm_available() -> bool:
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, prefix: str, counter: itertools.count[int]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._prefix = prefix
        self._counter = counter

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is not Tensor or obj.device.type != "cpu" or obj.requires_grad:
            return NotImplemented
        host = _backends.for_device_type("cpu").to_host(obj._data)
        nbytes = host.nbytes
        if nbytes < MIN_BYTES:
            return NotImplemented
        name = f"{self._prefix}{next(self._counter)}"
        path = os.path.join(SHM_DIR, name)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, nbytes)
            with mmap.mmap(fd, nbytes) as mm:
                import numpy

                dst = numpy.ndarray(host.shape, dtype=host.dtype, buffer=mm)
                numpy.copyto(dst, host)
                del dst
        finally:
            os.close(fd)
        return _rebuild, (name, nbytes, tuple(host.shape), host.dtype)


def dumps(obj: Any, prefix: str | None, counter: itertools.count[int]) -> bytes:
    """``obj`` pickled, its large CPU tensors in shared memory under names ``prefix...``
    (plain pickling when ``prefix`` is None)."""
    if prefix is None:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    buf = io.BytesIO()
    _Pickler(buf, prefix, counter).dump(obj)
    return buf.getvalue()


def loads(data: bytes) -> Any:
    return pickle.loads(data)


def _rebuild(name: str, nbytes: int, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """The tensor a worker left in shared memory under ``name``, without a copy; the name is
    unlinked (Note [Tensors through shared memory])."""
    import numpy

    path = os.path.join(SHM_DIR, name)
    fd = os.open(path, os.O_RDWR)
    try:
        mm = mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)
        os.unlink(path)
    host = numpy.ndarray(shape, dtype=dtype, buffer=mm)
    t: Tensor = _backends.for_device_type("cpu").from_host(host, "cpu")
    return t


def cleanup(prefix: str) -> None:
    """Unlink every shared-memory name left under ``prefix`` (batches never received)."""
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
