"""The ``indexing`` family of the composites: index_put (the in-place kernel on a copy) and
where(condition), which is nonzero(condition, as_tuple=True)."""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from .._op_errors import broadcast_sizes, torch_name
from ..ops import ops
from ..tensor import _wrap_dim

aten = ops.aten


def index_put(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    return aten.index_put_.default(aten.clone.default(self), indices, values, accumulate)


def where_condition(condition: Any) -> Any:
    """``nonzero(condition, as_tuple=True)``: one index tensor per dim (PyTorch's
    nonzero_numpy; a 0-d condition counts as 1-d)."""
    c = aten.reshape.default(condition, [1]) if condition.ndim == 0 else condition
    return aten.unbind.int(aten.nonzero.default(c), 1)


# --- writes at positions and numpy's picks (issue 29) ------------------------------------------
# index_copy, the *_scatter ops and diag_embed are kernels in PyTorch (each with its formula);
# here they are index_put at positions made with arange, with the written dims moved to the
# front: index_put's formula gives PyTorch's gradients (zeros where ``self`` was overwritten,
# the picked places for the source) and its batching rule serves them too.


def _positions(n: int, start: int, stop: int, step: int, device: Any) -> Any:
    return aten.arange.start_step(start, stop, step, dtype=_dt.int64, device=device)


def _put_front(self: Any, dims: list[int], indices: list[Any], values: Any) -> Any:
    """``self`` with ``values`` written at ``indices`` of ``dims`` (moved to the front, the
    values' leading dims indexing them), the dims moved back."""
    front = list(range(len(dims)))
    moved = aten.movedim.intlist(self, dims, front)
    out = aten.index_put.default(moved, indices, values)
    return aten.movedim.intlist(out, front, dims)


def _check_src(name: str, src: Any, want: list[int]) -> None:
    if list(src.shape) != want:
        raise RuntimeError(
            f"aten::{name}: expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {want}"
        )


def select_scatter(self: Any, src: Any, dim: int, index: int) -> Any:
    d = _wrap_dim(dim, self.ndim, "select_scatter")
    want = list(aten.select.int(self, d, index).shape)  # PyTorch's index check and message
    _check_src("select_scatter", src, want)
    n = self.shape[d]
    i = index + n if index < 0 else index
    return _put_front(
        self, [d], [_positions(n, i, i + 1, 1, self.device)], aten.unsqueeze.default(src, 0)
    )


def slice_scatter(
    self: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Any:
    d = _wrap_dim(dim, self.ndim, "slice_scatter")
    if step <= 0:
        raise RuntimeError("aten::slice_scatter: slice step must be positive")
    n = self.shape[d]
    lo, hi, _ = slice(start, end, step).indices(n)
    hi = max(hi, lo)
    _check_src("slice_scatter", src, list(aten.slice.Tensor(self, d, start, end, step).shape))
    idx = _positions(n, lo, hi, step, self.device)
    return _put_front(self, [d], [idx], aten.movedim.int(src, d, 0))


def _diagonal_positions(rows: int, cols: int, offset: int, device: Any) -> tuple[Any, Any]:
    """The (row, col) positions of the ``offset`` diagonal of a ``rows x cols`` matrix."""
    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(rows - r0, cols - c0))
    r = _positions(rows, r0, r0 + length, 1, device)
    c = _positions(cols, c0, c0 + length, 1, device)
    return r, c


def diagonal_scatter(self: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    want = list(aten.diagonal.default(self, offset, dim1, dim2).shape)
    _check_src("diagonal_scatter", src, want)
    d1 = _wrap_dim(dim1, self.ndim, "diagonal_scatter")
    d2 = _wrap_dim(dim2, self.ndim, "diagonal_scatter")
    r, c = _diagonal_positions(self.shape[d1], self.shape[d2], offset, self.device)
    return _put_front(self, [d1, d2], [r, c], aten.movedim.int(src, -1, 0))


def diag_embed(self: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """Zeros with ``self``'s last dim on the ``offset`` diagonal of dims ``dim1``, ``dim2`` of
    the result (one dim more than ``self``)."""
    nd = self.ndim + 1
    d1 = _wrap_dim(dim1, nd, "diag_embed")
    d2 = _wrap_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(
            f"aten::diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}"
        )
    src = aten.unsqueeze.default(self, 0) if self.ndim == 0 else self
    n = src.shape[-1] + abs(offset)
    zeros = aten.zeros.default([n, n, *src.shape[:-1]], dtype=self.dtype, device=self.device)
    r, c = _diagonal_positions(n, n, offset, self.device)
    out = aten.index_put.default(zeros, [r, c], aten.movedim.int(src, -1, 0))
    return aten.movedim.intlist(out, [0, 1], [d1, d2])


def index_copy(self: Any, dim: int, index: Any, source: Any) -> Any:
    name = "aten::index_copy"
    if index.ndim > 1:
        raise IndexError(
            f"{name}: index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})"
        )
    if index.dtype is not _dt.int64:
        raise RuntimeError(
            f"{name}: index_copy_(): Expected a long tensor for index, but got "
            f"{torch_name(index.dtype)}"
        )
    if self.dtype is not source.dtype:
        raise RuntimeError(
            f"{name}: index_copy_(): self and source expected to have the same dtype, but got "
            f"(self) {torch_name(self.dtype)} and (source) {torch_name(source.dtype)}"
        )
    if self.ndim == 0:
        if source.numel() != 1 or index.numel() != 1:
            raise IndexError(
                f"{name}: index_copy_(): When source and destination are scalars, "
                "index should have one element"
            )
        flat = aten.index_put.default(
            aten.reshape.default(self, [1]),
            [aten.reshape.default(index, [1])],
            aten.reshape.default(source, [1]),
        )
        return aten.reshape.default(flat, [])
    d = _wrap_dim(dim, self.ndim, "index_copy")
    idx = aten.reshape.default(index, [-1])
    src = aten.unsqueeze.default(source, 0) if source.ndim == 0 else source
    want = list(self.shape)
    want[d] = idx.shape[0]
    if src.ndim != self.ndim or list(src.shape) != want:
        raise RuntimeError(
            f"{name}: index_copy_(): Source/destination tensor must have same slice shapes. "
            f"Destination slice shape: {list(self.shape[:d]) + list(self.shape[d + 1 :])} at "
            f"dimension {d} and source slice shape: {list(src.shape[:d]) + list(src.shape[d + 1 :])}"
            f" at dimension {d}."
        )
    return _put_front(self, [d], [idx], aten.movedim.int(src, d, 0))


def index_copy_(self: Any, dim: int, index: Any, source: Any) -> Any:
    return aten.copy_.default(self, index_copy(self, dim, index, source))


def take_along_dim(self: Any, indices: Any, dim: Any = None) -> Any:
    name = "aten::take_along_dim"
    if indices.dtype is not _dt.int64:
        raise RuntimeError(
            f"{name}: torch.take_along_dim(): dtype of indices should be Long but got "
            f"{torch_name(indices.dtype)}"
        )
    if dim is None:
        flat = aten.reshape.default(self, [-1])
        return aten.gather.default(flat, 0, aten.reshape.default(indices, [-1]))
    if self.ndim != indices.ndim:
        raise RuntimeError(
            f"{name}: torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {self.ndim} dimensions for input, and {indices.ndim} "
            "dimensions for indices"
        )
    d = _wrap_dim(dim, self.ndim, "take_along_dim")
    # every dim but ``dim`` broadcasts between the two
    s_sizes, i_sizes = list(self.shape), list(indices.shape)
    s_sizes[d] = i_sizes[d]
    shape = broadcast_sizes(s_sizes, i_sizes)
    i_shape = list(shape)
    shape[d] = self.shape[d]
    return aten.gather.default(
        aten.expand.default(self, shape), d, aten.expand.default(indices, i_shape)
    )


def argwhere(self: Any) -> Any:
    return aten.nonzero.default(self)


def index_reduce(
    self: Any, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """scatter_reduce with ``index`` spread along ``dim`` over ``source``'s shape (PyTorch's
    kernel of its own; the values and gradients agree)."""
    name = "aten::index_reduce"
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"{name}: index_reduce(): Expected reduce to be one of prod, mean, amax or amin but "
            f"got {reduce}."
        )
    if index.ndim > 1:
        raise IndexError(
            f"{name}: index_reduce_(): Index is supposed to be a vector, but got dim: "
            f"{index.ndim} with type: {torch_name(index.dtype)} and size: {list(index.shape)}"
        )
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(
            f"{name}: index_reduce_(): Expected dtype int32/int64 for index but got: "
            f"{torch_name(index.dtype)}"
        )
    if self.dtype is not source.dtype:
        raise RuntimeError(
            f"{name}: index_reduce_(): self ({torch_name(self.dtype)}) and source "
            f"({torch_name(source.dtype)}) must have the same scalar type"
        )
    if self.ndim == 0:
        flat = index_reduce(
            aten.reshape.default(self, [1]),
            0,
            index,
            aten.reshape.default(source, [1]),
            reduce,
            include_self=include_self,
        )
        return aten.reshape.default(flat, [])
    d = _wrap_dim(dim, self.ndim, "index_reduce")
    src = aten.unsqueeze.default(source, 0) if source.ndim == 0 else source
    n = aten.reshape.default(index, [-1]).shape[0]
    if (
        src.ndim != self.ndim
        or src.shape[d] != n
        or any(src.shape[k] != self.shape[k] for k in range(self.ndim) if k != d)
    ):
        raise RuntimeError(
            f"{name}: index_reduce_(): Number of indices ({n}) should be equal to source.size(dim) "
            f"({src.shape[d] if src.ndim > d else 1}) and source tensor shape must match self "
            f"tensor shape, excluding the specified dimension. Got self.shape = "
            f"{list(self.shape)} source.shape = {list(src.shape)}"
        )
    view = [1] * self.ndim
    view[d] = n
    spread = aten.expand.default(
        aten.reshape.default(aten._to_copy.default(index, dtype=_dt.int64), view), list(src.shape)
    )
    return aten.scatter_reduce.two(self, d, spread, src, reduce, include_self=include_self)


def index_reduce_(
    self: Any, dim: int, index: Any, source: Any, reduce: str, *, include_self: bool = True
) -> Any:
    out = index_reduce(self, dim, index, source, reduce, include_self=include_self)
    return aten.copy_.default(self, out)


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
