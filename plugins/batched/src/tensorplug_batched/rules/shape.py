"""Batching rules of the shape and view operators, of cat and stack, and of ``flip``.

A view of a batched tensor is a batched view: each rule calls the view operator on the value, so
the result shares its memory (writes through it reach the base, and autograd sees a view).
Logical dimension ``d`` of a tensor whose batch dimension is at ``b`` is physical dimension
``d`` when ``d < b`` and ``d + 1`` otherwise (:func:`_phys`); rules that need the batch dimension
first (``view``, ``expand``, ``permute`` ...) move it there with a view (``front``).

Where the physical call would accept what the logical one refuses (``tril`` of a 1-d tensor is
a 2-d physical call), the rule runs the operator on one sample to raise its own error.
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp

from ..batched import BatchedTensor, front, materialize, wrap
from ..calls import passdown, top_level, wrap_dim
from ..fallback import loop
from .table import Kernel, defdim, defdynamic, defrule

aten = tp.ops.aten
_unsqueeze = aten.unsqueeze.default
_squeeze_dim = aten.squeeze.dim
_transpose = aten.transpose.int
_reshape = aten.reshape.default
_select = aten.select.int


def _phys(d: int, b: int) -> int:
    """The physical dimension of logical dimension ``d`` (wrapped) when the batch is at ``b``."""
    return d if d < b else d + 1


def _on_sample(op: Any, self: BatchedTensor, *args: Any, **kwargs: Any) -> Any:
    """Run ``op`` on sample 0 of ``self``: the logical call, for its error message."""
    return op(_select(self.value, self.bdim, 0), *args, **kwargs)


def _unary_view(rule: Any) -> Any:
    """Decorator: a rule ``rule(op, self, *args)`` for ops whose only tensor is ``self``."""

    def maker(op: Any) -> Kernel:
        def kernel(self: Any, *args: Any, **kwargs: Any) -> Any:
            if type(self) is not BatchedTensor:
                return passdown(op, (self, *args), kwargs)
            return rule(op, self, *args, **kwargs)

        return kernel

    return maker


@defrule("unsqueeze.default")
@_unary_view
def _unsqueeze_rule(op: Any, self: BatchedTensor, dim: int) -> Any:
    d = wrap_dim(dim, self.ndim + 1, op)
    b = self.bdim
    if d <= b:
        return wrap(op(self.value, d), b + 1, self.level)
    return wrap(op(self.value, d + 1), b, self.level)


@defrule("squeeze.dim")
@_unary_view
def _squeeze_dim_rule(op: Any, self: BatchedTensor, dim: int) -> Any:
    d = wrap_dim(dim, self.ndim, op)
    b = self.bdim
    if self.ndim == 0 or self.shape[d] != 1:  # nothing to squeeze: still a view
        return wrap(_transpose(self.value, b, b), b, self.level)
    p = _phys(d, b)
    return wrap(op(self.value, p), b - 1 if p < b else b, self.level)


@defrule("squeeze.default")
@_unary_view
def _squeeze_rule(op: Any, self: BatchedTensor) -> Any:
    out = self
    for d in reversed(range(self.ndim)):
        if self.shape[d] == 1:
            out = _squeeze_dim(out, d)
    if out is self:
        return wrap(_transpose(self.value, self.bdim, self.bdim), self.bdim, self.level)
    return out


@defrule("transpose.int")
@_unary_view
def _transpose_rule(op: Any, self: BatchedTensor, dim0: int, dim1: int) -> Any:
    n, b = self.ndim, self.bdim
    d0, d1 = wrap_dim(dim0, n, op), wrap_dim(dim1, n, op)
    if n == 0:  # a view of the one element
        return wrap(op(self.value, b, b), b, self.level)
    return wrap(op(self.value, _phys(d0, b), _phys(d1, b)), b, self.level)


# --- in-place views (issue 29): the physical value is changed in place, as functorch's rules
# do (the caller's tensor takes the new shape, as each sample would), then the wrapper takes its
# new batch dim and logical shape (Note [In-place views] in tensorplug_autograd/inplace_views.py)


def _squeeze_physical(self: BatchedTensor, d: int) -> None:
    """Squeeze logical dim ``d`` (of size 1) out of ``self.value``, in place."""
    b = self.bdim
    p = _phys(d, b)
    aten.squeeze_.dim(self.value, p)
    _relabel(self, b - 1 if p < b else b)


def _relabel(self: BatchedTensor, bdim: int) -> None:
    self.bdim = bdim
    self.tp_data = wrap(self.value, bdim, self.level).tp_data  # the logical shape


@defrule("squeeze_.default", "squeeze_.dim", "unsqueeze_.default", "transpose_.default")
def _inplace_view(op: Any) -> Kernel:
    name = op.name.partition("::")[2]

    def kernel(self: Any, *args: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self, *args), {})
        n, b = self.ndim, self.bdim
        if name == "transpose_.default":
            if n:  # (a 0-d tensor has nothing to swap)
                d0, d1 = (wrap_dim(d, n, op) for d in args)
                aten.transpose_.default(self.value, _phys(d0, b), _phys(d1, b))
                _relabel(self, b)
        elif name == "unsqueeze_.default":
            # the new dim goes after the batch dim where it may, so that the batch stays put
            d = wrap_dim(args[0], n + 1, op)
            aten.unsqueeze_.default(self.value, d if d < b else d + 1)
            _relabel(self, b + 1 if d < b else b)
        elif name == "squeeze_.dim":
            d = wrap_dim(args[0], n, op) if n else 0
            if n and self.shape[d] == 1:
                _squeeze_physical(self, d)
        else:
            for d in reversed(range(n)):
                if self.shape[d] == 1:
                    _squeeze_physical(self, d)
        return self

    return kernel


@defrule("permute.default")
@_unary_view
def _permute_rule(op: Any, self: BatchedTensor, dims: Any) -> Any:
    n = self.ndim
    if len(dims) != n:
        return _on_sample(op, self, dims)  # its error
    order = [0, *(wrap_dim(d, n, op) + 1 for d in dims)]
    return wrap(op(front(self), order), 0, self.level)


def _resolve(size: Any, numel: int) -> list[int]:
    """``size`` with its ``-1`` worked out against ``numel`` (so a batch of 0 works too)."""
    out = [int(s) for s in size]
    if -1 in out:
        known = 1
        for s in out:
            if s != -1:
                known *= s
        if out.count(-1) == 1 and known and numel % known == 0:
            out[out.index(-1)] = numel // known
    return out


@defrule("view.default", "reshape.default")
@_unary_view
def _view_rule(op: Any, self: BatchedTensor, size: Any) -> Any:
    p = front(self)
    return wrap(op(p, [p.shape[0], *_resolve(size, self.numel())]), 0, self.level)


@defrule("view.dtype")
@_unary_view
def _view_dtype_rule(op: Any, self: BatchedTensor, dtype: Any) -> Any:
    p = front(self)  # the batch first: the last dim stays last
    if self.bdim == self.value.ndim - 1 and self.ndim:
        # the samples' last dim is strided by the batch now: a copy (as view_as_complex's
        # rule), so the result no longer writes through to the input
        p = tp.ops.aten.contiguous.default(p)
    return wrap(op(p, dtype), 0, self.level)


@defrule("expand.default")
@_unary_view
def _expand_rule(op: Any, self: BatchedTensor, size: Any, *, implicit: bool = False) -> Any:
    if len(size) < self.ndim:
        return _on_sample(op, self, size, implicit=implicit)  # its error
    p = front(self)
    for _ in range(len(size) - self.ndim):
        p = _unsqueeze(p, 1)
    return wrap(op(p, [p.shape[0], *size], implicit=implicit), 0, self.level)


@defrule("select.int")
@_unary_view
def _select_rule(op: Any, self: BatchedTensor, dim: int, index: int) -> Any:
    if self.ndim == 0:
        return _on_sample(op, self, dim, index)  # its error
    b = self.bdim
    p = _phys(wrap_dim(dim, self.ndim, op), b)
    size = self.value.shape[p]
    if not -size <= index < size:
        return _on_sample(op, self, dim, index)
    return wrap(op(self.value, p, index), b - 1 if p < b else b, self.level)


@defrule("slice.Tensor")
@_unary_view
def _slice_rule(op: Any, self: BatchedTensor, dim: int = 0, start: Any = None, end: Any = None,
                step: int = 1) -> Any:  # fmt: skip
    if self.ndim == 0:
        return _on_sample(op, self, dim, start, end, step)
    p = _phys(wrap_dim(dim, self.ndim, op), self.bdim)
    return wrap(op(self.value, p, start, end, step), self.bdim, self.level)


@defrule("diagonal.default")
@_unary_view
def _diagonal_rule(
    op: Any, self: BatchedTensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> Any:
    n = self.ndim
    if n < 2:
        return _on_sample(op, self, offset, dim1, dim2)
    return wrap(
        op(front(self), offset, wrap_dim(dim1, n, op) + 1, wrap_dim(dim2, n, op) + 1), 0, self.level
    )


@defrule("unbind.int", "split.Tensor", "split_with_sizes.default")
def _split_maker(op: Any) -> Kernel:
    def kernel(self: Any, *args: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self, *args), {})
        *rest, dim = args
        if self.ndim == 0:
            return _on_sample(op, self, *args)
        b = self.bdim
        d = _phys(wrap_dim(dim, self.ndim, op), b)
        if op.schema.name == "unbind" and d < b:  # the dimension before the batch is gone
            b -= 1
        return [wrap(t, b, self.level) for t in op(self.value, *rest, d)]

    return kernel


@defrule("tril.default", "triu.default", "tril_.default", "triu_.default")
@_unary_view
def _matrix_rule(op: Any, self: BatchedTensor, diagonal: int = 0) -> Any:
    if self.ndim < 2:
        return _on_sample(op, self, diagonal)  # its error
    out = op(front(self), diagonal)
    return self if op.schema.positional[0].is_write else wrap(out, 0, self.level)


@defrule("diag.default")
@_unary_view
def _diag_rule(op: Any, self: BatchedTensor, diagonal: int = 0) -> Any:
    if self.ndim == 2:  # a copy of the diagonal of each sample's matrix
        d = aten.diagonal.default(front(self), diagonal, 1, 2)
        return wrap(aten.clone.default(d), 0, self.level)
    return loop(op, (self, diagonal), {}, self.level)  # a vector to a matrix: rarely batched


@defrule("repeat.default")
@_unary_view
def _repeat_rule(op: Any, self: BatchedTensor, repeats: Any) -> Any:
    if len(repeats) < self.ndim:
        return _on_sample(op, self, repeats)
    p = front(self)
    for _ in range(len(repeats) - self.ndim):
        p = _unsqueeze(p, 1)
    return wrap(op(p, [1, *repeats]), 0, self.level)


@defrule("roll.default")
@_unary_view
def _roll_rule(op: Any, self: BatchedTensor, shifts: Any, dims: Any = ()) -> Any:
    if len(dims) == 0:  # roll the flattened tensor
        p = front(self)
        flat = _reshape(p, [p.shape[0], self.numel()])
        if len(shifts) != 1:
            return _on_sample(op, self, shifts, dims)
        rolled = op(flat, shifts, [1])
        return wrap(_reshape(rolled, list(p.shape)), 0, self.level)
    mapped = [wrap_dim(d, self.ndim, op) + 1 for d in dims]
    return wrap(op(front(self), shifts, mapped), 0, self.level)


@defrule("contiguous.default")
@_unary_view
def _contiguous_rule(
    op: Any, self: BatchedTensor, *, memory_format: Any = "contiguous_format"
) -> Any:
    p = front(self)
    c = op(p, memory_format=memory_format)
    if c is p and p is self.value:
        return self
    return wrap(c, 0, self.level)


# --- strided views (Note [Strided layout] in tensorplug/_strides.py) -------------------------


@defrule("unfold.default")
@_unary_view
def _unfold_rule(op: Any, self: BatchedTensor, dimension: int, size: int, step: int) -> Any:
    if self.ndim == 0:  # a 0-dim sample unfolds to (size,): unfold a size-1 dim instead
        p = _unsqueeze(front(self), 1)
        return wrap(_squeeze_dim(op(p, 1, size, step), 1), 0, self.level)
    p = _phys(wrap_dim(dimension, self.ndim, op), self.bdim)
    return wrap(op(self.value, p, size, step), self.bdim, self.level)


@defrule("as_strided.default")
@_unary_view
def _as_strided_rule(
    op: Any, self: BatchedTensor, size: Any, stride: Any, storage_offset: Any = None
) -> Any:
    """PyTorch's rule: each sample's view lies where the batch dim's stride puts it, so one
    physical view with that stride first; ``storage_offset`` is sample 0's (as PyTorch's,
    which assumes every sample's storage offset differs by the batch stride)."""
    p = front(self)
    sample_strides = p.stride()[1:]
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(p.shape[1:], sample_strides, strict=True))
    if p.shape[0] > 1 and p.stride(0) < span:
        raise RuntimeError(
            "vmap: Calling Tensor.as_strided is not supported unless the batch dims being "
            "vmapped over are at the front of the tensor (in memory layout). Please try "
            "calling .contiguous() first."
        )
    physical = op(p, [p.shape[0], *size], [p.stride(0), *stride], storage_offset)
    return wrap(physical, 0, self.level)


@defrule("as_strided_.default")
@_unary_view
def _as_strided_inplace_rule(op: Any, self: BatchedTensor, *args: Any, **kwargs: Any) -> Any:
    """Refused: it changes the shape of the tensor in place, which a batched wrapper's fixed
    logical shape cannot follow (the loop would write values, not change a layout)."""
    raise RuntimeError(
        "vmap: Calling Tensor.as_strided_ is not supported inside vmap (it changes the "
        "tensor's shape and strides in place); call the out-of-place as_strided instead"
    )


# --- storage ops: resize_, set_ (refused) -----------------------------------------------------


@defrule(
    "resize_.default", "set_.default", "set_.source_Tensor",
    "set_.source_Tensor_storage_offset",
)  # fmt: skip
def _storage_op_rule(op: Any) -> Kernel:
    """Refused, as PyTorch's vmap refuses them: they give a tensor another storage or
    geometry, which a batched wrapper's per-sample view of one physical tensor cannot take."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if not any(type(a) is BatchedTensor for a in (*args, *kwargs.values())):
            return passdown(op, args, kwargs)
        raise RuntimeError(
            f"vmap: Calling {op.name} is not supported inside vmap (it changes the storage or "
            "the shape of a tensor in place); make the tensor of the new shape outside vmap, "
            "or use out-of-place ops (reshape, new_empty) inside"
        )

    return kernel


# --- cat and stack ----------------------------------------------------------------------------


def _batched_list(tensors: Any, lvl: int) -> list[Any]:
    size = next(
        int(t.value.shape[t.bdim]) for t in tensors if type(t) is BatchedTensor and t.level == lvl
    )
    return [front(t) if type(t) is BatchedTensor and t.level == lvl else materialize(t, size)
            for t in tensors]  # fmt: skip


@defrule("cat.default")
def _cat_maker(op: Any) -> Kernel:
    def kernel(tensors: Any, dim: int = 0) -> Any:
        lvl = top_level(tensors)
        if lvl == 0:
            return passdown(op, (tensors, dim), {})
        # PyTorch's legacy rule: 1-d empty tensors are skipped when the others have more dims
        ranks = [t.ndim for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
        if not ranks:
            return wrap(op(_batched_list(tensors, lvl), 1), 0, lvl)
        rank = ranks[0]
        kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0 and rank != 1)]
        if rank == 0 or any(t.ndim != rank for t in kept):
            return loop(op, (tensors, dim), {}, lvl)  # the logical call's error, per sample
        return wrap(op(_batched_list(kept, lvl), wrap_dim(dim, rank, op) + 1), 0, lvl)

    return kernel


@defrule("stack.default")
def _stack_maker(op: Any) -> Kernel:
    def kernel(tensors: Any, dim: int = 0) -> Any:
        lvl = top_level(tensors)
        if lvl == 0:
            return passdown(op, (tensors, dim), {})
        shapes = {tuple(t.shape) for t in tensors}
        if len(shapes) != 1:
            return loop(op, (tensors, dim), {}, lvl)  # the logical call's error, per sample
        rank = tensors[0].ndim
        return wrap(op(_batched_list(tensors, lvl), wrap_dim(dim, rank + 1, op) + 1), 0, lvl)

    return kernel


defdim("flip.default", dim="dims")
defdynamic("repeat_interleave.Tensor")  # the repeats are values
