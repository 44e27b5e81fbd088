"""Advanced indexing and the index_* kernels: index (``x[idx]``), index_put_, index_select,
index_add, index_fill, take; and :func:`written_back`, the in-place form of a functional kernel
(the ``indexing`` family; Note [Indexing fast path] in __init__.py).

``index.Tensor`` takes a ``Tensor?[]``: ``None`` stands for a full slice of that dimension,
integer tensors (int64/int32) index, and bool (or uint8) tensors are masks. The placement of
the result dimensions follows the same rule as numpy (advanced indices side by side go where
the first one was; separated ones go first), so the array library's own indexing is used once
the entries are translated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    Scalar,
    bind,
    check_fits,
    fmt_shape,
    torch_name,
    wrap_dim,
)

_INT_INDEX = (_dt.int64, _dt.int32)


def out_of_range(kit: Kit, i: Any, n: int) -> int | None:
    """The first index bound (the least, else the greatest) of ``i`` outside ``[0, n)``;
    None on a lazy backend, which reads no index (Note [Lazy backends read no values])."""
    xp = kit.xp
    if kit.lazy or not math.prod(i.shape):
        return None
    lo, hi = int(xp.min(i)), int(xp.max(i))
    return lo if lo < 0 else hi if hi >= n else None


def check_range(kit: Kit, i: Any, d: int, n: int) -> None:
    bad = out_of_range(kit, i, n)
    if bad is not None:
        raise OpError(f"index {bad} is out of bounds for dimension {d} with size {n}")


def translate(
    kit: Kit, self: Tensor, indices: Sequence[Tensor | None]
) -> tuple[tuple[Any, ...], bool]:
    """The array-library index for ``indices``, and whether it holds a tensor."""
    bool_t = kit.storage[_dt.bool]
    a = self._data
    shape = tuple(a.shape)
    device = self._device
    used = sum(
        1 if i is None else max(i._data.ndim, 1) if i._dtype in (_dt.bool, _dt.uint8) else 1
        for i in indices
    )
    if used > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim} (got {used})")
    out: list[Any] = []
    advanced = False
    at = 0
    for _pos, i in enumerate(indices):
        if i is None:
            out.append(slice(None))
            at += 1
            continue
        advanced = True
        if i._dtype in (_dt.bool, _dt.uint8):
            m = kit.condition(i, device)
            ms = tuple(m.shape)
            for j, n in enumerate(ms):
                if n != shape[at + j]:
                    raise IndexError(
                        f"The shape of the mask {fmt_shape(ms)} at index {j} does not match the "
                        f"shape of the indexed tensor {fmt_shape(shape)} at index {at + j}"
                    )
            out.append(kit.cast(m, bool_t))
            at += max(len(ms), 1)
        elif i._dtype in (_dt.int64, _dt.int32):
            out.append(kit.operand(i, i._dtype, device))
            at += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tuple(out), advanced


def one_index(self: Tensor, indices: Sequence[Tensor | None]) -> Any:
    """The data of the one integer tensor in ``indices`` (Note [Indexing fast path])."""
    if len(indices) != 1 or not self._data.ndim:
        return None
    i = indices[0]
    if i is None or i._dtype not in _INT_INDEX or i._device is not self._device:
        return None
    return i._data


def index(kit: Kit) -> Kernel:
    """The kernel of ``aten::index.Tensor``: one integer tensor indexing the first dimension
    takes the array library's own indexing (Note [Indexing fast path]), else the general path,
    :func:`translate`."""
    new = kit.new
    ks = kit.keyset
    asarray = kit.xp.asarray
    arr_t = kit.array_type
    fancy = kit.fancy_setitem

    def index(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
        i = one_index(self, indices) if fancy else None
        if i is not None:
            r = self._data[i]
            if type(r) is not arr_t:  # a 0-d index into a 1-d tensor gives a scalar
                r = asarray(r)
            return new(r, self._dtype, self._device, ks)
        idx, advanced = translate(kit, self, indices)
        r = kit.getitem(self._data, idx)
        if not advanced:
            r = kit.copy(r)
        return kit.wrap(r, self._dtype, self._device)

    return index


def integer_index(kit: Kit, idx: tuple[Any, ...]) -> tuple[Any, ...]:
    """Masks as integer index arrays (what ``add.at`` needs); slices kept."""
    xp = kit.xp
    bool_t = kit.storage[_dt.bool]
    out: list[Any] = []
    for e in idx:
        if getattr(e, "dtype", None) is not None and e.dtype == bool_t:
            out.extend(kit.nonzero(e) if e.ndim else (kit.nonzero(xp.reshape(e, (1,)))[0],))
        else:
            out.append(e)
    return tuple(out)


def add_at(kit: Kit, target: Any, idx: tuple[Any, ...], values: Any) -> None:
    kit.put(target, idx, values, accumulate=True)


# Note [Rows added in rounds]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``index_put_(..., accumulate=True)`` with one integer vector of rows (an embedding's backward,
# index_select's) adds ``values[k]`` to ``self[i[k]]`` for each k in order. numpy's ``add.at``
# does that, but for rows (values of 2 or more dimensions) it leaves its fast path: ~1.3 us a
# row of 128 floats, 0.67 ms for the 512 rows of bench/gpt.py's batch. The same sums, in the
# same order, in rounds: round r adds the r-th occurrence of every index at once, with plain
# fancy indexing (``a[d] += v[rows]``, right because the indices of one round are distinct).
# Each element of ``self`` then receives its additions in index order, one by one, as under
# ``add.at``: the result is bit for bit the same. The rounds come from a stable sort of the
# (wrapped) indices: an occurrence's round is its position within its run of equal indices.
# There are as many rounds as the most repeated index has occurrences, each a few numpy calls,
# so the rounds are used while they are few against the rows (at most one per 32 rows):
# 0.11-0.16 ms for those 512 rows into 64 or 256 rows (8 or ~7 rounds).
_ROWS_PER_ROUND = 32


def add_rows_in_rounds(kit: Kit, a: Any, i: Any, v: Any) -> bool:
    """``add.at(a, (i,), v)`` for a vector ``i`` of rows of ``a`` and ``v`` of shape
    ``(len(i), *a.shape[1:])``, by rounds of distinct rows (Note [Rows added in rounds]);
    False (nothing written) where the shapes differ, an index is out of range or the rounds
    would be too many, and off the host (the index is read)."""
    xp = kit.xp
    n = i.shape[0] if i.ndim == 1 else -1
    if (
        kit.device_type != "cpu"
        or kit.lazy
        or a.ndim < 2
        or n < 2 * _ROWS_PER_ROUND
        or tuple(v.shape) != (n, *a.shape[1:])
    ):
        return False
    rows = a.shape[0]
    if int(i.min()) < -rows or int(i.max()) >= rows:
        return False  # add.at raises numpy's IndexError
    i = xp.where(i < 0, i + rows, i)
    order = xp.argsort(i, kind="stable")
    si = i[order]
    new = xp.empty(n, dtype=bool)
    new[0] = True
    xp.not_equal(si[1:], si[:-1], out=new[1:])
    starts = xp.flatnonzero(new)
    rank = xp.arange(n) - xp.repeat(starts, xp.diff(xp.append(starts, n)))
    counts = xp.bincount(rank)
    if counts.shape[0] * _ROWS_PER_ROUND > n:
        return False
    by_round = xp.argsort(rank, kind="stable")
    dest = si[by_round]
    src = order[by_round]
    lo = 0
    for c in counts.tolist():
        hi = lo + c
        a[dest[lo:hi]] += v[src[lo:hi]]
        lo = hi
    return True


def index_put_(
    kit: Kit,
    self: Tensor,
    indices: Sequence[Tensor | None],
    values: Tensor,
    accumulate: bool = False,
) -> Tensor:
    xp = kit.xp
    native = kit.native
    xp_add_at = getattr(xp.add, "at", None)
    fancy = kit.fancy_setitem
    if values._dtype is not self._dtype:
        raise OpError(
            "Index put requires the source and destination dtypes match, got "
            f"{torch_name(self._dtype)} for the destination and "
            f"{torch_name(values._dtype)} for the source."
        )
    d = self._dtype
    i = (
        one_index(self, indices)
        if fancy and d in native and values._device is self._device
        else None
    )
    if i is not None:
        try:
            if not accumulate:
                self._data[i] = values._data
                return self
            if xp_add_at is not None:
                if not add_rows_in_rounds(kit, self._data, i, values._data):
                    xp_add_at(self._data, (i,), values._data)
                return self
        except ValueError:
            pass  # shapes that do not fit, a read-only view: the general path's message
    idx, _ = translate(kit, self, indices)
    v = kit.operand(values, d, self._device)
    a = self._data
    try:
        if not accumulate:
            kit.put(a, idx, kit.cast(v, kit.storage[d]))
            return self
        iidx = integer_index(kit, idx)
        if d in kit.native:
            add_at(kit, a, iidx, v)
        else:
            work = kit.cast(a, kit.compute[d])
            add_at(kit, work, iidx, v)
            kit.assign(a, kit.cast(work, kit.storage[d]))
    except ValueError as e:
        target = tuple(kit.getitem(a, idx).shape)
        if "read-only" in str(e) or tuple(v.shape) == target:
            raise
        raise OpError(
            f"shape mismatch: value tensor of shape {fmt_shape(v.shape)} cannot be broadcast to "
            f"indexing result of shape {fmt_shape(target)}"
        ) from e
    return self


def index_select(kit: Kit, self: Tensor, dim: int, index: Tensor) -> Tensor:
    xp = kit.xp
    if index._dtype not in _INT_INDEX:
        raise OpError("index_select(): Expected dtype int32 or int64 for index")
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    a = self._data
    d = wrap_dim(dim, a.ndim)
    i = xp.reshape(kit.operand(index, index._dtype, self._device), (-1,))
    if a.ndim == 0:
        if i.shape[0] != 1:
            raise OpError(
                f"index_select(): Index to scalar can have only 1 value, got {i.shape[0]} value(s)"
            )
        if int(i[0]) != 0:
            raise IndexError("index out of range in self")
        return kit.wrap(kit.copy(a), self._dtype, self._device)
    n = int(a.shape[d])
    bad = out_of_range(kit, i, n)
    if bad is not None:  # PyTorch's text (for dim 0; other dims leak its kernel's), and why
        raise IndexError(
            f"index out of range in self: index {bad} is out of bounds for dimension {d} "
            f"with size {n}"
        )
    return kit.wrap(xp.take(a, i, axis=d), self._dtype, self._device)


def index_vector(
    kit: Kit, name: str, index: Tensor, device: Any, dtypes: str = "int32/int64"
) -> Any:
    """``index`` of index_add / index_fill as a flat array, with PyTorch's checks."""
    xp = kit.xp
    if index._dtype not in (_INT_INDEX if "32" in dtypes else (_dt.int64,)):
        if name == "index_fill_":
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        raise OpError(
            f"{name}(): Expected dtype {dtypes} for index but got: {torch_name(index._dtype)}"
        )
    return xp.reshape(kit.operand(index, index._dtype, device), (-1,))


def index_add(
    kit: Kit, self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Scalar = 1
) -> Tensor:
    xp = kit.xp
    long_t = kit.storage[_dt.int64]
    a = self._data
    d = wrap_dim(dim, a.ndim)
    if index._data.ndim > 1:
        raise IndexError(
            "index_add_(): Index is supposed to be a vector, but got dim: "
            f"{index._data.ndim} with type: {torch_name(index._dtype)} and size: "
            f"{fmt_shape(index._data.shape)}"
        )
    i = index_vector(kit, "index_add_", index, self._device)
    if source._dtype is not self._dtype:
        raise OpError(
            f"index_add_(): self ({torch_name(self._dtype)}) and source "
            f"({torch_name(source._dtype)}) must have the same scalar type"
        )
    sa, ss = tuple(a.shape), tuple(source._data.shape)
    n_src = int(ss[d]) if ss else 1
    if math.prod(i.shape) != n_src:
        raise OpError(
            f"index_add_(): Number of indices ({math.prod(i.shape)}) should be equal to "
            f"source.size(dim): ({n_src}), for dim: {dim}"
        )
    same = len(sa) == len(ss) and all(
        x == y for j, (x, y) in enumerate(zip(sa, ss, strict=True)) if j != d
    )
    if not same and (sa or ss):
        raise OpError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {fmt_shape(sa)} source.shape = {fmt_shape(ss)}"
        )
    n = int(sa[d]) if sa else 1
    check_range(kit, i, d, n)
    dt = self._dtype
    work = kit.copy(kit.as_compute(self, dt))
    src = kit.operand(source, dt, self._device)
    if dt.kind == "b":  # a bool sum is a logical or: add as integers, then test
        work, src = kit.cast(work, long_t), kit.cast(src, long_t) * int(bool(alpha))
    elif alpha != 1:
        src = src * kit.scalar(alpha, dt)
    if not sa:
        flat = xp.reshape(work, (1,))
        add_at(kit, flat, (i,), xp.reshape(src, (-1,)))
        work = xp.reshape(flat, ())
        return kit.wrap(work != 0 if dt.kind == "b" else work, dt, self._device)
    add_at(kit, work, (slice(None),) * d + (i,), src)
    return kit.wrap(work != 0 if dt.kind == "b" else work, dt, self._device)


def index_fill(kit: Kit, self: Tensor, dim: int, index: Tensor, value: Scalar) -> Tensor:
    xp = kit.xp
    a = self._data
    d = wrap_dim(dim, a.ndim)
    i = index_vector(kit, "index_fill_", index, self._device, "int64")
    if index._data.ndim > 1:
        raise OpError("Index has to be a vector/scalar")
    n = int(a.shape[d]) if a.ndim else 1
    if math.prod(i.shape):  # negative indices count from the end, as PyTorch's index_fill
        lo, hi = int(xp.min(i)), int(xp.max(i))
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    dt = self._dtype
    check_fits(value, dt)
    if dt.kind in "ui" and isinstance(value, float):
        value = int(value)
    work = kit.copy(a)
    if math.prod(i.shape):
        v = xp.asarray(kit.scalar(value, dt), dtype=kit.compute[dt])
        if not a.ndim:
            work = xp.reshape(work, (1,))
            kit.put(work, (i,), kit.cast(v, kit.storage[dt]))
            work = xp.reshape(work, ())
        else:
            kit.put(work, (slice(None),) * d + (i,), kit.cast(v, kit.storage[dt]))
    return kit.wrap(work, dt, self._device)


def index_fill_tensor(kit: Kit, self: Tensor, dim: int, index: Tensor, value: Tensor) -> Tensor:
    if value._data.ndim != 0:
        raise OpError(
            "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    return index_fill(kit, self, dim, index, kit.item(value._data, value._dtype))


def take(kit: Kit, self: Tensor, index: Tensor) -> Tensor:
    xp = kit.xp
    if index._dtype is not _dt.int64:
        raise OpError(
            f"take(): Expected a long tensor for index, but got {torch_name(index._dtype)}"
        )
    flat = xp.reshape(self._data, (-1,))
    i = kit.operand(index, _dt.int64, self._device)
    n = int(flat.shape[0])
    if math.prod(i.shape):
        lo, hi = int(xp.min(i)), int(xp.max(i))
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(
                f"out of range: tried to access index {bad} on a tensor of {n} elements."
            )
    return kit.wrap(kit.getitem(flat, (i,)), self._dtype, self._device)


def put_(kit: Kit, self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``self.put_(index, source)``: ``source``'s values written at the flat (row-major)
    positions ``index`` of self; with ``accumulate``, added, repeated positions adding up."""
    xp = kit.xp
    if index._dtype is not _dt.int64:
        raise OpError(
            f"put_(): Expected a long tensor for index, but got {torch_name(index._dtype)}"
        )
    if source._dtype is not self._dtype:
        raise OpError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{torch_name(self._dtype)} and source.dtype = {torch_name(source._dtype)}"
        )
    if source.numel() != index.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    shape = tuple(self._data.shape)
    n = math.prod(shape)
    i = xp.reshape(kit.operand(index, _dt.int64, self._device), (-1,))
    if math.prod(i.shape):
        if n == 0:
            raise IndexError("put_(): Tried to put elements into an empty tensor")
        lo, hi = int(xp.min(i)), int(xp.max(i))
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(
                f"out of range: tried to access index {bad} on a tensor of {n} elements."
            )
        i = xp.where(i < 0, i + n, i)
    d = self._dtype
    # a copy: source may be a view of self
    work = kit.copy(kit.cast(xp.reshape(self._data, (-1,)), kit.compute[d]))
    v = kit.cast(xp.reshape(kit.operand(source, d, self._device), (-1,)), kit.compute[d])
    kit.put(work, (i,), v, accumulate=accumulate)
    kit.assign(self._data, kit.cast(xp.reshape(work, shape), kit.storage[d]))
    return self


def written_back(functional: Kernel) -> Kernel:
    """The in-place form of ``functional`` (``scatter_`` of ``scatter``): its result written
    back into ``self``; it has self's dtype, and self's shape unless a broadcast
    (masked_scatter_) grew it."""

    def written_back(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        r = functional(self, *args, **kwargs)
        if tuple(r._data.shape) != tuple(self._data.shape):
            raise OpError(
                f"output with shape {fmt_shape(self._data.shape)} doesn't match the broadcast "
                f"shape {fmt_shape(r._data.shape)}"
            )
        if 0 not in r._data.shape:  # nothing to write (dask refuses a[...] = v with a 0-length dim)
            self._data[...] = r._data
        return self

    return written_back


KERNELS: dict[str, Callable[..., Any]] = {
    "index_put_": index_put_,
    "index_select": index_select,
    "index_add": index_add,
    "index_fill.int_Scalar": index_fill,
    "index_fill.int_Tensor": index_fill_tensor,
    "take": take,
    "put_": put_,
}


# in-place op -> its functional op, whose kernel's result is written back into self
INPLACE = {
    "index_add_": "index_add",
    "index_fill_.int_Scalar": "index_fill.int_Scalar",
    "index_fill_.int_Tensor": "index_fill.int_Tensor",
}


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    k["index.Tensor"] = index(kit)
    for name, functional in INPLACE.items():
        k[name] = written_back(k[functional])
    return k
