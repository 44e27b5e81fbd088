"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""

from __future__ import annotations

from typing import Any

from ..ops import ops
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, lr_cell, use_foreach

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

    ``maximize`` negates the gradient first, as PyTorch's implementation does. ``state[p]``
    holds ``momentum_buffer`` when μ ≠ 0. With ``foreach`` (the default) or ``fused``, a group
    updates all its parameters in one ``aten::_fused_sgd_`` call; ``foreach=False`` runs the
    per-parameter loop (same values up to rounding).
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float | Tensor = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

    _foreach_reads_lr_cell = True

    def _update(self, group: dict[str, Any]) -> None:
        if use_foreach(group):
            self._update_foreach(group)
            return
        lr, mu, tau = float(group["lr"]), group["momentum"], group["dampening"]
        wd, nesterov = float(group["weight_decay"]), group["nesterov"]
        a = _aten
        for p in group["params"]:
            g = getattr(p, "grad", None)
            if g is None:
                continue
            if group["maximize"]:
                g = a.neg.default(g)
            if wd != 0:
                g = a.add.Tensor(g, p, alpha=wd)
            if mu != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = a.clone.default(g)
                else:
                    a.add_.Tensor(a.mul_.Scalar(buf, mu), g, alpha=1 - tau)
                g = a.add.Tensor(g, buf, alpha=mu) if nesterov else buf
            a.add_.Tensor(p, g, alpha=-lr)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        mu = group["momentum"]
        params, grads, bufs = [], [], []
        state = self.state
        complex_params = False
        for p in group["params"]:
            g = getattr(p, "grad", None)
            if g is not None:
                params.append(p)
                grads.append(g)
                complex_params |= p.tp_dtype.kind == "c"
        if not params:
            return
        if complex_params:  # the fused kernel takes floating point only: the loop's ops
            self._update(dict(group, foreach=False))
            return
        first = False
        if mu != 0:
            bufs = [state[p].get("momentum_buffer") for p in params]
            missing = sum(b is None for b in bufs)
            if missing and missing != len(bufs):
                # some parameters' first gradient after the others' first step: the loop
                self._update(dict(group, foreach=False))
                return
            if missing:
                first = True
                bufs = [_aten.empty_like.default(p) for p in params]
                for p, b in zip(params, bufs, strict=True):
                    state[p]["momentum_buffer"] = b
        _aten._fused_sgd_.tensor_lr(
            params, grads, bufs, weight_decay=float(group["weight_decay"]), momentum=mu,
            lr=lr_cell(group), dampening=group["dampening"], nesterov=group["nesterov"],
            maximize=group["maximize"], is_first_step=first,
        )  # fmt: skip
