"""Indexing kernels: index (advanced indexing), index_put_, index_select, index_add, index_fill,
take, gather, scatter, scatter_add, masked_scatter, masked_select, nonzero (and the in-place
variants of index_add, index_fill, scatter and masked_scatter: the functional kernel's result
written back into ``self``).

``index.Tensor`` takes a ``Tensor?[]``: ``None`` stands for a full slice of that dimension,
integer tensors (int64/int32) index, and bool (or uint8) tensors are masks. The placement of
the result dimensions follows the same rule as numpy (advanced indices side by side go where
the first one was; separated ones go first), so the array library's own indexing is used once
the entries are translated.

Note [Indexing fast path]
~~~~~~~~~~~~~~~~~~~~~~~~~
The common calls index with one integer tensor (``x[idx]``, an embedding, the rows of a
gradient) or scatter a gradient back along a dim. Their fast paths skip the translation of the
index list and go to the array library's indexing at once, on the same arrays the general path
would use; numpy checks the bounds (its IndexError is converted as every kernel error is,
Note [Kernel errors]) and a shape that does not fit makes it refuse before writing anything, so
the general path can then run and raise PyTorch's message. ``scatter_add`` checks that no
index is negative (numpy would wrap it) and leaves the upper bound to ``add.at``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import (
    Kernel,
    Kernels,
    Kit,
    OpError,
    Scalar,
    bind,
    check_broadcast,
    check_fits,
    fmt_shape,
    torch_name,
    wrap_dim,
)

_INT_INDEX = (_dt.int64, _dt.int32)


def out_of_range(kit: Kit, i: Any, n: int) -> int | None:
    """The first index bound (the least, else the greatest) of ``i`` outside ``[0, n)``."""
    xp = kit.xp
    if not i.size:
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
            out.extend(xp.nonzero(e) if e.ndim else (xp.nonzero(xp.reshape(e, (1,)))[0],))
        else:
            out.append(e)
    return tuple(out)


def add_at(kit: Kit, target: Any, idx: tuple[Any, ...], values: Any) -> None:
    kit.put(target, idx, values, accumulate=True)


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
            a[...] = kit.cast(work, kit.storage[d])
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
        if i.size != 1:
            raise OpError(
                f"index_select(): Index to scalar can have only 1 value, got {i.size} value(s)"
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
    if i.size != n_src:
        raise OpError(
            f"index_add_(): Number of indices ({i.size}) should be equal to "
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
    if i.size:  # negative indices count from the end, as PyTorch's index_fill
        lo, hi = int(xp.min(i)), int(xp.max(i))
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    dt = self._dtype
    check_fits(value, dt)
    if dt.kind in "ui" and isinstance(value, float):
        value = int(value)
    work = kit.copy(a)
    if i.size:
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
    if i.size:
        lo, hi = int(xp.min(i)), int(xp.max(i))
        bad = lo if lo < -n else hi if hi >= n else None
        if bad is not None:
            raise IndexError(
                f"out of range: tried to access index {bad} on a tensor of {n} elements."
            )
    return kit.wrap(kit.getitem(flat, (i,)), self._dtype, self._device)


def grids(kit: Kit, index: Any, d: int) -> tuple[Any, ...]:
    """Index arrays selecting, for every position of ``index``, its row along ``d``."""
    xp = kit.xp
    long_t = kit.storage[_dt.int64]
    nd = index.ndim
    out: list[Any] = []
    for j in range(nd):
        if j == d:
            out.append(index)
        else:
            shape = [1] * nd
            shape[j] = int(index.shape[j])
            out.append(xp.reshape(xp.arange(int(index.shape[j]), dtype=long_t), tuple(shape)))
    return tuple(out)


def check_index(
    kit: Kit, name: str, self: Tensor, index: Tensor, d: int, int32_ok: bool = False
) -> Any:
    if int32_ok and index._dtype not in _INT_INDEX:  # scatter takes int32 (PyTorch 2.13)
        raise OpError(f"{name}(): Expected dtype int32/int64 for index")
    if not int32_ok and index._dtype is not _dt.int64:
        raise OpError(f"{name}(): Expected dtype int64 for index")
    sa, si = tuple(self._data.shape), tuple(index._data.shape)
    if max(len(si), 1) != max(len(sa), 1):
        raise OpError("Index tensor must have the same number of dimensions as input tensor")
    for j in range(len(si)):
        if j != d and si[j] > sa[j]:
            raise OpError(
                f"Size does not match at dimension {j} expected index {fmt_shape(si)} to be no "
                f"larger than self {fmt_shape(sa)} apart from dimension {d}"
            )
    i = kit.operand(index, index._dtype, self._device)
    n = int(sa[d]) if sa else 1
    check_range(kit, i, d, n)  # PyTorch raises RuntimeError here (IndexError in index.Tensor)
    return i


def gather(kit: Kit, self: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    xp = kit.xp
    d = wrap_dim(dim, self._data.ndim)
    i = check_index(kit, "gather", self, index, d)
    a = self._data
    if a.ndim == 0:
        r = xp.reshape(kit.getitem(xp.reshape(a, (1,)), (xp.reshape(i, (-1,)),)), tuple(i.shape))
    else:
        r = kit.getitem(a, grids(kit, i, d))
    return kit.wrap(r, self._dtype, self._device)


def scatter_add(kit: Kit) -> Kernel:
    """The kernel of ``aten::scatter_add``: one dtype, an int64 index of src's shape, one device
    (Note [Indexing fast path]) is one ``add.at`` into a copy, the grids of the other dimensions
    kept for the last index shape; else :func:`scatter_add_general`."""
    xp = kit.xp
    long_t = kit.storage[_dt.int64]
    new = kit.new
    ks = kit.keyset
    xp_add_at = getattr(xp.add, "at", None)
    min_reduce = getattr(xp.minimum, "reduce", None)
    scatter_fast = (
        frozenset(d for d in kit.native if d.kind in "iuf")
        if xp_add_at is not None and min_reduce is not None
        else frozenset()
    )
    # the grids of the last (index shape, dim, device) seen: ((shape, dim, device), grids)
    grids_of: list[tuple[Any, tuple[Any, ...]]] = [(None, ())]

    def fast_path(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor | None:
        """scatter_add on the fast path, or None."""
        d = self._dtype
        dev = self._device
        if (
            d not in scatter_fast
            or src._dtype is not d
            or index._dtype is not _dt.int64
            or index._device is not dev
            or src._device is not dev
        ):
            return None
        a, i, s = self._data, index._data, src._data
        nd = a.ndim
        if not nd or i.ndim != nd or i.shape != s.shape or not -nd <= dim < nd or not i.size:
            return None
        ax = dim + nd if dim < 0 else dim
        ishape = i.shape
        ashape = a.shape
        for j in range(nd):
            if j != ax and ishape[j] > ashape[j]:
                return None
        key = (ishape, ax, dev)
        seen, rest = grids_of[0]
        if seen != key:
            with kit.on(dev):
                rest = grids(kit, xp.zeros(ishape, dtype=long_t), ax)
            grids_of[0] = (key, rest)
        if min_reduce(i, None) < 0:  # type: ignore[misc]
            return None  # negative: numpy would wrap it, PyTorch raises
        where = (*rest[:ax], i, *rest[ax + 1 :])
        work = kit.copy(a)
        try:
            xp_add_at(work, where, s)  # type: ignore[misc]
        except IndexError:
            return None  # past the end: the general path's message
        return new(work, d, dev, ks)

    def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
        fast = fast_path(self, dim, index, src)
        if fast is not None:
            return fast
        return scatter_add_general(kit, self, dim, index, src)

    return scatter_add


def scatter_add_general(kit: Kit, self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    xp = kit.xp
    if src._dtype is not self._dtype:
        raise OpError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = wrap_dim(dim, self._data.ndim)
    i = check_index(kit, "scatter", self, index, d)
    si, ss = tuple(i.shape), tuple(src._data.shape)
    for j in range(len(si)):
        if si[j] > ss[j]:
            raise OpError(
                f"Expected index {fmt_shape(si)} to be no larger than src {fmt_shape(ss)} apart from "
                f"dimension {d}"
            )
    dt = self._dtype
    work = kit.copy(kit.as_compute(self, dt))
    s = kit.operand(src, dt, self._device)
    if i.size:
        if work.ndim == 0:
            flat = xp.reshape(work, (1,))
            add_at(kit, flat, (xp.reshape(i, (-1,)),), xp.reshape(s, (-1,))[: i.size])
            work = xp.reshape(flat, ())
        else:
            sub = s[tuple(slice(0, n) for n in si)]
            add_at(kit, work, grids(kit, i, d), sub)
    return kit.wrap(work, dt, self._device)


def masked_select(kit: Kit, self: Tensor, mask: Tensor) -> Tensor:
    xp = kit.xp
    if mask._dtype is not _dt.bool:
        raise OpError("masked_select: expected BoolTensor for mask")
    # PyTorch broadcasts (mask, self), in that order: the message names them a and b
    shape = check_broadcast(tuple(mask._data.shape), tuple(self._data.shape))
    m = xp.broadcast_to(kit.condition(mask, self._device), shape)
    r = xp.broadcast_to(self._data, shape)[m]
    return kit.wrap(xp.reshape(r, (-1,)), self._dtype, self._device)


def nonzero(kit: Kit, self: Tensor) -> Tensor:
    xp = kit.xp
    long_t = kit.storage[_dt.int64]
    a = self._data
    if a.ndim == 0:  # numpy refuses nonzero of a 0-d array; PyTorch gives (0 or 1, 0)
        rows = 1 if bool(kit.truth(a)) else 0
        return kit.wrap(xp.zeros((rows, 0), dtype=long_t), _dt.int64, self._device)
    where = xp.nonzero(kit.truth(a))  # != 0 for the dtypes numpy's nonzero does not know
    return kit.wrap(xp.stack(where, axis=1), _dt.int64, self._device)


def scatter_src(kit: Kit, self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if src._dtype is not self._dtype:
        raise OpError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = wrap_dim(dim, self._data.ndim)
    si, ss = tuple(index._data.shape), tuple(src._data.shape)
    if any(si[j] > ss[j] for j in range(min(len(si), len(ss)))):
        sa = tuple(self._data.shape)
        raise OpError(
            f"Expected index {fmt_shape(si)} to be no larger than self {fmt_shape(sa)} apart from "
            f"dimension {d} and to be no larger size than src {fmt_shape(ss)}"
        )
    i = check_index(kit, "scatter", self, index, d, int32_ok=True)
    s = src._data[tuple(slice(0, n) for n in si)] if si else src._data
    return scatter_values(kit, self, d, i, s)


def scatter_value(kit: Kit, self: Tensor, dim: int, index: Tensor, value: Scalar) -> Tensor:
    xp = kit.xp
    d = wrap_dim(dim, self._data.ndim)
    i = check_index(kit, "scatter", self, index, d, int32_ok=True)
    dt = self._dtype
    check_fits(value, dt)
    if dt.kind in "ui" and isinstance(value, float):
        value = int(value)
    v = xp.asarray(kit.scalar(value, dt), dtype=kit.compute[dt])
    return scatter_values(kit, self, d, i, kit.cast(v, kit.storage[dt]))


def scatter_values(kit: Kit, self: Tensor, d: int, i: Any, values: Any) -> Tensor:
    """A copy of ``self`` with ``values`` written where ``i`` points along ``d``; where two
    positions point to one place the last one wins, as PyTorch's CPU loop."""
    xp = kit.xp
    work = kit.copy(self._data)
    if i.size:
        if work.ndim == 0:
            flat = xp.reshape(work, (1,))
            kit.put(
                flat,
                (xp.reshape(i, (-1,)),),
                xp.reshape(xp.broadcast_to(values, i.shape), (-1,)),
            )
            work = xp.reshape(flat, ())
        else:
            kit.put(work, grids(kit, i, d), values)
    return kit.wrap(work, self._dtype, self._device)


def masked_scatter(kit: Kit, self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    xp = kit.xp
    if mask._dtype is not _dt.bool:
        raise OpError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{torch_name(mask._dtype)}"
        )
    if source._dtype is not self._dtype:
        raise OpError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{torch_name(self._dtype)} and {torch_name(source._dtype)}"
        )
    shape = check_broadcast(tuple(self._data.shape), tuple(mask._data.shape))
    m = xp.broadcast_to(kit.condition(mask, self._device), shape)
    work = kit.copy(xp.broadcast_to(self._data, shape))
    count = int(xp.count_nonzero(m))
    src = xp.reshape(source._data, (-1,))
    if count > src.shape[0]:
        raise OpError("Number of elements of source < number of ones in mask")
    if count:
        kit.put(work, (m,), src[:count])
    return kit.wrap(work, self._dtype, self._device)


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
    "scatter.src": scatter_src,
    "scatter.value": scatter_value,
    "masked_scatter": masked_scatter,
    "gather": gather,
    "masked_select": masked_select,
    "nonzero": nonzero,
}


# in-place op -> its functional op, whose kernel's result is written back into self
INPLACE = {
    "scatter_.src": "scatter.src",
    "scatter_.value": "scatter.value",
    "index_add_": "index_add",
    "index_fill_.int_Scalar": "index_fill.int_Scalar",
    "index_fill_.int_Tensor": "index_fill.int_Tensor",
    "masked_scatter_": "masked_scatter",
}


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    k["index.Tensor"] = index(kit)
    k["scatter_add"] = scatter_add(kit)
    for name, functional in INPLACE.items():
        k[name] = written_back(k[functional])
    return k
