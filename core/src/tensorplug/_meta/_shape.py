"""The ``shape`` family of the meta namespace: reshape, broadcasting, permutations, squeeze and
expand_dims, flip, roll, concat/stack/unstack, tile, repeat, tril/triu and diff (Note [Meta
arrays] in _array.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import _strides
from ._array import (
    MetaArray,
    MetaValueRead,
    _api,
    _axes,
    _axis,
    _broadcast,
    _elementwise,
    _promote,
    _shape_of,
    asarray,
    xp,
)


@_api
def reshape(x: MetaArray, /, shape: Any, *, copy: bool | None = None) -> MetaArray:
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape array of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape array of size {x.size} into shape {shape}")
    if copy is True:
        return MetaArray(shape, x.dtype)
    st = _strides.view_strides(x.shape, x.estrides, shape)
    if st is None:  # the strides do not allow a view: numpy copies (row-major)
        if copy is False:
            raise ValueError("Unable to avoid creating a copy while reshaping.")
        return MetaArray(shape, x.dtype)
    return x._view(shape, st, x.addr)


@_api
def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    return _broadcast(*(tuple(s) for s in shapes))


@_api
def broadcast_to(x: Any, /, shape: Any) -> MetaArray:
    x = asarray(x)
    shape = _shape_of(shape)
    if len(x.shape) > len(shape) or _broadcast(x.shape, shape) != shape:
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes "
            f"[original->remapped]: {x.shape} and requested shape {shape}"
        )
    return _expanded(x, shape)


def _expanded(x: MetaArray, shape: tuple[int, ...]) -> MetaArray:
    """``x`` broadcast to ``shape``: a view with stride 0 along new and grown dims."""
    lead = len(shape) - x.ndim
    st = x.estrides
    out = tuple(
        0 if j < lead or (x.shape[j - lead] == 1 and n != 1) else st[j - lead]
        for j, n in enumerate(shape)
    )
    return x._view(shape, out, x.addr)


@_api
def broadcast_arrays(*arrays: MetaArray) -> list[MetaArray]:
    shape = _broadcast(*(a.shape for a in arrays))
    return [_expanded(a, shape) for a in arrays]


@_api
def permute_dims(x: MetaArray, /, axes: Sequence[int]) -> MetaArray:
    axes = tuple(axes)
    if sorted(_axis(a, x.ndim) for a in axes) != list(range(x.ndim)):
        raise ValueError("axes don't match array")
    st = x.estrides
    axes = tuple(_axis(a, x.ndim) for a in axes)
    return x._view(tuple(x.shape[a] for a in axes), tuple(st[a] for a in axes), x.addr)


@_api
def transpose(x: MetaArray, axes: Any = None) -> MetaArray:
    return permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else axes)


@_api
def matrix_transpose(x: MetaArray, /) -> MetaArray:
    return x.mT


@_api
def moveaxis(x: MetaArray, source: Any, destination: Any, /) -> MetaArray:
    src = _axes(source, x.ndim)
    dst = _axes(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute_dims(x, order)


@_api
def swapaxes(x: MetaArray, a: int, b: int) -> MetaArray:
    order = list(range(x.ndim))
    a, b = _axis(a, x.ndim), _axis(b, x.ndim)
    order[a], order[b] = order[b], order[a]
    return permute_dims(x, order)


@_api
def expand_dims(x: MetaArray, /, axis: Any = 0) -> MetaArray:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = x.ndim + len(axes)
    at = sorted(_axis(a, n) for a in axes)
    shape = list(x.shape)
    st = list(x.estrides)
    for a in at:  # PyTorch's unsqueeze: the extent of the dim it precedes, 1 at the end
        st.insert(a, shape[a] * st[a] if a < len(shape) else 1)
        shape.insert(a, 1)
    return x._view(tuple(shape), tuple(st), x.addr)


@_api
def squeeze(x: MetaArray, /, axis: Any = None) -> MetaArray:
    if axis is None:
        axes = tuple(j for j, n in enumerate(x.shape) if n == 1)
    else:
        axes = _axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    keep = [j for j in range(x.ndim) if j not in axes]
    st = x.estrides
    return x._view(tuple(x.shape[j] for j in keep), tuple(st[j] for j in keep), x.addr)


@_api
def flip(x: MetaArray, /, *, axis: Any = None) -> MetaArray:
    _axes(axis, x.ndim)
    return _elementwise(x.shape, x.dtype, x)  # PyTorch's flip: empty_like, preserve_format


@_api
def roll(x: MetaArray, /, shift: Any, *, axis: Any = None) -> MetaArray:
    for a in () if axis is None else (axis,) if isinstance(axis, int) else axis:
        _axis(a, x.ndim)  # (repeated axes roll twice)
    return MetaArray(x.shape, x.dtype)


@_api
def concat(arrays: Sequence[MetaArray], /, *, axis: int | None = 0) -> MetaArray:
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    d = _promote(*arrays)
    if axis is None:
        return MetaArray((sum(a.size for a in arrays),), d)
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = _axis(axis, first.ndim)
    total = 0
    for i, a in enumerate(arrays):
        if a.ndim != first.ndim:
            raise ValueError(
                "all the input array dimensions except for the concatenation axis must match "
                f"exactly, but along dimension 0, the array at index 0 has {first.ndim} "
                f"dimension(s) and the array at index {i} has {a.ndim} dimension(s)"
            )
        for j in range(first.ndim):
            if j != ax and a.shape[j] != first.shape[j]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {j}, the array at index 0 has size "
                    f"{first.shape[j]} and the array at index {i} has size {a.shape[j]}"
                )
        total += a.shape[ax]
    return MetaArray(first.shape[:ax] + (total,) + first.shape[ax + 1 :], d)


xp.concatenate = concat


@_api
def stack(arrays: Sequence[MetaArray], /, *, axis: int = 0) -> MetaArray:
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    shape = arrays[0].shape
    for a in arrays:
        if a.shape != shape:
            raise ValueError("all input arrays must have the same shape")
    ax = _axis(axis, len(shape) + 1)
    return MetaArray(shape[:ax] + (len(arrays),) + shape[ax:], _promote(*arrays))


@_api
def unstack(x: MetaArray, /, *, axis: int = 0) -> tuple[MetaArray, ...]:
    ax = _axis(axis, x.ndim)
    rest = x.shape[:ax] + x.shape[ax + 1 :]
    st = x.estrides
    step = st[ax] * x.dtype.itemsize
    rst = st[:ax] + st[ax + 1 :]
    return tuple(x._view(rest, rst, x.addr + i * step) for i in range(x.shape[ax]))


@_api
def tile(x: MetaArray, repetitions: Sequence[int], /) -> MetaArray:
    reps = tuple(repetitions)
    n = max(len(reps), x.ndim)
    shape = (1,) * (n - x.ndim) + x.shape
    reps = (1,) * (n - len(reps)) + reps
    return MetaArray(tuple(a * b for a, b in zip(shape, reps, strict=True)), x.dtype)


@_api
def repeat(x: MetaArray, repeats: Any, /, *, axis: int | None = None) -> MetaArray:
    if isinstance(repeats, MetaArray):
        raise MetaValueRead("repeat counts")
    if axis is None:
        return MetaArray((x.size * int(repeats),), x.dtype)
    ax = _axis(axis, x.ndim)
    return MetaArray(x.shape[:ax] + (x.shape[ax] * int(repeats),) + x.shape[ax + 1 :], x.dtype)


@_api
def tril(x: MetaArray, /, *, k: int = 0) -> MetaArray:
    return MetaArray(x.shape, x.dtype)


xp.triu = tril


@_api
def diff(x: MetaArray, /, *, axis: int = -1, n: int = 1) -> MetaArray:
    ax = _axis(axis, x.ndim)
    return MetaArray(x.shape[:ax] + (max(x.shape[ax] - n, 0),) + x.shape[ax + 1 :], x.dtype)
