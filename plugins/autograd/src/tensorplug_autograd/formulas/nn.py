"""Formulas of the neural network functions and losses (Note [Formula table])."""

from __future__ import annotations

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    _aten,
    _zeros,
    defderiv,
)

# --- neural network functions --------------------------------------------------------------------


_BCE_EPS = 1e-12  # PyTorch's EPSILON in binary_cross_entropy_backward


def _bce_self(
    g: Tensor, x: Tensor, target: Tensor, weight: Tensor | None, reduction: str
) -> Tensor:
    grad = g * (x - target) / (x * (1 - x)).clamp(min=_BCE_EPS)
    if weight is not None:
        grad = grad * weight
    return grad / x.numel() if reduction == "mean" and x.numel() else grad


def _bce_target(
    g: Tensor, x: Tensor, target: Tensor, weight: Tensor | None, reduction: str
) -> Tensor:
    # the forward clamps both logs at -100; so does its derivative in target
    grad = g * ((-x).log1p().clamp(min=-100.0) - x.log().clamp(min=-100.0))
    if weight is not None:
        grad = grad * weight
    return grad / x.numel() if reduction == "mean" and x.numel() else grad


defderiv(
    "nll_loss",
    self=lambda g, s: _aten.nll_loss_backward.default(
        g, s.self, s.target, s.weight, s.reduction, s.ignore_index
    ),
)
defderiv(
    "nll_loss_backward",  # linear in grad_output; constant in self
    grad_output=lambda g, s: tp.nll_loss(g, s.target, s.weight, s.reduction, s.ignore_index),
    self=lambda g, s: _zeros(g, s.self_shape),
)
defderiv(
    "binary_cross_entropy",
    self=lambda g, s: _bce_self(g, s.self, s.target, s.weight, s.reduction),
    target=lambda g, s: _bce_target(g, s.self, s.target, s.weight, s.reduction),
)


# linear_backward's outputs are linear in grad_output and in each of self and weight: with
# ``gi = g @ w``, ``gw = g^T @ x`` and ``gb = sum(g)`` over the rows, the gradients below; an
# output the mask left out (None) has no gradient and contributes nothing


def _rows(t: Tensor) -> Tensor:
    """``t`` as a matrix of its rows (its last dimension the columns)."""
    return t if t.ndim == 2 else t.reshape(-1, t.shape[-1])


def _lb_self(g: tuple[Tensor | None, ...], grad_output: Tensor) -> Tensor | None:
    ggw = g[1]
    return None if ggw is None else tp.matmul(grad_output, ggw)


def _lb_grad_output(g: tuple[Tensor | None, ...], x: Tensor, w: Tensor) -> Tensor | None:
    ggi, ggw, ggb = g
    parts = []
    if ggi is not None:
        parts.append(tp.matmul(ggi, w.t()))
    if ggw is not None:
        parts.append(tp.matmul(x, ggw.t()))
    if ggb is not None:
        shape = list(x.shape[:-1]) + [w.shape[0]]
        parts.append(ggb.expand(shape))
    if not parts:
        return None
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def _lb_weight(g: tuple[Tensor | None, ...], grad_output: Tensor) -> Tensor | None:
    ggi = g[0]
    if ggi is None:
        return None
    return tp.mm(_rows(grad_output).t(), _rows(ggi))


defderiv(
    "linear_backward",
    self=lambda g, s: _lb_self(g, s.grad_output),
    grad_output=lambda g, s: _lb_grad_output(g, s.self, s.weight),
    weight=lambda g, s: _lb_weight(g, s.grad_output),
)
