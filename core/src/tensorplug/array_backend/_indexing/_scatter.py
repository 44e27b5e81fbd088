"""Gather and scatter, and the masks: gather, scatter, scatter_add, masked_select,
masked_scatter, nonzero, with the in-place scatter_ and masked_scatter_ (the ``indexing``
family; Note [Indexing fast path] in __init__.py). ``scatter_add`` checks that no index is
negative (numpy would wrap it) and leaves the upper bound to ``add.at``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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
    check_broadcast,
    check_fits,
    fmt_shape,
    torch_name,
    wrap_dim,
)
from ._index import _INT_INDEX, add_at, check_range, written_back


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
    i = check_index(kit, "gather", self, index, d, int32_ok=True)  # (PyTorch 2.13 takes int32)
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
        if not nd or i.ndim != nd or i.shape != s.shape or not -nd <= dim < nd or 0 in i.shape:
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
    if math.prod(i.shape):
        if work.ndim == 0:
            flat = xp.reshape(work, (1,))
            add_at(kit, flat, (xp.reshape(i, (-1,)),), xp.reshape(s, (-1,))[: math.prod(i.shape)])
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
    m = xp.reshape(xp.broadcast_to(kit.condition(mask, self._device), shape), (-1,))
    # flat first: the same elements in the same order, and dask cannot mask a 0-d array
    r = kit.known(xp.reshape(xp.broadcast_to(self._data, shape), (-1,))[m])
    return kit.wrap(r, self._dtype, self._device)


def nonzero(kit: Kit, self: Tensor) -> Tensor:
    xp = kit.xp
    long_t = kit.storage[_dt.int64]
    a = self._data
    if a.ndim == 0:  # numpy refuses nonzero of a 0-d array; PyTorch gives (0 or 1, 0)
        rows = 1 if bool(kit.truth(a)) else 0
        return kit.wrap(xp.zeros((rows, 0), dtype=long_t), _dt.int64, self._device)
    where = kit.nonzero(kit.truth(a))  # != 0 for the dtypes numpy's nonzero does not know
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
    if math.prod(i.shape):
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


KERNELS: dict[str, Callable[..., Any]] = {
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
    "masked_scatter_": "masked_scatter",
    "scatter_add_": "scatter_add",
}


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    k["scatter_add"] = scatter_add(kit)
    for name, functional in INPLACE.items():
        k[name] = written_back(k[functional])
    return k
