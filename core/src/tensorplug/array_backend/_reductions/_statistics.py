"""Order statistics and scans beyond the sort kernels: ``mode`` (the most frequent value),
``nanmedian`` (the median of the values that are not NaN) and ``logcumsumexp`` (the running
``logaddexp``).

``mode`` follows PyTorch's CPU kernel: the values are sorted, equal neighbours make a run (a NaN
equals nothing, so each NaN is a run of one), the longest run wins, the smallest value among
runs of that length; its index is the last position of the value in the input. ``nanmedian``'s
index is the lower middle of the stable order of the values that are not NaN, as ``median``'s
(Note [Tie order of sort and topk] in _sorting.py); a slice of NaNs only gives NaN at its first
position (PyTorch's ``nth_element`` picks one of them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .. import _standard
from .._kit import Kernels, Kit, bind, torch_name, wrap_dim
from .._pointwise._numeric import NotImplementedForDtype, _complex_logaddexp


def _running(kit: Kit, f: Any, a: Any) -> Any:
    """The running ``f`` (maximum, minimum, logaddexp) along the last axis: the ufunc's
    ``accumulate`` where the library has one, else one step per element."""
    acc = getattr(f, "accumulate", None)
    if acc is not None:
        try:
            return acc(a, axis=-1)
        except NotImplementedError:  # CuPy's logaddexp.accumulate exists and refuses
            pass
    return _standard.running(kit, f, a, axis=a.ndim - 1)


def _scalar_result(kit: Kit, self: Tensor) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    zero = xp.zeros((), dtype=kit.storage[_dt.int64])
    return (
        kit.wrap(kit.copy(self._data), self._dtype, self._device),
        kit.wrap(zero, _dt.int64, self._device),
    )


def _finish(kit: Kit, self: Tensor, idx: Any, ax: int, keepdim: bool) -> tuple[Tensor, Tensor]:
    """Values and indices from indices ``idx`` (last axis of length 1) along ``ax``."""
    xp = kit.xp
    idx = xp.moveaxis(idx, -1, ax)
    vals = kit.take_along_axis(self._data, idx, ax)
    if not keepdim:
        idx, vals = xp.squeeze(idx, axis=ax), xp.squeeze(vals, axis=ax)
    return kit.wrap(vals, self._dtype, self._device), kit.wrap(idx, _dt.int64, self._device)


def _not_empty(name: str, self: Tensor, ax: int) -> None:
    if self._data.shape[ax] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {ax} to have non-zero size.")


# --- mode ----------------------------------------------------------------------------------


def mode(kit: Kit, self: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    d = self._dtype
    if d.kind == "c":
        raise NotImplementedForDtype(f"\"mode_cpu\" not implemented for '{torch_name(d)}'")
    ax = wrap_dim(dim, self._data.ndim)
    if self._data.ndim == 0:
        return _scalar_result(kit, self)
    _not_empty("mode", self, ax)
    a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
    n = a.shape[-1]
    i64 = kit.storage[_dt.int64]
    order = xp.argsort(a, axis=-1, stable=True)
    s = kit.take_along_axis(a, order, -1)
    pos = xp.broadcast_to(xp.arange(n, dtype=i64), s.shape)
    differs = s[..., 1:] != s[..., :-1]
    edge = xp.ones((*s.shape[:-1], 1), dtype=differs.dtype)
    starts = xp.concat([edge, differs], axis=-1)
    ends = xp.concat([differs, edge], axis=-1)
    first = _running(kit, xp.maximum, xp.where(starts, pos, xp.zeros_like(pos)))
    last = xp.flip(_running(kit, xp.minimum, xp.flip(xp.where(ends, pos, n - 1), axis=-1)), axis=-1)
    count = last - first + 1
    best = xp.argmax(count, axis=-1, keepdims=True)  # the longest run, smallest value first
    end_of_best = kit.take_along_axis(last, best, -1)
    return _finish(kit, self, kit.take_along_axis(order, end_of_best, -1), ax, keepdim)


# --- nanmedian -----------------------------------------------------------------------------


def _nanmedian_check(name: str, d: _dt.dtype) -> None:
    """PyTorch's nanmedian runs median's kernels (and names them)."""
    if d.kind in "bc":
        raise NotImplementedForDtype(f"\"{name}\" not implemented for '{torch_name(d)}'")


def nanmedian_all(kit: Kit, self: Tensor) -> Tensor:
    xp = kit.xp
    d = self._dtype
    _nanmedian_check("median_cpu", d)
    if math.prod(self._data.shape) == 0:
        return kit.wrap(xp.asarray(float("nan")), d, self._device)
    a = xp.reshape(kit.as_compute(self, d), (-1,))
    s = xp.sort(a)  # NaNs last
    i64 = kit.storage[_dt.int64]
    valid = xp.sum(kit.cast(a == a, i64), keepdims=True)  # an array: no value read (Meta)
    middle = xp.where(valid > 0, (valid - 1) // 2, xp.zeros_like(valid))
    return kit.wrap(xp.reshape(xp.take(s, middle, axis=0), ()), d, self._device)


def nanmedian_dim(kit: Kit, self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    d = self._dtype
    _nanmedian_check("median_out", d)
    ax = wrap_dim(dim, self._data.ndim)
    if self._data.ndim == 0:
        return _scalar_result(kit, self)
    _not_empty("nanmedian", self, ax)
    a = xp.moveaxis(kit.as_compute(self, d), ax, -1)
    i64 = kit.storage[_dt.int64]
    order = xp.argsort(a, axis=-1, stable=True)  # NaNs last
    valid = xp.sum(kit.cast(a == a, i64), axis=-1, keepdims=True)
    middle = xp.where(valid > 0, (valid - 1) // 2, xp.zeros_like(valid))
    return _finish(kit, self, kit.take_along_axis(order, middle, -1), ax, keepdim)


# --- logcumsumexp --------------------------------------------------------------------------


def logcumsumexp(kit: Kit, self: Tensor, dim: int) -> Tensor:
    xp = kit.xp
    d = self._dtype
    if d.kind not in "fc":
        raise NotImplementedForDtype(
            f"\"logcumsumexp_out_cpu\" not implemented for '{torch_name(d)}'"
        )
    ndim = self._data.ndim
    ax = wrap_dim(dim, ndim)
    if ndim == 0:
        return kit.wrap(kit.copy(self._data), d, self._device)
    a = xp.moveaxis(kit.cast(self._data, kit.accumulate[d]), ax, -1)
    f: Callable[[Any, Any], Any] = _complex_logaddexp(xp) if d.kind == "c" else xp.logaddexp
    with kit.quiet():
        r = _running(kit, f, a)
    return kit.wrap(xp.moveaxis(r, -1, ax), d, self._device)


KERNELS: dict[str, Callable[..., Any]] = {
    "mode": mode,
    "nanmedian": nanmedian_all,
    "nanmedian.dim": nanmedian_dim,
    "logcumsumexp": logcumsumexp,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
