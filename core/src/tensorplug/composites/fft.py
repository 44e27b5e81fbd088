"""The ``fft`` family of the composites: the functions of ``tensorplug.fft``, written, as
PyTorch's (CompositeImplicitAutograd there too), in the three kernels ``_fft_c2c``,
``_fft_r2c`` and ``_fft_c2r`` (Note [FFT kernels] in array_backend/_fft.py), with the signal
cut or zero-padded to ``n``/``s`` first; and ``fftfreq``, ``rfftfreq``, ``fftshift`` and
``ifftshift``, in factories and ``roll``.

``norm`` is PyTorch's: ``"backward"`` (the default) scales the inverse transform by 1/n,
``"forward"`` the forward one, ``"ortho"`` both by 1/sqrt(n). The Hermitian transforms
(``hfft``, ``ihfft`` and their n-d forms) conjugate their complex side (``conj_physical``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes as _dt
from .._op_errors import torch_name
from ..ops import ops

aten = ops.aten


def _norm(norm: str | None, forward: bool) -> int:
    """PyTorch's fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _floating(x: Any, name: str, *, complex_ok: bool = True) -> Any:
    """``x`` with integers and bools promoted to the default dtype; complex refused unless
    ``complex_ok`` (the real-input transforms)."""
    d = x.dtype
    if d.is_complex:
        if not complex_ok:
            raise RuntimeError(f"{name} expects a real input tensor, but got {torch_name(d)}")
        return x
    if not d.is_floating_point:
        return aten._to_copy.default(x, dtype=_dt.get_default_dtype())
    return x


def _complex(x: Any) -> Any:
    d = x.dtype
    if d.is_complex:
        return x
    if d in (_dt.float16, _dt.bfloat16):
        raise RuntimeError(f"Unsupported dtype {torch_name(d)}")
    return aten._to_copy.default(x, dtype=_dt.complex128 if d is _dt.float64 else _dt.complex64)


def _resize(x: Any, dims: Sequence[int], sizes: Sequence[int]) -> Any:
    """``x`` cut or zero-padded at the end of each dim of ``dims`` to the size asked."""
    for d, n in zip(dims, sizes, strict=True):
        cur = x.shape[d]
        if n < cur:
            x = aten.narrow.default(x, d, 0, n)
        elif n > cur:
            shape = list(x.shape)
            shape[d] = n - cur
            pad = aten.zeros.default(shape, dtype=x.dtype, device=x.device)
            x = aten.cat.default([x, pad], d)
    return x


def _check_n(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _wrap(d: int, ndim: int) -> int:
    if not -ndim <= d < max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
            f"{d})"
        )
    return d % ndim if ndim else 0


def _shape_and_dims(
    x: Any, s: Sequence[int] | None, dim: Sequence[int] | None
) -> tuple[list[int], list[int]]:
    """PyTorch's canonicalize_fft_shape_and_dim_args: the dims transformed and their sizes."""
    ndim = x.ndim
    if dim is not None:
        dims = [_wrap(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions."
            )
        if dim is None:
            dims = list(range(ndim - len(s), ndim))
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s, strict=True)]
        for n in sizes:
            _check_n(n)
    else:
        if dim is None:
            dims = list(range(ndim))
        sizes = [x.shape[d] for d in dims]
    return dims, sizes


# --- one-dimensional transforms ----------------------------------------------------------------


def _one(x: Any, n: int | None, dim: int) -> tuple[Any, int, int]:
    d = _wrap(dim, x.ndim)
    if n is None:
        n = x.shape[d]
    _check_n(n)
    return _resize(x, [d], [n]), d, n


def fft_fft(self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    x, d, _ = _one(_floating(self, "fft"), n, dim)
    if not x.dtype.is_complex:
        return aten._fft_r2c.default(x, [d], _norm(norm, True), False)
    return aten._fft_c2c.default(x, [d], _norm(norm, True), True)


def fft_ifft(self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    x, d, _ = _one(_complex(_floating(self, "ifft")), n, dim)
    return aten._fft_c2c.default(x, [d], _norm(norm, False), False)


def fft_rfft(self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    x, d, _ = _one(_floating(self, "rfft", complex_ok=False), n, dim)
    return aten._fft_r2c.default(x, [d], _norm(norm, True), True)


def _c2r(self: Any, n: int | None, dim: int, norm: str | None, name: str, forward: bool) -> Any:
    x = _complex(_floating(self, name))
    d = _wrap(dim, x.ndim)
    if n is None:
        n = 2 * (x.shape[d] - 1)
    _check_n(n)
    x = _resize(x, [d], [n // 2 + 1])
    if forward:
        x = aten.conj_physical.default(x)
    return aten._fft_c2r.default(x, [d], _norm(norm, forward), n)


def fft_irfft(self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    return _c2r(self, n, dim, norm, "irfft", False)


def fft_hfft(self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    return _c2r(self, n, dim, norm, "hfft", True)


def fft_ihfft(self: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
    x, d, _ = _one(_floating(self, "ihfft", complex_ok=False), n, dim)
    r = aten._fft_r2c.default(x, [d], _norm(norm, False), True)
    return aten.conj_physical.default(r)


# --- n-dimensional transforms ------------------------------------------------------------------


def _c2c_n(self: Any, s: Any, dim: Any, norm: str | None, forward: bool, name: str) -> Any:
    x = _floating(self, name)
    dims, sizes = _shape_and_dims(x, s, dim)
    x = _resize(x, dims, sizes)
    if forward and not x.dtype.is_complex:
        return aten._fft_r2c.default(x, dims, _norm(norm, True), False)
    return aten._fft_c2c.default(_complex(x), dims, _norm(norm, forward), forward)


def _r2c_n(self: Any, s: Any, dim: Any, norm: str | None, name: str, forward: bool) -> Any:
    x = _floating(self, name, complex_ok=False)
    dims, sizes = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(x, dims, sizes)
    r = aten._fft_r2c.default(x, dims, _norm(norm, forward), True)
    return r if forward else aten.conj_physical.default(r)


def _c2r_n(self: Any, s: Any, dim: Any, norm: str | None, name: str, forward: bool) -> Any:
    x = _complex(_floating(self, name))
    dims, sizes = _shape_and_dims(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = sizes[-1] if s is not None else 2 * (x.shape[dims[-1]] - 1)
    _check_n(last)
    x = _resize(x, dims, [*sizes[:-1], last // 2 + 1])
    if forward:
        x = aten.conj_physical.default(x)
    return aten._fft_c2r.default(x, dims, _norm(norm, forward), last)


def fft_fftn(self: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Any:
    return _c2c_n(self, s, dim, norm, True, "fftn")


def fft_ifftn(self: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Any:
    return _c2c_n(self, s, dim, norm, False, "ifftn")


def fft_rfftn(self: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Any:
    return _r2c_n(self, s, dim, norm, "rfftn", True)


def fft_ihfftn(self: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Any:
    return _r2c_n(self, s, dim, norm, "ihfftn", False)


def fft_irfftn(self: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Any:
    return _c2r_n(self, s, dim, norm, "irfftn", False)


def fft_hfftn(self: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Any:
    return _c2r_n(self, s, dim, norm, "hfftn", True)


def fft_fft2(self: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Any:
    return _c2c_n(self, s, dim, norm, True, "fft2")


def fft_ifft2(self: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Any:
    return _c2c_n(self, s, dim, norm, False, "ifft2")


def fft_rfft2(self: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Any:
    return _r2c_n(self, s, dim, norm, "rfft2", True)


def fft_ihfft2(self: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Any:
    return _r2c_n(self, s, dim, norm, "ihfft2", False)


def fft_irfft2(self: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Any:
    return _c2r_n(self, s, dim, norm, "irfft2", False)


def fft_hfft2(self: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Any:
    return _c2r_n(self, s, dim, norm, "hfft2", True)


# --- frequencies and shifts --------------------------------------------------------------------


def _freq_options(dtype: Any, device: Any) -> dict[str, Any]:
    return {"dtype": dtype if dtype is not None else _dt.get_default_dtype(), "device": device}


def fft_fftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
) -> Any:
    """``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    opts = _freq_options(dtype, device)
    k = aten.arange.default(n, **opts)
    k = aten.where.self(aten.lt.Scalar(k, (n + 1) // 2), k, aten.sub.Scalar(k, n))
    return aten.mul.Scalar(k, 1.0 / (n * d))


def fft_rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
) -> Any:
    """``[0, 1, ..., n // 2] / (d * n)``."""
    k = aten.arange.default(n // 2 + 1, **_freq_options(dtype, device))
    return aten.mul.Scalar(k, 1.0 / (n * d))


def _shift(self: Any, dim: Any, sign: int) -> Any:
    dims = list(range(self.ndim)) if dim is None else [_wrap(d, self.ndim) for d in dim]
    if not dims:
        return self
    shifts = [sign * (self.shape[d] // 2) for d in dims]
    return aten.roll.default(self, shifts, dims)


def fft_fftshift(self: Any, dim: Any = None) -> Any:
    return _shift(self, dim, 1)


def fft_ifftshift(self: Any, dim: Any = None) -> Any:
    return _shift(self, dim, -1)
