"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_``, and the two halves of
``clip_grad_norm_``: ``get_total_norm`` and ``clip_grads_with_norm_``.

Both work on the ``grad`` of each parameter given (a tensor, or an iterable of tensors),
skip parameters whose ``grad`` is None, and change the gradients in place under ``no_grad()``
(Note [nn without autograd]: gradients set by hand are clipped without the plugin too).
``foreach`` is accepted for PyTorch's signature and ignored: the core has no multi-tensor
kernels, so every gradient is processed by its own operator calls.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

from ... import dtypes as _dtypes
from ...ops import ops
from ...tensor import Tensor
from .._autograd import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

_aten = ops.aten
_HALF = (_dtypes.float16, _dtypes.bfloat16)

_Params = Tensor | Iterable[Tensor]


def _grads(parameters: _Params) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = (getattr(p, "grad", None) for p in params)
    return [g for g in grads if g is not None]


def _total_norm(grads: list[Tensor], p: float) -> Tensor:
    """The ``p``-norm of all of ``grads`` taken as one vector, on the first one's device.

    PyTorch takes the norm of the per-tensor norms, which is the same number. Here each tensor
    gives its max (inf) or its sum of ``|g|^p``, so that the root is taken once; empty tensors
    give nothing (they would make ``amax`` fail and add nothing to any norm). Half-precision
    gradients are summed in float32, as PyTorch's norms accumulate them: 2000 float16 values
    of 10 have a norm of 447, but a sum of squares past float16's largest value, 65504.
    """
    device = grads[0].device
    parts: list[Tensor] = []
    for g in grads:
        if g.numel() == 0:
            continue
        if g.dtype in _HALF:
            g = g.to(dtype=_dtypes.float32)
        if p == math.inf:
            part = _aten.amax.default(_aten.abs.default(g))
        elif p == 1.0:
            part = _aten.sum.default(_aten.abs.default(g))
        elif p == 2.0:
            part = _aten.sum.default(_aten.mul.Tensor(g, g))
        else:
            part = _aten.sum.default(_aten.pow.Tensor_Scalar(_aten.abs.default(g), p))
        parts.append(part.to(device=device))
    if not parts:
        zero: Tensor = _aten.zeros.default([], dtype=_dtypes.float32, device=device)
        return zero
    stacked = _aten.stack.default(parts)
    if p == math.inf:
        total: Tensor = _aten.amax.default(stacked)
    else:
        total = _aten.sum.default(stacked)
        if p == 2.0:
            total = _aten.sqrt.default(total)
        elif p != 1.0:
            total = _aten.pow.Tensor_Scalar(total, 1.0 / p)
    return total


def _nonfinite_error(p: float) -> RuntimeError:
    return RuntimeError(
        f"The total norm of order {p} for gradients from `parameters` is non-finite, "
        "so it cannot be clipped. To disable this error and scale the gradients by the "
        "non-finite norm anyway, set `error_if_nonfinite=False`"
    )


def _norm_order(norm_type: float | str) -> float:
    p = float(norm_type)
    if not p > 0:
        raise ValueError(f"clip_grad_norm_: norm_type must be positive or inf, got {norm_type!r}")
    return p


def get_total_norm(
    tensors: _Params,
    norm_type: float | str = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type``-norm of all of ``tensors`` taken as one vector (a 0-d tensor in
    their dtype; zero for no tensors). ``error_if_nonfinite`` raises PyTorch's
    ``RuntimeError`` for a nan or infinite norm."""
    p = _norm_order(norm_type)
    ts = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    if not ts:
        zero: Tensor = _aten.zeros.default([])
        return zero
    with no_grad():
        total = _total_norm(ts, p)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise _nonfinite_error(p)
    # in the tensors' dtype (promoted, if they differ), as PyTorch's
    r: Tensor = total.to(dtype=functools.reduce(_dtypes.promote_types, (t.dtype for t in ts)))
    return r


def clip_grads_with_norm_(
    parameters: _Params, max_norm: float, total_norm: Tensor, foreach: bool | None = None
) -> None:
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)`` (with
    :func:`get_total_norm`, the second half of :func:`clip_grad_norm_`)."""
    grads = _grads(parameters)
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        # min(coef, 1) as a tensor, never read back: clipping costs no device synchronization
        coef = _aten.clamp.default(
            _aten.rdiv.Scalar(_aten.add.Scalar(total_norm, 1e-6), max_norm), None, 1.0
        )
        for g in grads:
            _aten.mul_.Tensor(g, coef.to(device=g.device))


def clip_grad_norm_(
    parameters: _Params,
    max_norm: float,
    norm_type: float | str = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients so that their joint ``norm_type``-norm is at most ``max_norm``.

    The norm is taken over all the gradients together, as if concatenated into one vector
    (``norm_type`` may be ``inf``, or ``"inf"``, for the largest absolute value). Each
    gradient is multiplied in place by ``min(max_norm / (total_norm + 1e-6), 1)``, so
    gradients already within the bound are left as they are. Returns ``total_norm`` (a 0-d
    tensor, zero when no parameter has a gradient).

    With ``error_if_nonfinite``, a nan or infinite total norm raises ``RuntimeError`` before
    anything is scaled; otherwise, as in PyTorch, the gradients are scaled by the non-finite
    coefficient.
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = _grads(params)
    p = _norm_order(norm_type)
    if not grads:
        zero: Tensor = _aten.zeros.default([])
        return zero
    total = get_total_norm(grads, p, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters: _Params, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp each gradient, in place, to ``[-clip_value, clip_value]``."""
    c = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            _aten.clamp_.default(g, -c, c)
