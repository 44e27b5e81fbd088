"""Libraries: the one way to define operators and register kernels and fallbacks, and
PyTorch's torch.library API on top (a front end over ``_library.py``'s :class:`Library`).

A :class:`Library` owns everything it registers, so ``close()`` (or leaving its ``with``
block) removes all of it again: definitions, kernels and fallbacks. Plugins get their libraries
from the plugin registry, which closes them when a plugin fails or is unregistered.

Kinds (as in ``torch.library``):

* ``"DEF"`` defines operators of its namespace and may register kernels; only one ``DEF``
  library per namespace is open at a time;
* ``"FRAGMENT"`` adds definitions to a namespace (after or without a ``DEF`` library);
* ``"IMPL"`` only registers kernels, for operators of its namespace defined elsewhere, and
  fallbacks when its namespace is ``"_"``.

Usage::

    import tensorplug as tp
    lib = tp.Library("myops", "DEF")
    lib.define("myadd(Tensor self, Tensor other) -> Tensor")
    lib.impl("myadd", myadd_cpu, "CPU")
    lib.impl("myadd", myadd_autograd, "Autograd")
    tp.Library("_", "IMPL").fallback(tracer_fallback, "Tracer")
    lib.impl("myadd", tp.library.fallthrough_kernel, "Autocast")

    @tp.library.impl("myops::myadd", "CUDA")
    def myadd_cuda(self, other): ...

    tp.ops.myops.myadd(a, b)
    lib.close()

On top of ``Library``, PyTorch's modern API (``_custom_ops.py``, ``_opcheck.py``):
:func:`custom_op` makes an operator from a function with type hints (:func:`infer_schema`),
:func:`register_fake` gives an operator its fake (``Meta``) kernel, :func:`register_kernel`
a kernel per device type, :func:`register_autograd` its derivative, and :func:`opcheck` tests
that the registrations keep their promises::

    @tp.library.custom_op("myops::numpy_sin", mutates_args=())
    def numpy_sin(x: tp.Tensor) -> tp.Tensor: ...

    numpy_sin.register_fake(lambda x: tp.empty_like(x))
    tp.library.opcheck(numpy_sin, (tp.randn(3),))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._library import (
    Library,
    _def_libraries,
    fallthrough_kernel,
    is_no_dispatch,
    mark_boxed,
    mark_no_dispatch,
)
from ._opcheck import OpCheckError, opcheck
from ._torch_library import (
    _decorator_libraries,
    define,
    impl,
    register_autocast,
    register_autograd,
    register_vmap,
)

__all__ = [
    "CustomOpDef",
    "Library",
    "OpCheckError",
    "custom_op",
    "define",
    "fallthrough_kernel",
    "impl",
    "impl_abstract",
    "infer_schema",
    "is_no_dispatch",
    "mark_boxed",
    "mark_no_dispatch",
    "opcheck",
    "register_autocast",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "register_vmap",
]

# private state tests read through this module (tp.library._def_libraries, ...)
_ = (_def_libraries, _decorator_libraries)

# The modern torch.library API (custom_op, register_fake, register_kernel), built on Library
# in _custom_ops.py: its names are loaded on first use (import time).
_CUSTOM_OPS = frozenset(
    {
        "CustomOpDef",
        "custom_op",
        "impl_abstract",
        "infer_schema",
        "register_fake",
        "register_kernel",
    }
)

if TYPE_CHECKING:
    from ._custom_ops import (
        CustomOpDef,
        custom_op,
        impl_abstract,
        infer_schema,
        register_fake,
        register_kernel,
    )


def __getattr__(name: str) -> Any:
    if name not in _CUSTOM_OPS:
        raise AttributeError(f"module 'tensorplug.library' has no attribute {name!r}")
    from . import _custom_ops

    value = getattr(_custom_ops, name)
    globals()[name] = value
    return value
