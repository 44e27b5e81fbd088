"""Formulas of views, shape ops, indexing, factories and copies (Note [Formula table])."""

from __future__ import annotations

from collections.abc import Sequence

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    Shape,
    _aten,
    _embed,
    _pad_to,
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


def _cat_backward(g: Tensor, shapes: Sequence[Shape], dim: int) -> list[Tensor]:
    """Slices of ``g``; a 1-D empty input (which cat skips, as PyTorch) gets an empty one."""
    dim %= max(g.ndim, 1)
    skipped = [len(shape) == 1 and shape[0] == 0 for shape in shapes]
    sizes = [shape[dim] for shape, skip in zip(shapes, skipped, strict=True) if not skip]
    pieces = iter(tp.split_with_sizes(g, sizes, dim))
    return [_zeros(g, [0]) if skip else next(pieces) for skip in skipped]


defderiv("cat", tensors=lambda g, s: _cat_backward(g, s.tensors_shape, s.dim))

# --- indexing ------------------------------------------------------------------------------------

# in place on fresh zeros, as PyTorch's index_backward: the functional index_put would copy them
defderiv(
    "index.Tensor",
    self=lambda g, s: _zeros(g, s.self_shape).index_put_(s.indices, g, True),
)
# index_put (functional) is composite: the in-place op has the entry (Note [Formula table])
defderiv(
    "index_put_",
    self=lambda g, s: g if s.accumulate else tp.index_put(g, s.indices, _zeros(g, ()), False),
    values=lambda g, s: g.index(s.indices),
)
defderiv(
    "gather",
    self=lambda g, s: _zeros(g, s.self_shape).scatter_add(s.dim, s.index, g),
)
# src may be larger than index: its elements that index does not reach get zeros
defderiv(
    "scatter_add",
    self=lambda g, s: g,
    src=lambda g, s: _pad_to(g.gather(s.dim, s.index), s.src_shape),
)
defderiv("masked_fill.Scalar", self=lambda g, s: g.masked_fill(s.mask, 0))

# --- factories -----------------------------------------------------------------------------------

nondifferentiable(
    "zeros",
    "ones",
    "empty.memory_format",
    "full",
    "arange",
    "arange.start_step",
    "linspace",
    "eye",
    "eye.m",
    "rand",
    "randn",
    "randint",
    "randint.low",
)

# --- copies and conversion -----------------------------------------------------------------------

defderiv("_to_copy", self=lambda g, s: g.to(dtype=s.self_dtype, device=s.self_device))
defderiv("clone", self=lambda g, s: g)
defderiv(
    "copy_",
    self=lambda g, s: _zeros(g, s.self_shape),
    src=lambda g, s: g.to(device=s.src_device),
)
defderiv("fill_.Scalar", self=lambda g, s: _zeros(g, s.self_shape))
nondifferentiable("detach", "_local_scalar_dense")
