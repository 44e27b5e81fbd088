"""Counting kernels: bincount, histc and histogram (counts of values per bin), isin
(membership in a set of values) and unique_consecutive (runs of equal values).

Counts are added at each value's bin with numpy's ``add.at`` (``kit.put(...,
accumulate=True)``), or elsewhere by a sum of one-hot rows (Note [Fixed-size bin counts]); bins
are found as PyTorch's kernels find them: histc by linear interpolation between its range's
ends, histogram by searching its bin edges (its linear guess corrected against the edges gives
the same bin).

Note [Fixed-size bin counts]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Without numpy's ``add.at`` (the array API has no accumulating scatter), the counts of ``n``
values in ``bins`` bins are ``sum(where(pos[:, None] == arange(bins), vals[:, None], 0), 0)``:
every value compared with every bin, values out of range weighing 0 rather than being dropped
by a boolean mask. Every size is known before anything is computed (a lazy library such as dask
cannot size a masked array without computing it, so its chunks would be unknown) and nothing is
read on the host (the standard scatter's rounds read the longest run of a repeated position).
It costs ``n * bins`` comparisons, done in blocks of at most ``_ONE_HOT_BLOCK`` elements on an
eager library (a lazy one computes chunk by chunk anyway).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernels, Kit, OpError, bind, torch_name, wrap_dim
from ._sorting import first_of_runs, longs

builtins_range = range  # histogram's argument named range hides the builtin


def _integral(d: _dt.dtype) -> bool:
    return not (d.is_floating_point or d.is_complex or d is _dt.bool)


def bincount(kit: Kit, self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    xp = kit.xp
    dev = self._device
    if not _integral(self._dtype):
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{torch_name(self._dtype)}'"
        )
    a = self._data
    if minlength < 0:
        raise OpError("minlength should be >= 0")
    if a.ndim != 1:
        raise OpError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != a.shape[0]):
        raise OpError("weights should be 1-d and have the same length as input")
    i64 = kit.storage[_dt.int64]
    idx = kit.cast(a, i64)
    if a.shape[0] and int(xp.min(idx)) < 0:
        raise OpError("bincount only supports 1-d non-negative integral inputs.")
    n = max(minlength, int(xp.max(idx)) + 1 if a.shape[0] else 0)
    # PyTorch: float32 weights count in float32, any other weights in float64
    if weights is None:
        d = _dt.int64
        vals = xp.ones(idx.shape, dtype=i64)
    else:
        d = _dt.float32 if weights._dtype is _dt.float32 else _dt.float64
        vals = kit.cast(kit.operand(weights, weights._dtype, dev), kit.storage[d])
    if not kit.fancy_setitem:  # Note [Fixed-size bin counts]
        return kit.wrap(_one_hot_counts(kit, idx, vals, n), d, dev)
    out = xp.zeros((n,), dtype=kit.storage[d])
    kit.put(out, (idx,), vals, accumulate=True)
    return kit.wrap(out, d, dev)


_ONE_HOT_BLOCK = 1 << 20  # elements of one block of comparisons (Note [Fixed-size bin counts])


def _one_hot_counts(kit: Kit, pos: Any, vals: Any, bins: int) -> Any:
    """``vals`` summed per bin ``pos`` (flat, every position in ``[0, bins)``), as a sum of
    one-hot rows (Note [Fixed-size bin counts])."""
    xp = kit.xp
    n = int(pos.shape[0])
    cells = xp.reshape(xp.arange(bins, dtype=pos.dtype), (1, bins))
    zero = xp.zeros((), dtype=vals.dtype)
    step = n if kit.lazy else max(_ONE_HOT_BLOCK // max(bins, 1), 1)
    out = None
    for start in builtins_range(0, max(n, 1), max(step, 1)):
        stop = min(start + step, n)  # the standard leaves slices past the end unspecified
        p, v = pos[start:stop], vals[start:stop]
        part = xp.sum(xp.where(p[:, None] == cells, v[:, None], zero), axis=0, dtype=vals.dtype)
        out = part if out is None else out + part
    return out


def _bin_counts(kit: Kit, x: Any, pos: Any, valid: Any, bins: int, w: Any, dt: Any) -> Any:
    """Counts (or summed weights) per bin of the flat values whose bin is ``pos`` (each in
    ``[0, bins)``) and that are ``valid``: numpy's ``add.at`` where the namespace has it, else
    a sum of one-hot rows (Note [Fixed-size bin counts])."""
    xp = kit.xp
    if not kit.fancy_setitem:
        ones = xp.ones(pos.shape, dtype=dt)
        vals = xp.where(valid, ones if w is None else kit.cast(w, dt), xp.zeros((), dtype=dt))
        return _one_hot_counts(kit, pos, vals, bins)
    out = xp.zeros((bins,), dtype=dt)
    pos = pos[valid]
    vals = xp.ones(pos.shape, dtype=dt) if w is None else kit.cast(w[valid], dt)
    kit.put(out, (pos,), vals, accumulate=True)
    return out


def _floating_input(name: str, d: _dt.dtype) -> None:
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{torch_name(d)}'")


def histc(kit: Kit, self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    xp = kit.xp
    d = self._dtype
    _floating_input("histogram_cpu", d)
    if bins <= 0:
        raise OpError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    x = xp.reshape(kit.as_compute(self, d), (-1,))
    lo, hi = float(min), float(max)
    if lo > hi:
        raise OpError("torch.histc: max must be larger than min")
    if lo == hi and x.shape[0]:  # the data's own range
        lo, hi = float(xp.min(x)), float(xp.max(x))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise OpError(f"torch.histc: range of [{_num(lo)}, {_num(hi)}] is not finite")
    i64 = kit.storage[_dt.int64]
    valid = (x >= lo) & (x <= hi)
    scaled = (x - lo) * (bins / (hi - lo))
    pos = kit.cast(xp.floor(xp.where(valid, scaled, xp.zeros_like(scaled))), i64)
    pos = xp.where(pos >= bins, xp.full_like(pos, bins - 1), pos)  # the top edge: last bin
    out = _bin_counts(kit, x, pos, valid, bins, None, x.dtype)
    return kit.wrap(out, d, self._device)


def _num(v: float) -> str:
    if math.isnan(v):
        return "-nan"
    return str(int(v)) if v == int(v) else str(v) if math.isfinite(v) else str(v)


def _histogram(
    kit: Kit, self: Tensor, edges: Any, weight: Tensor | None, density: bool
) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    d = self._dtype
    dev = self._device
    x = xp.reshape(kit.as_compute(self, d), (-1,))
    bins = int(edges.shape[0]) - 1
    i64 = kit.storage[_dt.int64]
    lo, hi = edges[0], edges[-1]
    valid = (x >= lo) & (x <= hi)
    pos = kit.cast(xp.searchsorted(edges, x, side="right"), i64) - 1
    pos = xp.where(pos >= bins, xp.full_like(pos, bins - 1), pos)  # the top edge: last bin
    pos = xp.where(valid, pos, xp.zeros_like(pos))
    w = None if weight is None else xp.reshape(kit.as_compute(weight, d), (-1,))
    hist = _bin_counts(kit, x, pos, valid, bins, w, x.dtype)
    if density:
        widths = edges[1:] - edges[:-1]
        with kit.quiet():  # no points in range: 0/0, NaN as PyTorch's
            hist = hist / (xp.sum(hist) * widths)
    return kit.wrap(hist, d, dev), kit.wrap(kit.copy(edges), d, dev)


def _histogram_checks(self: Tensor, weight: Tensor | None) -> None:
    _floating_input("histogramdd", self._dtype)
    if weight is not None:
        if weight._dtype is not self._dtype:
            raise OpError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                f"should have the same dtype, but got input({_c_name(self._dtype)}), and "
                f"weight({_c_name(weight._dtype)})"
            )
        if tuple(weight._data.shape) != tuple(self._data.shape):
            raise OpError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension"
            )


def _c_name(d: _dt.dtype) -> str:
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}.get(
        d.name, d.name
    )


def histogram_bin_ct(
    kit: Kit,
    self: Tensor,
    bins: int = 100,
    *,
    range: Any = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> tuple[Tensor, Tensor]:
    xp = kit.xp
    _histogram_checks(self, weight)
    if bins <= 0:
        raise OpError(f"torch.histogramdd(): bins must be > 0, but got {bins} for dimension 0")
    x = xp.reshape(kit.as_compute(self, self._dtype), (-1,))
    edges = _even_edges(xp, x, None if range is None else range[0:2], bins, 0)
    return _histogram(kit, self, edges, weight, density)


def _even_edges(xp: Any, values: Any, given: Any, bins: int, dim: int) -> Any:
    """``bins + 1`` evenly spaced edges over ``given`` (low, high), else over the values'
    extent, with PyTorch's checks for ``dim``; an empty extent widens by 0.5 each way."""
    if given is not None:
        lo, hi = float(given[0]), float(given[1])
    elif values.shape[0]:
        lo, hi = float(xp.min(values)), float(xp.max(values))
    else:
        lo, hi = 0.0, 1.0  # numpy's (and PyTorch's) range of no data
    if lo > hi:
        raise OpError(
            f"torch.histogramdd: min should not exceed max, but got min {_num(lo)} max "
            f"{_num(hi)} for dimension {dim}"
        )
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise OpError(
            f"torch.histogramdd: dimension {dim}'s range [{_num(lo)}, {_num(hi)}] is not finite"
        )
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return xp.linspace(lo, hi, bins + 1, dtype=values.dtype)


def histogram_bins_tensor(
    kit: Kit,
    self: Tensor,
    bins: Tensor,
    *,
    weight: Tensor | None = None,
    density: bool = False,
) -> tuple[Tensor, Tensor]:
    _histogram_checks(self, weight)
    if bins._dtype is not self._dtype:
        raise OpError(
            "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
            f"got input with dtype {_c_name(self._dtype)} and bins for dimension 0 with dtype "
            f"{_c_name(bins._dtype)}"
        )
    if bins._data.ndim != 1:
        raise OpError(
            "torch.histogramdd: bins tensor should have one dimension, but got "
            f"{bins._data.ndim} dimensions in the bins tensor for dimension 0"
        )
    if bins._data.shape[0] < 1:
        raise OpError(
            "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements "
            "in the bins tensor for dimension 0"
        )
    edges = kit.operand(bins, self._dtype, self._device)
    return _histogram(kit, self, edges, weight, density)


def _points(self: Tensor, weight: Tensor | None) -> int:
    """histogramdd's checks: a ``(..., D)`` input of floats, one weight per point."""
    _floating_input("histogramdd", self._dtype)
    shape = tuple(self._data.shape)
    if len(shape) < 2:
        raise OpError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if weight is not None:
        if weight._dtype is not self._dtype:
            raise OpError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                f"should have the same dtype, but got input({_c_name(self._dtype)}), and "
                f"weight({_c_name(weight._dtype)})"
            )
        if tuple(weight._data.shape) != shape[:-1]:
            raise OpError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension"
            )
    return int(shape[-1])


def histogramdd_bin_edges(
    kit: Kit,
    self: Tensor,
    bins: Any,
    *,
    range: Any = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> list[Tensor]:
    """The ``bins[d] + 1`` evenly spaced edges of each dim ``d``, over ``range`` or the data's
    extent (widened by 0.5 each side when it is one value, as numpy's)."""
    xp = kit.xp
    n_dims = _points(self, weight)
    if len(bins) != n_dims:
        raise OpError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    if range is not None and len(range) != 2 * n_dims:
        raise OpError(
            f"torch.histogramdd: for a {n_dims}-dimensional histogram range should have "
            f"{2 * n_dims} elements, but got {len(range)}"
        )
    pts = xp.reshape(kit.as_compute(self, self._dtype), (-1, n_dims))
    out = []
    for d in builtins_range(n_dims):
        if bins[d] <= 0:
            raise OpError(
                f"torch.histogramdd(): bins must be > 0, but got {bins[d]} for dimension {d}"
            )
        given = None if range is None else range[2 * d : 2 * d + 2]
        edges = _even_edges(xp, pts[:, d], given, bins[d], d)
        out.append(kit.wrap(edges, self._dtype, self._device))
    return out


def histogramdd_from_bin_tensors(
    kit: Kit,
    self: Tensor,
    bins: Any,
    *,
    weight: Tensor | None = None,
    density: bool = False,
) -> Tensor:
    """The counts (or summed weights) of the points in each cell of the grid the edges
    ``bins`` make: each coordinate's bin by a search of its edges, the top edge closed."""
    xp = kit.xp
    n_dims = _points(self, weight)
    if len(bins) != n_dims:
        raise OpError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    d_t = self._dtype
    dev = self._device
    i64 = kit.storage[_dt.int64]
    pts = xp.reshape(kit.as_compute(self, d_t), (-1, n_dims))
    n_pts = pts.shape[0]
    valid = xp.ones((n_pts,), dtype=kit.storage[_dt.bool])
    flat = xp.zeros((n_pts,), dtype=i64)
    sizes = []
    all_edges = []
    for d, b in enumerate(bins):
        if b._dtype is not d_t:
            raise OpError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_c_name(d_t)} and bins for dimension {d} with dtype "
                f"{_c_name(b._dtype)}"
            )
        if b._data.ndim != 1 or b._data.shape[0] < 1:
            raise OpError(
                "torch.histogramdd: bins tensor should have one dimension and at least 1 "
                f"element, but got shape {list(b._data.shape)} for dimension {d}"
            )
        edges = kit.operand(b, d_t, dev)
        all_edges.append(edges)
        nb = int(edges.shape[0]) - 1
        sizes.append(nb)
        x = pts[:, d]
        valid = valid & (x >= edges[0]) & (x <= edges[-1])
        pos = kit.cast(xp.searchsorted(edges, x, side="right"), i64) - 1
        pos = xp.where(pos >= nb, xp.full_like(pos, max(nb - 1, 0)), pos)
        flat = flat * nb + xp.where(pos < 0, xp.zeros_like(pos), pos)
    total = math.prod(sizes)
    w = None if weight is None else xp.reshape(kit.as_compute(weight, d_t), (-1,))
    if total == 0:
        hist = xp.zeros(tuple(sizes), dtype=pts.dtype)
        return kit.wrap(hist, d_t, dev)
    hist = xp.reshape(_bin_counts(kit, pts, flat, valid, total, w, pts.dtype), tuple(sizes))
    if density:
        volume = None
        for d, edges in enumerate(all_edges):
            widths = edges[1:] - edges[:-1]
            shape = tuple(-1 if k == d else 1 for k in builtins_range(n_dims))
            widths = xp.reshape(widths, shape)
            volume = widths if volume is None else volume * widths
        with kit.quiet():  # no points in range: 0/0, NaN as PyTorch's
            hist = hist / (xp.sum(hist) * volume)
    return kit.wrap(hist, d_t, dev)


def _isin(kit: Kit, e: Any, t: Any, invert: bool) -> Any:
    """Whether each of ``e`` is in ``t`` (both flat): a search of the sorted ``t``."""
    xp = kit.xp
    if t.shape[0] == 0:
        found = xp.zeros(e.shape, dtype=kit.storage[_dt.bool])
    else:
        s = xp.sort(t)
        i64 = kit.storage[_dt.int64]
        j = kit.cast(xp.searchsorted(s, e), i64)
        j = xp.where(j >= s.shape[0], xp.zeros_like(j), j)
        found = xp.take(s, j) == e
    return ~found if invert else found


def _isin_dtype(name: str, *ds: _dt.dtype) -> _dt.dtype:
    for d in ds:
        if d is _dt.bool or d.is_complex:
            raise OpError(f"Unsupported input type encountered for isin(): {torch_name(d)}")
    return _dt.promote_types(ds[0], ds[1])


def isin_tensor_tensor(
    kit: Kit,
    elements: Tensor,
    test_elements: Tensor,
    *,
    assume_unique: bool = False,
    invert: bool = False,
) -> Tensor:
    xp = kit.xp
    d = _isin_dtype("isin", elements._dtype, test_elements._dtype)
    dev = elements._device
    e = kit.cast(kit.as_compute(elements, elements._dtype), kit.storage[d])
    t = kit.cast(kit.operand(test_elements, test_elements._dtype, dev), kit.storage[d])
    found = _isin(kit, xp.reshape(e, (-1,)), xp.reshape(t, (-1,)), invert)
    return kit.wrap(xp.reshape(found, tuple(elements._data.shape)), _dt.bool, dev)


def isin_tensor_scalar(
    kit: Kit,
    elements: Tensor,
    test_element: Any,
    *,
    assume_unique: bool = False,
    invert: bool = False,
) -> Tensor:
    d = _isin_dtype("isin", elements._dtype, kit.result_dtype(elements, test_element))
    e = kit.cast(kit.as_compute(elements, elements._dtype), kit.storage[d])
    found = e == kit.scalar(test_element, d)
    return kit.wrap(~found if invert else found, _dt.bool, elements._device)


def isin_scalar_tensor(
    kit: Kit,
    element: Any,
    test_elements: Tensor,
    *,
    assume_unique: bool = False,
    invert: bool = False,
) -> Tensor:
    xp = kit.xp
    d = _isin_dtype("isin", test_elements._dtype, kit.result_dtype(test_elements, element))
    t = kit.cast(kit.as_compute(test_elements, test_elements._dtype), kit.storage[d])
    e = xp.reshape(xp.asarray(kit.scalar(element, d), dtype=kit.storage[d]), (1,))
    found = _isin(kit, e, xp.reshape(t, (-1,)), invert)
    return kit.wrap(xp.reshape(found, ()), _dt.bool, test_elements._device)


def unique_consecutive(
    kit: Kit,
    self: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """The first of each run of equal elements (or slices along ``dim``), each element's run,
    and the runs' lengths."""
    xp = kit.xp
    i64 = kit.storage[_dt.int64]
    d = self._dtype
    dev = self._device
    a = kit.as_compute(self, d)
    empty = xp.zeros((0,), dtype=i64)
    if dim is None:
        flat = xp.reshape(a, (-1,))
        new = first_of_runs(kit, flat)
        values = kit.known(flat[new])  # Note [Value-dependent shapes]
        inverse_shape: tuple[int, ...] = tuple(self._data.shape)
    else:
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        ax = wrap_dim(dim, a.ndim)
        m = xp.moveaxis(a, ax, 0)
        rows = xp.reshape(m, (m.shape[0], -1))
        new = _rows_new(kit, rows)
        values = xp.moveaxis(kit.known(m[new]), 0, ax)
        inverse_shape = (int(m.shape[0]),)
    n = new.shape[0]
    group = xp.cumulative_sum(kit.cast(new, i64)) - 1 if n else empty
    ends = xp.concat([kit.cast(kit.nonzero(new)[0], i64), xp.asarray([n], dtype=i64)])
    counts = ends[1:] - ends[:-1]
    return (
        kit.wrap(values, d, dev),
        longs(kit, xp.reshape(group, inverse_shape) if return_inverse else empty, dev),
        longs(kit, counts if return_counts else empty, dev),
    )


def _rows_new(kit: Kit, rows: Any) -> Any:
    """first_of_runs over rows, rows of no columns all equal."""
    xp = kit.xp
    if rows.shape[1]:
        return first_of_runs(kit, rows, rows=True)
    b_t = kit.storage[_dt.bool]
    n = rows.shape[0]
    return xp.concat([xp.ones((min(n, 1),), dtype=b_t), xp.zeros((max(n - 1, 0),), dtype=b_t)])


KERNELS: dict[str, Callable[..., Any]] = {
    "bincount": bincount,
    "histc": histc,
    "histogram.bin_ct": histogram_bin_ct,
    "histogram.bins_tensor": histogram_bins_tensor,
    "isin.Tensor_Tensor": isin_tensor_tensor,
    "isin.Tensor_Scalar": isin_tensor_scalar,
    "isin.Scalar_Tensor": isin_scalar_tensor,
    "unique_consecutive": unique_consecutive,
    "_histogramdd_bin_edges": histogramdd_bin_edges,
    "_histogramdd_from_bin_tensors": histogramdd_from_bin_tensors,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
