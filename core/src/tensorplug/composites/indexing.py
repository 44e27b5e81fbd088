"""The ``indexing`` family of the composites: index_put (the in-place kernel on a copy) and
where(condition), which is nonzero(condition, as_tuple=True)."""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..ops import ops

aten = ops.aten


def index_put(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    return aten.index_put_.default(aten.clone.default(self), indices, values, accumulate)


def where_condition(condition: Any) -> Any:
    """``nonzero(condition, as_tuple=True)``: one index tensor per dim (PyTorch's
    nonzero_numpy; a 0-d condition counts as 1-d)."""
    c = aten.reshape.default(condition, [1]) if condition.ndim == 0 else condition
    return aten.unbind.int(aten.nonzero.default(c), 1)


# --- put and fill_diagonal_ (issue 29) ------------------------------------------------------


def put(self: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    """``put``: ``put_`` on a copy (PyTorch's CompositeExplicitAutograd form)."""
    return aten.put_.default(aten.clone.default(self), index, source, accumulate)


def fill_diagonal_(self: Any, fill_value: Any, wrap: bool = False) -> Any:
    """Fill the main diagonal of a 2-d (or all-sides-equal n-d) tensor in place: the elements
    at flat positions ``0, s, 2s, ...`` with ``s`` the sum of the row-major strides. A tall
    matrix stops after its first ``cols`` rows unless ``wrap`` (numpy's fill_diagonal)."""
    shape = list(self.shape)
    nd = len(shape)
    if nd < 2:
        raise RuntimeError("aten::fill_diagonal_: dimensions must larger than 1")
    if nd > 2 and any(s != shape[0] for s in shape):
        raise RuntimeError("aten::fill_diagonal_: all dimensions of input must be of equal length")
    n = 1
    for s in shape:
        n *= s
    if nd == 2:
        step, limit = shape[1] + 1, n if wrap else min(n, shape[1] * shape[1])
    else:
        step, limit = sum(shape[0] ** k for k in range(nd)), n
    pos = aten.arange.default(n, dtype=None, device=self.device)
    on = aten.logical_and.default(
        aten.eq.Scalar(aten.remainder.Scalar(pos, step), 0), aten.lt.Scalar(pos, limit)
    )
    return aten.masked_fill_.Scalar(self, aten.reshape.default(on, shape), fill_value)


def nonzero_static(self: Any, *, size: int, fill_value: int = -1) -> Any:
    """``nonzero`` with exactly ``size`` rows: cut, or padded with ``fill_value``."""
    if size < 0:
        raise RuntimeError("aten::nonzero_static: 'size' must be an non-negative integer")
    if self.device.type == "meta":  # the shape is static: what PyTorch's meta kernel gives
        return aten.empty.memory_format([size, self.ndim], dtype=_dt.int64, device=self.device)
    nz = aten.nonzero.default(self)
    n, ndim = nz.shape
    if n >= size:
        return aten.slice.Tensor(nz, 0, 0, size)
    pad = aten.full.default([size - n, ndim], fill_value, dtype=nz.dtype, device=self.device)
    return aten.cat.default([nz, pad], 0)
