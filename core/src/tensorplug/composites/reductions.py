"""The ``reductions`` family of the composites: statistics, norms and argsort (sorting is a
reduction here, as in the kit) written with var, std, linalg_vector_norm and sort."""

from __future__ import annotations

import warnings
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


# --- integrals, gradients and covariance (issue 29) --------------------------------------------


def _sample_dim(y: Any, dim: int, overload: str) -> int:
    if y.ndim == 0:
        raise IndexError(
            f"aten::{overload}: Dimension specified as {dim} but tensor has no dimensions"
        )
    return _wrap_dim(dim, y.ndim, overload)


def _no_bool(name: str, *xs: Any) -> None:
    if any(x.dtype is _dt.bool for x in xs):
        what = "`x` or `y`" if len(xs) > 1 else "`y`"
        raise RuntimeError(
            f"aten::{name}: {name.split('.')[0]}: received a bool input for {what}, but bool is "
            "not supported"
        )


def _spacings(name: str, y: Any, x: Any, d: int) -> Any:
    """The steps of the sample points ``x`` along ``d`` of ``y``: a 1-d ``x`` lies along ``d``,
    a lower-rank one is padded on the left (PyTorch's trapezoid)."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(
                f"aten::{name}: {name.split('.')[0]}: There must be one `x` value for each "
                "sample point"
            )
        sizes = [1] * y.ndim
        sizes[d] = x.shape[0]
        x = aten.reshape.default(x, sizes)
    elif x.ndim < y.ndim:
        x = aten.reshape.default(x, [1] * (y.ndim - x.ndim) + list(x.shape))
    return aten.sub.Tensor(aten.slice.Tensor(x, d, 1), aten.slice.Tensor(x, d, 0, -1))


def _pair_sums(y: Any, d: int) -> Any:
    return aten.add.Tensor(aten.slice.Tensor(y, d, 1), aten.slice.Tensor(y, d, 0, -1))


def _empty_integral(y: Any, d: int) -> Any:
    shape = [n for i, n in enumerate(y.shape) if i != d]
    return aten.zeros.default(shape, dtype=y.dtype, device=y.device)


def trapezoid_x(y: Any, x: Any, *, dim: int = -1) -> Any:
    d = _sample_dim(y, dim, "trapezoid.x")
    if y.shape[d] == 0:
        return _empty_integral(y, d)
    _no_bool("trapezoid.x", x, y)
    dx = _spacings("trapezoid.x", y, x, d)
    return aten.div.Scalar(aten.sum.dim_IntList(aten.mul.Tensor(dx, _pair_sums(y, d)), [d]), 2.0)


def trapezoid_dx(y: Any, *, dx: Any = 1, dim: int = -1) -> Any:
    d = _sample_dim(y, dim, "trapezoid.dx")
    if y.shape[d] == 0:
        return _empty_integral(y, d)
    _no_bool("trapezoid.dx", y)
    ends = aten.add.Tensor(aten.select.int(y, d, 0), aten.select.int(y, d, -1))
    inner = aten.sub.Tensor(aten.sum.dim_IntList(y, [d]), aten.mul.Scalar(ends, 0.5))
    return aten.mul.Scalar(inner, dx)


def trapz_x(y: Any, x: Any, *, dim: int = -1) -> Any:
    return trapezoid_x(y, x, dim=dim)


def trapz_dx(y: Any, *, dx: float = 1.0, dim: int = -1) -> Any:
    return trapezoid_dx(y, dx=dx, dim=dim)


def cumulative_trapezoid_x(y: Any, x: Any, *, dim: int = -1) -> Any:
    d = _sample_dim(y, dim, "cumulative_trapezoid.x")
    _no_bool("cumulative_trapezoid.x", x, y)
    dx = aten.div.Scalar(_spacings("cumulative_trapezoid.x", y, x, d), 2.0)
    return aten.cumsum.default(aten.mul.Tensor(dx, _pair_sums(y, d)), d)


def cumulative_trapezoid_dx(y: Any, *, dx: Any = 1, dim: int = -1) -> Any:
    d = _sample_dim(y, dim, "cumulative_trapezoid.dx")
    _no_bool("cumulative_trapezoid.dx", y)
    return aten.cumsum.default(aten.mul.Scalar(_pair_sums(y, d), dx / 2.0), d)


# torch.gradient: one overload per form of spacing (a scalar, scalars, coordinate tensors) and
# of dim (one, a list, all); each gives the central differences inside and one-sided ones of
# ``edge_order`` at both ends, per dim.


def _gradient_dims(
    self: Any, dim: Any, n_spacing: int | None, edge_order: int, name: str
) -> list[int]:
    if edge_order not in (1, 2):
        raise RuntimeError(
            f"aten::{name}: torch.gradient only supports edge_order=1 and edge_order=2."
        )
    dims = list(range(self.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if n_spacing is not None and n_spacing != len(dims):
        raise RuntimeError(
            f"aten::{name}: torch.gradient expected spacing to be unspecified, a scalar or it's "
            f"spacing and dim arguments to have the same length, but got a spacing argument of "
            f"length {n_spacing} and a dim argument of length {len(dims)}."
        )
    wrapped = [_wrap_dim(x, self.ndim, name) for x in dims]
    for x in wrapped:
        if self.shape[x] < edge_order + 1:
            raise RuntimeError(
                f"aten::{name}: torch.gradient expected each dimension size to be at least "
                "edge_order+1"
            )
    return wrapped


def _gradient_uniform(self: Any, d: int, h: Any, edge_order: int) -> Any:
    def sl(a: int | None, b: int | None = None) -> Any:
        return aten.slice.Tensor(self, d, a, b)

    center = aten.div.Scalar(aten.div.Scalar(aten.sub.Tensor(sl(2), sl(0, -2)), h), 2)
    if edge_order == 1:
        first = aten.div.Scalar(aten.sub.Tensor(sl(1, 2), sl(0, 1)), h)
        last = aten.div.Scalar(aten.sub.Tensor(sl(-1), sl(-2, -1)), h)
    else:
        first = aten.div.Scalar(
            aten.sub.Tensor(
                aten.add.Tensor(aten.mul.Scalar(sl(0, 1), -1.5), aten.mul.Scalar(sl(1, 2), 2)),
                aten.mul.Scalar(sl(2, 3), 0.5),
            ),
            h,
        )
        last = aten.div.Scalar(
            aten.add.Tensor(
                aten.sub.Tensor(aten.mul.Scalar(sl(-3, -2), 0.5), aten.mul.Scalar(sl(-2, -1), 2)),
                aten.mul.Scalar(sl(-1), 1.5),
            ),
            h,
        )
    return aten.cat.default([first, center, last], d)


def _gradient_coordinates(self: Any, d: int, coords: Any, edge_order: int) -> Any:
    """numpy's second-order differences on uneven steps ``coords.diff()`` along ``d``."""

    def sl(a: int | None, b: int | None = None) -> Any:
        return aten.slice.Tensor(self, d, a, b)

    shape = [1] * self.ndim
    shape[d] = -1
    h = aten.sub.Tensor(aten.slice.Tensor(coords, 0, 1), aten.slice.Tensor(coords, 0, 0, -1))
    h1, h2 = aten.slice.Tensor(h, 0, 0, -1), aten.slice.Tensor(h, 0, 1)
    mul, add, sub, div = aten.mul.Tensor, aten.add.Tensor, aten.sub.Tensor, aten.div.Tensor
    s12 = add(h1, h2)
    a = aten.reshape.default(aten.neg.default(div(h2, mul(h1, s12))), shape)
    b = aten.reshape.default(div(sub(h2, h1), mul(h1, h2)), shape)
    c = aten.reshape.default(div(h1, mul(h2, s12)), shape)
    center = add(add(mul(a, sl(0, -2)), mul(b, sl(1, -1))), mul(c, sl(2)))

    def at(i: int) -> Any:
        return aten.select.int(h, 0, i)

    if edge_order == 1:
        first = div(sub(sl(1, 2), sl(0, 1)), at(0))
        last = div(sub(sl(-1), sl(-2, -1)), at(-1))
    else:
        d0, d1 = at(0), at(1)
        a0 = div(aten.neg.default(add(aten.mul.Scalar(d0, 2.0), d1)), mul(d0, add(d0, d1)))
        b0 = div(add(d0, d1), mul(d0, d1))
        c0 = div(aten.neg.default(d0), mul(d1, add(d0, d1)))
        first = add(add(mul(a0, sl(0, 1)), mul(b0, sl(1, 2))), mul(c0, sl(2, 3)))
        e1, e2 = at(-1), at(-2)
        a1 = div(e1, mul(e2, add(e1, e2)))
        b1 = div(aten.neg.default(add(e1, e2)), mul(e1, e2))
        c1 = div(add(aten.mul.Scalar(e1, 2.0), e2), mul(e1, add(e1, e2)))
        last = add(add(mul(a1, sl(-3, -2)), mul(b1, sl(-2, -1))), mul(c1, sl(-1)))
    return aten.cat.default([first, center, last], d)


def _gradient_scalars(self: Any, spacing: list[Any], dim: Any, edge_order: int, name: str) -> Any:
    dims = _gradient_dims(self, dim, len(spacing), edge_order, name)
    return [_gradient_uniform(self, d, h, edge_order) for d, h in zip(dims, spacing, strict=True)]


def gradient_scalarint(
    self: Any, *, spacing: Any = None, dim: int | None = None, edge_order: int = 1
) -> Any:
    dims = _gradient_dims(self, dim, None, edge_order, "gradient.scalarint")
    h = 1.0 if spacing is None else spacing
    return [_gradient_uniform(self, d, h, edge_order) for d in dims]


def gradient_scalararray(self: Any, *, spacing: Any, dim: Any, edge_order: int = 1) -> Any:
    dims = _gradient_dims(self, dim, None, edge_order, "gradient.scalararray")
    return [_gradient_uniform(self, d, spacing, edge_order) for d in dims]


def gradient_array(self: Any, *, dim: Any, edge_order: int = 1) -> Any:
    return gradient_scalararray(self, spacing=1.0, dim=dim, edge_order=edge_order)


def gradient_scalarrayint(
    self: Any, *, spacing: Any, dim: int | None = None, edge_order: int = 1
) -> Any:
    return _gradient_scalars(self, list(spacing), dim, edge_order, "gradient.scalarrayint")


def gradient_scalarrayarray(self: Any, *, spacing: Any, dim: Any, edge_order: int = 1) -> Any:
    return _gradient_scalars(self, list(spacing), dim, edge_order, "gradient.scalarrayarray")


def _gradient_tensors(self: Any, spacing: Any, dim: Any, edge_order: int, name: str) -> Any:
    dims = _gradient_dims(self, dim, len(spacing), edge_order, name)
    out = []
    for d, h in zip(dims, spacing, strict=True):
        if h.ndim == 0:  # a 0-d tensor is a uniform step
            out.append(_gradient_uniform(self, d, h.item(), edge_order))
        else:
            out.append(_gradient_coordinates(self, d, h, edge_order))
    return out


def gradient_tensorarrayint(
    self: Any, *, spacing: Any, dim: int | None = None, edge_order: int = 1
) -> Any:
    return _gradient_tensors(self, spacing, dim, edge_order, "gradient.tensorarrayint")


def gradient_tensorarray(self: Any, *, spacing: Any, dim: Any, edge_order: int = 1) -> Any:
    return _gradient_tensors(self, spacing, dim, edge_order, "gradient.tensorarray")


def _check_weights(name: str, w: Any, n: int, integral: bool) -> None:
    what = "fweights" if integral else "aweights"
    if w.ndim > 1:
        raise RuntimeError(
            f"aten::cov: cov(): expected {what} to have one or fewer dimensions but got {what} "
            f"with {w.ndim} dimensions"
        )
    ok = (
        (not w.dtype.is_floating_point and not w.dtype.is_complex and w.dtype is not _dt.bool)
        if integral
        else w.dtype.is_floating_point
    )
    if not ok:
        kind = "integral" if integral else "floating point"
        raise RuntimeError(
            f"aten::cov: cov(): expected {what} to have {kind} dtype but got {what} with "
            f"{torch_name(w.dtype)} dtype"
        )
    if w.numel() != n:
        raise RuntimeError(
            f"aten::cov: cov(): expected {what} to have the same numel as there are observations "
            f"in the input but got {w.numel()} != {n}"
        )
    if n and bool(aten.lt.Scalar(aten.min.default(w), 0).item()):
        raise RuntimeError(f"aten::cov: cov(): {what} cannot be negative")


def cov(self: Any, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    """The covariance of the variables (rows) over the observations (columns), weighted by
    frequencies and importances, as PyTorch's: a weighted mean, then one matrix product."""
    if self.ndim > 2:
        raise RuntimeError(
            "aten::cov: cov(): expected input to have two or fewer dimensions but got an input "
            f"with {self.ndim} dimensions"
        )
    if self.dtype is _dt.bool:
        raise RuntimeError("aten::cov: cov(): bool dtype is not supported for input")
    x = self if self.ndim == 2 else aten.reshape.default(self, [1, -1])
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("cov", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("cov", aweights, n, False)
        w = aweights if w is None else aten.mul.Tensor(w, aweights)
    if w is None:
        w_sum: Any = n
        avg = aten.div.Scalar(aten.sum.dim_IntList(x, [1]), n)
    else:
        w_sum = aten.sum.default(w)
        if not bool(aten.ne.Scalar(w_sum, 0).item()):
            raise RuntimeError("aten::cov: cov(): weights sum to zero, can't be normalized")
        avg = aten.div.Tensor(aten.sum.dim_IntList(aten.mul.Tensor(x, w), [1]), w_sum)
    if w is not None and aweights is not None and correction != 0:
        spread = aten.div.Tensor(aten.sum.default(aten.mul.Tensor(w, aweights)), w_sum)
        norm: Any = aten.sub.Tensor(w_sum, aten.mul.Scalar(spread, correction))
    else:
        norm = w_sum - correction if w is None else aten.sub.Scalar(w_sum, correction)
    low = norm <= 0 if w is None else bool(aten.le.Scalar(norm, 0).item())
    if low:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = 0 if w is None else aten.mul.Scalar(norm, 0)
    xm = aten.sub.Tensor(x, aten.unsqueeze.default(avg, 1))
    right = xm if w is None else aten.mul.Tensor(xm, w)
    right = aten.transpose.int(right, 0, 1)
    if right.dtype.is_complex:
        right = aten.conj.default(right)
    c = aten.mm.default(xm, right)
    c = aten.div.Scalar(c, norm) if w is None else aten.div.Tensor(c, norm)
    return aten.squeeze.default(c)


def corrcoef(self: Any) -> Any:
    if self.ndim > 2:
        raise RuntimeError(
            "aten::corrcoef: corrcoef(): expected input to have two or fewer dimensions but got "
            f"an input with {self.ndim} dimensions"
        )
    c = cov(self)
    if c.ndim == 0:
        return aten.div.Tensor(c, c)
    std = aten.sqrt.default(aten.diagonal.default(c))
    c = aten.div.Tensor(c, aten.reshape.default(std, [-1, 1]))
    c = aten.div.Tensor(c, aten.reshape.default(std, [1, -1]))
    return aten.clamp.default(c, -1, 1)


# --- histogramdd (issue 29): edges, then counts, as PyTorch's composite ------------------------


def histogramdd(
    self: Any, bins: Any, range: Any = None, weight: Any = None, density: bool = False
) -> Any:
    edges = aten._histogramdd_bin_edges.default(
        self, list(bins), range=range, weight=weight, density=density
    )
    hist = aten._histogramdd_from_bin_tensors.default(self, edges, weight=weight, density=density)
    return hist, edges


def histogramdd_int_bins(
    self: Any, bins: int, range: Any = None, weight: Any = None, density: bool = False
) -> Any:
    n = self.shape[-1] if self.ndim else 1
    return histogramdd(self, [bins] * n, range, weight, density)


def histogramdd_tensorlist_bins(
    self: Any, bins: Any, range: Any = None, weight: Any = None, density: bool = False
) -> Any:
    hist = aten._histogramdd_from_bin_tensors.default(self, bins, weight=weight, density=density)
    return hist, list(bins)


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
