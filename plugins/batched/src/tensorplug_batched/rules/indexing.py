"""Batching rules of indexing: ``index``/``index_put_``, ``index_select``/``index_add``/
``index_fill``, ``gather``/``scatter``, ``take``, ``searchsorted``/``bucketize``, the operators
whose result shape depends on values (``nonzero``, ``masked_select``: refused, as PyTorch
refuses them), and ``.item()`` (refused, with PyTorch's message).

Note [Batched advanced indexing]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``x[..., idx, ...]`` puts the broadcast index dimensions where the first index is when the
indexed dimensions are adjacent, and first otherwise (NumPy's rule, which PyTorch follows).
With unbatched indices the rule indexes the value with a full slice for the batch dimension
first; the batch dimension stays first when the indexed dimensions are adjacent, and lands
after the index dimensions when they are not. With batched indices it indexes the value (batch
first) with ``arange(B)`` as an extra index on the batch dimension, broadcast against the
others; the result has the batch and index dimensions first, and when the logical indices were
adjacent but not leading, the dimensions before them move back in front of the index
dimensions. Boolean masks are static only when not batched: they become their ``nonzero()``
indices first, and a batched mask is refused (PyTorch's message).
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp

from ..batched import BatchedTensor, batched_at, front, materialize, wrap
from ..calls import inplace_error, passdown, top_level, wrap_dim
from ..fallback import loop
from .table import Kernel, defdim, defdynamic, defrule

aten = tp.ops.aten
_unsqueeze = aten.unsqueeze.default
_reshape = aten.reshape.default
_permute = aten.permute.default


def _size(lvl: int, *xs: Any) -> int:
    for x in xs:
        if isinstance(x, list | tuple):
            for y in x:
                if batched_at(y, lvl):
                    return int(y.value.shape[y.bdim])
        elif batched_at(x, lvl):
            return int(x.value.shape[x.bdim])
    raise AssertionError("nothing is batched at this level")


def _phys(x: Any, lvl: int, size: int) -> Any:
    return front(x) if batched_at(x, lvl) else materialize(x, size)


def _pad(p: Any, rank: int) -> Any:
    """``p`` (batch first) with size-1 dimensions after the batch up to ``rank + 1`` dims."""
    for _ in range(rank + 1 - p.ndim):
        p = _unsqueeze(p, 1)
    return p


def _broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    n = max((len(s) for s in shapes), default=0)
    out = [1] * n
    for s in shapes:
        for i, v in enumerate((1,) * (n - len(s)) + tuple(s)):
            if v != 1:
                out[i] = v
    return tuple(out)


def _static_indices(indices: Any, lvl: int) -> list[Any]:
    """``indices`` with each unbatched boolean mask replaced by its nonzero() indices."""
    out: list[Any] = []
    for i in indices:
        if i is not None and i.dtype in (tp.bool, tp.uint8):
            if batched_at(i, lvl):
                raise RuntimeError(
                    "vmap: We do not support batching operators that can support dynamic shape. "
                    "Attempting to batch over indexing with a boolean mask."
                )
            out.extend(aten.unbind.int(aten.nonzero.default(i), 1))
        else:
            out.append(i)
    return out


class _Layout:
    """Where the index dimensions go (Note [Batched advanced indexing])."""

    def __init__(self, self_shape: tuple[int, ...], indices: list[Any]) -> None:
        pos = [k for k, i in enumerate(indices) if i is not None]
        self.first = pos[0]
        self.adjacent = pos == list(range(pos[0], pos[-1] + 1))
        self.index_shape = _broadcast_shape([tuple(indices[k].shape) for k in pos])
        rest = [s for k, s in enumerate(self_shape) if k >= len(indices) or indices[k] is None]
        n = len(self.index_shape)
        if self.adjacent:
            before = self_shape[: self.first]
            self.result = (*before, *self.index_shape, *rest[len(before) :])
        else:
            self.result = (*self.index_shape, *rest)
        self.n_index = n


def _index_with_batched_indices(op: Any, p: Any, indices: list[Any], lvl: int, size: int,
                                layout: _Layout) -> tuple[Any, list[Any]]:  # fmt: skip
    n = layout.n_index
    arange = aten.arange.default(size, device=p.device)
    arange = _reshape(arange, [size, *([1] * n)])
    phys = [None if i is None else _pad(_phys(i, lvl, size), n) for i in indices]
    return arange, phys


@defrule("index.Tensor")
def _index_maker(op: Any) -> Kernel:
    def kernel(self: Any, indices: Any) -> Any:
        lvl = top_level((self, indices))
        if lvl == 0:
            return passdown(op, (self, indices), {})
        idx = _static_indices(indices, lvl)
        if all(i is None for i in idx) or len(idx) > self.ndim:
            return loop(op, (self, idx), {}, lvl)  # nothing to index, or the logical error
        layout = _Layout(tuple(self.shape), idx)
        if not any(batched_at(i, lvl) for i in idx):
            out = op(front(self), [None, *idx])
            return wrap(out, 0 if layout.adjacent else layout.n_index, lvl)
        size = _size(lvl, self, idx)
        p = _phys(self, lvl, size)
        arange, phys = _index_with_batched_indices(op, p, idx, lvl, size, layout)
        out = op(p, [arange, *phys])
        if layout.adjacent and layout.first > 0:  # (B, I..., before..., after...) -> logical order
            n, f = layout.n_index, layout.first
            order = [0, *range(1 + n, 1 + n + f), *range(1, 1 + n), *range(1 + n + f, out.ndim)]
            out = _permute(out, order)
        return wrap(out, 0, lvl)

    return kernel


@defrule("index_put_.default")
def _index_put_maker(op: Any) -> Kernel:
    def kernel(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
        args = (self, indices, values, accumulate)
        lvl = top_level((self, indices, values))
        if lvl == 0:
            return passdown(op, args, {})
        if not batched_at(self, lvl):
            raise inplace_error(op)
        idx = _static_indices(indices, lvl)
        if all(i is None for i in idx) or len(idx) > self.ndim:
            return loop(op, (self, idx, values, accumulate), {}, lvl)
        layout = _Layout(tuple(self.shape), idx)
        size = _size(lvl, self)
        rank = len(layout.result)
        if values.ndim > rank:
            return loop(op, (self, idx, values, accumulate), {}, lvl)  # the logical error
        p = front(self)
        if not any(batched_at(i, lvl) for i in idx):
            if layout.adjacent and not batched_at(values, lvl):
                v = values  # right-aligned against (B, *result)
            else:
                v = _pad(_phys(values, lvl, size), rank)
                if not layout.adjacent:  # the region is (I..., B, rest...)
                    order = [*range(1, 1 + layout.n_index), 0, *range(1 + layout.n_index, rank + 1)]
                    v = _permute(v, order)
            op(p, [None, *idx], v, accumulate)
            return self
        arange, phys = _index_with_batched_indices(op, p, idx, lvl, size, layout)
        v = _pad(_phys(values, lvl, size), rank)
        if layout.adjacent and layout.first > 0:  # (B, before, I, after) -> (B, I, before, after)
            n, f = layout.n_index, layout.first
            order = [0, *range(1 + f, 1 + f + n), *range(1, 1 + f), *range(1 + f + n, rank + 1)]
            v = _permute(v, order)
        op(p, [arange, *phys], v, accumulate)
        return self

    return kernel


@defrule("index_select.default")
def _index_select_maker(op: Any) -> Kernel:
    def kernel(self: Any, dim: int, index: Any) -> Any:
        lvl = top_level((self, index))
        if lvl == 0:
            return passdown(op, (self, dim, index), {})
        if self.ndim == 0 or index.ndim > 1:
            return loop(op, (self, dim, index), {}, lvl)
        d = wrap_dim(dim, self.ndim, op)
        if not batched_at(index, lvl):
            return wrap(op(front(self), d + 1, index), 0, lvl)
        idx = index if index.ndim == 1 else _unsqueeze(index, 0)
        return aten.index.Tensor(self, [None] * d + [idx])

    return kernel


def _dim_index_maker(op: Any) -> Kernel:
    """``index_add``/``index_fill`` (and in place): ``(self, dim, index, ...)`` with an
    unbatched index run on the values; a batched index loops."""
    inplace = op.schema.positional[0].is_write

    def kernel(self: Any, dim: int, index: Any, *rest: Any, **kwargs: Any) -> Any:
        args = (self, dim, index, *rest)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, kwargs)
        if inplace and not batched_at(self, lvl):
            raise inplace_error(op)
        if (
            self.ndim == 0
            or batched_at(index, lvl)
            or any(batched_at(r, lvl) and r.ndim == 0 for r in rest)
        ):
            return loop(op, args, kwargs, lvl)
        size = _size(lvl, self, *rest)
        d = wrap_dim(dim, self.ndim, op) + 1
        # index_add's source gets a batch dimension; index_fill's 0-d value stays as it is
        phys = [_phys(r, lvl, size) if isinstance(r, tp.Tensor) and r.ndim else r for r in rest]
        out = op(_phys(self, lvl, size), d, index, *phys, **kwargs)
        return self if inplace else wrap(out, 0, lvl)

    return kernel


defrule(
    "index_add.default", "index_add_.default", "index_fill.int_Scalar", "index_fill.int_Tensor",
    "index_fill_.int_Scalar", "index_fill_.int_Tensor",
)(_dim_index_maker)  # fmt: skip


@defrule("take.default")
def _take_maker(op: Any) -> Kernel:
    def kernel(self: Any, index: Any) -> Any:
        lvl = top_level((self, index))
        if lvl == 0:
            return passdown(op, (self, index), {})
        if self.numel() == 0:
            return loop(op, (self, index), {}, lvl)
        return aten.index.Tensor(_reshape(self, [-1]), [index])

    return kernel


# --- along a dimension, keeping the rank ----------------------------------------------------------

defdim(
    "gather.default", "scatter.src", "scatter.value", "scatter_.src", "scatter_.value",
    "scatter_add.default",
)  # fmt: skip

# --- scatter_reduce (issue 29): along a dimension, keeping the rank ------------------------------

defdim("scatter_reduce.two", "scatter_reduce_.two")

# --- shapes that depend on values ---------------------------------------------------------------

defdynamic("nonzero.default", "masked_select.default", "where.default")


# --- searchsorted and bucketize -------------------------------------------------------------


def _search(seq: Any, x: Any, lvl: int, kwargs: dict[str, Any]) -> Any:
    """``searchsorted(seq, x)`` with ``seq`` (or ``sorter``) batched at ``lvl``."""
    size = _size(lvl, seq, kwargs.get("sorter"), x)
    s = _phys(seq, lvl, size)
    sorter = kwargs.get("sorter")
    kw = dict(kwargs)
    if sorter is not None:
        kw["sorter"] = _phys(sorter, lvl, size)
    p = _phys(x, lvl, size)
    if seq.ndim == 1:  # one sorted row per sample: the values as one row each
        flat = _reshape(p, [size, x.numel()])
        out = aten.searchsorted.Tensor(s, flat, **kw)
        return wrap(_reshape(out, [size, *x.shape]), 0, lvl)
    return wrap(aten.searchsorted.Tensor(s, p, **kw), 0, lvl)


@defrule("searchsorted.Tensor")
def _searchsorted_maker(op: Any) -> Kernel:
    def kernel(sorted_sequence: Any, self: Any, **kwargs: Any) -> Any:
        lvl = top_level((sorted_sequence, self, kwargs.get("sorter")))
        if lvl == 0:
            return passdown(op, (sorted_sequence, self), kwargs)
        seq_batched = batched_at(sorted_sequence, lvl) or batched_at(kwargs.get("sorter"), lvl)
        if sorted_sequence.ndim == 0 or (
            sorted_sequence.ndim > 1 and self.ndim != sorted_sequence.ndim
        ):
            return loop(op, (sorted_sequence, self), kwargs, lvl)
        if not seq_batched and sorted_sequence.ndim == 1:
            return wrap(op(sorted_sequence, self.value, **kwargs), self.bdim, lvl)
        return _search(sorted_sequence, self, lvl, kwargs)

    return kernel


@defrule("searchsorted.Scalar")
def _searchsorted_scalar_maker(op: Any) -> Kernel:
    def kernel(sorted_sequence: Any, self: Any, **kwargs: Any) -> Any:
        lvl = top_level((sorted_sequence, kwargs.get("sorter")))
        if lvl == 0:
            return passdown(op, (sorted_sequence, self), kwargs)
        if sorted_sequence.ndim != 1:
            return loop(op, (sorted_sequence, self), kwargs, lvl)
        x = aten.full.default([], self, dtype=sorted_sequence.dtype, device=sorted_sequence.device)
        return _search(sorted_sequence, x, lvl, kwargs)

    return kernel


@defrule("bucketize.Tensor")
def _bucketize_maker(op: Any) -> Kernel:
    def kernel(self: Any, boundaries: Any, **kwargs: Any) -> Any:
        lvl = top_level((self, boundaries))
        if lvl == 0:
            return passdown(op, (self, boundaries), kwargs)
        if boundaries.ndim != 1:
            return loop(op, (self, boundaries), kwargs, lvl)
        if not batched_at(boundaries, lvl):
            return wrap(op(self.value, boundaries, **kwargs), self.bdim, lvl)
        return _search(boundaries, self, lvl, kwargs)

    return kernel


@defrule("bucketize.Scalar")
def _bucketize_scalar_maker(op: Any) -> Kernel:
    def kernel(self: Any, boundaries: Any, **kwargs: Any) -> Any:
        lvl = top_level((boundaries,))
        if lvl == 0:
            return passdown(op, (self, boundaries), kwargs)
        if boundaries.ndim != 1:
            return loop(op, (self, boundaries), kwargs, lvl)
        x = aten.full.default([], self, dtype=boundaries.dtype, device=boundaries.device)
        return _search(boundaries, x, lvl, kwargs)

    return kernel


@defrule("_local_scalar_dense.default")
def _item_maker(op: Any) -> Kernel:
    def kernel(self: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self,), {})
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file "
            "a bug report."
        )

    return kernel
