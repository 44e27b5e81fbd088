"""The ``Library``: the one way to define operators and register kernels and fallbacks
(dispatch layer; ``tensorplug.library`` re-exports it with the torch.library face on top).

A :class:`Library` owns everything it registers, so ``close()`` (or leaving its ``with``
block) removes all of it again: definitions, kernels and fallbacks. Plugins get their libraries
from the plugin registry, which closes them when a plugin fails or is unregistered. Kinds and
usage: docs/library.md and ``tensorplug.library``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Literal, TypeVar

from .. import dispatcher as _dispatcher
from .. import keys as _keys
from .. import schema as _schema
from ..errors import RegistrationError
from . import Kernel, OpOverload, fallthrough_kernel

__all__ = [
    "Library",
    "LibraryKind",
    "fallthrough_kernel",
    "is_no_dispatch",
    "mark_boxed",
    "mark_no_dispatch",
]

F = TypeVar("F", bound=Callable[..., Any])
LibraryKind = Literal["DEF", "IMPL", "FRAGMENT"]

_def_libraries: dict[str, Library] = {}  # namespace -> its open DEF library

# called with every new Library: the plugin loader records the libraries a plugin creates
# itself while its hooks run, so that its rollback closes them too (Note [Plugin rollback])
creation_observers: list[Callable[[Library], None]] = []


class Library:
    """Registrations into the dispatcher, owned and removable as a whole."""

    def __init__(
        self,
        ns: str,
        kind: LibraryKind,
        dispatch_key: str = "",
        *,
        owner: str | None = None,
    ) -> None:
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise RegistrationError(
                f"Library({ns!r}, {kind!r}): kind must be 'DEF', 'IMPL' or 'FRAGMENT'"
            )
        if not (isinstance(ns, str) and (ns == "_" or ns.isidentifier())):
            raise RegistrationError(
                f"Library({ns!r}, {kind!r}): the namespace must be an identifier (a str such as "
                "'myops'), or '_' for fallbacks"
            )
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self.owner = owner or _caller()
        if kind == "DEF":
            if ns == "_":
                raise RegistrationError("the '_' namespace is for fallbacks: use kind 'IMPL'")
            other = _def_libraries.get(ns)
            if other is not None:
                raise RegistrationError(
                    f"Only one DEF library per namespace: namespace {ns!r} is already defined "
                    f"by a library of {other.owner}. Use tp.Library({ns!r}, 'FRAGMENT') to add "
                    "definitions to it, or close the other library first."
                )
            _def_libraries[ns] = self
        self._ops: list[OpOverload] = []
        self._kernels: list[tuple[OpOverload, Kernel]] = []
        self._fallbacks: list[Kernel] = []
        self._closed = False
        for observe in creation_observers:
            observe(self)

    # --- definitions ---------------------------------------------------------------------

    def define(
        self, schema: str | _schema.FunctionSchema, *, tags: str | Iterable[str] = ()
    ) -> OpOverload:
        """Define an operator from its schema text; returns the new overload.

        ``tags`` (one name or several, as ``torch.library.Library.define``'s) become
        ``op.tags``; the tag ``mixed_devices`` lets the operator's tensors live on different
        devices (``copy_``), where every other operator refuses them.
        """
        self._check_open()
        tag_names = _check_tags(f"Library({self.ns!r}).define", tags)
        if self.kind == "IMPL":
            raise RegistrationError(
                f"Library({self.ns!r}, 'IMPL') cannot define operators; use a 'DEF' or "
                "'FRAGMENT' library"
            )
        parsed = schema if isinstance(schema, _schema.FunctionSchema) else _schema.parse(schema)
        if parsed.namespace and parsed.namespace != self.ns:
            raise RegistrationError(
                f"Library({self.ns!r}).define: schema {schema!r} names namespace "
                f"{parsed.namespace!r}; define it in a library of that namespace"
            )
        full = f"{self.ns}::{parsed.full_name}"
        with _dispatcher._lock:  # Note [Registration is atomic]
            self._check_open()
            existing = _dispatcher._ops.get(
                f"{self.ns}::{parsed.name}.{parsed.overload_name or 'default'}"
            )
            if existing is not None:
                raise RegistrationError(
                    f"operator {full} is already defined (by {existing.defined_by}) as "
                    f"'{existing.schema}'"
                )
            op = OpOverload(parsed, self.ns)
            op.defined_by = self.owner
            op.tags = tag_names
            op.allow_mixed_devices = "mixed_devices" in tag_names
            self._ops.append(op)  # owned before it is visible: close() removes it whatever happens
            _dispatcher._register_op(op)
        return op

    # --- kernels and fallbacks -----------------------------------------------------------

    def impl(
        self,
        name: str | OpOverload,
        fn: Callable[..., Any],
        key: str = "",
        *,
        with_keyset: bool = False,
        boxed: bool | None = None,
        override: bool = False,
        lazy: bool = False,
        per_keyset: bool = False,
    ) -> None:
        """Register ``fn`` as the kernel of operator ``name`` (in this namespace) for ``key``.

        ``key`` may be a runtime key or an alias key. ``with_keyset=True`` passes the call's
        key set as the first argument (for ``op.redispatch(keyset.below(key), ...)``).
        ``boxed=True`` calls ``fn(op, keyset, *args, **kwargs)`` like a fallback; it defaults
        to whether ``fn`` was marked with :func:`mark_boxed` (as kernel factories such as the
        autograd plugin's ``autograd_not_implemented_fallback()`` do). ``lazy=True``: ``fn`` is
        a function of no arguments that builds the kernel, called on the first call that
        reaches it (Note [Lazy kernels]). ``per_keyset=True``: ``fn`` is a factory
        ``fn(op, keyset) -> kernel``, called once per key set that reaches it, whose kernel is
        cached and called with the op's arguments alone (Note [Per-key-set kernels] in
        dispatcher/); with ``lazy=True``, ``build()`` returns that factory.
        """
        self._check_open()
        op = self._find(name)
        k = _keys.get(key or self.dispatch_key or "CompositeImplicitAutograd")
        if not callable(fn):
            raise RegistrationError(
                f"{op.name}: the kernel for key {k.name!r} must be callable, got "
                f"{type(fn).__name__} {fn!r} (from {self.owner}); pass the kernel function itself"
            )
        if boxed is None:
            boxed = bool(getattr(fn, "_tp_boxed", False)) and not per_keyset
        if per_keyset and (with_keyset or boxed):
            raise RegistrationError(
                f"{op.name}: the kernel factory for key {k.name!r} (from {self.owner}) was "
                f"registered per_keyset=True with {'with_keyset' if with_keyset else 'boxed'}"
                "=True; a factory is given (op, keyset) itself and binds what its kernel "
                "needs: drop one of the two"
            )
        kern = Kernel(
            fn,
            k,
            self.owner,
            with_keyset=with_keyset,
            boxed=boxed,
            per_keyset=per_keyset,
            owner=self,
        )
        if lazy:
            kern.fn = _lazy_kernel(op, kern, fn)
        with _dispatcher._lock:
            self._check_open()
            op._add_kernel(kern, override)
            self._kernels.append((op, kern))

    def fallback(self, fn: Callable[..., Any], key: str = "", *, override: bool = False) -> None:
        """Register a boxed fallback ``fn(op, keyset, *args, **kwargs)`` for every operator."""
        self._check_open()
        if self.ns != "_":
            raise RegistrationError(
                f"Library({self.ns!r}, {self.kind!r}).fallback: a fallback applies to every "
                "operator, so it is registered on the '_' namespace: "
                f"tp.Library('_', 'IMPL').fallback(fn, {key or self.dispatch_key!r})"
            )
        k = _keys.get(key or self.dispatch_key)
        if not callable(fn):
            raise RegistrationError(
                f"the fallback for key {k.name!r} must be callable, fn(op, keyset, *args, "
                f"**kwargs); got {type(fn).__name__} {fn!r} (from {self.owner})"
            )
        kern = Kernel(fn, k, self.owner, boxed=True, owner=self)
        with _dispatcher._lock:
            self._check_open()
            _dispatcher._add_fallback(kern, override)
            self._fallbacks.append(kern)

    def _find(self, name: str | OpOverload) -> OpOverload:
        if isinstance(name, OpOverload):
            return name
        if "::" in name:
            qual = name
        else:
            if self.ns == "_":
                raise RegistrationError("the '_' namespace has no operators; use fallback()")
            qual = f"{self.ns}::{name}"
        try:
            return _dispatcher.find_op(qual)
        except RegistrationError:
            full = qual if "." in qual.split("::")[1] else f"{qual}.default"
            raise RegistrationError(
                f"cannot register a kernel for '{full}': that operator was never defined. "
                f"Define it first: tp.Library('{qual.split('::')[0]}', 'DEF').define("
                f"'{qual.split('::')[1]}(...) -> ...')"
            ) from None

    # --- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Remove every registration this library made. Closing twice is harmless.

        Atomic for other threads: a call sees every registration of the library or none, and
        no call that starts after ``close()`` returns runs one of its kernels (Note
        [Registration is atomic] in dispatcher/). Each kernel and fallback comes off its
        (op, key) stack, restoring whatever registration is then on top, in any close order.
        """
        with _dispatcher._lock:
            if self._closed:
                return
            self._closed = True
            for op, kern in reversed(self._kernels):
                op._remove_kernel(kern)
            for fb in reversed(self._fallbacks):
                _dispatcher._remove_fallback(fb)
            for op in reversed(self._ops):
                _dispatcher._remove_op(op)
            self._kernels.clear()
            self._fallbacks.clear()
            self._ops.clear()
            if _def_libraries.get(self.ns) is self:
                del _def_libraries[self.ns]
            _dispatcher._changed()

    def _reattach(self) -> list[str]:
        """Put this library's kernels for operators that were removed and have since been
        defined again (another plugin unregistered and registered again) back on top of the
        new operators' stacks; returns their names. Kernels whose operator is not defined any
        more stay detached."""
        moved: list[str] = []
        with _dispatcher._lock:
            if self._closed:
                return moved
            for i, (op, kern) in enumerate(self._kernels):
                if not op._removed:
                    continue
                new = _dispatcher._ops.get(op._name)
                if new is None or new is op or str(new.schema) != str(op.schema):
                    continue
                new._add_kernel(kern, True)
                self._kernels[i] = (new, kern)
                moved.append(new.name)
        return moved

    def _check_open(self) -> None:
        if self._closed:
            raise RegistrationError(f"Library({self.ns!r}, {self.kind!r}) is closed")

    def __enter__(self) -> Library:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._ops)} ops, {len(self._kernels)} kernels"
        return f"Library({self.ns!r}, {self.kind!r}, owner={self.owner!r}; {state})"


def _lazy_kernel(
    op: OpOverload, kern: Kernel, build: Callable[[], Callable[..., Any]]
) -> Callable[..., Any]:
    """The stand-in of a ``lazy=True`` registration until its first call.

    Note [Lazy kernels]
    ~~~~~~~~~~~~~~~~~~~
    A plugin that generates a kernel per operator (the autograd plugin compiles one from each
    derivative formula) would make ``import tensorplug`` pay for all of them, although most
    programs call a few dozen ops. Registered with ``lazy=True``, the kernel is built on the
    first call that reaches it: the stand-in calls ``build()``, puts the result in the
    registration's place and empties the op's dispatch cache, so later calls go straight to
    it. Until then the registration is named after ``build`` (``explain``, traces). The
    stand-in is one object and its ``__dict__`` (a closure was six: its function, list and
    cells, for the garbage collector to walk after start-up; issue 34).
    """
    return _LazyKernel(op, kern, build)


class _LazyKernel:
    """Note [Lazy kernels]: calls ``build()`` once, then what it built. Named as ``build``
    (its ``__qualname__`` and ``__module__`` are the instance's own)."""

    def __init__(
        self, op: OpOverload, kern: Kernel, build: Callable[[], Callable[..., Any]]
    ) -> None:
        self._op = op
        self._kern = kern
        self._build = build
        self._built: Callable[..., Any] | None = None
        self.__qualname__ = getattr(build, "__qualname__", "lazy_kernel")
        self.__module__ = getattr(build, "__module__", __name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        built = self._built
        if built is None:
            real = self._build()  # outside the lock: building may dispatch
            with _dispatcher._lock:  # Note [Registration is atomic]
                if self._built is None:
                    self._built = real
                built = self._built
                if self._kern.fn is self:
                    self._kern.fn = built
                    self._op._cache.clear()
        return built(*args, **kwargs)


def mark_boxed(fn: F) -> F:
    """Mark ``fn`` as a boxed kernel, ``fn(op, keyset, *args, **kwargs)``: ``Library.impl``
    registers it so unless told ``boxed=False``. For kernel factories, whose users register
    the result without saying how to call it (``autograd_not_implemented_fallback()``)."""
    fn._tp_boxed = True  # type: ignore[attr-defined]
    return fn


def mark_no_dispatch(fn: F) -> F:
    """Promise that kernel ``fn`` calls no operator: a kernel above it may call it directly,
    without excluding its own key in this thread first (Note [Kernels that do not dispatch]
    in array_backend)."""
    fn._tp_no_dispatch = True  # type: ignore[attr-defined]
    return fn


def is_no_dispatch(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` was marked with :func:`mark_no_dispatch` (``op.kernel_for`` answers are
    the kernels themselves, so they can be asked)."""
    return bool(getattr(fn, "_tp_no_dispatch", False))


def _check_tags(where: str, tags: str | Iterable[str]) -> tuple[str, ...]:
    """``tags`` as a tuple of names; anything but identifiers is refused."""
    found = (tags,) if isinstance(tags, str) else tuple(tags)
    for tag in found:
        if not (isinstance(tag, str) and tag.isidentifier()):
            raise RegistrationError(
                f"{where}: tags are names such as 'pointwise' or 'mixed_devices', got {tag!r}"
            )
    return found


def _caller() -> str:
    """``module:function`` of the first frame outside tensorplug's registration modules."""
    f = sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "") in _INTERNAL:
        f = f.f_back  # type: ignore[assignment]
    if f is None:
        return "?"
    return f"{f.f_globals.get('__name__', '?')}:{f.f_code.co_name}"


# the registration modules a registrant is looked for outside of (the user's frame names it)
_INTERNAL = {
    __name__,
    "tensorplug.library",
    "tensorplug.library._registration",
    "tensorplug.library._custom_ops",
    "tensorplug.plugins",
}
