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
