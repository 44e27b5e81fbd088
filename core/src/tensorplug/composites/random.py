"""The ``random`` family of the composites: rand_like and randn_like, the random ``*_like``
factories (arguments as the other ``*_like``'s, in factories.py)."""

from __future__ import annotations

from typing import Any

from ..ops import ops
from .factories import _in_layout, _sizes

aten = ops.aten


def rand_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.rand.default(_sizes(self), dtype=dtype or self._dtype, device=device or self._device)
    return _in_layout(self, out, memory_format, "rand_like")


def randn_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.randn.default(
        _sizes(self), dtype=dtype or self._dtype, device=device or self._device
    )
    return _in_layout(self, out, memory_format, "randn_like")


# --- randint_like -----------------------------------------------------------------------------


def randint_like(
    self: Any,
    high: int,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.randint.default(
        high, _sizes(self), dtype=dtype or self._dtype, device=device or self._device
    )
    return _in_layout(self, out, memory_format, "randint_like")


def randint_like_low(
    self: Any,
    low: int,
    high: int,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    out = aten.randint.low(
        low, high, _sizes(self), dtype=dtype or self._dtype, device=device or self._device
    )
    return _in_layout(self, out, memory_format, "randint_like")
