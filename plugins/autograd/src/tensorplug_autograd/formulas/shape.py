"""Formulas of the views and shape ops (Note [Formula table])."""

from __future__ import annotations

from collections.abc import Sequence

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    Shape,
    _aten,
    _embed,
    _sum_to,
    _zeros,
    defderiv,
    nondifferentiable,
)

# --- views and shape -----------------------------------------------------------------------------


def _permute_backward(g: Tensor, dims: Sequence[int]) -> Tensor:
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return _aten.permute.default(g, inverse)  # the overload itself: no public method's layer


def _unsqueeze_to(g: Tensor, shape: Shape, dim: int | None = None) -> Tensor:
    """Undo squeeze (all size-1 dims, or only ``dim``): PyTorch's ``unsqueeze_to``."""
    if not shape:
        return g
    if dim is not None:
        dim %= len(shape)
        return g.unsqueeze(dim) if shape[dim] == 1 else g
    for d, n in enumerate(shape):
        if n == 1:
            g = g.unsqueeze(d)
    return g


def _slice_backward(
    g: Tensor, shape: Shape, dim: int, start: int | None, end: int | None, step: int
) -> Tensor:
    dim %= len(shape)
    n = shape[dim]
    lo = 0 if start is None else (start + n if start < 0 else start)
    return _embed(g, shape, dim, min(max(lo, 0), n), step)


def _select_backward(g: Tensor, shape: Shape, dim: int, index: int) -> Tensor:
    dim %= len(shape)
    return _embed(g.unsqueeze(dim), shape, dim, index % shape[dim], 1)


defderiv("transpose.int", self=lambda g, s: _aten.transpose.int(g, s.dim0, s.dim1))
defderiv("permute", self=lambda g, s: _permute_backward(g, s.dims))
defderiv("view", self=lambda g, s: g.reshape(list(s.self_shape)))
nondifferentiable("view.dtype")  # a reinterpretation of bits: PyTorch's has no derivative
defderiv("reshape", self=lambda g, s: g.reshape(list(s.self_shape)))
defderiv("unsqueeze", self=lambda g, s: g.squeeze(s.dim))
defderiv("squeeze", self=lambda g, s: _unsqueeze_to(g, s.self_shape))
defderiv("squeeze.dim", self=lambda g, s: _unsqueeze_to(g, s.self_shape, s.dim))
defderiv("expand", self=lambda g, s: _sum_to(g, s.self_shape))
defderiv("select.int", self=lambda g, s: _select_backward(g, s.self_shape, s.dim, s.index))
defderiv(
    "slice.Tensor",
    self=lambda g, s: _slice_backward(g, s.self_shape, s.dim, s.start, s.end, s.step),
)
defderiv("split.Tensor", self=lambda g, s: tp.cat(list(g), s.dim))
defderiv("split_with_sizes", self=lambda g, s: tp.cat(list(g), s.dim))
# an unbind of a zero-size dim has no outputs, so no gradient ever reaches its node
defderiv("unbind.int", self=lambda g, s: tp.stack(list(g), s.dim))


# --- strided views (strided backends: Note [Strided layout] in tensorplug/_strides.py) -------


def _positions(size: Shape, stride: Shape, start: int, device: object) -> Tensor:
    """The storage positions of a view's elements, relative to a chosen origin: an int64
    tensor of ``size``."""
    pos = tp.full(list(size), start, dtype=tp.int64, device=device)
    for k, (n, st) in enumerate(zip(size, stride, strict=True)):
        if n > 1 and st:
            step = tp.arange(n, dtype=tp.int64, device=device) * st
            pos = pos + step.reshape([n if d == k else 1 for d in range(len(size))])
    return pos


def _reach(size: Shape, stride: Shape, start: int) -> tuple[int, int]:
    """The lowest and highest position a non-empty view reaches."""
    lo = hi = start
    for n, st in zip(size, stride, strict=True):
        lo += min(0, (n - 1) * st)
        hi += max(0, (n - 1) * st)
    return lo, hi


def _as_strided_backward(
    g: Tensor, self_: Tensor, result: Tensor, size: Shape, stride: Shape
) -> Tensor:
    """PyTorch's ``as_strided_backward``: the gradient is accumulated per storage position
    (outputs that overlap add up), then read at the input's positions, divided by how many
    input elements share a position where the input overlaps itself. Positions count from
    the input's first element (their difference is what the data pointers give), so the
    formula needs no storage offsets; built of differentiable ops (double backward).
    ``as_strided_`` saves its input as a view with the old geometry (its elements stay), so
    the same formula serves it, as PyTorch's serves both with ``TensorGeometry(self)``."""
    shape = list(self_.shape)
    if g.numel() == 0 or self_.numel() == 0:
        return _zeros(g, shape)
    item = self_.element_size()
    in_stride = self_.stride()
    rel = (result.data_ptr() - self_.data_ptr()) // item
    in_lo, in_hi = _reach(shape, in_stride, 0)
    out_lo, out_hi = _reach(size, stride, rel)
    lo, hi = min(in_lo, out_lo), max(in_hi, out_hi)
    dev = g.device
    out_idx = _positions(size, stride, rel - lo, dev).reshape(-1)
    in_idx = _positions(shape, in_stride, -lo, dev).reshape(-1)
    storage = _zeros(g, [hi - lo + 1]).index_add(0, out_idx, g.reshape(-1))
    if not _dense(shape, in_stride):
        count = _zeros(g, [hi - lo + 1]).index_add(0, in_idx, tp.ones_like(in_idx, dtype=g.dtype))
        storage = storage / count.clamp(min=1)
    return storage.index_select(0, in_idx).reshape(shape)


def _dense(shape: Shape, stride: Shape) -> bool:
    """Whether no two elements of a view share a storage position (c10's sufficient test)."""
    dims = sorted((st, n) for n, st in zip(shape, stride, strict=True) if n > 1)
    need = 1
    for st, n in dims:
        if st < need:
            return False
        need = st * n
    return True


def _unfold_backward(g: Tensor, shape: Shape, dim: int, size: int, step: int) -> Tensor:
    """PyTorch's ``unfold_backward``: each window's gradient added back at its positions."""
    if not shape:  # a 0-dim input: one window of size 0 or 1
        return g.sum()
    d = dim % len(shape)
    windows = g.shape[d]
    if windows == 0 or size == 0:
        return _zeros(g, shape)
    idx = (
        tp.arange(windows, dtype=tp.int64, device=g.device).reshape([windows, 1]) * step
        + tp.arange(size, dtype=tp.int64, device=g.device).reshape([1, size])
    ).reshape(-1)
    merged = g.movedim(-1, d + 1)
    merged = merged.reshape([*merged.shape[:d], windows * size, *merged.shape[d + 2 :]])
    return _zeros(g, shape).index_add(d, idx, merged)


def _as_strided_scatter_self(g: Tensor, size: Shape, stride: Shape, off: int | None) -> Tensor:
    """``grad`` with the scattered region zeroed (PyTorch's formula: the input is
    contiguous when it requires grad, so ``grad.contiguous()`` has its layout)."""
    c = g.contiguous()
    return tp.as_strided_scatter(c, _zeros(g, size), size, stride, off)


defderiv(
    "as_strided",
    self=lambda g, s: _as_strided_backward(g, s.self, s.result, s.size, s.stride),
)
defderiv(
    "unfold",
    self=lambda g, s: _unfold_backward(g, s.self_shape, s.dimension, s.size, s.step),
)

defderiv(
    "as_strided_scatter",
    self=lambda g, s: _as_strided_scatter_self(g, s.size, s.stride, s.storage_offset),
    src=lambda g, s: g.contiguous().as_strided(s.size, s.stride, s.storage_offset),
)


def _roll_backward(g: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int]) -> Tensor:
    back = [-shifts] if isinstance(shifts, int) else [-n for n in shifts]
    return g.roll(back, dims)


def _repeat_backward(g: Tensor, shape: Shape, repeats: Sequence[int]) -> Tensor:
    """Sum the copies: each dim ``r * n`` of ``g`` split into ``(r, n)``, the ``r`` summed."""
    lead = len(repeats) - len(shape)
    padded = [1] * lead + list(shape)
    split = [x for r, n in zip(repeats, padded, strict=True) for x in (r, n)]
    summed = g.reshape(split).sum(list(range(0, len(split), 2))) if split else g
    return summed.reshape(list(shape))


def _diag_backward(g: Tensor, shape: Shape, diagonal: int) -> Tensor:
    """A vector's gradient is the diagonal of ``g``; a matrix's is ``g`` on its diagonal."""
    if len(shape) == 1 or shape[0] == shape[1]:
        return g.diag(diagonal)
    rows, cols = shape
    start_row, start_col = max(-diagonal, 0), max(diagonal, 0)
    n = g.shape[0]
    r = tp.arange(start_row, start_row + n, dtype=tp.int64, device=g.device)
    c = tp.arange(start_col, start_col + n, dtype=tp.int64, device=g.device)
    return _zeros(g, shape).index_put_([r, c], g, True)


defderiv("flip", self=lambda g, s: g.flip(s.dims))
defderiv("roll", self=lambda g, s: _roll_backward(g, s.shifts, s.dims))
defderiv("repeat", self=lambda g, s: _repeat_backward(g, s.self_shape, s.repeats))
defderiv("tril", self=lambda g, s: g.tril(s.diagonal))
defderiv("triu", self=lambda g, s: g.triu(s.diagonal))
defderiv("diag", self=lambda g, s: _diag_backward(g, s.self_shape, s.diagonal))


def _diagonal_backward(g: Tensor, shape: Shape, offset: int, dim1: int, dim2: int) -> Tensor:
    """PyTorch's diagonal_backward: zeros of ``shape`` holding ``g`` on the diagonal."""
    d1, d2 = dim1 % len(shape), dim2 % len(shape)
    rest = [n for i, n in enumerate(shape) if i not in (d1, d2)]
    n = g.shape[-1]
    r = tp.arange(max(-offset, 0), max(-offset, 0) + n, dtype=tp.int64, device=g.device)
    c = tp.arange(max(offset, 0), max(offset, 0) + n, dtype=tp.int64, device=g.device)
    planes = _zeros(g, [shape[d1], shape[d2], *rest]).index_put_([r, c], g.movedim(-1, 0))
    return planes.movedim([0, 1], [d1, d2])


defderiv(
    "diagonal",
    self=lambda g, s: _diagonal_backward(g, s.self_shape, s.offset, s.dim1, s.dim2),
)


def _cat_backward(g: Tensor, shapes: Sequence[Shape], dim: int) -> list[Tensor]:
    """Slices of ``g``; a 1-D empty input (which cat skips, as PyTorch) gets an empty one."""
    dim %= max(g.ndim, 1)
    skipped = [len(shape) == 1 and shape[0] == 0 for shape in shapes]
    sizes = [shape[dim] for shape, skip in zip(shapes, skipped, strict=True) if not skip]
    pieces = iter(tp.split_with_sizes(g, sizes, dim))
    return [_zeros(g, [0]) if skip else next(pieces) for skip in skipped]


defderiv("cat", tensors=lambda g, s: _cat_backward(g, s.tensors_shape, s.dim))
