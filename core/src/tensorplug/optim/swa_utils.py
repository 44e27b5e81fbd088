"""Stochastic weight averaging and exponential moving averages of a model
(``tensorplug.optim.swa_utils``), in the image of ``torch.optim.swa_utils``: ``AveragedModel``,
``SWALR``, ``update_bn`` and the averaging functions.

Usage::

    swa_model = AveragedModel(model)                       # equal weights (SWA)
    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    swa_scheduler = SWALR(opt, swa_lr=0.05)
    ...  # train; then each epoch: swa_model.update_parameters(model); swa_scheduler.step()
    update_bn(loader, swa_model)

``update_bn`` recomputes the running statistics of every batch-norm-like submodule: one with a
``reset_running_stats()`` method and a ``momentum`` attribute, as PyTorch's ``_BatchNorm``
has.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from .. import dtypes as _dt
from ..nn._autograd import no_grad
from ..nn.module import Module
from ..ops import ops
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = [
    "SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
    "get_swa_multi_avg_fn", "update_bn",
]  # fmt: skip

_aten = ops.aten
PARAM_LIST = list[Tensor] | tuple[Tensor, ...]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """Exponential moving average over lists: ``ema ← decay ema + (1 - decay) param``."""
    _check_decay(decay)

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        with no_grad():
            pairs = zip(ema_param_list, current_param_list, strict=True)
            if ema_param_list and ema_param_list[0].is_floating_point():
                for e, p in pairs:
                    _aten.lerp_.Scalar(e, p, 1 - decay)
            else:
                for e, p in pairs:
                    _aten.copy_.default(e, e * decay + p * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """Equal-weight average over lists: ``avg ← avg + (param - avg) / (n + 1)``."""

    def swa_update(averaged: PARAM_LIST, current: PARAM_LIST, num_averaged: Any) -> None:
        with no_grad():
            n = num_averaged
            if isinstance(n, Tensor):
                n = int(_aten._local_scalar_dense.default(n))
            if averaged and averaged[0].is_floating_point():
                for a, p in zip(averaged, current, strict=True):
                    _aten.lerp_.Scalar(a, p, 1 / (n + 1))
            else:
                for a, p in zip(averaged, current, strict=True):
                    _aten.add_.Tensor(a, _aten.sub.Tensor(p, a), alpha=1.0 / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """Exponential moving average of one tensor."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """Equal-weight average of one tensor."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            avg: Tensor = averaged_param + (current_param - averaged_param) / (num_averaged + 1)
            return avg

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) are the
    average of the models passed to ``update_parameters``: equal weights by default, or as
    ``avg_fn(averaged, current, n)`` / ``multi_avg_fn(averaged_list, current_list, n)`` say.
    ``n_averaged`` (a buffer) counts the updates."""

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
        multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Any], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _aten.zeros.default([], dtype=_dt.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters into this one's (the first call copies them)."""
        mine: Iterable[Tensor] = (
            itertools.chain(self.module.parameters(), self.module.buffers())
            if self.use_buffers
            else self.module.parameters()
        )
        theirs: Iterable[Tensor] = (
            itertools.chain(model.parameters(), model.buffers())
            if self.use_buffers
            else model.parameters()
        )
        n = int(_aten._local_scalar_dense.default(self.n_averaged))
        with no_grad():
            averaged, current = [], []
            for a, p in zip(mine, theirs, strict=False):
                a = a.detach()
                p = p.detach()
                if p.device != a.device:
                    p = p.to(a.device)
                averaged.append(a)
                current.append(p)
                if n == 0:
                    _aten.copy_.default(a, p)
            if n > 0:
                if self.avg_fn is not None:
                    for a, p in zip(averaged, current, strict=True):
                        _aten.copy_.default(a, self.avg_fn(a, p, self.n_averaged))
                else:
                    fn = self.multi_avg_fn or get_swa_multi_avg_fn()
                    fn(averaged, current, self.n_averaged)
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    _aten.copy_.default(b_avg.detach(), b_model.detach().to(b_avg.device))
            _aten.add_.Scalar(self.n_averaged, 1)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch-norm-like submodules by one pass
    over ``loader`` (cumulative averages: ``momentum`` None during the pass)."""
    momenta: dict[Any, Any] = {}
    for module in model.modules():
        if hasattr(module, "reset_running_stats") and hasattr(module, "momentum"):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, list | tuple):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` (cosine or
    linear), then hold it."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float,
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups,
                             strict=True):  # fmt: skip
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
