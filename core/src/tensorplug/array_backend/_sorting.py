"""Sorting kernels: sort, topk and median.

Note [Tie order of sort and topk]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Which index PyTorch returns among equal values is what its CPU kernels' C++ algorithms leave:
``sort(stable=True)`` and ``median`` are stable (ties in their original order, in both
directions; ``median`` gives the element at the lower middle of that order), but
``sort(stable=False)`` runs ``std::sort`` and ``topk`` runs ``std::nth_element`` /
``std::partial_sort`` (libstdc++), whose tie orders follow from their partitioning steps. Rows
whose values are all distinct have one answer, which numpy gives. Rows with ties run
:func:`_std_sort`, :func:`_nth_element` and :func:`_partial_sort`, the libstdc++ algorithms
step for step in Python, on (key, index) pairs compared by key: the same answer as PyTorch, at
Python speed for those rows only. NaNs compare greater than every number (ascending: last;
descending and ``largest``: first), as in PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import Kernels, Kit, OpError, torch_name, wrap_dim

Pair = tuple[Any, int]
Less = Callable[[Pair, Pair], bool]

# --- libstdc++'s algorithms (bits/stl_algo.h, bits/stl_heap.h), on v[lo:hi] ---------------------

_THRESHOLD = 16


def _lt(a: Pair, b: Pair) -> bool:
    return bool(a[0] < b[0])


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _move_median_to_first(v: list[Pair], r: int, a: int, b: int, c: int) -> None:
    if _lt(v[a], v[b]):
        if _lt(v[b], v[c]):
            m = b
        elif _lt(v[a], v[c]):
            m = c
        else:
            m = a
    elif _lt(v[a], v[c]):
        m = a
    elif _lt(v[b], v[c]):
        m = c
    else:
        m = b
    v[r], v[m] = v[m], v[r]


def _unguarded_partition(v: list[Pair], first: int, last: int, pivot: int) -> int:
    while True:
        while _lt(v[first], v[pivot]):
            first += 1
        last -= 1
        while _lt(v[pivot], v[last]):
            last -= 1
        if not first < last:
            return first
        v[first], v[last] = v[last], v[first]
        first += 1


def _partition_pivot(v: list[Pair], lo: int, hi: int) -> int:
    _move_median_to_first(v, lo, lo + 1, lo + (hi - lo) // 2, hi - 1)
    return _unguarded_partition(v, lo + 1, hi, lo)


def _unguarded_linear_insert(v: list[Pair], last: int) -> None:
    val = v[last]
    nxt = last - 1
    while _lt(val, v[nxt]):
        v[last] = v[nxt]
        last = nxt
        nxt -= 1
    v[last] = val


def _insertion_sort(v: list[Pair], lo: int, hi: int) -> None:
    for i in range(lo + 1, hi):
        val = v[i]
        if _lt(val, v[lo]):
            v[lo + 1 : i + 1] = v[lo:i]
            v[lo] = val
        else:
            _unguarded_linear_insert(v, i)


def _push_heap(v: list[Pair], base: int, hole: int, top: int, value: Pair) -> None:
    parent = (hole - 1) // 2
    while hole > top and _lt(v[base + parent], value):
        v[base + hole] = v[base + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[base + hole] = value


def _adjust_heap(v: list[Pair], base: int, hole: int, n: int, value: Pair) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if _lt(v[base + child], v[base + child - 1]):
            child -= 1
        v[base + hole] = v[base + child]
        hole = child
    if n & 1 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        v[base + hole] = v[base + child - 1]
        hole = child - 1
    _push_heap(v, base, hole, top, value)


def _pop_heap(v: list[Pair], lo: int, hi: int, result: int) -> None:
    value = v[result]
    v[result] = v[lo]
    _adjust_heap(v, lo, 0, hi - lo, value)


def _heap_select(v: list[Pair], lo: int, mid: int, hi: int) -> None:
    n = mid - lo
    if n >= 2:  # make_heap
        parent = (n - 2) // 2
        while True:
            _adjust_heap(v, lo, parent, n, v[lo + parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(mid, hi):
        if _lt(v[i], v[lo]):
            _pop_heap(v, lo, mid, i)


def _partial_sort(v: list[Pair], lo: int, mid: int, hi: int) -> None:
    _heap_select(v, lo, mid, hi)
    while mid - lo > 1:  # sort_heap
        mid -= 1
        _pop_heap(v, lo, mid, mid)


def _introsort_loop(v: list[Pair], lo: int, hi: int, depth: int) -> None:
    while hi - lo > _THRESHOLD:
        if depth == 0:
            _partial_sort(v, lo, hi, hi)
            return
        depth -= 1
        cut = _partition_pivot(v, lo, hi)
        _introsort_loop(v, cut, hi, depth)
        hi = cut


def _std_sort(v: list[Pair], lo: int, hi: int) -> None:
    if hi - lo < 2:
        return
    _introsort_loop(v, lo, hi, 2 * _lg(hi - lo))
    if hi - lo > _THRESHOLD:
        _insertion_sort(v, lo, lo + _THRESHOLD)
        for i in range(lo + _THRESHOLD, hi):
            _unguarded_linear_insert(v, i)
    else:
        _insertion_sort(v, lo, hi)


def _nth_element(v: list[Pair], nth: int) -> None:
    lo, hi = 0, len(v)
    if lo == hi or nth == hi:
        return
    depth = 2 * _lg(hi - lo)
    while hi - lo > 3:
        if depth == 0:
            _heap_select(v, lo, nth + 1, hi)
            v[lo], v[nth] = v[nth], v[lo]
            return
        depth -= 1
        cut = _partition_pivot(v, lo, hi)
        if cut <= nth:
            lo = cut
        else:
            hi = cut
    _insertion_sort(v, lo, hi)


# what PyTorch's median of an empty tensor holds: NaN converted to the dtype by the C++ cast
_NAN_AS = {"bool": True, "uint8": 0, "int8": 0, "int16": 0, "int32": -(2**31), "int64": -(2**63)}

# --- the kernels -------------------------------------------------------------------------------


def build(kit: Kit) -> Kernels:
    xp = kit.xp
    k: Kernels = {}
    i64 = kit.storage[_dt.int64]

    def check(name: str, d: _dt.dtype, *, bool_ok: bool = True) -> None:
        if d.kind == "c":
            raise OpError(f"{name} does not support complex dtypes on CPU")
        if d.kind == "b" and not bool_ok:
            raise OpError(f"{name} does not support bool dtypes on CPU")

    def keys_of(row: Any, descending: bool) -> list[Pair]:
        """(key, index) pairs whose ``<`` is PyTorch's comparator (NaN greatest)."""
        out: list[Pair] = []
        for i, x in enumerate(row.tolist()):
            nan = x != x
            key = (1, 0) if nan else (0, x)
            if descending:
                key = (-key[0], -key[1])
            out.append((key, i))
        return out

    def has_ties(rows: Any) -> Any:
        """Per row of a 2-d array: whether two of its values are equal (NaNs included)."""
        s = xp.sort(rows, axis=-1)
        same = s[:, 1:] == s[:, :-1]
        if s.dtype.kind == "f":
            same = same | ((s[:, 1:] != s[:, 1:]) & (s[:, :-1] != s[:, :-1]))
        return xp.any(same, axis=-1)

    def stable_order(a: Any, descending: bool) -> Any:
        """Indices sorting ``a`` along its last axis, ties in their original order."""
        if not descending:
            return xp.argsort(a, axis=-1, kind="stable")
        n = a.shape[-1]
        rev = xp.argsort(a[..., ::-1], axis=-1, kind="stable")[..., ::-1]
        return (n - 1) - rev

    def rows_of(a: Any) -> Any:
        return xp.reshape(a, (-1, a.shape[-1]))

    def finish(self: Tensor, order: Any, ax: int) -> tuple[Tensor, Tensor]:
        idx = xp.moveaxis(order, -1, ax)
        vals = xp.take_along_axis(self._data, idx, axis=ax)
        return kit.wrap(vals, self._dtype, self._device), kit.wrap(idx, _dt.int64, self._device)

    def sort_impl(self: Tensor, stable: bool, dim: int, descending: bool) -> tuple[Tensor, Tensor]:
        d = self._dtype
        check("Sort", d)
        ax = wrap_dim(dim, self._data.ndim)
        if self._data.ndim == 0:
            return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
                xp.zeros((), dtype=i64), _dt.int64, self._device
            )
        a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
        order = stable_order(a, descending)
        n = a.shape[-1]
        if not stable and n > _THRESHOLD and a.size:  # insertion sort (n <= 16) is stable
            rows = rows_of(a)
            out = rows_of(order).copy()
            for r in xp.nonzero(has_ties(rows))[0].tolist():
                v = keys_of(rows[r], descending)
                _std_sort(v, 0, n)
                out[r] = [i for _, i in v]
            order = xp.reshape(out, a.shape)
        return finish(self, order, ax)

    def sort(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
        return sort_impl(self, False, dim, descending)

    def sort_stable(
        self: Tensor, *, stable: bool | None, dim: int = -1, descending: bool = False
    ) -> tuple[Tensor, Tensor]:
        return sort_impl(self, bool(stable), dim, descending)

    def topk(
        self: Tensor, k_: int, dim: int = -1, largest: bool = True, sorted: bool = True
    ) -> tuple[Tensor, Tensor]:
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
        order = stable_order(a, largest)[..., :k_]
        if k_ and a.size:
            rows = rows_of(a)
            out = rows_of(order).copy()
            partial = k_ * 64 <= n  # PyTorch's choice between the two algorithms
            for r in range(rows.shape[0]):
                if not partial and not sorted:
                    pass  # nth_element leaves its own order even without ties
                elif not bool(has_ties(rows[r : r + 1])[0]):
                    continue
                v = keys_of(rows[r], largest)
                if partial:
                    _partial_sort(v, 0, k_, n)
                else:
                    _nth_element(v, k_ - 1)
                    if sorted:
                        _std_sort(v, 0, k_ - 1)
                out[r] = [i for _, i in v[:k_]]
            order = xp.reshape(out, (*a.shape[:-1], k_))
        return finish(self, order, ax)

    k["sort"] = sort
    k["sort.stable"] = sort_stable
    k["topk"] = topk

    # --- median: the lower median, its index the stable order's (Note [Tie order ...]) ------

    def median_check(name: str, d: _dt.dtype) -> None:
        if d.kind in "bc":
            raise OpError(f"\"{name}\" not implemented for '{torch_name(d)}'")

    def median_all(self: Tensor) -> Tensor:
        d = self._dtype
        if self._data.size == 0:  # PyTorch fills in NaN, converted as C converts it (x86)
            return kit.wrap(xp.asarray(_NAN_AS.get(d.name, float("nan"))), d, self._device)
        median_check("median_cpu", d)
        a = xp.reshape(kit.as_compute(self, d), (-1,))
        s = xp.sort(a)  # NaNs last: a NaN anywhere is the median, as PyTorch
        v = s[-1] if s.dtype.kind == "f" and s[-1] != s[-1] else s[(a.size - 1) // 2]
        return kit.wrap(xp.asarray(v), d, self._device)

    def median_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
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
        idx = xp.argsort(a, axis=-1, kind="stable")[..., (n - 1) // 2 : (n - 1) // 2 + 1]
        if a.dtype.kind == "f":
            nan = a != a
            idx = xp.where(
                xp.any(nan, axis=-1, keepdims=True), xp.argmax(nan, axis=-1)[..., None], idx
            )
        idx = xp.moveaxis(idx, -1, ax)
        vals = xp.take_along_axis(self._data, idx, axis=ax)
        if not keepdim:
            idx, vals = xp.squeeze(idx, axis=ax), xp.squeeze(vals, axis=ax)
        return kit.wrap(vals, d, self._device), kit.wrap(idx, _dt.int64, self._device)

    k["median"] = median_all
    k["median.dim"] = median_dim
    return k
