"""The ``reductions`` family of the composites: statistics, norms and argsort (sorting is a
reduction here, as in the kit) written with var, std, linalg_vector_norm and sort."""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from .._op_errors import torch_name
from ..ops import ops
from ..tensor import _wrap_dim

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


# --- statistics: nan-aware reductions, quantiles, dist, renorm (PyTorch's composites) ------------


def var_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return aten.var.correction(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def std_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return aten.std.correction(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def var_mean_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return aten.var_mean.correction(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def std_mean_dim(self: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
    return aten.std_mean.correction(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def max_other(self: Any, other: Any) -> Any:
    return aten.maximum.default(self, other)


def min_other(self: Any, other: Any) -> Any:
    return aten.minimum.default(self, other)


def nansum(self: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    """The sum of the values that are not NaN (their gradient is 0, as PyTorch's)."""
    if self.dtype.is_complex:
        raise RuntimeError("aten::nansum: nansum on CPU does not support complex inputs")
    if self.dtype.is_floating_point:
        self = aten.where.ScalarSelf(aten.isnan.default(self), 0, self)
    return aten.sum.dim_IntList(self, dim, keepdim, dtype=dtype)


def nanmean(self: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            "aten::nanmean: nanmean(): expected input to have floating point or complex dtype "
            f"but got {torch_name(self.dtype)}"
        )
    count = aten.sum.dim_IntList(aten.logical_not.default(aten.isnan.default(self)), dim, keepdim)
    return aten.div.Tensor(nansum(self, dim, keepdim, dtype=dtype), count)


def msort(self: Any) -> Any:
    return aten.sort.default(self, 0)[0]


_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_checks(name: str, self: Any, q: Any, interpolation: str) -> None:
    """PyTorch's quantile_checks, in its order (its messages say quantile() for both)."""
    if self.numel() == 0:
        raise RuntimeError(f"aten::{name}: quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError(f"aten::{name}: quantile() q must be a scalar or 1D tensor")
    if self.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(
            f"aten::{name}: quantile() input tensor must be either float or double dtype"
        )
    if q.dtype is not self.dtype:
        raise RuntimeError(
            f"aten::{name}: quantile() q tensor must be same dtype as the input tensor"
        )
    if interpolation not in _QUANTILE_MODES:
        raise RuntimeError(
            f"aten::{name}: quantile() interpolation must be one of linear, lower, higher, "
            f"midpoint or nearest, but got {interpolation}"
        )


def _quantile(
    name: str,
    self: Any,
    q: Any,
    dim: int | None,
    keepdim: bool,
    interpolation: str,
    ignore_nan: bool,
) -> Any:
    """PyTorch's quantile_impl: sort along ``dim`` (all elements without one), find each
    q's rank among the values (among the values that are not NaN for nanquantile; a slice
    with a NaN gives NaN for quantile), round it as ``interpolation`` says, and interpolate
    between the values below and above it."""
    _quantile_checks(name, self, q, interpolation)
    # PyTorch reads q only on the CPU (elsewhere an asynchronous assert; Meta has no values)
    in_range = aten.all.default(aten.logical_and.default(q >= 0, q <= 1))
    if q.device.type != "meta" and not in_range.item():
        raise RuntimeError(f"aten::{name}: quantile() q values must be in the range [0, 1]")
    ndim = self.ndim
    if dim is None:
        x = aten.reshape.default(self, [-1])
    else:
        dim = _wrap_dim(dim, ndim)
        x = aten.movedim.int(self, dim, -1) if ndim else aten.reshape.default(self, [1])
    s = aten.sort.default(x, -1)[0]
    rest, n = list(s.shape[:-1]), s.shape[-1]
    qs = aten.reshape.default(q, [-1])
    k = qs.shape[0]
    last = n - 1
    if ignore_nan:
        valid = aten.sum.dim_IntList(aten.logical_not.default(aten.isnan.default(s)), [-1], True)
        ranks = aten.mul.Tensor(qs, aten.sub.Scalar(valid, 1))
        ranks = aten.masked_fill.Scalar(ranks, ranks < 0, 0)
    else:
        ranks = aten.expand.default(aten.mul.Scalar(qs, last), [*rest, k])
        has_nan = aten.any.dim(aten.isnan.default(s), -1, True)
        ranks = aten.masked_fill.Scalar(ranks, has_nan, last)
    if interpolation == "lower":
        ranks = aten.floor.default(ranks)
    elif interpolation == "higher":
        ranks = aten.ceil.default(ranks)
    elif interpolation == "nearest":
        ranks = aten.round.default(ranks)
    below = aten._to_copy.default(ranks, dtype=_dt.int64)
    values = aten.gather.default(s, -1, below)
    if interpolation in ("linear", "midpoint"):
        weights = (
            aten.full_like.default(ranks, 0.5)
            if interpolation == "midpoint"
            else aten.sub.Tensor(ranks, below)
        )
        above = aten._to_copy.default(aten.ceil.default(ranks), dtype=_dt.int64)
        values = aten.lerp.Tensor(values, aten.gather.default(s, -1, above), weights)
    values = aten.movedim.int(values, -1, 0)  # (k, *rest): the quantiles first
    if keepdim:
        if dim is None:
            values = aten.reshape.default(values, [k] + [1] * ndim)
        elif ndim:
            values = aten.unsqueeze.default(values, dim + 1)
    return aten.select.int(values, 0, 0) if q.ndim == 0 else values


def _scalar_q(name: str, self: Any, q: float) -> Any:
    if not 0 <= q <= 1:
        raise RuntimeError(f"aten::{name}: quantile() q must be in the range [0, 1] but got {q}")
    return aten.full.default([], q, dtype=self.dtype, device=self.device)


def quantile(
    self: Any, q: Any, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Any:
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def quantile_scalar(
    self: Any, q: float, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Any:
    qt = _scalar_q("quantile.scalar", self, q)
    return _quantile("quantile.scalar", self, qt, dim, keepdim, interpolation, False)


def nanquantile(
    self: Any, q: Any, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Any:
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def nanquantile_scalar(
    self: Any, q: float, dim: Any = None, keepdim: bool = False, *, interpolation: str = "linear"
) -> Any:
    qt = _scalar_q("nanquantile.scalar", self, q)
    return _quantile("nanquantile.scalar", self, qt, dim, keepdim, interpolation, True)


def dist(self: Any, other: Any, p: Any = 2) -> Any:
    """The p-norm of the difference (PyTorch's dist is norm(self - other, p))."""
    d = _dt.result_type(self, other)
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            "aten::dist: norm(): input dtype should be either floating point or complex. "
            f"Got {torch_name(d)} instead."
        )
    return aten.norm.Scalar(aten.sub.Tensor(self, other), p)


def renorm(self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to it (by
    ``maxnorm / (norm + 1e-7)``, PyTorch's factor); differentiating through the norm gives
    PyTorch's renorm_backward."""
    if isinstance(p, complex):
        raise RuntimeError("aten::renorm: renorm: p must be real-valued")
    if not p > 0:
        raise RuntimeError("aten::renorm: renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("aten::renorm: renorm: maxnorm must be real-valued")
    if not maxnorm >= 0:
        raise RuntimeError(
            f"aten::renorm: renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}"
        )
    if self.ndim <= 1:
        raise RuntimeError(
            f"aten::renorm: renorm: input needs at least 2 dimensions, got {self.ndim} dimensions"
        )
    dim = _wrap_dim(dim, self.ndim)
    others = [d for d in range(self.ndim) if d != dim]
    low = self.dtype in (_dt.float16, _dt.bfloat16)
    acc = _dt.float32 if low else None
    norm = aten.linalg_vector_norm.default(self, p, others, True, dtype=acc)
    factor = aten.where.ScalarOther(
        norm > maxnorm, aten.div.Tensor(aten.full_like.default(norm, maxnorm), norm + 1e-7), 1.0
    )
    r = aten.mul.Tensor(self, factor)
    return aten._to_copy.default(r, dtype=self.dtype) if r.dtype is not self.dtype else r


def renorm_(self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    # the norm is taken of a copy: the graph keeps the old values that self's write replaces
    return aten.copy_.default(self, renorm(aten.clone.default(self), p, dim, maxnorm))
