"""Formulas of the pointwise ops: arithmetic, unary functions, comparisons and logic (Note [Formula table])."""

from __future__ import annotations

import cmath
import math
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    FORMULAS,
    OUTPUT_DIFFERENTIABILITY,
    _aten,
    _cj,
    _cjs,
    _scale,
    _where_zero,
    _zeros,
    defderiv,
    nondifferentiable,
)
from .special import _not_implemented

# --- pointwise binary arithmetic -----------------------------------------------------------------

defderiv(
    "add.Tensor",
    self=lambda g, s: g,
    # alpha is 1 in nearly every call: no conjugation to pay for then
    other=lambda g, s: g if s.alpha == 1 else g * _cjs(s.alpha),
)
defderiv("add.Scalar", self=lambda g, s: g)
defderiv(
    "sub.Tensor",
    self=lambda g, s: g,
    other=lambda g, s: -g if s.alpha == 1 else g * -_cjs(s.alpha),
)
defderiv("sub.Scalar", self=lambda g, s: g)
defderiv("rsub.Scalar", self=lambda g, s: -g if s.alpha == 1 else g * -_cjs(s.alpha))
defderiv(
    "mul.Tensor",
    self=lambda g, s: g * _cj(s.other),
    other=lambda g, s: g * _cj(s.self),
)
defderiv("mul.Scalar", self=lambda g, s: g * _cjs(s.other))


def _div_other(g: Tensor, self: Tensor, other: Tensor) -> Tensor:
    # PyTorch's order, -g * ((self / other) / other), is the stable one for higher derivatives
    return -g * _cj((self / other) / other)


defderiv(
    "div.Tensor",
    self=lambda g, s: g / _cj(s.other),
    other=lambda g, s: _div_other(g, s.self, s.other),
)
defderiv("div.Scalar", self=lambda g, s: g / _cjs(s.other))
# a rounding division is piecewise constant: zero gradient, as PyTorch (Note [Zero gradients])
defderiv(
    "div.Tensor_mode",
    self=lambda g, s: g / _cj(s.other) if s.rounding_mode is None else _zeros(g, s.self_shape),
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

# floor_divide_.Tensor has no entry: its backward raises, as PyTorch's (derivatives.yaml has
# none); the in-place bitwise ops of a Scalar take integers only (issue 29)
nondifferentiable("bitwise_and_.Scalar", "bitwise_or_.Scalar", "bitwise_xor_.Scalar")

# --- in-place comparisons (issue 29): the results are 0 and 1 written into self, whose old
# values get zero gradients (derivatives.yaml's eq_), as do the other operand's
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    defderiv(f"{_cmp}_.Scalar", self=lambda g, s: _zeros(g, s.self_shape))
    defderiv(
        f"{_cmp}_.Tensor",
        self=lambda g, s: _zeros(g, s.self_shape),
        other=lambda g, s: _zeros(g, s.other_shape),
    )


def _pow_self_scalar(g: Tensor, self: Tensor, exponent: Any) -> Tensor:
    if exponent == 0:
        return _zeros(g, self.shape)
    if exponent == 2:
        return g * _cj(self * 2)
    return g * _cj(self.pow(exponent - 1) * exponent)


def _pow_self(g: Tensor, self: Tensor, exponent: Tensor) -> Tensor:
    return _where_zero(exponent != 0, g * _cj(exponent * self.pow(exponent - 1)))


def _pow_exponent(g: Tensor, self: Tensor, exponent: Tensor, result: Tensor) -> Tensor:
    # 0 ** e has derivative 0 in e for e >= 0 (PyTorch's pow_backward_exponent)
    if self.dtype.is_complex:  # PyTorch's: 0 ** e has derivative 0 in e where e is real >= 0
        at_zero = (self == 0).logical_and(exponent.real >= 0)
        return g * _cj(_where_zero(at_zero.logical_not(), result * self.log()))
    return g * _where_zero((self != 0).logical_or(exponent < 0), result * self.log())


def _scalar_log(x: float) -> float:
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


def _pow_scalar_exponent(g: Tensor, base: Any, exponent: Tensor, result: Tensor) -> Tensor:
    if base == 0:
        return g * _where_zero(exponent < 0, result * -math.inf)
    if isinstance(base, complex) or result.dtype.is_complex:
        return g * _cj(result * cmath.log(base))
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
    return -_scale(g, _cjs(value)) * _cj((tensor1 / tensor2) / tensor2)


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
    self=lambda g, s: g * _cjs(1 - s.weight),
    end=lambda g, s: g * _cjs(s.weight),
)
defderiv(
    "lerp.Tensor",
    self=lambda g, s: g * _cj(1 - s.weight),
    end=lambda g, s: g * _cj(s.weight),
    weight=lambda g, s: g * _cj(s.end - s.self),
)
defderiv(
    "addcmul",
    self=lambda g, s: g,
    tensor1=lambda g, s: _scale(g * _cj(s.tensor2), _cjs(s.value)),
    tensor2=lambda g, s: _scale(g * _cj(s.tensor1), _cjs(s.value)),
)
defderiv(
    "addcdiv",
    self=lambda g, s: g,
    tensor1=lambda g, s: _scale(g, _cjs(s.value)) / _cj(s.tensor2),
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
    if approximate == "tanh":  # one kernel (the composition was 15 ops, 1.3x its time)
        return tp.gelu_backward(g, x, approximate="tanh")
    # exact: d/dx x*Phi(x) = Phi(x) + x*phi(x). Phi(x) is read off the result (result / x), not
    # recomputed: gelu_backward's kernel must evaluate erfc again, ~1.8x this composition's
    # time on numpy (Note [GELU backward] in array_backend/_backward.py). At x = 0 it is
    # 1/2 + x*phi(0), right in value and slope, so second derivatives hold there too.
    # phi(x) = exp(-x^2/2) / sqrt(2 pi).
    is_zero = x == 0
    cdf = tp.where(is_zero, x * _INV_SQRT_2PI + 0.5, result / tp.where(is_zero, 1.0, x))
    pdf = tp.exp(x * x * -0.5) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _gelu_double_backward(gg: Tensor, g: Tensor, x: Tensor, approximate: str) -> Tensor:
    """The gradient of ``gelu_backward(g, x)`` for ``x``: ``gg * g * gelu''(x)``. Exact:
    d/dx (Phi(x) + x phi(x)) = phi(x) (2 - x^2). tanh, with u = b (x + k x^3), t = tanh(u):
    d/dx ((1 + t) / 2 + x (1 - t^2) u' / 2) = (1 - t^2) (u' + x (u'' - 2 t u'^2) / 2),
    u' = b (1 + 3 k x^2), u'' = 6 b k x (PyTorch's gelu_double_backward, the same terms)."""
    x2 = x * x
    if approximate == "tanh":
        t = tp.tanh((x + x2 * x * _GELU_C) * _SQRT_2_OVER_PI)
        du = (x2 * (3 * _GELU_C) + 1) * _SQRT_2_OVER_PI
        ddu = x * (6 * _GELU_C * _SQRT_2_OVER_PI)
        d2 = (1 - t * t) * (du + x * (ddu - t * du * du * 2) * 0.5)
    else:
        d2 = tp.exp(x2 * -0.5) * ((2 - x2) * _INV_SQRT_2PI)
    return gg * g * d2


def _logit_backward(g: Tensor, x: Tensor, eps: float | None) -> Tensor:
    """PyTorch's logit_backward: ``g / (x (1 - x))``; NaN outside [0, 1] without eps, and 0
    where eps clamped ``x`` (outside [eps, 1 - eps])."""
    d = g / (x * (1 - x))
    if eps is None or eps < 0:
        return tp.where((x < 0).logical_or(x > 1), math.nan, d)
    return _where_zero((x >= eps).logical_and(x <= 1 - eps), d)


def _tanh_backward(g: Tensor, y: Tensor) -> Tensor:
    return g * _cj(1 - y * y)


def _sigmoid_backward(g: Tensor, y: Tensor) -> Tensor:
    return g * _cj(y * (1 - y))


def _sgn_backward(g: Tensor, x: Tensor, sgn: Tensor) -> Tensor:
    """PyTorch's sgn_backward: zeros for a real ``x`` (sign's); for a complex one, with
    ``s = z / |z|`` (d s / dz = 1 / 2|z|, d s / dz* = -s^2 / 2|z|, Note [Complex gradients]),
    ``(g - s^2 conj(g)) / 2|z|``, and 0 where ``z == 0``."""
    if not x.dtype.is_complex:
        return _zeros(g, x.shape)
    r = x.abs()
    return _where_zero(r != 0, (g - sgn * sgn * g.conj()) / (r * 2))


def _acosh_backward(g: Tensor, x: Tensor) -> Tensor:
    """1 / sqrt(x^2 - 1); for complex x as 1 / (sqrt(x + 1) sqrt(x - 1)), the branch acosh
    takes (sqrt(x y) = sqrt(x) sqrt(y) holds only for positive reals), as PyTorch."""
    if x.dtype.is_complex:
        return g * ((x + 1).rsqrt() * (x - 1).rsqrt()).conj()
    return g * (x * x - 1).rsqrt()


def _to_copy_backward(g: Tensor, dtype: Any, device: Any) -> Tensor:
    """The cast back; a real input of a cast to complex gets the real part (handle_r_to_c)."""
    if g.dtype.is_complex and not dtype.is_complex:
        g = tp.real(g)
    return g.to(dtype=dtype, device=device)


def _silu_backward(g: Tensor, x: Tensor) -> Tensor:
    sig = tp.sigmoid(x)
    return g * (sig * (x * (1 - sig) + 1))


defderiv("neg", self=lambda g, s: -g)
defderiv("abs", self=lambda g, s: g * s.self.sgn())
defderiv("sign", self=lambda g, s: _zeros(g, s.self_shape))
defderiv("sgn", self=lambda g, s: _sgn_backward(g, s.self, s.result))
# holomorphic functions: the real formula with the derivative conjugated (Note [Complex
# gradients]); each _cj is a no-op on real tensors
defderiv("exp", self=lambda g, s: g * _cj(s.result))
defderiv("log", self=lambda g, s: g / _cj(s.self))
defderiv("log1p", self=lambda g, s: g / _cj(s.self + 1))
defderiv("sqrt", self=lambda g, s: g / _cj(s.result * 2))
defderiv("rsqrt", self=lambda g, s: g * _cj(s.result.pow(3) * -0.5))
defderiv("sin", self=lambda g, s: g * _cj(s.self.cos()))
defderiv("cos", self=lambda g, s: -g * _cj(s.self.sin()))
defderiv("tan", self=lambda g, s: g * _cj(s.result * s.result + 1))
defderiv("asin", self=lambda g, s: g * _cj((-s.self * s.self + 1).rsqrt()))
defderiv("acos", self=lambda g, s: g * -_cj((-s.self * s.self + 1).rsqrt()))
defderiv("atan", self=lambda g, s: g / _cj(s.self * s.self + 1))
defderiv("sinh", self=lambda g, s: g * _cj(s.self.cosh()))
defderiv("cosh", self=lambda g, s: g * _cj(s.self.sinh()))
defderiv("asinh", self=lambda g, s: g * _cj((s.self * s.self + 1).rsqrt()))
defderiv("acosh", self=lambda g, s: _acosh_backward(g, s.self))
defderiv("atanh", self=lambda g, s: g / _cj(1 - s.self * s.self))
defderiv("tanh", self=lambda g, s: _tanh_backward(g, s.result))
defderiv("sigmoid", self=lambda g, s: _sigmoid_backward(g, s.result))
defderiv("logit", self=lambda g, s: _logit_backward(g, s.self, s.eps))
defderiv("relu", self=lambda g, s: _aten.threshold_backward.default(g, s.result, 0))
defderiv("gelu", self=lambda g, s: _gelu_backward(g, s.self, s.result, s.approximate))
defderiv(
    "gelu_backward",
    grad_output=lambda g, s: tp.gelu_backward(g, s.self, approximate=s.approximate),
    self=lambda g, s: _gelu_double_backward(g, s.grad_output, s.self, s.approximate),
)
defderiv("silu", self=lambda g, s: _silu_backward(g, s.self))
# rounding is piecewise constant: zero gradients, as PyTorch (Note [Zero gradients])
for _name in ("floor", "ceil", "trunc", "round", "round.decimals"):
    defderiv(_name, self=lambda g, s: _zeros(g, s.self_shape))
defderiv("frac", self=lambda g, s: g)
defderiv("square", self=lambda g, s: g * _cj(s.self * 2))
defderiv("reciprocal", self=lambda g, s: -g * _cj(s.result * s.result))
defderiv("log2", self=lambda g, s: g / _cj(s.self * _LN2))
defderiv("log10", self=lambda g, s: g / _cj(s.self * _LN10))
defderiv("exp2", self=lambda g, s: g * _cj(s.result * _LN2))
defderiv("expm1", self=lambda g, s: g * _cj(s.result + 1))
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

# --- numpy's numeric functions: gcd, shifts, copysign, logaddexp, frexp, ... --------------------
# (PyTorch's derivatives.yaml; the integer functions have no derivative, nextafter none either)

nondifferentiable(
    "gcd",
    "lcm",
    *(
        f"bitwise_{side}_shift.{overload}"
        for side in ("left", "right")
        for overload in ("Tensor", "Tensor_Scalar", "Scalar_Tensor")
    ),
    "logical_xor",
)


def _copysign_self(g: Tensor, self: Tensor, result: Tensor) -> Tensor:
    """PyTorch's copysign_tensor_self_backward: ``result / self`` (the sign flip), 0 where
    self is 0."""
    return g * (result / self).masked_fill(self == 0, 0)


defderiv(
    "copysign.Tensor",
    self=lambda g, s: _copysign_self(g, s.self, s.result),
    other=lambda g, s: _zeros(g, s.other_shape),
)
defderiv("copysign.Scalar", self=lambda g, s: _copysign_self(g, s.self, s.result))
defderiv(
    "logaddexp",  # holomorphic: the derivative conjugated (Note [Complex gradients])
    self=lambda g, s: g / _cj(1 + (s.other - s.self).exp()),
    other=lambda g, s: g / _cj(1 + (s.self - s.other).exp()),
)
defderiv(
    "logaddexp2",
    self=lambda g, s: g / (1 + tp.pow(2, s.other - s.self)),
    other=lambda g, s: g / (1 + tp.pow(2, s.self - s.other)),
)
defderiv(
    "nextafter",
    self=_not_implemented("nextafter"),
    other=_not_implemented("nextafter"),
)
# the mantissa's: x = m * 2**e with e locally constant; the exponent is an integer
defderiv("frexp.Tensor", self=lambda g, s: g[0] / s.result[1].exp2())
OUTPUT_DIFFERENTIABILITY["frexp.Tensor"] = (True, False)

# --- copies and conversion -----------------------------------------------------------------------

defderiv("_to_copy", self=lambda g, s: _to_copy_backward(g, s.self_dtype, s.self_device))
defderiv("clone", self=lambda g, s: g)
defderiv(
    "copy_",
    self=lambda g, s: _zeros(g, s.self_shape),
    src=lambda g, s: g.to(device=s.src_device),
)
defderiv("fill_.Scalar", self=lambda g, s: _zeros(g, s.self_shape))
nondifferentiable("detach", "_local_scalar_dense")

# --- complex numbers -----------------------------------------------------------------------------
# PyTorch's formulas (derivatives.yaml), Note [Complex gradients]. real and imag are composites
# of view_as_real (a select of it), so they take their gradients from view_as_real's.


def _angle_backward(g: Tensor, x: Tensor) -> Tensor:
    """angle(z) = atan2(y, x): ``g * i z / |z|^2`` (0 where z == 0); a real input's angle is
    a step (0 or pi), zero gradient."""
    if not x.dtype.is_complex:
        return _zeros(g, x.shape)
    r2 = x.abs().pow(2)
    return _where_zero(r2 != 0, g * x / tp.where(r2 != 0, r2, 1.0) * 1j)


def _polar_backward(g: Tensor, angle: Tensor, result: Tensor) -> tuple[Tensor, Tensor]:
    """z = abs * e^{i angle}: dz/dabs = e^{i angle}, dz/dangle = i z; each real input gets
    ``Re(conj(g) * dz/d·)``. PyTorch's polar_backward writes e^{i angle} as sgn(result), the
    same where abs > 0; this one is also right where abs <= 0 (sgn gives 0 or -e^{i angle})."""
    gc = g.conj()
    unit = tp.polar(tp.ones_like(angle), angle)
    return tp.real(gc * unit), tp.real(gc * (result * 1j))


def _view_as_real_backward(g: Tensor) -> Tensor:
    return tp.view_as_complex(g.contiguous())


def _view_as_complex_backward(g: Tensor) -> Tensor:
    return tp.view_as_real(g.contiguous())


defderiv("conj_physical", self=lambda g, s: _cj(g))
defderiv("angle", self=lambda g, s: _angle_backward(g, s.self))
defderiv("view_as_real", self=lambda g, s: _view_as_real_backward(g))
defderiv("view_as_complex", self=lambda g, s: _view_as_complex_backward(g))
defderiv("complex", real=lambda g, s: tp.real(g), imag=lambda g, s: tp.imag(g))
FORMULAS["polar"] = {("abs", "angle"): lambda g, s: _polar_backward(g, s.angle, s.result)}
