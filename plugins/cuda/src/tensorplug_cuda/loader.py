"""Finding CuPy and a GPU: the one place the plugin imports CuPy.

Nothing imports CuPy at ``import tensorplug``; :func:`probe` does, on the first CUDA tensor or
``tp.cuda`` query, and remembers the answer for the process (a machine does not grow a GPU or a
driver while it runs). The answer is CuPy, or the reason CUDA cannot be used, worded for the
user: which piece is missing (the CuPy package, a working CuPy, a driver, a visible GPU) and
what to do about it.

Tests put a stand-in module in CuPy's place with :func:`substitute`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from tensorplug.cuda import CudaUnavailableError

__all__ = ["cupy", "probe", "reason", "substitute"]

INSTALL = (
    'pip install "tensorplug-cuda[cuda12]" for CUDA 12 drivers, or '
    '"tensorplug-cuda[cuda13]" for CUDA 13'
)

_lock = threading.Lock()
_answer: tuple[ModuleType | None, str | None] | None = None  # (cupy, why not), once known
_stand_in: ModuleType | None = None


def probe() -> tuple[ModuleType | None, str | None]:
    """``(cupy, None)`` when CUDA can be used; otherwise ``(cupy or None, reason)``."""
    global _answer
    answer = _answer
    if answer is None:
        with _lock:
            if _answer is None:
                _answer = _find()
            answer = _answer
    return answer


def cupy() -> ModuleType:
    """CuPy, ready to use; otherwise :class:`CudaUnavailableError` saying why."""
    cp, why = probe()
    if why is not None or cp is None:
        why = why or "CuPy is not available"
        raise CudaUnavailableError(f"CUDA is not available (tensorplug-cuda): {why}", reason=why)
    return cp


def reason() -> str | None:
    """None when CUDA can be used, else why not."""
    return probe()[1]


def _find() -> tuple[ModuleType | None, str | None]:
    try:
        cp = _stand_in if _stand_in is not None else importlib.import_module("cupy")
    except ModuleNotFoundError as e:
        if e.name != "cupy":  # CuPy is there, but something it imports is not
            return None, _broken(e)
        return None, f"CuPy is not installed ({e}); {INSTALL}"
    except Exception as e:  # a CuPy that cannot load its libraries, a wrong wheel, ...
        return None, _broken(e)
    version = getattr(cp, "__version__", "?")
    try:
        count = int(cp.cuda.runtime.getDeviceCount())
    except Exception as e:  # CUDARuntimeError: no driver, a driver too old, no device
        return cp, (
            f"CuPy {version} found no usable GPU ({type(e).__name__}: {e}). Check that this "
            "machine has an NVIDIA GPU and driver (nvidia-smi), that the driver supports the "
            "CUDA version of the installed cupy-cuda package, and CUDA_VISIBLE_DEVICES"
            f"{_visible()}"
        )
    if count == 0:
        return cp, f"CuPy {version} sees no CUDA device; check CUDA_VISIBLE_DEVICES{_visible()}"
    return cp, None


def _broken(e: BaseException) -> str:
    return (
        f"CuPy is installed but failed to import ({type(e).__name__}: {e}); reinstall it "
        f"({INSTALL}), and make sure only one cupy-cuda package is installed"
    )


def _visible() -> str:
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    return "" if value is None else f" (set to {value!r})"


@contextlib.contextmanager
def substitute(module: Any) -> Iterator[None]:
    """Use ``module`` as CuPy inside the block (tests: a stand-in without a GPU); the answer of
    :func:`probe` is forgotten on entry and on exit."""
    global _stand_in, _answer
    with _lock:
        previous, _stand_in, _answer = _stand_in, module, None
    try:
        yield
    finally:
        with _lock:
            _stand_in, _answer = previous, None
