"""The ``factories`` family of the composites: the ``*_like`` factories (zeros, ones, empty,
full; the random ones are the ``random`` family's; the copies contiguous and zero_ are the
``pointwise`` family's)."""

from __future__ import annotations

from typing import Any

from .. import _strides
from .. import storage as _storage
from ..ops import ops

aten = ops.aten


# --- *_like factories -----------------------------------------------------------------------


def _like(self: Any, dtype: Any, device: Any) -> dict[str, Any]:
    return {"dtype": dtype or self.dtype, "device": device or self.device}


def _in_layout(self: Any, out: Any, memory_format: Any, op: str) -> Any:
    """``out`` (row-major, new) laid out as ``memory_format`` asks given ``self``'s strides
    (PyTorch's ``*_like`` rule: preserve_format keeps dense strides, Note [Strided layout] in
    _strides.py); ``out`` itself where that is row-major or the backend has no strides."""
    fmt = _strides.check_format(memory_format, op)
    if fmt == "contiguous_format":
        return out
    flags = getattr(self._data, "flags", None)
    if fmt == "preserve_format" and flags is not None and flags.c_contiguous:
        return out  # the common case, cheaply
    shape = tuple(self.shape)
    if fmt != "preserve_format":
        strides = _strides.strides_for(shape, fmt, op)  # its rank error on every backend
    if not (_storage.is_strided(self) and _storage.is_strided(out)):
        return out
    if fmt == "preserve_format":
        if self.is_contiguous():
            return out
        strides = _strides.dense_strides_like(shape, self.stride())
    if strides == _strides.contiguous_strides(shape):
        return out
    r = aten.empty_strided.default(list(shape), list(strides), dtype=out.dtype, device=out.device)
    return aten.copy_.default(r, out)


def zeros_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.zeros.default(list(self.shape), **_like(self, dtype, device))
    return _in_layout(self, out, memory_format, "zeros_like")


def ones_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.ones.default(list(self.shape), **_like(self, dtype, device))
    return _in_layout(self, out, memory_format, "ones_like")


def empty_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.empty.memory_format(list(self.shape), **_like(self, dtype, device))
    return _in_layout(self, out, memory_format, "empty_like")


def full_like(
    self: Any,
    fill_value: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.full.default(list(self.shape), fill_value, **_like(self, dtype, device))
    return _in_layout(self, out, memory_format, "full_like")
