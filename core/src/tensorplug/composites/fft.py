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

import math
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


# --- windows -----------------------------------------------------------------------------------
# PyTorch's window functions (CompositeExplicitAutograd there: factories of arange and cos).
# ``periodic`` (the default) gives the first ``N`` points of the symmetric window of ``N + 1``,
# the window of spectral analysis (stft); ``periodic=False`` the symmetric one, of filter design.


def _window_points(name: str, n: int, periodic: bool, dtype: Any, device: Any) -> tuple[Any, int]:
    """``(arange(N) in dtype, N)`` with N the symmetric window's length, after PyTorch's checks."""
    d = dtype if dtype is not None else _dt.get_default_dtype()
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {d}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    length = n + 1 if periodic else n
    return aten.arange.default(length, dtype=d, device=device), length


def _trim(w: Any, n: int, periodic: bool) -> Any:
    return aten.narrow.default(w, 0, 0, n) if periodic else w


def _small(n: int, dtype: Any, device: Any) -> Any:
    """The windows of length 0 (empty) and 1 (a one)."""
    d = dtype if dtype is not None else _dt.get_default_dtype()
    return aten.ones.default([n], dtype=d, device=device)


def _cosine_window(
    name: str, n: int, periodic: bool, terms: Sequence[float], dtype: Any, device: Any
) -> Any:
    """``sum_k terms[k] (-1)^k cos(2 pi k i / (N - 1))``: hann, hamming, blackman."""
    k, length = _window_points(name, n, periodic, dtype, device)
    if n <= 1:
        return _small(n, dtype, device)
    phase = aten.mul.Scalar(k, 2 * math.pi / (length - 1))
    w = aten.mul.Scalar(aten.ones_like.default(k), terms[0])
    for j, c in enumerate(terms[1:], 1):
        w = aten.add.Tensor(
            w, aten.mul.Scalar(aten.cos.default(aten.mul.Scalar(phase, j)), c * (-1) ** j)
        )
    return _trim(w, n, periodic)


def _window_kwargs(
    dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool | None = None
) -> tuple[Any, Any]:
    return dtype, device


def hann_window(window_length: int, **kwargs: Any) -> Any:
    return hann_window_periodic(window_length, True, **kwargs)


def hann_window_periodic(window_length: int, periodic: bool, **kwargs: Any) -> Any:
    dtype, device = _window_kwargs(**kwargs)
    return _cosine_window("hann_window", window_length, periodic, (0.5, 0.5), dtype, device)


def hamming_window(window_length: int, **kwargs: Any) -> Any:
    return hamming_window_periodic_alpha_beta(window_length, True, 0.54, 0.46, **kwargs)


def hamming_window_periodic(window_length: int, periodic: bool, **kwargs: Any) -> Any:
    return hamming_window_periodic_alpha_beta(window_length, periodic, 0.54, 0.46, **kwargs)


def hamming_window_periodic_alpha(
    window_length: int, periodic: bool, alpha: float, **kwargs: Any
) -> Any:
    return hamming_window_periodic_alpha_beta(window_length, periodic, alpha, 0.46, **kwargs)


def hamming_window_periodic_alpha_beta(
    window_length: int, periodic: bool, alpha: float, beta: float, **kwargs: Any
) -> Any:
    dtype, device = _window_kwargs(**kwargs)
    return _cosine_window("hamming_window", window_length, periodic, (alpha, beta), dtype, device)


def blackman_window(window_length: int, **kwargs: Any) -> Any:
    return blackman_window_periodic(window_length, True, **kwargs)


def blackman_window_periodic(window_length: int, periodic: bool, **kwargs: Any) -> Any:
    dtype, device = _window_kwargs(**kwargs)
    return _cosine_window(
        "blackman_window", window_length, periodic, (0.42, 0.5, 0.08), dtype, device
    )


def bartlett_window(window_length: int, **kwargs: Any) -> Any:
    return bartlett_window_periodic(window_length, True, **kwargs)


def bartlett_window_periodic(window_length: int, periodic: bool, **kwargs: Any) -> Any:
    """``1 - |2 i / (N - 1) - 1|``."""
    dtype, device = _window_kwargs(**kwargs)
    k, length = _window_points("bartlett_window", window_length, periodic, dtype, device)
    if window_length <= 1:
        return _small(window_length, dtype, device)
    ramp = aten.sub.Scalar(aten.mul.Scalar(k, 2.0 / (length - 1)), 1.0)
    w = aten.rsub.Scalar(aten.abs.default(ramp), 1.0)
    return _trim(w, window_length, periodic)


def kaiser_window(window_length: int, **kwargs: Any) -> Any:
    return kaiser_window_beta(window_length, True, 12.0, **kwargs)


def kaiser_window_periodic(window_length: int, periodic: bool, **kwargs: Any) -> Any:
    return kaiser_window_beta(window_length, periodic, 12.0, **kwargs)


def kaiser_window_beta(window_length: int, periodic: bool, beta: float, **kwargs: Any) -> Any:
    """``I0(beta sqrt(1 - ((i - a) / a)^2)) / I0(beta)``, ``a = (N - 1) / 2``."""
    dtype, device = _window_kwargs(**kwargs)
    k, length = _window_points("kaiser_window", window_length, periodic, dtype, device)
    if window_length <= 1:
        return _small(window_length, dtype, device)
    a = (length - 1) / 2
    r = aten.mul.Scalar(aten.sub.Scalar(k, a), 1.0 / a)
    inner = aten.sqrt.default(
        aten.clamp_min.default(aten.rsub.Scalar(aten.mul.Tensor(r, r), 1.0), 0.0)
    )
    num = aten.i0.default(aten.mul.Scalar(inner, beta))
    den = aten.i0.default(aten.full.default([], beta, dtype=k.dtype, device=k.device))
    return _trim(aten.div.Tensor(num, den), window_length, periodic)


# --- short-time Fourier transform --------------------------------------------------------------
# stft frames the signal (optionally padded by n_fft // 2 at each end, ``center``), multiplies
# each frame by the window (zero-padded to n_fft, centred) and transforms it; istft inverts it
# by overlap-add divided by the window's squared envelope (PyTorch's SpectralOps.cpp).


def _arange(start: int, end: int, device: Any) -> Any:
    return aten.arange.start_step(start, end, 1, dtype=_dt.int64, device=device)


def _frame_index(n_frames: int, n_fft: int, hop: int, device: Any) -> Any:
    """``f * hop + j`` for frame f and point j, flattened (frame-major)."""
    starts = aten.mul.Scalar(aten.unsqueeze.default(_arange(0, n_frames, device), 1), hop)
    return aten.reshape.default(aten.add.Tensor(starts, _arange(0, n_fft, device)), [-1])


def _pad_last(x: Any, pad: int, mode: str) -> Any:
    """``x`` padded by ``pad`` at both ends of its last dim: "reflect", "constant",
    "replicate" or "circular" (torch.nn.functional.pad's modes)."""
    n = x.shape[-1]
    if mode == "constant":
        shape = [*x.shape[:-1], pad]
        z = aten.zeros.default(shape, dtype=x.dtype, device=x.device)
        return aten.cat.default([z, x, z], -1)
    if mode == "reflect":
        if pad >= n:
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({pad}, {pad}) at dimension {x.ndim - 1} of input {list(x.shape)}"
            )
    i = _arange(-pad, n + pad, x.device)
    if mode == "reflect":  # -i below 0, 2 (n - 1) - i past the end
        i = aten.abs.default(i)
        idx = aten.where.self(aten.ge.Scalar(i, n), aten.rsub.Scalar(i, 2 * (n - 1)), i)
    elif mode == "replicate":
        idx = aten.clamp.default(i, 0, n - 1)
    elif mode == "circular":
        idx = aten.remainder.Scalar(i, n)
    else:
        raise RuntimeError(f"Unrecognised padding mode {mode}")
    return aten.index_select.default(x, -1, idx)


def _padded_window(window: Any, n_fft: int, win_length: int, like: Any) -> Any:
    if window is None:
        real = like.dtype.to_real() if like.dtype.is_complex else like.dtype
        window = aten.ones.default([win_length], dtype=real, device=like.device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(
            f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got "
            f"window with size {list(window.shape)}"
        )
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        shape_l, shape_r = [left], [n_fft - win_length - left]
        zl = aten.zeros.default(shape_l, dtype=window.dtype, device=window.device)
        zr = aten.zeros.default(shape_r, dtype=window.dtype, device=window.device)
        window = aten.cat.default([zl, window, zr], 0)
    return window


def _frames(x: Any, n_fft: int, hop: int, n_frames: int) -> Any:
    """``x[..., f * hop + j]`` for frame f and point j: shape (..., n_frames, n_fft)."""
    picked = aten.index_select.default(x, -1, _frame_index(n_frames, n_fft, hop, x.device))
    return aten.reshape.default(picked, [*x.shape[:-1], n_frames, n_fft])


def stft(
    self: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Any:
    complex_in = self.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if align_to_window:
        raise RuntimeError("stft: align_to_window=True is not supported by tensorplug")
    if self.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {self.ndim}D tensor")
    x = self if self.ndim == 2 else aten.unsqueeze.default(self, 0)
    x = _floating(x, "stft")
    length = x.shape[-1]
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    w = _padded_window(window, n_fft, win, x)
    n_frames = 1 + (length - n_fft) // hop
    frames = aten.mul.Tensor(_frames(x, n_fft, hop, n_frames), w)
    if onesided is None:
        onesided = not complex_in
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = 1 if normalized else 0
    if frames.dtype.is_complex:
        spec = aten._fft_c2c.default(frames, [-1], norm, True)
    else:
        spec = aten._fft_r2c.default(frames, [-1], norm, onesided)
    spec = aten.transpose.int(spec, -1, -2)
    if self.ndim == 1:
        spec = aten.squeeze.dim(spec, 0)
    if not return_complex:
        return aten.view_as_real.default(aten.contiguous.default(spec))
    return spec


def stft_center(
    self: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Any:
    x = self
    if center:
        if self.ndim not in (1, 2):
            raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {self.ndim}D tensor")
        x = _pad_last(self, n_fft // 2, pad_mode)
    return stft(
        x, n_fft, hop_length, win_length, window, normalized, onesided, return_complex,
        align_to_window,
    )  # fmt: skip


def istft(
    self: Any,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Any = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Any:
    if not self.dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    if self.ndim not in (2, 3):
        raise RuntimeError(
            f"istft: expected a tensor with 2 or 3 dimensions of complex, got {self.ndim}"
        )
    spec = self if self.ndim == 3 else aten.unsqueeze.default(self, 0)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    want = n_fft // 2 + 1 if onesided else n_fft
    if n_freq != want:
        raise RuntimeError(
            f"istft: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
            if onesided
            else f"istft: expected the frequency dimension of the input tensor to match n_fft "
            f"when onesided=False, but got {n_freq}"
        )
    if return_complex and onesided:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    if hop <= 0 or win <= 0 or win > n_fft:
        raise RuntimeError("istft: expected 0 < hop_length and 0 < win_length <= n_fft")
    real = spec.dtype.to_real()
    w = _padded_window(window, n_fft, win, aten.real.default(spec))
    norm = 1 if normalized else 2
    frames = aten.transpose.int(spec, -1, -2)  # (B, n_frames, n_freq)
    if onesided:
        frames = aten._fft_c2r.default(frames, [-1], norm, n_fft)
    else:
        frames = aten._fft_c2c.default(frames, [-1], norm, False)
        if not return_complex:
            frames = aten.real.default(frames)
    frames = aten.mul.Tensor(frames, w)
    total = n_fft + hop * (n_frames - 1)
    idx = _frame_index(n_frames, n_fft, hop, spec.device)
    batch = spec.shape[0]
    y = aten.zeros.default([batch, total], dtype=frames.dtype, device=spec.device)
    y = aten.index_add.default(y, -1, idx, aten.reshape.default(frames, [batch, n_frames * n_fft]))
    sq = aten.mul.Tensor(w, w)
    sq = aten._to_copy.default(aten.real.default(sq), dtype=real)
    env = aten.zeros.default([total], dtype=real, device=spec.device)
    env = aten.index_add.default(
        env,
        0,
        idx,
        aten.reshape.default(aten.expand.default(sq, [n_frames, n_fft]), [n_frames * n_fft]),
    )
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else min(start + length, total)
    y = aten.narrow.default(y, -1, start, end - start)
    env = aten.narrow.default(env, 0, start, end - start)
    lowest = aten.amin.default(aten.abs.default(env)) if env.numel() else None
    if lowest is not None and lowest.item() < 1e-11:  # PyTorch reads it with item() too
        raise RuntimeError(
            "istft: window overlap add min: 0 (the window's squared overlap-add vanishes: "
            "choose a window and hop_length that overlap, the NOLA condition)"
        )
    y = aten.div.Tensor(y, env)
    if length is not None and end - start < length:
        y = aten.cat.default(
            [
                y,
                aten.zeros.default([batch, length - (end - start)], dtype=y.dtype, device=y.device),
            ],
            -1,
        )
    if self.ndim == 2:
        y = aten.squeeze.dim(y, 0)
    return y
