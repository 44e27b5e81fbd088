"""tensorplug-dask: a backend ``Dask`` (device type ``"dask"``) on ``dask.array``, and ``tp.dask``.

Tensors on ``"dask"`` hold dask arrays: every operator adds tasks to a graph and returns at
once; reading values (``item()``, ``tolist()``, ``repr``, ``.cpu()``, ``bool()``) computes,
on dask's local threaded scheduler or a ``distributed`` cluster (``tp.dask.use``). The backend
is the array kit's template call (``tensorplug.array_backend.register_lazy``, so dask is imported
on the first dask tensor, never at ``import tensorplug``) with the array library's own pieces:
host transfers through the chosen scheduler, dask's random generator, and scipy's special
functions applied chunk by chunk. docs/dask.md is the user's guide.

Modules: ``backend`` (the kit's arguments), ``chunks`` (Note [Default chunks]), ``scheduler``
(Note [Scheduler choice], Note [Progress]), ``special`` (scipy.special over dask arrays),
``fft`` (dask's FFTs, each transformed axis in one chunk), ``api`` (``tp.dask``).
"""

from __future__ import annotations

from typing import Any

from tensorplug import array_backend
from tensorplug.hookspecs import hookimpl

from . import api, backend

__all__ = [
    "PLUGIN_API_VERSION",
    "tensorplug_add_keys",
    "tensorplug_add_names",
    "tensorplug_register_kernels",
]

PLUGIN_API_VERSION = "1.0"  # the tensorplug.PLUGIN_API_VERSION it is written for


@hookimpl
def tensorplug_add_keys(keys: Any) -> None:
    keys.register_backend("Dask", "dask")  # also creates AutogradDask, AutocastDask


@hookimpl
def tensorplug_register_kernels(registry: Any) -> None:
    api.LAZY = array_backend.register_lazy(registry, "Dask", backend.load)


@hookimpl
def tensorplug_add_names() -> dict[str, Any]:
    return {"dask": api}
