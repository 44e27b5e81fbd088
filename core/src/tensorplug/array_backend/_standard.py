"""Standard fallbacks: what numpy does with one call, in the array API standard's functions.

The kit uses these where a namespace has no fast path of its own (Note [Optional extensions]
in _kit.py): integer-array and mask indexing (:func:`getitem`, through :func:`positions`),
writing at indices and adding at repeated ones (:func:`put`, :func:`scatter`, for numpy's
fancy ``__setitem__`` and ``add.at``), ``take_along_axis`` (2024.12) and running products and
extrema (:func:`running`, for ``cumulative_prod`` and ufunc ``accumulate``), and
``matrix_transpose`` (2022.12; CuPy's ``swapaxes`` where it has none) and ``broadcast_shapes``
(numpy's; the standard has none). Each reads only
shapes, dtypes and arrays, and sorts or searches on the device; :func:`positions` and
:func:`scatter` read index values (bounds, repetitions) on the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from .. import dtypes as _dt


class Kit(Protocol):
    """What these functions use of a kit (``_kit.Kit``; a protocol, so that the kit can
    import them)."""

    xp: Any
    storage: dict[_dt.dtype, Any]
    lazy: bool

    def cast(self, arr: Any, xd: Any) -> Any: ...

    def copy(self, arr: Any) -> Any: ...

    def nonzero(self, a: Any) -> tuple[Any, ...]: ...

    def assign(self, a: Any, v: Any) -> None: ...


def matrix_transpose(xp: Any, a: Any) -> Any:
    """``a`` with its last two axes swapped: the standard's ``matrix_transpose`` where ``xp``
    has it (numpy >= 2), else ``swapaxes`` (CuPy)."""
    f = getattr(xp, "matrix_transpose", None)
    return f(a) if f is not None else xp.swapaxes(a, -1, -2)


def broadcast_shapes(xp: Any, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to: ``xp.broadcast_shapes`` where the namespace has it
    (numpy, cupy; not the standard, nor dask through array-api-compat), else the standard's
    rule, computed here (ValueError where they do not broadcast, as numpy's)."""
    f = getattr(xp, "broadcast_shapes", None)
    if f is not None:
        return tuple(f(*shapes))
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s, rank - len(s)):
            if n != out[i] and n != 1:
                if out[i] != 1:
                    raise ValueError(f"shape mismatch: shapes {list(shapes)} do not broadcast")
                out[i] = n
    return tuple(out)


def getitem(kit: Kit, a: Any, idx: tuple[Any, ...]) -> Any:
    """``a[idx]`` as numpy reads it (integer arrays and masks anywhere, dims left out taken
    whole): ``take`` at the flat positions of :func:`positions`."""
    pos, shape = positions(kit, tuple(a.shape), idx)
    flat = kit.xp.take(kit.xp.reshape(a, (-1,)), kit.xp.reshape(pos, (-1,)))
    return kit.xp.reshape(flat, shape)


def positions(
    kit: Kit, shape: tuple[int, ...], idx: tuple[Any, ...]
) -> tuple[Any, tuple[int, ...]]:
    """(the flat positions that ``x[idx]`` reads from an array ``x`` of ``shape``, the
    result's shape), in standard functions, with numpy's rules: masks are the integer
    arrays of their ``nonzero``; the integer arrays broadcast together, and their dims go
    where the first one was if they are side by side, else first. Indices out of range
    raise IndexError."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    b_t = kit.storage.get(_dt.bool)
    items: list[Any] = []
    for e in idx:  # masks as integer arrays, one per dim they cover
        if hasattr(e, "dtype") and e.dtype == b_t:
            items.extend(kit.nonzero(e) if e.ndim else (kit.nonzero(xp.reshape(e, (1,)))[0],))
        else:
            items.append(e)
    if not shape and items and not any(e is Ellipsis for e in items):
        shape = (1,)  # a 0-d mask of a 0-d array: numpy reads it as a dim of length 1
    if any(e is Ellipsis for e in items):
        at = next(j for j, e in enumerate(items) if e is Ellipsis)
        fill = len(shape) - (len(items) - 1)
        items = items[:at] + [slice(None)] * fill + items[at + 1 :]
    items += [slice(None)] * (len(shape) - len(items))
    arrays = [j for j, e in enumerate(items) if not isinstance(e, slice)]
    for j in arrays:
        e = kit.cast(xp.asarray(items[j]), i64)
        n = shape[j]
        # a lazy backend reads no value here: an index out of range raises when computed
        if not kit.lazy and math.prod(e.shape) and (bool(xp.any(e >= n)) or bool(xp.any(e < -n))):
            bad = int(xp.max(e)) if bool(xp.any(e >= n)) else int(xp.min(e))
            raise IndexError(f"index {bad} is out of bounds for dimension {j} with size {n}")
        items[j] = xp.where(e < 0, e + n, e)
    bshape = broadcast_shapes(xp, *(tuple(items[j].shape) for j in arrays)) if arrays else ()
    together = not arrays or arrays == list(range(arrays[0], arrays[-1] + 1))
    slices = [j for j in range(len(shape)) if j not in arrays]
    # the result's dims: ("s", j) for a sliced dim j, ("b", None) for the broadcast ones
    order: list[tuple[str, int | None]]
    if together and arrays:
        order = [("s", j) for j in slices if j < arrays[0]] + [("b", None)]
        order += [("s", j) for j in slices if j > arrays[0]]
    else:
        order = ([("b", None)] if arrays else []) + [("s", j) for j in slices]
    out_shape: list[int] = []
    where: dict[Any, int] = {}
    for kind, dim in order:
        where[(kind, dim)] = len(out_shape)
        if dim is None:
            out_shape.extend(bshape)
        else:
            out_shape.append(len(range(*items[dim].indices(shape[dim]))))
    rank = len(out_shape)
    strides = [math.prod(shape[j + 1 :]) for j in range(len(shape))]
    pos = xp.zeros((1,) * rank, dtype=i64)
    for j in range(len(shape)):
        if j in arrays:
            at = where[("b", None)]
            e = xp.broadcast_to(items[j], bshape)
            view = (1,) * at + bshape + (1,) * (rank - at - len(bshape))
        else:
            at = where[("s", j)]
            e = xp.arange(*items[j].indices(shape[j]), dtype=i64)
            view = (1,) * at + (e.shape[0],) + (1,) * (rank - at - 1)
        pos = pos + xp.reshape(e, view) * strides[j]
    return xp.broadcast_to(pos, tuple(out_shape)), tuple(out_shape)


def put(kit: Kit, a: Any, idx: tuple[Any, ...], v: Any, *, accumulate: bool = False) -> None:
    """``a[idx] = v`` (or, with ``accumulate``, each of ``v`` added at its index, repeated
    indices adding up in order, as numpy's ``add.at``) in standard functions: the flat
    positions ``idx`` reads (:func:`positions`), :func:`scatter` on the flattened array, and
    the result written back whole (``a[...] =``, basic indexing)."""
    xp = kit.xp
    pos, shape = positions(kit, tuple(a.shape), idx)
    vals = xp.broadcast_to(kit.cast(xp.asarray(v), a.dtype), shape)
    flat = scatter(
        kit, xp.reshape(a, (-1,)), xp.reshape(pos, (-1,)), xp.reshape(vals, (-1,)), accumulate
    )
    kit.assign(a, xp.reshape(flat, a.shape))


def scatter(
    kit: Kit,
    flat: Any,
    pos: Any,
    vals: Any,
    accumulate: bool,
    combine: Callable[[Any, Any], Any] | None = None,
) -> Any:
    """A copy of 1-D ``flat`` with ``vals`` written (or added) at positions ``pos``, in
    standard functions: sorted positions, then each cell looks its value up with
    ``searchsorted``. A repeated position keeps the last value written, or with
    ``accumulate`` adds its values one round per repetition, in their order (``combine``, a
    binary function, in place of the addition: scatter_reduce's product, maximum...)."""
    xp = kit.xp
    if combine is None:
        combine = xp.add
    n = pos.shape[0]
    if n == 0:
        return flat
    # no boolean-mask indexing (a lazy library cannot size its result without computing): each
    # cell finds the run of its position in the sorted positions by two searches
    order = xp.argsort(pos, stable=True)
    ps = xp.take(pos, order)
    vs = xp.take(vals, order)
    cells = xp.arange(flat.shape[0], dtype=pos.dtype)
    left = xp.searchsorted(ps, cells, side="left")
    right = xp.searchsorted(ps, cells, side="right")
    if not accumulate:  # the last value written at a position: the end of its run (stable)
        got = xp.take(vs, xp.clip(right - 1, 0, n - 1))
        return xp.where(right > left, got, flat)
    # one round per repetition, in order, as numpy's add.at adds them: the number of rounds
    # is the longest run, read on the host (the one value this reads)
    runs = xp.searchsorted(ps, ps, side="right") - xp.searchsorted(ps, ps, side="left")
    out = flat
    for r in range(int(xp.max(runs))):
        k = left + r
        got = xp.take(vs, xp.clip(k, 0, n - 1))
        out = xp.where(k < right, combine(out, got), out)
    return out


def take_along_axis(kit: Kit, a: Any, idx: Any, axis: int) -> Any:
    """``take_along_axis`` by ``take`` on the flattened array: ``idx`` has ``a``'s shape but
    along ``axis``."""
    xp = kit.xp
    if kit.lazy and idx.shape[axis] == 1:
        # one pick per row (a loss's target class): comparing with each position keeps every
        # chunk's work in the chunk, where the flattened take below would regroup the chunks
        ax = axis % a.ndim
        pos = xp.reshape(xp.arange(a.shape[ax]), (-1,) + (1,) * (a.ndim - ax - 1))
        hit = kit.cast(idx, kit.storage[_dt.int64]) == pos
        return xp.sum(xp.where(hit, a, xp.zeros((), dtype=a.dtype)), axis=ax, keepdims=True)
    a2 = xp.moveaxis(a, axis, -1)
    i2 = xp.moveaxis(idx, axis, -1)
    shape = tuple(i2.shape)
    n = a2.shape[-1]
    rows = math.prod(shape[:-1])
    i64 = kit.storage[_dt.int64]
    base = xp.reshape(xp.arange(rows, dtype=i64) * n, shape[:-1] + (1,))
    flat = xp.reshape(kit.cast(i2, i64) + base, (-1,))
    r = xp.take(xp.reshape(a2, (-1,)), flat)
    return xp.moveaxis(xp.reshape(r, shape), -1, axis)


def running(kit: Kit, f: Callable[[Any, Any], Any], a: Any, *, axis: int) -> Any:
    """The running ``f`` along ``axis`` (a cumulative product, maximum, minimum), one call
    of ``f`` per step: for namespaces without ``cumulative_prod`` or ufunc ``accumulate``."""
    xp = kit.xp
    parts = xp.unstack(a, axis=axis)
    if not parts:
        return kit.copy(a)
    out = [parts[0]]
    for p in parts[1:]:
        out.append(f(out[-1], p))
    return xp.stack(out, axis=axis)
