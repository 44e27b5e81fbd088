"""The ``random`` family of the composites: rand_like and randn_like, the random ``*_like``
factories (arguments as the other ``*_like``'s, in factories.py)."""

from __future__ import annotations

from typing import Any

from ..ops import ops
from .factories import _like

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
    return aten.rand.default(list(self.shape), **_like(self, dtype, device))


def randn_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    return aten.randn.default(list(self.shape), **_like(self, dtype, device))


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
    return aten.randint.default(high, list(self.shape), **_like(self, dtype, device))


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
    return aten.randint.low(low, high, list(self.shape), **_like(self, dtype, device))
