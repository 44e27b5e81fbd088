"""``Adam``: adaptive moment estimation, with optional AMSGrad and L2 weight decay."""

from __future__ import annotations

import math
from typing import Any

from ..ops import ops
from .optimizer import Optimizer, ParamsT

__all__ = ["Adam"]

_aten = ops.aten


class Adam(Optimizer):
    """PyTorch's ``torch.optim.Adam``. For each parameter θ with gradient g, at step t:

    .. code-block:: text

        if maximize:   g ← -g
        if λ ≠ 0:      g ← g + λ θ                         (weight_decay; L2, not AdamW)
        m ← β1 m + (1 - β1) g
        v ← β2 v + (1 - β2) g²
        if amsgrad:    v_max ← max(v_max, v);  v̂ ← v_max / (1 - β2^t)
        else:          v̂ ← v / (1 - β2^t)
        θ ← θ - γ (m / (1 - β1^t)) / (sqrt(v̂) + ε)

    ``state[p]`` holds ``step`` (an int), ``exp_avg`` (m), ``exp_avg_sq`` (v) and, with
    amsgrad, ``max_exp_avg_sq``. ``foreach`` is accepted for PyTorch's signature and ignored:
    there are no multi-tensor kernels.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if len(betas) != 2:
            raise ValueError(f"Invalid betas: expected a pair (beta1, beta2), got {betas!r}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        wd, amsgrad = group["weight_decay"], group["amsgrad"]
        # The true gradient is sign * d: maximize flips the sign instead of negating a copy.
        sign = -1.0 if group["maximize"] else 1.0
        a = _aten
        for p in group["params"]:
            d = getattr(p, "grad", None)
            if d is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = a.zeros_like.default(p)
                state["exp_avg_sq"] = a.zeros_like.default(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = a.zeros_like.default(p)
            state["step"] = t = state["step"] + 1
            m, v = state["exp_avg"], state["exp_avg_sq"]
            if wd != 0:
                d = a.add.Tensor(d, p, alpha=sign * wd)  # sign * (g + λθ)
            a.add_.Tensor(a.mul_.Scalar(m, beta1), d, alpha=(1 - beta1) * sign)
            a.add_.Tensor(a.mul_.Scalar(v, beta2), a.mul.Tensor(d, d), alpha=1 - beta2)
            if amsgrad:
                v = state["max_exp_avg_sq"] = a.maximum.default(state["max_exp_avg_sq"], v)
            bias_correction1 = 1 - beta1**t
            bias_correction2 = 1 - beta2**t
            # denom = sqrt(v̂) + ε, then m / denom written over denom: one temporary in all
            denom = a.sqrt.default(v)
            a.add_.Scalar(a.div_.Scalar(denom, math.sqrt(bias_correction2)), eps)
            a.div.out(m, denom, out=denom)
            a.add_.Tensor(p, denom, alpha=-lr / bias_correction1)
