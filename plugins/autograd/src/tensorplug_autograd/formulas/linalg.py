"""Formulas of the linear algebra ops: products and norms (Note [Formula table])."""

from __future__ import annotations

import math
from typing import Any

import tensorplug as tp
from tensorplug import Tensor

from ._table import (
    Shape,
    _cj,
    _cjs,
    _mH,
    _mm,
    _reduced_dims,
    _restore_reduced,
    _scale,
    _sum_to,
    _t,
    _tH,
    _zeros,
    defderiv,
)

# --- linear algebra ------------------------------------------------------------------------------


def _matmul_self(g: Tensor, self_shape: Shape, other: Tensor) -> Tensor:
    # complex operands: conjugated (Note [Complex gradients]); _cj is a no-op on real ones
    if len(self_shape) == 1 and other.ndim == 1:  # dot
        return g * _cj(other)
    if other.ndim == 1:  # (..., n, k) @ (k,): an outer product per batch
        return g.unsqueeze(-1) * _cj(other)
    if len(self_shape) == 1:  # (k,) @ (..., k, m)
        return _sum_to(g.unsqueeze(-2).matmul(_mH(other)).squeeze(-2), self_shape)
    if len(self_shape) > 2 and other.ndim == 2:  # (..., n, k) @ (k, m): one product of 2-D
        return g.reshape(-1, g.shape[-1]).matmul(_mH(other)).reshape(self_shape)
    return _sum_to(g.matmul(_mH(other)), self_shape)


def _matmul_other(g: Tensor, self: Tensor, other: Tensor, other_shape: Shape) -> Tensor:
    if self.ndim == 1 and len(other_shape) == 1:  # dot
        return g * _cj(self)
    if self.ndim == 1:  # (k,) @ (..., k, m)
        return _cj(self).unsqueeze(-1) * g.unsqueeze(-2)
    if len(other_shape) == 1:  # (..., n, k) @ (k,)
        return _sum_to(_mH(self).matmul(g.unsqueeze(-1)).squeeze(-1), other_shape)
    if self.ndim > 2 and len(other_shape) == 2:
        # (..., n, k) @ (k, m): the batch sum of the per-matrix products is one product of
        # the stacked rows, (k, B n) @ (B n, m), which a GEMM runs at once
        return _mH(self.reshape(-1, self.shape[-1])).matmul(g.reshape(-1, g.shape[-1]))
    if self.ndim == 2 and len(other_shape) == 2:
        return _mm_mat2(g, self, other)  # ``x @ w.T``: the weight's layout (as mm's)
    return _sum_to(_mH(self).matmul(g), other_shape)


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
        return _t(_mm(_t(g), _cj(mat1)))
    return _mm(_tH(mat1), g)


defderiv(
    "mm",
    self=lambda g, s: _mm(g, _tH(s.mat2)),
    mat2=lambda g, s: _mm_mat2(g, s.self, s.mat2),
)
defderiv(
    "bmm",
    self=lambda g, s: g.bmm(_mH(s.mat2)),
    mat2=lambda g, s: _mH(s.self).bmm(g),
)
defderiv(
    "matmul",
    self=lambda g, s: _matmul_self(g, s.self_shape, s.other),
    other=lambda g, s: _matmul_other(g, s.self, s.other, s.other_shape),
)
defderiv(
    "addmm",
    self=lambda g, s: _scale(g, _cjs(s.beta)),
    mat1=lambda g, s: _scale(_mm(g, _tH(s.mat2)), _cjs(s.alpha)),
    mat2=lambda g, s: _scale(_mm_mat2(g, s.mat1, s.mat2), _cjs(s.alpha)),
)

# dot: (k,) . (k,)
defderiv("dot", self=lambda g, s: g * _cj(s.tensor), tensor=lambda g, s: g * _cj(s.self))


# --- norms ---------------------------------------------------------------------------------------


def _vector_norm_backward(
    g: Tensor, x: Tensor, ord: Any, result: Tensor, dim: Any, keepdim: bool
) -> Tensor:
    """PyTorch's norm_backward: the subgradient 0 where the norm is 0, and for inf / -inf the
    gradient shared evenly by the elements whose magnitude is the norm. ``sgn`` (sign for
    real ``x``, ``x / |x|`` for complex) gives complex inputs their gradient."""
    p = float(ord)
    if p == 0:
        return _zeros(g, x.shape)
    dims = _reduced_dims(dim, x.ndim)
    g = _restore_reduced(g, x.ndim, dims, keepdim)
    norm = _restore_reduced(result, x.ndim, dims, keepdim)
    if p == 1:
        return x.sgn() * g
    if p == 2:
        return g * (x / norm).masked_fill(norm == 0, 0)
    if math.isinf(p):
        mask = x.abs() == norm
        return x.sgn() * (g / mask.sum(dims or None, True)) * mask
    if p < 1:  # |x|^(p-1) is infinite at 0, where the subgradient is 0
        scaled = x.sgn() * x.abs().masked_fill(x == 0, 1).pow(p - 1)
        return scaled * g * norm.pow(1 - p)
    scaled = x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * (g / norm.pow(p - 1)).masked_fill(norm == 0, 0)


defderiv(
    "linalg_vector_norm",
    self=lambda g, s: _vector_norm_backward(g, s.self, s.ord, s.result, s.dim, s.keepdim),
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
