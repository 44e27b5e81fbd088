"""The ``__tensorplug_function__`` protocol (the role of ``__torch_function__`` / NEP 18).

A public function of tensorplug (``tp.add``, ``tp.sum``, ...) called with an argument whose type
defines ``__tensorplug_function__`` hands the call to that type instead of dispatching::

    class ScalarTensor:
        @classmethod
        def __tensorplug_function__(cls, func, types, args=(), kwargs=None):
            if func not in HANDLED_FUNCTIONS:
                return NotImplemented
            return HANDLED_FUNCTIONS[func](*args, **(kwargs or {}))

The rules are NEP 18's: the candidates are the arguments (also inside lists and tuples) whose
type defines the method and is not ``Tensor`` itself; subclasses go before their superclasses,
otherwise left to right, each type once; ``NotImplemented`` passes to the next; when every one
returns ``NotImplemented`` the call raises ``TypeError``.

Usage::

    tensorplug.overrides.get_overridable_functions()   # {tensorplug: [...], Tensor: [...]}
    tensorplug.overrides.get_testing_overrides()       # {tp.add: lambda input, other, ...: -1}
    tensorplug.overrides.get_ignored_functions()       # factories and other non-overridable names
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "get_ignored_functions",
    "get_overridable_functions",
    "get_testing_overrides",
    "handle_tensorplug_function",
    "has_tensorplug_function",
    "is_tensor_like",
]

# Filled by _api.py as it makes the public functions, on first use (Note [Lazy public
# functions]): the listings below have it make them all first.
_overridable: dict[Any, list[Callable[..., Any]]] = {}
_ignored: set[Callable[..., Any]] = set()
_signatures: dict[Callable[..., Any], inspect.Signature] = {}


def _candidates(values: Iterable[Any]) -> list[Any]:
    """Arguments whose types take part, in NEP 18 order (one per type)."""
    from .tensor import Tensor

    found: list[Any] = []
    types: list[type] = []

    def visit(v: Any) -> None:
        t = type(v)
        if t is list or t is tuple:
            for x in v:
                visit(x)
            return
        if t is Tensor or t in types or not hasattr(t, "__tensorplug_function__"):
            return
        # subclasses before superclasses: insert before the first superclass already found
        pos = len(found)
        for i, other in enumerate(types):
            if issubclass(t, other):
                pos = i
                break
        found.insert(pos, v)
        types.insert(pos, t)

    for v in values:
        visit(v)
    return found


def has_tensorplug_function(values: Iterable[Any]) -> bool:
    """True when any of ``values`` (or an element of a list among them) takes the call over."""
    return bool(_candidates(values))


def handle_tensorplug_function(
    public: Callable[..., Any], relevant: Iterable[Any], *args: Any, **kwargs: Any
) -> Any:
    """Offer the call of ``public`` to each candidate type in turn (NEP 18 order)."""
    cands = _candidates(relevant)
    types = tuple(type(c) for c in cands)
    for c in cands:
        result = type(c).__tensorplug_function__(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    names = ", ".join(sorted({t.__name__ for t in types}))
    qual = getattr(public, "__qualname__", repr(public))
    raise TypeError(
        f"no implementation found for 'tensorplug.{qual}' on types that implement "
        f"__tensorplug_function__: [{names}]"
    )


def is_tensor_like(x: Any) -> bool:
    from .tensor import Tensor

    return isinstance(x, Tensor) or hasattr(type(x), "__tensorplug_function__")


def get_overridable_functions() -> dict[Any, list[Callable[..., Any]]]:
    """Namespace (the ``tensorplug`` module, ``Tensor``) -> functions the protocol covers."""
    _make_all()
    return {ns: list(fns) for ns, fns in _overridable.items()}


def get_ignored_functions() -> set[Callable[..., Any]]:
    """Public functions that never consult the protocol (they take no tensor-like argument)."""
    _make_all()
    return set(_ignored)


def get_testing_overrides() -> dict[Callable[..., Any], Callable[..., Any]]:
    """Each overridable function -> a dummy with the same signature that returns -1."""
    _make_all()
    out: dict[Callable[..., Any], Callable[..., Any]] = {}
    for fns in _overridable.values():
        for fn in fns:
            sig = _signatures.get(fn)
            out[fn] = _dummy(sig)
    return out


def _make_all() -> None:
    from . import _api

    _api.generate_all()


def _dummy(sig: inspect.Signature | None) -> Callable[..., Any]:
    def dummy(*args: Any, **kwargs: Any) -> int:
        return -1

    if sig is not None:
        dummy.__signature__ = sig  # type: ignore[attr-defined]
    return dummy
