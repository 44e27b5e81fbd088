"""Batching rules of the reductions: over logical dimensions (``sum.dim_IntList``, ``max.dim``),
over the whole tensor (``sum``, ``max``), and the scans and sorts along one dimension
(``cumsum``, ``sort``, ``topk``), which keep the rank.

Usage::

    defreduction("sum.dim_IntList", "amax.default")
    deffull("sum.default", lambda x, dtype=None: aten.sum.dim_IntList(x, [1], dtype=dtype))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import tensorplug as tp

from ..batched import BatchedTensor, front
from ..calls import passdown, wrap_dim
from ..fallback import loop
from .pointwise import defbroadcasting
from .table import Kernel, arg_index, defdim, defdynamic, defrule, map_out, wrap_out

__all__ = ["deffull", "defreduction"]

aten = tp.ops.aten
_unsqueeze = aten.unsqueeze.default
_squeeze_dim = aten.squeeze.dim
_reshape = aten.reshape.default


def _flat(x: BatchedTensor) -> Any:
    """``x``'s value as ``[batch, numel]``: what a whole-tensor reduction reduces along dim 1."""
    p = front(x)
    return _reshape(p, [p.shape[0], x.numel()])


def deffull(name: str, reduce: Callable[..., Any], *, empty_ok: bool = True) -> None:
    """The rule of a whole-tensor reduction: ``reduce(flat, *rest, **kw)`` reduces dim 1 of the
    ``[batch, numel]`` value (a dim overload: ``sum(x)`` is ``sum.dim_IntList(flat, [1])``).
    Without ``empty_ok`` (``max``: the dim overload refuses an empty dimension, the whole-tensor
    one has its own answer) an empty tensor runs per sample."""

    def maker(op: Any) -> Kernel:
        def rule(self: Any, *args: Any, **kwargs: Any) -> Any:
            if type(self) is not BatchedTensor:
                return passdown(op, (self, *args), kwargs)
            if not empty_ok and self.numel() == 0:
                return loop(op, (self, *args), kwargs, self.level)
            return wrap_out(reduce(_flat(self), *args, **kwargs), self.level)

        return rule

    defrule(name)(maker)


def defreduction(*names: str, dim: str = "dim", keepdim: str | None = "keepdim",
                 empty_is_all: bool = True) -> None:  # fmt: skip
    """Rules for reductions over logical dimensions (``int``, ``int?`` or ``int[]`` argument
    ``dim``; ``None`` -- and ``[]`` where ``empty_is_all`` -- reduce all of them), with
    ``keepdim`` and tuple results (``max.dim`` gives its named tuple back)."""
    for name in names:
        defrule(name)(functools.partial(_reduction, dim_name=dim, keep_name=keepdim,
                                        empty_is_all=empty_is_all))  # fmt: skip


def _reduction(op: Any, dim_name: str, keep_name: str | None, empty_is_all: bool) -> Kernel:
    di, dkw = arg_index(op, dim_name)
    ki, kkw = arg_index(op, keep_name) if keep_name else (-1, None)
    dim_type = str(op.schema.arguments[[a.name for a in op.schema.arguments].index(dim_name)].type)
    is_list = "[" in dim_type

    def rule(self: Any, *args: Any, **kwargs: Any) -> Any:
        if type(self) is not BatchedTensor:
            return passdown(op, (self, *args), kwargs)
        full = (self, *args)
        dim: Any = full[di] if dkw is None else kwargs.get(dkw)
        keep = (full[ki] if kkw is None else kwargs.get(kkw, False)) if keep_name else False
        rank = self.ndim
        everything = dim is None or (is_list and len(dim) == 0 and empty_is_all)
        call = list(full)
        if everything:
            p = _flat(self)
            new_dim: Any = [1] if is_list else 1
        else:
            p = front(self)
            dims = list(dim) if is_list else [dim]
            mapped = [wrap_dim(d, rank, op) + 1 for d in dims]  # a 0-d tensor's dim 0 is 1
            for k, m in enumerate(mapped):
                if m in mapped[:k]:
                    raise RuntimeError(
                        f"{op.name}: dim {m - 1} appears multiple times in the list of dims"
                    )
            if rank == 0:  # a dimension of size 1 to reduce, squeezed out below
                p = _unsqueeze(p, 1)
            new_dim = mapped if is_list else mapped[0]
        call[0] = p
        kw = dict(kwargs)
        if dkw is None:
            call[di] = new_dim
        else:
            kw[dkw] = new_dim
        out = op(*call, **kw)
        if everything and keep and rank > 0:
            shape = [1] * rank
            out = map_out(out, lambda o: _reshape(o, [o.shape[0], *shape]))
        elif rank == 0:
            out = map_out(out, lambda o: _squeeze_dim(o, 1) if o.ndim == 2 else o)
        return wrap_out(out, self.level)

    return rule


# --- the reductions -----------------------------------------------------------------------------

defreduction(
    "sum.dim_IntList", "mean.dim", "var.correction", "std.correction", "prod.dim_int",
    "amax.default", "amin.default", "aminmax.default", "max.dim", "min.dim",
    "argmax.default", "argmin.default", "logsumexp.default", "var_mean.correction",
    "std_mean.correction", "median.dim", "kthvalue.default", "any.dim", "all.dim",
    "linalg_vector_norm.default",
)  # fmt: skip
defreduction("any.dims", "all.dims", empty_is_all=False)  # dim=[] reduces nothing
defreduction("count_nonzero.default", "count_nonzero.dim_IntList", keepdim=None)

deffull("sum.default", lambda x, dtype=None: aten.sum.dim_IntList(x, [1], dtype=dtype))
deffull("mean.default", lambda x, dtype=None: aten.mean.dim(x, [1], dtype=dtype))
deffull("prod.default", lambda x, dtype=None: aten.prod.dim_int(x, 1, dtype=dtype))
deffull("max.default", lambda x: aten.max.dim(x, 1)[0], empty_ok=False)
deffull("min.default", lambda x: aten.min.dim(x, 1)[0], empty_ok=False)
deffull("median.default", lambda x: aten.median.dim(x, 1)[0], empty_ok=False)
deffull("any.default", lambda x: aten.any.dim(x, 1))
deffull("all.default", lambda x: aten.all.dim(x, 1))

# --- scans and sorts: along a dimension, keeping the rank -----------------------------------------

defdim(
    "cumsum.default", "cumprod.default", "cummax.default", "cummin.default", "sort.default",
    "sort.stable", "topk.default",
)  # fmt: skip

# --- statistics: nanmedian, mode (reduce a dim), logcumsumexp (scans it) -----------------------

defreduction("nanmedian.dim", "mode.default")
deffull("nanmedian.default", lambda x: aten.nanmedian.dim(x, 1)[0], empty_ok=False)
defdim("logcumsumexp.default")

# --- shapes that depend on values ---------------------------------------------------------------

defdynamic("_unique2.default", "unique_dim.default")

# --- counting (issue 29): bincount's length and unique_consecutive's runs depend on values; histc,
# histogram and isin take the loop fallback (their shapes do not)

defdynamic("bincount.default", "unique_consecutive.default")

# isclose is elementwise, but its family is reductions, with allclose and equal, which are
# built on it (docs/extending.md, "Which family")
defbroadcasting("isclose.default", promote=())  # compares as given: no promotion to imitate
