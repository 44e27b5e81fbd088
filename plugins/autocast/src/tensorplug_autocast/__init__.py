"""tensorplug-autocast: automatic mixed precision (DESIGN §8).

The plugin owns the ``Autocast<B>`` keys, through the ``Autocast`` alias: a fallthrough
fallback for every operator, and kernels for the operators of PyTorch 2.13's CPU and CUDA
lists (policy.py, kernels.py), so a backend registered later (``AutocastFoo``) is covered too.
It adds ``tp.autocast`` (mode.py: regions and their per-thread state), ``tp.amp``
(``GradScaler``, ``custom_fwd``/``custom_bwd``, ``register_autocast``), and PyTorch's state
functions ``tp.is_autocast_enabled``, ``tp.get_autocast_dtype``, ``tp.set_autocast_dtype`` ...
Outside a region the ``Autocast<B>`` keys stay excluded, so no call reaches this plugin.
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug.hookspecs import hookimpl

from . import amp, kernels, mode

__all__ = ["PLUGIN_API_VERSION", "tensorplug_add_names", "tensorplug_register_kernels"]

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION it is written for


def _refresh() -> None:
    mode.refresh()
    kernels.refresh()


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    registry.add_key_listener(_refresh)  # a backend added later gets its Autocast<B> mask
    _refresh()
    registry.library("_", "IMPL").fallback(tp.library.fallthrough_kernel, "Autocast")
    kernels.register(registry.library("aten", "IMPL"))


@hookimpl
def tensorplug_add_names() -> dict[str, Any]:
    return {
        "autocast": mode.autocast,
        "amp": amp,
        "is_autocast_enabled": mode.is_autocast_enabled,
        "set_autocast_enabled": mode.set_autocast_enabled,
        "get_autocast_dtype": mode.get_autocast_dtype,
        "set_autocast_dtype": mode.set_autocast_dtype,
        "is_autocast_cache_enabled": mode.is_autocast_cache_enabled,
        "set_autocast_cache_enabled": mode.set_autocast_cache_enabled,
        "clear_autocast_cache": mode.clear_autocast_cache,
    }
