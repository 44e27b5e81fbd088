"""What a plugin may ask and do about the memory behind tensors (part of the plugin API).

Tensors have no strides or storage objects of their own (DESIGN §9): a backend's arrays hold
the data, and the backend's storage (``registry.add_storage_backend``; the one that
``tensorplug.array_backend.register`` adds for array-API libraries) may describe their memory
through an optional method ``memory_layout(array) -> (address, strides, itemsize) | None``, in
bytes. These functions ask it, so a plugin needs no array library of its own to reason about
views: the autograd plugin finds where a view's elements lie in its base this way, with
tensorplug operators for the index arithmetic.

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
from .tensor import Tensor, new_tensor

__all__ = ["MemoryLayout", "alias", "memory_layout", "views_of"]


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
