"""Plain-Python references of the public function and method templates (``_opset/templates.py``,
Note [Template references] in dispatcher/_reference.py): what ``tensorplug.<name>`` and
``Tensor.<name>`` do, without the per-signature cache, the inlined specialized calls or any
generated code. Every call takes what ``general`` takes on a signature's first call: the
``__tensorplug_function__`` protocol, the overload the packet picks, Note [Python argument
conversions] when no overload fits as given, and the named tuple of results; the overload runs
through the schema binder (``reference_call``). The wrappers that are plain Python in the
reference (``requires_grad=`` of ``*_like``, tensors given one by one) are the public
function's own forms; a factory's reference is its public function without the cache (Note
[Public factory fast path] in _opset/functions.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import overrides
from ..dispatcher._reference import reference_call
from ..ops import OpPacket
from . import python_args as _python_args
from .functions import (
    _named_tuples,
    _packs_int_varargs,
    _takes_options,
    _takes_tensor_at,
    _target,
    _tensor_varargs_at,
    _with_requires_grad,
    _with_tensor_varargs,
)
from .native import OpEntry

__all__ = ["reference_function", "reference_method"]


def reference_function(
    name: str, entries: list[OpEntry], public: Callable[..., Any], module: str = "tensorplug"
) -> Callable[..., Any]:
    """The reference of ``public``, the function ``functions._make_function(name, entries,
    module)`` made (it is what ``__tensorplug_function__`` implementations are handed)."""
    target = _target(entries)
    if all("factory" in e.tags for e in entries):
        return _reference_factory(entries, target)
    nt = _named_tuples[name if module == "tensorplug" else f"{module}.{name}"]

    def reference(*args: Any, **kwargs: Any) -> Any:
        return _general(public, target, nt, args, kwargs)

    fn: Callable[..., Any] = reference
    if name.endswith("_like") and all(_takes_options(e) for e in entries):
        fn = _with_requires_grad(fn)
    at = _tensor_varargs_at(entries)
    if at is not None:
        fn = _with_tensor_varargs(fn, at, lone=any(_takes_tensor_at(e, at) for e in entries))
    return fn


def _reference_factory(entries: list[OpEntry], target: Any) -> Callable[..., Any]:
    """A factory's public function by the book (Note [Public factory fast path] in
    _opset/functions.py): sizes given one by one as a list, the overload the packet of the
    functional overloads picks (``out=`` given: of all), Note [Python argument conversions]
    when none fits as given, then ``requires_grad=``; nothing cached, no specialized call."""
    pack = _packs_int_varargs(entries, method=False)
    plain = [e for e in entries if e.op is None or not e.op.schema.is_out]
    no_out = _target(plain) if plain else target

    def reference(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
        if pack and args and type(args[0]) is int:  # zeros(2, 3) means zeros([2, 3])
            args = (list(args),)
        chosen = target if "out" in kwargs else no_out
        r = _bound_call(reference.__name__, target, chosen, args, kwargs)
        if requires_grad:
            r.requires_grad_()
        return r

    reference.__name__ = entries[0].public_name
    return reference


def reference_method(
    name: str, entries: list[OpEntry], public: Callable[..., Any] | None = None
) -> Callable[..., Any]:
    """The reference of ``Tensor.<name>`` (``functions._make_method``); ``public`` is
    ``tensorplug.<name>`` when there is one (what the protocol is handed), else the method."""
    target = _target(entries)
    nt = _named_tuples[name]
    pack = _packs_int_varargs(entries, method=True)
    first = entries[0].op
    assert first is not None
    positional = [a.name for a in first.schema.positional]
    at = positional.index("self") if "self" in positional else 0

    def reference(self: Any, *args: Any, **kwargs: Any) -> Any:
        if at > 0:  # x.where(cond, y) is where(cond, x, y)
            args = (*args[:at], self, *args[at:])
            return _general(public or reference, target, nt, args, kwargs)
        if pack and args and type(args[0]) is int:  # x.view(2, 3) means x.view([2, 3])
            args = (list(args),)
        return _general(public or reference, target, nt, (self, *args), kwargs)

    reference.__name__ = name
    return reference


def _general(
    public: Callable[..., Any],
    target: Any,
    nt: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    """``functions._first_call`` by the book: nothing cached, the overload bound by the schema."""
    relevant = (*args, *kwargs.values())
    if overrides.has_tensorplug_function(relevant):
        return overrides.handle_tensorplug_function(public, relevant, *args, **kwargs)
    r = _bound_call(public.__name__, target, target, args, kwargs)
    return nt(*r) if nt is not None and type(r) is tuple else r


def _bound_call(
    name: str, target: Any, chosen: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """The overload of ``chosen`` (an overload or a packet) that the arguments fit, called
    through the binder; when none of ``target``'s fits as given, Note [Python argument
    conversions] for the function ``name``."""
    try:
        op: Any = chosen
        if isinstance(chosen, OpPacket):
            op = chosen._resolve_overload(args, kwargs)
        return reference_call(op, *args, **kwargs)
    except TypeError:
        overloads = target._packet_overloads() if isinstance(target, OpPacket) else [target]
        if any(o.schema.try_bind(args, kwargs) is not None for o in overloads):
            raise
        converted = _python_args.convert(name, overloads, args, kwargs)
        if converted is None:
            raise
        op, args, kwargs = converted
        return reference_call(op, *args, **kwargs)
