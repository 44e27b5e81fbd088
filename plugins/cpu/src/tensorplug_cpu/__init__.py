"""tensorplug-cpu: the ``CPU`` backend, numpy kernels for every standard operator.

The kernels are tensorplug's generic array kernels (``tensorplug.array_backend``) bound to
numpy; bfloat16 is stored with ml_dtypes and computed in float32. The ``CPU`` key and the
``cpu`` device type are built into the core, so this plugin adds no keys.
"""

from __future__ import annotations

from typing import Any

import numpy

from tensorplug import array_backend
from tensorplug.hookspecs import hookimpl

__all__ = ["PLUGIN_API_VERSION", "tensorplug_register_kernels"]

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION it is written for


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    array_backend.register(registry, "CPU", numpy)
