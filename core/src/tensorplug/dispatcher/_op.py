"""Operators: :class:`OpOverload` (its calls, its registrations, its computed dispatch table
and the dispatch cache a call reads), and :func:`find_op`, which names one.

The registry that holds them is ``_registry.py``; the generic and traced call paths are
``_paths.py``. The Notes of the dispatcher are in ``dispatcher/__init__.py``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import _binding
from .. import keys as _keys
from .. import schema as _sch
from ..errors import DispatchError, RegistrationError
from ..keys import DispatchKey, DispatchKeySet, KeyKind
from . import _callgen, _registry
from ._kernel import _CEA, _CEANF, _CIA, _COMPOSITES, Entry, Kernel
from ._paths import _generic_call, _generic_redispatch, _trace, _traced_call, _traced_redispatch
from ._registry import _by_namespace, _fallback_for, _lock, _ops
from ._remedy import _remedy


class OpOverload:
    """One operator overload: ``tp.ops.ns.op.overload``. Calling it dispatches.

    On its first call each instance gets a class of its own whose ``__call__`` and
    ``redispatch`` are generated from the schema (Note [Generated call functions], Note [Per-op
    classes on first call]).
    """

    _schema: _sch.FunctionSchema
    _name: str

    def __init__(self, schema: _sch.FunctionSchema, namespace: str) -> None:
        # stored with its namespace, as PyTorch's ``_schema``: it prints ``ns::op(...) -> ...``
        if schema.namespace != namespace:  # (the constructor: dataclasses.replace costs 5 us)
            schema = _sch.FunctionSchema(
                namespace,
                schema.name,
                schema.overload_name,
                schema.positional,
                schema.kwarg_only,
                schema.returns,
            )
        self._schema = schema
        self.namespace = namespace
        self.op_name = schema.name
        self.overload_name = schema.overload_name or "default"
        self.qualname = f"{namespace}::{schema.name}"
        self._name = f"{self.qualname}.{self.overload_name}"
        self._kernels: dict[str, Kernel] = {}  # registration key -> the kernel on top of its stack
        # registration key -> every open kernel, oldest first, for keys with more than one (a
        # key with one has it in _kernels alone: start-up registers ~5000, one per key)
        self._stacks: dict[str, list[Kernel]] = {}
        self._table: dict[int, Entry] = {}
        self._dirty = True
        self._cache: dict[int, Callable[..., Any]] = {}
        self._fallthrough_mask = 0
        self.defined_by = ""
        self.tags: tuple[str, ...] = ()
        self._removed = False
        self.allow_mixed_devices = False
        # generated on first use (Note [Generated call functions]); import stays cheap
        self._fast: tuple[Callable[..., Any], Callable[..., Any]] | None = None
        # argument-type signature -> its specialized call, or None (Note [Specialized calls])
        self._specialized: dict[tuple[Any, ...], Callable[..., Any] | None] = {}
        self._own_class = False  # Note [Per-op classes on first call]

    def _use_fast(self, fast: bool) -> None:
        if not self._own_class:  # the shared class's lazy call picks the mode on first call
            return
        cls = type(self)
        pair: tuple[Callable[..., Any], Callable[..., Any]]
        if not fast:
            pair = (_traced_call, _traced_redispatch)
        else:
            assert self._fast is not None  # an own class comes with the generated functions
            pair = self._fast
        cls.__call__, cls.redispatch = pair  # type: ignore[method-assign]

    def _generate(self) -> None:
        with _lock:  # tracing may be switched on meanwhile (_set_tracing)
            if self._fast is None:
                if _callgen.usable_names(self._schema):
                    self._fast = _callgen.generate(self, self._cache)  # type: ignore[assignment]
                else:
                    self._fast = (_generic_call, _generic_redispatch)
            if not self._own_class:
                cls = type(self)
                ov = self._schema.overload_name
                self.__class__ = type(
                    f"{cls.__name__}_{self.namespace}_{self.op_name}_{ov}", (cls,), {}
                )
                self._own_class = True
            self._use_fast(not _trace.enabled)

    def _call_for(self, sig: tuple[Any, ...]) -> Callable[..., Any]:
        """What a caller that checked its arguments' types to be ``sig`` may call instead of
        ``self``: the specialized call (Note [Specialized calls] in dispatcher/_callgen.py), or the
        bound ``__call__`` (while tracing, or for a signature without one). The caller holds
        the registry lock, so that tracing is not switched on between this answer and its
        caching (``_set_tracing`` drops the callers' caches under that lock)."""
        with _lock:
            fn = self._specialization(sig)
            if fn is None or _trace.enabled:
                self._generate()
                return self.__call__
            return fn

    def _specialization(self, sig: tuple[Any, ...]) -> Callable[..., Any] | None:
        """The call specialized to signature ``sig`` (tracing or not), made once; ``None``
        when there is none (an operator on the generic path, a signature that cannot bind)."""
        with _lock:
            if sig not in self._specialized:
                usable = _callgen.usable_names(self._schema)
                self._specialized[sig] = _callgen.specialize(self, sig) if usable else None
            return self._specialized[sig]

    # Note [Per-op classes on first call]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # The generated functions live on a class of the operator's own, since the interpreter
    # looks ``__call__`` up on the type. A class costs ~2.5 KB and ~5 us to make, and start-up
    # defines ~1500 operators of which a program calls a few dozen, so an operator starts as an
    # instance of the shared class, whose ``__call__``/``redispatch`` generate the operator's
    # functions, give it its own class (``__class__`` is reassigned, under the registry lock)
    # and call through it; ``_use_fast`` then switches that class between the generated and
    # the traced path. An operator not called yet needs no switching: its first call picks the
    # mode tracing is in.
    # A method bound before the first call (``op.redispatch`` kept by a plugin at start-up)
    # stays this one: after the first call it only forwards.
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._own_class:
            self._generate()
        return type(self).__call__(self, *args, **kwargs)

    def redispatch(self, keyset: int, *args: Any, **kwargs: Any) -> Any:
        """Dispatch to the highest key of ``keyset`` (no argument key sets, no TLS)."""
        if not self._own_class:
            self._generate()
        return type(self).redispatch(self, keyset, *args, **kwargs)

    @property
    def schema(self) -> _sch.FunctionSchema:
        return self._schema

    @property
    def name(self) -> str:
        return self._name

    # --- public plugin API (docs/plugins.md) ---------------------------------------------

    def kernel_for(self, keyset: int) -> Callable[..., Any]:
        """The ready callable a call with key set ``keyset`` runs, after TLS is applied.

        This is the dispatcher's own answer (Note [Dispatch cache]): fallthrough keys are
        skipped, a ``with_keyset`` kernel comes with the key set bound, a boxed fallback with
        ``(op, keyset)`` bound, a ``per_keyset`` factory's kernel as it made it. Calling it
        runs that kernel directly, without binding the arguments or bumping version counters;
        ``tp.compile`` uses it to call, at run time, the kernels the table chose at trace time.
        A missing kernel raises ``DispatchError``. The answer is valid until
        :func:`generation` changes.
        """
        ks = int(keyset)
        fn = self._cache.get(ks)
        return fn if fn is not None else self._resolve(ks)

    @property
    def kernel_cache(self) -> dict[int, Callable[..., Any]]:
        """The op's dispatch cache, ``key set -> ready callable`` (Note [Dispatch cache]), for
        generated kernels of plugins that look a kernel up on every call: ``get`` from it and,
        on a miss, call :meth:`kernel_for` (or :meth:`derived_kernel`), which fills it. It is
        one dict for the op's whole life (``op.kernel_cache.get`` may be bound once), emptied
        when the op's own kernels change, and for every op when a fallback or the set of keys
        changes and when dispatch tracing is switched; plugins only read it."""
        return self._cache

    def derived_kernel(
        self, keyset: int, derive: Callable[[], Callable[..., Any]]
    ) -> Callable[..., Any]:
        """What the kernel that key set ``keyset`` runs derived from its own lookups (the kernel
        below its key, wrapped or not): made by ``derive()`` on a miss and kept in the dispatch
        cache under ``-keyset``, so ``op.kernel_cache.get(-keyset)`` finds it until the next
        registration change empties the cache (Note [Derived cache entries])."""
        ks = -int(keyset)
        fn = self._cache.get(ks)
        if fn is None:
            # derive() runs outside the registry lock (it is plugin code, and may dispatch); its
            # answer is kept only if no registration happened meanwhile, so no entry derived
            # from an older table lands after the cache was emptied (Note [Registration is
            # atomic]); otherwise it serves this call only
            seen = _registry._generation
            fn = derive()
            with _lock:
                if _registry._generation == seen:
                    self._cache[ks] = fn
        return fn

    def has_kernel(self, key: str) -> bool:
        """Whether a kernel is registered for registration key ``key`` itself (a runtime key
        such as ``"CPU"`` or an alias such as ``"CompositeImplicitAutograd"``); fallbacks and
        entries computed from aliases do not count."""
        return key in self._kernels

    def __repr__(self) -> str:
        return f"<OpOverload {self._name}>"

    # --- registrations and the table -----------------------------------------------------

    def _add_kernel(self, k: Kernel, override: bool) -> None:
        name = k.key.name
        with _lock:
            old = self._kernels.get(name)
            if old is not None and not override:
                raise RegistrationError(
                    f"{self._name}: a kernel for key {name!r} is already registered by "
                    f"{old.registrant} ({old.where}); {k.registrant} tried to register another "
                    f"({k.where}). Pass override=True to replace it, or close the library that "
                    "registered the first one."
                )
            others = (
                [c for c in _COMPOSITES if c != name and c in self._kernels]
                if name in _COMPOSITES
                else ()
            )
            if others:
                other = others[0]
                raise RegistrationError(
                    f"{self._name}: cannot register a {name} kernel ({k.registrant}) because a "
                    f"{other} kernel is registered by {self._kernels[other].registrant}; an op "
                    "has one composite kernel: CompositeImplicitAutograd (decomposes, "
                    "differentiable through its parts) or CompositeExplicitAutograd (one kernel "
                    "for all backends; CompositeExplicitAutogradNonFunctional when it writes or "
                    "views), not two."
                )
            if old is not None:
                stack = self._stacks.get(name)
                if stack is None:
                    self._stacks[name] = [old, k]
                else:
                    stack.append(k)
            self._kernels[name] = k
            self._recompute()

    def _remove_kernel(self, k: Kernel) -> None:
        """Take ``k`` off its stack, wherever it is: what is then on top is the kernel."""
        name = k.key.name
        with _lock:
            stack = self._stacks.get(name)
            if stack is None:
                if self._kernels.get(name) is k:
                    del self._kernels[name]
            elif k in stack:
                stack.remove(k)
                self._kernels[name] = stack[-1]
                if len(stack) == 1:
                    del self._stacks[name]
            k.removed = True
            self._recompute()

    def _recompute(self) -> None:
        """Registrations changed: the table is recomputed before it is next read.

        Registering a plugin's hundred kernels then costs one table computation per operator,
        on first use, instead of one per registration; calls never compute it (the dispatch
        cache is emptied here, and refilled through ``_resolve``, which reads the table).
        Called with the registry lock held (Note [Registration is atomic]).
        """
        self._dirty = True
        self._cache.clear()
        _registry._generation += 1

    @property
    def table(self) -> dict[int, Entry]:
        with _lock:
            if self._dirty:
                self._compute_table()
            return self._table

    @property
    def fallthrough_mask(self) -> int:
        with _lock:
            if self._dirty:
                self._compute_table()
            return self._fallthrough_mask

    def _compute_table(self) -> None:
        table: dict[int, Entry] = {}
        ft = 0
        for key in _keys.priority_order():
            entry = self._compute_entry(key)
            table[key.bit] = entry
            if entry[1] is not None and entry[1].is_fallthrough:
                ft |= 1 << key.bit
        self._table = table
        self._fallthrough_mask = ft
        self._dirty = False

    def _compute_entry(self, k: DispatchKey) -> Entry:
        """The entry of runtime key ``k``: the steps of DESIGN §4, in order."""
        kernels = self._kernels
        is_backend = k.kind is KeyKind.BACKEND
        # 1. a kernel registered directly on K
        if k.name in kernels:
            return _source(k.name, kernels[k.name])
        # 2. K is a backend and the op has a CompositeExplicitAutograd kernel (or its
        #    NonFunctional variant: the same set of keys here, there being no functionalization)
        if is_backend:
            for explicit in (_CEANF, _CEA):
                if explicit in kernels:
                    return _source(explicit, kernels[explicit])
        # 3. K is a backend or an Autograd<B> key and the op has a CompositeImplicitAutograd
        #    kernel -- for Autograd<B> only when B has no kernel of its own (direct or step 2)
        if _CIA in kernels:
            if is_backend:
                return _source(_CIA, kernels[_CIA])
            if k.family == "Autograd" and k.backend is not None:
                b = k.backend.name
                if b not in kernels and _CEA not in kernels and _CEANF not in kernels:
                    return _source(_CIA, kernels[_CIA])
        # 4. K is an Autograd<B> (Autocast<B>) key and the op has an Autograd (Autocast) kernel
        if k.family is not None and k.family in kernels:
            return _source(k.family, kernels[k.family])
        # 5. a fallback registered for K (or for K's alias); it may be the fallthrough kernel
        fb = _fallback_for(k)
        if fb is not None:
            return ("fallthrough" if fb.is_fallthrough else "fallback", fb)
        # 6. missing
        return ("missing", None)

    # --- per call (cold paths of the generated functions) --------------------------------

    def _resolve(self, ks: int) -> Callable[..., Any]:
        """Fill the dispatch cache for ``ks`` (Note [Dispatch cache]), under the registry lock
        so that no entry computed from an older table lands after a registration emptied the
        cache (Note [Registration is atomic])."""
        with _lock:
            ready = self._cache.get(ks)
            if ready is not None:  # another thread filled it while this one waited
                return ready
            if self._removed:
                raise RegistrationError(
                    f"{self._name} was removed (the library that defined it was closed); "
                    "define it again before calling it"
                )
            key, kernel = self._select(ks)
            if kernel.per_keyset:
                seen = _registry._generation
            else:
                self._cache[ks] = ready = self._ready(ks, kernel, kernel.fn)
                return ready
        # Note [Per-key-set kernels]: the factory runs outside the registry lock (it is plugin
        # code, and may dispatch); its kernel is kept only if no registration (and no switch of
        # tracing) happened meanwhile, as for derived entries; otherwise it serves this call only
        made = kernel.fn(self, DispatchKeySet(ks))
        if not callable(made):
            raise RegistrationError(
                f"{self._name}: the kernel factory for key {key.name!r} ({kernel.where}, "
                f"registered by {kernel.registrant}) returned {type(made).__name__} {made!r} "
                f"for key set {DispatchKeySet(ks)!r}; a per_keyset factory must return the "
                "kernel to run, a callable taking the op's arguments"
            )
        ready = self._ready(ks, kernel, made)
        with _lock:
            if _registry._generation == seen:
                self._cache[ks] = ready
        return ready

    def _ready(self, ks: int, kernel: Kernel, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The cache entry of key set ``ks`` whose kernel is ``kernel``: ``fn`` with what the
        kind of registration passes first bound, guarded when ``ks`` names two backends."""
        ready: Callable[..., Any]
        if kernel.boxed:
            ready = functools.partial(fn, self, DispatchKeySet(ks))
        elif kernel.with_keyset:
            ready = functools.partial(fn, DispatchKeySet(ks))
        else:
            ready = fn
        if (ks & _keys.backend_mask()).bit_count() > 1 and not self.allow_mixed_devices:
            ready = _same_device_guard(self, ready)
        return ready

    def _select(self, ks: int) -> tuple[DispatchKey, Kernel]:
        with _lock:
            live = ks & ~self.fallthrough_mask
            table = self.table
            for key in _keys.priority_order():
                if live & (1 << key.bit):
                    source, kernel = table.get(key.bit, ("missing", None))
                    if kernel is None:
                        raise self._missing(key)
                    return key, kernel
            raise self._missing(None)

    def _missing(self, key: DispatchKey | None) -> Exception:
        available = sorted(self._kernels, key=_registration_order)
        if key is None and any(
            a.tensor_kind in ("Tensor[]", "Tensor?[]") for a in self._schema.arguments
        ):
            # the only tensors would have come from an empty list: nothing names a backend
            if self._schema.name == "stack":  # PyTorch's stack says it with a RuntimeError
                return RuntimeError(f"{self._name}: stack expects a non-empty TensorList")
            return ValueError(f"{self._name}: expected a non-empty list of Tensors")
        if key is None:
            msg = (
                f"Could not run '{self._name}': the dispatch key set of the call is empty "
                "(no tensor argument, and no key included by the thread). "
                f"'{self._name}' is only available for these keys: [{', '.join(available)}]."
            )
            return DispatchError(msg, op=self._name, key="", available=available)
        msg = (
            f"Could not run '{self._name}' with arguments from the '{key.name}' backend. "
            f"'{self._name}' is only available for these keys: [{', '.join(available)}]. "
            + _remedy(self, key)
        )
        return DispatchError(msg, op=self._name, key=key.name, available=available)

    def _bad_call(
        self, values: tuple[Any, ...], extra: tuple[Any, ...], unknown: dict[str, Any]
    ) -> Any:
        """A call the fast path could not bind: re-bind through the schema, which raises."""
        args, kwargs = _reconstruct(self._schema, values, extra, unknown)
        self._schema.bind(args, kwargs, self._name)
        # The schema accepted it (e.g. a tensor subclass without _tp_keyset on its type but
        # on the instance): dispatch generically.
        return _generic_call(self, *args, **kwargs)

    def _normalize(self, index: int, value: Any) -> Any:
        arg = self._schema.arguments[index]
        if value is _callgen.MISSING:
            raise TypeError(
                f"{self._name}() missing required argument '{arg.name}' "
                f"({_sch.type_name(arg.type)})"
            )
        pos = "" if arg.kwarg_only else f" (position {index + 1})"
        try:
            return _sch.normalize_argument(value, arg.type)
        except _sch.ArgumentTypeError as e:  # "not list", or which element of it did not fit
            raise TypeError(
                f"{self._name}(): argument '{arg.name}'{pos} must be "
                f"{_sch.type_name(arg.type)}, {e.detail}"
            ) from None
        except _binding.IntOverflow as e:  # an int beyond int64
            raise ValueError(f"{self._name}(): argument '{arg.name}'{pos}: {e}") from None
        except OverflowError as e:  # Note [Scalar ints] in _binding.py
            raise OverflowError(f"{self._name}(): argument '{arg.name}'{pos}: {e}") from None

    @staticmethod
    def _versions(t: Any, kind: str) -> Any:
        if t is None:
            return None
        if kind in ("Tensor", "Tensor?"):
            return t._tp_version.value
        return [None if x is None else x._tp_version.value for x in t]

    @staticmethod
    def _bump(t: Any, kind: str, before: Any) -> None:
        if t is None:
            return
        if kind in ("Tensor", "Tensor?"):
            vc = t._tp_version
            if vc.value == before:
                vc.value = before + 1
            return
        for x, v in zip(t, before, strict=False):
            if x is not None and x._tp_version.value == v:
                x._tp_version.value = v + 1


def _same_device_guard(op: OpOverload, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps the kernel of a key set with two backends: the arguments must share a device.

    Only such key sets pay for the check (DESIGN §6: CPU 0-dim tensors are allowed anywhere).
    """

    def guarded(*args: Any, **kwargs: Any) -> Any:
        devices: list[Any] = []
        for v in (*args, *kwargs.values()):
            for t in v if isinstance(v, list | tuple) else (v,):
                dev = getattr(t, "_device", None)
                if dev is None or not hasattr(type(t), "_tp_keyset"):
                    continue
                if dev.type == "cpu" and t._data.ndim == 0:
                    continue
                if dev not in devices:
                    devices.append(dev)
        if len(devices) > 1:
            raise RuntimeError(
                f"{op.name}: Expected all tensors to be on the same device, but found at least "
                f"two devices, {devices[0]} and {devices[1]}!"
            )
        return fn(*args, **kwargs)

    return guarded


def _source(reg_key: str, kernel: Kernel) -> Entry:
    return ("fallthrough" if kernel.is_fallthrough else reg_key, kernel)


def _registration_order(name: str) -> tuple[int, str]:
    """Sort registration keys by priority; an alias sits with the highest key it covers."""
    covered = int(_keys.expand(name))
    for i, k in enumerate(_keys.priority_order()):
        if covered & (1 << k.bit):
            return (i, name)
    return (1 << 30, name)


def _reconstruct(
    schema: _sch.FunctionSchema,
    values: tuple[Any, ...],
    extra: tuple[Any, ...],
    unknown: dict[str, Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The ``(args, kwargs)`` of a call, from the values the generated signature bound."""
    npos = len(schema.positional)
    if extra:  # every positional slot was filled positionally
        return (*values[:npos], *extra), {**_given(schema.kwarg_only, values[npos:]), **unknown}
    kwargs = _given(schema.arguments, values)
    return (), {**kwargs, **unknown}


def _given(args: tuple[_sch.Argument, ...], values: tuple[Any, ...]) -> dict[str, Any]:
    return {a.name: v for a, v in zip(args, values, strict=False) if v is not _callgen.MISSING}


def find_op(name: str | OpOverload) -> OpOverload:
    """The overload called ``"ns::op.overload"``; ``"ns::op"`` means the default overload."""
    if isinstance(name, OpOverload):
        return name
    packet = getattr(name, "_packet_overloads", None)
    if packet is not None:
        ovs: list[OpOverload] = list(packet())
        if len(ovs) == 1:
            return ovs[0]
        raise RegistrationError(
            f"{name!r} has several overloads ({', '.join(o.overload_name for o in ovs)}); "
            "name one, e.g. tp.ops.ns.op.default"
        )
    full = name if "." in name.split("::")[-1] else f"{name}.default"
    op = _ops.get(full)
    if op is None:
        if "::" not in name:
            raise RegistrationError(
                f"operator names are qualified: 'ns::op.overload', got {name!r}"
            )
        ns, _, qual = name.partition("::")
        # the registry's index by name: a miss costs no walk over every operator
        similar = sorted(
            o._name for o in list(_by_namespace.get(ns, {}).get(qual.split(".")[0], ()))
        )
        hint = f" Known overloads: {', '.join(similar)}." if similar else ""
        raise RegistrationError(
            f"No operator named '{full}' is defined.{hint} Define it with "
            f"tp.Library('{name.split('::')[0]}', 'DEF').define('<schema>')."
        )
    return op
