"""The ``fft`` family of the meta namespace: ``xp.fft``, the array API's fft extension on meta
arrays (the shapes and dtypes of ``fft``, ``ifft``, ``rfft``, ``irfft`` and their ``n``-d forms,
Note [Meta arrays] in _array.py), for the kernels of array_backend/_fft.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from .. import dtypes as _dt
from ._array import MetaArray, xp


def _complex(d: _dt.dtype) -> _dt.dtype:
    if d.is_complex:
        return d
    return _dt.complex128 if d is _dt.float64 else _dt.complex64


def _real(d: _dt.dtype) -> _dt.dtype:
    return d.to_real() if d.is_complex else d


def _axes(a: MetaArray, axes: Sequence[int] | None) -> list[int]:
    return [x % a.ndim for x in axes] if axes is not None else list(range(a.ndim))


def _with(shape: tuple[int, ...], changes: dict[int, int]) -> tuple[int, ...]:
    return tuple(changes.get(i, n) for i, n in enumerate(shape))


def _c2c(a: MetaArray, n: int | None = None, axis: int = -1, norm: str = "backward") -> MetaArray:
    ax = axis % a.ndim
    return MetaArray(_with(a.shape, {ax: a.shape[ax] if n is None else n}), _complex(a.dtype))


def _rfft(a: MetaArray, n: int | None = None, axis: int = -1, norm: str = "backward") -> MetaArray:
    ax = axis % a.ndim
    m = a.shape[ax] if n is None else n
    return MetaArray(_with(a.shape, {ax: m // 2 + 1}), _complex(a.dtype))


def _irfft(a: MetaArray, n: int | None = None, axis: int = -1, norm: str = "backward") -> MetaArray:
    ax = axis % a.ndim
    m = 2 * (a.shape[ax] - 1) if n is None else n
    return MetaArray(_with(a.shape, {ax: m}), _real(a.dtype))


def _c2c_n(
    a: MetaArray,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> MetaArray:
    ax = _axes(a, axes)
    sizes = dict(zip(ax, s, strict=True)) if s is not None else {}
    return MetaArray(_with(a.shape, sizes), _complex(a.dtype))


def _rfftn(
    a: MetaArray,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> MetaArray:
    ax = _axes(a, axes)
    sizes = dict(zip(ax, s, strict=True)) if s is not None else {}
    last = sizes.get(ax[-1], a.shape[ax[-1]])
    sizes[ax[-1]] = last // 2 + 1
    return MetaArray(_with(a.shape, sizes), _complex(a.dtype))


def _irfftn(
    a: MetaArray,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> MetaArray:
    ax = _axes(a, axes)
    sizes = dict(zip(ax, s, strict=True)) if s is not None else {}
    sizes.setdefault(ax[-1], 2 * (a.shape[ax[-1]] - 1))
    return MetaArray(_with(a.shape, sizes), _real(a.dtype))


fft: Any = SimpleNamespace(
    fft=_c2c, ifft=_c2c, rfft=_rfft, irfft=_irfft,
    fftn=_c2c_n, ifftn=_c2c_n, rfftn=_rfftn, irfftn=_irfftn,
)  # fmt: skip
xp.fft = fft
