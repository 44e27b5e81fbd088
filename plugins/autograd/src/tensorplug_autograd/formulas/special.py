"""Formulas of the special functions: lgamma, digamma, polygamma, erfinv, erfc, the modified
Bessel functions i0/i0e/i1/i1e, igamma/igammac, xlogy/xlog1py, zeta, mvlgamma, entr, ndtri,
log_ndtr, erfcx and sinc, from PyTorch's derivatives.yaml (Note [Formula table]). The Bessel
functions of tensorplug.special's second generation (bessel_j0, airy_ai, the orthogonal
polynomials, ...) are not differentiable there, and not here."""

from __future__ import annotations

import math
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import defderiv, nondifferentiable

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _not_implemented(what: str) -> Any:
    """A formula for an input PyTorch has no derivative for: backward through it raises
    PyTorch's error (``not_implemented("igamma: input")`` in derivatives.yaml)."""

    def formula(g: Any, s: Any) -> Any:
        raise NotImplementedError(
            f"the derivative for '{what}' is not implemented. Detach that input (or take the "
            "gradient with respect to the other one)"
        )

    formula.not_implemented = True  # type: ignore[attr-defined]  # tests/autograd skip it
    return formula


def _tiny_safe(x: Tensor) -> tuple[Tensor, Tensor]:
    """``(|x| > eps, x with eps where it is not)``: PyTorch's guard of i1's and i1e's
    gradients at 0, where the formula's ``1 / x`` would give NaN for the limit 0.5."""
    eps = tp.dtypes.finfo(x.dtype).eps
    big = x.abs() > eps
    return big, tp.where(big, x, eps)


def _i1_backward(g: Tensor, x: Tensor, result: Tensor) -> Tensor:
    big, safe = _tiny_safe(x)
    return g * tp.where(big, safe.i0() - result / safe, 0.5)


def _i1e_backward(g: Tensor, x: Tensor, result: Tensor) -> Tensor:
    big, safe = _tiny_safe(x)
    gx = tp.special.i0e(safe) - result * (safe.sgn() + safe.reciprocal())
    return g * tp.where(big, gx, 0.5)


def _igamma_other(g: Tensor, a: Any, x: Tensor) -> Tensor:
    """d/dx P(a, x) = x^(a - 1) e^(-x) / Gamma(a)."""
    a = tp.as_tensor(a, dtype=x.dtype, device=x.device) if not isinstance(a, Tensor) else a
    return g * tp.exp((a - 1) * tp.log(x) - x - tp.lgamma(a))


def _xlogy_self(g: Tensor, self: Any, other: Any, shift: float) -> Tensor:
    """xlogy's (shift 0) or xlog1py's (shift 1) gradient for self: ``xlogy(g, other +
    shift)``, 0 where self is 0 and other + shift <= 0."""
    r = tp.xlogy(g, other + shift if shift else other)
    if not isinstance(other, Tensor):
        other = tp.as_tensor(other, dtype=g.dtype, device=g.device)
    return r.masked_fill((self == 0) & (other <= -shift), 0.0)


def _zeta_other(g: Tensor, x: Any, q: Tensor) -> Tensor:
    return g * -x * tp.special.zeta(x + 1.0, q)


def _mvlgamma_backward(g: Tensor, x: Tensor, p: int) -> Tensor:
    """sum over j < p of digamma(x - j / 2)."""
    args = tp.arange(-p / 2 + 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device)
    return g * (x.unsqueeze(-1) + args).digamma().sum(-1)


def _sinc_backward(g: Tensor, x: Tensor) -> Tensor:
    px = x * math.pi
    d = (px * px.cos() - px.sin()) / (px * x)
    return (d * g).masked_fill(x == 0, 0.0)


defderiv("lgamma", self=lambda g, s: g * tp.digamma(s.self))
defderiv("digamma", self=lambda g, s: g * tp.polygamma(1, s.self))
defderiv("polygamma", self=lambda g, s: g * tp.polygamma(s.n + 1, s.self))
# polygamma_(self, n) takes its arguments in another order: its own entry (issue 29)
defderiv("polygamma_", self=lambda g, s: g * tp.polygamma(s.n + 1, s.self))
defderiv("erfinv", self=lambda g, s: 0.5 * _SQRT_PI * tp.exp(s.result * s.result) * g)
defderiv("erfc", self=lambda g, s: -2.0 / _SQRT_PI * tp.exp(-(s.self * s.self)) * g)
defderiv("i0", self=lambda g, s: g * tp.special.i1(s.self))
defderiv("special_i0e", self=lambda g, s: g * (tp.special.i1e(s.self) - s.self.sgn() * s.result))
defderiv("special_i1", self=lambda g, s: _i1_backward(g, s.self, s.result))
defderiv("special_i1e", self=lambda g, s: _i1e_backward(g, s.self, s.result))
defderiv(
    "igamma",
    self=_not_implemented("igamma: input"),
    other=lambda g, s: _igamma_other(g, s.self, s.other),
)
defderiv(
    "igammac",
    self=_not_implemented("igammac: input"),
    other=lambda g, s: -_igamma_other(g, s.self, s.other),
)
defderiv(
    "xlogy.Tensor",
    self=lambda g, s: _xlogy_self(g, s.self, s.other, 0.0),
    other=lambda g, s: g * s.self / s.other,
)
defderiv("xlogy.Scalar_Self", other=lambda g, s: g * s.self / s.other)
defderiv("xlogy.Scalar_Other", self=lambda g, s: _xlogy_self(g, s.self, s.other, 0.0))
defderiv(
    "special_xlog1py",
    self=lambda g, s: _xlogy_self(g, s.self, s.other, 1.0),
    other=lambda g, s: g * s.self / (s.other + 1),
)
defderiv("special_xlog1py.self_scalar", other=lambda g, s: g * s.self / (s.other + 1))
defderiv("special_xlog1py.other_scalar", self=lambda g, s: _xlogy_self(g, s.self, s.other, 1.0))
defderiv(
    "special_zeta",
    self=_not_implemented("zeta"),
    other=lambda g, s: _zeta_other(g, s.self, s.other),
)
defderiv("special_zeta.self_scalar", other=lambda g, s: _zeta_other(g, s.self, s.other))
defderiv("special_zeta.other_scalar", self=_not_implemented("zeta"))
defderiv("mvlgamma", self=lambda g, s: _mvlgamma_backward(g, s.self, s.p))
defderiv("special_entr", self=lambda g, s: g * (-(1 + s.self.log())))
defderiv("special_ndtri", self=lambda g, s: g * _SQRT_2PI * (s.result * s.result / 2).exp())
defderiv(
    "special_log_ndtr",
    self=lambda g, s: g / _SQRT_2PI * (s.result + s.self * s.self / 2).neg().exp(),
)
defderiv(
    "special_erfcx",
    self=lambda g, s: (2.0 * s.self * s.result - 2.0 / _SQRT_PI) * g,
)
defderiv("sinc", self=lambda g, s: _sinc_backward(g, s.self))

# not differentiable in PyTorch (derivatives.yaml: non_differentiable)
nondifferentiable(
    "special_airy_ai",
    *(f"special_{n}" for n in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1")),
    *(f"special_modified_bessel_{n}" for n in ("i0", "i1", "k0", "k1")),
    "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1",
    "special_spherical_bessel_j0",
    *(
        f"special_{kind}polynomial_{n}{overload}"
        for kind, letters in (
            ("chebyshev_", "tuvw"),
            ("shifted_chebyshev_", "tuvw"),
            ("hermite_", ("h", "he")),
            ("laguerre_", "l"),
            ("legendre_", "p"),
        )
        for n in letters
        for overload in ("", ".x_scalar", ".n_scalar")
    ),
)
