"""The ``Autocast<B>`` kernels that carry out the policies of policy.py.

Note [Autocast kernels]
~~~~~~~~~~~~~~~~~~~~~~~
Each listed operator gets a kernel for ``AutocastCPU`` (its CPU policy, or a fallthrough when
only other device types list it) and, when the CUDA lists name it, one on the ``Autocast``
alias: that one serves every other ``Autocast<B>`` key, including those of backends registered
later (``AutocastFoo``). Every other operator meets the fallthrough fallback registered for the
alias. A kernel

1. learns which device type's region it serves: ``cpu`` for the CPU kernel; for the alias
   kernel, from the key set it is called with (``with_keyset=True``): the highest ``Autocast<B>``
   key in it other than ``AutocastCPU`` (the CPU key always has a kernel of its own);
2. casts the eligible tensor arguments (Note [Eligible tensors] in casting.py) as its policy
   says, through ``aten::_to_copy``;
3. calls the operator again with that device type's ``Autocast<B>`` key excluded, as PyTorch's
   wrappers do under ``ExcludeDispatchKeyGuard``: the call dispatches from the top on the cast
   arguments, and the operators a composite decomposes into are not autocast a second time.

The exclusion saves and restores the thread's ``nexc`` mask directly (the plugin API's fast
path), which costs two attribute writes instead of a context manager.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorplug as tp
from tensorplug.dispatch import local_state
from tensorplug.dtypes import dtype
from tensorplug.keys import DispatchKeySet

from . import mode
from .casting import ELIGIBLE, cast, cast_eligible, cast_value, eligible
from .policy import (
    BANNED,
    FP32,
    FP32_APPEND_DTYPE,
    FP32_SET_OPT_DTYPE,
    LOWER,
    OPAQUE,
    POLICIES,
    PROMOTE,
    Policy,
)

__all__ = ["TensorArgs", "call_excluding", "refresh", "register"]

Kernel = Callable[..., Any]
_F32 = tp.float32
_F64 = tp.float64


def call_excluding(op: Any, mask: int, args: Any, kwargs: dict[str, Any]) -> Any:
    """``op(*args, **kwargs)`` with the ``Autocast<B>`` key of ``mask`` excluded."""
    m = local_state.masks
    old = m.nexc
    m.nexc = old & ~mask
    try:
        return op(*args, **kwargs)
    finally:
        m.nexc = old


# --- which region a kernel serves -----------------------------------------------------------

_running: dict[int, mode.DeviceInfo] = {}  # key set -> the device type the alias kernel serves
_others_mask = 0  # every Autocast<B> key but AutocastCPU


def refresh() -> None:
    global _others_mask
    _running.clear()
    cpu = tp.keys.get("AutocastCPU").mask
    _others_mask = int(tp.keys.expand("Autocast")) & ~cpu


def _served(ks: int) -> mode.DeviceInfo:
    info = _running.get(ks)
    if info is None:
        key = DispatchKeySet(int(ks) & _others_mask).highest()
        assert key is not None and key.backend is not None and key.backend.device_type
        info = _running[ks] = mode.device_info(key.backend.device_type)
    return info


# --- argument plumbing, from the schema -----------------------------------------------------


class TensorArgs:
    """Where an operator's tensor arguments are: positions and keyword-only names."""

    def __init__(self, op: Any) -> None:
        schema = op.schema
        self.positional = [
            (i, a.name) for i, a in enumerate(schema.positional) if a.tensor_kind is not None
        ]
        self.keywords = [a.name for a in schema.kwarg_only if a.tensor_kind is not None]
        # the common case, taken first: every tensor argument is a positional Tensor (mm)
        kinds = [schema.positional[i].tensor_kind for i, _ in self.positional]
        self.plain = not self.keywords and all(k == "Tensor" for k in kinds)
        self.plain_positions = tuple(i for i, _ in self.positional)
        names = [a.name for a in schema.positional]
        self.dtype_pos = names.index("dtype") if "dtype" in names else None
        self.dtype_kw = any(a.name == "dtype" for a in schema.kwarg_only)

    def tensors(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """Every tensor argument, list arguments flattened, Nones dropped."""
        out: list[Any] = []
        for i, _ in self.positional:
            if i < len(args):
                _flatten(args[i], out)
        for n in self.keywords:
            _flatten(kwargs.get(n), out)
        return out

    def cast_all(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        to: dtype,
        dev: str,
        st: mode.ThreadState,
        keep: bool,
    ) -> tuple[list[Any], dict[str, Any]]:
        new = list(args)
        if self.plain and len(new) > self.plain_positions[-1]:
            for i in self.plain_positions:
                t = new[i]
                d = t.tp_dtype
                if d is not to and d in ELIGIBLE and t.tp_device.type == dev:
                    new[i] = cast_eligible(t, d, to, st, keep)
            return new, kwargs
        for i, _ in self.positional:
            if i < len(new):
                new[i] = cast_value(new[i], to, dev, st, keep)
        if self.keywords and kwargs:
            kwargs = dict(kwargs)
            for n in self.keywords:
                if n in kwargs:
                    kwargs[n] = cast_value(kwargs[n], to, dev, st, keep)
        return new, kwargs


def _flatten(v: Any, out: list[Any]) -> None:
    if v is None:
        return
    if isinstance(v, list | tuple):
        out.extend(x for x in v if x is not None)
    else:
        out.append(v)


# --- the policies ---------------------------------------------------------------------------

# (op, its arguments, policy) -> kernel(info_of(ks), st, args, kwargs)
_Body = Callable[[mode.DeviceInfo, mode.ThreadState, tuple[Any, ...], dict[str, Any]], Any]


def _lower(op: Any, a: TensorArgs) -> _Body:
    def body(info: mode.DeviceInfo, st: mode.ThreadState, args: Any, kwargs: Any) -> Any:
        dev = info.device_type
        to = st.dtypes.get(dev) or mode.dtype_for(st, info)
        args, kwargs = a.cast_all(args, kwargs, to, dev, st, True)
        return call_excluding(op, info.mask, args, kwargs)

    return body


def _fp32(op: Any, a: TensorArgs) -> _Body:
    def body(info: mode.DeviceInfo, st: mode.ThreadState, args: Any, kwargs: Any) -> Any:
        args, kwargs = a.cast_all(args, kwargs, _F32, info.device_type, st, False)
        return call_excluding(op, info.mask, args, kwargs)

    return body


def _fp32_set_opt_dtype(op: Any, a: TensorArgs) -> _Body:
    pos, kw = a.dtype_pos, a.dtype_kw
    if pos is None and not kw:
        raise AssertionError(f"{op.name}: {FP32_SET_OPT_DTYPE} needs a dtype argument")

    def body(info: mode.DeviceInfo, st: mode.ThreadState, args: Any, kwargs: Any) -> Any:
        if args and eligible(args[0], info.device_type):
            if pos is not None:
                if len(args) <= pos:
                    args = (*args, *([None] * (pos - len(args))), _F32)
                elif args[pos] is None:
                    args = (*args[:pos], _F32, *args[pos + 1 :])
            elif kwargs.get("dtype") is None:
                kwargs = {**kwargs, "dtype": _F32}
        return call_excluding(op, info.mask, args, kwargs)

    return body


def _fp32_append_dtype(op: Any, a: TensorArgs) -> _Body:
    def body(info: mode.DeviceInfo, st: mode.ThreadState, args: Any, kwargs: Any) -> Any:
        if args and eligible(args[0], info.device_type):
            args = (cast(args[0], _F32, info.device_type, st, False), *args[1:])
        return call_excluding(op, info.mask, args, kwargs)

    return body


def _promote(op: Any, a: TensorArgs) -> _Body:
    def body(info: mode.DeviceInfo, st: mode.ThreadState, args: Any, kwargs: Any) -> Any:
        dev = info.device_type
        low = st.dtypes.get(dev) or mode.dtype_for(st, info)
        to = low
        for t in a.tensors(args, kwargs):
            d = t.tp_dtype
            if not d.is_floating_point or d is _F64 or t.tp_device.type != dev:
                continue  # PyTorch's prioritize: only floating tensors of the device; not double
            if d is _F32 or to is _F32:
                to = _F32
            elif d is not low or to is not low:
                raise RuntimeError(
                    f"{op.name}: in a {dev} autocast region with dtype {low}, its inputs mix "
                    f"{d} with {to}, which autocast cannot promote (only float32 and {low} "
                    f"take part). Cast the inputs to one dtype first."
                )
        args, kwargs = a.cast_all(args, kwargs, to, dev, st, False)
        return call_excluding(op, info.mask, args, kwargs)

    return body


def _banned(op: Any, a: TensorArgs) -> _Body:
    def body(info: mode.DeviceInfo, st: mode.ThreadState, args: Any, kwargs: Any) -> Any:
        raise RuntimeError(
            f"{op.name}: tp.nn.functional.binary_cross_entropy and tp.nn.BCELoss are unsafe to "
            f"autocast in a {info.device_type} region.\nMany models use a sigmoid layer right "
            "before the binary cross entropy layer. In this case, combine the two layers "
            "using tp.nn.functional.binary_cross_entropy_with_logits or "
            "tp.nn.BCEWithLogitsLoss, which are safe to autocast. Otherwise compute the loss "
            f"outside the region, or inside `with tp.autocast({info.device_type!r}, "
            "enabled=False):` on float32 inputs."
        )

    return body


def _opaque(op: Any, a: TensorArgs) -> _Body:
    def body(info: mode.DeviceInfo, st: mode.ThreadState, args: Any, kwargs: Any) -> Any:
        return call_excluding(op, info.mask, args, kwargs)

    return body


_BODIES: dict[Policy, Callable[[Any, TensorArgs], _Body]] = {
    LOWER: _lower,
    FP32: _fp32,
    FP32_SET_OPT_DTYPE: _fp32_set_opt_dtype,
    FP32_APPEND_DTYPE: _fp32_append_dtype,
    PROMOTE: _promote,
    BANNED: _banned,
    OPAQUE: _opaque,
}


def _cpu_kernel(body: _Body, name: str) -> Kernel:
    cpu = mode.device_info("cpu")  # a built-in backend: its key and dtypes never change
    state = mode.state

    def kernel(*args: Any, **kwargs: Any) -> Any:
        return body(cpu, state(), args, kwargs)

    kernel.__qualname__ = f"autocast_cpu[{name}]"
    return kernel


def _cpu_lower_kernel(op: Any, a: TensorArgs, name: str) -> Kernel:
    """The lower precision policy on CPU for an operator whose tensor arguments are all
    positional ``Tensor``s (mm, bmm, matmul, addmm ...): the hot case, in one function."""
    cpu = mode.device_info("cpu")
    mask = cpu.mask
    state = mode.state
    positions = a.plain_positions
    last = positions[-1]
    general = _cpu_kernel(_lower(op, a), name)  # for a call that left a tensor out

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if len(args) <= last:
            return general(*args, **kwargs)
        st = state()
        to = st.dtypes.get("cpu") or mode.dtype_for(st, cpu)
        new = list(args)
        for i in positions:
            t = new[i]
            d = t.tp_dtype
            if d is not to and d in ELIGIBLE and t.tp_device.type == "cpu":
                new[i] = cast_eligible(t, d, to, st, True)
        m = local_state.masks
        old = m.nexc
        m.nexc = old & ~mask
        try:
            return op(*new, **kwargs)
        finally:
            m.nexc = old

    kernel.__qualname__ = f"autocast_cpu[{name}]"
    return kernel


def _alias_kernel(body: _Body, name: str) -> Kernel:
    def kernel(ks: int, *args: Any, **kwargs: Any) -> Any:
        info = _running.get(ks) or _served(ks)
        return body(info, mode.state(), args, kwargs)

    kernel.__qualname__ = f"autocast[{name}]"
    return kernel


def register(aten: Any) -> int:
    """Register the kernels of every entry of the table on library ``aten``; returns how many."""
    refresh()
    count = 0
    for name, (cpu, other) in POLICIES.items():
        op = tp.dispatcher.find_op("aten::" + name)
        a = TensorArgs(op)
        if other is not None:
            aten.impl(op, _alias_kernel(_BODIES[other](op, a), name), "Autocast", with_keyset=True)
            count += 1
        if cpu == LOWER and a.plain:
            aten.impl(op, _cpu_lower_kernel(op, a, name), "AutocastCPU")
        elif cpu is not None:
            aten.impl(op, _cpu_kernel(_BODIES[cpu](op, a), name), "AutocastCPU")
        else:  # only other device types list it: CPU regions pass it through
            aten.impl(op, tp.library.fallthrough_kernel, "AutocastCPU")
        count += 1
    return count
