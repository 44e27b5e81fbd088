"""tensorplug-cuda: the ``CUDA`` backend over CuPy, and the runtime behind ``tp.cuda``.

The ``CUDA`` key and the ``cuda`` device type are built into the core, as ``CPU`` is. This
plugin registers the array kit's kernels for ``CUDA`` lazily
(``tensorplug.array_backend.register_lazy``): CuPy is imported on the first CUDA tensor or
``tp.cuda`` query, never at ``import tensorplug``. Without CuPy, a driver or a GPU the plugin
still loads; ``tp.cuda.is_available()`` is False, ``tensorplug plugins`` says why, and making a
CUDA tensor raises ``tp.cuda.CudaUnavailableError`` with the reason and the remedy.

Modules: ``loader`` (finding CuPy and a GPU), ``backend`` (the kit's arguments over CuPy and
where CuPy differs from numpy), ``runtime`` (devices, streams, events, memory for tp.cuda).
"""

from __future__ import annotations

from typing import Any

from tensorplug import array_backend
from tensorplug.hookspecs import hookimpl

from . import backend
from .runtime import CudaRuntime

__all__ = ["PLUGIN_API_VERSION", "RUNTIME", "tensorplug_register_kernels"]

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION it is written for

RUNTIME = CudaRuntime()
LAZY: array_backend.LazyArrayBackend | None = None  # set while the plugin is loaded


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    global LAZY
    registry.add_device_runtime(RUNTIME)
    LAZY = array_backend.register_lazy(registry, "CUDA", lambda: backend.load(RUNTIME))
