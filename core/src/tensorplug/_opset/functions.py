"""The public functions (``tensorplug.<name>``) and Tensor methods made from the yaml entries of
one name: the packet that picks an overload, the per-signature fast path (Note [Public
function fast path]; its source templates are _opset/templates.py), argument packing,
signatures and docs. _opset/api.py decides which names exist and makes each on first use (Note
[Lazy public functions])."""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable
from typing import Any

from .. import codegen, overrides
from .. import dtypes as _dtypes
from ..device import device as _Device
from ..dispatcher import _change_listeners as _dispatcher_change_listeners
from ..dispatcher import _lock as _dispatcher_lock
from ..ops import OpPacket, _types_decide, ops
from ..schema import type_name
from ..tensor import Tensor
from . import python_args as _python_args
from . import python_forms as _python_forms
from .native import OpEntry
from .templates import _FUNCTION, _LIKE, _METHOD, _NO, _PICK, _WITH_ALPHA, _inlined, _pack

# --- public functions and methods -----------------------------------------------------------

# Types that never take part in __tensorplug_function__: checked with one set lookup per arg.
_PLAIN = frozenset({Tensor, int, float, bool, complex, str, type(None), _dtypes.dtype, _Device})

_LISTS = frozenset({list, tuple})


def _plain_subclass(t: type) -> bool:
    """A Tensor subclass that does not take part in __tensorplug_function__ (``nn.Parameter``):
    its calls dispatch exactly like a Tensor's, so their signatures may be cached too."""
    return (
        issubclass(t, Tensor)
        and getattr(t, "__tensorplug_function__", None)
        is overrides.disabled_tensorplug_function_impl
    )


ReturnTypes = type("return_types", (), {})
return_types = ReturnTypes()

# public name ("linalg.name" in a Python module) -> its named tuple of results, if any
_named_tuples: dict[str, type | None] = {}


def _named_tuple(entries_: list[OpEntry]) -> type | None:
    """The named tuple that functions and methods of these overloads return (max.dim's
    ``(values, indices)``), also set on ``tensorplug.return_types``; ``None`` if none."""
    for e in entries_:
        assert e.op is not None
        rets = e.op.schema.returns
        if len(rets) > 1 and all(r.name for r in rets):
            nt = collections.namedtuple(e.op.op_name, [str(r.name) for r in rets])  # type: ignore[misc]
            setattr(return_types, e.op.op_name, nt)
            return nt
    return None


# Note [Public function fast path]
# A public function caches, per signature of argument types, the overload to call (its bound
# generated ``__call__``). Only signatures made of plain types (_PLAIN: no lists, nothing that
# could define __tensorplug_function__; also Tensor subclasses that do not define it, such as
# nn.Parameter) are cached, so a cache hit also proves that the protocol has nothing to say. The hot path is shaped by what a call costs in CPython:
# * the first two positional arguments arrive in positional-only parameters ``a`` and ``b``, so
#   the common call ``tp.add(x, y)`` builds no argument tuple and unpacks nothing;
# * the answers for the commonest signatures, ``(Tensor,)`` and ``(Tensor, Tensor)``, are also
#   kept in attributes of the cache (``t1``, ``t2``) and read after ``type(x) is Tensor``
#   tests: building and hashing a tuple of types for a dict lookup costs about as much as the
#   rest of this layer;
# * three tensors (``tp.linear(x, w, b)``) look ``(Tensor, Tensor, Tensor)`` up without
#   ``general``'s packing;
# * a method called with one tensor and one keyword (``p.sub_(g, alpha=lr)``, an optimizer's
#   update) looks its signature up without ``general``'s packing (0.8 -> 0.4 us over the op);
#   the methods of ops taking ``alpha`` (add, sub, in place or not) have it as a parameter of
#   their own, so that call builds and unpacks no keyword dict either (:func:`_with_alpha`);
# * anything else (keywords, three or more arguments, other types) takes ``general``, the
#   dict lookup by the full signature.
# What the cache holds is the overload's call specialized to the signature (Note [Specialized
# calls] in dispatcher/_callgen.py; the bound generated ``__call__`` while tracing). And the functions and
# methods are generated from source (_FUNCTION, _METHOD, _WITH_ALPHA in _opset/templates.py), so that the
# specialized calls of the overloads that ``(Tensor,)``, ``(Tensor, Tensor)``, ``(Tensor,
# Tensor, Tensor)`` and ``(Tensor, Tensor, alpha=float)`` pick when types decide are written
# into them (:func:`_inlined`): when the cache holds that very call (``op is _S_2``), its
# lines run in the public function's frame, one Python call less (``tp.add`` with grad:
# 2.06-2.13 -> 1.95-2.01 us; ``p.sub_(g, alpha=0.01)``: 2.02-2.13 -> 1.80-1.84 us). Anything else the cache holds (another overload, a traced call) is
# called as before; a registration change needs nothing (the lines read the operator's
# dispatch cache), and whatever empties the cache (a definition, tracing) empties the match.
# bench/cpu.py measures it: ``tp.add(a, b)`` against ``np.add``.


class _Choices(dict[tuple[Any, ...], Any]):
    """Signature -> bound generated ``__call__``, with ``(Tensor,)`` and ``(Tensor, Tensor)``
    also in ``t1`` / ``t2`` (Note [Public function fast path])."""

    __slots__ = ("t1", "t2", "t3", "t2a", "s1", "s2", "s3", "s2a", "lists")

    def __init__(self, entries: list[OpEntry] | None = None) -> None:
        super().__init__()
        self.t1: Any = None
        self.t2: Any = None
        self.t3: Any = None
        self.t2a: Any = None
        # the operator whose specialized call t1 (t2, t3, t2a) is, else None: what the
        # generated functions test before running that call inline (_inlined)
        self.s1: Any = None
        self.s2: Any = None
        self.s3: Any = None
        self.s2a: Any = None
        # Lists may take part in cached signatures when no overload takes a list of tensors:
        # then a list holds ints (or floats), which neither pick among overloads by their
        # contents nor define __tensorplug_function__; the generated call checks them anyway.
        self.lists = entries is not None and not any(
            a.tensor_kind in ("Tensor[]", "Tensor?[]")
            for e in entries
            if e.op is not None
            for a in e.op.schema.arguments
        )

    def __setitem__(self, sig: tuple[Any, ...], op: Any) -> None:
        super().__setitem__(sig, op)
        special = getattr(op, "specialized_for", None)
        if sig == _T1:
            self.t1, self.s1 = op, special
        elif sig == _T2:
            self.t2, self.s2 = op, special
        elif sig == _T3:
            self.t3, self.s3 = op, special
        elif sig == _T2A:
            self.t2a, self.s2a = op, special

    def clear(self) -> None:
        self.s1 = self.s2 = self.s3 = self.s2a = None  # first: no inline run of a call dropped
        super().clear()
        self.t1 = self.t2 = self.t3 = self.t2a = None


_T1 = (Tensor,)
_T2 = (Tensor, Tensor)
_T3 = (Tensor, Tensor, Tensor)
_T2A = (Tensor, Tensor, "alpha", float)  # p.sub_(g, alpha=lr)
_choice_caches: list[_Choices] = []


def _forget_choices() -> None:
    for c in _choice_caches:
        c.clear()


_dispatcher_change_listeners.append(_forget_choices)


def _target(es: list[OpEntry]) -> Callable[..., Any]:
    """The one overload, or the packet that picks among several."""
    first = es[0].op
    assert first is not None
    if len(es) == 1:
        return first
    packet: Callable[..., Any] = getattr(ops.aten, first.op_name)
    return packet


def _first_call(
    public: Callable[..., Any],
    target: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    sig: tuple[Any, ...],
    choice: _Choices,
    nt: Any,
) -> Any:
    """A signature not seen yet (or one that is never cached): the full path."""
    relevant = (*args, *kwargs.values())
    if overrides.has_tensorplug_function(relevant):
        return overrides.handle_tensorplug_function(public, relevant, *args, **kwargs)
    resolve = getattr(target, "_resolve_overload", None)
    try:
        op: Any = resolve(args, kwargs) if resolve is not None else target
        r = op(*args, **kwargs)
    except TypeError:
        r = _converted_call(public, target, args, kwargs)
    else:
        if all(
            t in _PLAIN or (choice.lists and t in _LISTS) or _plain_subclass(t)
            for t in sig
            if isinstance(t, type)
        ) and _types_decide(op, args, kwargs):
            # cache the call specialized to these types (Note [Specialized calls] in
            # dispatcher/_callgen.py), or the bound generated __call__: one lookup less per call. Tracing
            # swaps the class's __call__, and clears these caches when it does
            # (dispatcher._set_tracing); the lock keeps a callable chosen before that from
            # landing after it.
            with _dispatcher_lock:
                choice[sig] = op._call_for(sig)
    return nt(*r) if nt is not None and type(r) is tuple else r


# Note [Public factory fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A factory's public function caches what to call per signature of argument types, as the
# other public functions do (Note [Public function fast path]): the overload's call
# specialized to the signature (Note [Specialized calls] in dispatcher/_callgen.py), which
# checks only what the types leave open and passes the schema's defaults for the options not
# given. ``zeros(2, 3)`` packs its sizes as the tuple ``(2, 3)``, the form an ``int[]`` binds
# to, so that neither a list nor its conversion back to a tuple is made per call. The first
# call of a signature runs as before (the sizes as a list, the overload picked by the packet,
# whose messages name the list), and so does a call the specialized call refuses (sizes that
# are no ints, a 0-dim tensor: its message is the binder's, the same for a list and a tuple),
# which goes to Note [Python argument conversions] with the sizes as a list; nothing runs
# twice. A call without ``out=`` picks among the functional overloads only.


def _first_factory_call(
    target: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    sig: tuple[Any, ...],
    choice: _Choices,
) -> Any:
    """A factory's call with a signature not seen yet (Note [Public factory fast path]): the
    overload the arguments fit, called; its specialized call cached when the types decided."""
    resolve = getattr(target, "_resolve_overload", None)
    op: Any = resolve(args, kwargs) if resolve is not None else target
    r = op(*args, **kwargs)
    if all(
        t in _PLAIN or (choice.lists and t in _LISTS) for t in sig if isinstance(t, type)
    ) and _types_decide(op, args, kwargs):
        with _dispatcher_lock:  # as _first_call
            choice[sig] = op._call_for(sig)
    return r


def _converted_call(
    public: Callable[..., Any], target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """In an ``except TypeError``: the call with Note [Python argument conversions] applied
    (in _opset/python_args.py), when it fits no overload as given; else the TypeError again."""
    overloads = target._packet_overloads() if isinstance(target, OpPacket) else [target]
    if not any(op.schema.try_bind(args, kwargs) is not None for op in overloads):
        converted = _python_args.convert(public.__name__, overloads, args, kwargs)
        if converted is not None:
            op, args, kwargs = converted
            return op(*args, **kwargs)
    raise  # the TypeError the caller is handling


def _make_function(name: str, es: list[OpEntry], module: str = "tensorplug") -> Callable[..., Any]:
    target = _target(es)
    nt = _named_tuples[name if module == "tensorplug" else f"{module}.{name}"]
    is_factory = all("factory" in e.tags for e in es)
    choice = _Choices(es)
    _choice_caches.append(choice)
    get = choice.get

    fn: Callable[..., Any]
    if is_factory:
        pack = _packs_int_varargs(es, method=False)
        # a call without ``out=`` picks among the functional overloads only (``zeros`` and not
        # ``zeros.out``): one op, not a packet, for most factories
        plain = [e for e in es if e.op is None or not e.op.schema.is_out]
        no_out = _target(plain) if plain else target

        def factory(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
            # Note [Public factory fast path]
            packed = pack and args and type(args[0]) is int  # zeros(2, 3) means zeros((2, 3))
            if packed:
                args = (args,)
            if kwargs:
                sig = (*map(type, args), *kwargs, *map(type, kwargs.values()))
            elif len(args) == 1:
                sig = (type(args[0]),)
            else:
                sig = tuple(map(type, args))
            op = get(sig)
            try:
                if op is None:  # the sizes as a list, as the call was before packing
                    r = _first_factory_call(
                        target if "out" in kwargs else no_out,
                        (list(args[0]),) if packed else args,
                        kwargs,
                        sig,
                        choice,
                    )
                else:
                    r = op(*args, **kwargs)
            except TypeError:
                if packed:
                    args = (list(args[0]),)
                r = _converted_call(factory, target, args, kwargs)
            if requires_grad:
                r.requires_grad_()
            return r

        fn = factory
        overrides._ignored.add(fn)
    else:

        def general(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if kwargs:
                sig = (*map(type, args), *kwargs, *map(type, kwargs.values()))
            else:
                sig = tuple(map(type, args))
            op = get(sig)
            if op is None:
                return _first_call(fn, target, args, kwargs, sig, choice, nt)
            r = op(*args, **kwargs)
            return nt(*r) if nt is not None and type(r) is tuple else r

        # Note [Public function fast path]
        fn = _generate_function(es, choice, general)
        if nt is not None:  # functions with named returns (max.dim, sort, ...): rarer, simpler
            named: type = nt

            def function_nt(a: Any = _NO, b: Any = _NO, /, *rest: Any, **kwargs: Any) -> Any:
                if rest or kwargs or a is _NO:
                    return general(_pack(a, b, rest), kwargs)
                args = (a,) if b is _NO else (a, b)
                op = get(tuple(map(type, args)))
                if op is None:
                    return general(args, kwargs)
                r = op(*args)
                return named(*r) if type(r) is tuple else r

            fn = function_nt
        if name.endswith("_like") and all(_takes_options(e) for e in es):  # zeros_like & co.
            fn = _like_function(fn, es, choice)
        at = _tensor_varargs_at(es)
        if at is not None:  # meshgrid(a, b) means meshgrid([a, b])
            fn = _with_tensor_varargs(fn, at, lone=any(_takes_tensor_at(e, at) for e in es))
        form = _python_forms.FUNCTIONS.get(name) if module == "tensorplug" else None
        if form is not None:  # nonzero(as_tuple=True), einsum's sublists, ...
            fn = form(fn)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    fn.__doc__ = _doc(f"{module}.{name}", es)
    setattr(fn, "_choice", choice)  # noqa: B010 - read by _make_method
    if not is_factory:
        overrides._overridable.setdefault(module, []).append(fn)
        overrides._signatures[fn] = _signature(es[0])
    return fn


def _generate_function(
    es: list[OpEntry], choice: _Choices, general: Callable[..., Any]
) -> Callable[..., Any]:
    """The public function of these entries, with the specialized calls of the overloads that
    one, two and three tensors pick inlined (Note [Public function fast path])."""
    ns: dict[str, Any] = {"general": general}
    inline = {
        "inline1": _inlined(es, _T1, ["a"], 12, ns, "_1"),
        "inline2": _inlined(es, _T2, ["a", "b"], 8, ns, "_2"),
        "inline3": _inlined(es, _T3, ["a", "b", "c"], 16, ns, "_3"),
    }
    return _exec(_FUNCTION, inline, choice, ns, "function")


def _exec(
    template: str, inline: dict[str, str], choice: _Choices, ns: dict[str, Any], name: str
) -> Callable[..., Any]:
    ns.update(T=Tensor, _NO=_NO, _pack=_pack, choice=choice, get=choice.get)
    ns["__name__"] = __name__  # the functions' __module__, as for the closures they replace
    src = template.format(**inline)
    fn = codegen.define(src, ns, f"public {name}", name)
    fn.__source__ = src  # type: ignore[attr-defined]
    return fn


def _tensor_varargs_at(es: list[OpEntry]) -> int | None:
    """Where the tensors of PyTorch's ``f(*tensors)`` functions start (``meshgrid``,
    ``broadcast_tensors``, ``atleast_1d``, ``einsum``'s operands): the position of a ``Tensor[]``
    that is the last positional argument of an overload; ``None`` for other functions."""
    for e in es:
        assert e.op is not None
        pos = e.op.schema.positional
        if pos and pos[-1].tensor_kind == "Tensor[]":
            return len(pos) - 1
    return None


def _takes_tensor_at(e: OpEntry, at: int) -> bool:
    assert e.op is not None
    pos = e.op.schema.positional
    return len(pos) > at and pos[at].tensor_kind == "Tensor"


def _with_tensor_varargs(fn: Callable[..., Any], at: int, *, lone: bool) -> Callable[..., Any]:
    """``fn`` packing the tensors given one by one from position ``at`` into the list its
    schema takes; a lone tensor stays as it is when an overload takes one (``atleast_1d(x)``)."""

    def with_varargs(*args: Any, **kwargs: Any) -> Any:
        if len(args) > at and isinstance(args[at], Tensor) and (len(args) > at + 1 or not lone):
            args = (*args[:at], list(args[at:]))
        return fn(*args, **kwargs)

    return with_varargs


def _takes_options(e: OpEntry) -> bool:
    """Whether ``e``'s schema takes PyTorch's tensor options (dtype, layout, device): the
    public function of a ``*_like`` op then also takes ``requires_grad=``, as PyTorch's Python
    bindings add it to factories and ``*_like`` functions."""
    assert e.op is not None
    names = {a.name for a in e.op.schema.arguments}
    return {"dtype", "layout", "device"} <= names


def _with_requires_grad(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking ``requires_grad=`` too (a public function with tensor options that
    dispatches on a tensor argument, such as ``zeros_like``; factories have their own). The
    public functions are :func:`_like_function`; this is its reference's form (_opset/reference.py)."""

    def with_options(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
        r = fn(*args, **kwargs)
        if requires_grad:
            r.requires_grad_()
        return r

    return with_options


def _like_function(
    plain: Callable[..., Any], es: list[OpEntry], choice: _Choices
) -> Callable[..., Any]:
    """:func:`_with_requires_grad` of ``plain``, generated from _LIKE: the common call, one
    tensor and nothing else, runs the specialized call of ``(Tensor,)`` inline, as ``plain``
    does (Note [Public function fast path]), with no layer in front; anything else goes
    through ``plain``."""
    ns: dict[str, Any] = {"plain": plain}
    inline = {"inline1": _inlined(es, _T1, ["a"], 8, ns, "_1")}
    return _exec(_LIKE, inline, choice, ns, "function")


def _make_method(
    name: str, es: list[OpEntry], function: Callable[..., Any] | None
) -> Callable[..., Any]:
    """``Tensor.<name>``: shares the signature cache of ``tensorplug.<name>`` when there is one."""
    target = _target(es)
    nt = _named_tuples[name]
    public = function
    choice: _Choices | None = getattr(function, "_choice", None)
    if choice is None:
        choice = _Choices(es)
        _choice_caches.append(choice)
    get = choice.get
    pack = _packs_int_varargs(es, method=True)

    def general(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if kwargs:
            sig = (*map(type, args), *kwargs, *map(type, kwargs.values()))
        else:
            sig = tuple(map(type, args))
        op = get(sig)
        if op is None:
            return _first_call(public or method, target, args, kwargs, sig, choice, nt)
        r = op(*args, **kwargs)
        return nt(*r) if nt is not None and type(r) is tuple else r

    # Note [Public function fast path], with ``self`` as ``a``
    ns: dict[str, Any] = {"general": general, "pack": pack, "nt": nt}
    inline = {"inline1": "", "inline2": ""}
    if nt is None:
        inline["inline1"] = _inlined(es, _T1, ["self"], 12, ns, "_1")
        inline["inline2"] = _inlined(es, _T2, ["self", "b"], 12, ns, "_2")
    inline["pick"] = _PICK.format(pad=" " * 8, **inline)
    method = _exec(_METHOD, inline, choice, ns, "method")

    if not pack and _takes_alpha(es):
        method = _with_alpha(method, es, choice, nt)

    first = es[0].op
    assert first is not None
    at = (
        [a.name for a in first.schema.positional].index("self")
        if any(a.name == "self" for a in first.schema.positional)
        else 0
    )
    result: Callable[..., Any] = method
    if at > 0:  # x.where(cond, y) is where(cond, x, y): the tensor is the argument named self

        def reordered(self: Tensor, *args: Any, **kwargs: Any) -> Any:
            return _first_call(
                public or method,
                target,
                (*args[:at], self, *args[at:]),
                kwargs,
                (None,),
                _Choices(),
                nt,
            )

        result = reordered
    form = _python_forms.METHODS.get(name)
    if form is not None:  # x.nonzero(as_tuple=True), ...
        result = form(result)
    result.__name__ = name
    result.__qualname__ = f"Tensor.{name}"
    result.__doc__ = _doc(name, es)
    overrides._overridable.setdefault("Tensor", []).append(result)
    return result


def _takes_alpha(es: list[OpEntry]) -> bool:
    """Whether an overload takes ``alpha`` (``add``, ``sub`` and their in-place forms)."""
    return any(
        e.op is not None and any(a.name == "alpha" for a in e.op.schema.arguments) for e in es
    )


def _with_alpha(
    plain: Callable[..., Any], es: list[OpEntry], choice: _Choices, nt: Any
) -> Callable[..., Any]:
    """``plain`` (a method made by :func:`_make_method`) with ``alpha`` as a keyword parameter
    of its own: ``p.sub_(g, alpha=lr)``, an optimizer's update, then builds no ``**kwargs`` dict
    and calls the cached call with the keyword as such (the interpreter unpacks no dict
    either): 2.7 -> 2.2 us for the update of a small parameter under ``no_grad``. The
    signature looked up is ``general``'s (a hit proves the types plain, subclasses such as
    ``nn.Parameter`` included); a float ``alpha`` with plain tensors runs the specialized call
    inline (``choice.t2a``); calls without ``alpha`` run ``plain``'s fast path, inline."""
    ns: dict[str, Any] = {"plain": plain, "nt": nt}
    inline = {"inline1": "", "inline2": "", "inline_alpha": ""}
    if nt is None:
        inline["inline1"] = _inlined(es, _T1, ["self"], 8, ns, "_1")
        inline["inline2"] = _inlined(es, _T2, ["self", "b"], 8, ns, "_2")
        inline["inline_alpha"] = _inlined(es, _T2A, ["self", "b", "alpha"], 16, ns, "_2a")
    inline["pick"] = _PICK.format(pad=" " * 4, **inline)
    return _exec(_WITH_ALPHA, inline, choice, ns, "method")


def _packs_int_varargs(es: list[OpEntry], *, method: bool) -> bool:
    """Whether ``f(2, 3)`` means ``f([2, 3])``: the only positional argument is an int list.

    True for ``zeros(size)``, and for methods like ``view(self, size)`` / ``permute(self, dims)``,
    also beside overloads that take no int (``view.dtype(self, ScalarType dtype)``).
    """
    lists = False
    for e in es:
        assert e.op is not None
        pos = e.op.schema.positional[1 if method else 0 :]
        if len(pos) == 1 and type_name(pos[0].type) in ("int[]", "int[]?"):
            lists = True
        elif any(type_name(a.type) in ("int", "int?", "Scalar", "Scalar?") for a in pos):
            return False  # f(2) could mean this overload's int: no packing
    return lists


def _doc(name: str, es: list[OpEntry]) -> str:
    qualified = name if name.startswith("tensorplug.") else f"tensorplug.{name}"
    lines = [f"{qualified}: dispatches to the operator overload the arguments fit:", ""]
    for e in es:
        assert e.op is not None
        lines.append(f"    {e.op.schema}")
    return "\n".join(lines)


def _signature(e: OpEntry) -> inspect.Signature:
    assert e.op is not None
    params = []
    for a in e.op.schema.arguments:
        kind = (
            inspect.Parameter.KEYWORD_ONLY
            if a.kwarg_only
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        default = a.default_value if a.has_default else inspect.Parameter.empty
        params.append(inspect.Parameter(a.name, kind, default=default))
    return inspect.Signature(params)
