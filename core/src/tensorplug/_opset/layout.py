"""A tensor's layout in memory: ``stride()``, ``storage_offset()``, ``is_contiguous()``,
``data_ptr()``, ``untyped_storage()``, ``nbytes``, ``itemsize``, ``dim_order()``, ``layout``
and the pinned/shared-memory queries (internal; installed on Tensor by ``operators.install``).

Each is computed when asked from the backend's array (Note [Strided layout] in _strides.py):
tensors store nothing for them. On a backend whose arrays are not strided they raise
``storage.no_strides_error``, except ``is_contiguous()``, which answers for the row-major
order such a backend presents (as PyTorch's XLA tensors do), ``layout`` (always
``tp.strided``: dense) and the sizes (``nbytes``, ``itemsize``).
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

from .. import _strides
from .. import dtypes as _dt
from .. import storage as _storage
from ..device import device as Device
from ..ops import ops
from ..tensor import Tensor, _wrap_dim
from . import predicates as _predicates

__all__ = ["TypedStorage", "UntypedStorage", "install"]


class UntypedStorage:
    """The memory under a strided tensor, as ``torch.UntypedStorage`` describes it: its
    address (``data_ptr()``), size in bytes (``nbytes()``, ``size()``, ``len()``) and device.
    Two tensors share memory when their storages' ``data_ptr()`` are equal. It holds the
    tensor that owns the memory, keeping it alive."""

    __slots__ = ("_owner", "_ptr", "_nbytes")

    def __init__(self, owner: Tensor, ptr: int, nbytes: int) -> None:
        self._owner = owner
        self._ptr = ptr
        self._nbytes = nbytes

    def data_ptr(self) -> int:
        return self._ptr

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> Device:
        return self._owner.device

    def is_pinned(self, device: Any = "cuda") -> bool:
        return False

    def is_shared(self) -> bool:
        return is_shared(self._owner)

    def __repr__(self) -> str:
        return (
            f"tensorplug.UntypedStorage(data_ptr={self._ptr:#x}, nbytes={self._nbytes}, "
            f"device={self.device})"
        )


# --- storage(): PyTorch's deprecated typed storage ----------------------------------------------

_TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()"
)
_warned = [False]  # PyTorch warns on the first use in a process only


def _warn_typed_storage(stacklevel: int = 3) -> None:
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=stacklevel)


class TypedStorage:
    """The storage of a tensor as elements of its dtype (``Tensor.storage()``, deprecated in
    PyTorch as here): the whole storage, not only the tensor's elements; indexing reads and
    writes them, ``untyped()`` is the :class:`UntypedStorage`."""

    __slots__ = ("_flat", "_untyped")

    def __init__(self, flat: Tensor, untyped: UntypedStorage) -> None:
        self._flat = flat  # a 1-d tensor over the whole storage, in the dtype
        self._untyped = untyped

    @property
    def dtype(self) -> Any:
        return self._flat.dtype

    @property
    def device(self) -> Device:
        return self._flat.device

    def size(self) -> int:
        return builtins.int(self._flat.shape[0])

    def __len__(self) -> int:
        return self.size()

    def __getitem__(self, i: Any) -> Any:
        got = self._flat[i]
        return got.item() if got.ndim == 0 else got

    def __setitem__(self, i: Any, value: Any) -> None:
        self._flat[i] = value

    def tolist(self) -> list[Any]:
        return self._flat.tolist()  # type: ignore[no-any-return]

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def element_size(self) -> int:
        return builtins.int(self._flat.element_size())

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def is_shared(self) -> bool:
        return self._untyped.is_shared()

    def is_pinned(self, device: Any = "cuda") -> bool:
        return False

    def type(self) -> str:
        return f"tensorplug.{_LEGACY_NAMES.get(self.dtype.name, 'Typed')}Storage"

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist()) if self.device.type != "meta" else ""
        head = f"[tensorplug.TypedStorage(dtype={self.dtype}, device={self.device}) of size "
        return f"{body}\n{head}{self.size()}]" if body else f"{head}{self.size()}]"


# PyTorch's legacy storage classes, by dtype: what storage_type() returns
_LEGACY_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}  # fmt: skip
_LEGACY: dict[str, type] = {}


def storage_type(self: Tensor) -> type:
    """The legacy storage class of the dtype (``tensorplug.FloatStorage`` for float32), as
    ``torch.Tensor.storage_type`` returns ``torch.FloatStorage``."""
    name = _LEGACY_NAMES.get(self._dtype.name)
    if name is None:
        raise RuntimeError(f"Tensor.storage_type: no legacy storage class for {self._dtype}")
    cls = _LEGACY.get(name)
    if cls is None:
        cls = type(f"{name}Storage", (TypedStorage,), {"__slots__": (), "__module__": "tensorplug"})
        _LEGACY[name] = cls
    return cls


def _whole_storage(self: Tensor, dtype: Any, what: str) -> Tensor:
    """A 1-d tensor of ``dtype`` over the whole storage of ``self`` (from its start)."""
    root = _storage.storage_root(self)
    g = _storage.geometry(root, what)
    item = root._dtype.itemsize
    flat: Tensor = ops.aten.as_strided.default(root, [g.storage_nbytes // item], [1], 0)
    if dtype is not flat._dtype:
        flat = ops.aten.view.dtype(ops.aten.view.dtype(flat, _dt.uint8), dtype)
    return flat


def storage(self: Tensor) -> TypedStorage:
    """``Tensor.storage()``: the tensor's whole storage as elements of its dtype, with PyTorch's
    deprecation warning (once per process)."""
    _warn_typed_storage()
    return TypedStorage(_whole_storage(self, self._dtype, "Tensor.storage"), untyped_storage(self))


# --- set_, share_memory_, resize (Python forms) -------------------------------------------------


def set_(
    self: Tensor, source: Any = None, storage_offset: Any = 0, size: Any = None,
    stride: Any = None,
) -> Tensor:  # fmt: skip
    """PyTorch's ``Tensor.set_``: no source (an empty tensor), a tensor (its storage and
    geometry), or a storage (untyped, or typed of this dtype), optionally with an offset,
    sizes and strides (the ``set_.source_Tensor_storage_offset`` operator)."""
    aten = ops.aten
    if source is None:
        return aten.set_.default(self)  # type: ignore[no-any-return]
    if isinstance(source, (UntypedStorage, TypedStorage)):
        if isinstance(source, TypedStorage) and source.dtype is not self._dtype:
            raise RuntimeError(
                f"Expected a Storage of type {self._dtype} but got type {source.dtype} for "
                "argument #1 'source'"
            )
        owner = source._owner if isinstance(source, UntypedStorage) else source._flat
        flat = _whole_storage(owner, self._dtype, "aten::set_")
        if size is None:
            size, storage_offset = [builtins.int(flat.shape[0])], 0
        return aten.set_.source_Tensor_storage_offset(  # type: ignore[no-any-return]
            self, flat, storage_offset, list(size), [] if stride is None else list(stride)
        )
    if size is None:
        return aten.set_.source_Tensor(self, source)  # type: ignore[no-any-return]
    return aten.set_.source_Tensor_storage_offset(  # type: ignore[no-any-return]
        self, source, storage_offset, list(size), [] if stride is None else list(stride)
    )


def share_memory_(self: Tensor) -> Tensor:
    """Move the storage into memory shared with child processes (an anonymous shared
    mapping: processes forked afterwards see each other's writes), as PyTorch's
    ``share_memory_``; the tensor, its views and its detached aliases follow. A no-op where
    the storage is shared already, and on CUDA (device memory is shareable as it is)."""
    root = _storage.storage_root(self)
    if getattr(root, "_shared", False) or self._device.type != "cpu":
        return self
    if type(self._data).__module__ != "numpy":
        raise _storage.no_strides_error(self, "Tensor.share_memory_")
    import mmap

    import numpy as np

    g = _storage.geometry(root, "Tensor.share_memory_")
    mem = mmap.mmap(-1, max(g.storage_nbytes, 1))  # MAP_SHARED | MAP_ANONYMOUS
    buf = np.frombuffer(mem, dtype=np.uint8, count=g.storage_nbytes)
    old = _whole_storage(root, _dt.uint8, "Tensor.share_memory_")._data
    buf[...] = old
    tensors = [root, *_storage.users(root)]
    moved = []
    for t in tensors:
        tg = _storage.geometry(t, "Tensor.share_memory_")
        typed = buf.view(t._data.dtype)
        item = tg.itemsize
        moved.append(
            np.lib.stride_tricks.as_strided(
                typed[tg.offset :], t._data.shape, tuple(s * item for s in tg.strides)
            )
        )
    for t, arr in zip(tensors, moved, strict=True):
        t._data = arr
    root._shared = True  # type: ignore[attr-defined]
    return self


def is_shared(self: Tensor) -> bool:
    """Whether the storage is in shared memory (``share_memory_``; CUDA tensors always are,
    as PyTorch's)."""
    if self._device.type == "cuda":
        return True
    return bool(getattr(_storage.storage_root(self), "_shared", False))


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to the template's sizes: the template gives only sizes, so it may live on
    another device (PyTorch's ``resize_as_`` checks no devices)."""
    shape = list(the_template.shape)
    return ops.aten.resize_.default(self, shape, memory_format=memory_format)  # type: ignore[no-any-return]


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """PyTorch's deprecated out-of-place ``resize``: a reshape that keeps the element count
    (its autograd ``Resize``), with its warning."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = (
        list(sizes[0])
        if len(sizes) == 1 and not isinstance(sizes[0], builtins.int)
        else list(sizes)
    )
    return _resize_keeping(self, shape)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """PyTorch's deprecated out-of-place ``resize_as``, with its warning."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize_keeping(self, list(tensor.shape))


def _resize_keeping(self: Tensor, shape: list[Any]) -> Tensor:
    n = 1
    for k in shape:
        n *= builtins.int(k)
    have = self.numel()
    if n != have:
        raise RuntimeError(
            f"requested resize to {'x'.join(str(k) for k in shape)} ({n} elements in total), "
            f"but the given tensor has a size of {'x'.join(str(k) for k in self.shape)} "
            f"({have} elements). autograd's resize can only change the shape of a given "
            "tensor, while preserving the number of elements. "
        )
    return self.contiguous().view(shape)


def stride(self: Tensor, dim: int | None = None) -> Any:
    """The strides in elements (PyTorch's ``Tensor.stride``), or one dim's."""
    got = _storage.geometry(self, "aten::stride").strides
    if dim is None:
        return got
    return got[_wrap_dim(dim, len(got))]


def storage_offset(self: Tensor) -> int:
    """Where the first element lies in the storage, in elements."""
    return _storage.geometry(self, "aten::storage_offset").offset


def is_contiguous(self: Tensor, memory_format: Any = _strides.contiguous_format) -> bool:
    """Whether the strides are those of ``memory_format`` (c10's rules: size-1 dims' strides
    do not count). A backend without strides answers for row-major order."""
    fmt = _strides.check_format(memory_format, "is_contiguous")
    if not _storage.is_strided(self):
        return fmt == "contiguous_format" or fmt == "preserve_format"
    shape = tuple(self._data.shape)
    return _strides.is_contiguous_for(shape, _storage.geometry(self, "").strides, fmt)


def data_ptr(self: Tensor) -> int:
    """The address of the first element."""
    return _storage.geometry(self, "Tensor.data_ptr").data_ptr


def new_empty_strided(
    self: Tensor,
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """``tp.empty_strided`` with ``self``'s dtype and device unless given."""
    r: Tensor = ops.aten.empty_strided.default(
        list(size),
        list(stride),
        dtype=self._dtype if dtype is None else dtype,
        device=self._device if device is None else device,
    )
    return r.requires_grad_() if requires_grad else r


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The memory this tensor and its views share (a new object each call, as PyTorch's)."""
    g = _storage.geometry(self, "Tensor.untyped_storage")
    ptr = g.storage_ptr if g.storage_nbytes else 0  # PyTorch's empty storage: no allocation
    return UntypedStorage(_storage.storage_root(self), ptr, g.storage_nbytes)


def dim_order(self: Tensor) -> tuple[int, ...]:
    """The dims from the outermost to the innermost in memory (``Tensor.dim_order``)."""
    return _strides.dim_order(tuple(self._data.shape), stride(self))


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors have the same storage, offset, sizes and strides."""
    if not isinstance(tensor, Tensor):
        raise TypeError(
            f"is_set_to(): argument 'tensor' must be Tensor, not {type(tensor).__name__}"
        )
    if tuple(self.shape) != tuple(tensor.shape) or self.device != tensor.device:
        return False
    a = _storage.geometry(self, "Tensor.is_set_to")
    b = _storage.geometry(tensor, "Tensor.is_set_to")
    return (
        a.storage_ptr == b.storage_ptr
        and a.data_ptr == b.data_ptr
        and (a.strides == b.strides or self.numel() == 0)
    )


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """False: tensorplug allocates no page-locked host memory (PyTorch's answer without an
    accelerator)."""
    return False


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """PyTorch's error without an accelerator: page-locked memory is not offered."""
    raise RuntimeError(
        "Cannot access accelerator device when none is available: tensorplug does not "
        "allocate page-locked (pinned) host memory; pass pin_memory=False (DataLoader: "
        "pin_memory=False)"
    )


def install() -> None:
    _predicates.STORAGE_CLASSES.append(UntypedStorage)  # tp.is_storage knows it
    _predicates.STORAGE_CLASSES.append(TypedStorage)
    T: Any = Tensor
    T.stride = stride
    T.storage_offset = storage_offset
    T.is_contiguous = is_contiguous
    T.data_ptr = data_ptr
    T.const_data_ptr = data_ptr
    T.new_empty_strided = new_empty_strided
    T.untyped_storage = untyped_storage
    T.dim_order = dim_order
    T.is_set_to = is_set_to
    T.is_pinned = is_pinned
    T.pin_memory = pin_memory
    T.is_shared = is_shared
    T.share_memory_ = share_memory_
    T._shared = False  # set on a storage's root by share_memory_ (a class default)
    T.storage = storage
    T.storage_type = storage_type
    T.set_ = set_
    T.resize = resize
    T.resize_as = resize_as
    T.resize_as_ = resize_as_
    T.nbytes = property(lambda self: builtins.int(self.numel()) * self._dtype.itemsize)
    T.itemsize = property(lambda self: self._dtype.itemsize)
    T.layout = property(lambda self: _strides.strided)
