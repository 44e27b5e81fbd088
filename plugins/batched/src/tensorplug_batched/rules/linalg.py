"""Batching rules of the matmul family (``matmul``, ``mm``, ``bmm``, ``dot`` and ``addmm``) and of
the ``torch.linalg`` factorizations and solvers (Note [Batched linear algebra]).

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

from ..batched import BatchedTensor, batched_at, front, wrap
from ..calls import passdown, top_level
from ..fallback import loop
from .table import Kernel, defrule

aten = tp.ops.aten
_matmul = aten.matmul.default
_unsqueeze = aten.unsqueeze.default
_squeeze_dim = aten.squeeze.dim
_tls = tp.dispatch.local_state
_trace = tp.dispatcher.trace_state


def batched_matmul(op: Any, a: Any, b: Any, lvl: int) -> Any:
    """``a @ b`` for logical tensors, one of them batched at ``lvl`` (Note [Batched matmul])."""
    ba, bb = batched_at(a, lvl), batched_at(b, lvl)
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
                m = _tls.masks  # Note [Rules call kernels directly] in pointwise.py
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


# --- torch.linalg: factorizations and solvers ----------------------------------------------------
# Note [Batched linear algebra]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The factorizations and solvers work on stacks: every dimension before a tensor's core (its
# last two for a matrix, its last for pivots or a vector) is a batch dimension, broadcast
# between the operands. So the vmap dimension moved to the front is one more batch dimension:
# a batched operand gets size-1 dimensions after it up to the largest logical batch rank (so
# that it meets the other operands' batch dimensions, not one of their matrix dimensions), an
# unbatched one gets size-1 dimensions in front (so every operand has the same rank, which the
# kernels read: a right-hand side of one rank less is a vector), and every output comes back
# batched at 0. An output made from unbatched operands only (``info`` when only ``B`` is
# batched) is expanded along its size-1 vmap dimension, and one without a batch dimension (the
# empty placeholders: ``U`` of ``compute_uv=False``) along a new one. Operators whose reading
# of an operand depends on its logical rank (a vector right-hand side of ``solve_ex`` and
# ``lstsq``) take the loop fallback for those calls.

# op -> the core rank of each positional tensor argument, in order
_CORE_RANKS: dict[str, tuple[int, ...]] = {
    "linalg_cholesky_ex.default": (2,),
    "linalg_inv_ex.default": (2,),
    "linalg_det.default": (2,),
    "linalg_slogdet.default": (2,),
    "_linalg_svd.default": (2,),
    "_linalg_eigh.default": (2,),
    "linalg_eig.default": (2,),
    "linalg_qr.default": (2,),
    "linalg_lu_factor_ex.default": (2,),
    "linalg_lu.default": (2,),
    "linalg_matrix_exp.default": (2,),
    "geqrf.default": (2,),
    "linalg_ldl_factor_ex.default": (2,),
    "lu_unpack.default": (2, 1),
    "linalg_lu_solve.default": (2, 1, 2),
    "linalg_solve_triangular.default": (2, 2),
    "linalg_ldl_solve.default": (2, 1, 2),
    "linalg_solve_ex.default": (2, 2),
    "linalg_lstsq.default": (2, 2),
}


def _stack_maker(op: Any) -> Kernel:
    name = op.name.partition("::")[2]
    if "." not in name:
        name += ".default"
    cores = _CORE_RANKS[name]
    rank_sensitive = name in ("linalg_solve_ex.default", "linalg_lstsq.default")
    unbroadcast = name == "linalg_ldl_solve.default"  # scipy's per-matrix solves

    def kernel(*args: Any, **kwargs: Any) -> Any:
        lvl = top_level(args)
        if lvl == 0:
            return passdown(op, args, kwargs)
        tensors = args[: len(cores)]
        if rank_sensitive and (tensors[1].ndim < 2 or tensors[1].ndim == tensors[0].ndim - 1):
            return loop(op, args, kwargs, lvl)  # a vector right-hand side: the rank decides
        if any(t.ndim < c for t, c in zip(tensors, cores, strict=True)):
            return loop(op, args, kwargs, lvl)  # the logical call's error, on a sample
        if unbroadcast and not all(batched_at(t, lvl) for t in tensors):
            return loop(op, args, kwargs, lvl)  # its kernel broadcasts no batch dimensions
        batch = max(t.ndim - c for t, c in zip(tensors, cores, strict=True))
        size = 0
        phys = []
        for t, c in zip(tensors, cores, strict=True):
            if batched_at(t, lvl):
                p = front(t)
                size = p.shape[0]
                at = 1  # size-1 dims after the vmap dim
            else:
                p = t
                at = 0  # size-1 dims in front: the vmap dim and the missing batch dims
            for _ in range(batch - (t.ndim - c) + (1 - at)):
                p = _unsqueeze(p, at)
            phys.append(p)
        out = op(*phys, *args[len(cores) :], **kwargs)
        return _wrap_front(out, size, lvl)

    return kernel


def _wrap_front(out: Any, size: int, lvl: int) -> Any:
    def one(o: Tensor) -> Any:
        if o.ndim and o.shape[0] != size:
            if o.shape[0] == 1 and o.numel():  # made from unbatched operands only (info)
                o = aten.expand.default(o, [size, *o.shape[1:]])
            else:  # an empty placeholder, without the batch dimension
                o = aten.expand.default(_unsqueeze(o, 0), [size, *o.shape])
        elif not o.ndim:
            o = aten.expand.default(_unsqueeze(o, 0), [size])
        return wrap(o, 0, lvl)

    if isinstance(out, Tensor):
        return one(out)
    items = [one(o) for o in out]
    return type(out)(*items) if hasattr(out, "_fields") else tuple(items)


defrule(*_CORE_RANKS)(_stack_maker)


@defrule("linalg_cross.default")
def _cross_maker(op: Any) -> Kernel:
    """Both operands broadcast and ``dim`` counts from the end of the logical shapes."""

    def kernel(self: Any, other: Any, *, dim: int = -1) -> Any:
        lvl = top_level((self, other))
        if lvl == 0:
            return passdown(op, (self, other), {"dim": dim})
        nd = max(self.ndim, other.ndim)
        if self.ndim != other.ndim or not -nd <= dim < nd:
            return loop(op, (self, other), {"dim": dim}, lvl)
        neg = dim - nd if dim >= 0 else dim
        # linalg.cross wants operands of one rank: an unbatched one gets a size-1 vmap dim
        phys = [front(t) if batched_at(t, lvl) else _unsqueeze(t, 0) for t in (self, other)]
        return wrap(op(*phys, dim=neg), 0, lvl)

    return kernel
