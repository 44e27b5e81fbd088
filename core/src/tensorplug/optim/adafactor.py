"""``Adafactor``: Adam-like steps with a factored second moment (row and column variances of
each matrix), PyTorch's ``torch.optim.Adafactor`` (Shazeer and Stern, 2018, as PyTorch
revised it: no first moment, a relative step size, update clipping by ``d``)."""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..ops import ops
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, grads_of, lr_cell, new_step, step_f64, tensor_path

__all__ = ["Adafactor"]

_aten = ops.aten


def _f(t: Tensor) -> float:
    return float(_aten._local_scalar_dense.default(t))


class Adafactor(Optimizer):
    """PyTorch's ``torch.optim.Adafactor``. For a parameter of two or more dimensions
    ``state[p]`` holds ``step``, ``row_var`` (the last dimension reduced to 1) and ``col_var``
    (the one before it reduced to 1); for a vector or a scalar ``step`` and ``variance``.
    ``eps = (eps1, eps2)``: ``eps1`` None means the dtype's machine epsilon. ``foreach`` is
    accepted and takes the same per-parameter path."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
            "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        lr, beta2_decay, d = float(group["lr"]), group["beta2_decay"], group["d"]
        eps1, eps2 = group["eps"]
        wd = group["weight_decay"]
        for p, g, state in grads_of(group, self):
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            if not state:
                state["step"] = new_step(p)
                if g.dim() > 1:
                    row_shape, col_shape = list(g.shape), list(g.shape)
                    row_shape[-1] = 1
                    col_shape[-2] = 1
                    state["row_var"] = a.zeros.default(row_shape, dtype=g.dtype, device=g.device)
                    state["col_var"] = a.zeros.default(col_shape, dtype=g.dtype, device=g.device)
                else:
                    state["variance"] = a.zeros_like.default(g)
            if group["maximize"]:
                g = a.neg.default(g)
            e1 = _dt.finfo(p.dtype).eps if eps1 is None else eps1
            step_t = state["step"]
            a.add_.Scalar(step_t, 1)
            if tensor_path(group):  # Note [Tensor paths]
                self._tensors(group, p, g, state, e1)
                continue
            step = _f(step_t)
            one_minus_beta2_t = step**beta2_decay
            rho_t = min(lr, 1 / (step**0.5))
            alpha = max(eps2, _f(a.linalg_vector_norm.default(p, 2)) / (p.numel() ** 0.5)) * rho_t
            if wd != 0:
                a.mul_.Scalar(p, 1 - lr * wd)
            if g.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_mean = a.div_.Scalar(
                    a.square_.default(a.linalg_vector_norm.default(g, 2, [-1], True)), g.shape[-1]
                )
                a.lerp_.Scalar(row_var, row_mean, one_minus_beta2_t)
                col_mean = a.div_.Scalar(
                    a.square_.default(a.linalg_vector_norm.default(g, 2, [-2], True)), g.shape[-2]
                )
                a.lerp_.Scalar(col_var, col_mean, one_minus_beta2_t)
                var_estimate = a.matmul.default(row_var, col_var)
                row_mean_of_var = a.clamp_.default(a.mean.dim(row_var, [-2], True), e1)
                a.div_.Tensor(var_estimate, row_mean_of_var)
            else:
                variance = state["variance"]
                a.lerp_.Scalar(variance, a.mul.Tensor(g, g), one_minus_beta2_t)
                var_estimate = a.clone.default(variance)
            update = a.rsqrt.default(a.clamp_.default(var_estimate, e1 * e1))
            a.mul_.Tensor(update, g)
            denom = max(
                1.0, _f(a.linalg_vector_norm.default(update, 2)) / ((update.numel() ** 0.5) * d)
            )
            a.add_.Tensor(p, update, alpha=-alpha / denom)

    _has_tensor_path = True

    def _tensors(self, group: dict[str, Any], p: Tensor, g: Tensor, state: dict[str, Any],
                 e1: float) -> None:  # fmt: skip
        """The update with its scalars in 0-dim tensors (Note [Tensor paths])."""
        a = _aten
        lr, beta2_decay, d = lr_cell(group), group["beta2_decay"], group["d"]
        eps2, wd = group["eps"][1], group["weight_decay"]
        step = step_f64(state["step"])
        one_minus_beta2_t = a._to_copy.default(step**beta2_decay, dtype=g.dtype)
        rho_t = a.minimum.default(lr, a.rsqrt.default(step))
        norm = a._to_copy.default(a.linalg_vector_norm.default(p, 2), dtype=_dt.float64)
        alpha = a.clamp_min.default(norm / (p.numel() ** 0.5), eps2) * rho_t
        if wd != 0:
            a.mul_.Tensor(p, 1 - lr * wd)
        if g.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = a.div_.Scalar(
                a.square_.default(a.linalg_vector_norm.default(g, 2, [-1], True)), g.shape[-1]
            )
            a.lerp_.Tensor(row_var, row_mean, one_minus_beta2_t)
            col_mean = a.div_.Scalar(
                a.square_.default(a.linalg_vector_norm.default(g, 2, [-2], True)), g.shape[-2]
            )
            a.lerp_.Tensor(col_var, col_mean, one_minus_beta2_t)
            var_estimate = a.matmul.default(row_var, col_var)
            a.div_.Tensor(var_estimate, a.clamp_.default(a.mean.dim(row_var, [-2], True), e1))
        else:
            variance = state["variance"]
            a.lerp_.Tensor(variance, a.mul.Tensor(g, g), one_minus_beta2_t)
            var_estimate = a.clone.default(variance)
        update = a.rsqrt.default(a.clamp_.default(var_estimate, e1 * e1))
        a.mul_.Tensor(update, g)
        unorm = a._to_copy.default(a.linalg_vector_norm.default(update, 2), dtype=_dt.float64)
        denom = a.clamp_min.default(unorm / ((update.numel() ** 0.5) * d), 1.0)
        a.sub_.Tensor(p, a.mul.Tensor(update, alpha / denom))
