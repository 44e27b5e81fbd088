"""The ``reductions`` family of the composites: statistics, norms and argsort (sorting is a
reduction here, as in the kit) written with var, std, linalg_vector_norm and sort."""

from __future__ import annotations

from typing import Any

from ..ops import ops

aten = ops.aten


def var_unbiased(self: Any, unbiased: bool = True) -> Any:
    return aten.var.correction(self, None, correction=1 if unbiased else 0)


def std_unbiased(self: Any, unbiased: bool = True) -> Any:
    return aten.std.correction(self, None, correction=1 if unbiased else 0)


def _check_floating(name: str, overload: str, self: Any) -> None:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            f"aten::{name}.{overload}: {name} only support floating point and complex dtypes"
        )


def _with_mean(
    name: str, stat: Any, self: Any, dim: Any, correction: Any, keepdim: bool
) -> tuple[Any, Any]:
    """``(stat(self), mean(self))`` over ``dim``: var_mean and std_mean."""
    _check_floating(name, "correction", self)
    return (
        stat(self, dim, correction=correction, keepdim=keepdim),
        aten.mean.dim(self, dim, keepdim),
    )


def var_mean(
    self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    return _with_mean("var_mean", aten.var.correction, self, dim, correction, keepdim)


def var_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return var_mean(self, None, correction=1 if unbiased else 0)


def std_mean(
    self: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[Any, Any]:
    return _with_mean("std_mean", aten.std.correction, self, dim, correction, keepdim)


def std_mean_unbiased(self: Any, unbiased: bool = True) -> tuple[Any, Any]:
    return std_mean(self, None, correction=1 if unbiased else 0)


def norm(self: Any, p: Any = 2) -> Any:
    # torch.norm of a number p is linalg.vector_norm over every element
    return aten.linalg_vector_norm.default(self, p)


def norm_dim(self: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
    return aten.linalg_vector_norm.default(self, 2 if p is None else p, dim, keepdim)


def argsort(self: Any, dim: int = -1, descending: bool = False) -> Any:
    return aten.sort.default(self, dim, descending)[1]


def argsort_stable(self: Any, *, stable: bool, dim: int = -1, descending: bool = False) -> Any:
    return aten.sort.stable(self, stable=stable, dim=dim, descending=descending)[1]


# --- queries of one tensor (issue 29): is_nonzero, is_same_size, is_signed, is_distributed ----


def is_nonzero(self: Any) -> bool:
    """``bool(self)`` of a one-element tensor, with PyTorch's errors for the others."""
    n = self.numel()
    if n == 0:
        raise RuntimeError("aten::is_nonzero: Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError(
            "aten::is_nonzero: Boolean value of Tensor with more than one value is ambiguous"
        )
    return bool(aten._local_scalar_dense.default(self))


def is_same_size(self: Any, other: Any) -> bool:
    return list(self.shape) == list(other.shape)


def is_signed(self: Any) -> bool:
    """Whether the dtype holds negative values: every dtype but uint8 and bool."""
    return self.dtype.name not in ("uint8", "bool")


def is_distributed(self: Any) -> bool:
    return False  # no tensor here is split across processes (PyTorch's answer too)


def sum_to_size(self: Any, size: Any) -> Any:
    """``self`` summed down to ``size``, a shape ``self`` expands from (the reverse of
    ``expand``: PyTorch's sum_to): the leading dims summed away, the dims of size 1 kept."""
    size = [int(s) for s in size]
    shape = list(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != t for s, t in zip(size, shape[lead:], strict=True)):
        raise RuntimeError(
            f"aten::sum_to_size: size {{{size}}} is not expandable to size {{{shape}}}."
        )
    r = self
    if lead:
        r = aten.sum.dim_IntList(r, list(range(lead)))
    ones = [i for i, (s, t) in enumerate(zip(size, shape[lead:], strict=True)) if s == 1 and t != 1]
    if ones:
        r = aten.sum.dim_IntList(r, ones, True)
    return r  # self itself when nothing is summed, as PyTorch
