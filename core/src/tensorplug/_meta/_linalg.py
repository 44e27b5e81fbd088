"""The ``linalg`` family of the meta namespace: matmul, vecdot and tensordot (Note [Meta
arrays] in _array.py).
"""

from __future__ import annotations

from typing import Any

from ._array import (
    MetaArray,
    _api,
    _axes,
    _axis,
    _broadcast,
    _promote,
)


@_api
def matmul(a: MetaArray, b: MetaArray, /) -> MetaArray:
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    sa = (1,) + a.shape if a.ndim == 1 else a.shape
    sb = b.shape + (1,) if b.ndim == 1 else b.shape
    if sa[-1] != sb[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {sb[-2]} is different from {sa[-1]})"
        )
    shape = _broadcast(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    return MetaArray(shape, _promote(a, b))


@_api
def vecdot(a: MetaArray, b: MetaArray, /, *, axis: int = -1) -> MetaArray:
    shape = _broadcast(a.shape, b.shape)
    ax = _axis(axis, len(shape))
    return MetaArray(shape[:ax] + shape[ax + 1 :], _promote(a, b))


@_api
def tensordot(a: MetaArray, b: MetaArray, /, *, axes: Any = 2) -> MetaArray:
    if isinstance(axes, int):
        xa, xb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        xa, xb = _axes(axes[0], a.ndim), _axes(axes[1], b.ndim)
    shape = tuple(n for j, n in enumerate(a.shape) if j not in xa)
    shape += tuple(n for j, n in enumerate(b.shape) if j not in xb)
    return MetaArray(shape, _promote(a, b))
