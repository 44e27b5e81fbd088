"""The ``special`` family of the composites: the functions of ``tensorplug.special`` that are
PyTorch's aliases of standard ops (CompositeImplicitAutograd there too; Note [Python modules]
in _opset/api.py): expm1, exp2, log1p, erf, expit, logit, logsumexp, softmax and log_softmax;
and the aliases of the special-function kernels (psi, gammaln, ndtr, xlogy, gammainc, ...)."""

from __future__ import annotations

from typing import Any

from ..ops import ops

aten = ops.aten


def special_expm1(self: Any) -> Any:
    return aten.expm1.default(self)


def special_exp2(self: Any) -> Any:
    return aten.exp2.default(self)


def special_log1p(self: Any) -> Any:
    return aten.log1p.default(self)


def special_erf(self: Any) -> Any:
    return aten.erf.default(self)


def special_expit(self: Any) -> Any:
    return aten.sigmoid.default(self)


def special_logit(self: Any, eps: float | None = None) -> Any:
    return aten.logit.default(self, eps)


def special_logsumexp(self: Any, dim: Any, keepdim: bool = False) -> Any:
    return aten.logsumexp.default(self, dim, keepdim)


def special_softmax(self: Any, dim: int, dtype: Any = None) -> Any:
    return aten.softmax.int(self, dim, dtype)


def special_log_softmax(self: Any, dim: int, *, dtype: Any = None) -> Any:
    return aten.log_softmax.int(self, dim, dtype)


# --- special functions: PyTorch's aliases of the kernels of _special.py -----------------------


def special_psi(self: Any) -> Any:
    return aten.digamma.default(self)


def special_digamma(self: Any) -> Any:
    return aten.digamma.default(self)


def special_gammaln(self: Any) -> Any:
    return aten.lgamma.default(self)


def special_erfc(self: Any) -> Any:
    return aten.erfc.default(self)


def special_erfinv(self: Any) -> Any:
    return aten.erfinv.default(self)


def special_ndtr(self: Any) -> Any:
    """PyTorch's: ``(1 + erf(x / sqrt(2))) / 2``, in the dtype erf gives."""
    return aten.mul.Scalar(
        aten.add.Scalar(aten.erf.default(aten.mul.Scalar(self, _SQRT1_2)), 1), 0.5
    )


def special_i0(self: Any) -> Any:
    return aten.i0.default(self)


def special_sinc(self: Any) -> Any:
    return aten.sinc.default(self)


def special_xlogy(self: Any, other: Any) -> Any:
    return aten.xlogy.Tensor(self, other)


def special_xlogy_self_scalar(self: Any, other: Any) -> Any:
    return aten.xlogy.Scalar_Self(self, other)


def special_xlogy_other_scalar(self: Any, other: Any) -> Any:
    return aten.xlogy.Scalar_Other(self, other)


def special_polygamma(n: int, self: Any) -> Any:
    return aten.polygamma.default(n, self)


def special_round(self: Any, *, decimals: int = 0) -> Any:
    return aten.round.decimals(self, decimals=decimals)


def special_gammainc(self: Any, other: Any) -> Any:
    return aten.igamma.default(self, other)


def special_gammaincc(self: Any, other: Any) -> Any:
    return aten.igammac.default(self, other)


def special_multigammaln(self: Any, p: int) -> Any:
    return aten.mvlgamma.default(self, p)


_SQRT1_2 = 0.7071067811865476
