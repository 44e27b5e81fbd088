"""Batching rules of the matmul family, the losses and embedding.

Note [Batched matmul]
~~~~~~~~~~~~~~~~~~~~~
``matmul`` broadcasts the leading dimensions of its operands, so a batched operand with its
batch dimension first is already a stack of matrices, as long as (1) a vector operand becomes a
matrix (a row on the left, a column on the right, squeezed out of the result afterwards) and (2)
a batched operand has at least the other's rank, so that the batch dimension does not meet one
of the other's dimensions (it gets size-1 dimensions after the batch). The common case --
a batched vector or matrix times an unbatched matrix -- is one physical matmul of the batched
value: ``(B, n) @ (n, m)``, the fast path of ``vmap(lambda x: x @ W)``. ``mm``, ``bmm`` and
``dot`` are matmul on operands of the rank they require (checked on the logical shapes).
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug.tensor import Tensor

from .batched import BatchedTensor, front, materialize, wrap
from .fallback import loop
from .rules import Kernel, defrule, passdown, top_level

aten = tp.ops.aten
_matmul = aten.matmul.default
_unsqueeze = aten.unsqueeze.default
_squeeze_dim = aten.squeeze.dim
_select = aten.select.int
_reshape = aten.reshape.default
_tls = tp.dispatch.local_state
_trace = tp.dispatcher.trace_state


def _batched_at(x: Any, lvl: int) -> bool:
    return type(x) is BatchedTensor and x.level == lvl


def batched_matmul(op: Any, a: Any, b: Any, lvl: int) -> Any:
    """``a @ b`` for logical tensors, one of them batched at ``lvl`` (Note [Batched matmul])."""
    ba, bb = _batched_at(a, lvl), _batched_at(b, lvl)
    ra, rb = a.ndim, b.ndim
    if ra == 0 or rb == 0:
        return loop(op, (a, b), {}, lvl)  # the logical call's error, on the first sample
    if ba and not bb and ra <= 2 and rb <= 2:  # (B, [n,] k) @ (k[, m]): one physical matmul
        return wrap(_matmul(front(a), b), 0, lvl)
    pa = front(a) if ba else a
    pb = front(b) if bb else b
    if ra == 1:  # a row
        pa = _unsqueeze(pa, -2)
    if rb == 1:  # a column
        pb = _unsqueeze(pb, -1)
    rank = max(ra, rb, 2)
    if ba:
        for _ in range(rank - max(ra, 2)):
            pa = _unsqueeze(pa, 1)
    if bb:
        for _ in range(rank - max(rb, 2)):
            pb = _unsqueeze(pb, 1)
    out = _matmul(pa, pb)
    if rb == 1:
        out = _squeeze_dim(out, -1)
    if ra == 1:
        out = _squeeze_dim(out, -1 if rb == 1 else -2)
    return wrap(out, 0, lvl)


def _fits(name: str, a: Any, b: Any) -> bool:
    """Whether ``mm``/``bmm``/``dot`` accept the logical shapes (else the loop raises their error)."""
    sa, sb = a.shape, b.shape
    if name == "mm":
        return len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0]
    if name == "bmm":
        return len(sa) == 3 and len(sb) == 3 and sa[0] == sb[0] and sa[2] == sb[1]
    if name == "dot":
        return len(sa) == 1 and sa == sb and a.dtype is b.dtype
    return True


def _binary_maker(op: Any) -> Kernel:
    name = op.name.split("::")[1].split(".")[0]
    is_matmul = name == "matmul"
    get = op.kernel_cache.get
    kernel_for = op.kernel_for

    def kernel(self: Any, other: Any) -> Any:
        # the common case first: a batched vector or matrix times a plain matrix
        if is_matmul and type(self) is BatchedTensor and type(other) is Tensor:
            if 1 <= self.tp_data.ndim <= 2 and 1 <= other.tp_data.ndim <= 2:
                if self.bdim or _trace.enabled:
                    return wrap(_matmul(front(self), other), 0, self.level)
                v = self.value
                m = _tls.masks  # Note [Rules call kernels directly] in rules.py
                ks = (v.tp_keyset | other.tp_keyset | m.inc) & m.nexc
                return wrap((get(ks) or kernel_for(ks))(v, other), 0, self.level)
        lvl = top_level((self, other))
        if lvl == 0:
            return passdown(op, (self, other), {})
        if not _fits(name, self, other):
            return loop(op, (self, other), {}, lvl)  # the logical call's error, on a sample
        return batched_matmul(op, self, other, lvl)

    return kernel


defrule("matmul.default", "mm.default", "bmm.default", "dot.default")(_binary_maker)


@defrule("addmm.default")
def _addmm_maker(op: Any) -> Kernel:
    def kernel(self: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        lvl = top_level((self, mat1, mat2))
        if lvl == 0:
            return passdown(op, (self, mat1, mat2), {"beta": beta, "alpha": alpha})
        if mat1.ndim != 2 or mat2.ndim != 2:
            return loop(op, (self, mat1, mat2), {"beta": beta, "alpha": alpha}, lvl)
        # beta * self + alpha * (mat1 @ mat2), self ignored when beta is 0 (PyTorch's rule)
        out = aten.mm.default(mat1, mat2)
        if alpha != 1:
            out = aten.mul.Scalar(out, alpha)
        if beta == 0:
            return out
        return aten.add.Tensor(out, self, alpha=beta)

    return kernel


# --- embedding ------------------------------------------------------------------------------------


@defrule("embedding.default")
def _embedding_maker(op: Any) -> Kernel:
    def kernel(weight: Any, indices: Any, *args: Any) -> Any:
        lvl = top_level((weight, indices))
        if lvl == 0:
            return passdown(op, (weight, indices, *args), {})
        if _batched_at(weight, lvl):  # a weight per sample: rows of each
            return loop(op, (weight, indices, *args), {}, lvl)
        return wrap(op(weight, indices.value, *args), indices.bdim, lvl)

    return kernel


# --- losses -------------------------------------------------------------------------------------

# Note [Batched losses]
# A loss reduces over its own batch (``N``) as well: computed per element (reduction="none") on
# the values with the vmap batch folded into N, it is then reduced per sample -- "sum" sums, and
# "mean" divides by the sample's total weight of the targets that are not ignored (the
# definition of nll_loss's mean; all-ignored samples give 0/0 = nan, as PyTorch).


def _none_then_reduce(lvl: int, losses: Any, weights: Any, reduction: str, shape: Any) -> Any:
    """``losses`` and ``weights``: physical ``[B, n]``; the per-sample reduction of them."""
    if reduction == "none":
        return wrap(_reshape(losses, [losses.shape[0], *shape]), 0, lvl)
    total = aten.sum.dim_IntList(losses, [1])
    if reduction == "sum":
        return wrap(total, 0, lvl)
    return wrap(aten.div.Tensor(total, aten.sum.dim_IntList(weights, [1])), 0, lvl)


@defrule("nll_loss.default")
def _nll_maker(op: Any) -> Kernel:
    def kernel(self: Any, target: Any, weight: Any = None, reduction: str = "mean",
               ignore_index: int = -100) -> Any:  # fmt: skip
        args = (self, target, weight, reduction, ignore_index)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        if (
            (weight is not None and _batched_at(weight, lvl))
            or self.ndim == 0
            or reduction not in ("none", "sum", "mean")
        ):
            return loop(op, args, {}, lvl)
        size = next(int(t.value.shape[t.bdim]) for t in (self, target) if _batched_at(t, lvl))
        x = front(self) if _batched_at(self, lvl) else materialize(self, size)
        t = front(target) if _batched_at(target, lvl) else materialize(target, size)
        if self.ndim == 1:  # one sample of C classes: the vmap batch is N
            losses = op(x, t, weight, "none", ignore_index)
            tf = t
        else:  # fold the vmap batch into N
            x2 = _reshape(x, [size * x.shape[1], *x.shape[2:]])
            tf = _reshape(t, [size * t.shape[1], *t.shape[2:]])
            n = target.numel()
            losses = _reshape(op(x2, tf, weight, "none", ignore_index), [size, n])
            tf = _reshape(tf, [size, n])
        weights = None
        if reduction == "mean":
            kept = aten.ne.Scalar(tf, ignore_index)
            if weight is None:
                weights = aten._to_copy.default(kept, dtype=losses.dtype)
            else:
                safe = aten.where.ScalarOther(kept, tf, 0)
                w = aten.index.Tensor(weight, [safe])
                weights = aten.mul.Tensor(w, kept)
        if self.ndim == 1:
            losses = _reshape(losses, [size, 1])
            weights = _reshape(weights, [size, 1]) if weights is not None else None
        return _none_then_reduce(lvl, losses, weights, reduction, target.shape)

    return kernel


@defrule("cross_entropy_loss.default")
def _cross_entropy_maker(op: Any) -> Kernel:
    def kernel(self: Any, target: Any, weight: Any = None, reduction: str = "mean",
               ignore_index: int = -100, label_smoothing: float = 0.0) -> Any:  # fmt: skip
        args = (self, target, weight, reduction, ignore_index, label_smoothing)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        class_indices = not (target.dtype.is_floating_point or target.dtype.is_complex)
        if not class_indices or label_smoothing != 0.0 or self.ndim == 0:
            return loop(op, args, {}, lvl)  # probabilities or smoothing: per sample
        logp = aten.log_softmax.int(self, 0 if self.ndim == 1 else 1)
        return aten.nll_loss.default(logp, target, weight, reduction, ignore_index)

    return kernel


@defrule("binary_cross_entropy.default")
def _bce_maker(op: Any) -> Kernel:
    def kernel(self: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Any:
        args = (self, target, weight, reduction)
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, {})
        if self.shape != target.shape or reduction not in ("none", "sum", "mean"):
            return loop(op, args, {}, lvl)
        size = next(
            int(t.value.shape[t.bdim]) for t in args[:3] if t is not None and _batched_at(t, lvl)
        )
        x = front(self) if _batched_at(self, lvl) else materialize(self, size)
        t = front(target) if _batched_at(target, lvl) else materialize(target, size)
        w = weight
        if weight is not None and _batched_at(weight, lvl):
            w = front(weight)
            for _ in range(self.ndim - weight.ndim):
                w = _unsqueeze(w, 1)
        losses = op(x, t, w, "none")
        if reduction == "none":
            return wrap(losses, 0, lvl)
        flat = _reshape(losses, [size, self.numel()])
        red = aten.sum.dim_IntList if reduction == "sum" else aten.mean.dim
        return wrap(red(flat, [1]), 0, lvl)

    return kernel
