"""The ``factories`` family of the composites: the ``*_like`` factories (zeros, ones, empty,
full; the random ones are the ``random`` family's; the copies contiguous and zero_ are the
``pointwise`` family's)."""

from __future__ import annotations

from typing import Any

from ..ops import ops

aten = ops.aten


# --- *_like factories -----------------------------------------------------------------------


def _like(self: Any, dtype: Any, device: Any) -> dict[str, Any]:
    return {"dtype": dtype or self.dtype, "device": device or self.device}


def zeros_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    return aten.zeros.default(list(self.shape), **_like(self, dtype, device))


def ones_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    return aten.ones.default(list(self.shape), **_like(self, dtype, device))


def empty_like(
    self: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
    memory_format: Any = None,
) -> Any:
    return aten.empty.memory_format(list(self.shape), **_like(self, dtype, device))


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
    return aten.full.default(list(self.shape), fill_value, **_like(self, dtype, device))


def new_empty_strided(
    self: Any,
    size: Any,
    stride: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
) -> Any:
    """An uninitialized tensor of ``size`` with ``self``'s dtype and device unless given.
    ``stride`` is checked for length and otherwise not kept: a backend's new array is
    contiguous (row-major)."""
    if len(stride) != len(size):
        raise RuntimeError(
            f"aten::new_empty_strided: dimensionality of sizes ({len(size)}) must match "
            f"dimensionality of strides ({len(stride)})"
        )
    return aten.empty.memory_format(
        list(size),
        dtype=dtype if dtype is not None else self.dtype,
        layout=layout,
        device=device if device is not None else self.device,
        pin_memory=pin_memory,
    )
