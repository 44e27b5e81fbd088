"""tensorplug-batched: ``tp.vmap`` and the ``tp.func`` transforms (DESIGN §8).

The plugin owns the ``Batched`` key, where batched tensors dispatch first (batched.py; the
stack of vmap levels: levels.py): a rule per standard operator from one table (rules/table.py,
filled by one module per op family in rules/), and a boxed fallback for every other operator
that decomposes composites and loops over the batch otherwise (fallback.py). It adds the
``VmapMode`` key, just below ``Batched``, for random operators inside vmap (rules/random.py),
and the names ``tp.vmap`` and ``tp.func`` (``vmap``, ``grad``, ``grad_and_value``, ``vjp``,
``jacrev``, ``jvp``, ``jacfwd``, ``linearize``, ``hessian``, ``functional_call``: func.py).
``tp.library.register_vmap`` gives a custom operator its own rule (custom.py).
"""

from __future__ import annotations

from typing import Any

from tensorplug.hookspecs import hookimpl

from . import fallback, func, rules
from .vmap import vmap

__all__ = [
    "PLUGIN_API_VERSION",
    "tensorplug_add_keys",
    "tensorplug_add_names",
    "tensorplug_register_kernels",
]

PLUGIN_API_VERSION = "1.1"  # the tensorplug.PLUGIN_API_VERSION it is written for (wrappers)


@hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    keys.register_functionality("VmapMode", after="Batched", before="Autocast")


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    fallbacks = registry.library("_", "IMPL")
    fallbacks.fallback(fallback.batched_fallback, "Batched")
    aten = registry.library("aten", "IMPL")
    rules.register_all(aten)
    rules.register_vmap_mode(aten, fallbacks)


@hookimpl
def tensorplug_add_names() -> dict[str, Any]:
    return {"vmap": vmap, "func": func}
