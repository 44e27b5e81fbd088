"""Formulas of the reductions, scans and sorting (Note [Formula table])."""

from __future__ import annotations

import math
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    OUTPUT_DIFFERENTIABILITY,
    Shape,
    _cj,
    _count,
    _reduced_dims,
    _restore_reduced,
    _sum_backward,
    _where_zero,
    _zeros,
    defderiv,
    nondifferentiable,
)

# --- reductions ----------------------------------------------------------------------------------


def _mean_backward(g: Tensor, shape: Shape, dim: Any, keepdim: bool) -> Tensor:
    n = _count(shape, _reduced_dims(dim, len(shape)))
    return _sum_backward(g / n if n else g, shape, dim, keepdim)


def _var_backward(g: Tensor, x: Tensor, dim: Any, correction: Any, keepdim: bool) -> Tensor:
    dims = _reduced_dims(dim, x.ndim)
    denom = _count(x.shape, dims) - (1 if correction is None else correction)
    # 2 / 0 is inf in PyTorch's C++ (the forward gives inf/nan there too)
    factor = 2.0 / denom if denom != 0 else math.inf
    centered = x - x.mean(dims, True)
    return _restore_reduced(g, x.ndim, dim, keepdim) * (centered * factor)


def _std_backward(
    g: Tensor, x: Tensor, result: Tensor, dim: Any, correction: Any, keepdim: bool
) -> Tensor:
    """var's gradient times d sqrt(v) / dv = 1 / (2 std), taken as 0 where the std is 0 (a
    constant slice), as PyTorch's std_backward, where sqrt's infinite slope would give NaN."""
    zero = result == 0
    return _var_backward(
        _where_zero(zero.logical_not(), g / (result * 2).masked_fill(zero, 1)),
        x,
        dim,
        correction,
        keepdim,
    )


def _exclusive_products(x: Tensor, dim: int) -> Tensor:
    """``prod(x_j for j != i)`` along ``dim`` for every ``i``, zeros included.

    Exclusive prefix and suffix products by log-step scans (the op set has no cumprod): a
    polynomial in ``x``, so its derivatives of every order are right at zeros too, where
    ``result / x`` is not.
    """
    n = x.shape[dim]

    def shifted(t: Tensor, k: int, forward: bool) -> Tensor:  # moved k places, ones filled in
        ones = x.new_ones([*x.shape[:dim], k, *x.shape[dim + 1 :]])
        if forward:
            return tp.cat([ones, tp.slice(t, dim, 0, n - k)], dim)
        return tp.cat([tp.slice(t, dim, k, n), ones], dim)

    before, after = shifted(x, 1, True), shifted(x, 1, False)
    k = 1
    while k < n:
        before = before * shifted(before, k, True)
        after = after * shifted(after, k, False)
        k *= 2
    return before * after


def _prod_backward(g: Tensor, x: Tensor, result: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if x.ndim == 0:
        return g
    if dim is not None:
        dim %= x.ndim
        g = _restore_reduced(g, x.ndim, dim, keepdim)
        result = _restore_reduced(result, x.ndim, dim, keepdim)
    if not (x == 0).sum().item():  # the common case, as PyTorch (which syncs here too)
        return g * _cj(result / x)
    if dim is None:
        return g * _cj(_exclusive_products(x.reshape([-1]), 0).reshape(list(x.shape)))
    return g * _cj(_exclusive_products(x, dim))


def _evenly_distribute(g: Tensor, x: Tensor, result: Tensor) -> Tensor:
    """max()/min(): the gradient shared evenly by the elements equal to the result."""
    mask = (x == result).logical_or((x != x).logical_and(result != result))  # NaN picks NaNs
    return mask * (g / mask.sum())


def _amax_backward(g: Tensor, x: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    """amax/amin: the gradient shared evenly by the ties of each reduced slice."""
    dims = _reduced_dims(dim, x.ndim)
    mask = x == _restore_reduced(result, x.ndim, dims, keepdim)
    g = _restore_reduced(g, x.ndim, dims, keepdim)
    return g / mask.sum(dims or None, True) * mask


def _value_selecting_backward(
    g: Tensor, shape: Shape, dim: int, indices: Tensor, keepdim: bool
) -> Tensor:
    """max.dim/min.dim: the gradient goes to the selected index of each slice."""
    if not shape:
        return g
    dim %= len(shape)
    if not keepdim:
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    return _zeros(g, shape).scatter_add(dim, indices, g)


def _logsumexp_backward(g: Tensor, x: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    g = _restore_reduced(g, x.ndim, dim, keepdim)
    return g * (x - _restore_reduced(result, x.ndim, dim, keepdim)).exp()


defderiv("sum", self=lambda g, s: g.expand(list(s.self_shape)))
defderiv(
    "sum.dim_IntList",
    self=lambda g, s: _sum_backward(g, s.self_shape, s.dim, s.keepdim),
)
defderiv("mean", self=lambda g, s: _mean_backward(g, s.self_shape, None, False))
defderiv("mean.dim", self=lambda g, s: _mean_backward(g, s.self_shape, s.dim, s.keepdim))
defderiv(
    "var.correction",
    self=lambda g, s: _var_backward(g, s.self, s.dim, s.correction, s.keepdim),
)
defderiv(
    "std.correction",
    self=lambda g, s: _std_backward(g, s.self, s.result, s.dim, s.correction, s.keepdim),
)
defderiv("prod", self=lambda g, s: _prod_backward(g, s.self, s.result, None, False))
defderiv(
    "prod.dim_int",
    self=lambda g, s: _prod_backward(g, s.self, s.result, s.dim, s.keepdim),
)
defderiv("amax", self=lambda g, s: _amax_backward(g, s.self, s.result, s.dim, s.keepdim))
defderiv("amin", self=lambda g, s: _amax_backward(g, s.self, s.result, s.dim, s.keepdim))
defderiv(
    "aminmax",
    self=lambda g, s: (
        _amax_backward(g[0], s.self, s.result[0], s.dim, s.keepdim)
        + _amax_backward(g[1], s.self, s.result[1], s.dim, s.keepdim)
    ),
)
defderiv("max", self=lambda g, s: _evenly_distribute(g, s.self, s.result))
defderiv("min", self=lambda g, s: _evenly_distribute(g, s.self, s.result))
defderiv(
    "max.dim",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
defderiv(
    "min.dim",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
OUTPUT_DIFFERENTIABILITY["max.dim"] = (True, False)
OUTPUT_DIFFERENTIABILITY["min.dim"] = (True, False)
nondifferentiable("argmax", "argmin")
# indices: PyTorch records no derivative for these outputs
nondifferentiable(
    "searchsorted.Tensor",
    "searchsorted.Scalar",
    "bucketize.Tensor",
    "bucketize.Scalar",
    "_unique2",
    "unique_dim",
)
defderiv(
    "logsumexp",
    self=lambda g, s: _logsumexp_backward(g, s.self, s.result, s.dim, s.keepdim),
)


# --- statistics: nanmedian, mode, logcumsumexp (derivatives.yaml's formulas) ----------------------


def _logcumsumexp_backward(g: Tensor, x: Tensor, result: Tensor, dim: int) -> Tensor:
    """PyTorch's logcumsumexp_backward: sum over i >= j of g_i * exp(x_j - result_i), its
    positive and negative parts each a reversed logcumsumexp (no overflow)."""
    if g.ndim == 0 or g.numel() == 0:
        return g
    if g.dtype.is_complex:  # holomorphic: sum over i >= j of g_i * conj(exp(x_j - result_i))
        return _cj(x.exp()) * _reverse_cumsum(g * _cj((-result).exp()), dim)
    lowest = tp.dtypes.finfo(g.dtype).min

    def reversed_lcse(t: Tensor) -> Tensor:
        return t.flip([dim]).logcumsumexp(dim).flip([dim])

    log_abs = g.abs().log()
    positive = tp.where(g > 0, log_abs, lowest)
    negative = tp.where(g < 0, log_abs, lowest)
    return (reversed_lcse(positive - result) + x).exp() - (
        reversed_lcse(negative - result) + x
    ).exp()


defderiv("nanmedian", self=lambda g, s: _evenly_distribute(g, s.self, s.result))
defderiv(
    "nanmedian.dim",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
OUTPUT_DIFFERENTIABILITY["nanmedian.dim"] = (True, False)
defderiv(
    "mode",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
OUTPUT_DIFFERENTIABILITY["mode"] = (True, False)
defderiv(
    "logcumsumexp",
    self=lambda g, s: _logcumsumexp_backward(g, s.self, s.result, s.dim),
)

# --- reductions: median, scans, sorting (derivatives.yaml's formulas) ----------------------------


def _cummaxmin_backward(g: Tensor, shape: Any, dim: int, indices: Tensor) -> Tensor:
    if not shape or not g.numel():
        return g
    return _zeros(g, shape).scatter_add(dim, indices, g)


def _reverse_cumsum(g: Tensor, dim: int) -> Tensor:
    """``sum_{j >= i} g_j`` along ``dim`` (the op set has no flip)."""
    return g.sum([dim], True) - g.cumsum(dim) + g


def _cumprod_backward(g: Tensor, x: Tensor, result: Tensor, dim: int) -> Tensor:
    if x.ndim == 0 or x.numel() == 0:
        return g
    dim %= x.ndim
    if not (x == 0).sum().item():  # the common case, as PyTorch's cumprod_backward
        return _reverse_cumsum(g * _cj(result), dim) / _cj(x)
    # with zeros: d result_j / d x_i = prod_{k <= j, k != i} x_k for j >= i, as the cumprod
    # of rows i of x with x_i set to 1 (a polynomial, so higher derivatives hold at zeros)
    n = x.shape[dim]
    xt, gt = x.transpose(dim, -1), g.transpose(dim, -1)
    eye = tp.eye(n, dtype=tp.bool, device=x.device)
    rows = tp.where(eye, 1.0, xt.unsqueeze(-2).expand([*xt.shape[:-1], n, n]))
    pos = tp.arange(n, device=x.device)
    upper = pos.unsqueeze(-1) <= pos  # j >= i
    grad = (_cj(rows.cumprod(-1)) * gt.unsqueeze(-2)).masked_fill(upper.logical_not(), 0).sum([-1])
    return grad.transpose(dim, -1)


defderiv("median", self=lambda g, s: _evenly_distribute(g, s.self, s.result))
defderiv(
    "median.dim",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
defderiv(
    "sort",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], True),
)
defderiv(
    "sort.stable",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], True),
)
defderiv(
    "topk",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], True),
)
defderiv(
    "kthvalue",
    self=lambda g, s: _value_selecting_backward(g[0], s.self_shape, s.dim, s.result[1], s.keepdim),
)
# cummaxmin_backward: each gradient goes to the index its running extreme came from
defderiv("cummax", self=lambda g, s: _cummaxmin_backward(g[0], s.self_shape, s.dim, s.result[1]))
defderiv("cummin", self=lambda g, s: _cummaxmin_backward(g[0], s.self_shape, s.dim, s.result[1]))
for _name in ("median.dim", "sort", "sort.stable", "topk", "kthvalue", "cummax", "cummin"):
    OUTPUT_DIFFERENTIABILITY[_name] = (True, False)
nondifferentiable(
    "any",
    "any.dim",
    "any.dims",
    "all",
    "all.dim",
    "all.dims",
    "count_nonzero",
    "count_nonzero.dim_IntList",
    "allclose",
    "equal",
)
defderiv(
    "cumsum",
    self=lambda g, s: g if not s.self_shape else _reverse_cumsum(g, s.dim % len(s.self_shape)),
)
defderiv("cumprod", self=lambda g, s: _cumprod_backward(g, s.self, s.result, s.dim))

# --- closeness (isclose is built with allclose and equal, docs/extending.md) ------------------

# counts, membership masks and runs of values (issue 29): PyTorch records no derivative
nondifferentiable(
    "bincount",
    "histc",
    "histogram.bins_tensor",
    "histogram.bin_ct",
    "isin.Tensor_Tensor",
    "isin.Tensor_Scalar",
    "isin.Scalar_Tensor",
    "unique_consecutive",
    "_histogramdd_bin_edges",
    "_histogramdd_from_bin_tensors",
)
nondifferentiable("isclose")  # a closeness mask
