"""``repr`` of a Tensor, in PyTorch's format, and ``set_printoptions`` (internal; the package
re-exports ``set_printoptions``).

The rules are PyTorch's (``torch/_tensor_str.py``): floating values print with ``precision``
decimals (4), or with no decimals and a trailing dot when all are integral (``tensor([1.,
2.])``), or in scientific notation when the nonzero finite values span more than 3 orders of
magnitude, pass 1e8 or (not integral) fall below 1e-4 (``sci_mode`` forces it on or off).
Tensors of more than ``threshold`` elements (1000) are summarized with ``...``, ``edgeitems``
(3) items at each end of each dimension; rows wrap at ``linewidth`` (80) characters, and so
do the suffixes: the dtype unless it is a default one (the default float dtype, int64, bool),
the device unless it is the CPU, and what plugins add (``requires_grad=True``,
``grad_fn=<...>``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import dtypes as _dtypes

__all__ = ["PrintOptions", "set_printoptions", "tensor_repr", "suffix_hooks"]


@dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()

_PROFILES = {
    "default": PrintOptions(),
    "short": PrintOptions(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": PrintOptions(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print, as ``torch.set_printoptions``: ``profile`` ("default", "short",
    "full") first, then each option given; ``sci_mode=None`` chooses per tensor. The settings
    are process-wide."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}"
            )
        p = _PROFILES[profile]
        PRINT_OPTS.precision, PRINT_OPTS.threshold = p.precision, p.threshold
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = p.edgeitems, p.linewidth
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


# Plugins append functions tensor -> list of "name=value" strings (autograd's requires_grad).
suffix_hooks: list[Callable[[Any], list[str]]] = []


def tensor_repr(t: Any) -> str:
    from .values import host_list  # no value-read hooks: printing is not a data read

    if t.device.type == "meta":  # no values: the size instead, as PyTorch prints it
        meta = ["device='meta'", f"size={tuple(t.shape)}"]
        if t.dtype is not _dtypes.get_default_dtype():
            meta.append(f"dtype={t.dtype}")
        meta.extend(s for hook in suffix_hooks for s in hook(t))
        return "tensor(..., " + ", ".join(meta) + ")"
    values = host_list(t)
    shape = tuple(t.shape)
    summarize = t.numel() > PRINT_OPTS.threshold
    flat = list(_flatten(values, shape, summarize))
    prefix = "tensor("
    if t.dtype.is_complex:
        fmt: Any = (_Formatter(t.dtype, [x.real for x in flat]),
                    _Formatter(t.dtype, [x.imag for x in flat]))  # fmt: skip
    else:
        fmt = (_Formatter(t.dtype, flat), None)
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
    return _add_suffixes(prefix + body, suffix, len(prefix))


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """The suffixes after the values, each on a new line where it would pass ``linewidth``."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            parts.append(", " + s)
            last += len(s) + 2
    parts.append(")")
    return "".join(parts)


def _is_default(d: _dtypes.dtype) -> bool:
    default = _dtypes.get_default_dtype()
    return d is default or d is default.to_complex() or d is _dtypes.int64 or d is _dtypes.bool


def _flatten(v: Any, shape: tuple[int, ...], summarize: bool) -> Any:
    if not shape:
        yield v
        return
    items = v
    edge = PRINT_OPTS.edgeitems
    if summarize and len(items) > 2 * edge:
        items = [*items[:edge], *items[len(items) - edge :]] if edge else []
    for x in items:
        yield from _flatten(x, shape[1:], summarize)


class _Formatter:
    """How the values of one dtype print, and their width (PyTorch's ``_Formatter``)."""

    def __init__(self, dtype: _dtypes.dtype, flat: list[Any]) -> None:
        self.floating = dtype.is_floating_point or dtype.is_complex
        self.bool = dtype is _dtypes.bool
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        p = PRINT_OPTS.precision
        if not self.floating:
            for x in flat:
                self.width = max(self.width, len(self._plain(x)))
            return
        nonzero = [x for x in flat if math.isfinite(x) and x != 0]
        if nonzero:
            absolute = [abs(x) for x in nonzero]
            mx, mn = max(absolute), min(absolute)
            self.int_mode = all(x == math.ceil(x) for x in nonzero)
            opt = PRINT_OPTS.sci_mode
            self.sci_mode = (mx / mn > 1000.0 or mx > 1.0e8 or mn < 1.0e-4) if opt is None else opt
            if self.sci_mode:
                strs = [f"{x:.{p}e}" for x in nonzero]
            elif self.int_mode:  # the trailing dot of a float counts
                strs = [f"{x:.0f}." for x in nonzero]
            else:
                strs = [f"{x:.{p}f}" for x in nonzero]
            self.width = max(self.width, *(len(x) for x in strs))

    def _plain(self, x: Any) -> str:
        return ("True" if x else "False") if self.bool else str(x)

    def __call__(self, x: Any) -> str:
        if not self.floating:
            s = self._plain(x)
        elif self.sci_mode:
            s = f"{x:{self.width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            s = f"{x:.0f}" + ("" if math.isinf(x) or math.isnan(x) else ".")
        else:
            s = f"{x:.{PRINT_OPTS.precision}f}"
        return s.rjust(self.width)


def _value(x: Any, fmt: tuple[_Formatter, _Formatter | None]) -> str:
    real, imag = fmt
    if imag is None:
        return real(x)
    re = real(x.real)
    im = (imag(x.imag) + "j").lstrip()
    return re + im if im[0] in "+-" else re + "+" + im


def _format(
    v: Any,
    shape: tuple[int, ...],
    fmt: tuple[_Formatter, _Formatter | None],
    indent: int,
    summarize: bool,
) -> str:
    edge = PRINT_OPTS.edgeitems
    if not shape:
        return _value(v, fmt).strip()
    if len(shape) == 1:
        real, imag = fmt
        element = real.width + 2 + (imag.width + 1 if imag is not None else 0)
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element))
        if summarize and not edge:
            items = ["..."]
        elif summarize and len(v) > 2 * edge:
            items = [*(_value(x, fmt) for x in v[:edge]), " ...",
                     *(_value(x, fmt) for x in v[len(v) - edge :])]  # fmt: skip
        else:
            items = [_value(x, fmt) for x in v]
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and len(v) > 2 * edge:
        rows = [*v[:edge], None, *v[len(v) - edge :]]
    else:
        rows = list(v)
    parts = [
        "..." if r is None else _format(r, shape[1:], fmt, indent + 1, summarize) for r in rows
    ]
    sep = "," + "\n" * (len(shape) - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"
