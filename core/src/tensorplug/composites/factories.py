"""The ``factories`` family of the composites: the ``*_like`` factories (zeros, ones, empty,
full; the random ones are the ``random`` family's; the copies contiguous and zero_ are the
``pointwise`` family's)."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from .. import _strides
from .. import dtypes as _dt
from .. import storage as _storage
from ..ops import ops
from ..tensor import Tensor

aten = ops.aten


# --- *_like factories -----------------------------------------------------------------------


# Note [*_like factories]
# ~~~~~~~~~~~~~~~~~~~~~~~
# ``zeros_like(x)`` is ``zeros(x's sizes, dtype=, device=)`` (each option ``x``'s unless
# given), laid out as ``memory_format`` asks. The sizes pass as the array's shape tuple, the
# form an ``int[]`` binds to (a plain Tensor's ``shape`` is that tuple as a ``Size``; a list
# of it would be made and turned back into a tuple by the call), and the options as keywords
# of their own, with no dict built and unpacked. A subclass is asked for its ``shape``, which
# it may define. The common layout, preserve_format of a row-major array, is settled before
# anything else.


def _sizes(self: Any) -> Any:
    """``self``'s sizes as the factory call takes them (Note [*_like factories])."""
    return self._data.shape if type(self) is Tensor else list(self.shape)


def _in_layout(self: Any, out: Any, memory_format: Any, op: str) -> Any:
    """``out`` (row-major, new) laid out as ``memory_format`` asks given ``self``'s strides
    (PyTorch's ``*_like`` rule: preserve_format keeps dense strides, Note [Strided layout] in
    _strides.py); ``out`` itself where that is row-major or the backend has no strides."""
    if memory_format is None:  # preserve_format of a row-major array: the common case
        flags = getattr(self._data, "flags", None)
        if flags is not None and flags.c_contiguous:
            return out
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
    out = aten.zeros.default(
        _sizes(self),
        dtype=dtype or self._dtype,
        device=device or self._device,
    )
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
    out = aten.ones.default(
        _sizes(self),
        dtype=dtype or self._dtype,
        device=device or self._device,
    )
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
    out = aten.empty.memory_format(
        _sizes(self),
        dtype=dtype or self._dtype,
        device=device or self._device,
    )
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
    out = aten.full.default(
        _sizes(self),
        fill_value,
        dtype=dtype or self._dtype,
        device=device or self._device,
    )
    return _in_layout(self, out, memory_format, "full_like")


# --- range: deprecated in PyTorch ---------------------------------------------------------------

_RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its behavior "
    "is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
    "values in [start, end)."
)


def _user_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning of the caller to the first frame outside
    tensorplug and its plugins (the user's call of ``tp.range``, however it was dispatched)."""
    frame = sys._getframe(2)  # the caller of the function that warns
    level = 2
    while frame is not None and _is_ours(frame):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def _is_ours(frame: Any) -> bool:
    """A frame of tensorplug's modules, its plugins' or its generated code (``<tensorplug...``)."""
    name = str(frame.f_globals.get("__name__", ""))
    return name.startswith("tensorplug") or frame.f_code.co_filename.startswith("<tensorplug")


def range_step(
    start: Any,
    end: Any,
    step: Any = 1,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
) -> Any:
    """``start, start + step, ...`` up to ``end`` included, in the default dtype unless
    ``dtype`` says otherwise, with PyTorch's deprecation warning (tensorplug's message says
    torch.range, as PyTorch's, so filters written for it apply)."""
    warnings.warn(
        _RANGE_DEPRECATED.replace("torch.", "tensorplug."),
        UserWarning,
        stacklevel=_user_stacklevel(),
    )
    if step == 0:
        raise RuntimeError("aten::range.step: step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError(
            "aten::range.step: upper bound and lower bound inconsistent with step sign"
        )
    d = dtype or _dt.get_default_dtype()
    n = int((end - start) / step) + 1
    wide = _dt.float64 if d.is_floating_point or d.is_complex else _dt.int64
    i = aten.arange.default(n, dtype=wide, device=device)
    values = aten.add.Scalar(aten.mul.Scalar(i, step), start)
    return aten._to_copy.default(values, dtype=d)


def range_default(
    start: Any,
    end: Any,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: Any = None,
) -> Any:
    return range_step(start, end, 1, dtype=dtype, device=device)


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
    """An uninitialized tensor of ``size`` and ``stride`` with ``self``'s dtype and device
    unless given (``empty_strided``: Note [Strided layout] in tensorplug/_strides.py)."""
    if len(stride) != len(size):
        raise RuntimeError(
            f"aten::new_empty_strided: dimensionality of sizes ({len(size)}) must match "
            f"dimensionality of strides ({len(stride)})"
        )
    return aten.empty_strided.default(
        list(size),
        list(stride),
        dtype=dtype if dtype is not None else self.dtype,
        layout=layout,
        device=device if device is not None else self.device,
        pin_memory=pin_memory,
    )
