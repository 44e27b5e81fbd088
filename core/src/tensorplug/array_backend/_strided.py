"""Strided views and memory formats (the ``shape`` family's strided part, and the factory
``empty_strided``): ``as_strided``, ``as_strided_``, ``as_strided_scatter``, ``unfold``, and
the helpers the copies use to give a result the strides its memory format asks for.

A strided backend (``kit.strided``, Note [Strided layout] in tensorplug/_strides.py) makes
these views with its library's ``lib.stride_tricks.as_strided`` over the memory of the view's
root base, so a view shares storage exactly as PyTorch's does. On a backend without strides
``as_strided`` and its variants raise ``storage.no_strides_error``; ``unfold`` there gathers the
windows (the values of the view, as a copy), and ``empty_strided`` and the memory formats give
row-major arrays, the only order such a backend has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import _strides
from .. import dtypes as _dt
from .. import storage as _storage
from .._op_errors import torch_name
from ..device import device as Device
from ..tensor import Tensor, new_tensor
from ._checks import check_sizes, wrap_dim
from ._factories import target
from ._kit import Kernels, Kit, OpError, bind

__all__ = [
    "KERNELS",
    "build",
    "check_geometry",
    "conform",
    "element_strides",
    "span",
    "strided_array",
]


# --- helpers: arrays with given strides --------------------------------------------------------


def element_strides(a: Any) -> tuple[int, ...]:
    """The strides of a numpy or CuPy array in elements."""
    item = int(a.itemsize)
    return tuple(int(s) // item for s in a.strides)


def span(size: Sequence[int], stride: Sequence[int]) -> int:
    """The elements of storage a view of ``size`` and ``stride`` reaches from its first."""
    if any(n == 0 for n in size):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))


def strided_array(
    kit: Kit, size: Sequence[int], stride: Sequence[int], dtype: Any, device: Device
) -> Any:
    """A new uninitialized array of ``size`` whose element strides are ``stride`` (non-negative),
    over memory of its own; row-major on a backend without strides."""
    xp = kit.xp
    with kit.on(device):
        if not kit.strided or kit.as_strided is None:
            return xp.empty(tuple(size), dtype=dtype)
        flat = xp.empty((span(size, stride),), dtype=dtype)
        item = int(flat.itemsize)
        return kit.as_strided(flat, tuple(size), tuple(s * item for s in stride))


def _target(kit: Kit, a: Any, fmt: Any, op: str) -> tuple[int, ...] | None:
    """The strides a copy of ``a`` in memory format ``fmt`` gets, None for row-major (what
    every copy gives by default); PyTorch's rules (``_strides.dense_strides_like``)."""
    shape = tuple(a.shape)
    f = _strides.check_format(fmt, op)
    if f == "preserve_format":
        if not kit.strided:
            return None
        flags = getattr(a, "flags", None)
        if flags is not None and flags.c_contiguous:  # the common case, cheaply
            return None
        return _strides.dense_strides_like(shape, element_strides(a))
    if f == "contiguous_format":
        return None
    strides = _strides.strides_for(shape, f)  # raises for the wrong rank, on every backend
    return strides if kit.strided else None


def conform(kit: Kit, src: Any, out: Any, fmt: Any, op: str, device: Device) -> Any:
    """``out``, a fresh copy of ``src``'s values, laid out as memory format ``fmt`` asks given
    ``src``'s strides (a new array where its strides differ)."""
    target = _target(kit, src, fmt, op)
    if target is None:
        flags = getattr(out, "flags", None)
        if flags is None or flags.c_contiguous:
            return out
        return kit.contiguous_copy(out)
    if element_strides(out) == target:
        return out
    r = strided_array(kit, tuple(out.shape), target, out.dtype, device)
    kit.assign(r, out)
    return r


# --- as_strided --------------------------------------------------------------------------------


def check_geometry(size: Sequence[int], stride: Sequence[int], offset: int) -> None:
    if len(size) != len(stride):
        raise OpError(
            f"mismatch in length of strides and shape: sizes {list(size)}, strides {list(stride)}"
        )
    for s in stride:
        if s < 0:
            raise OpError(
                "as_strided: Negative strides are not supported at the moment, got strides: "
                f"{list(stride)}"
            )
    if offset < 0:
        raise OpError(f"Tensor: invalid storage offset {offset}")
    check_sizes(size)


def _storage_view(
    kit: Kit, self: Tensor, size: Sequence[int], stride: Sequence[int], offset: int | None,
    what: str, bounded: bool = True,
) -> Any:  # fmt: skip
    """The array of the view of ``self``'s storage with ``size``, ``stride`` and ``offset`` (in
    elements; None: ``self``'s own offset), checked against the storage's bounds (not with
    ``bounded=False``: PyTorch's meta ``as_strided`` checks none)."""
    if not kit.strided or kit.as_strided is None:
        raise _storage.no_strides_error(self, what)
    g = _storage.geometry(self, what)
    off = g.offset if offset is None else int(offset)
    check_geometry(size, stride, off)
    item = g.itemsize
    need = (off + span(size, stride)) * item if span(size, stride) else 0
    if need > g.storage_nbytes and bounded:
        raise OpError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {item} requiring a storage size of {need} are out of bounds for storage "
            f"of size {g.storage_nbytes}"
        )
    a = self._data
    if g.strides and min(g.strides) < 0:  # start from the lowest address
        a = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in g.strides)]
    # a 1-d array over the whole storage: from self's lowest element back to the storage start
    # is g.offset elements (the lowest element is the first once strides are non-negative)
    low = _lowest_offset(g, tuple(self._data.shape))
    flat = kit.as_strided(a, (g.storage_nbytes // item,), (item,))
    if low:  # numpy cannot step back from a's start: re-anchor on the root's memory
        root = _storage.storage_root(self)._data
        if root.dtype != a.dtype:
            raise OpError(
                f"{what}: a view of another dtype that does not start its storage is not "
                "supported; call .clone() first"
            )
        rs = element_strides(root)
        if rs and min(rs) < 0:
            root = root[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in rs)]
        flat = kit.as_strided(root, (g.storage_nbytes // item,), (item,))
    return kit.as_strided(flat[off:], tuple(size), tuple(s * item for s in stride))


def _lowest_offset(g: _storage.Geometry, shape: tuple[int, ...]) -> int:
    """The storage offset of the lowest address ``self`` reaches."""
    low = g.offset
    for n, s in zip(shape, g.strides, strict=True):
        if s < 0 and n > 0:
            low += s * (n - 1)
    return low


def as_strided(
    kit: Kit, self: Tensor, size: Sequence[int], stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:  # fmt: skip
    bounded = kit.device_type != "meta"  # PyTorch's meta as_strided checks no bounds
    return self._alias(
        _storage_view(kit, self, size, stride, storage_offset, "aten::as_strided", bounded)
    )


def as_strided_(
    kit: Kit, self: Tensor, size: Sequence[int], stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:  # fmt: skip
    r = _storage_view(kit, self, size, stride, storage_offset, "aten::as_strided_")
    _keep_storage(self)
    self._data = r
    return self


def _keep_storage(self: Tensor) -> None:
    """Before ``self`` takes a new geometry over its own storage: where it owns the storage, a
    hidden tensor keeps the memory's extent known, so offsets still count from where the
    storage starts."""
    if self._base is None and self._storage_base is None:
        self._storage_base = new_tensor(self._data, self._dtype, self._device, self._tp_keyset)


def as_strided_scatter(
    kit: Kit, self: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:  # fmt: skip
    """``self.clone()`` with ``src`` written into its ``as_strided`` view (PyTorch's)."""
    if not kit.strided or kit.as_strided is None:
        raise _storage.no_strides_error(self, "aten::as_strided_scatter")
    out = conform(
        kit, self._data, kit.copy(self._data), None, "aten::as_strided_scatter", self._device
    )
    t = kit.new(out, self._dtype, self._device, kit.keyset)
    view = _storage_view(kit, t, size, stride, storage_offset, "aten::as_strided_scatter")
    if tuple(view.shape) != tuple(src._data.shape):
        raise OpError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src._data.shape)}, slice size = {list(view.shape)}"
        )
    kit.assign(view, kit.cast(src._data, kit.storage[self._dtype]))
    return t


# --- unfold --------------------------------------------------------------------------------------


def unfold(kit: Kit, self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """The windows of ``size`` elements every ``step`` along ``dimension``, a new last dim."""
    a = self._data
    shape = tuple(a.shape)
    nd = len(shape)
    d = wrap_dim(dimension, max(nd, 1))
    n = shape[d] if nd else 1
    if size < 0:
        raise OpError(f"size is {size} but must be >= 0")
    if size > n:
        raise OpError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise OpError(f"step is {step} but must be > 0")
    windows = (n - size) // step + 1
    if nd == 0:
        return self._alias(kit.xp.reshape(a, (size,)))
    out_shape = (*shape[:d], windows, *shape[d + 1 :], size)
    if kit.strided and kit.as_strided is not None:
        st = a.strides
        out_strides = (*st[:d], st[d] * step, *st[d + 1 :], st[d])
        return self._alias(kit.as_strided(a, out_shape, out_strides))
    xp = kit.xp
    with kit.on(self._device):
        idx = xp.reshape(
            xp.arange(windows, dtype=xp.int64)[:, None] * step
            + xp.arange(size, dtype=xp.int64)[None, :],
            (-1,),
        )
    r = xp.take(a, idx, axis=d)
    r = xp.reshape(r, (*shape[:d], windows, size, *shape[d + 1 :]))
    return self._alias(xp.moveaxis(r, d + 1, -1) if d + 1 != nd else r)


# --- resize_, set_: a tensor takes another geometry or storage (docs/layout.md, "Storage") --------


def resize_(kit: Kit, self: Tensor, size: Sequence[int], *, memory_format: Any = None) -> Tensor:
    """PyTorch's ``resize_``: contiguous strides (or ``memory_format``'s) from the same storage
    offset, over the same storage, grown where it is too small (the old elements first; every
    tensor of the storage follows, as PyTorch's reallocation). The same sizes without a memory
    format change nothing."""
    what = "aten::resize_"
    shape = tuple(int(n) for n in size)
    check_sizes(shape)
    if not kit.strided or kit.as_strided is None:
        raise _storage.no_strides_error(self, what)
    if memory_format is None:
        if shape == tuple(self._data.shape):
            return self
        st = _strides.contiguous_strides(shape)
    else:
        fmt = _strides.check_format(memory_format, what)
        if fmt == "preserve_format":
            raise OpError("Unsupported memory format. Preserve")
        st = _strides.strides_for(shape, fmt, what)
    g = _storage.geometry(self, what)
    reach = span(shape, st)
    need = (g.offset + reach) * g.itemsize if reach else 0
    if need > g.storage_nbytes:
        _grow(kit, self, need, what)
    r = _storage_view(kit, self, shape, st, g.offset, what)
    _keep_storage(self)
    self._data = r
    return self


def _grow(kit: Kit, t: Tensor, need: int, what: str) -> None:
    """PyTorch's storage reallocation: ``t``'s storage becomes one of ``need`` bytes holding
    the old one's first; every tensor of the storage follows (:func:`storage.users`), with
    its geometry. A hidden tensor over the new memory becomes the storage's root."""
    root = _storage.storage_root(t)
    g = _storage.geometry(root, what)
    item = g.itemsize
    have = g.storage_nbytes // item
    old = _storage_view(kit, root, (have,), (1,), 0, what)
    with kit.on(root._device):
        flat = kit.xp.empty((-(-need // item),), dtype=old.dtype)
    if have:
        flat[:have] = old
    moved = [root, *_storage.users(root)]
    places = [(u, _storage.geometry(u, what)) for u in moved]
    view = kit.as_strided
    assert view is not None  # (a strided backend: the callers checked)
    for u, gu in places:
        fu = flat if u._data.dtype == flat.dtype else flat.view(u._data.dtype)
        shape = tuple(u._data.shape)
        u._data = view(fu[gu.offset :], shape, tuple(s * gu.itemsize for s in gu.strides))
    root._storage_base = new_tensor(flat, root._dtype, root._device, root._tp_keyset)


def _rebind(self: Tensor, arr: Any, root: Tensor | None) -> None:
    """``self`` becomes ``arr``, a tensor of the storage whose memory is ``root``'s (None: its
    own): no longer a view of what it was a view of."""
    self._data = arr
    if self._base is not None:
        self._base = None
    self._storage_base = root


def _check_source(self: Tensor, source: Tensor, what: str) -> None:
    if source._dtype is not self._dtype:
        raise OpError(
            f"Could not set tensor of type {torch_name(source._dtype)} to a tensor of type "
            f"{torch_name(self._dtype)}"
        )
    if source._device != self._device:
        raise OpError(
            f"Expected a Storage of device {self._device} but got {source._device} (set_ "
            "shares memory: move one of them first)"
        )


def set_source_tensor_storage_offset(
    kit: Kit, self: Tensor, source: Tensor, storage_offset: int, size: Sequence[int],
    stride: Sequence[int] = (),
) -> Tensor:  # fmt: skip
    """``self`` becomes a tensor of ``source``'s storage with the given geometry; a storage too
    small for it grows (PyTorch's reallocation, as ``resize_``'s)."""
    what = "aten::set_.source_Tensor_storage_offset"
    _check_source(self, source, what)
    shape = tuple(int(n) for n in size)
    st = tuple(int(s) for s in stride) if stride else _strides.contiguous_strides(shape)
    if len(st) != len(shape):
        raise OpError(
            f"mismatch in length of strides and shape: sizes {list(shape)}, strides {list(st)}"
        )
    check_geometry(shape, st, int(storage_offset))
    reach = span(shape, st)
    need = (int(storage_offset) + reach) * self._dtype.itemsize if reach else 0
    if kit.strided and need > _storage.geometry(source, what).storage_nbytes:
        _grow(kit, source, need, what)  # PyTorch's set_ grows the storage too
    root = _storage.storage_root(source)
    if root is self:
        _keep_storage(self)
        root = _storage.storage_root(self)
    arr = _storage_view(kit, source, shape, st, int(storage_offset), what)
    _rebind(self, arr, root)
    return self


def set_source_tensor(kit: Kit, self: Tensor, source: Tensor) -> Tensor:
    """``self`` becomes a tensor of ``source``'s storage with ``source``'s geometry; on a
    backend without strides, an alias of ``source``'s array."""
    if source is self:
        return self
    _check_source(self, source, "aten::set_.source_Tensor")
    if not kit.strided or kit.as_strided is None:
        _rebind(self, source._data, _storage.storage_root(source))
        return self
    g = _storage.geometry(source, "aten::set_.source_Tensor")
    shape = tuple(source._data.shape)
    return set_source_tensor_storage_offset(kit, self, source, g.offset, shape, g.strides)


def set_(kit: Kit, self: Tensor) -> Tensor:
    """``self`` becomes an empty 1-d tensor over a new, empty storage."""
    _rebind(self, strided_array(kit, (0,), (1,), kit.storage[self._dtype], self._device), None)
    return self


# --- empty_strided -------------------------------------------------------------------------------


def empty_strided(
    kit: Kit, size: Sequence[int], stride: Sequence[int], *, dtype: _dt.dtype | None = None,
    layout: Any = None, device: Any = None, pin_memory: bool | None = None,
) -> Tensor:  # fmt: skip
    d, dev = target(kit, dtype, device)
    check_geometry(size, stride, 0)
    arr = strided_array(kit, tuple(size), tuple(stride), kit.storage[d], dev)
    return kit.new(arr, d, dev, kit.keyset)


def dtype_view_shape(
    shape: tuple[int, ...],
    src: _dt.dtype,
    dst: _dt.dtype,
    strides: Sequence[int] | None = None,
    offset: int = 0,
) -> tuple[int, ...]:
    """The shape of ``view.dtype`` from ``src`` to ``dst``: the last dim scaled by the
    element-size ratio, with PyTorch's conditions in its order; the stride and offset ones
    only where ``strides`` are known (Meta has none: the CPU checks those)."""
    s0, s1 = src.itemsize, dst.itemsize
    if s0 == s1:
        return shape
    what = f"to view {torch_name(src)} as {torch_name(dst)} (different element sizes)"
    if not shape:
        raise OpError(f"self.dim() cannot be 0 {what}")
    if strides is not None and strides[-1] != 1:
        raise OpError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    if s1 > s0:
        ratio = s1 // s0
        if shape[-1] % ratio:
            raise OpError(f"self.size(-1) must be divisible by {ratio} {what}, but got {shape[-1]}")
        if strides is not None:
            if offset % ratio:
                raise OpError(
                    f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}"
                )
            for k, st in enumerate(strides[:-1]):
                if st % ratio:
                    raise OpError(
                        f"self.stride({k}) must be divisible by {ratio} {what}, but got {st}"
                    )
    return (*shape[:-1], shape[-1] * s0 // s1)


def view_dtype(kit: Kit, self: Tensor, dtype: _dt.dtype) -> Tensor:
    """``self``'s memory read as ``dtype``: the same shape for an equal element size, else the
    last dim scaled by the size ratio, with PyTorch's conditions (a strided backend only)."""
    d = self._dtype
    if dtype is d:
        return self._alias(self._data)
    if not kit.strided:
        raise _storage.no_strides_error(self, "aten::view.dtype")
    a = self._data
    shape = tuple(a.shape)
    if d.itemsize != dtype.itemsize and shape:
        g = _storage.geometry(self, "aten::view.dtype")
        shape = dtype_view_shape(shape, d, dtype, g.strides, g.offset)
    else:
        shape = dtype_view_shape(shape, d, dtype)
    if a.size == 0 and d.itemsize != dtype.itemsize:  # numpy refuses to re-view these
        return self._alias(kit.xp.empty(shape, dtype=kit.storage[dtype]), dtype)
    return self._alias(a.view(kit.storage[dtype]), dtype)


KERNELS: dict[str, Callable[..., Any]] = {
    "view.dtype": view_dtype,
    "as_strided": as_strided,
    "as_strided_": as_strided_,
    "as_strided_scatter": as_strided_scatter,
    "unfold": unfold,
    "empty_strided": empty_strided,
    "resize_": resize_,
    "set_.source_Tensor_storage_offset": set_source_tensor_storage_offset,
    "set_.source_Tensor": set_source_tensor,
    "set_": set_,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
