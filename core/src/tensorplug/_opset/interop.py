"""Tensors that share memory with other libraries' arrays: ``tp.from_numpy``,
``tp.as_tensor``, ``tp.asarray``, ``tp.frombuffer``, ``tp.from_file``, DLPack
(``Tensor.__dlpack__``, ``__dlpack_device__``, ``tp.from_dlpack``) (internal; installed on Tensor
and re-exported by the package; ``tensorplug.utils.dlpack`` is the public DLPack module).

Note [Memory sharing]
~~~~~~~~~~~~~~~~~~~~~
PyTorch's rules, for backends whose arrays can share memory with another library's:

* ``from_numpy(a)`` always shares ``a``'s memory (on the CPU). It refuses what a tensor cannot
  view: an unsupported dtype (``TypeError``), a non-native byte order or a negative stride
  (``ValueError``, torch's texts); a read-only array is shared with torch's warning.
* ``as_tensor(data, dtype, device)`` and ``asarray(obj, dtype=, device=, copy=None)`` share when
  nothing needs converting: a tensor of that dtype and device is returned itself, a numpy array
  of that dtype (on the CPU) is viewed as ``from_numpy`` views it, an object with ``__dlpack__``
  is loaded through DLPack. Otherwise they copy, and ``asarray(..., copy=False)`` raises
  ``ValueError`` instead; ``copy=True`` always copies.
* ``frombuffer(buffer, dtype, count, offset)`` views a buffer-protocol object's bytes;
  ``from_file(filename, shared, size, dtype)`` maps a file (``shared=True``: writes reach it).
* DLPack (``__dlpack__``) exports the backend array's own DLPack, so a consumer
  (``np.from_dlpack(t)``, ``torch.from_dlpack(t)``) shares the tensor's memory. Each backend's
  array library says what it can: numpy's (CPU) and CuPy's (CUDA) speak DLPack, as does
  array_api_strict's; a backend whose arrays do not (Meta, a lazy library) raises
  ``BufferError`` naming it. numpy has no DLPack code for bfloat16 (ml_dtypes' type), so a
  bfloat16 tensor does not cross DLPack on the CPU.

A shared tensor is a tensor like any other: in-place operators write into the shared memory,
and a write through the other side shows in the tensor. Tensors of backends that cannot share
(``device="cuda"`` for a numpy array) are copies, as in PyTorch.
"""

from __future__ import annotations

import builtins
import enum
import mmap
import warnings
from typing import Any

from .. import _backends
from .. import dtypes as _dtypes
from ..device import canonical as _canonical
from ..tensor import LogicalShape, Tensor
from . import construct as _construct

__all__ = [
    "DLDeviceType",
    "as_tensor",
    "asarray",
    "dlpack",
    "dlpack_device",
    "from_dlpack",
    "from_file",
    "from_numpy",
    "frombuffer",
]

_SUPPORTED = (
    "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool"
)


def _numpy() -> Any:
    import numpy

    return numpy


# --- from_numpy ------------------------------------------------------------------------------


def _check_viewable(a: Any) -> None:
    """PyTorch's refusals and warning for an array a tensor would view."""
    np = _numpy()
    if not a.dtype.isnative:
        raise ValueError(
            "given numpy array has byte order different from the native byte order. "
            "Conversion between byte orders is currently not supported."
        )
    if any(s < 0 for s in a.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around this "
            "by making a copy of your array  with array.copy().) "
        )
    if any(s % a.itemsize for s in a.strides) and a.size > 1:
        raise ValueError(
            "given numpy array strides not a multiple of the element byte size. Copy the numpy "
            "array to reallocate the memory."
        )
    if not a.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest of "
            "this program.",
            UserWarning,
            stacklevel=3,
        )
    del np


def _host_dtype(a: Any) -> _dtypes.dtype:
    """The tensorplug dtype of numpy array ``a`` (of either byte order)."""
    storage = _backends.for_device_type("cpu")
    if not a.dtype.isnative:
        a = _numpy().empty(0, dtype=a.dtype.newbyteorder("="))
    try:
        d: _dtypes.dtype = storage.host_dtype(a)  # type: ignore[attr-defined]
    except TypeError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{a.dtype.type.__name__}. The only "
            f"supported types are: {_SUPPORTED}."
        ) from None
    return d


def from_numpy(ndarray: Any) -> Tensor:
    """A CPU tensor sharing ``ndarray``'s memory (Note [Memory sharing])."""
    np = _numpy()
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _host_dtype(ndarray)
    _check_viewable(ndarray)
    t = _share(ndarray, _canonical("cpu"))
    if t is None:
        raise RuntimeError(
            "from_numpy: the cpu backend's arrays are not numpy arrays, so it cannot share a "
            "numpy array's memory; use tp.tensor(ndarray) for a copy"
        )
    return t


def _share(a: Any, device: Any) -> Tensor | None:
    share = getattr(_backends.for_device_type(device.type), "share_host", None)
    got: Tensor | None = None if share is None else share(a, device)
    return got


# --- as_tensor / asarray ---------------------------------------------------------------------


def as_tensor(data: Any, dtype: _dtypes.dtype | None = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing its memory where nothing needs converting (Note [Memory
    sharing]); a copy otherwise."""
    got = _aliased(data, dtype, device, "as_tensor")
    if got is not None:
        return got
    return _construct.as_tensor(data, dtype=dtype, device=device)


def asarray(
    obj: Any,
    *,
    dtype: _dtypes.dtype | None = None,
    device: Any = None,
    copy: builtins.bool | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """``obj`` (a tensor, an array, an object with ``__dlpack__``, a buffer, a scalar or a
    sequence) as a tensor: shared when possible and ``copy`` is not True, copied when needed
    and ``copy`` is not False (``ValueError`` then) (Note [Memory sharing])."""
    if dtype is not None and not isinstance(dtype, _dtypes.dtype):
        raise TypeError(
            f"asarray(): argument 'dtype' must be tensorplug.dtype, not {type(dtype).__name__}"
        )
    t: Tensor | None = None
    if copy is not True:
        t = _aliased(obj, dtype, device, "asarray", strict=copy is False)
    if t is None:
        if copy is False:
            raise ValueError(_cannot_alias(obj, dtype))
        if isinstance(obj, Tensor):
            t = _construct.to(
                obj.detach(),
                dtype=dtype or obj.dtype,
                device=device if device is not None else obj.device,
                copy=True,
            )
        elif _is_buffer(obj):
            t = _construct.tensor(
                frombuffer(obj, dtype=dtype or _dtypes.get_default_dtype()), device=device
            )
        else:
            t = _construct.tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        if isinstance(obj, Tensor) and t is obj:
            t = obj.detach()  # a new leaf over the same memory, as torch.asarray's
        t.requires_grad_()
    return t


def _is_buffer(obj: Any) -> builtins.bool:
    if isinstance(obj, (bytes, bytearray, memoryview, mmap.mmap)):
        return True
    return False


def _cannot_alias(obj: Any, dtype: Any) -> str:
    if isinstance(obj, Tensor) and dtype is not None and dtype is not obj.dtype:
        return f"can't alias tensor with dtype '{_cpp(obj.dtype)}' into dtype '{_cpp(dtype)}'."
    np = _numpy()
    if isinstance(obj, np.ndarray) and dtype is not None:
        return f"can't alias NumPy array with dtype '{obj.dtype}' into dtype '{_cpp(dtype)}'."
    if isinstance(obj, (list, tuple)):
        return "can't alias arbitrary sequence into a tensor."
    return f"can't alias {type(obj).__name__} into a tensor without a copy."


def _cpp(d: _dtypes.dtype) -> str:
    """PyTorch's C++ name of a dtype, as its alias messages print it."""
    names = {"float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16",
             "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
             "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}  # fmt: skip
    return names.get(d.name, d.name)


def _aliased(
    data: Any, dtype: Any, device: Any, fn: str, *, strict: builtins.bool = False
) -> Tensor | None:
    """``data`` without a copy when it can be had so, else None."""
    if isinstance(data, Tensor):
        dev = _canonical(device) if device is not None else data.device
        if (dtype is None or dtype is data.dtype) and _same_device(dev, data.device):
            return data
        return None
    np = _numpy()
    if isinstance(data, np.ndarray):
        dev = _canonical(device)
        d = _host_dtype(data)
        if dtype is not None and dtype is not d:
            return None
        if not data.dtype.isnative or any(s < 0 for s in data.strides):
            if strict or any(s < 0 for s in data.strides):
                _check_viewable(data)  # PyTorch refuses negative strides even when copying
            return None
        if dev.type != "cpu":
            return None
        _check_viewable(data)
        return _share(data, dev)
    if hasattr(data, "__dlpack__") and not isinstance(data, np.generic):
        t = from_dlpack(data)
        dev = _canonical(device) if device is not None else t.device
        if (dtype is None or dtype is t.dtype) and _same_device(dev, t.device):
            return t
        return None
    if _is_buffer(data) and fn == "asarray" and _canonical(device).type == "cpu":
        return frombuffer(data, dtype=dtype or _dtypes.get_default_dtype())
    return None


def _same_device(want: Any, have: Any) -> builtins.bool:
    return builtins.bool(
        want == have or (want.type == have.type and want.index is None and have.type != "cpu")
    )


# --- frombuffer / from_file --------------------------------------------------------------------


def frombuffer(
    buffer: Any,
    *,
    dtype: _dtypes.dtype,
    count: int = -1,
    offset: int = 0,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A 1-D CPU tensor over the bytes of ``buffer`` (an object with the buffer protocol):
    ``count`` elements of ``dtype`` from byte ``offset`` (all that remain for -1). Shares the
    memory; a read-only buffer is shared with PyTorch's warning."""
    np = _numpy()
    view = memoryview(buffer)
    length = view.nbytes
    item = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(
            f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
            f"({length} bytes) minus 1"
        )
    if count < 0:
        if (length - offset) % item:
            raise ValueError(
                f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be "
                f"a multiple of element size ({item})"
            )
        count = (length - offset) // item
    elif offset + count * item > length:
        raise ValueError(
            f"requested buffer length ({count} * {item} bytes) after offset ({offset} bytes) "
            f"must not be greater than actual buffer length ({length} bytes)"
        )
    storage: Any = _backends.for_device_type("cpu")
    host_dtypes = storage._host_dtypes
    if dtype not in host_dtypes:
        raise TypeError(f"frombuffer: dtype {dtype.name} is not supported on the cpu backend")
    if view.readonly:
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.",
            UserWarning,
            stacklevel=2,
        )
    host = np.frombuffer(buffer, dtype=host_dtypes[dtype], count=count, offset=offset)
    t = _share(host, _canonical("cpu"))
    if t is None:
        t = _construct.tensor(host, dtype=dtype, device="cpu")
    if requires_grad:
        t.requires_grad_()
    return t


def from_file(
    filename: str,
    shared: builtins.bool | None = None,
    size: int | None = 0,
    *,
    dtype: _dtypes.dtype | None = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A 1-D tensor of ``size`` elements of ``dtype`` (the default dtype) over the file
    ``filename``, memory-mapped: ``shared=True`` maps it shared (writes reach the file; the
    file must hold the bytes), otherwise privately (writes stay in this process)."""
    np = _numpy()
    d = dtype or _dtypes.get_default_dtype()
    n = 0 if size is None else size
    storage: Any = _backends.for_device_type("cpu")
    host_dtype = storage._host_dtypes[d]
    nbytes = n * d.itemsize
    if shared:
        import os

        have = os.path.getsize(filename) if os.path.exists(filename) else -1
        if have < nbytes:
            raise RuntimeError(
                f"unable to map file {filename!r}: it holds {max(have, 0)} bytes, and "
                f"{n} elements of {d.name} need {nbytes}"
            )
    host = (
        np.memmap(filename, dtype=host_dtype, mode="r+" if shared else "c", shape=(n,))
        if n
        else np.empty(0, dtype=host_dtype)
    )
    arr = np.ndarray((n,), dtype=host_dtype, buffer=host) if n else host
    t = _share(arr, _canonical("cpu"))
    if t is None:
        t = _construct.tensor(arr, dtype=d, device="cpu")
    if device is not None and _canonical(device) != t.device:
        t = _construct.to(t, device)
    if requires_grad:
        t.requires_grad_()
    return t


# --- DLPack ------------------------------------------------------------------------------------


class DLDeviceType(enum.IntEnum):
    """DLPack's device type codes (``torch.utils.dlpack.DLDeviceType``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


_DEVICE_TYPES: dict[int, str] = {DLDeviceType.kDLCPU: "cpu", DLDeviceType.kDLCUDA: "cuda",
                 DLDeviceType.kDLCUDAManaged: "cuda", DLDeviceType.kDLCUDAHost: "cpu"}  # fmt: skip


def _array_of(t: Tensor, what: str) -> Any:
    data = t._data
    if type(data) is LogicalShape:
        raise BufferError(f"{what}: the tensor is a wrapper without storage")
    if getattr(data, "__dlpack__", None) is None:
        raise BufferError(
            f"{what}: the {_backend_name(t)} backend's arrays ({type(data).__module__}."
            f"{type(data).__name__}) do not speak DLPack, so a tensor of device "
            f"'{t.device}' cannot be exported; copy it to the CPU first (t.cpu())"
        )
    return data


def _backend_name(t: Tensor) -> str:
    from .. import keys

    k = keys.backend_for_device_type(t.device.type)
    return k.name if k is not None else t.device.type


def dlpack(
    self: Tensor,
    *,
    stream: Any = None,
    max_version: tuple[int, int] | None = None,
    dl_device: Any = None,
    copy: builtins.bool | None = None,
) -> Any:
    """``Tensor.__dlpack__``: a DLPack capsule of the tensor's memory (the backend array's
    own ``__dlpack__``, so the consumer shares the memory)."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    data = _array_of(self, "__dlpack__")
    kwargs: dict[str, Any] = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    try:
        return data.__dlpack__(stream=stream, **kwargs)
    except BufferError as e:
        if self.dtype is _dtypes.bfloat16:
            raise BufferError(
                f"__dlpack__: the {_backend_name(self)} backend's array library cannot export "
                f"bfloat16 through DLPack ({e}); convert first (t.float())"
            ) from e
        raise
    except TypeError:
        if kwargs.get("copy") or kwargs.get("dl_device") is not None:
            raise
        return data.__dlpack__(stream=stream)  # a library from before DLPack 1.0's keywords


def dlpack_device(self: Tensor) -> tuple[Any, int]:
    """``Tensor.__dlpack_device__``: ``(DLDeviceType, device index)``."""
    data = _array_of(self, "__dlpack_device__")
    kind, index = data.__dlpack_device__()
    try:
        kind = DLDeviceType(int(kind))
    except ValueError:
        pass
    return kind, int(index)


class _Capsule:
    """A bare DLPack capsule (``to_dlpack``'s) with the protocol's methods, for the array
    libraries' ``from_dlpack`` which take objects, not capsules. A capsule does not say its
    device: it is taken to be on the CPU."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing the memory of ``ext_tensor``: an object with ``__dlpack__`` and
    ``__dlpack_device__`` (a numpy or CuPy array, a torch tensor, a tensorplug tensor) or a
    DLPack capsule (``to_dlpack``'s; taken to be on the CPU)."""
    if isinstance(ext_tensor, Tensor):
        _array_of(ext_tensor, "from_dlpack")
        return _construct.to(ext_tensor.detach(), ext_tensor.device)
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    device_of = getattr(ext_tensor, "__dlpack_device__", None)
    if device_of is None or not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(
            f"from_dlpack: expected an object with __dlpack__ and __dlpack_device__ or a DLPack "
            f"capsule, got {type(ext_tensor).__name__}"
        )
    kind, index = device_of()
    device_type = _DEVICE_TYPES.get(int(kind))
    if device_type is None:
        raise BufferError(
            f"from_dlpack: DLPack device type {int(kind)} has no tensorplug device type (known: "
            "CPU 1, CUDA 2, CUDA host 3, CUDA managed 13)"
        )
    dev = _canonical(device_type if device_type == "cpu" else f"{device_type}:{int(index)}")
    storage = _backends.for_device_type(device_type)
    load = getattr(storage, "from_dlpack", None)
    if load is None:
        raise BufferError(
            f"from_dlpack: the {storage.key_name} backend (device type '{device_type}') does "
            "not load DLPack"
        )
    t: Tensor = load(ext_tensor, dev)
    return t
