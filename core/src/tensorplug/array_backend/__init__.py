"""Turn an array-API library into a tensorplug backend: one kernel set, any ``xp``.

Every standard operator of ``native_functions.yaml`` that is not a composite gets a kernel
written once against an array namespace ``xp`` (numpy for CPU, cupy for CUDA, any array-API
library for a third party). :func:`register` binds those kernels to one backend key and
registers them, plus the backend's storage (``tensorplug._backends.StorageBackend``: Python
data in, host arrays out, transfers between backends).

The kernels live in one private module per op family, the families of every place an op lives
(docs/extending.md, "Adding an operator"): ``_pointwise``, ``_reductions`` (sorting included),
``_shape``, ``_indexing``, ``_linalg``, ``_nn``, ``_random``, ``_factories`` (copies included),
some of them packages of parts; ``_backward`` holds the backward kernels the autograd formulas call. Beside them, one module per
noun: ``_kit`` holds what the kernels share (dtype maps, wrapping, promotion helpers; see its
Notes), ``_checks`` PyTorch's argument checks and the kernel errors, ``_standard`` the fallbacks
in standard functions, ``_register`` :func:`register` (Notes [Kernels that do not dispatch] and
[Device guard]), ``_storage`` the backend's storage, and ``_lazy`` :func:`register_lazy`, which
registers a backend whose array library is imported on first use (CUDA: CuPy). Nothing here
imports numpy at module level: the core does not depend on it.

Usage (what ``tensorplug-cpu`` does in its ``tensorplug_register_kernels`` hook)::

    import numpy
    from tensorplug import array_backend

    backend = array_backend.register(registry, "CPU", numpy)
    backend.dtypes                      # frozenset of the tensorplug dtypes it supports
    array_backend.register(registry, "XLA", my_xp, device_type="xla",
                           overrides={"mm": my_fast_mm})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._kit import OpError
from ._register import (  # _MODULES, override_name, standard_namespace: importable as before
    _MODULES,  # noqa: F401
    ArrayBackend,
    Registry,
    override_name,  # noqa: F401
    register,
    standard_namespace,  # noqa: F401
)
from ._storage import ArrayStorage

__all__ = [
    "ArrayBackend", "ArrayStorage", "LazyArrayBackend", "OpError", "Registry", "register",
    "register_lazy",
]  # fmt: skip

# register_lazy (``_lazy``) is loaded on first use: a backend plugin that registers eagerly
# does not pay for it at ``import tensorplug``.
if TYPE_CHECKING:
    from ._lazy import LazyArrayBackend, register_lazy


def __getattr__(name: str) -> Any:
    if name not in ("LazyArrayBackend", "register_lazy"):
        raise AttributeError(f"module 'tensorplug.array_backend' has no attribute {name!r}")
    from . import _lazy

    value = getattr(_lazy, name)
    globals()[name] = value
    return value
