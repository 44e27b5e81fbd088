"""tensorplug: an operator dispatcher in the spirit of PyTorch's c10 dispatcher.

The public API is what this module re-exports; see docs/ (docs/design.md is the contract).
Importing it runs the start-up (``_startup.py``, Note [Start-up]): it defines the standard
operators (native_functions.yaml), then discovers and loads the plugins installed under the
``tensorplug`` entry-point group, which add keys, kernels and names.
"""

from __future__ import annotations

import sys as _sys
from typing import TYPE_CHECKING, Any

from . import array_backend as array_backend  # for backend plugins
from . import dispatch, dispatcher, keys, library, plugins, random, schema, serialization, storage
from . import dtypes as _dtypes_module
from ._opset import api as _api
from ._opset.api import return_types
from ._opset.construct import as_tensor, tensor
from ._opset.lu import lu as lu
from ._opset.unique import unique as unique
from ._version import __version__ as __version__
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
from .hookspecs import hookimpl
from .library import Library
from .ops import OpPacket, ops
from .plugins import PLUGIN_API_VERSION
from .random import Generator, manual_seed
from .schema import SchemaError
from .serialization import load, save
from .tensor import Tensor

bool = _dtypes_module.bool  # noqa: A001 - tensorplug.bool is the dtype, as torch.bool
float = _dtypes_module.float  # noqa: A001
int = _dtypes_module.int  # noqa: A001

from . import _startup  # noqa: E402

_startup.start(_sys.modules[__name__])  # Note [Start-up]: operators, Meta, then the plugins

_LAZY_SUBMODULES = frozenset({"cuda", "fft", "linalg", "nn", "optim", "special", "utils"})
if TYPE_CHECKING:
    from . import cuda, fft, linalg, nn, optim, special, utils


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
    "dispatcher", "double", "dtype", "fft", "float", "float16", "float32", "float64",
    "get_default_device", "get_default_dtype", "half", "hookimpl", "int", "int8", "int16",
    "int32", "int64", "keys", "library", "linalg", "long", "manual_seed", "nn", "ops", "optim", "overrides", "plugins",
    "promote_types", "random", "result_type", "return_types", "save", "load", "schema",
    "serialization", "set_default_device", "set_default_dtype", "short", "special", "storage",
    "tensor", "uint8", "utils",
]  # fmt: skip
