"""Process-wide settings with PyTorch's names: threads, deterministic algorithms, float32 matmul
precision, warn-always, denormals, the default tensor type (internal; re-exported by the
package as ``tensorplug.set_num_threads`` and the rest).

Each keeps PyTorch's arguments, validation, messages and defaults. What each one changes here
is said in its docstring and in docs/interop.md ("Settings"): tensorplug's kernels are numpy's
(or another array library's), so some settings are recorded for code that reads them back
rather than acted on:

* ``set_num_threads(n)`` limits the BLAS and OpenMP thread pools numpy calls into when
  threadpoolctl is installed (an optional dependency); without it, the number is recorded only.
  ``get_num_threads()`` starts at the number of CPUs this process may run on.
* ``set_num_interop_threads`` is recorded: tensorplug runs no inter-op thread pool. As in
  PyTorch it may be called once.
* ``use_deterministic_algorithms``: every kernel of the CPU backend is deterministic, so the
  mode changes no result; it is recorded and read back (as PyTorch's CPU kernels mostly are).
* ``set_float32_matmul_precision``: recorded; float32 matmuls always compute in float32 (what
  ``"highest"`` means; PyTorch's CPU matmuls ignore the setting too).
* ``set_flush_denormal`` returns False (not supported), as PyTorch does on a CPU without the
  flag: Python cannot set the floating-point control register of the threads numpy uses.
* ``compiled_with_cxx11_abi()`` is False: tensorplug is pure Python and links no C++.
"""

from __future__ import annotations

import builtins
import importlib
import os
import warnings
from typing import Any

from . import device as _device
from . import dtypes as _dtypes

__all__ = [
    "are_deterministic_algorithms_enabled",
    "compiled_with_cxx11_abi",
    "get_deterministic_debug_mode",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "get_num_threads",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled",
    "set_default_tensor_type",
    "set_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "set_flush_denormal",
    "set_num_interop_threads",
    "set_num_threads",
    "set_warn_always",
    "use_deterministic_algorithms",
]


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Settings:
    num_threads: int | None = None  # None: the number of CPUs
    interop_threads: int | None = None
    deterministic = False
    deterministic_warn_only = False
    matmul_precision = "highest"
    warn_always = False
    thread_limits: Any = None  # threadpoolctl's limiter, while set_num_threads holds one


_s = _Settings()


# --- threads ----------------------------------------------------------------------------------


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism (see the module docstring)."""
    return _s.num_threads if _s.num_threads is not None else _cpus()


def set_num_threads(n: int) -> None:
    """Set the number of intra-op threads: the BLAS and OpenMP pools numpy uses, through
    threadpoolctl where it is installed; recorded either way."""
    if type(n) is not builtins.int or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    try:
        threadpoolctl = importlib.import_module("threadpoolctl")  # optional: not a dependency
    except ImportError:
        pass
    else:
        if _s.thread_limits is not None:
            _s.thread_limits.restore_original_limits()
        _s.thread_limits = threadpoolctl.threadpool_limits(limits=n)
    _s.num_threads = n


def get_num_interop_threads() -> int:
    """The number of inter-op threads (recorded: tensorplug runs no inter-op pool)."""
    return _s.interop_threads if _s.interop_threads is not None else _cpus()


def set_num_interop_threads(n: int) -> None:
    """Set the number of inter-op threads, once per process, as in PyTorch."""
    if type(n) is not builtins.int or n <= 0:
        raise RuntimeError("Expected positive number of threads")
    if _s.interop_threads is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    _s.interop_threads = n


# --- deterministic algorithms -----------------------------------------------------------------


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (every CPU kernel already is: recorded, read back)."""
    if type(mode) is not builtins.bool:
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    if type(warn_only) is not builtins.bool:
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
            f"{type(warn_only).__name__}"
        )
    _s.deterministic = mode
    _s.deterministic_warn_only = warn_only if mode else False


def are_deterministic_algorithms_enabled() -> bool:
    return _s.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _s.deterministic_warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``"default"``/0 (off), ``"warn"``/1 (on, warn only), ``"error"``/2 (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    elif type(debug_mode) is not builtins.int:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )


def get_deterministic_debug_mode() -> int:
    if not _s.deterministic:
        return 0
    return 1 if _s.deterministic_warn_only else 2


# --- numerics ---------------------------------------------------------------------------------


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"``, ``"high"`` or ``"medium"`` (recorded; see the module docstring). Any
    other value warns and changes nothing, as in PyTorch."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _s.matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return _s.matmul_precision


def set_flush_denormal(mode: bool) -> bool:
    """False: flushing denormals to zero is not supported here (see the module docstring)."""
    return False


def compiled_with_cxx11_abi() -> bool:
    """False: tensorplug is pure Python (PyTorch asks whether it was built with
    ``_GLIBCXX_USE_CXX11_ABI=1``)."""
    return False


# --- warnings ---------------------------------------------------------------------------------


def set_warn_always(b: bool) -> None:
    """Warn every time rather than once, where tensorplug warns once (recorded and read back
    by :func:`is_warn_always_enabled`)."""
    _s.warn_always = builtins.bool(b)


def is_warn_always_enabled() -> bool:
    return _s.warn_always


# --- the default tensor type (deprecated in PyTorch) ------------------------------------------

_TENSOR_TYPES = {
    "HalfTensor": _dtypes.float16,
    "BFloat16Tensor": _dtypes.bfloat16,
    "FloatTensor": _dtypes.float32,
    "DoubleTensor": _dtypes.float64,
}


def set_default_tensor_type(t: str | Any) -> None:
    """PyTorch's deprecated ``set_default_tensor_type("torch.DoubleTensor")`` (also
    ``"torch.cuda.FloatTensor"``, ``"tensorplug."`` names): the default dtype and, for CUDA,
    the default device. Warns as PyTorch does; prefer ``set_default_dtype`` and
    ``set_default_device``."""
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    name = t if isinstance(t, str) else None
    if name is None:  # PyTorch's type objects (torch.DoubleTensor) have no counterpart here
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    parts = name.split(".")
    dtype = _TENSOR_TYPES.get(parts[-1])
    if dtype is None or parts[0] not in ("torch", "tensorplug"):
        if parts[-1].endswith("Tensor"):
            raise TypeError(
                "invalid type object: only floating-point types are supported as the default type"
            )
        raise TypeError(f"invalid type: '{name}'")
    _dtypes.set_default_dtype(dtype)
    _device.set_default_device("cuda" if "cuda" in parts[1:-1] else None)
