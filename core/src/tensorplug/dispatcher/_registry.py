"""The registry: the operators by name and by namespace, the fallbacks, the lock every change
and cache fill holds, the generation that counts those changes, and registering and removing
operators and fallbacks.

The Notes of the dispatcher are in ``dispatcher/__init__.py``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .. import keys as _keys
from ..errors import RegistrationError
from ..keys import DispatchKey
from ._kernel import Kernel

if TYPE_CHECKING:
    from ._op import OpOverload

# Note [Registration is atomic]: every change of the registry, and every cache fill
_lock = _keys.registry_lock
_ops: dict[str, OpOverload] = {}  # "ns::op.overload" (or "ns::op" for default) -> op
_fallbacks: dict[str, Kernel] = {}  # registration key name -> fallback on top of its stack
_fallback_stacks: dict[str, list[Kernel]] = {}  # registration key name -> every open fallback


def _fallback_for(k: DispatchKey) -> Kernel | None:
    """The fallback of runtime key ``k``: registered for ``k`` itself, else for an alias of it."""
    global _fallback_by_bit
    if _fallback_by_bit is None:
        by_bit: dict[int, Kernel] = {}
        for name, fb in _fallbacks.items():  # aliases first, so direct registrations win
            if _keys.get(name).is_alias:
                for rk in _keys.expand(name):
                    by_bit.setdefault(rk.bit, fb)
        for name, fb in _fallbacks.items():
            key = _keys.get(name)
            if not key.is_alias:
                by_bit[key.bit] = fb
        _fallback_by_bit = by_bit
    return _fallback_by_bit.get(k.bit)


# runtime key bit -> fallback; rebuilt on first use after fallbacks or keys change
_fallback_by_bit: dict[int, Kernel] | None = None


_change_listeners: list[Callable[[], None]] = []

# Bumped by every change that can alter what a call runs: a kernel or fallback registered or
# removed, an operator defined or removed, a key added or removed (Note [Registry generation]).
# Rebound, so other modules read and bump it as ``_registry._generation``, never by name.
_generation = 0


def generation() -> int:
    """A number that changes whenever what some call would run may have changed.

    Note [Registry generation]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~
    Plugins that remember dispatch decisions (``tp.compile`` keeps the kernels a trace chose)
    compare the generation they saw with this one before reusing them: equal means no kernel,
    fallback, operator or key was registered or removed since, so every ``kernel_for`` answer
    still holds. Reading it is one global load, cheap enough for a per-call guard.
    """
    return _generation


def _changed() -> None:
    """Operators were defined or removed (or tracing toggled): drop dependent caches.

    Called with the registry lock held, so that no cache is refilled from the old state after
    it was dropped (Note [Registration is atomic]).
    """
    global _generation, _pending
    with _lock:
        _generation += 1
        if _deferring:
            _pending = True
            return
        for listener in _change_listeners:
            listener()


# Note [Deferred change listeners]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Start-up defines ~400 operators, and each definition would run every change listener (each
# drops every cached choice of the packets and public functions, ~2 ms in all). Inside
# ``deferred_changes()`` the generation still grows with each change, but the listeners run
# once, when the block ends. The block holds the registry lock throughout, so no other thread
# sees, or fills a cache from, the state in between; the code inside reads no cache the
# listeners drop.
_deferring = 0
_pending = False


@contextlib.contextmanager
def deferred_changes() -> Iterator[None]:
    """Run the change listeners once, at the end of the block (Note [Deferred change
    listeners])."""
    global _deferring, _pending
    with _lock:
        _deferring += 1
        try:
            yield
        finally:
            _deferring -= 1
            if not _deferring and _pending:
                _pending = False
                for listener in _change_listeners:
                    listener()


def _register_op(op: OpOverload) -> None:
    with _lock:
        _ops[op._name] = op
        _by_namespace.setdefault(op.namespace, {}).setdefault(op.op_name, []).append(op)
        op._recompute()
        _changed()


def _remove_op(op: OpOverload) -> None:
    with _lock:
        if _ops.get(op._name) is op:
            del _ops[op._name]
            by_name = _by_namespace[op.namespace]
            ovs = by_name[op.op_name]
            ovs.remove(op)
            if not ovs:  # nothing is kept for names and namespaces without operators
                del by_name[op.op_name]
                if not by_name:
                    del _by_namespace[op.namespace]
        op._removed = True
        op._cache.clear()
        _changed()


def _add_fallback(k: Kernel, override: bool) -> None:
    name = k.key.name
    with _lock:
        old = _fallbacks.get(name)
        if old is not None and not override:
            raise RegistrationError(
                f"a fallback for key {name!r} is already registered by {old.registrant} "
                f"({old.where}); {k.registrant} tried to register another ({k.where}). "
                "Pass override=True to replace it."
            )
        _fallback_stacks.setdefault(name, []).append(k)
        _fallbacks[name] = k
        _recompute_all()


def _remove_fallback(k: Kernel) -> None:
    """Take ``k`` off its key's stack, wherever it is: what is then on top is the fallback."""
    name = k.key.name
    with _lock:
        stack = _fallback_stacks.get(name, [])
        if k in stack:
            stack.remove(k)
            if stack:
                _fallbacks[name] = stack[-1]
            else:
                del _fallback_stacks[name]
                del _fallbacks[name]
        k.removed = True
        _recompute_all()


def _recompute_all() -> None:
    global _fallback_by_bit, _generation
    with _lock:
        _fallback_by_bit = None
        _generation += 1
        for op in _ops.values():  # op._recompute() inline: start-up runs this ~20 times
            op._dirty = True
            if op._cache:
                op._cache.clear()


_keys._state.listeners.append(_recompute_all)


def all_ops() -> list[OpOverload]:
    with _lock:
        return list(_ops.values())


def ops_in(namespace: str, op_name: str | None = None) -> list[OpOverload]:
    """The overloads defined in ``namespace`` (of operator ``op_name``), in definition order."""
    by_name = _by_namespace.get(namespace, {})
    if op_name is not None:
        return list(by_name.get(op_name, ()))
    with _lock:  # a comprehension over a dict another thread may change
        return [op for ovs in by_name.values() for op in ovs]


# namespace -> op name -> overloads, kept beside _ops so tp.ops lookups need no scan
_by_namespace: dict[str, dict[str, list[OpOverload]]] = {}


# Filled from above (Note [Dispatch source] in _source.py): op -> [(name, public function that
# calls it)]; kept here, below ``_source``, which is imported only when ``source`` is called
_source_callers: list[Callable[[OpOverload], list[tuple[str, Callable[..., Any]]]]] = []
