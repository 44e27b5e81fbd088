"""Sorting kernels: sort, topk, median, kthvalue and cummax / cummin.

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

from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import Kernels, Kit, OpError, torch_name, wrap_dim

# what PyTorch's median of an empty tensor holds: NaN converted to the dtype by the C++ cast
_NAN_AS = {"bool": True, "uint8": 0, "int8": 0, "int16": 0, "int32": -(2**31), "int64": -(2**63)}


def build(kit: Kit) -> Kernels:
    xp = kit.xp
    k: Kernels = {}
    i64 = kit.storage[_dt.int64]

    def check(name: str, d: _dt.dtype, *, bool_ok: bool = True) -> None:
        if d.kind == "c":
            raise OpError(f"{name} does not support complex dtypes on CPU")
        if d.kind == "b" and not bool_ok:
            raise OpError(f"{name} does not support bool dtypes on CPU")

    def stable_order(a: Any, descending: bool) -> Any:
        """Indices sorting ``a`` along its last axis, ties in their original order."""
        if not descending:
            return xp.argsort(a, axis=-1, kind="stable")
        n = a.shape[-1]
        rev = xp.argsort(a[..., ::-1], axis=-1, kind="stable")[..., ::-1]
        return (n - 1) - rev

    def finish(self: Tensor, order: Any, ax: int) -> tuple[Tensor, Tensor]:
        idx = xp.moveaxis(order, -1, ax)
        vals = xp.take_along_axis(self._data, idx, axis=ax)
        return kit.wrap(vals, self._dtype, self._device), kit.wrap(idx, _dt.int64, self._device)

    def sort_impl(self: Tensor, dim: int, descending: bool) -> tuple[Tensor, Tensor]:
        d = self._dtype
        check("Sort", d)
        ax = wrap_dim(dim, self._data.ndim)
        if self._data.ndim == 0:
            return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
                xp.zeros((), dtype=i64), _dt.int64, self._device
            )
        a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
        order = stable_order(a, descending)  # Note [Tie order of sort and topk]
        return finish(self, order, ax)

    def sort(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
        return sort_impl(self, dim, descending)

    def sort_stable(
        self: Tensor, *, stable: bool | None, dim: int = -1, descending: bool = False
    ) -> tuple[Tensor, Tensor]:
        return sort_impl(self, dim, descending)  # stable or not: Note [Tie order of sort and topk]

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
        order = stable_order(a, largest)[..., :k_]  # Note [Tie order of sort and topk]
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
    def kthvalue(
        self: Tensor, k_: int, dim: int = -1, keepdim: bool = False
    ) -> tuple[Tensor, Tensor]:
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
        idx = xp.argsort(a, axis=-1, kind="stable")[..., k_ - 1 : k_]  # NaNs last, as PyTorch
        idx = xp.moveaxis(idx, -1, ax)
        vals = xp.take_along_axis(self._data, idx, axis=ax)
        if not keepdim:
            idx, vals = xp.squeeze(idx, axis=ax), xp.squeeze(vals, axis=ax)
        return kit.wrap(vals, d, self._device), kit.wrap(idx, _dt.int64, self._device)

    k["kthvalue"] = kthvalue

    # --- cummax / cummin: a tie takes the later index, and so does a NaN, as PyTorch's CPU
    # loop (`x >= best` or isnan(x) replaces the running best)

    def defcumulative(name: str, accumulate: Any) -> None:
        def kernel(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
            d = self._dtype
            if d.kind == "c":
                raise OpError(f"\"{name}_cpu\" not implemented for '{torch_name(d)}'")
            ax = wrap_dim(dim, self._data.ndim)
            if self._data.ndim == 0 or self._data.size == 0:
                return kit.wrap(kit.copy(self._data), d, self._device), kit.wrap(
                    xp.zeros(self._data.shape, dtype=i64), _dt.int64, self._device
                )
            a = kit.as_compute(self, d)
            a = kit.cast(a, kit.storage[_dt.uint8]) if d.kind == "b" else a
            vals = accumulate(a, axis=ax)
            hit = (a == vals) | (a != a)
            shape = [1] * a.ndim
            shape[ax] = a.shape[ax]
            pos = xp.reshape(xp.arange(a.shape[ax], dtype=i64), tuple(shape))
            idx = xp.maximum.accumulate(xp.where(hit, pos, 0), axis=ax)
            return kit.wrap(vals, d, self._device), kit.wrap(idx, _dt.int64, self._device)

        k[name] = kernel

    defcumulative("cummax", xp.maximum.accumulate)
    defcumulative("cummin", xp.minimum.accumulate)
    return k
