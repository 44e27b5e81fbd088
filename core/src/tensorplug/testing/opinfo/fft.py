"""Samples and oracles of the ``fft`` family: the kernels ``_fft_c2c``, ``_fft_r2c`` and
``_fft_c2r``, the 22 functions of ``tensorplug.fft`` against ``numpy.fft``, and
``conj``/``conj_physical``. Complex inputs are made from the sample's real dtype (float32 ->
complex64), so the harness's dtypes stay the real ones."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._core import (
    DT,
    FLOATS,
    OpInfo,
    S,
    SampleInput,
    add,
    fn,
    make,
    meth,
)

_COMPLEX = {"float32": "complex64", "float64": "complex128"}
_REAL = {"complex64": "float32", "complex128": "float64"}
_TOL = {"float32": (2e-5, 2e-5), "float64": (1e-9, 1e-9)}


def _cplx(shape: tuple[int, ...], d: str, rng: np.random.Generator) -> np.ndarray:
    a = make(shape, d, rng) + 1j * make(shape, d, rng)
    return np.asarray(a).astype(_COMPLEX[d])


def _as_float(x: Any) -> Any:
    """Integer inputs transform as the default dtype (float32)."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "biu":
        return x.astype(np.float32)
    return x


def _result(kind: str) -> Callable[[SampleInput, str], str]:
    """The result dtype: "c" complex of the input's precision, "r" real of it."""

    def rule(s: SampleInput, d: str) -> str:
        x = s.args[0]
        name = x.dtype.name if x.dtype.kind in "fc" else "float32"
        real = _REAL.get(name, name)
        return _COMPLEX[real] if kind == "c" else real

    return rule


def _norm_of(norm: str | None) -> str:
    return "backward" if norm is None else norm


# --- the kernels -----------------------------------------------------------------------------

_NORM_MODE = {0: ("backward", "forward"), 1: ("ortho", "ortho"), 2: ("forward", "backward")}


def _c2c_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("last_forward", _cplx((3, 8), d, rng), [1], 0, True)
    yield S("two_dims_inverse_by_n", _cplx((4, 6), d, rng), [0, 1], 2, False)
    yield S("ortho", _cplx((2, 5, 3), d, rng), [0, 2], 1, True)


def _ref_c2c(x: Any, dim: list[int], normalization: int, forward: bool) -> Any:
    fwd, inv = _NORM_MODE[normalization]
    if forward:
        return np.fft.fftn(x, axes=dim, norm=fwd)
    return np.fft.ifftn(x, axes=dim, norm=inv)


def _r2c_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("onesided", make((3, 8), d, rng), [1], 0, True)
    yield S("full", make((3, 7), d, rng), [1], 2, False)
    yield S("two_dims", make((4, 6), d, rng), [0, 1], 1, True)


def _ref_r2c(x: Any, dim: list[int], normalization: int, onesided: bool) -> Any:
    norm = _NORM_MODE[normalization][0]
    return (np.fft.rfftn if onesided else np.fft.fftn)(x, axes=dim, norm=norm)


def _c2r_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("even", _cplx((3, 5), d, rng), [1], 2, 8)
    yield S("odd", _cplx((3, 5), d, rng), [1], 0, 9)
    yield S("two_dims", _cplx((4, 4), d, rng), [0, 1], 1, 6)


def _ref_c2r(x: Any, dim: list[int], normalization: int, last_dim_size: int) -> Any:
    s = [x.shape[a] for a in dim[:-1]] + [last_dim_size]
    return np.fft.irfftn(x, s=s, axes=dim, norm=_NORM_MODE[normalization][1])


for _name, _gen, _ref, _kind in (
    ("_fft_c2c", _c2c_samples, _ref_c2c, "c"),
    ("_fft_r2c", _r2c_samples, _ref_r2c, "c"),
    ("_fft_c2r", _c2r_samples, _ref_c2r, "r"),
):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            sample_inputs=_gen,
            ref=_ref,
            dtypes=FLOATS,
            result_dtype=_result(_kind),
            tol=_TOL,
        )
    )


# --- tensorplug.fft ----------------------------------------------------------------------------


def _one_d(
    real_only: bool, complex_in: bool
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def x(shape: tuple[int, ...]) -> np.ndarray:
            return _cplx(shape, d, rng) if complex_in else make(shape, d, rng)

        yield S("default", x((3, 8)))
        for norm in ("forward", "ortho"):
            yield S(f"norm_{norm}", x((2, 6)), norm=norm)
        yield S("n_pad_dim0", x((5, 3)), 8, 0)
        yield S("n_cut", x((2, 9)), n=6)
        yield S("1d_odd", x((7,)))
        if not real_only and not complex_in and d == "float32":
            yield S("int64", make((6,), "int64", rng))
        if not complex_in and not real_only:
            yield S("complex_input", _cplx((4, 6), d, rng), dim=-1)

    return gen


def _np1(f: Callable[..., Any]) -> Callable[..., Any]:
    def ref(x: Any, n: Any = None, dim: int = -1, norm: str | None = None) -> Any:
        return f(_as_float(x), n=n, axis=dim, norm=_norm_of(norm))

    return ref


for _name, _np, _real_only, _complex_in, _kind in (
    ("fft", np.fft.fft, False, False, "c"),
    ("ifft", np.fft.ifft, False, False, "c"),
    ("rfft", np.fft.rfft, True, False, "c"),
    ("irfft", np.fft.irfft, False, True, "r"),
    ("hfft", np.fft.hfft, False, True, "r"),
    ("ihfft", np.fft.ihfft, True, False, "c"),
):
    add(
        OpInfo(
            f"fft_{_name}",
            op=fn(f"fft.{_name}"),
            sample_inputs=_one_d(_real_only, _complex_in),
            ref=_np1(_np),
            dtypes=FLOATS,
            result_dtype=_result(_kind),
            tol=_TOL,
        )
    )


def _n_d(
    two: bool, complex_in: bool
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        def x(shape: tuple[int, ...]) -> np.ndarray:
            return _cplx(shape, d, rng) if complex_in else make(shape, d, rng)

        yield S("default", x((2, 4, 6)))
        yield S("s", x((3, 5, 6)), s=[4, 8])
        yield S("dim", x((4, 3, 5)), dim=[0, 2], norm="ortho")
        yield S("s_dim_forward", x((4, 6)), [6, 4], [1, 0], "forward")
        if not two:
            yield S("one_dim", x((3, 6)), dim=[1])
            yield S("s_only", x((2, 3, 6)), s=[3, 4])

    return gen


def _npn(f: Callable[..., Any], two: bool) -> Callable[..., Any]:
    def ref(x: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Any:
        if dim is None:
            dim = (-2, -1) if two else (None if s is None else list(range(-len(s), 0)))
        return f(_as_float(x), s=s, axes=dim, norm=_norm_of(norm))

    return ref


def _np_hfftn(x: Any, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    """hfftn(x) = irfftn(conj(x)) with the forward transform's normalization."""
    inv = {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]
    return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=inv)


def _np_ihfftn(x: Any, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    inv = {"backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]
    return np.conj(np.fft.rfftn(x, s=s, axes=axes, norm=inv))


for _suffix, _two in (("2", True), ("n", False)):
    for _name, _np, _complex_in, _kind in (
        ("fft", np.fft.fftn, False, "c"),
        ("ifft", np.fft.ifftn, False, "c"),
        ("rfft", np.fft.rfftn, False, "c"),
        ("irfft", np.fft.irfftn, True, "r"),
        ("hfft", _np_hfftn, True, "r"),
        ("ihfft", _np_ihfftn, False, "c"),
    ):
        add(
            OpInfo(
                f"fft_{_name}{_suffix}",
                op=fn(f"fft.{_name}{_suffix}"),
                sample_inputs=_n_d(_two, _complex_in),
                ref=_npn(_np, _two),
                dtypes=FLOATS,
                result_dtype=_result(_kind),
                tol=_TOL,
            )
        )


def _freq_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("even", 8)
    yield S("odd_spacing", 7, 0.25)
    yield S("dtype", 6, dtype=DT(d))


def _freq_dtype(s: SampleInput, d: str) -> str:
    dt = s.kwargs.get("dtype")
    return dt.name if isinstance(dt, DT) else "float32"


for _name, _np in (("fftfreq", np.fft.fftfreq), ("rfftfreq", np.fft.rfftfreq)):
    add(
        OpInfo(
            f"fft_{_name}",
            op=fn(f"fft.{_name}"),
            sample_inputs=_freq_samples,
            ref=lambda n, d=1.0, dtype=None, _f=_np: _f(n, d),
            dtypes=FLOATS,
            result_dtype=_freq_dtype,
            kind="factory",
        )
    )


def _shift_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("all", make((4, 5), d, rng))
    yield S("dim", make((3, 6), d, rng), dim=[1])
    yield S("dims", make((2, 3, 5), d, rng), [0, 2])


for _name, _np in (("fftshift", np.fft.fftshift), ("ifftshift", np.fft.ifftshift)):
    add(
        OpInfo(
            f"fft_{_name}",
            op=fn(f"fft.{_name}"),
            sample_inputs=_shift_samples,
            ref=lambda x, dim=None, _f=_np: _f(x, axes=dim),
            dtypes=(*FLOATS, "int64"),
        )
    )


# --- complex numbers ---------------------------------------------------------------------------


def _conj_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("complex", _cplx((3, 4), d, rng))
    yield S("real", make((2, 3), d, rng))


def _same_kind(s: SampleInput, d: str) -> str:
    return str(s.args[0].dtype.name)


for _name in ("conj_physical", "conj"):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_conj_samples,
            ref=np.conj,
            dtypes=FLOATS,
            result_dtype=_same_kind,
        )
    )


def _view_as_real_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", _cplx((3, 4), d, rng))
    yield S("0dim", _cplx((), d, rng))
    yield S("transposed", _cplx((4, 3), d, rng).T)


def _np_view_as_real(x: Any) -> Any:
    re = x.real
    return np.lib.stride_tricks.as_strided(re, (*x.shape, 2), (*re.strides, re.itemsize))


def _view_as_complex_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("2d", make((3, 2), d, rng))
    yield S("3d", make((2, 4, 2), d, rng))


def _np_view_as_complex(x: Any) -> Any:
    return x.view(_COMPLEX[x.dtype.name])[..., 0]


add(
    OpInfo(
        "view_as_real",
        op=fn("view_as_real"),
        strided_view=True,
        sample_inputs=_view_as_real_samples,
        ref=_np_view_as_real,
        dtypes=FLOATS,
        result_dtype=lambda s, d: d,
        kind="view",
    )
)
add(
    OpInfo(
        "view_as_complex",
        op=fn("view_as_complex"),
        strided_view=True,
        sample_inputs=_view_as_complex_samples,
        ref=_np_view_as_complex,
        dtypes=FLOATS,
        result_dtype=lambda s, d: _COMPLEX[d],
        kind="view",
    )
)


def _part_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("complex", _cplx((3, 4), d, rng))
    yield S("complex_0dim", _cplx((), d, rng))


for _name, _np in (("real", np.real), ("imag", np.imag)):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            strided_view=True,
            sample_inputs=_part_samples,
            ref=_np,
            dtypes=FLOATS,
            result_dtype=lambda s, d: d,
            kind="view",
        )
    )


def _pair_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("same_shape", make((2, 3), d, rng), make((2, 3), d, rng))
    yield S("broadcast", make((3, 1), d, rng), make((1, 4), d, rng))
    yield S("0dim", make((), d, rng), make((), d, rng))


add(
    OpInfo(
        "complex",
        op=fn("complex"),
        sample_inputs=_pair_samples,
        ref=lambda re, im: re + 1j * im,
        dtypes=FLOATS,
        result_dtype=lambda s, d: _COMPLEX[d],
    )
)
add(
    OpInfo(
        "polar",
        op=fn("polar"),
        sample_inputs=_pair_samples,
        ref=lambda r, t: r * np.cos(t) + 1j * r * np.sin(t),
        dtypes=FLOATS,
        result_dtype=lambda s, d: _COMPLEX[d],
        tol=_TOL,
    )
)


def _angle_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("real", make((3, 4), d, rng))
    if d in _COMPLEX:
        yield S("complex", _cplx((2, 3), d, rng))
        yield S("signs", np.array([-1.0, 0.0, 2.0, np.nan]).astype(d))


def _angle_dtype(s: SampleInput, d: str) -> str:
    name = s.args[0].dtype.name
    return _REAL.get(name, name if name in _COMPLEX else "float32")


def _np_angle(x: Any) -> Any:
    if x.dtype.kind == "c":
        return np.angle(x)
    x = x.astype(np.float64)
    return np.where(x < 0, np.pi, np.where(np.isnan(x), x, 0.0))


add(
    OpInfo(
        "angle",
        op=fn("angle"),
        method=meth("angle"),
        sample_inputs=_angle_samples,
        ref=_np_angle,
        dtypes=(*FLOATS, "int64"),
        result_dtype=_angle_dtype,
        tol=_TOL,
    )
)
for _name in ("resolve_conj", "resolve_neg"):
    add(
        OpInfo(
            _name,
            op=fn(_name),
            method=meth(_name),
            sample_inputs=_conj_samples,
            ref=lambda x: x,
            dtypes=FLOATS,
            result_dtype=_same_kind,
            kind="view",
        )
    )


# --- windows -------------------------------------------------------------------------------------
# Oracles: numpy's window functions (np.hanning, np.hamming, np.blackman, np.bartlett, np.kaiser;
# the periodic window is the symmetric one of N + 1 points without its last)


def _np_window(kind: str) -> Callable[..., Any]:
    def ref(n: int, periodic: bool = True, *params: float, dtype: Any = None) -> Any:
        m = n + 1 if periodic else n
        if kind == "hamming" and params:
            alpha = params[0]
            beta = params[1] if len(params) > 1 else 0.46
            k = np.arange(m)
            w = alpha - beta * np.cos(2 * np.pi * k / (m - 1)) if m > 1 else np.ones(m)
        elif kind == "kaiser":
            w = np.kaiser(m, params[0] if params else 12.0)
        else:
            w = {"hann": np.hanning, "hamming": np.hamming, "blackman": np.blackman,
                 "bartlett": np.bartlett}[kind](m)  # fmt: skip
        if n <= 1:
            w = np.ones(n)
        return w[:n] if periodic else w

    return ref


def _window_samples(overload: str) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        extra: tuple[Any, ...] = {
            "periodic_alpha": (0.6,), "periodic_alpha_beta": (0.6, 0.3), "beta": (5.0,),
        }.get(overload, ())  # fmt: skip
        if overload == "default":
            yield S("n7", 7, dtype=DT(d))
            yield S("n1", 1, dtype=DT(d))
            yield S("n0", 0, dtype=DT(d))
            return
        yield S("periodic", 8, True, *extra, dtype=DT(d))
        yield S("symmetric", 6, False, *extra, dtype=DT(d))

    return gen


for _kind, _overloads in (
    ("hann", ("default", "periodic")),
    ("hamming", ("default", "periodic", "periodic_alpha", "periodic_alpha_beta")),
    ("blackman", ("default", "periodic")),
    ("bartlett", ("default", "periodic")),
    ("kaiser", ("default", "periodic", "beta")),
):
    for _overload in _overloads:
        add(
            OpInfo(
                f"{_kind}_window" if _overload == "default" else f"{_kind}_window.{_overload}",
                op=fn(f"{_kind}_window"),
                sample_inputs=_window_samples(_overload),
                ref=_np_window(_kind),
                dtypes=FLOATS,
                result_dtype=_freq_dtype,
                kind="factory",
                tol=_TOL,
                needs_special=_kind == "kaiser",
            )
        )


# --- stft / istft ------------------------------------------------------------------------------
# Oracles: the framing, windowing and overlap-add written with numpy (np.pad, np.fft)


def _np_window_padded(window: Any, n_fft: int, win_length: int, dtype: Any) -> Any:
    w = np.ones(win_length, dtype) if window is None else window
    left = (n_fft - win_length) // 2
    return np.pad(w, (left, n_fft - win_length - left))


def _np_stft(
    x: Any, n_fft: int, hop_length: Any = None, win_length: Any = None, window: Any = None,
    center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
    onesided: Any = None, return_complex: Any = None,
) -> Any:  # fmt: skip
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if center:
        mode = {"replicate": "edge", "circular": "wrap"}.get(pad_mode, pad_mode)
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=mode)
    w = _np_window_padded(window, n_fft, win, x.dtype)
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    idx = np.arange(n_frames)[:, None] * hop + np.arange(n_fft)
    frames = x[..., idx] * w
    one = (not np.iscomplexobj(x)) if onesided is None else onesided
    spec = (np.fft.rfft if one else np.fft.fft)(
        frames, axis=-1, norm="ortho" if normalized else "backward"
    )
    return np.swapaxes(spec, -1, -2)


def _stft_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("default", make((40,), d, rng), 8, return_complex=True)
    yield S(
        "batch_hop_window",
        make((2, 30), d, rng),
        8,
        3,
        6,
        np.hanning(8)[1:7].astype(d),
        return_complex=True,
    )
    yield S(
        "pad_constant_normalized",
        make((33,), d, rng),
        8,
        pad_mode="constant",
        normalized=True,
        return_complex=True,
    )
    yield S(
        "no_center_two_sided",
        make((2, 20), d, rng),
        6,
        center=False,
        onesided=False,
        return_complex=True,
    )
    yield S("complex_input", _cplx((24,), d, rng), 8)


add(
    OpInfo(
        "stft.center",
        op=fn("stft"),
        method=meth("stft"),
        sample_inputs=_stft_samples,
        ref=_np_stft,
        dtypes=FLOATS,
        result_dtype=_result("c"),
        tol=_TOL,
    )
)


def _stft_plain_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # the overload without center (an explicit hop_length and normalized pick it)
    yield S("positional", make((2, 20), d, rng), 8, 2, 8, None, False, True, True)


add(
    OpInfo(
        "stft",
        op=lambda *a, **k: __import__("tensorplug").ops.aten.stft.default(*a, **k),
        sample_inputs=_stft_plain_samples,
        ref=lambda x, n, hop, win, w, norm, one, rc: _np_stft(
            x, n, hop, win, w, False, "reflect", norm, one, rc
        ),
        dtypes=FLOATS,
        result_dtype=_result("c"),
        tol=_TOL,
    )
)


def _np_istft(
    spec: Any, n_fft: int, hop_length: Any = None, win_length: Any = None, window: Any = None,
    center: bool = True, normalized: bool = False, onesided: Any = None, length: Any = None,
    return_complex: bool = False,
) -> Any:  # fmt: skip
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    real = np.float64 if spec.dtype == np.complex128 else np.float32
    one = spec.shape[-2] != n_fft if onesided is None else onesided
    frames = np.swapaxes(spec, -1, -2)
    norm = "ortho" if normalized else "backward"
    frames = (
        np.fft.irfft(frames, n_fft, axis=-1, norm=norm)
        if one
        else np.fft.ifft(frames, axis=-1, norm=norm).real
    )
    w = _np_window_padded(window, n_fft, win, real)
    n_frames = frames.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    y = np.zeros((*frames.shape[:-2], total))
    env = np.zeros(total)
    for f in range(n_frames):
        y[..., f * hop : f * hop + n_fft] += frames[..., f, :] * w
        env[f * hop : f * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    end = total - start if length is None else min(start + length, total)
    y = y[..., start:end] / env[start:end]
    if length is not None and y.shape[-1] < length:
        y = np.concatenate([y, np.zeros((*y.shape[:-1], length - y.shape[-1]))], -1)
    return y


def _istft_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = make((40,), d, rng)
    yield S("default", _np_stft(x, 8).astype(_COMPLEX[d]), 8)
    w = np.hanning(10)[1:9].astype(d)
    yield S(
        "batch_window_length",
        _np_stft(make((2, 30), d, rng), 8, 2, 8, w).astype(_COMPLEX[d]),
        8,
        2,
        8,
        w,
        length=30,
    )
    yield S(
        "no_center_normalized",
        _np_stft(make((24,), d, rng), 8, 4, center=False, normalized=True).astype(_COMPLEX[d]),
        8,
        4,
        center=False,
        normalized=True,
    )


add(
    OpInfo(
        "istft",
        op=fn("istft"),
        method=meth("istft"),
        sample_inputs=_istft_samples,
        ref=_np_istft,
        dtypes=FLOATS,
        result_dtype=_result("r"),
        tol=_TOL,
    )
)
