"""The hooks a tensorplug plugin may implement (DESIGN §7).

A plugin is a module (or any object) named by an entry point of the group ``tensorplug``::

    [project.entry-points.tensorplug]
    foo = "tensorplug_foo"

whose functions are marked with :data:`hookimpl`. Each hook is optional. The loader in
:mod:`tensorplug.plugins` calls them in phases, every plugin's hook of one phase before any
plugin's hook of the next:

1. ``tensorplug_add_keys(keys)`` -- create dispatch keys;
2. ``tensorplug_register_kernels(registry)`` -- register kernels and fallbacks;
3. ``tensorplug_add_names()`` -- public names for the ``tensorplug`` module;
4. ``tensorplug_add_tensor_methods()`` -- methods and properties for ``tensorplug.Tensor``.

Everything a plugin creates through the objects it is handed is recorded under its name, so a
plugin that fails, or is unregistered, is removed without a trace.

Usage::

    from tensorplug import hookimpl

    @hookimpl
    def tensorplug_add_keys(keys):
        keys.register_backend("Foo", "foo")

    @hookimpl
    def tensorplug_register_kernels(registry):
        lib = registry.library("aten", "IMPL")
        lib.impl("add.Tensor", foo_add, "Foo")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .plugins._plugin import KernelRegistry, KeyRegistrar

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "tensorplug"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def tensorplug_add_keys(keys: KeyRegistrar) -> None:
    """Create dispatch keys with ``keys.register_backend(name, device_type)`` and
    ``keys.register_functionality(name, before=..., after=...)``.

    Runs for every plugin before any plugin's :func:`tensorplug_register_kernels`, so kernels
    may be registered for keys that other plugins add.
    """


@hookspec
def tensorplug_register_kernels(registry: KernelRegistry) -> None:
    """Register kernels and fallbacks into libraries from ``registry.library(ns, kind)``.

    Storage for a new backend is added with ``registry.add_storage_backend(sb)`` (or through
    ``tensorplug.array_backend.register(registry, key, xp, ...)``).
    """


@hookspec
def tensorplug_add_names() -> dict[str, Any]:
    """Public names to add to the ``tensorplug`` module, e.g. ``{"vmap": vmap}``."""
    return {}


@hookspec
def tensorplug_add_tensor_methods() -> dict[str, Any]:
    """Attributes to set on ``tensorplug.Tensor``: functions, properties, descriptors."""
    return {}
