"""The multi-tensor optimizer operators: one call updates every parameter of a group.

* ``_foreach_add_.Scalar(self, scalar)`` adds ``scalar`` to each tensor of the list (the
  optimizers' step counts);
* ``_fused_adam_`` / ``_fused_adamw_`` (and their ``.tensor_lr`` overloads, the learning rate in
  a 0-dim tensor) run PyTorch's Adam / AdamW update on lists of parameters, gradients and
  moments, reading the (already incremented) step counts from ``state_steps``;
* ``_fused_sgd_`` (and ``.tensor_lr``) runs SGD with momentum, dampening, Nesterov and weight
  decay; on ``is_first_step`` the momentum buffers take the gradient;
* ``_fused_adagrad_`` (and ``.tensor_lr``) runs Adagrad, reading the (already incremented)
  step counts.

Each parameter is updated in its compute dtype and written back to its storage dtype. On a
host backend the step counts and the learning rate are read as Python floats; elsewhere they
stay 0-dim arrays, so a device backend never synchronizes and the Meta backend checks shapes
only. ``grad_scale`` divides the gradients first and a nonzero ``found_inf`` skips the update,
as in PyTorch.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from ..._op_errors import OpError, torch_name
from ...tensor import Tensor
from .._kit import Kernel, Kit, bind, lowers

__all__ = ["build"]


def _same_lengths(op: str, lists: list[list[Tensor]]) -> None:
    n = len(lists[0])
    for other in lists[1:]:
        if len(other) != n:
            raise OpError(
                f"aten::{op}: Tensor lists must have the same number of tensors, got {n} and "
                f"{len(other)}"
            )


def _floating(op: str, params: list[Tensor]) -> None:
    for p in params:
        if p._dtype.kind != "f":
            raise OpError(
                f"aten::{op}: the parameters must be floating point, got '{torch_name(p._dtype)}'"
            )


def _skipped(kit: Kit, found_inf: Tensor | None) -> bool:
    return found_inf is not None and bool(kit.xp.any(found_inf._data != 0))


def _scalar(kit: Kit, value: Any, cd: Any) -> Any:
    """A Python float stays one; a 0-dim array becomes one of compute dtype ``cd``."""
    return value if isinstance(value, float) else kit.cast(value, cd)


class _Writer:
    """Each tensor's data in its compute dtype: the array itself when storage and compute
    dtypes agree (updated in place), else a copy written back by ``flush``."""

    __slots__ = ("kit", "pending")

    def __init__(self, kit: Kit) -> None:
        self.kit = kit
        self.pending: list[tuple[Tensor, Any]] = []

    def open(self, t: Tensor) -> Any:
        kit = self.kit
        if t._dtype in kit.native:
            return t._data
        x = kit.xp.asarray(kit.as_compute(t, t._dtype), copy=True)
        self.pending.append((t, x))
        return x

    def done(self, t: Tensor, x: Any) -> None:
        """``x`` is ``t``'s new value: where the arrays' in-place operators made a new array
        (dask's ``P -= u`` rebinds ``P``), it is written into ``t``'s (or its pending copy);
        numpy's and CuPy's wrote in place, and nothing happens."""
        if t._dtype in self.kit.native:
            if x is not t._data:
                if self.kit.lazy:  # a graph shares no memory: the new one replaces it
                    t._data = x
                else:
                    self.kit.assign(t._data, x)
            return
        for j, (u, old) in enumerate(self.pending):
            if u is t:
                if x is not old:
                    self.pending[j] = (t, x)
                return

    def flush(self) -> None:
        for t, x in self.pending:
            self.kit.assign(t._data, self.kit.cast(x, self.kit.storage[t._dtype]))


def foreach_add_scalar_(kit: Kit, self: list[Tensor], scalar: Any) -> None:
    is_float = isinstance(scalar, float)
    for t in self:
        d = t._dtype
        if is_float and d.kind in "uib":
            raise OpError(
                "aten::_foreach_add_.Scalar: result type Float can't be cast to the desired "
                f"output type {torch_name(d)}"
            )
        if d in kit.native:
            a = t._data
            a += kit.scalar(scalar, d)
            if a is not t._data:  # arrays without in-place operators (dask)
                if kit.lazy:
                    t._data = a
                else:
                    kit.assign(t._data, a)
        else:
            x = kit.as_compute(t, d) + kit.scalar(scalar, d)
            kit.assign(t._data, kit.cast(x, kit.storage[d]))


def _adam(
    kit: Kit, op: str, decoupled: bool, self: list[Tensor], grads: list[Tensor],
    exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor], lr: Any, beta1: float, beta2: float, weight_decay: float,
    eps: float, amsgrad: bool, maximize: bool, grad_scale: Tensor | None,
    found_inf: Tensor | None,
) -> None:  # fmt: skip
    lists = [self, grads, exp_avgs, exp_avg_sqs, state_steps]
    _same_lengths(op, lists + [max_exp_avg_sqs] if amsgrad else lists)
    _floating(op, self)
    if _skipped(kit, found_inf):
        return
    xp = kit.xp
    host = kit.device_type == "cpu"
    ufuncs = getattr(xp.add, "reduce", None) is not None  # numpy, CuPy: ``out=`` arguments
    if isinstance(lr, Tensor):
        lr = float(lr._data) if host else lr._data
    w = _Writer(kit)
    scale = None if grad_scale is None else grad_scale._data
    scalars: dict[Any, tuple[Any, Any]] = {}
    batched: set[int] = set()
    if host and ufuncs and not kit.lazy and not amsgrad and scale is None and len(self) > 1:
        batched = _adam_small_together(
            kit, self, grads, exp_avgs, exp_avg_sqs, state_steps, lr, beta1, beta2,
            weight_decay, eps, maximize, decoupled,
        )  # fmt: skip
    for i, p in enumerate(self):
        if i in batched:
            continue
        d = p._dtype
        cd = kit.compute[d]
        P, M, V = w.open(p), w.open(exp_avgs[i]), w.open(exp_avg_sqs[i])
        G = kit.as_compute(grads[i], d)
        if scale is not None:
            G = G / kit.cast(scale, cd)
        if maximize:
            G = -G
        step_data = state_steps[i]._data
        if host:
            step = float(step_data)
            known = scalars.get(step)
            if known is None:
                bias_correction1 = 1 - beta1**step
                known = scalars[step] = ((1 - beta2**step) ** 0.5, bias_correction1)
            bc2_sqrt, bc1 = known
            step_size = lr / bc1
        else:
            s = kit.cast(step_data, cd)
            bc2_sqrt, step_size = xp.sqrt(1 - beta2**s), _scalar(kit, lr, cd) / (1 - beta1**s)
        if weight_decay != 0:
            if decoupled:
                P *= _scalar(kit, 1 - lr * weight_decay, cd)
                w.done(p, P)
            else:
                G = G + P * weight_decay
        VM = w.open(max_exp_avg_sqs[i]) if amsgrad else None
        if ufuncs and P.dtype == G.dtype:
            _adam_ufuncs(xp, P, G, M, V, VM, beta1, beta2, eps, _scalar(kit, bc2_sqrt, cd),
                         _scalar(kit, step_size, cd))  # fmt: skip
            continue
        # exp_avg.lerp_(grad, 1 - beta1), in PyTorch's two-sided form
        weight = 1 - beta1
        if weight < 0.5:
            M += (G - M) * weight
        else:
            kit.assign(M, G - (G - M) * (1 - weight))
        V *= beta2
        V += G * G * (1 - beta2)
        if VM is not None:
            kit.assign(VM, xp.maximum(VM, V))
            denom = xp.sqrt(VM)
        else:
            denom = xp.sqrt(V)
        denom /= _scalar(kit, bc2_sqrt, cd)
        denom += eps
        update = M / denom
        update *= _scalar(kit, step_size, cd)
        P -= update
        w.done(p, P)
        w.done(exp_avgs[i], M)
        w.done(exp_avg_sqs[i], V)
    w.flush()


# Note [Small parameters together]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Adam's update is a dozen ufunc calls a parameter, whatever its size; for biases and
# LayerNorm weights (a few hundred elements) the calls' overhead is their whole cost. On the
# host, the small parameters (at most _SMALL elements) of one dtype, stored natively, at one
# step count, are updated together: parameters, gradients and both moments concatenated into
# flat arrays, the same ufunc calls once over them, and the parameters and moments copied back.
# Every element sees the same operations with the same scalars as alone, so the results are
# bit for bit those of one update a parameter. In bench/gpt.py's step, 10 of its 16
# parameters (2 560 elements in all): 1.08-1.15 ms for the whole update against 1.16-1.19 ms
# one parameter at a time (the large weights' passes are the rest). amsgrad, grad_scale and
# lazy or device arrays take the loop.
_SMALL = 4096


def _adam_small_together(
    kit: Kit, self: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor], state_steps: list[Tensor], lr: Any, beta1: float,
    beta2: float, weight_decay: float, eps: float, maximize: bool, decoupled: bool,
) -> set[int]:  # fmt: skip
    """Note [Small parameters together]: the indices of the parameters updated here."""
    xp = kit.xp
    groups: dict[tuple[Any, float], list[int]] = {}
    for i, p in enumerate(self):
        d = p._dtype
        a = p._data
        if (
            d not in kit.native
            or math.prod(a.shape) > _SMALL
            or grads[i]._dtype is not d
            or exp_avgs[i]._dtype is not d
            or exp_avg_sqs[i]._dtype is not d
            or grads[i]._data.shape != a.shape
        ):
            continue
        groups.setdefault((d, float(state_steps[i]._data)), []).append(i)
    done: set[int] = set()
    for (d, step), idx in groups.items():
        if len(idx) < 2:
            continue
        cd = kit.compute[d]
        flat = [[t[i]._data.reshape(-1) for i in idx] for t in (self, grads, exp_avgs, exp_avg_sqs)]
        P, G, M, V = (xp.concatenate(f) for f in flat)
        if maximize:
            G = -G
        if weight_decay != 0:
            if decoupled:
                P *= _scalar(kit, 1 - lr * weight_decay, cd)
            else:
                G = G + P * weight_decay
        bc2_sqrt = (1 - beta2**step) ** 0.5
        step_size = lr / (1 - beta1**step)
        _adam_ufuncs(xp, P, G, M, V, None, beta1, beta2, eps, _scalar(kit, bc2_sqrt, cd),
                     _scalar(kit, step_size, cd))  # fmt: skip
        o = 0
        for i in idx:
            n = math.prod(self[i]._data.shape)
            for t, a in ((self, P), (exp_avgs, M), (exp_avg_sqs, V)):
                dst = t[i]._data
                xp.copyto(dst, a[o : o + n].reshape(dst.shape))
            o += n
        done.update(idx)
    return done


def _adam_ufuncs(xp: Any, P: Any, G: Any, M: Any, V: Any, VM: Any, beta1: float, beta2: float,
                 eps: float, bc2_sqrt: Any, step_size: Any) -> None:  # fmt: skip
    """The Adam update of one parameter with ufuncs writing into one scratch array (the
    numpy and CuPy fast path: no temporaries beyond it)."""
    buf = xp.empty_like(P)
    weight = 1 - beta1
    xp.subtract(G, M, out=buf)  # exp_avg.lerp_(grad, 1 - beta1), PyTorch's two-sided form
    if weight < 0.5:
        buf *= weight
        M += buf
    else:
        buf *= 1 - weight
        xp.subtract(G, buf, out=M)
    xp.multiply(G, G, out=buf)
    buf *= 1 - beta2
    V *= beta2
    V += buf
    if VM is not None:
        xp.maximum(VM, V, out=VM)
        V = VM
    xp.sqrt(V, out=buf)
    buf /= bc2_sqrt
    buf += eps
    xp.divide(M, buf, out=buf)
    buf *= step_size
    P -= buf


def fused_adam_(kit: Kit, self: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
                state_steps: list[Tensor], *, lr: Any, beta1: float, beta2: float,
                weight_decay: float, eps: float, amsgrad: bool, maximize: bool,
                grad_scale: Tensor | None = None, found_inf: Tensor | None = None) -> None:  # fmt: skip
    _adam(kit, "_fused_adam_", False, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
          state_steps, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale,
          found_inf)  # fmt: skip


def fused_adamw_(kit: Kit, self: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
                 exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor],
                 state_steps: list[Tensor], *, lr: Any, beta1: float, beta2: float,
                 weight_decay: float, eps: float, amsgrad: bool, maximize: bool,
                 grad_scale: Tensor | None = None, found_inf: Tensor | None = None) -> None:  # fmt: skip
    _adam(kit, "_fused_adamw_", True, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
          state_steps, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale,
          found_inf)  # fmt: skip


def fused_sgd_(kit: Kit, self: list[Tensor], grads: list[Tensor],
               momentum_buffer_list: list[Tensor], *, weight_decay: float, momentum: float,
               lr: Any, dampening: float, nesterov: bool, maximize: bool, is_first_step: bool,
               grad_scale: Tensor | None = None, found_inf: Tensor | None = None) -> None:  # fmt: skip
    op = "_fused_sgd_"
    _same_lengths(op, [self, grads, momentum_buffer_list] if momentum != 0 else [self, grads])
    _floating(op, self)
    if _skipped(kit, found_inf):
        return
    host = kit.device_type == "cpu"
    if isinstance(lr, Tensor):
        lr = float(lr._data) if host else lr._data
    w = _Writer(kit)
    scale = None if grad_scale is None else grad_scale._data
    xp = kit.xp
    ufuncs = getattr(xp.add, "reduce", None) is not None  # numpy, CuPy: ``out=`` arguments
    lrs: dict[Any, Any] = {}  # the learning rate in each compute dtype, cast once (a graph node
    # per cast on a lazy backend)
    for i, p in enumerate(self):
        d = p._dtype
        cd = kit.compute[d]
        lr_cd = lrs.get(cd)
        if lr_cd is None:
            lr_cd = lrs[cd] = _scalar(kit, lr, cd)
        P = w.open(p)
        G = kit.as_compute(grads[i], d)
        if scale is not None:
            G = G / kit.cast(scale, cd)
        if maximize:
            G = -G
        if weight_decay != 0:
            G = G + P * weight_decay
        B = w.open(momentum_buffer_list[i]) if momentum != 0 else None
        if ufuncs and P.dtype == G.dtype:
            _sgd_ufuncs(xp, P, G, B, momentum, dampening, nesterov, is_first_step, lr_cd)
            continue
        if B is not None:
            if is_first_step:
                kit.assign(B, G)
            else:
                B *= momentum
                B += G * (1 - dampening)
            w.done(momentum_buffer_list[i], B)
            G = G + B * momentum if nesterov else B
        P -= G * lr_cd
        w.done(p, P)
    w.flush()


def _sgd_ufuncs(xp: Any, P: Any, G: Any, B: Any, momentum: float, dampening: float,
                nesterov: bool, is_first_step: bool, lr: Any) -> None:  # fmt: skip
    """The SGD update of one parameter with ufuncs writing into one scratch array (the numpy
    and CuPy fast path)."""
    buf = xp.empty_like(P)
    if B is not None:
        if is_first_step:
            B[...] = G
        else:
            B *= momentum
            if dampening != 0:
                xp.multiply(G, 1 - dampening, out=buf)
                B += buf
            else:
                B += G
        if nesterov:
            xp.multiply(B, momentum, out=buf)
            buf += G
            G = buf
        else:
            G = B
    xp.multiply(G, lr, out=buf)
    P -= buf


# --- raw lowerings (Note [Raw lowerings] in _kit.py) ----------------------------------------
# The host backends' ufunc paths above, on the arrays of parameters whose dtypes are native
# floating ones with gradients of their dtype, without grad_scale and found_inf: each list of
# tensors comes as a list of arrays, an empty list not at all, a learning rate tensor as its
# 0-d array; the step counts are read as the kernels read them.


def _lowerable(kit: Kit, params: Any, *same: Any) -> bool:
    if kit.device_type != "cpu" or getattr(kit.xp.add, "reduce", None) is None:
        return False
    for p in params:
        if p.dtype.kind != "f" or p.dtype not in kit.native:
            return False
    n = len(params)
    return all(len(ts) == n and all(t.dtype is p.dtype for t, p in zip(ts, params, strict=True))
               for ts in same)  # fmt: skip


def lower_fused_sgd_(kit: Kit, self: list[Any], grads: list[Any],
                     momentum_buffer_list: list[Any], *, weight_decay: float, momentum: float,
                     lr: Any, dampening: float, nesterov: bool, maximize: bool,
                     is_first_step: bool, grad_scale: Any = None,
                     found_inf: Any = None) -> Any:  # fmt: skip
    buffers = momentum != 0
    lists = [grads, momentum_buffer_list] if buffers else [grads]
    if grad_scale is not None or found_inf is not None or not self:
        return None
    if not _lowerable(kit, self, *lists) or (not buffers and momentum_buffer_list):
        return None
    lr_tensor = not isinstance(lr, int | float)
    xp = kit.xp

    def fused_sgd_arrays(*arrays: Any) -> None:
        Ps, Gs = arrays[0], arrays[1]
        Bs = arrays[2] if buffers else None
        rate = float(arrays[-1]) if lr_tensor else lr
        for i, P in enumerate(Ps):
            G = Gs[i]
            if maximize:
                G = -G
            if weight_decay != 0:
                G = G + P * weight_decay
            _sgd_ufuncs(xp, P, G, Bs[i] if Bs is not None else None, momentum, dampening,
                        nesterov, is_first_step, rate)  # fmt: skip

    return fused_sgd_arrays, kit.keyset


def _lower_adam(kit: Kit, decoupled: bool, self: list[Any], grads: list[Any],
                exp_avgs: list[Any], exp_avg_sqs: list[Any], max_exp_avg_sqs: list[Any],
                state_steps: list[Any], *, lr: Any, beta1: float, beta2: float,
                weight_decay: float, eps: float, amsgrad: bool, maximize: bool,
                grad_scale: Any = None, found_inf: Any = None) -> Any:  # fmt: skip
    if grad_scale is not None or found_inf is not None or not self:
        return None
    lists = [grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    if not _lowerable(kit, self, *lists) or len(state_steps) != len(self):
        return None
    if not amsgrad and max_exp_avg_sqs:
        return None
    lr_tensor = not isinstance(lr, int | float)
    xp = kit.xp

    def fused_adam_arrays(*arrays: Any) -> None:
        Ps, Gs, Ms, Vs = arrays[:4]
        VMs = arrays[4] if amsgrad else None
        steps = arrays[5 if amsgrad else 4]
        rate = float(arrays[-1]) if lr_tensor else lr
        scalars: dict[Any, tuple[Any, Any]] = {}
        for i, P in enumerate(Ps):
            G = Gs[i]
            if maximize:
                G = -G
            step = float(steps[i])
            known = scalars.get(step)
            if known is None:
                bias_correction1 = 1 - beta1**step
                known = scalars[step] = ((1 - beta2**step) ** 0.5, bias_correction1)
            bc2_sqrt, bc1 = known
            if weight_decay != 0:
                if decoupled:
                    P *= 1 - rate * weight_decay
                else:
                    G = G + P * weight_decay
            _adam_ufuncs(xp, P, G, Ms[i], Vs[i], VMs[i] if VMs is not None else None, beta1,
                         beta2, eps, bc2_sqrt, rate / bc1)  # fmt: skip

    return fused_adam_arrays, kit.keyset


def lower_fused_adam_(kit: Kit, *args: Any, **kwargs: Any) -> Any:
    return _lower_adam(kit, False, *args, **kwargs)


def lower_fused_adamw_(kit: Kit, *args: Any, **kwargs: Any) -> Any:
    return _lower_adam(kit, True, *args, **kwargs)


def lower_foreach_add_scalar_(kit: Kit, self: list[Any], scalar: Any) -> Any:
    if not self or any(t.dtype not in kit.native for t in self):
        return None
    if isinstance(scalar, float) and any(t.dtype.kind in "uib" for t in self):
        return None  # the kernel's error
    values = [kit.scalar(scalar, t.dtype) for t in self]

    def foreach_add_arrays(arrays: list[Any]) -> None:
        for a, v in zip(arrays, values, strict=True):
            a += v

    return foreach_add_arrays, kit.keyset


def fused_adagrad_(kit: Kit, self: list[Tensor], grads: list[Tensor], state_sums: list[Tensor],
                   state_steps: list[Tensor], *, lr: Any, lr_decay: float, weight_decay: float,
                   eps: float, maximize: bool, grad_scale: Tensor | None = None,
                   found_inf: Tensor | None = None) -> None:  # fmt: skip
    op = "_fused_adagrad_"
    _same_lengths(op, [self, grads, state_sums, state_steps])
    _floating(op, self)
    if _skipped(kit, found_inf):
        return
    xp = kit.xp
    host = kit.device_type == "cpu"
    ufuncs = getattr(xp.add, "reduce", None) is not None
    if isinstance(lr, Tensor):
        lr = float(lr._data) if host else lr._data
    w = _Writer(kit)
    scale = None if grad_scale is None else grad_scale._data
    for i, p in enumerate(self):
        d = p._dtype
        cd = kit.compute[d]
        P, S = w.open(p), w.open(state_sums[i])
        G = kit.as_compute(grads[i], d)
        if scale is not None:
            G = G / kit.cast(scale, cd)
        if maximize:
            G = -G
        if weight_decay != 0:
            G = G + P * weight_decay
        step_data = state_steps[i]._data
        if host:
            clr = _scalar(kit, lr / (1 + (float(step_data) - 1) * lr_decay), cd)
        else:
            clr = _scalar(kit, lr, cd) / (1 + (kit.cast(step_data, cd) - 1) * lr_decay)
        if ufuncs and P.dtype == G.dtype:
            buf = xp.empty_like(P)
            xp.multiply(G, G, out=buf)
            S += buf
            xp.sqrt(S, out=buf)
            buf += eps
            xp.divide(G, buf, out=buf)
            buf *= clr
            P -= buf
            continue
        S += G * G
        P -= G / (xp.sqrt(S) + eps) * clr
        w.done(state_sums[i], S)
        w.done(p, P)
    w.flush()


KERNELS: dict[str, Any] = {
    "_foreach_add_.Scalar": foreach_add_scalar_,
    "_fused_adam_": fused_adam_,
    "_fused_adam_.tensor_lr": fused_adam_,
    "_fused_adamw_": fused_adamw_,
    "_fused_adamw_.tensor_lr": fused_adamw_,
    "_fused_adagrad_": fused_adagrad_,
    "_fused_adagrad_.tensor_lr": fused_adagrad_,
    "_fused_sgd_": fused_sgd_,
    "_fused_sgd_.tensor_lr": fused_sgd_,
}


LOWERINGS: dict[str, Any] = {
    "_foreach_add_.Scalar": lower_foreach_add_scalar_,
    "_fused_adam_": lower_fused_adam_,
    "_fused_adam_.tensor_lr": lower_fused_adam_,
    "_fused_adamw_": lower_fused_adamw_,
    "_fused_adamw_.tensor_lr": lower_fused_adamw_,
    "_fused_sgd_": lower_fused_sgd_,
    "_fused_sgd_.tensor_lr": lower_fused_sgd_,
}


def build(kit: Kit) -> dict[str, Kernel]:
    k = {name: bind(kit, fn) for name, fn in KERNELS.items()}
    for name, lower in LOWERINGS.items():
        lowers(kit, k[name], functools.partial(lower, kit))
    return k
