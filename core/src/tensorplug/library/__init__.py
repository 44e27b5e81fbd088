"""Libraries: the one way to define operators and register kernels and fallbacks, and
PyTorch's torch.library API on top (a front end over ``dispatcher/_library.py``'s :class:`Library`).

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

from ..dispatcher._library import (
    Library,
    _def_libraries,
    fallthrough_kernel,
    is_no_dispatch,
    mark_boxed,
    mark_no_dispatch,
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
_ = (_def_libraries,)

# What the functions below Library's methods live in, loaded on first use (import time): the
# decorator forms and the register_* functions (_registration.py), opcheck (_opcheck.py) and
# the modern torch.library API built on Library (_custom_ops.py: custom_op, register_fake, ...)
_LAZY = {
    **dict.fromkeys(
        (
            "_decorator_libraries",
            "define",
            "impl",
            "register_autocast",
            "register_autograd",
            "register_vmap",
        ),
        "_registration",
    ),
    **dict.fromkeys(("OpCheckError", "opcheck"), "_opcheck"),
    **dict.fromkeys(
        (
            "CustomOpDef",
            "custom_op",
            "impl_abstract",
            "infer_schema",
            "register_fake",
            "register_kernel",
        ),
        "_custom_ops",
    ),
}

if TYPE_CHECKING:
    from ._custom_ops import (
        CustomOpDef,
        custom_op,
        impl_abstract,
        infer_schema,
        register_fake,
        register_kernel,
    )
    from ._opcheck import OpCheckError, opcheck
    from ._registration import (
        _decorator_libraries as _decorator_libraries,
    )
    from ._registration import (
        define,
        impl,
        register_autocast,
        register_autograd,
        register_vmap,
    )


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'tensorplug.library' has no attribute {name!r}")
    module: Any
    if where == "_registration":
        from . import _registration as module
    elif where == "_opcheck":
        from . import _opcheck as module
    else:
        from . import _custom_ops as module
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
