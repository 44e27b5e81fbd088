"""``Adam`` and ``AdamW``: adaptive moment estimation, with AMSGrad, L2 or decoupled weight decay."""

from __future__ import annotations

from typing import Any

from ..ops import ops
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, lr_cell, new_step, use_foreach

__all__ = ["Adam", "AdamW"]

_aten = ops.aten


def check_adam_args(lr: Any, eps: float, betas: Any, weight_decay: float) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if len(betas) != 2:
        raise ValueError(f"Invalid betas: expected a pair (beta1, beta2), got {betas!r}")
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """PyTorch's ``torch.optim.Adam``. For each parameter θ with gradient g, at step t:

    .. code-block:: text

        if maximize:   g ← -g
        if λ ≠ 0:      θ ← θ (1 - γ λ) if decoupled_weight_decay (AdamW), else g ← g + λ θ
        m ← β1 m + (1 - β1) g
        v ← β2 v + (1 - β2) g²
        if amsgrad:    v_max ← max(v_max, v);  v̂ ← v_max / (1 - β2^t)
        else:          v̂ ← v / (1 - β2^t)
        θ ← θ - γ (m / (1 - β1^t)) / (sqrt(v̂) + ε)

    ``state[p]`` holds ``step`` (a 0-dim tensor, as PyTorch stores it), ``exp_avg`` (m),
    ``exp_avg_sq`` (v) and, with amsgrad, ``max_exp_avg_sq``. With ``foreach`` (the default) or
    ``fused``, a group updates all its parameters with two calls (``aten::_foreach_add_`` on the
    step counts, ``aten::_fused_adam_`` / ``_fused_adamw_``), which read the step counts and the
    learning rate from tensors, so a ``tp.compile``d training step keeps one graph across steps;
    ``foreach=False`` runs PyTorch's per-parameter loop. ``capturable`` is accepted and has
    nothing to change: the multi-tensor path never reads state into Python.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    _foreach_reads_lr_cell = True

    def _state(self, p: Tensor, amsgrad: bool) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = new_step(p)
            state["exp_avg"] = _aten.zeros_like.default(p)
            state["exp_avg_sq"] = _aten.zeros_like.default(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _aten.zeros_like.default(p)
        elif amsgrad and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = _aten.zeros_like.default(p)
        return state

    def _update(self, group: dict[str, Any]) -> None:
        if use_foreach(group):
            self._update_foreach(group)
            return
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        wd, amsgrad = group["weight_decay"], group["amsgrad"]
        decoupled = group["decoupled_weight_decay"]
        a = _aten
        for p in group["params"]:
            g = getattr(p, "grad", None)
            if g is None:
                continue
            state = self._state(p, amsgrad)
            step_t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
            a.add_.Scalar(step_t, 1)
            if group["maximize"]:
                g = a.neg.default(g)
            if wd != 0:
                if decoupled:
                    a.mul_.Scalar(p, 1 - lr * wd)
                else:
                    g = a.add.Tensor(g, p, alpha=wd)
            a.lerp_.Scalar(m, g, 1 - beta1)
            a.addcmul_.default(a.mul_.Scalar(v, beta2), g, g, value=1 - beta2)
            step = a._local_scalar_dense.default(step_t)
            bias_correction1 = 1 - beta1**step
            bias_correction2_sqrt = (1 - beta2**step) ** 0.5
            if amsgrad:
                vmax = state["max_exp_avg_sq"]
                a.copy_.default(vmax, a.maximum.default(vmax, v))
                v = vmax
            denom = a.add_.Scalar(a.div_.Scalar(a.sqrt.default(v), bias_correction2_sqrt), eps)
            a.addcdiv_.default(p, m, denom, value=-lr / bias_correction1)

    def _update_foreach(self, group: dict[str, Any]) -> None:
        amsgrad = group["amsgrad"]
        params, grads, ms, vs, vmaxs, steps = [], [], [], [], [], []
        for p in group["params"]:
            g = getattr(p, "grad", None)
            if g is None:
                continue
            state = self._state(p, amsgrad)
            params.append(p)
            grads.append(g)
            ms.append(state["exp_avg"])
            vs.append(state["exp_avg_sq"])
            steps.append(state["step"])
            if amsgrad:
                vmaxs.append(state["max_exp_avg_sq"])
        if not params:
            return
        beta1, beta2 = group["betas"]
        _aten._foreach_add_.Scalar(steps, 1)
        fused = _aten._fused_adamw_ if group["decoupled_weight_decay"] else _aten._fused_adam_
        fused.tensor_lr(
            params, grads, ms, vs, vmaxs, steps, lr=lr_cell(group), beta1=beta1, beta2=beta2,
            weight_decay=group["weight_decay"], eps=group["eps"], amsgrad=amsgrad,
            maximize=group["maximize"],
        )  # fmt: skip


class AdamW(Adam):
    """PyTorch's ``torch.optim.AdamW``: ``Adam`` with ``decoupled_weight_decay=True`` and a
    default ``weight_decay`` of 0.01 (the parameter shrinks by ``γ λ`` before the update)."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=True,
        )  # fmt: skip
