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
)

# --- views and shape -----------------------------------------------------------------------------


def _permute_backward(g: Tensor, dims: Sequence[int]) -> Tensor:
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return g.permute(inverse)


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
