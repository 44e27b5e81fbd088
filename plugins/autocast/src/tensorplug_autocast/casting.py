"""Which tensors autocast casts, and the cast cache.

Note [Eligible tensors]
~~~~~~~~~~~~~~~~~~~~~~~
Autocast casts a tensor only when it is floating point, not float64, and on the device type of
the region whose kernel runs (PyTorch's ``is_eligible``): integer and boolean tensors, double
precision tensors and tensors of another device type (a CPU 0-dim tensor in a CUDA op) pass
unchanged. Casts are calls of ``aten::_to_copy`` through the dispatcher, so autograd
differentiates them (a gradient goes back to its source in the source's dtype: a float32 leaf
gets a float32 gradient) and a tracer records them.

Note [Cast cache]
~~~~~~~~~~~~~~~~~
A float32 leaf that requires grad (a model's weight) is cast to the autocast dtype once per
outermost region, as in PyTorch: its first cast is kept in the thread's cache, later ops of the
region reuse it, and the outermost region drops the cache when it exits. Only casts to the
autocast dtype are kept (those of the lower precision ops), and ``cache_enabled=False`` turns
the cache off. Beyond PyTorch, an entry remembers the version of its source: an in-place change
of the weight (or of a view of it, which shares the counter) inside the region makes the next
op cast it again instead of reusing a stale copy. Entries are keyed by ``id()`` and keep a weak
reference to the source, so a recycled ``id`` never hits.
"""

from __future__ import annotations

import weakref
from typing import Any

import tensorplug as tp
from tensorplug.dtypes import dtype

from .mode import ThreadState

__all__ = ["ELIGIBLE", "cast", "cast_eligible", "cast_value", "eligible"]

# floating dtypes autocast may cast (Note [Eligible tensors])
ELIGIBLE = frozenset({tp.float16, tp.bfloat16, tp.float32})
_F32 = tp.float32
_to_copy = tp.ops.aten._to_copy.default


def eligible(t: Any, device_type: str) -> bool:
    return t.tp_dtype in ELIGIBLE and t.tp_device.type == device_type


def cast(t: Any, to: dtype, device_type: str, st: ThreadState, keep: bool) -> Any:
    """``t`` as ``to`` if it is eligible; ``keep``: a cast the cache may keep (Note [Cast cache])."""
    d = t.tp_dtype  # the tensor protocol: the dtype slot, without a property's cost
    if d is to or d not in ELIGIBLE or t.tp_device.type != device_type:
        return t
    return cast_eligible(t, d, to, st, keep)


def cast_eligible(t: Any, d: dtype, to: dtype, st: ThreadState, keep: bool) -> Any:
    """:func:`cast` of a tensor known to be eligible, of dtype ``d`` (not ``to``)."""
    if keep and d is _F32 and st.cache_enabled and t.requires_grad and t.is_leaf:
        return _cached(t, to, st)
    return _to_copy(t, dtype=to)


def _cached(t: Any, to: dtype, st: ThreadState) -> Any:
    cache = st.cache
    key = id(t)
    version = t.tp_version.value  # shared with views: bumped by every in-place write
    entry = cache.get(key)
    if entry is not None:
        ref, seen, out = entry
        if ref() is t and seen == version and out.dtype is to:
            return out
    out = _to_copy(t, dtype=to)
    cache[key] = (weakref.ref(t), version, out)
    return out


def cast_value(v: Any, to: dtype, device_type: str, st: ThreadState, keep: bool) -> Any:
    """:func:`cast` over a ``Tensor``, ``Tensor?`` (None) or ``Tensor[]`` argument."""
    if v is None:
        return v
    if isinstance(v, list | tuple):
        return [None if x is None else cast(x, to, device_type, st, keep) for x in v]
    return cast(v, to, device_type, st, keep)
