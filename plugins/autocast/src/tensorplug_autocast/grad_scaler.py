"""``tp.amp.GradScaler``: loss scaling for mixed precision training, with PyTorch's API.

Gradients of float16 activations underflow: small values round to zero. The scaler multiplies
the loss by a large factor before ``backward`` so the gradients are scaled too, then divides
them by it again (``unscale_``) before the optimizer uses them. When a step's gradients hold an
inf or NaN the scale was too large: that step is skipped and the scale shrinks by
``backoff_factor``; after ``growth_interval`` good steps in a row it grows by
``growth_factor``. The arithmetic runs in two operators of the standard set,
``aten::_amp_foreach_non_finite_check_and_unscale_`` and ``aten::_amp_update_scale_``, so every
backend runs it on its own device (the CPU kernels are the array kit's).

``device`` defaults to ``"cpu"`` (PyTorch's default is ``"cuda"``): tensorplug's default
device. Optimizers whose ``step`` unscales by itself (PyTorch's
``_step_supports_amp_scaling``) are not special-cased.

Usage::

    scaler = tp.amp.GradScaler()
    for x, y in data:
        opt.zero_grad()
        with tp.autocast("cpu", dtype=tp.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)          # unscales, skips the step if a gradient is inf or NaN
        scaler.update()           # the new scale
"""

from __future__ import annotations

import enum
import warnings
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import tensorplug as tp

__all__ = ["GradScaler", "OptState"]

_unscale_op = tp.ops.aten._amp_foreach_non_finite_check_and_unscale_.default
_update_op = tp.ops.aten._amp_update_scale_.default


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales the loss, unscales gradients, skips steps with inf/NaN gradients, adapts the scale."""

    def __init__(
        self,
        device: str = "cpu",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device == "cuda":
            if not tp.cuda.is_available():
                warnings.warn(
                    "tp.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError(f"The growth factor must be > 1.0, got {growth_factor}.")
            if backoff_factor >= 1.0:
                raise ValueError(f"The backoff factor must be < 1.0, got {backoff_factor}.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: Any = None  # a 0-dim float32 tensor, made on the first scale()
        self._growth_tracker: Any = None  # a 0-dim int32 tensor
        self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(_fresh_state)

    # --- scaling and unscaling -----------------------------------------------------------

    def _lazy_init(self, dev: Any) -> None:
        self._scale = tp.full((), self._init_scale, dtype=tp.float32, device=dev)
        self._growth_tracker = tp.full((), self._init_growth_tracker, dtype=tp.int32, device=dev)

    def _check_initialized(self, funcname: str) -> None:
        if self._scale is None or self._growth_tracker is None:
            raise RuntimeError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script did "
                "not use scaler.scale(loss or outputs) earlier in the iteration."
            )

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or lists and tuples of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, tp.Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        per_device: dict[Any, Any] = {}

        def apply(v: Any) -> Any:
            if isinstance(v, tp.Tensor):
                if self._scale is None:
                    self._lazy_init(v.device)
                s = per_device.get(v.device)
                if s is None:
                    s = per_device[v.device] = self._scale.to(device=v.device)
                return v * s
            if isinstance(v, Iterable) and not isinstance(v, str | bytes):
                mapped = map(apply, v)
                return type(v)(mapped) if isinstance(v, list | tuple) else mapped
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads(self, optimizer: Any, inv_scale: Any, found_inf: Any) -> dict[Any, Any]:
        # per device, per dtype: one call of the foreach op
        groups: defaultdict[Any, defaultdict[Any, list[Any]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if grad.dtype is tp.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                groups[grad.device][grad.dtype].append(grad)
        found_per_device: dict[Any, Any] = {}
        for dev, by_dtype in groups.items():
            found = found_inf.to(device=dev)
            inv = inv_scale.to(device=dev)
            for grads in by_dtype.values():
                _unscale_op(grads, found, inv)
            found_per_device[dev] = found
        return found_per_device

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place (once between updates)."""
        if not self._enabled:
            return
        self._check_initialized("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = tp.full((), 0.0, dtype=tp.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale, found_inf)
        state["stage"] = OptState.UNSCALED

    # --- stepping and updating -----------------------------------------------------------

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done), then ``optimizer.step()`` unless a gradient is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_initialized("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        found = state["found_inf_per_device"]
        if not found:
            raise RuntimeError(
                "No inf checks were recorded for this optimizer: none of its parameters has a "
                "gradient. Call backward() on the scaled loss before step()."
            )
        result = None
        if not sum(v.item() for v in found.values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: float | Any = None) -> None:
        """The scale for the next iteration: backed off if any step this iteration saw an inf
        or NaN gradient, grown after ``growth_interval`` clean ones; or ``new_scale``."""
        if not self._enabled:
            return
        self._check_initialized("update")
        if new_scale is not None:
            if isinstance(new_scale, float | int) and not isinstance(new_scale, bool):
                self._scale.fill_(float(new_scale))
            else:
                if not (
                    isinstance(new_scale, tp.Tensor)
                    and new_scale.numel() == 1
                    and new_scale.dtype is tp.float32
                    and not new_scale.requires_grad
                ):
                    raise ValueError(
                        "new_scale should be a float or a 1-element float32 tensor with "
                        f"requires_grad=False, got {new_scale!r}"
                    )
                self._scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [
                f.to(device=self._scale.device)
                for state in self._per_optimizer_states.values()
                for f in state["found_inf_per_device"].values()
            ]
            if not found_infs:
                raise RuntimeError(
                    "No inf checks were recorded prior to update(): call step() (or unscale_()) "
                    "on an optimizer first."
                )
            combined = found_infs[0]
            for f in found_infs[1:]:
                combined = combined + f
            _update_op(
                self._scale,
                self._growth_tracker,
                combined,
                self._growth_factor,
                self._backoff_factor,
                self._growth_interval,
            )
        self._per_optimizer_states = defaultdict(_fresh_state)

    # --- state ---------------------------------------------------------------------------

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker (empty when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(self._init_growth_tracker)

    def __repr__(self) -> str:
        if not self._enabled:
            return "GradScaler(enabled=False)"
        return (
            f"GradScaler(device={self._device!r}, scale={self.get_scale()}, "
            f"growth_factor={self._growth_factor}, backoff_factor={self._backoff_factor}, "
            f"growth_interval={self._growth_interval})"
        )
