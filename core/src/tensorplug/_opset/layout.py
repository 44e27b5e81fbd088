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
from typing import Any

from .. import _strides
from .. import storage as _storage
from ..device import device as Device
from ..ops import ops
from ..tensor import Tensor, _wrap_dim
from . import predicates as _predicates

__all__ = ["UntypedStorage", "install"]


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
        return False

    def __repr__(self) -> str:
        return (
            f"tensorplug.UntypedStorage(data_ptr={self._ptr:#x}, nbytes={self._nbytes}, "
            f"device={self.device})"
        )


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


def is_shared(self: Tensor) -> bool:
    """False: tensors live in process-private memory (``share_memory_`` is not offered)."""
    return False


def install() -> None:
    _predicates.STORAGE_CLASSES.append(UntypedStorage)  # tp.is_storage knows it
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
    T.nbytes = property(lambda self: builtins.int(self.numel()) * self._dtype.itemsize)
    T.itemsize = property(lambda self: self._dtype.itemsize)
    T.layout = property(lambda self: _strides.strided)
