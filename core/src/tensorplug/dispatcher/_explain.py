"""Questions about the registry: an operator's dispatch table, its registrations, the
fallbacks, and :func:`explain` for one call."""

from __future__ import annotations

from typing import Any

from .. import dispatch as _dispatch
from .. import keys as _keys
from ..dispatch import local_state
from ..errors import DispatchError
from ..keys import DispatchKeySet
from ._op import OpOverload, find_op
from ._paths import _arg_ks, _Capture, _keyset_of, tracing
from ._registry import _fallbacks, _lock


def dispatch_table(name: str | OpOverload) -> dict[str, str]:
    """Runtime key name -> where its entry comes from (DESIGN §4)."""
    op = find_op(name)
    table = op.table
    return {k.name: table.get(k.bit, ("missing", None))[0] for k in _keys.priority_order()}


def registrations(name: str | OpOverload) -> dict[str, str]:
    """Registration key -> who registered its kernel."""
    op = find_op(name)
    with _lock:
        return {key: k.registrant for key, k in op._kernels.items()}


def fallbacks() -> dict[str, str]:
    """Registration key -> who registered the fallback for it."""
    with _lock:
        return {key: k.registrant for key, k in _fallbacks.items()}


def explain(op: Any, /, *args: Any, run: bool = True, **kwargs: Any) -> str:
    """Why a call runs the kernel it runs.

    Reports the key set of each tensor argument, the thread's included/excluded sets, the
    resulting key set, the chosen key (and the fallthrough keys passed on the way), the kernel
    and who registered it. With ``run=True`` (the default) the call is executed once under a
    trace, so each redispatch step it takes is listed too; a call that fails (a shape
    mismatch, tensors on two devices) lists the steps up to the failure, then the error on
    one line (``  -> error: Type: message``), instead of raising it. An operator packet
    (``tp.ops.aten.add``) explains the overload its arguments pick, as calling it would.
    """
    ov = _pick_overload(op, args, kwargs)
    bargs, bkwargs = ov._schema.bind(args, kwargs, ov._name)
    lines = [f"explain {ov._schema}"]
    if not isinstance(op, OpOverload | str):
        lines.append(f"  (the overload of {ov.qualname} that these arguments pick)")
    for a, v in zip(ov._schema.arguments, (*bargs, *bkwargs.values()), strict=False):
        if a.tensor_kind is not None:
            lines.append(f"  argument {a.name}: keyset {DispatchKeySet(_arg_ks(a, v))!r}")
    arg_ks = _keyset_of(ov, bargs, bkwargs)
    lines.append(f"  thread included: {_dispatch.included()!r}")
    lines.append(f"  thread excluded: {_dispatch.excluded()!r}")
    ks = (arg_ks | local_state.masks.inc) & local_state.masks.nexc
    lines.append(f"  dispatch keyset: {DispatchKeySet(ks)!r}")
    try:
        key, kernel = ov._select(ks)
    except DispatchError as e:
        lines.append(f"  -> error: {e}")
        return "\n".join(lines)
    for k in DispatchKeySet(ks):
        if k is key:
            break
        if ov.fallthrough_mask & (1 << k.bit):
            lines.append(f"  skip {k.name}: fallthrough ({ov.table[k.bit][1].registrant})")  # type: ignore[union-attr]
    src = ov.table[key.bit][0]
    lines.append(
        f"  chosen key: {key.name} (entry from {src}) -> "
        f"{'boxed fallback ' if kernel.boxed else ''}{kernel.where}, registered by {kernel.registrant}"
    )
    if run:
        cap = _Capture()
        failure: Exception | None = None
        with tracing(cap):
            try:
                ov(*bargs, **bkwargs)
            except Exception as e:  # explained, not raised: the steps that led to it come first
                failure = e
        lines.append("  dispatch steps when run:")
        lines.extend("    " + ln for ln in cap.lines)
        if failure is not None:
            text = " ".join(str(failure).split())
            lines.append(f"  -> error: {type(failure).__name__}: {text}")
    return "\n".join(lines)


def _pick_overload(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> OpOverload:
    if isinstance(op, OpOverload):
        return op
    resolver = getattr(op, "_resolve_overload", None)
    if resolver is not None:
        ov: OpOverload = resolver(args, kwargs)
        return ov
    return find_op(op)
