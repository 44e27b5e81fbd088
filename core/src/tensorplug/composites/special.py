"""The ``special`` family of the composites: the functions of ``tensorplug.special`` that are
PyTorch's aliases of standard ops (CompositeImplicitAutograd there too; Note [Python modules]
in _opset/api.py): expm1, exp2, log1p, erf, expit, logit, logsumexp, softmax and log_softmax."""

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
