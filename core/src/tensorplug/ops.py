"""``tensorplug.ops``: every defined operator, as ``tp.ops.<namespace>.<op>[.<overload>]``.

``tp.ops.myops.myadd`` is an :class:`OpPacket`: calling it picks the overload whose schema the
arguments fit, in definition order (the first that binds wins, as in PyTorch's Python argument
parser). ``tp.ops.myops.myadd.default`` and ``tp.ops.myops.myadd.Tensor`` are single
:class:`~tensorplug.dispatcher.OpOverload` objects.

Lookups are live: a namespace or packet reflects the operators defined right now, so closing a
library removes its operators from here too. Every cache here (attributes, overload choices) is
filled under the registry lock and emptied by every definition or removal, so no thread caches
an operator another thread just removed (Note [Registration is atomic] in dispatcher/); and
nothing is kept for namespaces whose operators are gone, so defining and closing libraries of
ever new namespaces leaves nothing behind.
"""

from __future__ import annotations

import weakref
from typing import Any

from . import dispatcher as _dispatcher
from .dispatcher import OpOverload
from .errors import RegistrationError
from .tensor import Tensor

__all__ = ["OpPacket", "OpNamespace", "ops"]


class OpPacket:
    """All overloads of one operator; calling it resolves the overload from the arguments."""

    def __init__(self, namespace: str, name: str) -> None:
        self._namespace = namespace
        self._op_name = name
        self.qualname = f"{namespace}::{name}"
        # argument-type signature -> overload (Note [Packet cache])
        self._choice: dict[tuple[Any, ...], OpOverload] = {}

    def _packet_overloads(self) -> list[OpOverload]:
        return _dispatcher.ops_in(self._namespace, self._op_name)

    def overloads(self) -> list[str]:
        return [op.overload_name for op in self._packet_overloads()]

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        name = f"{self.qualname}.{overload}"
        try:
            with _dispatcher._lock:
                op = _dispatcher.find_op(name)
                self.__dict__[overload] = op  # until operators change (_forget_choices)
            return op
        except RegistrationError:
            raise AttributeError(
                f"operator '{self.qualname}' has no overload '{overload}'; "
                f"its overloads are: {', '.join(self.overloads()) or '(none)'}"
            ) from None

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        # The chosen overload is cached per argument-type signature (Note [Packet cache]).
        if kwargs:
            sig: tuple[Any, ...] = (*map(type, args), *kwargs, *map(type, kwargs.values()))
        else:
            sig = tuple(map(type, args))
        op = self._choice.get(sig)
        if op is None:
            op = self._choose(args, kwargs, sig)
        return op(*args, **kwargs)

    def _resolve_overload(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> OpOverload:
        sig = (*map(type, args), *kwargs, *map(type, kwargs.values()))
        return self._choice.get(sig) or self._choose(args, kwargs, sig)

    def _choose(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], sig: tuple[Any, ...]
    ) -> OpOverload:
        """Note [Packet cache]: the first overload whose schema binds the arguments.

        Types decide the choice, except for the contents of lists (``Tensor[]`` vs ``int[]``)
        and tensors taken for numbers (:func:`_types_decide`): such a signature is resolved
        every time and never cached. The
        caches are emptied whenever operators are defined or removed.
        """
        with _dispatcher._lock:  # the overloads and the cache, from one state of the registry
            ovs = list(self._packet_overloads())
            if not ovs:
                raise RegistrationError(f"operator '{self.qualname}' is not defined (any more)")
            cacheable = list not in sig and tuple not in sig
            for op in ovs:
                if len(ovs) == 1 or _fits(op, args, kwargs):
                    if cacheable and _types_decide(op, args, kwargs):
                        self._choice[sig] = op
                    return op
            # an out= overload is a keyword of the function in PyTorch's signatures: a call
            # without out= that fits no other overload gets the one overload's own message
            # (``maximum(): argument 'other' (position 2) must be Tensor, not int``)
            shown = [op for op in ovs if not _outs_not_given(op, kwargs)]
            if len(shown) == 1:
                return shown[0]
        got = ", ".join(
            [
                *(type(a).__name__ for a in args),
                *(f"{k}={type(v).__name__}" for k, v in kwargs.items()),
            ]
        )
        # the overloads of this packet, without the namespace the message starts with
        expected = "\n".join(f" * {str(op.schema).removeprefix(op.namespace + '::')}" for op in ovs)
        raise TypeError(
            f"{self.qualname}() received an invalid combination of arguments - got ({got}), "
            f"but expected one of:\n{expected}"
        )

    def __repr__(self) -> str:
        return f"<OpPacket {self.qualname} overloads={self.overloads()}>"


def _types_decide(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the arguments' types alone made ``op`` fit: not when a tensor was taken for a
    number (an ``int`` or ``Scalar`` parameter binds a 0-dim tensor, as PyTorch's ``__index__``
    and Scalar conversions do), which another tensor of the same type need not be: the
    signature ``(Tensor, int, Tensor, int)`` of ``narrow(x, 0, tp.tensor(1), 1)`` must not
    send ``narrow(x, 0, tp.tensor(1.0), 1)`` to ``narrow.default``."""
    schema = op.schema
    for a, v in zip(schema.positional, args, strict=False):
        if a.tensor_kind is None and isinstance(v, Tensor):
            return False
    if kwargs:
        by_name = {a.name: a for a in schema.arguments}
        for name, v in kwargs.items():
            a = by_name.get(name)
            if a is not None and a.tensor_kind is None and isinstance(v, Tensor):
                return False
    return True


def _outs_not_given(op: OpOverload, kwargs: dict[str, Any]) -> bool:
    """Whether ``op`` is an out= overload and the call names none of its outs."""
    writes = [a.name for a in op.schema.kwarg_only if a.is_write]
    return bool(writes) and "out" not in kwargs and not any(w in kwargs for w in writes)


def _fits(op: OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    try:
        return op.schema.try_bind(args, kwargs) is not None
    except OverflowError:  # a Scalar int beyond 64 bits: raised again, naming the overload
        op.schema.bind(args, kwargs, op.name)
        raise


class OpNamespace:
    """``tp.ops.<namespace>``: attribute access gives the operator packets defined in it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, op_name: str) -> OpPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        with _dispatcher._lock:
            if _dispatcher.ops_in(self._name, op_name):
                p = self.__dict__[op_name] = _packet(self._name, op_name)
                return p
        raise AttributeError(
            f"no operator '{self._name}::{op_name}' is defined. Define it with "
            f"tp.Library('{self._name}', 'DEF').define('{op_name}(...) -> ...')"
        )

    def __dir__(self) -> list[str]:
        return sorted({op.op_name for op in _dispatcher.ops_in(self._name)})

    def __repr__(self) -> str:
        return f"<OpNamespace {self._name}>"


# Packets and namespaces that something still holds (a namespace's attribute cache, a user's
# variable), so that _forget_choices reaches each one; the rest are freed.
_packets: weakref.WeakValueDictionary[tuple[str, str], OpPacket] = weakref.WeakValueDictionary()
_namespaces: weakref.WeakValueDictionary[str, OpNamespace] = weakref.WeakValueDictionary()


def _forget_choices() -> None:
    """Operators were defined or removed: drop every cached choice and attribute, and the
    namespaces that have no operators any more. Runs under the registry lock."""
    for p in list(_packets.values()) if _packets else ():
        p._choice.clear()
        for k in [k for k in p.__dict__ if not k.startswith("_") and k != "qualname"]:
            del p.__dict__[k]
    for space in list(_namespaces.values()) if _namespaces else ():
        for k in [k for k in space.__dict__ if not k.startswith("_")]:
            del space.__dict__[k]
    live = _dispatcher._by_namespace
    for ns in [ns for ns in ops.__dict__ if ns not in live]:
        del ops.__dict__[ns]


_dispatcher._change_listeners.append(_forget_choices)


def _packet(ns: str, name: str) -> OpPacket:
    with _dispatcher._lock:
        p = _packets.get((ns, name))
        if p is None:
            p = _packets[(ns, name)] = OpPacket(ns, name)
        return p


class _Ops:
    def __getattr__(self, ns: str) -> OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        with _dispatcher._lock:
            space = _namespaces.get(ns)
            if space is None:
                space = _namespaces[ns] = OpNamespace(ns)
            if ns in _dispatcher._by_namespace:  # until its last operator is removed
                self.__dict__[ns] = space
            return space

    def __dir__(self) -> list[str]:
        return sorted({op.namespace for op in _dispatcher.all_ops()})


ops = _Ops()
