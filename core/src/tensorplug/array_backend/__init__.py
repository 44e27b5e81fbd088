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
registers a backend whose array library and kernels load on first use (CUDA: CuPy; CPU: the
kernel modules themselves, which ``import tensorplug`` does not import). Nothing here imports
numpy at module level: the core does not depend on it.

Usage (``tensorplug-cpu`` makes the first call lazily, in its ``tensorplug_register_kernels``
hook: ``array_backend.register_lazy(registry, "CPU", lambda: {"xp": numpy, ...})``)::

    import numpy
    from tensorplug import array_backend

    backend = array_backend.register(registry, "CPU", numpy)
    backend.dtypes                      # frozenset of the tensorplug dtypes it supports
    array_backend.register(registry, "XLA", my_xp, device_type="xla",
                           overrides={"mm": my_fast_mm})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._op_errors import OpError

__all__ = [
    "ArrayBackend", "ArrayStorage", "LazyArrayBackend", "OpError", "Registry", "register",
    "register_lazy",
]  # fmt: skip

# Everything but OpError is loaded on first use (PEP 562): ``import tensorplug`` imports this
# package, and ``_register`` imports every kernel module (~40 of them), which a backend
# registered lazily (``register_lazy``: the CPU and CUDA plugins) needs only on its first
# kernel call (Note [Lazy backends] in _lazy.py). ``_MODULES``, ``override_name`` and
# ``standard_namespace`` stay importable from here as before.
_LAZY_NAMES = {
    "ArrayBackend": "_register", "Registry": "_register", "register": "_register",
    "_MODULES": "_register", "override_name": "_register", "standard_namespace": "_register",
    "ArrayStorage": "_storage", "LazyArrayBackend": "_lazy", "register_lazy": "_lazy",
}  # fmt: skip

if TYPE_CHECKING:
    from ._lazy import LazyArrayBackend, register_lazy
    from ._register import _MODULES as _MODULES
    from ._register import ArrayBackend, Registry, register
    from ._register import override_name as override_name
    from ._register import standard_namespace as standard_namespace
    from ._storage import ArrayStorage


def __getattr__(name: str) -> Any:
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'tensorplug.array_backend' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_NAMES})
