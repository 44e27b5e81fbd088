"""Formulas of pointwise, comparison, reduction and linear algebra ops (Note [Formula table])."""

from __future__ import annotations

import math
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    OUTPUT_DIFFERENTIABILITY,
    Shape,
    _aten,
    _count,
    _mm,
    _reduced_dims,
    _restore_reduced,
    _scale,
    _sum_backward,
    _sum_to,
    _t,
    _where_zero,
    _zeros,
    defderiv,
    nondifferentiable,
)

# --- pointwise binary arithmetic -----------------------------------------------------------------

defderiv(
    "add.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: _scale(g, s.alpha),
)
defderiv("add.Scalar", self=lambda g, s: g)
defderiv(
    "sub.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: -g if s.alpha == 1 else g * -s.alpha,
)
defderiv("sub.Scalar", self=lambda g, s: g)
defderiv("rsub.Scalar", self=lambda g, s: -g if s.alpha == 1 else g * -s.alpha)
defderiv(
    "mul.Tensor",
    self=lambda g, s: g * s.other,
    other=lambda g, s: g * s.self,
)
defderiv("mul.Scalar", self=lambda g, s: g * s.other)


def _div_other(g: Tensor, self: Tensor, other: Tensor) -> Tensor:
    # PyTorch's order, -g * ((self / other) / other), is the stable one for higher derivatives
    return -g * ((self / other) / other)


defderiv(
    "div.Tensor",
    self=lambda g, s: g / s.other,
    other=lambda g, s: _div_other(g, s.self, s.other),
)
defderiv("div.Scalar", self=lambda g, s: g / s.other)
# a rounding division is piecewise constant: zero gradient, as PyTorch (Note [Zero gradients])
defderiv(
    "div.Tensor_mode",
    self=lambda g, s: g / s.other if s.rounding_mode is None else _zeros(g, s.self_shape),
    other=lambda g, s: (
        _div_other(g, s.self, s.other) if s.rounding_mode is None else _zeros(g, s.other_shape)
    ),
)
defderiv("rdiv.Scalar", self=lambda g, s: _div_other(g, s.other, s.self))  # other / self
defderiv(
    "remainder.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: -g * s.self.div(s.other, rounding_mode="floor"),
)
defderiv("remainder.Scalar", self=lambda g, s: g)
defderiv(
    "fmod.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: -g * s.self.div(s.other, rounding_mode="trunc"),
)
defderiv("fmod.Scalar", self=lambda g, s: g)
nondifferentiable("floor_divide", "floor_divide.Scalar")


def _pow_self_scalar(g: Tensor, self: Tensor, exponent: Any) -> Tensor:
    if exponent == 0:
        return _zeros(g, self.shape)
    if exponent == 2:
        return g * (self * 2)
    return g * (self.pow(exponent - 1) * exponent)


def _pow_self(g: Tensor, self: Tensor, exponent: Tensor) -> Tensor:
    return _where_zero(exponent != 0, g * (exponent * self.pow(exponent - 1)))


def _pow_exponent(g: Tensor, self: Tensor, exponent: Tensor, result: Tensor) -> Tensor:
    # 0 ** e has derivative 0 in e for e >= 0 (PyTorch's pow_backward_exponent)
    return g * _where_zero((self != 0).logical_or(exponent < 0), result * self.log())


def _scalar_log(x: float) -> float:
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _pow_scalar_exponent(g: Tensor, base: Any, exponent: Tensor, result: Tensor) -> Tensor:
    if base == 0:
        return g * _where_zero(exponent < 0, result * -math.inf)
    return g * (result * _scalar_log(base))


defderiv("pow.Tensor_Scalar", self=lambda g, s: _pow_self_scalar(g, s.self, s.exponent))
defderiv(
    "pow.Tensor_Tensor",
    self=lambda g, s: _pow_self(g, s.self, s.exponent),
    exponent=lambda g, s: _pow_exponent(g, s.self, s.exponent, s.result),
)
defderiv("pow.Scalar", exponent=lambda g, s: _pow_scalar_exponent(g, s.self, s.exponent, s.result))


def _addcdiv_tensor2(g: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any) -> Tensor:
    # -g * value * tensor1 / tensor2^2, dividing twice as div's formula does
    return -_scale(g, value) * ((tensor1 / tensor2) / tensor2)


def _maximum_backward(g: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """d max(x, y) / dx: ``g`` where x wins, ``g / 2`` on ties (as PyTorch), else 0."""
    return tp.where(x == y, g / 2, g).masked_fill(x < y, 0)


def _minimum_backward(g: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return tp.where(x == y, g / 2, g).masked_fill(x > y, 0)


defderiv(
    "maximum",
    self=lambda g, s: _maximum_backward(g, s.self, s.other),
    other=lambda g, s: _maximum_backward(g, s.other, s.self),
)
defderiv(
    "minimum",
    self=lambda g, s: _minimum_backward(g, s.self, s.other),
    other=lambda g, s: _minimum_backward(g, s.other, s.self),
)


def _fmax_self(g: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """fmax's choice, as PyTorch's formula: ``x`` where ``x >= y`` or ``y`` is NaN (ties
    go to self, unlike maximum); fmin's with ``x <= y``, ``less`` set."""
    return _where_zero((x >= y).logical_or(y.isnan()), g)


def _fmin_self(g: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return _where_zero((x <= y).logical_or(y.isnan()), g)


defderiv(
    "fmax",
    self=lambda g, s: _fmax_self(g, s.self, s.other),
    other=lambda g, s: g.masked_fill((s.self >= s.other).logical_or(s.other.isnan()), 0),
)
defderiv(
    "fmin",
    self=lambda g, s: _fmin_self(g, s.self, s.other),
    other=lambda g, s: g.masked_fill((s.self <= s.other).logical_or(s.other.isnan()), 0),
)


def _atan2_recip(self: Tensor, other: Tensor) -> Tensor:
    return (self * self + other * other).reciprocal()


defderiv(
    "atan2",
    self=lambda g, s: g * (s.other * _atan2_recip(s.self, s.other)),
    other=lambda g, s: g * (-s.self * _atan2_recip(s.self, s.other)),
)
defderiv(
    "hypot",
    self=lambda g, s: g * s.self / s.result,
    other=lambda g, s: g * s.other / s.result,
)
defderiv(
    "lerp.Scalar",
    self=lambda g, s: g * (1 - s.weight),
    end=lambda g, s: g * s.weight,
)
defderiv(
    "lerp.Tensor",
    self=lambda g, s: g * (1 - s.weight),
    end=lambda g, s: g * s.weight,
    weight=lambda g, s: g * (s.end - s.self),
)
defderiv(
    "addcmul",
    self=lambda g, s: g,
    tensor1=lambda g, s: _scale(g * s.tensor2, s.value),
    tensor2=lambda g, s: _scale(g * s.tensor1, s.value),
)
defderiv(
    "addcdiv",
    self=lambda g, s: g,
    tensor1=lambda g, s: _scale(g, s.value) / s.tensor2,
    tensor2=lambda g, s: _addcdiv_tensor2(g, s.tensor1, s.tensor2, s.value),
)

# --- pointwise unary -----------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = 0.044715
_LN2 = math.log(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LN10 = math.log(10.0)


def _gelu_backward(g: Tensor, x: Tensor, result: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        x2 = x * x
        t = tp.tanh((x + x2 * x * _GELU_C) * _SQRT_2_OVER_PI)
        d_inner = (1 - t * t) * ((x2 * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI)
        return g * ((t + 1) * 0.5 + x * 0.5 * d_inner)
    # exact: d/dx x*Phi(x) = Phi(x) + x*phi(x). The op set has no erf, so Phi(x) is read off the
    # result (result / x); at x = 0 it is 1/2 + x*phi(0), right in value and slope, so second
    # derivatives hold there too. phi(x) = exp(-x^2/2) / sqrt(2 pi).
    is_zero = x == 0
    cdf = tp.where(is_zero, x * _INV_SQRT_2PI + 0.5, result / tp.where(is_zero, 1.0, x))
    pdf = tp.exp(x * x * -0.5) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _logit_backward(g: Tensor, x: Tensor, eps: float | None) -> Tensor:
    """PyTorch's logit_backward: ``g / (x (1 - x))``; NaN outside [0, 1] without eps, and 0
    where eps clamped ``x`` (outside [eps, 1 - eps])."""
    d = g / (x * (1 - x))
    if eps is None or eps < 0:
        return tp.where((x < 0).logical_or(x > 1), math.nan, d)
    return _where_zero((x >= eps).logical_and(x <= 1 - eps), d)


def _tanh_backward(g: Tensor, y: Tensor) -> Tensor:
    return g * (1 - y * y)


def _sigmoid_backward(g: Tensor, y: Tensor) -> Tensor:
    return g * (y * (1 - y))


def _silu_backward(g: Tensor, x: Tensor) -> Tensor:
    sig = tp.sigmoid(x)
    return g * (sig * (x * (1 - sig) + 1))


defderiv("neg", self=lambda g, s: -g)
defderiv("abs", self=lambda g, s: g * s.self.sign())
defderiv("sign", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("sgn", self=lambda g, s: _zeros(g, s.self_shape))  # real: sign's (complex: no autograd)
defderiv("exp", self=lambda g, s: g * s.result)
defderiv("log", self=lambda g, s: g / s.self)
defderiv("log1p", self=lambda g, s: g / (s.self + 1))
defderiv("sqrt", self=lambda g, s: g / (s.result * 2))
defderiv("rsqrt", self=lambda g, s: g * (s.result.pow(3) * -0.5))
defderiv("sin", self=lambda g, s: g * s.self.cos())
defderiv("cos", self=lambda g, s: -g * s.self.sin())
defderiv("tan", self=lambda g, s: g * (s.result * s.result + 1))
defderiv("asin", self=lambda g, s: g * (-s.self * s.self + 1).rsqrt())
defderiv("acos", self=lambda g, s: g * -((-s.self * s.self + 1).rsqrt()))
defderiv("atan", self=lambda g, s: g / (s.self * s.self + 1))
defderiv("sinh", self=lambda g, s: g * s.self.cosh())
defderiv("cosh", self=lambda g, s: g * s.self.sinh())
defderiv("asinh", self=lambda g, s: g * (s.self * s.self + 1).rsqrt())
defderiv("acosh", self=lambda g, s: g * (s.self * s.self - 1).rsqrt())
defderiv("atanh", self=lambda g, s: g / (1 - s.self * s.self))
defderiv("tanh", self=lambda g, s: _tanh_backward(g, s.result))
defderiv("sigmoid", self=lambda g, s: _sigmoid_backward(g, s.result))
defderiv("logit", self=lambda g, s: _logit_backward(g, s.self, s.eps))
defderiv("relu", self=lambda g, s: _aten.threshold_backward.default(g, s.result, 0))
defderiv("gelu", self=lambda g, s: _gelu_backward(g, s.self, s.result, s.approximate))
defderiv("silu", self=lambda g, s: _silu_backward(g, s.self))
# rounding is piecewise constant: zero gradients, as PyTorch (Note [Zero gradients])
for _name in ("floor", "ceil", "trunc", "round", "round.decimals"):
    defderiv(_name, self=lambda g, s: _zeros(g, s.self_shape))
defderiv("frac", self=lambda g, s: g)
defderiv("square", self=lambda g, s: g * (s.self * 2))
defderiv("reciprocal", self=lambda g, s: -g * (s.result * s.result))
defderiv("log2", self=lambda g, s: g / (s.self * _LN2))
defderiv("log10", self=lambda g, s: g / (s.self * _LN10))
defderiv("exp2", self=lambda g, s: g * (s.result * _LN2))
defderiv("expm1", self=lambda g, s: g * (s.result + 1))
defderiv("erf", self=lambda g, s: g * (tp.exp(-(s.self * s.self)) * _TWO_OVER_SQRT_PI))
defderiv(
    "threshold_backward",
    grad_output=lambda g, s: tp.threshold_backward(g, s.self, s.threshold),
    self=lambda g, s: _zeros(g, s.self_shape),
)


def _clamp_self(g: Tensor, x: Tensor, lo: Any, hi: Any) -> Tensor:
    """The gradient passes where ``lo <= x <= hi`` (the subgradient 1 on the bounds)."""
    if lo is None and hi is None:
        return g
    if lo is None:
        return _where_zero(x <= hi, g)
    if hi is None:
        return _where_zero(x >= lo, g)
    return _where_zero((x >= lo).logical_and(x <= hi), g)


def _clamp_min(g: Tensor, x: Tensor, lo: Tensor, hi: Tensor | None) -> Tensor:
    below = x < lo
    return _where_zero(below if hi is None else below.logical_and(lo < hi), g)


def _clamp_max(g: Tensor, x: Tensor, lo: Tensor | None, hi: Tensor) -> Tensor:
    above = x > hi
    return _where_zero(above if lo is None else above.logical_or(hi < lo), g)


defderiv("clamp", self=lambda g, s: _clamp_self(g, s.self, s.min, s.max))
defderiv(
    "clamp.Tensor",
    self=lambda g, s: _clamp_self(g, s.self, s.min, s.max),
    min=lambda g, s: _clamp_min(g, s.self, s.min, s.max),
    max=lambda g, s: _clamp_max(g, s.self, s.min, s.max),
)
# NaN and infinities are replaced by constants: no gradient there
defderiv("nan_to_num", self=lambda g, s: g * s.self.isfinite())
defderiv("clamp_min", self=lambda g, s: _where_zero(s.self >= s.min, g))
defderiv(
    "clamp_min.Tensor",
    self=lambda g, s: _where_zero(s.self >= s.min, g),
    min=lambda g, s: _where_zero(s.self < s.min, g),
)
defderiv("clamp_max", self=lambda g, s: _where_zero(s.self <= s.max, g))
defderiv(
    "clamp_max.Tensor",
    self=lambda g, s: _where_zero(s.self <= s.max, g),
    max=lambda g, s: _where_zero(s.self > s.max, g),
)
defderiv(
    "where.self",
    self=lambda g, s: _where_zero(s.condition, g),
    other=lambda g, s: tp.where(s.condition, 0.0, g),
)
defderiv("where.ScalarOther", self=lambda g, s: _where_zero(s.condition, g))
defderiv("where.ScalarSelf", other=lambda g, s: tp.where(s.condition, 0.0, g))

# --- comparisons and logic -----------------------------------------------------------------------

nondifferentiable(
    *(
        f"{op}.{kind}"
        for op in ("eq", "ne", "lt", "le", "gt", "ge")
        for kind in ("Tensor", "Scalar")
    ),
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    # a step; PyTorch has no derivative for it (its backward raises "not implemented")
    "heaviside",
    "logical_and",
    "logical_or",
    "logical_not",
    "bitwise_not",
    "bitwise_and.Tensor",
    "bitwise_or.Tensor",
    "bitwise_xor.Tensor",
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
        return g * (result / x)
    if dim is None:
        return g * _exclusive_products(x.reshape([-1]), 0).reshape(list(x.shape))
    return g * _exclusive_products(x, dim)


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
# indices and a closeness mask: PyTorch records no derivative for these outputs
nondifferentiable(
    "searchsorted.Tensor",
    "searchsorted.Scalar",
    "bucketize.Tensor",
    "bucketize.Scalar",
    "isclose",
    "_unique2",
    "unique_dim",
)
defderiv(
    "logsumexp",
    self=lambda g, s: _logsumexp_backward(g, s.self, s.result, s.dim, s.keepdim),
)

# --- reductions: median, norms, scans, sorting (derivatives.yaml's formulas) ---------------------


def _vector_norm_backward(
    g: Tensor, x: Tensor, ord: Any, result: Tensor, dim: Any, keepdim: bool
) -> Tensor:
    """PyTorch's norm_backward: the subgradient 0 where the norm is 0, and for inf / -inf the
    gradient shared evenly by the elements whose magnitude is the norm."""
    p = float(ord)
    if p == 0:
        return _zeros(g, x.shape)
    dims = _reduced_dims(dim, x.ndim)
    g = _restore_reduced(g, x.ndim, dims, keepdim)
    norm = _restore_reduced(result, x.ndim, dims, keepdim)
    if p == 1:
        return x.sign() * g
    if p == 2:
        return g * (x / norm).masked_fill(norm == 0, 0)
    if math.isinf(p):
        mask = x.abs() == norm
        return x.sign() * (g / mask.sum(dims or None, True)) * mask
    if p < 1:  # |x|^(p-1) is infinite at 0, where the subgradient is 0
        scaled = x.sign() * x.abs().masked_fill(x == 0, 1).pow(p - 1)
        return scaled * g * norm.pow(1 - p)
    scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * (g / norm.pow(p - 1)).masked_fill(norm == 0, 0)


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
        return _reverse_cumsum(g * result, dim) / x
    # with zeros: d result_j / d x_i = prod_{k <= j, k != i} x_k for j >= i, as the cumprod
    # of rows i of x with x_i set to 1 (a polynomial, so higher derivatives hold at zeros)
    n = x.shape[dim]
    xt, gt = x.transpose(dim, -1), g.transpose(dim, -1)
    eye = tp.eye(n, dtype=tp.bool, device=x.device)
    rows = tp.where(eye, 1.0, xt.unsqueeze(-2).expand([*xt.shape[:-1], n, n]))
    pos = tp.arange(n, device=x.device)
    upper = pos.unsqueeze(-1) <= pos  # j >= i
    grad = (rows.cumprod(-1) * gt.unsqueeze(-2)).masked_fill(upper.logical_not(), 0).sum([-1])
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
    "linalg_vector_norm",
    self=lambda g, s: _vector_norm_backward(g, s.self, s.ord, s.result, s.dim, s.keepdim),
)
defderiv(
    "cumsum",
    self=lambda g, s: g if not s.self_shape else _reverse_cumsum(g, s.dim % len(s.self_shape)),
)
defderiv("cumprod", self=lambda g, s: _cumprod_backward(g, s.self, s.result, s.dim))


defderiv(
    "softmax.int",
    self=lambda g, s: _aten._softmax_backward_data.default(g, s.result, s.dim, s.self_dtype),
)
defderiv(
    "log_softmax.int",
    self=lambda g, s: _aten._log_softmax_backward_data.default(g, s.result, s.dim, s.self_dtype),
)


def _softmax_backward_output(g: Tensor, gg: Tensor, y: Tensor, dim: int) -> Tensor:
    # d/dy of y * (g - sum(g * y)), applied to gg
    return gg * (g - (g * y).sum([dim], True)) - g * (gg * y).sum([dim], True)


defderiv(
    "_softmax_backward_data",
    grad_output=lambda g, s: _aten._softmax_backward_data.default(
        g, s.output, s.dim, s.input_dtype
    ),
    output=lambda g, s: _softmax_backward_output(s.grad_output, g, s.output, s.dim),
)
defderiv(
    "_log_softmax_backward_data",
    # its Jacobian in grad_output is I - exp(y) 1^T along dim: not symmetric
    grad_output=lambda g, s: g - (g * s.output.exp()).sum([s.dim], True),
    output=lambda g, s: -g * s.output.exp() * s.grad_output.sum([s.dim], True),
)

# --- linear algebra ------------------------------------------------------------------------------


def _matmul_self(g: Tensor, self_shape: Shape, other: Tensor) -> Tensor:
    if len(self_shape) == 1 and other.ndim == 1:  # dot
        return g * other
    if other.ndim == 1:  # (..., n, k) @ (k,): an outer product per batch
        return g.unsqueeze(-1) * other
    if len(self_shape) == 1:  # (k,) @ (..., k, m)
        return _sum_to(g.unsqueeze(-2).matmul(other.mT).squeeze(-2), self_shape)
    return _sum_to(g.matmul(other.mT), self_shape)


def _matmul_other(g: Tensor, self: Tensor, other_shape: Shape) -> Tensor:
    if self.ndim == 1 and len(other_shape) == 1:  # dot
        return g * self
    if self.ndim == 1:  # (k,) @ (..., k, m)
        return self.unsqueeze(-1) * g.unsqueeze(-2)
    if len(other_shape) == 1:  # (..., n, k) @ (k,)
        return _sum_to(self.mT.matmul(g.unsqueeze(-1)).squeeze(-1), other_shape)
    return _sum_to(self.mT.matmul(g), other_shape)


def _column_major(t: Tensor) -> bool:
    """Whether ``t``'s array is column-major only (a transposed weight, ``w.t()``): arrays
    with numpy's ``flags`` say so; others count as row-major."""
    flags = getattr(t.tp_data, "flags", None)
    return flags is not None and flags.f_contiguous and not flags.c_contiguous


def _mm_mat2(g: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    """``mat1.t() @ g``, laid out like ``mat2``: for ``linear``'s ``w.t()`` computed as
    ``(g.t() @ mat1).t()`` (the same product), so the weight's gradient comes out row-major
    like the weight, and an optimizer step on it runs over matching layouts."""
    if _column_major(mat2):
        return _t(_mm(_t(g), mat1))
    return _mm(_t(mat1), g)


defderiv(
    "mm",
    self=lambda g, s: _mm(g, _t(s.mat2)),
    mat2=lambda g, s: _mm_mat2(g, s.self, s.mat2),
)
defderiv(
    "bmm",
    self=lambda g, s: g.bmm(s.mat2.transpose(1, 2)),
    mat2=lambda g, s: s.self.transpose(1, 2).bmm(g),
)
defderiv(
    "matmul",
    self=lambda g, s: _matmul_self(g, s.self_shape, s.other),
    other=lambda g, s: _matmul_other(g, s.self, s.other_shape),
)
defderiv(
    "addmm",
    self=lambda g, s: _scale(g, s.beta),
    mat1=lambda g, s: _scale(_mm(g, _t(s.mat2)), s.alpha),
    mat2=lambda g, s: _scale(_mm_mat2(g, s.mat1, s.mat2), s.alpha),
)
