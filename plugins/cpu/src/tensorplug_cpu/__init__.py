"""tensorplug-cpu: the ``CPU`` backend, numpy kernels for every standard operator.

The kernels are tensorplug's generic array kernels (``tensorplug.array_backend``) bound to
numpy; bfloat16 is stored with ml_dtypes and computed in float32; the special functions
(``tp.special``, ``tp.lgamma``, ...) are scipy.special's, handed to the kit as its
special-function namespace and imported on their first call. The ``CPU`` key and the ``cpu``
device type are built into the core, so this plugin adds no keys.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy

from tensorplug import array_backend
from tensorplug.hookspecs import hookimpl

__all__ = ["PLUGIN_API_VERSION", "tensorplug_register_kernels"]

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION it is written for


class LazySpecial:
    """``scipy.special``, imported on the first function read: ``import tensorplug`` does not
    pay for scipy until a special function runs."""

    __name__ = "scipy.special"

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("scipy.special"), name)


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    array_backend.register(registry, "CPU", numpy, special=LazySpecial())
