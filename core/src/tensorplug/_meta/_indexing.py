"""The ``indexing`` family of the meta namespace: take, take_along_axis, searchsorted, and
nonzero, whose shape depends on values and so reads them (Note [Meta arrays] in _array.py).
Integer-array indexing itself is ``MetaArray.__getitem__`` (``_index_shape`` in _array.py).
"""

from __future__ import annotations

from typing import Any

from ._array import (
    MetaArray,
    _api,
    _axis,
    _broadcast,
    _i64,
    _reads,
    _shp,
    xp,
)


@_api
def take(x: MetaArray, indices: MetaArray, /, *, axis: int | None = None) -> MetaArray:
    if indices.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer type")
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis must be given for arrays of more than one dimension")
        axis = 0
    shape = x.shape if x.ndim else (1,)
    ax = _axis(axis, len(shape))
    return MetaArray(shape[:ax] + indices.shape + shape[ax + 1 :], x.dtype)


@_api
def take_along_axis(x: MetaArray, indices: MetaArray, /, *, axis: int = -1) -> MetaArray:
    if x.ndim != indices.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    ax = _axis(axis, x.ndim)
    bx = x.shape[:ax] + (1,) + x.shape[ax + 1 :]
    bi = indices.shape[:ax] + (1,) + indices.shape[ax + 1 :]
    shape = list(_broadcast(bx, bi))
    shape[ax] = indices.shape[ax]
    return MetaArray(tuple(shape), x.dtype)


@_api
def searchsorted(x1: MetaArray, x2: Any, /, *, side: str = "left", sorter: Any = None) -> MetaArray:
    return MetaArray(_shp(x2), _i64)


xp.nonzero = _reads("nonzero")
