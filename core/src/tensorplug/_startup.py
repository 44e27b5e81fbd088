"""What ``import tensorplug`` does, in order (internal).

Note [Start-up]
~~~~~~~~~~~~~~~
``tensorplug/__init__.py`` only re-exports; at its end it calls :func:`start` with itself, and
these steps run, each once:

1. the core's own fallthroughs: ``BackendSelect`` and ``ADInplaceOrView`` are keys every call
   may pass through without a kernel (Note [BackendSelect is always included]); and the
   ``Functionalize`` fallback, which only tensors of a backend without views reach (Note
   [Functionalization] in _opset/functionalize.py);
2. the Python types of schema arguments (``ScalarType``, ``Device``, ``Generator``);
3. the standard operators (native_functions.yaml) and their public functions, made on first
   use (Note [Lazy public functions] in _opset/api.py), and the ``tensorplug`` namespace's
   operators (Note [tensorplug operators]);
4. Tensor's Python operators, constructor and methods written in Python (``_operators``,
   ``unique``), and its ``repr``;
5. the Meta backend, which comes with the core (docs/meta.md);
6. the lazy front ends whose functions the override protocol lists (``nn.functional``), found
   by name when a listing asks, as ``tp.nn`` is (PEP 562);
7. the placeholders of names only an absent plugin provides (Note [Missing plugin
   attributes]), then the plugins: the package binds itself as the namespace their
   ``tensorplug_add_names`` fill, and the entry points are loaded.

Each step registers into a lower layer (a library, a table, a hook), so no module below the
package face imports it (Note [Layers] in docs/architecture.md).
"""

from __future__ import annotations

import gc
import importlib
from types import ModuleType

from . import _meta, overrides, plugins, schema
from ._opset import api as _api
from ._opset import attributes as _attributes
from ._opset import functionalize as _functionalize
from ._opset import layout as _layout
from ._opset import lu as _lu
from ._opset import operators as _operators
from ._opset import own_ops as _own_ops
from ._opset import repr as _repr
from ._opset import sparse as _sparse
from ._opset import unique as _unique
from .device import device
from .dispatcher import _library
from .dtypes import dtype
from .plugins import _missing
from .random import Generator
from .tensor import Tensor

# the front ends whose public functions overrides.get_overridable_functions() lists
LISTED_FRONT_ENDS = ("tensorplug.nn.functional",)

_started: list[ModuleType] = []


def start(package: ModuleType) -> None:
    """Run the start-up steps for ``package`` (``tensorplug``), once.

    The cyclic garbage collector pauses meanwhile: start-up makes ~10^5 objects that live as
    long as the process (operators, schemas, kernels), and each collection it would trigger
    walks all of them again for nothing (a tenth of the start-up's instructions). Then they
    go to the oldest generation (Note [Start-up objects are old])."""
    if _started:
        return
    _started.append(package)
    collecting = gc.isenabled()
    gc.disable()
    try:
        _start(package)
    finally:
        _age_objects()
        if collecting:
            gc.enable()


def _age_objects() -> None:
    """Move every tracked object to the collector's oldest generation, without a collection.

    Note [Start-up objects are old]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    With the collector paused, the ~10^5 objects start-up made are all in the youngest
    generation: the first collection after it (on the program's next allocations) would walk
    them all (~20 ms), and the next middle-generation one again, to find what was clear from
    the start: they live as long as the process. ``gc.freeze()`` then ``gc.unfreeze()`` moves
    them to the oldest generation in one list splice (issue 34, start-up). They are collected
    as before, by full collections; so are the program's own objects that were young then,
    which only wait for a full collection instead of a young one. A program that froze
    objects itself (``gc.freeze()`` before ``fork``) keeps them frozen: then nothing moves.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _start(package: ModuleType) -> None:
    namespace = vars(package)

    # 1. keys every call may pass through
    core = _library.Library("_", "IMPL", owner="tensorplug")
    core.fallback(_library.fallthrough_kernel, "BackendSelect")
    core.fallback(_library.fallthrough_kernel, "ADInplaceOrView")
    core.fallback(_functionalize.functionalize_fallback, "Functionalize")

    # 2. Python types of schema arguments
    schema.register_python_type("ScalarType", dtype)
    schema.register_python_type("Device", device)
    schema.register_python_type("Generator", Generator)

    # 3. the operators and their public functions
    _api.install(namespace)
    _own_ops.install()

    # 4. Tensor's Python operators and methods, and its repr
    _operators.install()
    _layout.install()
    _attributes.install()  # conversions, queries, properties (issue 29)
    _sparse.install()  # Note [No sparse layouts, no quantized dtypes]
    Tensor.unique = _unique.unique  # type: ignore[method-assign, assignment]
    Tensor.lu = _lu.lu  # type: ignore[method-assign, assignment]
    Tensor.__repr__ = _repr.tensor_repr  # type: ignore[method-assign]

    # 5. the Meta backend
    _meta.install()

    # 6. front ends the override listings load by name
    overrides._make_all_hooks.append(_load_listed_front_ends)

    # 7. names of absent plugins, then the plugins
    _missing.install()
    plugins.bind_namespace(package)
    plugins.load_entry_points()


def _load_listed_front_ends() -> None:
    for name in LISTED_FRONT_ENDS:
        importlib.import_module(name)  # lists its functions on import
