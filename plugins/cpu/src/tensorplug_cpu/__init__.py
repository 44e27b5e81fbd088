"""tensorplug-cpu: the ``CPU`` backend, numpy kernels for every standard operator.

The kernels are tensorplug's generic array kernels (``tensorplug.array_backend``) bound to
numpy; bfloat16 is stored with ml_dtypes and computed in float32; the special functions
(``tp.special``, ``tp.lgamma``, ...) are scipy.special's, handed to the kit as its
special-function namespace and imported on their first call. The ``CPU`` key and the ``cpu``
device type are built into the core, so this plugin adds no keys.

The backend registers lazily (``tensorplug.array_backend.register_lazy``, as tensorplug-cuda's):
``import tensorplug`` registers a stub per kernel, and the first CPU kernel call or tensor
builds the kit over numpy and registers the real kernels in their place (issue 34, start-up;
Note [Lazy backends] in tensorplug/array_backend/_lazy.py).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy

from tensorplug import array_backend
from tensorplug.hookspecs import hookimpl

__all__ = ["LAZY", "PLUGIN_API_VERSION", "tensorplug_register_kernels"]

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION it is written for


class LazySpecial:
    """``scipy.special``, imported on the first function read: ``import tensorplug`` does not
    pay for scipy until a special function runs."""

    __name__ = "scipy.special"

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("scipy.special"), name)


LAZY: array_backend.LazyArrayBackend | None = None  # set while the plugin is loaded


def load() -> dict[str, Any]:
    """``array_backend.register``'s arguments, on the first CPU kernel call or tensor."""
    return {"xp": numpy, "special": LazySpecial()}


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    global LAZY
    LAZY = array_backend.register_lazy(registry, "CPU", load)
