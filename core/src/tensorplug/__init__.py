"""tensorplug: an operator dispatcher in the spirit of PyTorch's c10 dispatcher.

The public API is what this module re-exports; see docs/ (docs/design.md is the contract).
Importing it defines the standard operators (native_functions.yaml), then discovers and loads
the plugins installed under the ``tensorplug`` entry-point group, which add keys, kernels and
names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import dispatch, dispatcher, keys, library, schema
from . import dtypes as _dtypes_module
from .device import device, get_default_device, set_default_device
from .dispatcher import OpOverload
from .dtypes import (
    bfloat16,
    can_cast,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from .errors import DispatchError, MissingPluginError, RegistrationError
from .library import Library
from .ops import OpPacket, ops
from .schema import SchemaError
from .tensor import Tensor

bool = _dtypes_module.bool  # noqa: A001 - tensorplug.bool is the dtype, as torch.bool
float = _dtypes_module.float  # noqa: A001
int = _dtypes_module.int  # noqa: A001

__version__ = "0.1.2"

# Keys every call may pass through without a kernel of their own (Note [BackendSelect is
# always included]; ADInplaceOrView has kernels only where the autograd plugin adds them).
_core_library = Library("_", "IMPL", owner="tensorplug")
_core_library.fallback(library.fallthrough_kernel, "BackendSelect")
_core_library.fallback(library.fallthrough_kernel, "ADInplaceOrView")

from . import random  # noqa: E402
from .random import Generator, manual_seed  # noqa: E402

schema.register_python_type("ScalarType", dtype)
schema.register_python_type("Device", device)
schema.register_python_type("Generator", Generator)

# The standard operators, their functions (tensorplug.add, ...) and Tensor methods; functions
# and methods are made on first use (Note [Lazy public functions] in _api.py).
from . import _api, _operators, _own_ops, _repr, overrides  # noqa: E402

_api.install(globals())
_operators.install()
_own_ops.install()  # the tensorplug namespace's operators (Note [tensorplug operators])
Tensor.__repr__ = _repr.tensor_repr  # type: ignore[method-assign]
return_types = _api.return_types
tensor = _operators.tensor
as_tensor = _operators.as_tensor

from . import _functional  # noqa: E402
from .serialization import load, save  # noqa: E402

unique = _functional.unique
Tensor.unique = _functional.unique  # type: ignore[method-assign, assignment]

from . import _missing_attributes, array_backend, plugins, storage  # noqa: E402  (array_backend: for backend plugins)
from ._meta import install as _install_meta  # noqa: E402
from .hookspecs import hookimpl  # noqa: E402
from .plugins import PLUGIN_API_VERSION  # noqa: E402

_install_meta()  # the Meta backend comes with the core (docs/meta.md)
_missing_attributes.install()  # Note [Missing plugin attributes]; loaded plugins replace them

plugins.load_entry_points()

_LAZY_SUBMODULES = frozenset({"cuda", "linalg", "nn", "optim", "special"})
if TYPE_CHECKING:
    from . import cuda, linalg, nn, optim, special


def __getattr__(name: str) -> Any:
    fn = _api.generated_function(name)
    if fn is not None:
        return fn
    if name in _LAZY_SUBMODULES:  # imported on first use: `import tensorplug` stays fast
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    err = plugins.missing_name(name)
    if err is not None:
        raise err
    raise AttributeError(f"module 'tensorplug' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted({*globals(), *_api.function_names, *_LAZY_SUBMODULES})


__all__ = [  # the public API (plus the generated functions: tensorplug.add, tensorplug.sum, ...)
    "DispatchError", "Generator", "Library", "MissingPluginError", "OpOverload", "OpPacket",
    "PLUGIN_API_VERSION",
    "RegistrationError", "SchemaError", "Tensor", "array_backend", "as_tensor", "bfloat16",
    "bool", "can_cast", "cdouble", "cfloat", "cuda", "complex64", "complex128", "device", "dispatch",
    "dispatcher", "double", "dtype", "float", "float16", "float32", "float64",
    "get_default_device", "get_default_dtype", "half", "hookimpl", "int", "int8", "int16",
    "int32", "int64", "keys", "library", "linalg", "long", "manual_seed", "nn", "ops", "optim", "overrides", "plugins",
    "promote_types", "random", "result_type", "return_types", "save", "load", "schema",
    "serialization", "set_default_device", "set_default_dtype", "short", "special", "storage",
    "tensor", "uint8",
]  # fmt: skip
