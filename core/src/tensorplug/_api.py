"""The standard operator set: native_functions.yaml -> operators, functions, methods (internal).

At ``import tensorplug`` this module

1. defines every operator of ``native_functions.yaml`` in the ``aten`` namespace (one ``DEF``
   library owned by the core);
2. registers the composite kernels the yaml names (``dispatch: CompositeImplicitAutograd: fn``,
   functions of :mod:`tensorplug.composites`) and a ``BackendSelect`` kernel for every factory
   (ops without tensor arguments: it picks the backend from ``device=``);
3. makes the public functions (``variants: function`` -> ``tensorplug.<name>``) and the Tensor
   methods (``variants: method``), each on first use (Note [Lazy public functions]). A
   function takes every overload of its name and lets the packet pick one from the
   arguments; it honours ``__tensorplug_function__`` (overrides.py).

Backends provide all other kernels; the core provides none.
"""

from __future__ import annotations

import collections
import inspect
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from . import _backends, _python_args, _schema_cache, composites, overrides
from . import dtypes as _dtypes
from . import keys as _keys
from .device import canonical as _canonical_device
from .device import device as _Device
from .dispatch import local_state
from .dispatcher import OpOverload
from .dispatcher import _change_listeners as _dispatcher_change_listeners
from .dispatcher import _lock as _dispatcher_lock
from .library import Library
from .ops import OpPacket, ops
from .schema import FunctionSchema, parse, type_name
from .tensor import Tensor

__all__ = [
    "OpEntry",
    "entries",
    "function_names",
    "generate_all",
    "generated_function",
    "install",
    "public_functions",
]


class OpEntry:
    """One yaml entry. (A plain class: a dataclass costs half a millisecond at import.)"""

    __slots__ = ("func", "variants", "dispatch", "tags", "python", "python_module", "op")

    def __init__(
        self,
        func: str,
        variants: tuple[str, ...] = ("function",),
        dispatch: dict[str, str] | None = None,
        tags: tuple[str, ...] = (),
        python: str | None = None,
        python_module: str | None = None,
    ) -> None:
        self.func = func
        self.variants = variants
        self.dispatch = {} if dispatch is None else dispatch
        self.tags = tags
        self.python = python
        self.python_module = python_module
        self.op: OpOverload | None = None
        if python_module is not None and python_module not in PYTHON_MODULES:
            raise ValueError(
                f"{_YAML}: {func}: unknown python_module {python_module!r}; the modules are "
                f"{', '.join(PYTHON_MODULES)} (Note [Python modules])"
            )

    def __repr__(self) -> str:
        return f"OpEntry({self.func!r}, variants={self.variants!r})"

    @property
    def public_name(self) -> str:
        """The function's name in its module: ``python:``, else the op's name without the
        module's prefix (``linalg_vector_norm`` is ``tensorplug.linalg.vector_norm``)."""
        assert self.op is not None
        if self.python:
            return self.python
        name = self.op.op_name
        prefix = f"{self.python_module}_"
        return name[len(prefix) :] if self.python_module and name.startswith(prefix) else name


def _load_yaml() -> list[tuple[dict[str, Any], FunctionSchema]]:
    """The yaml entries with their parsed schemas, from a cache when the yaml is unchanged.

    Parsing 400 schemas (each checked for its round trip) and importing PyYAML take tens of
    milliseconds, most of ``import tensorplug``; the cache (Note [Op set cache] in
    _schema_cache.py) is data, private to the user, and used only for the very yaml text and
    parser being loaded. ``importlib.resources`` is not imported for this: it costs more than
    the load itself.
    """
    try:
        with open(os.path.join(os.path.dirname(__file__), _YAML), "rb") as f:
            raw = f.read()
    except OSError:  # not installed as plain files (a zip): importlib.resources reads those
        from importlib import resources

        raw = resources.files("tensorplug").joinpath(_YAML).read_bytes()
    tag = f"{__package__}-{sys.version_info[:2]}-{_schema_mtime()}"
    cached = _schema_cache.load(raw, tag)
    if cached is not None:
        return cached
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: list[dict[str, Any]] = yaml.load(raw.decode(), Loader=loader)
    parsed = [(d, parse(d["func"])) for d in data]
    _schema_cache.store(raw, tag, parsed)
    return parsed


_YAML = "native_functions.yaml"


def _schema_mtime() -> int:
    # a cache written by another version of the parser may hold other schemas
    from . import schema

    return int(os.stat(schema.__file__ or "").st_mtime)


# Note [Lazy public functions]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Generating the ~115 public functions and ~85 Tensor methods (closures, signature caches,
# docs, inspect signatures) cost about 5 ms of ``import tensorplug``, for names most programs
# never use. So install() only records which overloads each name gets. A function is made on
# the first read of ``tensorplug.<name>``: the module's ``__getattr__`` calls
# generated_function, which stores it in the module. A method is made on the first read of
# ``Tensor.<name>``: the class holds a _PendingMethod there, which puts the method in its place.
# After that the name is a plain module or class attribute, so calls never pay for this.
# ``dir(tensorplug)`` includes the names not made yet (function_names), and whatever lists
# every function (tensorplug.overrides) calls generate_all first.

entries: list[OpEntry] = []
public_functions: dict[str, Callable[..., Any]] = {}  # the functions made so far
function_names: frozenset[str] = frozenset()  # every public function, made or not
_function_entries: dict[str, list[OpEntry]] = {}
_method_entries: dict[str, list[OpEntry]] = {}
_methods: dict[str, Callable[..., Any]] = {}  # the methods made so far
_named_tuples: dict[str, type | None] = {}
_order: dict[str, int] = {}  # public name -> position in the yaml (for listings)
_namespace: dict[str, Any] = {}  # the tensorplug module's
_making = threading.RLock()
_library: Library | None = None


def install(namespace: dict[str, Any]) -> None:
    """Define the standard operators; their functions go into ``namespace`` on first use."""
    global _library, _namespace, function_names
    lib = _library = Library("aten", "DEF", owner="tensorplug")
    for raw, parsed in _load_yaml():
        variants = tuple(v.strip() for v in str(raw.get("variants", "function")).split(","))
        e = OpEntry(
            raw["func"],
            variants,
            dict(raw.get("dispatch") or {}),
            tuple(raw.get("tags") or ()),
            raw.get("python"),
            raw.get("python_module"),
        )
        e.op = lib.define(parsed, tags=e.tags)
        e.op.allow_mixed_devices = "mixed_devices" in e.tags
        for key, fn_name in e.dispatch.items():
            lib.impl(e.op, getattr(composites, fn_name), key)
        if "factory" in e.tags:
            lib.impl(e.op, _backend_select(e.op), "BackendSelect", with_keyset=True)
        entries.append(e)

    # Note [Lazy public functions]
    by_name: dict[str, list[OpEntry]] = collections.defaultdict(list)
    for e in entries:
        name = e.public_name
        if e.python_module is not None:  # Note [Python modules]
            _module_entries[e.python_module].setdefault(name, []).append(e)
            _order.setdefault(f"{e.python_module}.{name}", len(_order))
            continue
        if "function" in e.variants or "method" in e.variants:
            by_name[name].append(e)
            _order.setdefault(name, len(_order))
        if "function" in e.variants:
            _function_entries.setdefault(name, []).append(e)
        if "method" in e.variants:
            _method_entries.setdefault(name, []).append(e)
    for module, module_entries in _module_entries.items():
        for name, es in module_entries.items():
            by_name[f"{PYTHON_MODULES[module]}.{name}"] = es
    for name, es in by_name.items():  # tensorplug.return_types is complete from the start
        _named_tuples[name] = _named_tuple(es)
    _namespace = namespace
    function_names = frozenset(_function_entries)
    for name in _method_entries:
        setattr(Tensor, name, _PendingMethod(name))


# Note [Python modules]
# ~~~~~~~~~~~~~~~~~~~~~
# A yaml entry with ``python_module: linalg`` (``special``, ``nn``) makes its function in that
# module instead of ``tensorplug``, as PyTorch's yaml does: ``linalg_vector_norm`` is
# ``tensorplug.linalg.vector_norm`` (the ``linalg_`` prefix dropped, as torch.linalg drops it)
# and ``nn`` entries become ``tensorplug.nn.functional`` functions, beside the hand-written
# ones there. Those modules' ``__getattr__`` make them on first use (Note [Lazy public
# functions]) through generated_function(name, module); they take no Tensor method.

PYTHON_MODULES = {"linalg": "tensorplug.linalg", "special": "tensorplug.special",
                  "nn": "tensorplug.nn.functional"}  # fmt: skip
_module_entries: dict[str, dict[str, list[OpEntry]]] = {m: {} for m in PYTHON_MODULES}
_module_functions: dict[str, dict[str, Callable[..., Any]]] = {m: {} for m in PYTHON_MODULES}


def module_function_names(module: str) -> frozenset[str]:
    """The functions that entries with ``python_module: <module>`` make (Note [Python modules])."""
    return frozenset(_module_entries[module])


def generated_function(name: str, module: str | None = None) -> Callable[..., Any] | None:
    """``tensorplug.<name>`` (or ``<module>``'s, Note [Python modules]), made now if it was
    not yet; ``None`` if there is no such function.

    The module's ``__getattr__`` calls this (Note [Lazy public functions]).
    """
    if module is not None:
        made = _module_functions[module]
        fn = made.get(name)
        if fn is None and name in _module_entries[module]:
            with _making:
                fn = made.get(name)
                if fn is None:
                    fn = made[name] = _make_function(
                        name, _module_entries[module][name], PYTHON_MODULES[module]
                    )
        return fn
    fn = public_functions.get(name)
    if fn is not None or name not in _function_entries:
        return fn
    with _making:
        fn = public_functions.get(name)
        if fn is None:
            fn = public_functions[name] = _make_function(name, _function_entries[name])
            _namespace[name] = fn
        return fn


class _PendingMethod:
    """``Tensor.<name>`` before its first read, which makes the method and puts it in place."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        fn = _generated_method(self.name)
        return fn if obj is None else fn.__get__(obj, cls)

    def __repr__(self) -> str:
        return f"<Tensor.{self.name}, made on first use>"


def _generated_method(name: str) -> Callable[..., Any]:
    with _making:
        fn = _methods.get(name)
        if fn is None:
            function = generated_function(name)
            fn = _methods[name] = _make_method(name, _method_entries[name], function)
        pending = Tensor.__dict__.get(name)
        if isinstance(pending, _PendingMethod) and pending.name == name:
            setattr(Tensor, name, fn)  # unless something replaced the placeholder meanwhile
        return fn


def generate_all() -> None:
    """Make every public function and method not made yet, for listings of all of them."""
    with _making:
        for name in _function_entries:
            generated_function(name)
        for module, module_entries in _module_entries.items():
            for name in module_entries:
                generated_function(name, module)
        for name in _method_entries:
            _generated_method(name)
        for fns in overrides._overridable.values():  # in yaml order, not in order of first use
            fns.sort(key=_yaml_position)


def _yaml_position(f: Callable[..., Any]) -> int:
    module = getattr(f, "__module__", "").removeprefix("tensorplug").lstrip(".")
    module = "nn" if module == "nn.functional" else module
    return _order.get(f"{module}.{f.__name__}" if module else f.__name__, len(_order))


overrides._make_all_hooks.append(generate_all)  # the listings of tensorplug.overrides


# --- BackendSelect for factories ------------------------------------------------------------


def _backend_select(op: OpOverload) -> Callable[..., Any]:
    """Pick the backend of a factory call from ``device=`` and redispatch to it."""
    below = _keys.get("BackendSelect").bit
    state = _keys._state

    def backend_select(ks: Any, *args: Any, **kwargs: Any) -> Any:
        dev = _canonical_device(kwargs.get("device"))
        storage = _backends.for_device_type(dev.type)  # clear error when none is loaded
        kwargs["device"] = dev
        backend_ks = _keys.tensor_keyset(storage.key_name) & local_state.masks.nexc
        # ks.below(BackendSelect) | backend_ks, in ints (DispatchKeySet's operators are Python)
        return op.redispatch((int(ks) & state.below_mask[below]) | backend_ks, *args, **kwargs)

    backend_select.__qualname__ = f"backend_select[{op.name}]"
    return backend_select


# --- public functions and methods -----------------------------------------------------------

# Types that never take part in __tensorplug_function__: checked with one set lookup per arg.
_PLAIN = frozenset({Tensor, int, float, bool, complex, str, type(None), _dtypes.dtype, _Device})

_LISTS = frozenset({list, tuple})


def _plain_subclass(t: type) -> bool:
    """A Tensor subclass that does not take part in __tensorplug_function__ (``nn.Parameter``):
    its calls dispatch exactly like a Tensor's, so their signatures may be cached too."""
    return issubclass(t, Tensor) and not hasattr(t, "__tensorplug_function__")


ReturnTypes = type("return_types", (), {})
return_types = ReturnTypes()


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
# * anything else (keywords, three or more arguments, other types) takes ``general``, the
#   dict lookup by the full signature.
# bench/cpu.py measures it: ``tp.add(a, b)`` against ``np.add``.


class _Choices(dict[tuple[Any, ...], Any]):
    """Signature -> bound generated ``__call__``, with ``(Tensor,)`` and ``(Tensor, Tensor)``
    also in ``t1`` / ``t2`` (Note [Public function fast path])."""

    __slots__ = ("t1", "t2", "lists")

    def __init__(self, entries: list[OpEntry] | None = None) -> None:
        super().__init__()
        self.t1: Any = None
        self.t2: Any = None
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
        if sig == _T1:
            self.t1 = op
        elif sig == _T2:
            self.t2 = op

    def clear(self) -> None:
        super().clear()
        self.t1 = self.t2 = None


_T1 = (Tensor,)
_T2 = (Tensor, Tensor)
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
        ):
            # cache the bound generated __call__: one lookup less per call. Tracing swaps the
            # class's __call__, and clears these caches when it does (dispatcher._set_tracing);
            # the lock keeps a __call__ read before that from landing after it.
            with _dispatcher_lock:
                op._generate()
                choice[sig] = op.__call__
    return nt(*r) if nt is not None and type(r) is tuple else r


def _converted_call(
    public: Callable[..., Any], target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """In an ``except TypeError``: the call with Note [Python argument conversions] applied
    (in _python_args.py), when it fits no overload as given; else the TypeError again."""
    overloads = target._packet_overloads() if isinstance(target, OpPacket) else [target]
    if not any(op.schema.try_bind(args, kwargs) is not None for op in overloads):
        converted = _python_args.convert(public.__name__, overloads, args, kwargs)
        if converted is not None:
            op, args, kwargs = converted
            return op(*args, **kwargs)
    raise  # the TypeError the caller is handling


# "no argument here": the default of the public functions' positional-only parameters
_NO: Any = type("NoArgument", (), {"__repr__": lambda self: "<no argument>"})()


def _pack(a: Any, b: Any, rest: tuple[Any, ...]) -> tuple[Any, ...]:
    """The positional arguments of a public function call, from its fast parameters."""
    if a is _NO:
        return ()
    if b is _NO:
        return (a,)
    return (a, b, *rest)


def _make_function(name: str, es: list[OpEntry], module: str = "tensorplug") -> Callable[..., Any]:
    target = _target(es)
    nt = _named_tuples[name if module == "tensorplug" else f"{module}.{name}"]
    is_factory = all("factory" in e.tags for e in es)
    choice = _Choices(es)
    _choice_caches.append(choice)
    get = choice.get
    T = Tensor

    fn: Callable[..., Any]
    if is_factory:
        pack = _packs_int_varargs(es, method=False)

        def factory(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
            if pack and args and type(args[0]) is int:  # zeros(2, 3) means zeros([2, 3])
                args = (list(args),)
            try:
                r = target(*args, **kwargs)
            except TypeError:
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
        def function(a: Any = _NO, b: Any = _NO, /, *rest: Any, **kwargs: Any) -> Any:
            if rest or kwargs or a is _NO:
                return general(_pack(a, b, rest), kwargs)
            if b is _NO:
                op = choice.t1 if type(a) is T else get((type(a),))
                if op is None:
                    return general((a,), kwargs)
                return op(a)
            op = choice.t2 if type(a) is T and type(b) is T else get((type(a), type(b)))
            if op is None:
                return general((a, b), kwargs)
            return op(a, b)

        fn = function
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
            fn = _with_requires_grad(fn)
        at = _tensor_varargs_at(es)
        if at is not None:  # meshgrid(a, b) means meshgrid([a, b])
            fn = _with_tensor_varargs(fn, at, lone=any(_takes_tensor_at(e, at) for e in es))
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    fn.__doc__ = _doc(f"{module}.{name}", es)
    setattr(fn, "_choice", choice)  # noqa: B010 - read by _make_method
    if not is_factory:
        overrides._overridable.setdefault(module, []).append(fn)
        overrides._signatures[fn] = _signature(es[0])
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
    dispatches on a tensor argument, such as ``zeros_like``; factories have their own)."""

    def with_options(*args: Any, requires_grad: bool = False, **kwargs: Any) -> Any:
        r = fn(*args, **kwargs)
        if requires_grad:
            r.requires_grad_()
        return r

    return with_options


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
    T = Tensor

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
    def method(self: Tensor, b: Any = _NO, /, *rest: Any, **kwargs: Any) -> Any:
        if pack and type(b) is int:  # x.view(2, 3) means x.view([2, 3])
            return general((self, [b, *rest]), kwargs)
        if rest or kwargs:
            return general(_pack(self, b, rest), kwargs)
        if type(self) is T:
            op = choice.t1 if b is _NO else choice.t2 if type(b) is T else get((T, type(b)))
            if op is not None:
                r = op(self) if b is _NO else op(self, b)
                return nt(*r) if nt is not None and type(r) is tuple else r
        return general(_pack(self, b, rest), kwargs)

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
    result.__name__ = name
    result.__qualname__ = f"Tensor.{name}"
    result.__doc__ = _doc(name, es)
    overrides._overridable.setdefault("Tensor", []).append(result)
    return result


def _packs_int_varargs(es: list[OpEntry], *, method: bool) -> bool:
    """Whether ``f(2, 3)`` means ``f([2, 3])``: the only positional argument is an int list.

    True for ``zeros(size)``, and for methods like ``view(self, size)`` / ``permute(self, dims)``.
    """
    for e in es:
        assert e.op is not None
        pos = e.op.schema.positional[1 if method else 0 :]
        if len(pos) != 1 or type_name(pos[0].type) not in ("int[]", "int[]?"):
            return False
    return True


def _doc(name: str, es: list[OpEntry]) -> str:
    qualified = name if name.startswith("tensorplug.") else f"tensorplug.{name}"
    lines = [f"{qualified}: dispatches to the operator overload the arguments fit:", ""]
    for e in es:
        assert e.op is not None
        lines.append(f"    aten::{e.op.schema}")
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


__all__ += ["return_types", "OpPacket"]
