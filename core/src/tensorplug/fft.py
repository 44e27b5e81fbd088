"""``tensorplug.fft``: discrete Fourier transforms, as ``torch.fft``.

Its functions are made from the entries of native_functions.yaml marked ``python_module:
fft``, named without the ``fft_`` prefix (Note [Python modules] in _opset/api.py). They are
composites of three kernels, as PyTorch's: ``_fft_c2c`` (complex to complex), ``_fft_r2c``
(real to complex, one-sided or full) and ``_fft_c2r`` (Hermitian complex to real), which the
array kit computes with the array API's ``fft`` extension (docs/fft.md)::

    tp.fft.rfft(x)                             # the operator aten::fft_rfft
    tp.fft.fftn(x, s=[8, 8], norm="ortho")
"""

from __future__ import annotations

from typing import Any

from ._opset import api as _api


def __getattr__(name: str) -> Any:
    fn = _api.generated_function(name, "fft")
    if fn is None:
        raise AttributeError(f"module 'tensorplug.fft' has no attribute '{name}'")
    globals()[name] = fn  # later reads find it without this hook
    return fn


def __dir__() -> list[str]:
    return sorted({*globals(), *_api.module_function_names("fft")})
