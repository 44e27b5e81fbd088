"""What a plugin may ask and do about the memory behind tensors (part of the plugin API).

Tensors have no strides or storage objects of their own (DESIGN §9): a backend's arrays hold
the data, and the backend's storage (``registry.add_storage_backend``; the one that
``tensorplug.array_backend.register`` adds for array-API libraries) may describe their memory
through an optional method ``memory_layout(array) -> (address, strides, itemsize) | None``, in
bytes. These functions ask it, so a plugin needs no array library of its own to reason about
views: the autograd plugin finds where a view's elements lie in its base this way, with
tensorplug operators for the index arithmetic. On a strided backend (``register(strided=)``)
:func:`geometry` gives PyTorch's view of the same facts: strides and storage offset in
elements, and the storage of the view's root base (Note [Strided layout] in _strides.py).

Usage::

    from tensorplug import storage
    base = tp.zeros(4, 3)
    v = base[1:, ::2]
    storage.memory_layout(v)      # MemoryLayout(address=..., strides=(24, 16), itemsize=8)
    storage.views_of(base)        # [v]
    storage.alias(base, base.tp_keyset)   # the same array and version counter, not a view
"""

from __future__ import annotations

import gc
from typing import NamedTuple

from . import _backends
from .tensor import LogicalShape, Tensor, new_tensor

__all__ = [
    "Geometry",
    "MemoryLayout",
    "alias",
    "geometry",
    "is_strided",
    "memory_layout",
    "no_strides_error",
    "storage_root",
    "users",
    "views_of",
]


class MemoryLayout(NamedTuple):
    """Where a tensor's elements lie in memory, in bytes."""

    address: int  # of its first element (index 0 in every dimension)
    strides: tuple[int, ...]  # from one element to the next along each dimension
    itemsize: int  # of one element


def alias(t: Tensor, keyset: int) -> Tensor:
    """A new tensor over ``t``'s array, dtype and device with key set ``keyset``, sharing
    ``t``'s version counter: a write through either is seen by both, and by every tensor that
    saved one of them. It is not a view (its ``tp_base`` is None): what a plugin keeps instead
    of ``t`` itself, e.g. the autograd plugin's saved outputs, without their autograd keys."""
    a = new_tensor(t._data, t._dtype, t._device, keyset)
    a._vc = t._tp_version
    return a


def memory_layout(t: Tensor) -> MemoryLayout | None:
    """The memory layout of ``t``'s array, as its backend's storage describes it; None when the
    storage cannot (an array library without an array interface, a backend without the
    method). Two tensors share memory when their elements' address ranges overlap."""
    describe = getattr(_backends.for_device_type(t._device.type), "memory_layout", None)
    got = None if describe is None else describe(t._data)
    return None if got is None else MemoryLayout(*got)


def views_of(base: Tensor) -> list[Tensor]:
    """The live tensors that are views of ``base`` (whose ``tp_base`` is ``base``).

    Views do not register with their base (that keeps making them free), so this asks the
    garbage collector which objects refer to ``base``: it costs milliseconds. A plugin asks
    rarely, when it knows there are views: they share ``base``'s version counter
    (``base.tp_version``), so its reference count tells.
    """
    views = []
    for r in gc.get_referrers(base):
        if type(r) is dict and r.get("_base") is base:  # Pythons that keep __dict__ apart
            r = next((o for o in gc.get_referrers(r) if getattr(o, "__dict__", None) is r), None)
        if isinstance(r, Tensor) and r is not base and r._base is base:
            views.append(r)
    return views


def users(root: Tensor) -> list[Tensor]:
    """The live tensors whose storage is ``root``'s memory (:func:`storage_root`): its views,
    the tensors ``detach()`` gave, and theirs. Asks the garbage collector, as
    :func:`views_of` does (milliseconds): for the rare operations that move a storage
    (``resize_`` growing it, ``share_memory_``), which every tensor of it follows."""
    out: list[Tensor] = []
    seen = {id(root)}
    todo = [root]
    while todo:
        up = todo.pop()
        for r in gc.get_referrers(up):
            if type(r) is dict:  # Pythons that keep __dict__ apart
                r = next(
                    (o for o in gc.get_referrers(r) if getattr(o, "__dict__", None) is r), None
                )
            if (
                isinstance(r, Tensor)
                and id(r) not in seen
                and (r._base is up or r._storage_base is up)
            ):
                seen.add(id(r))
                out.append(r)
                todo.append(r)
    return out


# --- strided layout (Note [Strided layout] in _strides.py) ------------------------------------


class Geometry(NamedTuple):
    """A strided tensor's place in its storage, PyTorch's terms: in elements of its dtype,
    except ``storage_ptr`` and ``storage_nbytes``, in bytes."""

    strides: tuple[int, ...]
    offset: int  # storage_offset(), in elements
    data_ptr: int  # the address of the first element
    storage_ptr: int  # the address where the storage starts
    storage_nbytes: int
    itemsize: int


def is_strided(t: Tensor) -> bool:
    """Whether ``t``'s backend declares its arrays strided (``array_backend.register(...,
    strided=)``) and ``t`` has data of its own (it is no wrapper)."""
    if type(t._data) is LogicalShape:
        return False
    return bool(getattr(_backends.for_device_type(t._device.type), "strided", False))


def storage_root(t: Tensor) -> Tensor:
    """The tensor whose memory is ``t``'s storage: the root base of a view, the tensor a
    ``detach()`` was taken of, else ``t`` itself."""
    while True:
        up = t._base
        if up is None:
            up = t._storage_base
        if up is None:
            return t
        t = up  # (a view of a tensor that took another storage: resize_, set_, as_strided_)


def _extent(lay: MemoryLayout, shape: tuple[int, ...]) -> tuple[int, int]:
    """``(lowest address, bytes spanned)`` of an array's elements."""
    lo, span = lay.address, lay.itemsize
    for n, s in zip(shape, lay.strides, strict=True):
        if n == 0:
            return lay.address, 0
        if s < 0:
            lo += s * (n - 1)
        span += abs(s) * (n - 1)
    return lo, span


def no_strides_error(t: Tensor, what: str) -> RuntimeError:
    """What asking a tensor without strides for ``what`` raises (Note [Strided layout])."""
    if type(t._data) is LogicalShape:
        return RuntimeError(
            f"{what}: this tensor is a wrapper (a {type(t).__name__} of another plugin, e.g. "
            "inside vmap) and has no storage of its own; ask outside the transform"
        )
    store = _backends.for_device_type(t._device.type)
    key = getattr(store, "key_name", t._device.type)
    plugin = getattr(store, "plugin", "?")
    return RuntimeError(
        f"{what}: tensors on the {key} backend ({plugin}) have no strides: its arrays "
        f"({type(t._data).__module__}.{type(t._data).__name__}) are not strided, so strides, "
        "storage offsets, data pointers and as_strided views do not exist there. Use "
        "reshape/permute/expand instead, or move the tensor to a strided backend "
        "(t.to('cpu')); a backend whose arrays are strided declares it with "
        "tensorplug.array_backend.register(..., strided=True)"
    )


def geometry(t: Tensor, what: str) -> Geometry:
    """Where ``t`` lies in its storage (Note [Strided layout]); ``what`` names the caller in
    the error a tensor without strides raises."""
    lay = memory_layout(t) if is_strided(t) else None
    if lay is None:
        raise no_strides_error(t, what)
    item = lay.itemsize
    shape = tuple(t._data.shape)
    root = storage_root(t)
    start, span = _extent(lay, shape)
    if root is not t:
        rlay = memory_layout(root)
        if rlay is not None:
            rstart, rspan = _extent(rlay, tuple(root._data.shape))
            # a view starts within its root's memory (it may reach past it only on Meta,
            # whose as_strided checks no bounds, as PyTorch's meta as_strided does not)
            if rstart <= start and (
                start + span <= rstart + rspan or rspan == 0 or lay.address < rstart + rspan
            ):
                start, span = rstart, rspan
    strides = tuple(s // item for s in lay.strides)
    return Geometry(strides, (lay.address - start) // item, lay.address, start, span, item)
