"""torch.library's registration functions on top of :class:`Library` (internal; the public
names live in ``tensorplug.library``): the decorator forms :func:`define` and :func:`impl`,
and :func:`register_autograd`, :func:`register_autocast`, :func:`register_vmap`, which hand the
registration to the plugin that owns the key, found by the name it added to ``tensorplug``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from . import plugins
from ._library import F, Library, LibraryKind, _caller
from .dispatcher import OpOverload
from .errors import RegistrationError

# --- decorator forms (as torch.library.define / torch.library.impl) -------------------------

_decorator_libraries: dict[tuple[str, str], Library] = {}


def _global_library(ns: str, kind: LibraryKind) -> Library:
    lib = _decorator_libraries.get((ns, kind))
    if lib is None or lib._closed:
        lib = _decorator_libraries[(ns, kind)] = Library(ns, kind, owner=_caller())
    return lib


def define(
    qualname_or_schema: str,
    schema: str | None = None,
    *,
    lib: Library | None = None,
    tags: str | Iterable[str] = (),
) -> OpOverload:
    """Define an operator: ``define("ns::op(Tensor x) -> Tensor")`` or ``define("ns::op", "(Tensor x) -> Tensor")``."""
    text = qualname_or_schema if schema is None else qualname_or_schema + schema
    if "::" not in text.split("(")[0]:
        raise RegistrationError(
            f"tensorplug.library.define needs a qualified name 'ns::op', got {text!r}"
        )
    ns, rest = text.split("::", 1)
    target = lib if lib is not None else _global_library(ns, "FRAGMENT")
    return target.define(rest, tags=tags)


def impl(
    qualname: str,
    key: str,
    fn: Callable[..., Any] | None = None,
    *,
    lib: Library | None = None,
    with_keyset: bool = False,
    override: bool = False,
) -> Any:
    """Register a kernel; usable as a decorator: ``@tp.library.impl("ns::op", "CPU")``."""
    if "::" not in qualname:
        raise RegistrationError(
            f"tensorplug.library.impl needs a qualified name 'ns::op', got {qualname!r}"
        )
    ns = qualname.split("::", 1)[0]

    def register(f: F) -> F:
        target = lib if lib is not None else _global_library(ns, "IMPL")
        target.impl(qualname, f, key, with_keyset=with_keyset, override=override)
        return f

    if fn is not None:
        register(fn)
        return fn
    return register


def register_autograd(
    op: str | OpOverload,
    backward: Callable[..., Any],
    /,
    *,
    setup_context: Callable[[Any, tuple[Any, ...], Any], Any] | None = None,
    lib: Library | None = None,
) -> None:
    """Make ``backward(ctx, *grads)`` the derivative of ``op`` (as torch.library.register_autograd).

    Provided by the tensorplug-autograd plugin (``tp.autograd.register_autograd``); without it
    this raises an error naming the distribution to install.
    """
    autograd: Any = plugins.added_name("autograd")  # or the MissingPluginError
    autograd.register_autograd(op, backward, setup_context=setup_context, lib=lib)


def register_autocast(
    op: str | OpOverload,
    device_type: str,
    cast_inputs: Any,
    /,
    *,
    lib: Library | None = None,
) -> None:
    """Make ``op`` cast its floating inputs to ``cast_inputs`` in ``device_type`` autocast
    regions, and run with autocast off (as torch.library.register_autocast).

    Provided by the tensorplug-autocast plugin (``tp.amp.register_autocast``); without it this
    raises an error naming the distribution to install.
    """
    amp: Any = plugins.added_name("amp")  # or the MissingPluginError
    amp.register_autocast(op, device_type, cast_inputs, lib=lib)


def register_vmap(
    op: str | OpOverload, func: Callable[..., Any] | None = None, /, *, lib: Library | None = None
) -> Any:
    """Give ``op`` the batching rule ``func(info, in_dims, *args, **kwargs) -> (output,
    out_dims)`` (as torch.library.register_vmap); usable as a decorator.

    Provided by the tensorplug-batched plugin (``tp.func.register_vmap``); without it this
    raises an error naming the distribution to install.
    """
    func_ns: Any = plugins.added_name("func")  # or the MissingPluginError
    return func_ns.register_vmap(op, func, lib=lib)
