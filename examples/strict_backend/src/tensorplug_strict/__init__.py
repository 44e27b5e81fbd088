"""tensorplug-strict: a backend ``Strict`` (device type ``"strict"``) on array_api_strict.

array_api_strict implements the array API standard and nothing more, so this plugin shows
that tensorplug's generic kernels need nothing beyond the standard: the whole backend is the
template call of ``tensorplug.array_backend.register``, with ``views=False`` because the
standard promises no views (functionalization gives them, docs/functionalization.md).
"""

from __future__ import annotations

from typing import Any

import array_api_strict

import tensorplug as tp

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION this plugin is written for


@tp.hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    keys.register_backend("Strict", "strict")  # also creates AutogradStrict, AutocastStrict


@tp.hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    tp.array_backend.register(registry, "Strict", array_api_strict, views=False)
