"""Sorting kernels: sort, topk, median, kthvalue, cummax / cummin and unique (``_unique2``,
``unique_dim``). searchsorted / bucketize, which search a sorted sequence, are the ``indexing``
family's (``_indexing._search``).

Note [Tie order of sort and topk]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Equal values keep their original order, in both directions, in ``sort`` (stable or not),
``argsort``, ``topk`` and ``median`` (whose index is the lower middle of that order). PyTorch
promises that order only for ``stable=True``: for ``sort(stable=False)`` and ``topk`` it leaves
the order of ties unspecified, and its CPU kernels (``std::sort``, ``std::nth_element``,
``std::partial_sort``) do reorder ties in rows longer than 16. Reproducing those incidental
orders would mean sorting such rows in Python, hundreds of times slower, for an order no
contract gives; so here every sort is numpy's stable one, and ``topk(sorted=False)`` returns
its selection sorted as well (any order is PyTorch's contract there). NaNs compare greater than
every number (ascending: last; descending and ``largest``: first), as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .. import _standard
from .._kit import Kernels, Kit, OpError, bind, torch_name, wrap_dim
from .._pointwise._numeric import NotImplementedForDtype

# what PyTorch's median of an empty tensor holds: NaN converted to the dtype by the C++ cast
_NAN_AS = {"bool": True, "uint8": 0, "int8": 0, "int16": 0, "int32": -(2**31), "int64": -(2**63)}


def check(name: str, d: _dt.dtype, *, bool_ok: bool = True) -> None:
    if d.kind == "c":
        raise OpError(f"{name} does not support complex dtypes on CPU")
    if d.kind == "b" and not bool_ok:
        raise OpError(f"{name} does not support bool dtypes on CPU")


def stable_order(kit: Kit, a: Any, descending: bool) -> Any:
    """Indices sorting ``a`` along its last axis, ties in their original order."""
    xp = kit.xp
    if not descending:
        return xp.argsort(a, axis=-1, stable=True)
    n = a.shape[-1]
    rev = xp.flip(xp.argsort(xp.flip(a, axis=-1), axis=-1, stable=True), axis=-1)
    return (n - 1) - rev


def finish(kit: Kit, self: Tensor, order: Any, ax: int) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    idx = xp.moveaxis(order, -1, ax)
    vals = kit.take_along_axis(self._data, idx, ax)
    return kit.wrap(vals, self._dtype, self._device), kit.wrap(idx, _dt.int64, self._device)


def sort_impl(kit: Kit, self: Tensor, dim: int, descending: bool) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    check("Sort", d)
    ax = wrap_dim(dim, self._data.ndim)
    if self._data.ndim == 0:
        return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
            xp.zeros((), dtype=i64), _dt.int64, self._device
        )
    a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
    order = stable_order(kit, a, descending)  # Note [Tie order of sort and topk]
    return finish(kit, self, order, ax)


def sort(kit: Kit, self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    return sort_impl(kit, self, dim, descending)


def sort_stable(
    kit: Kit, self: Tensor, *, stable: bool | None, dim: int = -1, descending: bool = False
) -> tuple[Tensor, Tensor]:
    return sort_impl(kit, self, dim, descending)  # stable or not: Note [Tie order of sort and topk]


def topk(
    kit: Kit, self: Tensor, k_: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    check("topk", d, bool_ok=False)
    ax = wrap_dim(dim, self._data.ndim)
    n = self._data.shape[ax] if self._data.ndim else 1
    if not 0 <= k_ <= n:
        raise OpError("selected index k out of range")
    if self._data.ndim == 0:
        return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
            xp.zeros((), dtype=i64), _dt.int64, self._device
        )
    a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
    order = stable_order(kit, a, largest)[..., :k_]  # Note [Tie order of sort and topk]
    return finish(kit, self, order, ax)


# --- selection: which of tied elements PyTorch's CPU kernels return ---------------------------
#
# kthvalue selects with quick_select_template (ATen's
# SortingUtils.h: median-of-three pivots, Hoare partitioning, values and indices swapped
# together), so among elements equal to the selected one, the index returned is where that
# algorithm leaves them, not the stable order's. The value comes from a sort (vectorized);
# only rows where it is tied are replayed, on the host, to find PyTorch's index.


def _gt_or_nan(x: Any, y: Any) -> bool:
    """ATen's comparator: NaN above every number, else ``x > y``."""
    return bool((x != x and y == y) or x > y)


def quick_select_index(values: list[Any], k: int) -> int:
    """The original index that ATen's ``quick_select_template`` leaves at position ``k``."""
    arr = list(values)
    ind = list(range(len(arr)))
    gt = _gt_or_nan

    def swap(i: int, j: int) -> None:
        arr[i], arr[j] = arr[j], arr[i]
        ind[i], ind[j] = ind[j], ind[i]

    lo, hi = 0, len(arr) - 1
    while True:
        if hi <= lo:
            return ind[k]
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            return ind[k]
        p = lo + (hi - lo) // 2
        swap(p, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j = lo + 1, hi
        piv = arr[lo]
        while True:
            i += 1
            while gt(piv, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def torch_tie_index(kit: Kit, a: Any, idx: Any, k: Any, device: Any) -> Any:
    """``idx`` (..., 1), positions along the last axis of ``a`` selected as the ``k``-th
    smallest (an int or an int array of ``idx``'s shape), with each row whose selected value
    is tied taking the index ATen's quick select gives (the section's note)."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    picked = kit.take_along_axis(a, idx, -1)
    same = a == picked
    if kit.kind(a) in "fc":
        same = same | ((a != a) & (picked != picked))
    ties = xp.sum(kit.cast(same, i64), axis=-1) > 1
    if not bool(xp.any(ties)):  # (Meta: no values, no ties)
        return idx
    host = kit.to_host(a)
    out = kit.to_host(idx).copy()
    kk = kit.to_host(k) if not isinstance(k, int) else None
    flat_a = host.reshape(-1, host.shape[-1])
    flat_out = out.reshape(-1)
    flat_k = None if kk is None else kk.reshape(-1)
    for r in kit.to_host(ties).reshape(-1).nonzero()[0].tolist():
        kr = k if flat_k is None else int(flat_k[r])
        flat_out[r] = quick_select_index(flat_a[r].tolist(), kr)
    return kit.from_host_array(out, device)


# --- median: the lower median, its index the stable order's (Note [Tie order ...]) ------


def median_check(name: str, d: _dt.dtype) -> None:
    if d.kind in "bc":  # PyTorch's dispatch macro: NotImplementedError
        raise NotImplementedForDtype(f"\"{name}\" not implemented for '{torch_name(d)}'")


def median_all(kit: Kit, self: Tensor) -> Tensor:
    xp = kit.xp
    d = self._dtype
    if math.prod(self._data.shape) == 0:  # PyTorch fills in NaN, converted as C converts it (x86)
        return kit.wrap(xp.asarray(_NAN_AS.get(d.name, float("nan"))), d, self._device)
    median_check("median_cpu", d)
    a = xp.reshape(kit.as_compute(self, d), (-1,))
    s = xp.sort(a)  # NaNs last: a NaN anywhere is the median, as PyTorch
    v = s[-1] if kit.kind(s) == "f" and bool(s[-1] != s[-1]) else s[(math.prod(a.shape) - 1) // 2]
    return kit.wrap(xp.asarray(v), d, self._device)


def median_dim(kit: Kit, self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    median_check("median_out", d)
    ax = wrap_dim(dim, self._data.ndim)
    if self._data.ndim == 0:
        return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
            xp.zeros((), dtype=i64), _dt.int64, self._device
        )
    n = self._data.shape[ax]
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {ax} to have non-zero size.")
    a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
    idx = xp.argsort(a, axis=-1, stable=True)[..., (n - 1) // 2 : (n - 1) // 2 + 1]
    if kit.kind(a) == "f":
        nan = a != a
        first_nan = xp.argmax(kit.cast(nan, kit.storage[_dt.uint8]), axis=-1, keepdims=True)
        idx = xp.where(xp.any(nan, axis=-1, keepdims=True), first_nan, idx)
    idx = xp.moveaxis(idx, -1, ax)
    vals = kit.take_along_axis(self._data, idx, ax)
    if not keepdim:
        idx, vals = xp.squeeze(idx, axis=ax), xp.squeeze(vals, axis=ax)
    return kit.wrap(vals, d, self._device), kit.wrap(idx, _dt.int64, self._device)


def kthvalue(
    kit: Kit, self: Tensor, k_: int, dim: int = -1, keepdim: bool = False
) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    median_check("kthvalue_cpu", d)
    ax = wrap_dim(dim, self._data.ndim)
    n = self._data.shape[ax] if self._data.ndim else 1
    if self._data.ndim and n == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {ax} to have non-zero size.")
    if not 1 <= k_ <= n:
        raise OpError(f"kthvalue(): selected number k out of range for dimension {ax}")
    if self._data.ndim == 0:
        return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
            xp.zeros((), dtype=i64), _dt.int64, self._device
        )
    a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
    idx = xp.argsort(a, axis=-1, stable=True)[..., k_ - 1 : k_]  # NaNs last, as PyTorch
    idx = torch_tie_index(kit, a, idx, k_ - 1, self._device)
    idx = xp.moveaxis(idx, -1, ax)
    vals = kit.take_along_axis(self._data, idx, ax)
    if not keepdim:
        idx, vals = xp.squeeze(idx, axis=ax), xp.squeeze(vals, axis=ax)
    return kit.wrap(vals, d, self._device), kit.wrap(idx, _dt.int64, self._device)


# --- cummax / cummin: a tie takes the later index, and so does a NaN, as PyTorch's CPU
# loop (`x >= best` or isnan(x) replaces the running best)


def running_extremum(
    kit: Kit, name: str, pick: Any, self: Tensor, dim: int
) -> tuple[Tensor, Tensor]:
    """``cummax`` / ``cummin`` (``name``) by the running ``pick`` (maximum, minimum): the
    ufunc's accumulate for numpy and cupy, else a loop (Note [Optional extensions])."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    if d.kind == "c":
        raise OpError(f"\"{name}_cpu\" not implemented for '{torch_name(d)}'")
    ax = wrap_dim(dim, self._data.ndim)
    if self._data.ndim == 0 or math.prod(self._data.shape) == 0:
        return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
            xp.zeros(self._data.shape, dtype=i64), _dt.int64, self._device
        )
    a = kit.as_compute(self, d)
    a = kit.cast(a, kit.storage[_dt.uint8]) if d.kind == "b" else a
    vals = _accumulate(kit, pick)(a, axis=ax)
    hit = (a == vals) | (a != a)
    shape = [1] * a.ndim
    shape[ax] = a.shape[ax]
    pos = xp.reshape(xp.arange(a.shape[ax], dtype=i64), tuple(shape))
    idx = _accumulate(kit, xp.maximum)(xp.where(hit, pos, xp.zeros((), dtype=i64)), axis=ax)
    return kit.wrap(vals, d, self._device), kit.wrap(idx, _dt.int64, self._device)


def cummax(kit: Kit, self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return running_extremum(kit, "cummax", kit.xp.maximum, self, dim)


def cummin(kit: Kit, self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    return running_extremum(kit, "cummin", kit.xp.minimum, self, dim)


# --- unique: always sorted (PyTorch's CPU kernels sort whatever ``sorted`` says); each NaN
# is a value of its own, as NaN != NaN


def no_complex_unique(op: str, name: str, d: _dt.dtype) -> None:
    if d.kind == "c":
        raise NotImplementedError(f"aten::{op}: \"{name}\" not implemented for '{torch_name(d)}'")


def longs(kit: Kit, a: Any, device: Any) -> Tensor:
    i64 = kit.storage[_dt.int64]
    return kit.wrap(kit.cast(a, i64), _dt.int64, device)


def first_of_runs(kit: Kit, s_: Any, rows: bool = False) -> Any:
    """Whether each element (or row) of sorted ``s_`` starts a new value: the first does,
    each other where it differs from the one before."""
    xp = kit.xp
    b_t = kit.storage[_dt.bool]
    n = s_.shape[0]
    if n == 0:
        return xp.zeros((0,), dtype=b_t)
    differs = s_[1:, ...] != s_[:-1, ...]
    if rows:
        differs = xp.any(differs, axis=1)
    return xp.concat([xp.ones((1,), dtype=b_t), differs])


def groups(kit: Kit, new: Any, order: Any) -> tuple[Any, Any]:
    """(each element's group in the original order, each group's size) of sorted values
    whose runs start where ``new`` is true; ``order`` sorted them."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    n = new.shape[0]
    group = xp.cumulative_sum(kit.cast(new, i64)) - 1
    inverse = xp.take(group, xp.argsort(order, stable=True)) if n else group
    ends = xp.concat([kit.cast(kit.nonzero(new)[0], i64), xp.asarray([n], dtype=i64)])
    return inverse, ends[1:] - ends[:-1]


def lexsort_rows(kit: Kit, rows: Any) -> Any:
    """The stable order of the rows of 2-D ``rows`` by their columns, first column first."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    lexsort = getattr(xp, "lexsort", None)
    if lexsort is not None:
        return lexsort(xp.flip(xp.permute_dims(rows, (1, 0)), axis=0))
    order = xp.arange(rows.shape[0], dtype=i64)
    for j in range(rows.shape[1] - 1, -1, -1):  # last key first, each sort stable
        order = xp.take(order, xp.argsort(xp.take(rows[:, j], order), stable=True))
    return order


def unique2(
    kit: Kit,
    self: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    no_complex_unique("_unique2", "unique", d)
    a = xp.reshape(kit.as_compute(self, d), (-1,))
    order = xp.argsort(a, stable=True)  # NaNs last, in their original order
    s_ = xp.take(a, order)
    new = first_of_runs(kit, s_)
    inverse, counts = groups(kit, new, order)
    empty = xp.zeros((0,), dtype=i64)
    dev = self._device
    return (
        kit.wrap(xp.take(s_, kit.nonzero(new)[0]), d, dev),  # Note [Value-dependent shapes]
        longs(kit, xp.reshape(inverse, self._data.shape) if return_inverse else empty, dev),
        longs(kit, counts if return_counts else empty, dev),
    )


def unique_dim(
    kit: Kit,
    self: Tensor,
    dim: int,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
) -> tuple[Tensor, Tensor, Tensor]:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    no_complex_unique("unique_dim", "unique_dim", d)
    a = self._data
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    ax = wrap_dim(dim, a.ndim)
    dev = self._device
    empty = xp.zeros((0,), dtype=i64)
    if math.prod(a.shape) == 0:
        if sum(1 for n in a.shape if n == 0) != 1:
            raise OpError(
                "Number of zero sized dimensions is more than one, so unique cannot be applied "
            )
        if a.shape[ax] != 0:
            raise OpError(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                "applied"
            )
        return kit.wrap(kit.copy(a), d, dev), longs(kit, empty, dev), longs(kit, empty, dev)
    m = xp.moveaxis(kit.as_compute(self, d), ax, 0)
    rows = xp.reshape(m, (m.shape[0], -1))
    order = lexsort_rows(kit, rows)  # rows in lexicographic order, stable
    s_ = xp.take(rows, order, axis=0)
    new = first_of_runs(kit, s_, rows=True)
    inverse, counts = groups(kit, new, order)
    firsts = xp.take(xp.take(m, order, axis=0), kit.nonzero(new)[0], axis=0)  # known length
    out = xp.moveaxis(firsts, 0, ax)
    return (
        kit.wrap(out, d, dev),
        longs(kit, inverse if return_inverse else empty, dev),
        longs(kit, counts if return_counts else empty, dev),
    )


KERNELS: dict[str, Callable[..., Any]] = {
    "cummax": cummax,
    "cummin": cummin,
    "sort": sort,
    "sort.stable": sort_stable,
    "topk": topk,
    "median": median_all,
    "median.dim": median_dim,
    "kthvalue": kthvalue,
    "_unique2": unique2,
    "unique_dim": unique_dim,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}


def _accumulate(kit: Kit, pick: Any) -> Any:
    """The running ``pick`` (maximum or minimum) along an axis: the ufunc's ``accumulate``
    where the namespace has one (Note [Optional extensions]), else one ``pick`` per step."""
    acc = getattr(pick, "accumulate", None)
    if acc is not None:
        return acc

    def run(a: Any, *, axis: int) -> Any:
        return _standard.running(kit, pick, a, axis=axis)

    return run
