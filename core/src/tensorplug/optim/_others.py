"""Adagrad, Adadelta, Adamax, NAdam, RAdam, RMSprop, Rprop and ASGD: PyTorch's update rules,
one parameter at a time (PyTorch's ``_single_tensor_*`` paths, which its CPU default takes).

Each step count is a 0-dim tensor, as PyTorch stores it; the rules that need its value read it
(``foreach`` is accepted and takes the same path; ``capturable`` and ``differentiable`` are
accepted: ``differentiable=True`` runs the update in the caller's grad mode).
"""

from __future__ import annotations

from typing import Any

from ..ops import ops
from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    ParamsT,
    grads_of,
    lr_cell,
    new_step,
    scalar_dtype,
    step_f64,
    tensor_path,
    use_foreach,
)

__all__ = ["ASGD", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop"]

_aten = ops.aten


def _check_lr(lr: Any) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check(name: str, value: Any, ok: bool) -> None:
    if not ok:
        raise ValueError(f"Invalid {name}: {value}")


def _check_betas(betas: Any) -> None:
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def _value(t: Tensor) -> float:
    return float(_aten._local_scalar_dense.default(t))


def _grad(g: Tensor, p: Tensor, group: dict[str, Any], decoupled_ok: bool = False) -> Tensor:
    """The gradient after ``maximize`` and L2 weight decay."""
    if group["maximize"]:
        g = _aten.neg.default(g)
    wd = group["weight_decay"]
    if wd != 0 and not (decoupled_ok and group.get("decoupled_weight_decay")):
        g = _aten.add.Tensor(g, p, alpha=wd)
    return g


def _scalar_tensor(value: float, p: Tensor) -> Tensor:
    t: Tensor = _aten.full.default([], value, dtype=scalar_dtype(), device=p.device)
    return t


class Adagrad(Optimizer):
    """PyTorch's ``torch.optim.Adagrad``: ``s ← s + g²``, ``θ ← θ - γ_t g / (sqrt(s) + ε)``
    with ``γ_t = γ / (1 + (t - 1) lr_decay)``. ``state[p]`` (made at construction, as in
    PyTorch): ``step``, ``sum``. With ``foreach`` (the default) or ``fused``, a group is two
    calls, ``aten::_foreach_add_`` and ``aten::_fused_adagrad_``."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_lr(lr)
        _check("lr_decay value", lr_decay, 0.0 <= lr_decay)
        _check("weight_decay value", weight_decay, 0.0 <= weight_decay)
        _check("initial_accumulator_value value", initial_accumulator_value,
               0.0 <= initial_accumulator_value)  # fmt: skip
        _check("epsilon value", eps, 0.0 <= eps)
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        }  # fmt: skip
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step(p)
                state["sum"] = _aten.full_like.default(p, group["initial_accumulator_value"])

    _has_tensor_path = True
    _foreach_reads_lr_cell = True

    def _update(self, group: dict[str, Any]) -> None:
        if use_foreach(group):
            found = grads_of(group, self)
            if found:
                ps, gs, states = zip(*found, strict=True)
                steps = [s["step"] for s in states]
                _aten._foreach_add_.Scalar(steps, 1)
                _aten._fused_adagrad_.tensor_lr(
                    list(ps), list(gs), [s["sum"] for s in states], steps, lr=lr_cell(group),
                    lr_decay=group["lr_decay"], weight_decay=group["weight_decay"],
                    eps=group["eps"], maximize=group["maximize"],
                )  # fmt: skip
            return
        if tensor_path(group):  # Note [Tensor paths]
            lr_t = lr_cell(group)
            for p, g, state in grads_of(group, self):
                step_t, s = state["step"], state["sum"]
                _aten.add_.Scalar(step_t, 1)
                g = _grad(g, p, group)
                clr = lr_t / (1 + (step_f64(step_t) - 1) * group["lr_decay"])
                _aten.addcmul_.default(s, g, g, value=1)
                std = _aten.add_.Scalar(_aten.sqrt.default(s), group["eps"])
                _aten.sub_.Tensor(p, _aten.mul.Tensor(_aten.div.Tensor(g, std), clr))
            return
        lr, eps = float(group["lr"]), group["eps"]
        for p, g, state in grads_of(group, self):
            step_t, s = state["step"], state["sum"]
            _aten.add_.Scalar(step_t, 1)
            step = _value(step_t)
            g = _grad(g, p, group)
            clr = lr / (1 + (step - 1) * group["lr_decay"])
            _aten.addcmul_.default(s, g, g, value=1)
            std = _aten.add_.Scalar(_aten.sqrt.default(s), eps)
            _aten.addcdiv_.default(p, g, std, value=-clr)


class Adadelta(Optimizer):
    """PyTorch's ``torch.optim.Adadelta``. ``state[p]``: ``step``, ``square_avg``,
    ``acc_delta``."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check("rho value", rho, 0.0 <= rho <= 1.0)
        _check("epsilon value", eps, 0.0 <= eps)
        _check("weight_decay value", weight_decay, 0.0 <= weight_decay)
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    _has_tensor_path = True

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        lr, rho, eps = float(group["lr"]), group["rho"], group["eps"]
        for p, g, state in grads_of(group, self):
            if not state:
                state["step"] = new_step(p)
                state["square_avg"] = a.zeros_like.default(p)
                state["acc_delta"] = a.zeros_like.default(p)
            sq, acc = state["square_avg"], state["acc_delta"]
            a.add_.Scalar(state["step"], 1)
            g = _grad(g, p, group)
            a.addcmul_.default(a.mul_.Scalar(sq, rho), g, g, value=1 - rho)
            std = a.sqrt_.default(a.add.Scalar(sq, eps))
            delta = a.sqrt_.default(a.add.Scalar(acc, eps))
            a.mul_.Tensor(a.div_.Tensor(delta, std), g)
            a.addcmul_.default(a.mul_.Scalar(acc, rho), delta, delta, value=1 - rho)
            if tensor_path(group):  # Note [Tensor paths]: the learning rate from its cell
                a.sub_.Tensor(p, a.mul.Tensor(delta, lr_cell(group)))
            else:
                a.add_.Tensor(p, delta, alpha=-lr)


class Adamax(Optimizer):
    """PyTorch's ``torch.optim.Adamax`` (Adam with the infinity norm). ``state[p]``:
    ``step``, ``exp_avg``, ``exp_inf``."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check("epsilon value", eps, 0.0 <= eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay, 0.0 <= weight_decay)
        defaults = {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    _has_tensor_path = True

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        for p, g, state in grads_of(group, self):
            if not state:
                state["step"] = new_step(p)
                state["exp_avg"] = a.zeros_like.default(p)
                state["exp_inf"] = a.zeros_like.default(p)
            m, u = state["exp_avg"], state["exp_inf"]
            g = a.neg.default(g) if group["maximize"] else g
            a.add_.Scalar(state["step"], 1)
            if group["weight_decay"] != 0:
                g = a.add.Tensor(g, p, alpha=group["weight_decay"])
            a.lerp_.Scalar(m, g, 1 - beta1)
            a.copy_.default(
                u, a.maximum.default(a.mul_.Scalar(u, beta2), a.add_.Scalar(a.abs.default(g), eps))
            )
            if tensor_path(group):  # Note [Tensor paths]
                clr_t = lr_cell(group) / (1 - beta1 ** step_f64(state["step"]))
                a.sub_.Tensor(p, a.mul.Tensor(a.div.Tensor(m, u), clr_t))
                continue
            clr = lr / (1 - beta1 ** _value(state["step"]))
            a.addcdiv_.default(p, m, u, value=-clr)


class NAdam(Optimizer):
    """PyTorch's ``torch.optim.NAdam`` (Adam with Nesterov momentum and momentum decay).
    ``state[p]``: ``step``, ``mu_product`` (0-dim tensors), ``exp_avg``, ``exp_avg_sq``."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check("epsilon value", eps, 0.0 <= eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay, 0.0 <= weight_decay)
        _check("momentum_decay value", momentum_decay, 0.0 <= momentum_decay)
        defaults = {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    _has_tensor_path = True

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        wd, psi = group["weight_decay"], group["momentum_decay"]
        for p, g, state in grads_of(group, self):
            if not state:
                state["step"] = new_step(p)
                state["mu_product"] = _scalar_tensor(1.0, p)
                state["exp_avg"] = a.zeros_like.default(p)
                state["exp_avg_sq"] = a.zeros_like.default(p)
            m, v, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
            g = _grad(g, p, group, decoupled_ok=True)
            a.add_.Scalar(state["step"], 1)
            if tensor_path(group):  # Note [Tensor paths]
                self._nadam_tensors(group, p, g, state)
                continue
            step = _value(state["step"])
            bias_correction2 = 1 - beta2**step
            if wd != 0 and group["decoupled_weight_decay"]:
                a.mul_.Scalar(p, 1 - lr * wd)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
            a.mul_.Scalar(mu_product, mu)
            a.lerp_.Scalar(m, g, 1 - beta1)
            a.addcmul_.default(a.mul_.Scalar(v, beta2), g, g, value=1 - beta2)
            denom = a.add_.Scalar(a.sqrt.default(a.div.Scalar(v, bias_correction2)), eps)
            mu_prod = _value(mu_product)
            mu_product_next = mu_prod * mu_next
            a.addcdiv_.default(p, g, denom, value=-lr * (1.0 - mu) / (1.0 - mu_prod))
            a.addcdiv_.default(p, m, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))

    def _nadam_tensors(
        self, group: dict[str, Any], p: Tensor, g: Tensor, state: dict[str, Any]
    ) -> None:
        a = _aten
        lr, (beta1, beta2), psi = lr_cell(group), group["betas"], group["momentum_decay"]
        m, v, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
        step = step_f64(state["step"])
        if group["weight_decay"] != 0 and group["decoupled_weight_decay"]:
            a.mul_.Tensor(p, 1 - lr * group["weight_decay"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        a.mul_.Tensor(mu_product, mu)
        a.lerp_.Scalar(m, g, 1 - beta1)
        a.addcmul_.default(a.mul_.Scalar(v, beta2), g, g, value=1 - beta2)
        denom = a.add_.Scalar(a.sqrt.default(a.div.Tensor(v, 1 - beta2**step)), group["eps"])
        mu_product_next = mu_product * mu_next
        a.add_.Tensor(p, a.div.Tensor(g * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom))
        a.add_.Tensor(p, a.div.Tensor(m * (-lr * mu_next / (1.0 - mu_product_next)), denom))


class RAdam(Optimizer):
    """PyTorch's ``torch.optim.RAdam`` (Adam with the variance rectification term).
    ``state[p]``: ``step``, ``exp_avg``, ``exp_avg_sq``."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check("epsilon value", eps, 0.0 <= eps)
        _check_betas(betas)
        _check("weight_decay value", weight_decay, 0.0 <= weight_decay)
        defaults = {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    _has_tensor_path = True

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        wd = group["weight_decay"]
        for p, g, state in grads_of(group, self):
            if not state:
                state["step"] = new_step(p)
                state["exp_avg"] = a.zeros_like.default(p)
                state["exp_avg_sq"] = a.zeros_like.default(p)
            m, v = state["exp_avg"], state["exp_avg_sq"]
            g = _grad(g, p, group, decoupled_ok=True)
            a.add_.Scalar(state["step"], 1)
            if tensor_path(group):  # Note [Tensor paths]
                self._radam_tensors(group, p, g, state)
                continue
            step = _value(state["step"])
            if wd != 0 and group["decoupled_weight_decay"]:
                a.mul_.Scalar(p, 1 - lr * wd)
            a.lerp_.Scalar(m, g, 1 - beta1)
            a.addcmul_.default(a.mul_.Scalar(v, beta2), g, g, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            corrected = a.div.Scalar(m, bias_correction1)
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            if rho_t > 5.0:
                rect = (
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                ) ** 0.5
                root = a.add_.Scalar(a.sqrt.default(v), eps)
                adaptive = a.mul.Scalar(a.reciprocal.default(root), bias_correction2**0.5)
                upd = a.mul.Scalar(a.mul.Tensor(a.mul.Scalar(corrected, lr), adaptive), rect)
                a.add_.Tensor(p, upd, alpha=-1.0)
            else:
                a.add_.Tensor(p, a.mul.Scalar(corrected, lr), alpha=-1.0)

    def _radam_tensors(
        self, group: dict[str, Any], p: Tensor, g: Tensor, state: dict[str, Any]
    ) -> None:
        a = _aten
        lr, (beta1, beta2) = lr_cell(group), group["betas"]
        m, v = state["exp_avg"], state["exp_avg_sq"]
        step = step_f64(state["step"])
        if group["weight_decay"] != 0 and group["decoupled_weight_decay"]:
            a.mul_.Tensor(p, 1 - lr * group["weight_decay"])
        a.lerp_.Scalar(m, g, 1 - beta1)
        a.addcmul_.default(a.mul_.Scalar(v, beta2), g, g, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = a.div.Tensor(m, bias_correction1)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        rect = (
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        ) ** 0.5
        adaptive = a.div.Tensor(
            bias_correction2**0.5, a.add_.Scalar(a.sqrt.default(v), group["eps"])
        )
        update = a.where.ScalarOther(rho_t > 5.0, a.mul.Tensor(adaptive, rect), 1.0)
        a.sub_.Tensor(p, a.mul.Tensor(a.mul.Tensor(corrected, lr), update))


class RMSprop(Optimizer):
    """PyTorch's ``torch.optim.RMSprop`` (centered and with momentum). ``state[p]``:
    ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered)."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check("epsilon value", eps, 0.0 <= eps)
        _check("momentum value", momentum, 0.0 <= momentum)
        _check("weight_decay value", weight_decay, 0.0 <= weight_decay)
        _check("alpha value", alpha, 0.0 <= alpha)
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    _has_tensor_path = True

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        lr, alpha, eps = float(group["lr"]), group["alpha"], group["eps"]
        momentum, centered = group["momentum"], group["centered"]
        for p, g, state in grads_of(group, self):
            if not state:
                state["step"] = new_step(p)
                state["square_avg"] = a.zeros_like.default(p)
                if momentum > 0:
                    state["momentum_buffer"] = a.zeros_like.default(p)
                if centered:
                    state["grad_avg"] = a.zeros_like.default(p)
            sq = state["square_avg"]
            g = _grad(g, p, group)
            a.add_.Scalar(state["step"], 1)
            a.addcmul_.default(a.mul_.Scalar(sq, alpha), g, g, value=1 - alpha)
            if centered:
                ga = state["grad_avg"]
                a.lerp_.Scalar(ga, g, 1 - alpha)
                avg = a.sqrt_.default(a.addcmul.default(sq, ga, ga, value=-1))
            else:
                avg = a.sqrt.default(sq)
            a.add_.Scalar(avg, eps)
            if momentum > 0:
                buf = state["momentum_buffer"]
                a.addcdiv_.default(a.mul_.Scalar(buf, momentum), g, avg)
                if tensor_path(group):  # Note [Tensor paths]: the learning rate from its cell
                    a.sub_.Tensor(p, a.mul.Tensor(buf, lr_cell(group)))
                else:
                    a.add_.Tensor(p, buf, alpha=-lr)
            elif tensor_path(group):
                a.sub_.Tensor(p, a.mul.Tensor(a.div.Tensor(g, avg), lr_cell(group)))
            else:
                a.addcdiv_.default(p, g, avg, value=-lr)


class Rprop(Optimizer):
    """PyTorch's ``torch.optim.Rprop`` (resilient backpropagation). ``state[p]``: ``step``,
    ``prev``, ``step_size``."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr, "etas": tuple(etas), "step_sizes": tuple(step_sizes), "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    # the learning rate is only the first step size: a tensor path reads nothing more
    _has_tensor_path = True

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for p, g, state in grads_of(group, self):
            if not state:
                state["step"] = new_step(p)
                state["prev"] = a.zeros_like.default(p)
                state["step_size"] = a.full_like.default(g, float(group["lr"]))
            prev, step_size = state["prev"], state["step_size"]
            g = a.neg.default(g) if group["maximize"] else g
            a.add_.Scalar(state["step"], 1)
            sign = a.sign.default(a.mul.Tensor(g, prev))
            factor = a.where.self(
                a.gt.Scalar(sign, 0),
                a.full_like.default(sign, etaplus),
                a.where.self(
                    a.lt.Scalar(sign, 0),
                    a.full_like.default(sign, etaminus),
                    a.ones_like.default(sign),
                ),
            )
            a.clamp_.default(a.mul_.Tensor(step_size, factor), step_size_min, step_size_max)
            g = a.masked_fill.Scalar(g, a.eq.Scalar(factor, etaminus), 0)
            a.addcmul_.default(p, a.sign.default(g), step_size, value=-1)
            a.copy_.default(prev, g)


class ASGD(Optimizer):
    """PyTorch's ``torch.optim.ASGD`` (averaged SGD). ``state[p]``: ``step``, ``eta``,
    ``mu`` (0-dim tensors) and ``ax``, the average."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check("weight_decay value", weight_decay, 0.0 <= weight_decay)
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    _has_tensor_path = True

    def _update(self, group: dict[str, Any]) -> None:
        a = _aten
        lr, lambd, alpha, t0 = float(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        for p, g, state in grads_of(group, self):
            if not state:
                state["step"] = new_step(p)
                state["eta"] = _scalar_tensor(lr, p)
                state["mu"] = _scalar_tensor(1.0, p)
                state["ax"] = a.zeros_like.default(p)
            mu, ax, eta = state["mu"], state["ax"], state["eta"]
            g = _grad(g, p, group)
            a.add_.Scalar(state["step"], 1)
            if tensor_path(group):  # Note [Tensor paths]
                lr_t, step_t, eta64 = lr_cell(group), step_f64(state["step"]), step_f64(eta)
                a.mul_.Tensor(p, 1 - lambd * eta64)
                a.addcmul_.default(p, g, eta64, value=-1)
                a.add_.Tensor(ax, a.mul_.Tensor(a.sub.Tensor(p, ax), mu))
                a.copy_.default(eta, lr_t / ((1 + lambd * lr_t * step_t) ** alpha))
                a.copy_.default(mu, 1 / a.clamp_min.default(step_t - t0, 1))
                continue
            eta_value = _value(eta)
            a.mul_.Scalar(p, 1 - lambd * eta_value)
            a.add_.Tensor(p, g, alpha=-eta_value)
            if _value(mu) != 1:
                a.add_.Tensor(ax, a.mul_.Tensor(a.sub.Tensor(p, ax), mu))
            else:
                a.copy_.default(ax, p)
            step = _value(state["step"])
            a.fill_.Scalar(eta, lr / ((1 + lambd * lr * step) ** alpha))
            a.fill_.Scalar(mu, 1 / max(1, step - t0))
