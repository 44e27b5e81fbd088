"""scatter_reduce: ``src`` combined into ``self`` at the positions ``index`` names along a dim,
by sum, prod, mean, amax or amin, with or without ``self``'s own values (``include_self``);
and its in-place form.

Note [Reducing at repeated positions]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
numpy and CuPy combine values at repeated flat positions with their ufuncs' ``at``
(``np.maximum.at``). A namespace without them (the array API standard has none), or a ufunc
whose ``at`` the library does not implement, sorts the positions and combines one round per
repetition: round ``r`` takes the ``r``-th value written
to each position, whose positions are distinct, so a gather, the elementwise combination and a
scatter (:func:`_standard.scatter`) do it; the rounds are as many as the most repeated
position's count. No round selects its values with a boolean mask (a lazy library could not
size the selection without computing it): each position finds its ``r``-th value by searching
the sorted positions (:func:`_standard.scatter` with the reduction's ufunc as its ``combine``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .. import _standard
from .._kit import Kernels, Kit, OpError, bind, fmt_shape, wrap_dim
from ._index import check_range, written_back

REDUCES = ("sum", "prod", "mean", "amax", "amin")
ALIASES = {"max": "amax", "min": "amin"}  # PyTorch still takes scatter_reduce's old names
_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _identity(kit: Kit, reduce: str, d: _dt.dtype) -> Any:
    """The value a position starts from when ``self`` is left out: what the reduction of
    nothing gives (0, 1, the lowest or highest value of the dtype)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    lowest = reduce == "amax"
    if d.is_floating_point:
        return float("-inf") if lowest else float("inf")
    if d is _dt.bool:
        return not lowest
    info = kit.xp.iinfo(kit.storage[d])
    return int(info.min) if lowest else int(info.max)


def reduce_at(kit: Kit, flat: Any, pos: Any, vals: Any, reduce: str) -> Any:
    """A copy of 1-D ``flat`` with ``vals`` combined in at positions ``pos`` (Note [Reducing
    at repeated positions])."""
    xp = kit.xp
    name = _UFUNC[reduce]
    at = getattr(getattr(xp, name, None), "at", None) if kit.fancy_setitem else None
    out = kit.copy(flat)
    if at is not None:
        try:
            at(out, pos, vals)
            return out
        except (NotImplementedError, TypeError):  # a ufunc whose at() the library lacks
            out = kit.copy(flat)
    return _standard.scatter(kit, out, pos, vals, True, getattr(xp, name))


def _check(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, name: str) -> int:
    if reduce not in REDUCES:
        raise OpError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if index._dtype is not _dt.int64:
        raise OpError(f"{name}(): Expected dtype int64 for index")
    if src._dtype is not self._dtype:
        raise OpError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    s, i, c = tuple(self._data.shape), tuple(index._data.shape), tuple(src._data.shape)
    d = wrap_dim(dim, len(s))
    if math.prod(index._data.shape) == 0:
        return d
    if not (len(i) == len(s) == len(c) or (len(s) <= 1 and len(i) <= 1 and len(c) <= 1)):
        raise OpError("Index tensor must have the same number of dimensions as self tensor")
    fits = all(i[k] <= c[k] and (k == d or i[k] <= s[k]) for k in range(len(i)))
    if not fits:
        raise OpError(
            f"Expected index {fmt_shape(i)} to be smaller than self {fmt_shape(s)} apart from "
            f"dimension {d} and to be smaller size than src {fmt_shape(c)}"
        )
    return d


def scatter_reduce(
    kit: Kit,
    self: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    reduce = ALIASES.get(reduce, reduce)
    d = _check(self, dim, index, src, reduce, "scatter_reduce")
    dt = self._dtype
    dev = self._device
    a = kit.as_compute(self, dt)
    shape = tuple(a.shape) or (1,)
    idx = xp.reshape(kit.operand(index, _dt.int64, dev), tuple(index._data.shape) or (1,))
    if math.prod(idx.shape) == 0:
        return kit.wrap(kit.copy(a), dt, dev)
    check_range(kit, idx, d, shape[d])
    ishape = tuple(idx.shape)
    # each element of ``index`` names its target: its own coordinates, ``index``'s value at d
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    pos = xp.zeros(ishape, dtype=i64)
    for k, n in enumerate(ishape):
        if k == d:
            coord = idx
        else:
            coord = xp.reshape(
                xp.arange(n, dtype=i64), tuple(n if j == k else 1 for j in range(len(ishape)))
            )
        pos = pos + coord * strides[k]
    pos = xp.reshape(pos, (-1,))
    s = xp.reshape(kit.as_compute(src, dt), tuple(src._data.shape) or (1,))
    vals = xp.reshape(s[tuple(slice(0, n) for n in ishape)], (-1,))
    flat = xp.reshape(a, (-1,))
    if not include_self:
        start = xp.full(pos.shape, _identity(kit, reduce, dt), dtype=flat.dtype)
        flat = _standard.scatter(kit, kit.copy(flat), pos, start, False)
    if dt is _dt.bool and reduce in ("sum", "mean"):
        out = reduce_at(kit, flat, pos, vals, "amax")  # a bool sum is a logical or
    elif dt is _dt.bool and reduce == "prod":
        out = reduce_at(kit, flat, pos, vals, "amin")  # a bool product is a logical and
    else:
        out = reduce_at(kit, flat, pos, vals, reduce)
    if reduce == "mean" and dt is not _dt.bool:
        ones = xp.ones(pos.shape, dtype=i64)
        base = xp.ones(flat.shape, dtype=i64) if include_self else xp.zeros(flat.shape, dtype=i64)
        counts = reduce_at(kit, base, pos, ones, "sum")
        counts = xp.where(counts == 0, xp.ones_like(counts), counts)
        if dt.is_floating_point:
            out = out / kit.cast(counts, out.dtype)
        else:
            out = xp.floor_divide(out, kit.cast(counts, out.dtype))
    return kit.wrap(xp.reshape(out, tuple(a.shape)), dt, dev)


KERNELS: dict[str, Callable[..., Any]] = {"scatter_reduce.two": scatter_reduce}


def build(kit: Kit) -> Kernels:
    k: Kernels = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    k["scatter_reduce_.two"] = written_back(k["scatter_reduce.two"])
    return k
