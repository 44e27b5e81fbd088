"""The storage of an array backend: Python data in, host arrays out (internal).

:class:`ArrayStorage` is the ``tensorplug._backends.StorageBackend`` that :func:`register`
adds beside the kernels: ``tp.tensor(data)`` (dtype inferred as ``torch.tensor`` does), host
numpy arrays to and from the backend's arrays, and the memory layout strided backends report.
The functions after it are the defaults :func:`register` takes where a backend gives none: the
dtypes ``xp`` names, host copies through DLPack, ``xp.asarray`` from the host, and numpy's
random state on the host where ``xp`` has none.
"""

from __future__ import annotations

import sys
from typing import Any

from .. import _backends
from .. import dtypes as _dt
from ..device import canonical
from ..device import device as Device
from ..tensor import Tensor
from ._kit import Kit

__all__ = ["ArrayStorage"]


class ArrayStorage:
    """The storage backend of an array backend (tensorplug._backends.StorageBackend)."""

    def __init__(
        self, kit: Kit, plugin: str, host_dtypes: dict[_dt.dtype, Any] | None = None
    ) -> None:
        self.kit = kit
        self.key_name = kit.key_name
        self.device_type = kit.device_type
        self.plugin = plugin
        self._host: dict[_dt.dtype, Any] | None = host_dtypes  # numpy's, made on first use
        self._from_host: dict[Any, _dt.dtype] | None = None

    @property
    def _host_dtypes(self) -> dict[_dt.dtype, Any]:
        if self._host is None:
            self._host = _host_dtypes()
        return self._host

    @property
    def _from_host_dtype(self) -> dict[Any, _dt.dtype]:
        if self._from_host is None:
            self._from_host = {}
            for d, x in self._host_dtypes.items():
                self._from_host.setdefault(x, d)
        return self._from_host

    def to_host(self, data: Any) -> Any:
        return self.kit.to_host(data)

    @property
    def strided(self) -> bool:
        """Whether the arrays are strided (``register(strided=)``, Note [Strided layout])."""
        return self.kit.strided

    def memory_layout(self, data: Any) -> tuple[int, tuple[int, ...], int] | None:
        """``(address, strides, itemsize)`` of array ``data``, in bytes, from the array
        interface numpy and cupy describe their memory with; None for arrays without one."""
        i = getattr(data, "__array_interface__", None)
        if i is None:
            i = getattr(data, "__cuda_array_interface__", None)
        if i is None:
            return None
        shape = tuple(i["shape"])
        item = int(data.itemsize)
        strides = getattr(data, "strides", None)  # the interface omits them when row-major
        if strides is None:
            strides = i.get("strides")
        if strides is None:  # row-major
            acc, out = item, []
            for n in reversed(shape):
                out.append(acc)
                acc *= max(n, 1)
            strides = tuple(reversed(out))
        return int(i["data"][0]), tuple(int(x) for x in strides), item

    def device(self, d: Device) -> Device:
        """The device tensors made for ``d`` live on (``cuda`` is the current device)."""
        return self.kit.device(d)

    def host_dtype(self, host: Any) -> _dt.dtype:
        d = self._from_host_dtype.get(host.dtype)
        if d is None:
            names = ", ".join(d.name for d in _dt.all_dtypes() if d in self._host_dtypes)
            raise TypeError(
                f"can't convert an array of dtype {host.dtype} to a tensor on the "
                f"{self.key_name} backend. The only supported types are: {names}."
            )
        return d

    def from_host(self, host: Any, device: Any) -> Tensor:
        """A tensor over host array ``host`` (no copy where the backend can share it)."""
        kit = self.kit
        dev = kit.device(canonical(device))
        d = self.host_dtype(host)
        kit.check_dtype(d)
        return kit.new(kit.from_host_array(host, dev), d, dev, kit.keyset)

    def from_python(self, data: Any, dtype: _dt.dtype | None, device: Any) -> Tensor:
        """``tp.tensor(data)``: always a copy; dtype inferred as ``torch.tensor`` does."""

        kit = self.kit
        dev = kit.device(canonical(device))
        host, inferred = self._host_of(data)
        d = inferred if dtype is None else dtype
        kit.check_dtype(d)
        want = self._host_dtypes[d]
        if dtype is not None and d is not inferred:
            _check_convertible(host, inferred, d)
        out = host.astype(want) if host.dtype != want else host.copy()
        return kit.new(kit.from_host_array(out, dev), d, dev, kit.keyset)

    # --- memory sharing and DLPack (tp.from_numpy, tp.as_tensor, tp.from_dlpack) ---------

    def share_host(self, host: Any, device: Any) -> Tensor | None:
        """A tensor over the memory of numpy array ``host`` (a new array object viewing it, so
        reshaping ``host`` in place cannot change the tensor), or None when this backend's
        arrays are not numpy arrays on the host (the caller copies). The caller checked the
        dtype, byte order and strides."""
        import numpy

        kit = self.kit
        if kit.array_type is not numpy.ndarray or canonical(device).type != "cpu":
            return None
        d = self.host_dtype(host)
        kit.check_dtype(d)
        if kit.storage[d] != host.dtype:
            return None
        return kit.new(host.view(), d, kit.device(canonical(device)), kit.keyset)

    def from_dlpack(self, ext: Any, device: Any) -> Tensor:
        """A tensor over the memory of ``ext`` (an object with ``__dlpack__``), through the
        array library's ``from_dlpack``: zero-copy where the library can."""
        kit = self.kit
        load = getattr(kit.xp, "from_dlpack", None)
        if load is None:
            raise BufferError(
                f"from_dlpack: the {self.key_name} backend's array library "
                f"({getattr(kit.xp, '__name__', kit.xp)}) has no from_dlpack"
            )
        dev = kit.device(canonical(device))
        with kit.on(dev):
            arr = load(ext)
        return kit.new(arr, kit.dtype_of(arr), dev, kit.keyset)

    # --- checkpoints (tensorplug.serialization) ------------------------------------------

    def from_buffer(self, buffer: Any, dtype: _dt.dtype, byteorder: str, device: Any) -> Tensor:
        """A 1-D tensor of ``dtype`` over the bytes of ``buffer`` (a checkpoint's storage
        record, stored ``byteorder``, "little" or "big"). It shares ``buffer``'s memory where
        the backend's arrays are host arrays and ``buffer`` is writable (``tp.load(mmap=True)``),
        else it is a copy. The caller checked that the byte count is a multiple of the item
        size."""
        import numpy

        kit = self.kit
        dev = kit.device(canonical(device))
        kit.check_dtype(dtype)
        want = numpy.dtype(self._host_dtypes[dtype])
        stored = want.newbyteorder("<" if byteorder == "little" else ">")
        host = numpy.frombuffer(buffer, dtype=stored)
        if not host.dtype.isnative:
            host = host.astype(want)
        elif not host.flags.writeable:
            host = host.copy()
        return kit.new(kit.from_host_array(host, dev), dtype, dev, kit.keyset)

    def as_strided(
        self, data: Any, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
    ) -> Any:
        """The view of 1-D array ``data`` with ``shape``, ``strides`` and ``offset`` in elements
        (a PyTorch checkpoint's views of one storage). The caller checked that every element
        it reaches lies inside ``data``. Arrays with no strided views get a copy."""
        xp = self.kit.xp
        tricks = getattr(getattr(xp, "lib", None), "stride_tricks", None)
        item = int(data.itemsize)
        if tricks is not None and hasattr(tricks, "as_strided"):
            return tricks.as_strided(
                data[offset:], shape=shape, strides=tuple(s * item for s in strides)
            )
        index = [offset]
        for n, s in zip(shape, strides, strict=True):
            index = [i + k * s for i in index for k in range(n)]
        return xp.reshape(xp.take(data, xp.asarray(index, dtype=xp.int64)), shape)

    def _host_of(self, data: Any) -> tuple[Any, _dt.dtype]:
        import numpy

        if isinstance(data, Tensor):
            host = _backends.for_device_type(data._device.type).to_host(data._data)
            return numpy.asarray(host), data._dtype
        if type(data) is self.kit.array_type and not isinstance(data, numpy.ndarray):
            host = self.kit.to_host(data)
            return host, self.host_dtype(host)
        if isinstance(data, (numpy.ndarray, numpy.generic)) or hasattr(data, "__array_interface__"):
            host = numpy.asarray(data)  # (the buffers of tp.load, Note [Tensor pickles])
            return host, self.host_dtype(host)
        if isinstance(data, (list, tuple)):
            try:
                data = _plain(data)
            except RecursionError:
                raise ValueError(
                    "tensor(): the data nests too deeply, or contains itself (a list that is "
                    "its own element); pass nested sequences of numbers"
                ) from None
        try:
            host = numpy.asarray(data)
        except OverflowError as e:
            raise ValueError(f"Overflow when unpacking long: {e}") from e
        except ValueError as e:  # ragged nested lists
            raise ValueError(
                f"tensor(): could not convert {type(data).__name__} to a tensor: the nested "
                f"sequences must all have the same length at each depth ({e})"
            ) from e
        kind = host.dtype.kind
        if kind == "b":
            return host, _dt.bool
        if kind in "iu":
            if kind == "u" or host.dtype.itemsize > 8:
                raise ValueError("Overflow when unpacking long long: an int beyond int64")
            return host.astype(numpy.int64), _dt.int64
        if kind == "f":
            return host, _dt.get_default_dtype()
        if kind == "c":
            return host, _dt.get_default_dtype().to_complex()
        if kind == "O" and host.size and all(isinstance(x, int) for x in host.reshape(-1)):
            raise ValueError("Overflow when unpacking long long: an int beyond int64")
        raise _no_dtype(data)


def _check_convertible(host: Any, inferred: _dt.dtype, d: _dt.dtype) -> None:
    """PyTorch's checks of ``tp.tensor(data, dtype=d)``: no complex into a real dtype, no
    NaN or infinity into an integer one, no integer beyond the integer dtype's range."""
    import numpy

    if inferred.kind == "c" and d.kind != "c":
        raise TypeError(
            f"tensor(): can't convert complex to {d.name}: the data holds complex numbers; "
            "pass a complex dtype or the real parts"
        )
    if d.kind not in ("i", "u") or host.size == 0 or host.dtype.kind not in "iuf":
        return
    if host.dtype.kind == "f" and not numpy.isfinite(host).all():
        raise RuntimeError(
            f"tensor(): value cannot be converted to type {d.name} without overflow: the data "
            "holds NaN or infinity"
        )
    info = numpy.iinfo(d.name)
    lo, hi = host.min(), host.max()
    # an unsigned dtype takes negatives down to -max, wrapped (PyTorch's c10::overflows)
    least = -int(info.max) if info.min == 0 else int(info.min)
    if lo < least or hi > info.max:
        bad = lo if lo < least else hi
        raise RuntimeError(
            f"tensor(): value cannot be converted to type {d.name} without overflow: {bad} is "
            f"outside [{info.min}, {info.max}]"
        )


def _no_dtype(data: Any) -> Exception:
    """PyTorch's error for data with an element that is no number: the first such element's
    type, not the type of the list around it."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif not isinstance(x, (bool, int, float, complex, Tensor)) and not hasattr(x, "dtype"):
            name = type(x).__name__
            if isinstance(x, (str, bytes)):
                return TypeError(f"tensor(): invalid data type '{name}'")
            return RuntimeError(f"Could not infer dtype of {name}")
    return RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _plain(data: Any) -> Any:
    """Nested sequences with tensors (0-dim or not) replaced by Python values."""
    if isinstance(data, Tensor):
        host = _backends.for_device_type(data._device.type).to_host(data._data)
        return host.tolist() if data._dtype is not _dt.bfloat16 else host.astype("float32").tolist()
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data


def _default_storage(xp: Any) -> tuple[dict[_dt.dtype, Any], dict[_dt.dtype, Any]]:
    """Every dtype ``xp`` has by name; bfloat16 through ml_dtypes for numpy."""
    storage: dict[_dt.dtype, Any] = {}
    for d in _dt.all_dtypes():
        names = (d.name, "bool_") if d is _dt.bool else (d.name,)
        for n in names:
            x = getattr(xp, n, None)
            if x is not None:
                storage[d] = x
                break
    numpy_dtypes = getattr(xp, "__name__", "") == "numpy" or (
        _dt.float16 not in storage and _holds_numpy_dtypes(xp)
    )
    if numpy_dtypes and _dt.float16 not in storage:
        # a library whose arrays hold numpy dtypes but that names only some (dask.array names
        # none of float16): numpy's dtype object is its dtype
        import numpy

        storage[_dt.float16] = numpy.dtype("float16")
    compute: dict[_dt.dtype, Any] = {}
    if _dt.bfloat16 not in storage and numpy_dtypes:
        try:
            import ml_dtypes
        except ImportError:  # bfloat16 unsupported; the kit says so on use
            pass
        else:
            storage[_dt.bfloat16] = ml_dtypes.bfloat16
            compute[_dt.bfloat16] = xp.float32
    return storage, compute


def _holds_numpy_dtypes(xp: Any) -> bool:
    """Whether ``xp``'s arrays are made with numpy's dtype objects and keep them (dask.array):
    then numpy's float16 and ml_dtypes' bfloat16 are its dtypes too."""
    import sys
    import warnings

    numpy = sys.modules.get("numpy")
    if numpy is None:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # array_api_strict warns about numpy's dtypes
            a = xp.zeros((1,), dtype=numpy.dtype("float16"))
    except (TypeError, ValueError, AttributeError):
        return False
    return bool(getattr(a, "dtype", None) == numpy.dtype("float16"))


def _to_host_by_dlpack(a: Any) -> Any:
    """A host numpy copy of array ``a``: through DLPack where its library and device export it,
    else through ``numpy.asarray`` (the ``__array__`` protocol or the buffer)."""
    import numpy

    try:
        host = numpy.from_dlpack(a)
    except (AttributeError, BufferError, RuntimeError, TypeError, ValueError):
        return numpy.array(a, copy=True)
    return numpy.array(host, copy=True)


def _host_dtypes() -> dict[_dt.dtype, Any]:
    import numpy

    out: dict[_dt.dtype, Any] = {}
    for d in _dt.all_dtypes():
        if d is _dt.bfloat16:
            try:
                import ml_dtypes
            except ImportError:
                continue
            out[d] = numpy.dtype(ml_dtypes.bfloat16)
        else:
            out[d] = numpy.dtype(d.name)
    return out


def _host_itself(a: Any) -> Any:
    """``to_host`` of a numpy backend: its arrays are host arrays."""
    return a


def _from_host_by_asarray(kit: Kit, host: Any, device: Device) -> Any:
    """The default ``from_host``: ``xp.asarray`` with ``device`` current."""
    with kit.on(device):
        return kit.xp.asarray(host)


# --- bfloat16 across transfers ---------------------------------------------------------------
#
# Note [bfloat16 across transfers]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The host's bfloat16 is ml_dtypes' (numpy has none). A library with a bfloat16 of its own
# (torch) can neither export it through DLPack or ``__array__`` to numpy, nor take an ml_dtypes
# array in ``asarray``. The default transfers of such a backend carry bfloat16 as float32,
# which holds every bfloat16 value exactly: ``to_host`` casts to float32 on the device, moves
# that, and rounds back to ml_dtypes' bfloat16 on the host (exact); ``from_host`` the other way,
# with a positive NaN's sign bit cleared (torch's float32 -> bfloat16 sets it on every NaN).
# Backends that store bfloat16 as ml_dtypes' (numpy, dask) or pass their own transfers pay
# nothing.


def _native_bfloat16(kit: Kit) -> Any:
    """The storage dtype of bfloat16 when it is the library's own, which numpy does not know
    (torch's), else None (none, or ml_dtypes' in a numpy dtype: numpy, dask)."""
    d = kit.storage.get(_dt.bfloat16)
    if d is None:
        return None
    # a process without numpy has no host arrays to transfer to (Meta runs without it: no
    # import here); the CPU plugin, and any backend with host transfers, imports it first
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    try:
        import ml_dtypes  # noqa: F401  (the host's bfloat16)
    except ImportError:
        return None
    try:
        numpy.dtype(d)
    except TypeError:
        return d
    return None


def _to_host_through_float32(kit: Kit, to_host: Any, bf16: Any, a: Any) -> Any:
    """``to_host(a)``, a bfloat16 array through float32 (Note [bfloat16 across transfers])."""
    if a.dtype != bf16:
        return to_host(a)
    import ml_dtypes

    return to_host(kit.xp.astype(a, kit.xp.float32)).astype(ml_dtypes.bfloat16)


def _from_host_through_float32(
    kit: Kit, from_host: Any, bf16: Any, host: Any, device: Device
) -> Any:
    """``from_host(host, device)``, a bfloat16 array through float32 (Note [bfloat16 across
    transfers])."""
    import ml_dtypes

    if getattr(host, "dtype", None) != ml_dtypes.bfloat16:
        return from_host(host, device)
    xp = kit.xp
    f = from_host(host.astype("float32"), device)
    r = xp.astype(f, bf16)
    # torch rounds every float32 NaN to a bfloat16 NaN with the sign bit set: clear it again
    return xp.where(xp.isnan(r) & ~xp.signbit(f), xp.abs(r), r)


def _host_rng(seed: int) -> Any:
    """The default random state where ``xp`` has none: numpy's PCG64 on the host."""
    import numpy

    return numpy.random.Generator(numpy.random.PCG64(seed))


def _drawn_here(arr: Any, device: Device) -> Any:
    """``from_rng`` of a backend that draws with its own random state: nothing to move."""
    return arr
