"""Formulas of the indexing ops: index, gather, scatter, masks (Note [Formula table])."""

from __future__ import annotations

import math
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    FORMULAS,
    Shape,
    _pad_to,
    _scale,
    _zeros,
    defderiv,
    nondifferentiable,
)

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
# --- scatter_reduce (issue 29) -------------------------------------------------------------------


def _scatter_reduce_backward(g: Tensor, s: Any) -> tuple[Any, Any]:
    """derivatives.yaml's scatter_reduce_backward: ``self``'s and ``src``'s gradients for
    each reduction; a position ``include_self=False`` wrote gets none for ``self``."""
    dim, index = s.dim, s.index
    reduce = {"max": "amax", "min": "amin"}.get(s.reduce, s.reduce)
    self, result = s.self, s.result
    # only the part of src that index covers takes part (the rest gets zeros, _pad_to below)
    src = s.src[tuple(slice(0, n) for n in index.shape)] if index.ndim else s.src
    if reduce == "sum":
        grad_self, grad_src = g, g.gather(dim, index)
    elif reduce == "mean":
        n = tp.ones_like(g) if s.include_self else tp.zeros_like(g)
        n = n.scatter_add(dim, index, tp.ones_like(src))
        n = n.masked_fill(n == 0, 1)
        grad_self, grad_src = g / n, g.gather(dim, index) / n.gather(dim, index)
    elif reduce == "prod":
        # division by the zeros of self and src avoided as PyTorch does: a product with one
        # zero of src gets its gradient from the product of the others
        masked_self = self.masked_fill(self == 0, 1)
        masked_self_result = masked_self.scatter_reduce(
            dim, index, src, "prod", include_self=s.include_self
        )
        grad_self = g * masked_self_result / masked_self
        src_zero = src == 0
        zeros_per = tp.zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype))
        single = src_zero & (zeros_per.gather(dim, index) == 1)
        masked_src = src.masked_fill(single, 1)
        masked_src_result = self.scatter_reduce(
            dim, index, masked_src, "prod", include_self=s.include_self
        )
        grad_src = tp.where(
            single,
            (g * masked_src_result).gather(dim, index),
            (g * result).gather(dim, index) / src.masked_fill(src_zero, 1),
        )
    else:  # amax, amin: the gradient shared evenly between the values that reached the result
        value = result.gather(dim, index)
        self_is = (self == result).to(g.dtype)
        src_is = (src == value).to(g.dtype)
        if not s.include_self:
            self_is = self_is.scatter(dim, index, 0)
        n = self_is.scatter_add(dim, index, src_is)
        share = g / n
        grad_self = self_is * share
        grad_src = src_is * share.gather(dim, index)
    if not s.include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, _pad_to(grad_src, s.src_shape)


FORMULAS["scatter_reduce.two"] = {("self", "src"): _scatter_reduce_backward}


defderiv("masked_fill.Scalar", self=lambda g, s: g.masked_fill(s.mask, 0))
defderiv(
    "masked_fill.Tensor",
    self=lambda g, s: g.masked_fill(s.mask, 0),
    value=lambda g, s: tp.where(s.mask, g, 0.0).sum(),  # the filled places, summed
)


# --- put (issue 29): put is put_ on a copy (a composite), so put_ has the entry --------------
defderiv(
    "put_",
    self=lambda g, s: g if s.accumulate else g.put(s.index, _zeros(g, s.source_shape), False),
    source=lambda g, s: g.take(s.index).reshape(s.source_shape),
)
