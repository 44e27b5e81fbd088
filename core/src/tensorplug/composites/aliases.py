"""Other names of standard ops: clip (clamp under numpy's name), and the aliases of
``tensorplug.linalg`` and ``tensorplug.special`` (Note [Python modules] in _api.py)."""

from __future__ import annotations

from typing import Any

from ..ops import ops

aten = ops.aten


# --- aliases ------------------------------------------------------------------------------
# clip is clamp under numpy's name, as in PyTorch (grad_fn ClampBackward1, clamp's messages)


def clip(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.default(self, min, max)


def clip_tensor(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp.Tensor(self, min, max)


def clip_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.default(self, min, max)


def clip_tensor_(self: Any, min: Any = None, max: Any = None) -> Any:
    return aten.clamp_.Tensor(self, min, max)


# --- tensorplug.linalg, tensorplug.special, tensorplug.nn.functional ---------------------------
# (Note [Python modules] in _api.py.) The linalg and special ones are PyTorch's aliases of
# standard ops, CompositeImplicitAutograd there too.


def linalg_matmul(self: Any, other: Any) -> Any:
    return aten.matmul.default(self, other)


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
