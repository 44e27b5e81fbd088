"""The call paths beside the generated ones: the generic path (an operator whose schema's names
cannot be generated, a call the generated function could not bind) and the traced path (every
call while dispatch tracing is on), with the dispatch trace that switches operators onto it.

The Notes of the dispatcher are in ``dispatcher/__init__.py``."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import keys as _keys
from .. import schema as _sch
from ..dispatch import local_state
from ..errors import DispatchError
from ..keys import DispatchKeySet
from . import _callgen
from ._registry import _changed, _lock, _ops

if TYPE_CHECKING:
    from ._op import OpOverload


def _keyset_of(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    ks = 0
    schema = op._schema
    for a, v in zip(schema.positional, args, strict=False):
        ks |= _arg_ks(a, v)
    for a in schema.kwarg_only:
        ks |= _arg_ks(a, kwargs.get(a.name))
    return ks


def _arg_ks(a: _sch.Argument, v: Any) -> int:
    kind = a.tensor_kind
    if kind is None or v is None:
        return 0
    if kind in ("Tensor", "Tensor?"):
        return int(v._tp_keyset)
    return _callgen.ks_optlist(v)


def _invoke(op: OpOverload, ks: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    fn = op._cache.get(ks) or op._resolve(ks)
    written = [
        (v, a.tensor_kind)
        for a, v in zip(op._schema.arguments, (*args, *kwargs.values()), strict=False)
        if a.is_write and a.tensor_kind is not None
    ]
    before = [op._versions(v, str(kind)) for v, kind in written]
    result = fn(*args, **kwargs)
    for (v, kind), b in zip(written, before, strict=False):
        op._bump(v, str(kind), b)
    return result


def _generic_call(op: OpOverload, /, *args: Any, **kwargs: Any) -> Any:
    args, kwargs = op._schema.bind(args, kwargs, op._name)
    m = local_state.masks
    ks = (_keyset_of(op, args, kwargs) | m.inc) & m.nexc
    return _invoke(op, ks, args, kwargs)


def _generic_redispatch(op: OpOverload, keyset: int, /, *args: Any, **kwargs: Any) -> Any:
    args, kwargs = op._schema.bind(args, kwargs, op._name)
    return _invoke(op, int(keyset), args, kwargs)


class _Trace(threading.local):
    depth = 0


class _TraceState:
    """Whether calls take the traced path, and where trace lines go."""

    def __init__(self) -> None:
        self.enabled = False
        self.sinks: list[Callable[[str], None]] = []
        self.local = _Trace()


_trace = _TraceState()

# Public (docs/plugins.md): ``trace_state.enabled`` is true while dispatch tracing is on, when a
# kernel that bypasses ``redispatch`` on its fast path should take it, so the trace shows it.
trace_state = _trace


def _emit(line: str) -> None:
    for sink in list(_trace.sinks):
        sink(line)


def _traced(op: OpOverload, ks: int | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    args, kwargs = op._schema.bind(args, kwargs, op._name)
    loc = _trace.local
    indent = "  " * loc.depth
    if ks is None:
        arg_ks = _keyset_of(op, args, kwargs)
        ks = (arg_ks | local_state.masks.inc) & local_state.masks.nexc
        how = "call"
    else:
        how = "redispatch"
    if op._removed:
        op._resolve(ks)  # raises
    try:
        key, kernel = op._select(ks)
    except DispatchError as e:
        _emit(f"{indent}[dispatch] {how} {op._name} keyset={DispatchKeySet(ks)!r} -> error: {e}")
        raise
    skipped = [
        k.name
        for k in DispatchKeySet(ks)
        if k is not key
        and op.fallthrough_mask & (1 << k.bit)
        and _keys.priority_order().index(k) < _keys.priority_order().index(key)
    ]
    src = op.table[key.bit][0]
    via = f" (skipped fallthrough {', '.join(skipped)})" if skipped else ""
    _emit(
        f"{indent}[dispatch] {how} {op._name} keyset={DispatchKeySet(ks)!r} -> {key.name}{via}: "
        f"{'boxed fallback ' if kernel.boxed else ''}{kernel.where} from {src} "
        f"registered by {kernel.registrant}"
    )
    loc.depth += 1
    try:
        return _invoke(op, ks, args, kwargs)
    finally:
        loc.depth -= 1


def _traced_call(op: OpOverload, /, *args: Any, **kwargs: Any) -> Any:
    return _traced(op, None, args, kwargs)


def _traced_redispatch(op: OpOverload, keyset: int, /, *args: Any, **kwargs: Any) -> Any:
    return _traced(op, int(keyset), args, kwargs)


def _set_tracing(enabled: bool) -> None:
    """Switch every operator between the generated and the traced call path."""
    with _lock:
        _trace.enabled = enabled
        for op in _ops.values():
            op._use_fast(not enabled)
            # per-key-set kernels may have been made for the other mode (Note [Per-key-set
            # kernels]): every entry is made again, by the factories, for this one
            op._cache.clear()
        _changed()  # callers holding bound __call__s (public functions) drop them


class _Capture:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)


def _stderr_sink(line: str) -> None:
    print(line, file=sys.stderr)


def tracing(sink: Callable[[str], None]) -> _TraceContext:
    """Context manager: send every dispatch step to ``sink`` (a function of one line)."""
    return _TraceContext(sink)


class _TraceContext:
    def __init__(self, sink: Callable[[str], None]) -> None:
        self.sink = sink

    def __enter__(self) -> None:
        with _lock:
            _trace.sinks.append(self.sink)
            _set_tracing(True)

    def __exit__(self, *exc: object) -> None:
        with _lock:
            _trace.sinks.remove(self.sink)
            _set_tracing(bool(_trace.sinks))


if os.environ.get("TENSORPLUG_SHOW_DISPATCH_TRACE", "") not in ("", "0"):
    _trace.sinks.append(_stderr_sink)
    _trace.enabled = True
