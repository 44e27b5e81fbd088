"""``repr`` of a Tensor, in PyTorch's format (internal).

Floating point values print with 4 decimals (``tensor([1.5000, 2.0000])``), or with no decimals
and a trailing dot when all are integral (``tensor([1., 2.])``), or in scientific notation when
they span more than 3 orders of magnitude or leave [1e-4, 1e8). Large tensors are summarized
with ``...`` (more than 1000 elements: 3 items at each end of each dimension). The suffix
names the dtype unless it is a default one (the default float dtype, int64, bool), the device
unless it is the CPU, and what plugins add (``requires_grad=True``, ``grad_fn=<...>``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import dtypes as _dtypes

__all__ = ["tensor_repr", "suffix_hooks"]

THRESHOLD = 1000
EDGE = 3

# Plugins append functions tensor -> list of "name=value" strings (autograd's requires_grad).
suffix_hooks: list[Callable[[Any], list[str]]] = []


def tensor_repr(t: Any) -> str:
    from ._values import host_list  # no value-read hooks: printing is not a data read

    if t.device.type == "meta":  # no values: the size instead, as PyTorch prints it
        meta = ["device='meta'", f"size={tuple(t.shape)}"]
        if t.dtype is not _dtypes.get_default_dtype():
            meta.append(f"dtype={t.dtype}")
        meta.extend(s for hook in suffix_hooks for s in hook(t))
        return "tensor(..., " + ", ".join(meta) + ")"
    values = host_list(t)
    shape = tuple(t.shape)
    summarize = t.numel() > THRESHOLD
    flat = list(_flatten(values, shape, summarize))
    fmt = _formatter(t.dtype, flat)
    prefix = "tensor("
    body = _format(values, shape, fmt, len(prefix), summarize)
    suffix: list[str] = []
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if t.numel() == 0 and t.ndim != 1:
        suffix.append(f"size={tuple(shape)}")
    if not _is_default(t.dtype):
        suffix.append(f"dtype={t.dtype}")
    for hook in suffix_hooks:
        suffix.extend(hook(t))
    return prefix + body + "".join(", " + s for s in suffix) + ")"


def _is_default(d: _dtypes.dtype) -> bool:
    return d is _dtypes.get_default_dtype() or d is _dtypes.int64 or d is _dtypes.bool


def _flatten(v: Any, shape: tuple[int, ...], summarize: bool) -> Any:
    if not shape:
        yield v
        return
    items = v
    if summarize and len(items) > 2 * EDGE:
        items = [*items[:EDGE], *items[-EDGE:]]
    for x in items:
        yield from _flatten(x, shape[1:], summarize)


def _formatter(dtype: _dtypes.dtype, flat: list[Any]) -> Callable[[Any], str]:
    if dtype is _dtypes.bool:
        width = 5 if any(not x for x in flat) else 4
        return lambda x: ("True" if x else "False").rjust(width)
    if not (dtype.is_floating_point or dtype.is_complex):
        width = max((len(str(x)) for x in flat), default=1)
        return lambda x: str(x).rjust(width)
    if dtype.is_complex:
        return lambda x: f"{x.real:.4f}{x.imag:+.4f}j"
    finite = [abs(x) for x in flat if math.isfinite(x)]
    nonzero = [x for x in finite if x != 0]
    int_mode = all(x == math.floor(x) for x in finite)
    sci = False
    if nonzero:
        mx, mn = max(nonzero), min(nonzero)
        if int_mode:
            sci = mx > 1e8
        else:
            sci = mx / mn > 1000.0 or mx > 1e8 or mn < 1e-4
    if sci:
        strs = [f"{x:.4e}" for x in flat]
        conv: Callable[[Any], str] = lambda x: _special(x) or f"{x:.4e}"  # noqa: E731
    elif int_mode:
        conv = lambda x: _special(x) or f"{x:.0f}."  # noqa: E731
    else:
        conv = lambda x: _special(x) or f"{x:.4f}"  # noqa: E731
    strs = [conv(x) for x in flat]
    width = max((len(s) for s in strs), default=1)
    return lambda x: conv(x).rjust(width)


def _special(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return ""


def _format(
    v: Any, shape: tuple[int, ...], fmt: Callable[[Any], str], indent: int, summarize: bool
) -> str:
    if not shape:
        return fmt(v).strip()
    if len(shape) == 1:
        items = [fmt(x) for x in v]
        if summarize and len(items) > 2 * EDGE:
            items = [*items[:EDGE], " ...", *items[-EDGE:]]
        return "[" + ", ".join(items) + "]"
    parts = [_format(x, shape[1:], fmt, indent + 1, summarize) for x in v]
    if summarize and len(parts) > 2 * EDGE:
        parts = [*parts[:EDGE], "...", *parts[-EDGE:]]
    sep = "," + "\n" * (len(shape) - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"
