"""The ``fft`` family of the array kit: PyTorch's three FFT kernels, ``_fft_c2c``,
``_fft_r2c`` and ``_fft_c2r``, which every function of ``tensorplug.fft`` (composites) runs.

Note [FFT kernels]
~~~~~~~~~~~~~~~~~~
The kernels call the array API's ``fft`` extension (``xp.fft.fftn``, ``ifftn``, ``rfftn``,
``irfftn``): numpy's pocketfft on CPU, cuFFT through CuPy, any namespace that has the
extension (array-api-compat gives it for numpy, CuPy, torch and dask). A namespace without it
still registers; each call then raises "not supported by this backend", naming the op and the
backend. A backend whose library needs more than its namespace's extension gives the kit an
FFT namespace of its own (``register(..., fft=...)``: tensorplug-dask's puts each transformed
axis in one chunk first, as ``dask.array.fft`` requires). ``normalization`` is PyTorch's
integer: 0 none, 1 by 1/sqrt(n), 2 by 1/n, with n the number of points of the signal; it maps onto the standard's ``norm=`` of the transform's
direction, so no extra pass scales the result. Half precision is refused as PyTorch's CPU does
("Unsupported dtype Half"); float32 signals transform in complex64, float64 in complex128.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import dtypes as _dt
from ..tensor import Tensor
from ._kit import Kernels, Kit, OpError, bind, torch_name, wrap_dims

# normalization -> the standard's norm= for a forward (e^-i) and an inverse (e^+i) transform
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")


def _fft(kit: Kit) -> Any:
    ns = kit.fft if kit.fft is not None else getattr(kit.xp, "fft", None)
    if ns is None:
        raise OpError(
            f"FFTs are not supported by this backend ({kit.key_name}): its array namespace has "
            "no fft extension (xp.fft.fftn, ...); pass kernels of your own with "
            "array_backend.register(..., overrides={'_fft_c2c': ..., '_fft_r2c': ..., "
            "'_fft_c2r': ...})"
        )
    return ns


def _complex_of(d: _dt.dtype) -> _dt.dtype:
    return _dt.complex128 if d is _dt.float64 else _dt.complex64


def _dims(self: Tensor, dim: Sequence[int]) -> list[int]:
    return list(wrap_dims(list(dim), self._data.ndim) or ()) if dim else []


def _check_norm(normalization: int) -> None:
    if normalization not in (0, 1, 2):
        raise OpError(f"Invalid normalization mode: {normalization}")


def fft_c2c(kit: Kit, self: Tensor, dim: list[int], normalization: int, forward: bool) -> Tensor:
    d = self._dtype
    if d.kind != "c":
        raise OpError(f"input must be complex, but got {torch_name(d)}")
    _check_norm(normalization)
    axes = _dims(self, dim)
    if not axes:
        return kit.wrap(kit.copy(self._data), d, self._device)
    fft = _fft(kit)
    a = self._data
    if len(axes) == 1:  # the one-dimensional functions: less work around the transform
        if forward:
            r = fft.fft(a, axis=axes[0], norm=_FORWARD_NORM[normalization])
        else:
            r = fft.ifft(a, axis=axes[0], norm=_INVERSE_NORM[normalization])
    elif forward:
        r = fft.fftn(a, axes=axes, norm=_FORWARD_NORM[normalization])
    else:
        r = fft.ifftn(a, axes=axes, norm=_INVERSE_NORM[normalization])
    return kit.wrap(r, d, self._device)


def fft_r2c(kit: Kit, self: Tensor, dim: list[int], normalization: int, onesided: bool) -> Tensor:
    d = self._dtype
    if d.kind != "f":
        raise OpError(f"input must be floating point, but got {torch_name(d)}")
    if d in (_dt.float16, _dt.bfloat16):
        raise OpError(f"Unsupported dtype {torch_name(d)}")
    _check_norm(normalization)
    axes = _dims(self, dim)
    od = _complex_of(d)
    fft = _fft(kit)
    norm = _FORWARD_NORM[normalization]
    if onesided and len(axes) == 1:
        r = fft.rfft(self._data, axis=axes[0], norm=norm)
    elif onesided:
        r = fft.rfftn(self._data, axes=axes, norm=norm)
    else:
        r = fft.fftn(kit.cast(self._data, kit.storage[od]), axes=axes, norm=norm)
    return kit.wrap(r, od, self._device)


def fft_c2r(
    kit: Kit, self: Tensor, dim: list[int], normalization: int, last_dim_size: int
) -> Tensor:
    d = self._dtype
    if d.kind != "c":
        raise OpError(f"input must be complex, but got {torch_name(d)}")
    _check_norm(normalization)
    if last_dim_size < 1:
        raise OpError(f"Invalid number of data points ({last_dim_size}) specified")
    axes = _dims(self, dim)
    shape = self._data.shape
    norm = _INVERSE_NORM[normalization]
    if len(axes) == 1:
        r = _fft(kit).irfft(self._data, n=last_dim_size, axis=axes[0], norm=norm)
    else:
        s = [shape[a] for a in axes[:-1]] + [last_dim_size]
        r = _fft(kit).irfftn(self._data, s=s, axes=axes, norm=norm)
    od = _dt.float64 if d is _dt.complex128 else _dt.float32
    return kit.wrap(r, od, self._device)


KERNELS: dict[str, Callable[..., Any]] = {
    "_fft_c2c": fft_c2c,
    "_fft_r2c": fft_r2c,
    "_fft_c2r": fft_c2r,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
