"""The ``factories`` family of the meta namespace: empty, zeros, ones, full, the ``*_like``
functions, arange, eye, tril_indices and triu_indices (Note [Meta arrays] in _array.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from ._array import (
    MetaArray,
    MetaValueRead,
    _api,
    _as_dtype,
    _elementwise,
    _f64,
    _i64,
    _scalar_default,
    _shape_of,
    xp,
)


def _creator(default: _dt.dtype) -> Any:
    def make(shape: Any, *, dtype: Any = None, device: Any = None) -> MetaArray:
        return MetaArray(_shape_of(shape), _as_dtype(dtype, default))

    return make


empty = zeros = ones = _creator(_f64)
xp.empty = xp.zeros = xp.ones = empty


@_api
def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> MetaArray:
    return MetaArray(_shape_of(shape), _as_dtype(dtype, _scalar_default(fill_value)))


@_api
def empty_like(x: MetaArray, *, dtype: Any = None, device: Any = None) -> MetaArray:
    return _elementwise(x.shape, _as_dtype(dtype, x.dtype), x)  # numpy's: x's order (K)


xp.zeros_like = xp.ones_like = empty_like


@_api
def full_like(x: MetaArray, fill_value: Any, *, dtype: Any = None, device: Any = None) -> MetaArray:
    return _elementwise(x.shape, _as_dtype(dtype, x.dtype), x)


@_api
def arange(
    start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None
) -> MetaArray:
    for v in (start, stop, step):
        if isinstance(v, MetaArray):
            raise MetaValueRead("arange bounds")
    if stop is None:
        start, stop = 0, start
    n = max(0, math.ceil((stop - start) / step))
    default = _f64 if any(isinstance(v, float) for v in (start, stop, step)) else _i64
    return MetaArray((n,), _as_dtype(dtype, default))


@_api
def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None
) -> MetaArray:
    return MetaArray((n_rows, n_rows if n_cols is None else n_cols), _as_dtype(dtype, _f64))


def _triangle_indices(lower: bool) -> Callable[..., tuple[MetaArray, MetaArray]]:
    """numpy's ``tril_indices(n, k, m)`` / ``triu_indices``: two index arrays as long as the
    triangle has positions (the kit's ``tril_indices`` uses them where ``xp`` has them)."""

    def fn(n: int, k: int = 0, m: int | None = None) -> tuple[MetaArray, MetaArray]:
        cols = n if m is None else m
        if lower:  # columns 0 .. r + k of row r
            count = sum(min(cols, max(r + k + 1, 0)) for r in range(n))
        else:  # columns r + k .. cols - 1
            count = sum(cols - min(cols, max(r + k, 0)) for r in range(n))
        return MetaArray((count,), _i64), MetaArray((count,), _i64)

    fn.__name__ = "tril_indices" if lower else "triu_indices"
    return fn


xp.tril_indices, xp.triu_indices = _triangle_indices(True), _triangle_indices(False)
