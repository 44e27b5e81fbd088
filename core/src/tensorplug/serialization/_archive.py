"""``tp.save`` and ``tp.load``: the checked zip archive (internal; Note [Checkpoint format] in
serialization/__init__.py)."""

from __future__ import annotations

import io
import mmap as _mmap
import os
import pickle
import secrets
import struct
import sys
import zipfile
import zlib
from collections.abc import Callable
from typing import IO, Any

from .. import _backends
from .. import dtypes as _dtypes
from ..device import canonical as _canonical_device
from ..device import device as _Device
from ..tensor import Tensor
from . import _records
from ._unpickler import CheckpointError, unpickle

__all__ = ["FORMAT_VERSION", "load", "save"]

FileLike = str | os.PathLike[str] | IO[bytes]
MapLocation = (
    str | _Device | dict[str, str] | Callable[[Tensor, str], Any] | None
)  # as torch.load's

# The archive format tp.save writes; tp.load reads this one and every one before it (0: the plain
# pickle stream of tensorplug <= 0.1.2), and refuses a later one with "upgrade tensorplug".
FORMAT_VERSION = 1
_FORMAT_RECORD = ".tensorplug_format"
_ALIGN = 64  # storage records start at multiples of this, so mmap'd arrays are aligned
_ZIP_MAGIC = b"PK\x03\x04"
_TORCH_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C  # torch.save(_use_new_zipfile_serialization=False)


# --- save -----------------------------------------------------------------------------------


class _StorageOut:
    """A tensor's data as one storage record of the archive being written."""

    def __init__(self, key: str, dtype: str, device: str, numel: int) -> None:
        self.key, self.dtype, self.device, self.numel = key, dtype, device, numel


class _ArchivePickler(pickle.Pickler):
    """Pickles tensors as records over storages (``('storage', dtype, key, device, numel)``
    persistent ids); everything else as ``pickle`` does."""

    def __init__(self, f: IO[bytes]) -> None:
        super().__init__(f, protocol=4)
        self.storages: list[tuple[str, bytes]] = []
        self.roots: dict[int, _StorageOut] = {}  # id of a base -> its storage
        self.keep: list[Tensor] = []

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, Tensor):
            return NotImplemented
        t = obj
        if t._device.type == "meta":
            return _records.reduce_meta(t)
        backend = _backends.for_device_type(t._device.type)
        where = self._in_storage(t, backend)
        if where is None:  # its own storage: a C-order copy of its data
            host = backend.to_host(t._data)
            shape = tuple(int(n) for n in host.shape)
            ref = self._storage(host.tobytes(), t._dtype.name, str(t._device), int(host.size))
            where = (ref, 0, shape, _row_major(shape))
        ref, offset, shape, stride = where
        cls = type(t)
        return (
            _records.rebuild_from_storage,
            (
                ref,
                offset,
                shape,
                stride,
                bool(t.requires_grad),
                None if cls is Tensor else cls,
                _records.user_state(t),
            ),
        )

    def _storage(self, data: bytes, dtype: str, device: str, numel: int) -> _StorageOut:
        key = str(len(self.storages))
        self.storages.append((key, data))  # this machine's byte order (the "byteorder" record)
        return _StorageOut(key, dtype, device, numel)

    def _in_storage(
        self, t: Tensor, backend: Any
    ) -> tuple[_StorageOut, int, tuple[int, ...], tuple[int, ...]] | None:
        """Where ``t`` lies in the storage of its base (the root of its views), saved once for
        all of them: ``(storage, offset, shape, strides)`` in elements. None where the backend
        reports no memory layout, the base is not one C-order block, or ``t`` reaches outside
        it (a copy is saved instead)."""
        root = t._base if t._base is not None else t
        layout = getattr(backend, "memory_layout", None)
        if layout is None or root._dtype is not t._dtype or not t.numel() or not root.numel():
            return None
        rl, tl = layout(root._data), layout(t._data)
        if rl is None or tl is None or rl[2] != tl[2]:
            return None
        item = rl[2]
        root_shape = tuple(int(n) for n in root.shape)
        if any(
            n > 1 and s != want * item
            for n, s, want in zip(root_shape, rl[1], _row_major(root_shape), strict=True)
        ):
            return None
        delta, strides = tl[0] - rl[0], tl[1]
        if delta < 0 or delta % item or any(s < 0 or s % item for s in strides):
            return None
        offset, stride = delta // item, tuple(s // item for s in strides)
        shape = tuple(int(n) for n in t.shape)
        numel = int(root.numel())
        if offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) >= numel:
            return None
        known = self.roots.get(id(root))
        if known is None:
            data = backend.to_host(root._data).tobytes()
            known = self._storage(data, root._dtype.name, str(root._device), numel)
            self.roots[id(root)] = known
            self.keep.append(root)  # its id stays its own until the pickle is written
        return known, offset, shape, stride

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is _StorageOut:
            return ("storage", obj.dtype, obj.key, obj.device, obj.numel)
        return None


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides, in elements, of a C-order block of ``shape``."""
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def save(obj: Any, f: FileLike) -> None:
    """Write ``obj`` (tensors, containers of them, a ``state_dict``) to a path or a binary file
    as a checked zip archive. Writing to a path is atomic: a temporary file in the same
    directory, flushed to disk, renamed over ``f``; if anything fails, ``f`` is as it was."""
    if not isinstance(f, str | os.PathLike):
        _write(obj, f)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    # 0o666 through the umask, as open() would create the file itself
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            _write(obj, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: str) -> None:
    """The rename itself on disk (POSIX); where directories cannot be opened, nothing to do."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write(obj: Any, out: IO[bytes]) -> None:
    buf = io.BytesIO()
    pickler = _ArchivePickler(buf)
    pickler.dump(obj)  # everything is pickled before the first byte reaches ``out``
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _put(zf, "archive/data.pkl", buf.getvalue())
        _put(zf, "archive/byteorder", sys.byteorder.encode())
        _put(zf, f"archive/{_FORMAT_RECORD}", str(FORMAT_VERSION).encode())
        for key, data in pickler.storages:
            _put(zf, f"archive/data/{key}", data, align=True)


def _put(zf: zipfile.ZipFile, name: str, data: bytes, *, align: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    if align:
        assert zf.fp is not None
        start = zf.fp.tell() + 30 + len(name.encode()) + 4  # local header, name, extra header
        pad = -start % _ALIGN
        info.extra = struct.pack("<HH", 0x5054, pad) + b"\0" * pad  # "TP": padding
    zf.writestr(info, data)


# --- load -----------------------------------------------------------------------------------


def load(
    f: FileLike,
    map_location: MapLocation = None,
    *,
    weights_only: bool = True,
    mmap: bool = False,
) -> Any:
    """Read what :func:`save` wrote, or a ``torch.save`` archive (Note [Checkpoint format]).

    ``weights_only=True`` (the default) builds only tensors, containers, numbers, strings,
    dtypes, devices, ``OrderedDict`` and what ``add_safe_globals`` allowed;
    ``weights_only=False`` unpickles anything, and so runs whatever code the file names: only
    for files you trust. ``map_location`` places storages: a device (or its string), a dict
    from saved to wanted locations, or ``fn(storage, location)`` returning a tensor (or None:
    where it was saved). ``mmap=True`` maps a CPU checkpoint's storages from the file instead
    of reading them (``f`` must be a path). Corrupt files raise :class:`CheckpointError`
    naming the file and the record."""
    if isinstance(f, str | os.PathLike):
        path = os.fspath(f)
        with open(path, "rb") as src:
            return _load(src, path, map_location, weights_only, mmap)
    if mmap:
        raise ValueError("tp.load(mmap=True) needs a path, not a file object")
    name = getattr(f, "name", None)
    return _load(
        f,
        name if isinstance(name, str) else f"<{type(f).__name__}>",
        map_location,
        weights_only,
        False,
    )


def _load(
    src: IO[bytes], name: str, map_location: MapLocation, weights_only: bool, use_mmap: bool
) -> Any:
    head = src.read(4)
    src.seek(-len(head), io.SEEK_CUR)
    if head == _ZIP_MAGIC:
        return _Archive(src, name, map_location, weights_only, use_mmap).load()
    if head[:1] == b"\x80":  # a pickle stream: tensorplug <= 0.1.2, or torch's legacy
        if use_mmap:
            raise CheckpointError(
                "mmap=True needs the zip archive format; re-save it with tp.save (tensorplug "
                ">= 0.1.3)",
                file=name,
            )
        data = src.read()
        if _is_torch_legacy(data):
            raise CheckpointError(
                "this is PyTorch's legacy (pre-1.6) checkpoint format, which tp.load does not "
                "read; re-save it with torch.save(obj, path) from torch >= 1.6",
                file=name,
            )
        return _load_stream(data, name, map_location, weights_only)
    raise CheckpointError(
        f"not a checkpoint: it starts with {head!r}, neither a zip archive (tp.save, "
        "torch.save) nor a pickle stream",
        file=name,
    )


def _is_torch_legacy(data: bytes) -> bool:
    """Its header, the magic number pickled as a LONG1 (never unpickled: the file is untrusted)."""
    return data[2:14] == b"\x8a\x0a" + _TORCH_LEGACY_MAGIC.to_bytes(10, "little")


def _load_stream(data: bytes, name: str, map_location: MapLocation, weights_only: bool) -> Any:
    """A checkpoint of format 0: one pickle stream, tensors inline (``rebuild_tensor``)."""
    if not weights_only:
        obj = pickle.loads(data)  # noqa: S301 - the caller asked for it
    else:
        try:
            obj = unpickle(data, _records.CheckpointGlobals(), _no_persistent_ids)
        except CheckpointError:
            raise
        except _UNPICKLING_ERRORS as e:
            raise CheckpointError(_describe(e), file=name, record="(pickle stream)") from e
    if map_location is None:
        return obj
    return _relocate(obj, map_location)


def _no_persistent_ids(pid: Any) -> Any:
    raise pickle.UnpicklingError("a plain pickle stream holds no storage records")


def _relocate(obj: Any, map_location: MapLocation) -> Any:
    """``map_location`` applied to the tensors of a format-0 checkpoint (built where saved)."""
    seen: dict[int, Any] = {}

    def go(x: Any) -> Any:
        if id(x) in seen:
            return seen[id(x)]
        if isinstance(x, Tensor):
            out: Any = _place(x, str(x.device), map_location)
        elif type(x) in (list, tuple, set, frozenset):
            out = type(x)(go(v) for v in x)
        elif isinstance(x, dict):
            out = type(x)((k, go(v)) for k, v in x.items())
        else:
            out = x
        seen[id(x)] = out
        return out

    return go(obj)


_UNPICKLING_ERRORS = (
    pickle.UnpicklingError, EOFError, struct.error, ValueError, TypeError, KeyError, IndexError,
    AttributeError, OverflowError, RecursionError, MemoryError, UnicodeError,
)  # fmt: skip


def _describe(e: BaseException) -> str:
    if isinstance(e, pickle.UnpicklingError):
        return str(e)
    return f"the pickle is malformed ({type(e).__name__}: {e})"


def _target(location: str, map_location: MapLocation) -> _Device | None:
    """Where a storage saved at ``location`` goes; None: ask the callable."""
    if map_location is None:
        return _records.file_device(location)
    if isinstance(map_location, str | _Device):
        return _canonical_device(map_location)
    if isinstance(map_location, dict):
        if location not in map_location:
            return _records.file_device(location)
        return _canonical_device(map_location[location])
    return None


def _place(t: Tensor, location: str, map_location: MapLocation) -> Tensor:
    """``t`` (loaded on the CPU, or where saved) where ``map_location`` wants it."""
    target = _target(location, map_location)
    if target is None:
        assert callable(map_location)
        out = map_location(t, location)
        if out is None:
            target = _records.file_device(location)
        elif isinstance(out, Tensor):
            if out.dtype is not t.dtype or tuple(out.shape) != tuple(t.shape):
                raise ValueError(
                    f"tp.load: map_location returned a {out.dtype} tensor of shape "
                    f"{list(out.shape)} for a {t.dtype} storage of shape {list(t.shape)}"
                )
            return out
        else:
            target = _canonical_device(out)
    return t if t.device == target else t.to(target)


class _Archive:
    """One zip archive being read: its records, CRC-checked, and the storages loaded."""

    def __init__(
        self,
        src: IO[bytes],
        name: str,
        map_location: MapLocation,
        weights_only: bool,
        use_mmap: bool,
    ) -> None:
        self.src, self.name = src, name
        self.map_location, self.weights_only, self.use_mmap = map_location, weights_only, use_mmap
        self.storages: dict[str, _records.LoadedStorage] = {}
        self.mapped: _mmap.mmap | None = None

    def fail(self, message: str, record: str | None = None) -> CheckpointError:
        return CheckpointError(message, file=self.name, record=record)

    def load(self) -> Any:
        self.src.seek(0, io.SEEK_END)
        self.size = self.src.tell()
        self.src.seek(0)
        try:
            self.zf = zipfile.ZipFile(self.src)
            infos = self.zf.infolist()
        except Exception as e:  # zipfile raises many types for a damaged directory
            raise self.fail(f"the zip directory is damaged ({type(e).__name__}: {e})") from e
        pkl = [i for i in infos if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1]
        if len(pkl) != 1:
            raise self.fail("the archive has no single '<prefix>/data.pkl' record")
        self.prefix = pkl[0].filename[: -len("data.pkl")]
        self.records = {i.filename: i for i in infos}
        if len(self.records) != len(infos):
            raise self.fail("the archive names a record twice")
        version = self.record(_FORMAT_RECORD, optional=True)
        if version is not None:
            try:
                number = int(bytes(version).decode("ascii"))
            except (UnicodeDecodeError, ValueError):
                raise self.fail("the format record is malformed", _FORMAT_RECORD) from None
            if number > FORMAT_VERSION:
                raise self.fail(
                    f"it was written in checkpoint format {number}, by a newer tensorplug; this "
                    f"one reads formats up to {FORMAT_VERSION}: upgrade tensorplug"
                )
        order = self.record("byteorder", optional=True)
        self.byteorder = "little" if order is None else bytes(order).decode("ascii", "replace")
        if self.byteorder not in ("little", "big"):
            raise self.fail(f"unknown byte order {self.byteorder!r}", "byteorder")
        if self.use_mmap:
            self.mapped = _mmap.mmap(self.src.fileno(), 0, access=_mmap.ACCESS_COPY)
        data = self.record("data.pkl")
        assert data is not None
        if not self.weights_only:
            return _TrustedUnpickler(io.BytesIO(bytes(data)), self).load()
        try:
            return unpickle(data, _records.CheckpointGlobals(), self.persistent_load)
        except CheckpointError:
            raise
        except _UNPICKLING_ERRORS as e:
            raise self.fail(_describe(e), "data.pkl") from e

    def record(self, key: str, *, optional: bool = False) -> bytes | memoryview | None:
        """The bytes of record ``<prefix><key>``, their CRC-32 checked; under mmap, a
        copy-on-write view of the file."""
        name = self.prefix + key
        info = self.records.get(name)
        if info is None:
            if optional:
                return None
            raise self.fail("the archive has no such record", name)
        # a record no bigger than the file: a small file cannot ask for gigabytes
        limit = self.size if info.compress_type == zipfile.ZIP_STORED else 1032 * self.size
        if info.file_size > limit:
            raise self.fail(
                f"the record claims {info.file_size} bytes, more than a {self.size}-byte file "
                "holds",
                name,
            )
        try:
            if self.mapped is not None and info.compress_type == zipfile.ZIP_STORED:
                return self._mapped(info)
            return self.zf.read(info)
        except CheckpointError:
            raise
        except Exception as e:  # BadZipFile (CRC-32), zlib.error, a truncated file, ...
            raise self.fail(f"the record is damaged ({type(e).__name__}: {e})", name) from e

    def _mapped(self, info: zipfile.ZipInfo) -> memoryview:
        assert self.mapped is not None
        header = self.mapped[info.header_offset : info.header_offset + 30]
        if len(header) != 30 or header[:4] != _ZIP_MAGIC:
            raise zipfile.BadZipFile("bad local header")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        if start + info.file_size > len(self.mapped):
            raise zipfile.BadZipFile("the record runs past the end of the file")
        view = memoryview(self.mapped)[start : start + info.file_size]
        if zlib.crc32(view) != info.CRC:
            raise zipfile.BadZipFile("Bad CRC-32")
        return view

    def persistent_load(self, pid: Any) -> _records.LoadedStorage:
        """``('storage', type, key, location, numel)``: tensorplug's (a dtype name) and
        PyTorch's (a ``torch.FloatStorage``)."""
        if not (type(pid) is tuple and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r:.80}")
        _, kind, key, location, numel = pid
        if type(kind) is _records.StorageType:
            dtype = kind.dtype
        elif type(kind) is str and kind in _records.DTYPES:
            dtype = _records.DTYPES[kind]
        else:
            raise pickle.UnpicklingError(f"a storage of unknown type {kind!r:.80}")
        if type(key) is not str or type(location) is not str or type(numel) is not int:
            raise pickle.UnpicklingError(f"a malformed storage id {pid!r:.80}")
        known = self.storages.get(key)
        if known is not None:
            if known.tensor.dtype is not dtype:
                raise pickle.UnpicklingError(f"storage {key!r} is read as two dtypes")
            return known
        name = f"data/{key}"
        data = self.record(name)
        assert data is not None
        item = int(dtype.itemsize)
        if len(data) != numel * item:
            raise self.fail(
                f"the record holds {len(data)} bytes, not the {numel * item} of {numel} "
                f"{dtype.name} elements",
                self.prefix + name,
            )
        tensor = self._storage_tensor(data, dtype, location)
        loaded = _records.LoadedStorage(tensor, key)
        self.storages[key] = loaded
        return loaded

    def _storage_tensor(
        self, data: bytes | memoryview, dtype: _dtypes.dtype, location: str
    ) -> Tensor:
        target = _target(location, self.map_location)
        where = target if target is not None else _canonical_device("cpu")
        backend = _records._backend_for(where, f"({dtype.name}, storage at {location!r})")
        buffer = data if isinstance(data, memoryview) else bytearray(data)
        from_buffer = getattr(backend, "from_buffer", None)
        if from_buffer is None:  # a backend without it: through the CPU
            cpu = _backends.for_device_type("cpu")
            t: Tensor = cpu.from_buffer(buffer, dtype, self.byteorder, "cpu")  # type: ignore[attr-defined]
            t = t.to(where)
        else:
            t = from_buffer(buffer, dtype, self.byteorder, where)
        if target is None:
            t = _place(t, location, self.map_location)
        return t


class _TrustedUnpickler(pickle.Unpickler):
    """``weights_only=False``: pickle's own unpickler (it runs what the file names), with the
    archive's storages and PyTorch's reconstructors in place of torch's."""

    def __init__(self, f: IO[bytes], archive: _Archive) -> None:
        super().__init__(f)
        self.archive = archive
        self.names = _records.CheckpointGlobals()

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" or module.startswith("torch."):
            return self.names.find(module, name)
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        return self.archive.persistent_load(pid)
