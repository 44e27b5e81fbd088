"""tensorplug: an operator dispatcher in the spirit of PyTorch's c10 dispatcher.

The public API is what this module re-exports; see docs/ (docs/design.md is the contract).
Importing it runs the start-up (``_startup.py``, Note [Start-up]): it defines the standard
operators (native_functions.yaml), then discovers and loads the plugins installed under the
``tensorplug`` entry-point group, which add keys, kernels and names.
"""

from __future__ import annotations

import math as _math
import sys as _sys
from typing import TYPE_CHECKING, Any

from . import array_backend as array_backend  # for backend plugins
from . import dispatch, dispatcher, keys, library, plugins, random, schema, serialization, storage
from . import dtypes as _dtypes_module
from ._opset import api as _api
from ._opset.api import return_types
from ._opset.construct import tensor
from ._opset.control_flow import cond
from ._opset.functional import (
    lobpcg as lobpcg,
)
from ._opset.functional import (
    pca_lowrank as pca_lowrank,
)
from ._opset.functional import (
    svd_lowrank as svd_lowrank,
)
from ._opset.functional import (
    unravel_index as unravel_index,
)
from ._opset.interop import as_tensor, asarray, from_dlpack, from_file, from_numpy, frombuffer
from ._opset.layout import TypedStorage, UntypedStorage
from ._opset.lu import lu as lu
from ._opset.predicates import (
    Size,
    broadcast_shapes,
    is_complex,
    is_conj,
    is_floating_point,
    is_nonzero,
    is_storage,
    is_tensor,
    numel,
    sym_float,
    sym_fresh_size,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sum,
)
from ._opset.predicates import assert_ as _assert
from ._opset.repr import set_printoptions
from ._opset.unique import unique as unique
from ._settings import (
    are_deterministic_algorithms_enabled,
    compiled_with_cxx11_abi,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled,
    set_default_tensor_type,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_num_interop_threads,
    set_num_threads,
    set_warn_always,
    use_deterministic_algorithms,
)
from ._strides import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from ._version import __version__ as __version__
from .cpu import Event, Stream, get_device_module
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
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
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
from .random import (
    Generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from .schema import SchemaError
from .tensor import Tensor

default_generator = random.default_generator("cpu")  # the CPU one, as torch.default_generator
inf, nan, e, pi = _math.inf, _math.nan, _math.e, _math.pi

bool = _dtypes_module.bool  # noqa: A001 - tensorplug.bool is the dtype, as torch.bool
float = _dtypes_module.float  # noqa: A001
int = _dtypes_module.int  # noqa: A001

from . import _startup  # noqa: E402

_startup.start(_sys.modules[__name__])  # Note [Start-up]: operators, Meta, then the plugins

_LAZY_SUBMODULES = frozenset({"cpu", "cuda", "fft", "linalg", "nn", "optim", "special", "utils"})
_SERIALIZATION_NAMES = frozenset({"load", "save"})
if TYPE_CHECKING:
    from . import cpu, cuda, fft, linalg, nn, optim, special, utils
    from .serialization import load, save


def __getattr__(name: str) -> Any:
    fn = _api.generated_function(name)
    if fn is not None:
        return fn
    if name in _SERIALIZATION_NAMES:  # the archive's modules load on first use
        return getattr(serialization, name)
    if name in _LAZY_SUBMODULES:  # imported on first use: `import tensorplug` stays fast
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    err = plugins.missing_name(name)
    if err is not None:
        raise err
    raise AttributeError(f"module 'tensorplug' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted({*globals(), *_api.function_names, *_LAZY_SUBMODULES, *_SERIALIZATION_NAMES})


__all__ = [  # the public API (plus the generated functions: tensorplug.add, tensorplug.sum, ...)
    "DispatchError", "Event", "Generator", "Size", "Stream", "_assert",
    "are_deterministic_algorithms_enabled", "compiled_with_cxx11_abi", "cond", "cpu",
    "default_generator", "e", "finfo", "fork_rng", "get_deterministic_debug_mode",
    "get_device_module", "get_float32_matmul_precision", "get_num_interop_threads",
    "get_num_threads", "get_rng_state", "iinfo", "inf", "initial_seed", "is_complex", "is_conj",
    "is_deterministic_algorithms_warn_only_enabled", "is_floating_point", "is_nonzero",
    "is_storage", "is_tensor", "is_warn_always_enabled", "nan", "numel", "pi", "seed",
    "set_default_tensor_type", "set_deterministic_debug_mode", "set_float32_matmul_precision",
    "set_flush_denormal", "set_num_interop_threads", "set_num_threads", "set_rng_state",
    "set_warn_always", "sym_float", "sym_fresh_size", "sym_int", "sym_ite", "sym_max",
    "sym_min", "sym_not", "sym_sum", "use_deterministic_algorithms", "asarray", "from_dlpack",
    "from_file", "from_numpy", "frombuffer", "set_printoptions", "broadcast_shapes", "Library", "MissingPluginError", "OpOverload", "OpPacket",
    "PLUGIN_API_VERSION",
    "RegistrationError", "SchemaError", "Tensor", "array_backend", "as_tensor", "bfloat16",
    "bool", "can_cast", "cdouble", "cfloat", "cuda", "complex64", "complex128", "device", "dispatch",
    "dispatcher", "double", "dtype", "fft", "float", "float16", "float32", "float64",
    "get_default_device", "get_default_dtype", "half", "hookimpl", "int", "int8", "int16",
    "int32", "int64", "keys", "library", "linalg", "long", "manual_seed", "nn", "ops", "optim", "overrides", "plugins",
    "promote_types", "random", "result_type", "return_types", "save", "load", "schema",
    "serialization", "set_default_device", "set_default_dtype", "short", "special", "storage",
    "tensor", "uint8", "utils",
    # layout (docs/layout.md)
    "TypedStorage", "UntypedStorage", "channels_last", "channels_last_3d", "contiguous_format",
    "layout",
    "memory_format", "preserve_format", "strided",
]  # fmt: skip
