"""``tensorplug.ops``: every defined operator, as ``tp.ops.<namespace>.<op>[.<overload>]``.

``tp.ops.myops.myadd`` is an :class:`OpPacket`: calling it picks the overload whose schema the
arguments fit, in definition order (the first that binds wins, as in PyTorch's Python argument
parser). ``tp.ops.myops.myadd.default`` and ``tp.ops.myops.myadd.Tensor`` are single
:class:`~tensorplug.dispatcher.OpOverload` objects.

Lookups are live: a namespace or packet reflects the operators defined right now, so closing a
library removes its operators from here too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import dispatcher as _dispatcher
from .dispatcher import OpOverload
from .errors import RegistrationError

__all__ = ["OpPacket", "OpNamespace", "ops"]


class OpPacket:
    """All overloads of one operator; calling it resolves the overload from the arguments."""

    def __init__(self, namespace: str, name: str) -> None:
        self._namespace = namespace
        self._op_name = name
        self.qualname = f"{namespace}::{name}"
        # argument-type signature -> overload, for calls without list arguments
        self._choice: dict[tuple[Any, ...], OpOverload] = {}
        self._generation = -1

    def _packet_overloads(self) -> Iterator[OpOverload]:
        for op in _dispatcher.ops_in(self._namespace):
            if op.op_name == self._op_name:
                yield op

    def overloads(self) -> list[str]:
        return [op.overload_name for op in self._packet_overloads()]

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        name = f"{self.qualname}.{overload}"
        try:
            return _dispatcher.find_op(name)
        except RegistrationError:
            raise AttributeError(
                f"operator '{self.qualname}' has no overload '{overload}'; "
                f"its overloads are: {', '.join(self.overloads()) or '(none)'}"
            ) from None

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        return self._resolve_overload(args, kwargs)(*args, **kwargs)

    def _resolve_overload(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> OpOverload:
        gen = _dispatcher.generation()
        if gen != self._generation:
            self._choice.clear()
            self._generation = gen
        sig: tuple[Any, ...] | None = (*map(type, args), *kwargs)
        if any(t is list or t is tuple for t in sig):  # type: ignore[union-attr]
            sig = None  # element types matter: bind every time
        else:
            op = self._choice.get(sig)  # type: ignore[arg-type]
            if op is not None:
                return op
        ovs = list(self._packet_overloads())
        if not ovs:
            raise RegistrationError(f"operator '{self.qualname}' is not defined (any more)")
        if len(ovs) == 1:
            return ovs[0]
        for op in ovs:
            if op.schema.try_bind(args, kwargs) is not None:
                if sig is not None:
                    self._choice[sig] = op
                return op
        got = ", ".join([*(type(a).__name__ for a in args), *(f"{k}={type(v).__name__}" for k, v in kwargs.items())])
        expected = "\n".join(f" * {op.schema}" for op in ovs)
        raise TypeError(
            f"{self.qualname}() received an invalid combination of arguments - got ({got}), "
            f"but expected one of:\n{expected}"
        )

    def __repr__(self) -> str:
        return f"<OpPacket {self.qualname} overloads={self.overloads()}>"


class OpNamespace:
    """``tp.ops.<namespace>``: attribute access gives the operator packets defined in it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, op_name: str) -> OpPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        for op in _dispatcher.ops_in(self._name):
            if op.op_name == op_name:
                return _packet(self._name, op_name)
        raise AttributeError(
            f"no operator '{self._name}::{op_name}' is defined. Define it with "
            f"tp.Library('{self._name}', 'DEF').define('{op_name}(...) -> ...')"
        )

    def __dir__(self) -> list[str]:
        return sorted({op.op_name for op in _dispatcher.ops_in(self._name)})

    def __repr__(self) -> str:
        return f"<OpNamespace {self._name}>"


_packets: dict[tuple[str, str], OpPacket] = {}


def _packet(ns: str, name: str) -> OpPacket:
    p = _packets.get((ns, name))
    if p is None:
        p = _packets[(ns, name)] = OpPacket(ns, name)
    return p


class _Ops:
    def __getattr__(self, ns: str) -> OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        return OpNamespace(ns)

    def __dir__(self) -> list[str]:
        return sorted({op.namespace for op in _dispatcher.all_ops()})


ops = _Ops()
