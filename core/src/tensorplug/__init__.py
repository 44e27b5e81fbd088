"""tensorplug: an operator dispatcher in the spirit of PyTorch's c10 dispatcher.

The public API is what this module re-exports; see docs/ and DESIGN.md.
"""

from __future__ import annotations

from . import dispatch, dispatcher, keys, library, schema
from .dispatcher import OpOverload
from .errors import DispatchError, MissingPluginError, RegistrationError
from .library import Library
from .ops import OpPacket, ops
from .schema import SchemaError

__version__ = "0.1.0"

# Keys every call may pass through without a kernel of their own (Note [BackendSelect is
# always included]; ADInplaceOrView has kernels only where the autograd plugin adds them).
_core_library = Library("_", "IMPL", owner="tensorplug")
_core_library.fallback(library.fallthrough_kernel, "BackendSelect")
_core_library.fallback(library.fallthrough_kernel, "ADInplaceOrView")

__all__ = [
    "DispatchError",
    "Library",
    "MissingPluginError",
    "OpOverload",
    "OpPacket",
    "RegistrationError",
    "SchemaError",
    "dispatch",
    "dispatcher",
    "keys",
    "library",
    "ops",
    "schema",
]
