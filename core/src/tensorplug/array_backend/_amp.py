"""Mixed precision training: the two operators ``tp.amp.GradScaler`` runs (PyTorch's names).

* ``_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)`` multiplies every
  gradient by ``inv_scale`` in place, and sets ``found_inf`` to 1 when any element of any of
  them was inf or NaN (it never resets it to 0: one flag collects a whole optimizer's checks);
* ``_amp_update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
  growth_interval)`` is one step of the scale schedule: after a step with an inf or NaN the
  scale is multiplied by ``backoff_factor`` and the tracker restarts; otherwise the tracker
  counts the step, and after ``growth_interval`` such steps in a row the scale is multiplied by
  ``growth_factor`` (unless that overflows float32) and the tracker restarts.

``found_inf``, ``inv_scale`` and the scale are 1-element float32 tensors and the tracker a
1-element int32 tensor, checked in PyTorch's order and words. Both kernels are array
expressions that never read a value back to the host, so a device backend (cupy) runs them
without a synchronization, as PyTorch's CUDA kernels do.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import Kernel, Kernels, Kit, OpError, bind, torch_name


def _one_element(t: Tensor, what: str) -> None:
    if int(t._data.size) != 1:
        raise OpError(f"{what} must be a 1-element tensor.")


def _of_dtype(t: Tensor, what: str, d: _dt.dtype, kind: str) -> None:
    if t._dtype is not d:
        raise OpError(f"{what} must be {kind} tensor.")


def non_finite_check_and_unscale_(
    kit: Kit, self: list[Tensor], found_inf: Tensor, inv_scale: Tensor
) -> None:
    xp = kit.xp
    _one_element(inv_scale, "inv_scale")
    _one_element(found_inf, "found_inf")
    _of_dtype(inv_scale, "inv_scale", _dt.float32, "a float")
    _of_dtype(found_inf, "found_inf", _dt.float32, "a float")
    for g in self:
        if g._dtype.kind != "f":
            raise NotImplementedError(
                "aten::_amp_foreach_non_finite_check_and_unscale_: "
                f'"_amp_foreach_non_finite_check_and_unscale_{kit.device_type}" '
                f"not implemented for '{torch_name(g._dtype)}'"
            )
    inv = xp.reshape(inv_scale._data, ())
    found: Any = None
    for g in self:
        d = g._dtype
        x = kit.as_compute(g, d)
        bad = xp.logical_not(xp.all(xp.isfinite(x)))
        found = bad if found is None else xp.logical_or(found, bad)
        g._data[...] = kit.cast(x * kit.cast(inv, kit.compute[d]), kit.storage[d])
    if found is not None:
        f = found_inf._data
        f[...] = xp.where(found, xp.ones_like(f), f)


def update_scale_(
    kit: Kit,
    self: Tensor,
    growth_tracker: Tensor,
    found_inf: Tensor,
    scale_growth_factor: float,
    scale_backoff_factor: float,
    growth_interval: int,
) -> Tensor:
    xp = kit.xp
    _one_element(growth_tracker, "growth_tracker")
    _one_element(self, "current_scale")
    _one_element(found_inf, "found_inf")
    _of_dtype(growth_tracker, "growth_tracker", _dt.int32, "an int")
    _of_dtype(self, "current_scale", _dt.float32, "a float")
    _of_dtype(found_inf, "found_inf", _dt.float32, "a float")
    scale, tracker = self._data, growth_tracker._data
    f32 = kit.storage[_dt.float32]
    with kit.quiet():  # a grown scale may overflow to inf: then it is not taken
        inf = found_inf._data != 0
        steps = tracker + 1
        grow = xp.logical_and(xp.logical_not(inf), steps == growth_interval)
        # Python floats are weak operands (array API, numpy >= 2): products stay float32,
        # so an overflow shows as inf, as in PyTorch's float arithmetic
        grown = kit.cast(scale * float(scale_growth_factor), f32)
        backed_off = kit.cast(scale * float(scale_backoff_factor), f32)
        kept = xp.where(xp.logical_and(grow, xp.isfinite(grown)), grown, scale)
        new_scale = xp.where(inf, backed_off, kept)
        new_tracker = xp.where(xp.logical_or(inf, grow), xp.zeros_like(tracker), steps)
    scale[...] = new_scale
    tracker[...] = kit.cast(new_tracker, tracker.dtype)
    return self


KERNELS: dict[str, Kernel] = {
    "_amp_foreach_non_finite_check_and_unscale_": non_finite_check_and_unscale_,
    "_amp_update_scale_": update_scale_,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
