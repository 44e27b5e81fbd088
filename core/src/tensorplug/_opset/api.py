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

Backends provide all other kernels; the core provides none. The yaml is read by
_opset/native.py; the functions and methods are made by _opset/functions.py.
"""

from __future__ import annotations

import collections
import importlib
import threading
from collections.abc import Callable
from typing import Any

from .. import _backends, codegen, composites, overrides
from .. import keys as _keys
from .. import schema as _schema
from ..device import canonical as _canonical_device
from ..dispatch import local_state
from ..dispatcher import OpOverload, _callgen, trace_state
from ..dispatcher import _source_callers as _dispatcher_source_callers
from ..dispatcher._library import Library
from ..dispatcher._registry import deferred_changes as _dispatcher_deferred_changes
from ..ops import OpPacket
from ..tensor import Tensor
from .functions import _make_function, _make_method, _named_tuple, _named_tuples, return_types
from .native import PYTHON_MODULES, OpEntry, _load_yaml
from .outs import out_kernel

# the module (``tensorplug.device`` is the class once the package is imported): the generated
# BackendSelect kernels read its ``_default_device`` on every call
_device_module = importlib.import_module("..device", __package__)

__all__ = [
    "OpEntry",
    "entries",
    "function_names",
    "generate_all",
    "generated_function",
    "install",
    "public_functions",
]


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
_order: dict[str, int] = {}  # public name -> position in the yaml (for listings)
_namespace: dict[str, Any] = {}  # the tensorplug module's
_making = threading.RLock()
_library: Library | None = None


def install(namespace: dict[str, Any]) -> None:
    """Define the standard operators; their functions go into ``namespace`` on first use."""
    global _library, _namespace, function_names
    lib = _library = Library("aten", "DEF", owner="tensorplug")
    _defined: dict[str, OpOverload] = {}  # "abs.default" -> its overload
    with _dispatcher_deferred_changes():  # Note [Deferred change listeners]
        for raw, parsed in _load_yaml():
            variants = tuple(v.strip() for v in str(raw.get("variants", "function")).split(","))
            e = OpEntry(
                raw["func"],
                variants,
                dict(raw.get("dispatch") or {}),
                tuple(raw.get("tags") or ()),
                raw.get("python"),
                raw.get("python_module"),
                raw.get("derived_from"),
            )
            if not parsed.namespace:  # this run's own object: named as the operator will
                # print it, so OpOverload keeps it instead of making a namespaced copy
                object.__setattr__(parsed, "namespace", "aten")
            e.op = lib.define(parsed, tags=e.tags)
            e.op.allow_mixed_devices = "mixed_devices" in e.tags
            for key, fn_name in e.dispatch.items():
                lib.impl(e.op, getattr(composites, fn_name), key)
            if e.derived_from is not None:  # Note [Derived out= overloads]
                functional, outs, dropped = e.derived_from
                kernel = out_kernel(e.op, _defined[functional], outs, dropped)
                lib.impl(e.op, kernel, "CompositeExplicitAutograd")
            elif "factory" in e.tags:
                lib.impl(e.op, _backend_select(e.op), "BackendSelect", per_keyset=True)
            _defined[e.op.name.partition("::")[2]] = e.op
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


def _public_callers(op: OpOverload) -> list[tuple[str, Callable[..., Any]]]:
    """The public function of ``op``'s yaml entry (made now if it was not yet), which calls it:
    ``tp.dispatcher.source`` shows it above the dispatch call (Note [Dispatch source] in
    dispatcher/_source.py)."""
    for e in entries:
        if e.op is op and (e.python_module is not None or "function" in e.variants):
            fn = generated_function(e.public_name, e.python_module)
            where = "tensorplug" if e.python_module is None else PYTHON_MODULES[e.python_module]
            return [] if fn is None else [(f"{where}.{e.public_name}", fn)]
    return []


_dispatcher_source_callers.append(_public_callers)  # a table filled from above


# --- BackendSelect for factories ------------------------------------------------------------

# Note [Generated BackendSelect kernels]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A factory's ``BackendSelect`` kernel picks the backend from ``device=`` and redispatches to
# it. Taking the call as ``(*args, **kwargs)`` built a dict of the four tensor options and
# unpacked it again into the backend's kernel, on every call (~0.4 us of ``tp.zeros(3)``'s
# 3.2). So the kernel is generated per operator from its schema, as the dispatcher's call
# functions are (Note [Generated call functions] in dispatcher/_callgen.py): its parameters
# are the schema's (positional ones positional, keyword-only ones keyword-only, defaults the
# schema's), and it calls the backend's kernel with them as the generated call passes them,
# ``device=`` replaced by the canonical device. What a device argument means (its canonical
# device and the key set of its backend's tensors) is looked up by the argument's identity in
# ``_backends`` (Note [Factory targets] there); ``None`` reads the default device each call.
# The key set to redispatch with is the call's key set below ``BackendSelect`` (an int bound
# per key set: Note [Per-key-set kernels]) or'ed with the backend's keys that the thread does
# not exclude. Operators whose argument names are no Python parameters (or that take no
# ``device``) keep the generic kernel.

_BACKEND_SELECT = """
def backend_select({params}):
    _d = _dm._default_device if device is None else device
    _t = _targets.get(id(_d))
    if _t is None or _t[0] is not _d:
        _t = _target(_d)
    _ks = _above | (_t[2] & _tls.masks.nexc)
    if _trace.enabled:  # the trace shows the redispatch
        return _op.redispatch(_ks, {args})
    try:
        _k = _cache[_ks]
    except KeyError:
        _k = _op.kernel_for(_ks)
    return _k({args})
"""


def _backend_select(op: OpOverload) -> Callable[..., Any]:
    """The ``per_keyset`` factory (Note [Per-key-set kernels] in the dispatcher) of the kernel
    that picks the backend of a factory call from ``device=`` and redispatches to it (Note
    [Generated BackendSelect kernels]).

    Made per key set, the kernel has the key set and the mask below ``BackendSelect`` as ints
    (they change only with the keys, which empties the dispatch cache and so remakes it), and
    takes the call's arguments as they come, with no ``DispatchKeySet`` bound in front."""
    below = _keys.get("BackendSelect").bit
    schema = op.schema
    names = [a.name for a in schema.arguments]
    if "device" not in names or not _callgen.usable_names(schema) or "_d" in names:
        return _generic_backend_select(op)
    ns: dict[str, Any] = {
        "_dm": _device_module,
        "_targets": _backends.factory_targets,
        "_target": _backends.factory_target,
        "_tls": local_state,
        "_trace": trace_state,
        "_op": op,
        "_cache": op.kernel_cache,
    }
    params: list[str] = []
    kw: list[str] = []
    for i, a in enumerate(schema.arguments):
        if a.has_default:
            try:
                ns[f"_D{i}"] = _schema.normalize_argument(a.default_value, a.type)
            except Exception:
                ns[f"_D{i}"] = a.default_value
            spec = f"{a.name}=_D{i}"
        else:
            spec = a.name
        (kw if a.kwarg_only else params).append(spec)
    if kw:
        params += ["*", *kw]
    args = ", ".join(
        [
            *(a.name for a in schema.positional),
            *(
                f"{a.name}=_t[1]" if a.name == "device" else f"{a.name}={a.name}"
                for a in schema.kwarg_only
            ),
        ]
    )
    src = _BACKEND_SELECT.format(params=", ".join(params), args=args)
    label = f"BackendSelect {op.name}"

    def factory(op_: Any, ks: Any) -> Callable[..., Any]:
        above = int(ks) & _keys._state.below_mask[below]  # ks.below(BackendSelect), as an int
        fn = codegen.define(src, {**ns, "_above": above}, label, "backend_select")
        fn.__qualname__ = f"backend_select[{op.name}]"
        fn.__source__ = src  # type: ignore[attr-defined]
        return fn

    factory.__qualname__ = f"backend_select_factory[{op.name}]"
    return factory


def _generic_backend_select(op: OpOverload) -> Callable[..., Any]:
    """Note [Generated BackendSelect kernels]: the kernel of a factory whose arguments cannot be
    Python parameters, taking them as they come."""
    below = _keys.get("BackendSelect").bit
    cache = op.kernel_cache
    keysets = _keys.tensor_keyset
    for_device = _backends.for_device

    def factory(op_: Any, ks: Any) -> Callable[..., Any]:
        above = int(ks) & _keys._state.below_mask[below]  # ks.below(BackendSelect), as an int

        def backend_select(*args: Any, **kwargs: Any) -> Any:
            dev = _canonical_device(kwargs.get("device"))
            storage = for_device(dev)  # clear error when none is loaded
            kwargs["device"] = dev
            below_ks = above | (keysets(storage.key_name) & local_state.masks.nexc)
            if trace_state.enabled:  # the trace shows the redispatch
                return op.redispatch(below_ks, *args, **kwargs)
            # what op.redispatch does, without checking again the arguments the call checked
            # (the canonical device passes as it is)
            k = cache.get(below_ks)
            if k is None:
                k = op.kernel_for(below_ks)
            return k(*args, **kwargs)

        backend_select.__qualname__ = f"backend_select[{op.name}]"
        return backend_select

    factory.__qualname__ = f"backend_select_factory[{op.name}]"
    return factory


__all__ += ["return_types", "OpPacket"]
