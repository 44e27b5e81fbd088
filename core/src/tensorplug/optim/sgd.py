"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""

from __future__ import annotations

from typing import Any

from ..ops import ops
from .optimizer import Optimizer, ParamsT

__all__ = ["SGD"]

_aten = ops.aten


class SGD(Optimizer):
    """PyTorch's ``torch.optim.SGD``. For each parameter θ with gradient g, at step t:

    .. code-block:: text

        if maximize:   g ← -g
        if λ ≠ 0:      g ← g + λ θ                      (weight_decay)
        if μ ≠ 0:      b ← g at t = 1, else μ b + (1 - τ) g   (momentum, dampening)
                       g ← g + μ b if nesterov else b
        θ ← θ - γ g                                       (lr)

    ``maximize`` negates the gradient first, as PyTorch's implementation (and Adam's documented
    algorithm) does; the older SGD box applies the sign at the end, which differs only in the
    sign of the weight decay. ``foreach`` is accepted for PyTorch's signature and ignored: there
    are no multi-tensor kernels.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _update(self, group: dict[str, Any]) -> None:
        lr, mu, tau = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov = group["weight_decay"], group["nesterov"]
        # The true gradient is sign * d: maximize flips the sign instead of negating a copy.
        sign = -1.0 if group["maximize"] else 1.0
        add_ = _aten.add_.Tensor
        for p in group["params"]:
            d = getattr(p, "grad", None)
            if d is None:
                continue
            if wd != 0:
                d = _aten.add.Tensor(d, p, alpha=sign * wd)  # sign * (g + λθ)
            if mu == 0:
                add_(p, d, alpha=-lr * sign)
                continue
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = _aten.mul.Scalar(d, sign)  # a new tensor
            else:
                add_(_aten.mul_.Scalar(buf, mu), d, alpha=(1 - tau) * sign)
            if nesterov:  # θ - γ (g + μ b), as two in-place updates
                add_(p, d, alpha=-lr * sign)
                add_(p, buf, alpha=-lr * mu)
            else:
                add_(p, buf, alpha=-lr)
