"""Formulas of views, shape ops, indexing, factories and copies (Note [Formula table])."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    Shape,
    _aten,
    _embed,
    _pad_to,
    _scale,
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

# dot sits here, with the shape ops of its group in native_functions.yaml, not beside mm
defderiv("dot", self=lambda g, s: g * s.tensor, tensor=lambda g, s: g * s.self)

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


def _index_add_source_backward(
    g: Tensor, shape: Shape, dim: int, index: Tensor, alpha: Any
) -> Tensor:
    """derivatives.yaml: ``maybe_multiply(grad.index_select(dim, index).expand_as(source),
    alpha)``; a 0-d source of a 0-d self takes the one element."""
    picked = g.index_select(dim, index) if g.ndim else g
    return _scale(picked.reshape(list(shape)), alpha)


def _index_fill_value_backward(g: Tensor, dim: int, index: Tensor) -> Tensor:
    """The filled places summed, each once: a repeated index fills its place once."""
    if not g.ndim:
        return g.sum()
    n = g.shape[dim]
    hit = tp.zeros(n, dtype=tp.bool, device=g.device).index_fill(0, index.reshape([-1]), True)
    shape = [1] * g.ndim
    shape[dim % g.ndim] = n
    return tp.where(hit.reshape(shape), g, 0.0).sum()


def _take_backward(g: Tensor, shape: Shape, index: Tensor) -> Tensor:
    """PyTorch's take_backward: ``g`` accumulated at the flat places (negative ones wrap)."""
    n = math.prod(shape)
    flat = _zeros(g, [n]).index_put_([index.reshape([-1]) % max(n, 1)], g.reshape([-1]), True)
    return flat.reshape(list(shape))


def _masked_scatter_source_backward(g: Tensor, mask: Tensor, shape: Shape) -> Tensor:
    """PyTorch's masked_scatter_backward: the selected gradient, zero-padded to the source."""
    picked = g.masked_select(mask)  # g has the broadcast shape of self and mask
    n = math.prod(shape)
    if picked.numel() < n:
        picked = tp.cat([picked, _zeros(g, [n - picked.numel()])])
    return picked.reshape(list(shape))


def _index_select_backward(g: Tensor, shape: Shape, dim: int, index: Tensor) -> Tensor:
    if not shape:  # a 0-d self: its one element was selected (once)
        return g
    index = index.reshape([-1])
    indices: list[Tensor | None] = [None] * (dim % len(shape))
    return _zeros(g, shape).index_put_([*indices, index], g, True)


def _masked_select_backward(g: Tensor, shape: Shape, mask: Tensor) -> Tensor:
    """``g`` scattered to the places ``mask`` selects in the broadcast shape (the engine sums
    it down to ``self``'s), through flat tensors so that 0-d masks need no special case."""
    nd = max(len(shape), mask.ndim)
    a = [1] * (nd - len(shape)) + list(shape)
    b = [1] * (nd - mask.ndim) + list(mask.shape)
    full = [m if n == 1 else n for n, m in zip(a, b, strict=True)]
    flat_mask = mask.expand(full).reshape([-1])
    flat = _zeros(g, [flat_mask.numel()]).index_put_([flat_mask], g, True)
    return flat.reshape(full)


defderiv(
    "index_select",
    self=lambda g, s: _index_select_backward(g, s.self_shape, s.dim, s.index),
)
defderiv(
    "masked_select",
    self=lambda g, s: _masked_select_backward(g, s.self_shape, s.mask),
)
nondifferentiable("nonzero")
nondifferentiable("repeat_interleave.Tensor")  # int64 indices
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
defderiv(
    "scatter.src",
    self=lambda g, s: g.scatter(s.dim, s.index, 0),
    # scatter takes int32 indices (PyTorch 2.13); gather here takes int64 only
    src=lambda g, s: _pad_to(g.gather(s.dim, s.index.to(tp.int64)), s.src_shape),
)
defderiv("scatter.value", self=lambda g, s: g.scatter(s.dim, s.index, 0))
defderiv(
    "index_add",
    self=lambda g, s: g,
    source=lambda g, s: _index_add_source_backward(g, s.source_shape, s.dim, s.index, s.alpha),
)
defderiv("index_fill.int_Scalar", self=lambda g, s: g.index_fill(s.dim, s.index, 0))
defderiv(
    "index_fill.int_Tensor",
    self=lambda g, s: g.index_fill(s.dim, s.index, 0),
    value=lambda g, s: _index_fill_value_backward(g, s.dim, s.index),
)
defderiv("take", self=lambda g, s: _take_backward(g, s.self_shape, s.index))
defderiv(
    "masked_scatter",
    self=lambda g, s: g.masked_fill(s.mask, 0),
    source=lambda g, s: _masked_scatter_source_backward(g, s.mask, s.source_shape),
)
defderiv("masked_fill.Scalar", self=lambda g, s: g.masked_fill(s.mask, 0))
defderiv(
    "masked_fill.Tensor",
    self=lambda g, s: g.masked_fill(s.mask, 0),
    value=lambda g, s: tp.where(s.mask, g, 0.0).sum(),  # the filled places, summed
)

# --- factories -----------------------------------------------------------------------------------

nondifferentiable(
    "zeros",
    "ones",
    "empty.memory_format",
    "full",
    "arange",
    "arange.start_step",
    "linspace",
    "logspace",
    "eye",
    "eye.m",
    "tril_indices",
    "triu_indices",
    "rand",
    "randn",
    "randint",
    "randint.low",
)

# Random draws: PyTorch's derivatives.yaml gives normal zero gradients for mean and std (no
# reparameterization), bernoulli a zero gradient for p, and the in-place fills zeros for the old
# values (as fill_); the sampled indices of randperm and multinomial are not differentiable.
nondifferentiable("randperm", "normal.float_float", "multinomial")
defderiv("normal.Tensor_float", mean=lambda g, s: _zeros(g, s.mean_shape))
defderiv("normal.float_Tensor", std=lambda g, s: _zeros(g, s.std_shape))
defderiv(
    "normal.Tensor_Tensor",
    mean=lambda g, s: _zeros(g, s.mean_shape),
    std=lambda g, s: _zeros(g, s.std_shape),
)
defderiv("bernoulli", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("bernoulli.p", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("bernoulli_.float", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("uniform_", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("normal_", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("exponential_", self=lambda g, s: _zeros(g, s.self_shape))
for _fill in ("random_", "random_.from", "random_.to"):
    defderiv(_fill, self=lambda g, s: _zeros(g, s.self_shape))

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

# --- mixed precision training: GradScaler's bookkeeping, never part of a graph ------------------

nondifferentiable("_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_")
