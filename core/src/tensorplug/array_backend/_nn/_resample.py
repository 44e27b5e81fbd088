"""Part ``resample`` of the ``nn`` family of the array kit: the upsampling operators
(``upsample_nearest1d/2d/3d``, ``_upsample_nearest_exact1d/2d/3d``, ``upsample_linear1d``,
``upsample_bilinear2d``, ``upsample_bicubic2d``, ``upsample_trilinear3d`` and the antialiased
``_upsample_bilinear2d_aa``/``_upsample_bicubic2d_aa``) with their backward kernels, the grid
samplers (``grid_sampler_2d``/``grid_sampler_3d`` and their backward kernels) and
``pixel_shuffle``/``pixel_unshuffle``.

Note [Separable resampling]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every upsampling mode is separable: output element ``(o1, ..., ok)`` is a sum of products of
one weight per spatial dim, ``w1[o1, i1] * ... * wk[ok, ik] * x[i1, ..., ik]``. So a kernel
resamples one spatial dim at a time, each with its *taps*: for every output position of that
dim, the input positions it reads (1 for nearest, 2 for linear, 4 for cubic, a window for the
antialiased filters) and their weights. The forward gathers (``take``) and weighs; the backward
is the transpose, one dense ``(out, in)`` weight matrix per dim applied with ``matmul``, which
adds up the repeated reads of clamped border positions as PyTorch's kernels' ``+=`` does.

The taps follow PyTorch's coordinate maps exactly (``area_pixel_compute_source_index``,
``nearest_idx``, ``nearest_exact_idx``, the cubic coefficients with A = -0.75 and clamped
borders, the antialias weights of ``_compute_weights_aa``), computed on the host in Python for
each (mode, sizes, align_corners, scale) and kept (``functools.lru_cache``). Where PyTorch
computes a coordinate in float32 (always for nearest; for float32, float16 and bfloat16 inputs
otherwise), the coordinate is rounded to float32 at each step (:func:`_f32`), so the index a
coordinate floors to is PyTorch's, also where float64 arithmetic would land on the other side
of an integer.

Note [Grid sampling]
~~~~~~~~~~~~~~~~~~~~
``grid_sampler_2d/3d`` read the input at positions a grid gives per output element, in
``[-1, 1]`` coordinates (x first: x indexes the last dim). Each coordinate is unnormalized,
then padded (border clamps, reflection reflects, then clamps), as PyTorch's
``grid_sampler_compute_source_index`` does; bilinear reads the 2 (or 4, 8) neighbours, nearest
the one at ``round-half-even``, bicubic the 4 x 4 neighbours whose own coordinates are padded
one by one (``get_value_bounded``). Positions outside the input read 0: the kernels gather
rows of channels from a copy of the input with a zero border one element wide around every
spatial dim, ``(N * prod(spatial + 2), C)``, and clamp every position into ``[-1, size]``, so
that no corner needs a mask (a position left of the input reads the left border's 0). The
backward adds the weighed gradients back at the same flat positions (``add.at`` on one flat
index per element) and drops the border, and differentiates the weights for the grid's
gradient, times the derivative of unnormalization and padding.
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
from collections.abc import Sequence
from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape, guard, torch_name
from ._layout import keeps_format_bound

# --- coordinates ----------------------------------------------------------------------------

_F32 = struct.Struct("f")


def _f32(x: float) -> float:
    """``x`` rounded to float32 (nearest even), as a C ``float`` holds it."""
    try:
        return float(_F32.unpack(_F32.pack(x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _keep(x: float) -> float:
    return x


_CUBIC_A = -0.75  # PyTorch's upsample_bicubic2d and grid_sampler's bicubic
_AA_CUBIC_A = -0.5  # the antialiased bicubic filter (PIL's)


def _cubic1(x: float, a: float) -> float:
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x: float, a: float) -> float:
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic_coefficients(t: float) -> tuple[float, float, float, float]:
    """The weights of positions ``floor - 1 .. floor + 2`` at fraction ``t`` (A = -0.75)."""
    a = _CUBIC_A
    return (_cubic2(t + 1, a), _cubic1(t, a), _cubic1(1 - t, a), _cubic2(2 - t, a))


def _scale_value(scale: float | None, n_in: int, n_out: int, r: Any) -> float:
    # compute_scales_value: 1/scale where a positive scale is given, else in/out
    if scale is not None and scale > 0:
        return float(r(1.0 / scale))
    return float(r(n_in / n_out))


def _area_scale(n_in: int, n_out: int, align_corners: bool, scale: float | None, r: Any) -> float:
    # area_pixel_compute_scale
    if align_corners:
        return float(r((n_in - 1) / (n_out - 1))) if n_out > 1 else 0.0
    return _scale_value(scale, n_in, n_out, r)


def _source(scale: float, i: int, align_corners: bool, cubic: bool, r: Any) -> float:
    # area_pixel_compute_source_index
    if align_corners:
        return float(r(scale * i))
    src = float(r(r(scale * r(i + 0.5)) - 0.5))
    return src if cubic or src >= 0 else 0.0


Taps = tuple[tuple[tuple[int, ...], ...], tuple[tuple[float, ...], ...]]


@functools.lru_cache(maxsize=512)
def axis_taps(
    mode: str,
    n_in: int,
    n_out: int,
    align_corners: bool,
    scale: float | None,
    single: bool,
    shortcut: bool,
) -> Taps:
    """The taps of one spatial dim (Note [Separable resampling]): ``(indices, weights)``, each
    a tuple of taps, each tap a tuple of ``n_out`` entries. ``single``: the coordinates are
    float32, as PyTorch computes them for that dtype. ``shortcut``: equal sizes copy (and
    nearest's doubled size repeats each element), whatever the scale (Note [Size shortcuts])."""
    r = _f32 if single else _keep
    outs = range(n_out)
    if shortcut and n_out == n_in:
        return ((tuple(outs),), ((1.0,) * n_out,))
    if mode in ("nearest", "nearest-exact"):
        if shortcut and mode == "nearest" and n_out == 2 * n_in:
            return ((tuple(o >> 1 for o in outs),), ((1.0,) * n_out,))
        s = _scale_value(scale, n_in, n_out, _f32)  # nearest_idx computes in float
        off = 0.5 if mode == "nearest-exact" else 0.0
        near = tuple(min(int(math.floor(_f32(_f32(o + off) * s))), n_in - 1) for o in outs)
        return ((near,), ((1.0,) * n_out,))
    if mode == "linear":
        s = _area_scale(n_in, n_out, align_corners, scale, r)
        i0, i1, w0, w1 = [], [], [], []
        for o in outs:
            src = _source(s, o, align_corners, False, r)
            lo = min(int(math.floor(src)), n_in - 1)
            lam = min(max(src - lo, 0.0), 1.0)
            i0.append(lo)
            i1.append(lo + (1 if lo < n_in - 1 else 0))
            w0.append(1.0 - lam)
            w1.append(lam)
        return ((tuple(i0), tuple(i1)), (tuple(w0), tuple(w1)))
    if mode == "cubic":
        s = _area_scale(n_in, n_out, align_corners, scale, r)
        cols: list[list[int]] = [[], [], [], []]
        wts: list[list[float]] = [[], [], [], []]
        for o in outs:
            src = _source(s, o, align_corners, True, r)
            lo = int(math.floor(src))
            t = float(r(src - lo))
            for k, w in enumerate(cubic_coefficients(t)):
                cols[k].append(min(max(lo - 1 + k, 0), n_in - 1))
                wts[k].append(w)
        return (tuple(tuple(c) for c in cols), tuple(tuple(w) for w in wts))
    if mode in ("linear_aa", "cubic_aa"):
        return _aa_taps(mode, n_in, n_out, align_corners, scale, r)
    raise OpError(f"unknown resampling mode {mode!r}")


def _aa_filter(mode: str, x: float) -> float:
    x = abs(x)
    if mode == "linear_aa":
        return 1.0 - x if x < 1.0 else 0.0
    if x < 1.0:
        return _cubic1(x, _AA_CUBIC_A)
    if x < 2.0:
        return _cubic2(x, _AA_CUBIC_A)
    return 0.0


def _aa_taps(
    mode: str, n_in: int, n_out: int, align_corners: bool, scale: float | None, r: Any
) -> Taps:
    # _compute_weights_aa: a window of the filter, widened by the scale when downsampling,
    # normalized to sum 1; windows are padded to the widest with weight 0 at a valid index
    s = _area_scale(n_in, n_out, align_corners, scale, r)
    support = (2.0 if mode == "linear_aa" else 4.0) * 0.5
    if s >= 1.0:
        support = float(r(support * s))
    inv = float(r(1.0 / s)) if s >= 1.0 else 1.0
    rows: list[tuple[int, list[float]]] = []
    for o in range(n_out):
        center = float(r(s * (o + 0.5)))
        lo = max(int(center - support + 0.5), 0)
        size = min(int(center + support + 0.5), n_in) - lo
        ws = [_aa_filter(mode, float(r((j + lo - center + 0.5) * inv))) for j in range(size)]
        total = sum(ws)
        if total != 0.0:
            ws = [w / total for w in ws]
        rows.append((lo, ws))
    width = max((len(ws) for _, ws in rows), default=1) or 1
    idx = tuple(tuple(lo + min(k, max(len(ws) - 1, 0)) for lo, ws in rows) for k in range(width))
    wts = tuple(tuple(ws[k] if k < len(ws) else 0.0 for _, ws in rows) for k in range(width))
    return (idx, wts)


# --- upsampling ---------------------------------------------------------------------------

# Note [Size shortcuts]
# PyTorch's CPU kernels copy where the input and output sizes of a dim are equal, ignoring a
# scale that would map elsewhere (scale_factor=1.03 keeps size 6), and nearest's nearest_idx also
# maps a doubled size to o >> 1; but not every kernel takes the shortcut. Measured against
# torch 2.13 (tests/nn/test_resample.py pins each): the forward of nearest 2-d, linear, bilinear,
# trilinear and the antialiased modes takes it, nearest 1-d and 3-d and bicubic do not; every
# backward takes it except the antialiased ones'.
_FORWARD_SHORTCUT = frozenset(
    {
        "upsample_nearest2d",
        "upsample_linear1d",
        "upsample_bilinear2d",
        "upsample_trilinear3d",
        "_upsample_bilinear2d_aa",
        "_upsample_bicubic2d_aa",
    }
)
_BACKWARD_SHORTCUT = frozenset({"nearest", "nearest-exact", "linear", "cubic"})

# op name -> (taps mode, spatial dims, takes align_corners)
UPSAMPLE: dict[str, tuple[str, int, bool]] = {
    "upsample_nearest1d": ("nearest", 1, False),
    "upsample_nearest2d": ("nearest", 2, False),
    "upsample_nearest3d": ("nearest", 3, False),
    "_upsample_nearest_exact1d": ("nearest-exact", 1, False),
    "_upsample_nearest_exact2d": ("nearest-exact", 2, False),
    "_upsample_nearest_exact3d": ("nearest-exact", 3, False),
    "upsample_linear1d": ("linear", 1, True),
    "upsample_bilinear2d": ("linear", 2, True),
    "upsample_trilinear3d": ("linear", 3, True),
    "upsample_bicubic2d": ("cubic", 2, True),
    "_upsample_bilinear2d_aa": ("linear_aa", 2, True),
    "_upsample_bicubic2d_aa": ("cubic_aa", 2, True),
}

_LETTERS = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}


def _split(has_align: bool, n: int, rest: tuple[Any, ...]) -> tuple[bool, tuple[Any, ...]]:
    align = bool(rest[0]) if has_align else False
    scales = tuple(rest[1:] if has_align else rest)
    return align, scales + (None,) * (n - len(scales))


def check_upsample(
    n: int, input_size: Sequence[int], output_size: Sequence[int]
) -> tuple[int, ...]:
    """PyTorch's ``upsample_{n}d_common_check``: the full output shape."""
    if len(output_size) != n:
        raise OpError(f"It is expected output_size equals to {n}, but got size {len(output_size)}")
    if len(input_size) != n + 2:
        raise OpError(
            f"It is expected input_size equals to {n + 2}, but got size {len(input_size)}"
        )
    ins, outs = tuple(input_size[2:]), tuple(int(o) for o in output_size)
    if any(i <= 0 for i in ins) or any(o <= 0 for o in outs):
        names = _LETTERS[n]
        shown_in = ", ".join(f"{c}: {v}" for c, v in zip(names, ins, strict=True))
        shown_out = ", ".join(f"{c}: {v}" for c, v in zip(names, outs, strict=True))
        raise OpError(
            "Input and output sizes should be greater than 0, but got input "
            f"({shown_in}) output ({shown_out})"
        )
    return (int(input_size[0]), int(input_size[1]), *outs)


# the kernel PyTorch names when a dtype is not implemented
_DTYPE_KERNEL = {
    "nearest": "compute_indices_weights_nearest",
    "nearest-exact": "compute_indices_weights_nearest",
    "linear": "compute_indices_weights_linear",
    "cubic": "compute_indices_weights_cubic",
    "linear_aa": "compute_index_ranges_weights",
    "cubic_aa": "compute_index_ranges_weights",
}


def _not_implemented(op: str, kernel: str, d: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f"aten::{op}: \"{kernel}\" not implemented for '{torch_name(d)}'")


def _index_array(kit: Kit, values: Sequence[int], device: Any) -> Any:
    with kit.on(device):
        return kit.xp.asarray(values, dtype=kit.storage[_dt.int64])


def _weight_array(kit: Kit, values: Sequence[float], dtype: Any, device: Any) -> Any:
    with kit.on(device):
        return kit.xp.asarray(values, dtype=dtype)


def _along(shape: Sequence[int], axis: int, n: int) -> tuple[int, ...]:
    """The shape that broadcasts ``n`` values along ``axis`` of an array of rank len(shape)."""
    return (n,) + (1,) * (len(shape) - axis - 1)


def _gather(kit: Kit, a: Any, axis: int, taps: Taps, device: Any) -> Any:
    """One spatial dim resampled by its taps (Note [Separable resampling])."""
    xp = kit.xp
    idx, wts = taps
    if len(idx) == 1 and all(w == 1.0 for w in wts[0]):
        return xp.take(a, _index_array(kit, idx[0], device), axis=axis)
    out = None
    shape = _along(a.shape, axis, len(idx[0]))
    for i, w in zip(idx, wts, strict=True):
        term = xp.take(a, _index_array(kit, i, device), axis=axis) * xp.reshape(
            _weight_array(kit, w, a.dtype, device), shape
        )
        out = term if out is None else out + term
    return out


def _matrix(kit: Kit, taps: Taps, n_in: int, dtype: Any, device: Any) -> Any:
    """The dense ``(out, in)`` weight matrix of one dim's taps; repeated indices add up."""
    xp = kit.xp
    idx, wts = taps
    with kit.on(device):
        cols = xp.reshape(xp.arange(n_in, dtype=kit.storage[_dt.int64]), (1, n_in))
    m = None
    for i, w in zip(idx, wts, strict=True):
        hit = xp.reshape(_index_array(kit, i, device), (len(i), 1)) == cols
        term = kit.cast(hit, dtype) * xp.reshape(_weight_array(kit, w, dtype, device), (len(i), 1))
        m = term if m is None else m + term
    return m


def _apply(kit: Kit, a: Any, axis: int, m: Any) -> Any:
    """``a`` contracted with ``m`` along ``axis``: ``(..., in, ...)`` to ``(..., out, ...)``."""
    xp = kit.xp
    shape = tuple(int(s) for s in a.shape)
    n_out, n_in = int(m.shape[0]), int(m.shape[1])
    pre = math.prod(shape[:axis])
    post = math.prod(shape[axis + 1 :])
    if post == 1:
        r = xp.matmul(xp.reshape(a, (pre, n_in)), xp.matrix_transpose(m))
    else:
        r = xp.matmul(m, xp.reshape(a, (pre, n_in, post)))
    return xp.reshape(r, (*shape[:axis], n_out, *shape[axis + 1 :]))


def _apply_transposed(kit: Kit, g: Any, axis: int, m: Any) -> Any:
    """``g`` contracted with ``m.T`` along ``axis``: ``(..., out, ...)`` to ``(..., in, ...)``."""
    xp = kit.xp
    shape = tuple(int(s) for s in g.shape)
    n_out, n_in = int(m.shape[0]), int(m.shape[1])
    pre = math.prod(shape[:axis])
    post = math.prod(shape[axis + 1 :])
    if post == 1:
        r = xp.matmul(xp.reshape(g, (pre, n_out)), m)
    else:
        r = xp.matmul(xp.matrix_transpose(m), xp.reshape(g, (pre, n_out, post)))
    return xp.reshape(r, (*shape[:axis], n_in, *shape[axis + 1 :]))


def _compute_dtype(kit: Kit, name: str, mode: str, d: _dt.dtype) -> Any:
    if d.kind == "f":
        return kit.accumulate[d]
    if mode.startswith("nearest") and d is _dt.uint8:
        return kit.storage[d]
    raise _not_implemented(name, _DTYPE_KERNEL[mode], d)


# Note [Dense resampling]
# A dim of at most _DENSE_MAX_IN inputs is resampled by one matrix product with its dense
# (out, in) weights: BLAS does the 2 or 4 multiply-adds of each output faster than gathering
# 2 or 4 shifted copies, up to about this size. A product multiplies every input by every
# weight, zeros included, so an inf or nan would spread to outputs that do not read it: the
# input is checked once per call, and one that is not finite takes the gathers.
_DENSE_MAX_IN = 128


def upsample(kit: Kit, name: str) -> Kernel:
    """The kernel of ``aten::<name>``, one of :data:`UPSAMPLE`: ``(self, output_size,
    [align_corners,] *scales)``."""
    mode, n, has_align = UPSAMPLE[name]
    xp = kit.xp
    shortcut = name in _FORWARD_SHORTCUT

    def kernel(self: Tensor, output_size: Sequence[int], *rest: Any) -> Tensor:
        align, scales = _split(has_align, n, rest)
        in_shape = tuple(int(s) for s in self._data.shape)
        out_shape = check_upsample(n, in_shape, output_size)
        d = self._dtype
        cd = _compute_dtype(kit, name, mode, d)
        if in_shape[1] == 0:
            raise OpError(
                f"Non-empty {n + 2}D data tensor expected but got a tensor with sizes "
                f"{fmt_shape(in_shape)}"
            )
        single = cd != kit.storage.get(_dt.float64)
        a = kit.cast(self._data, cd)
        dense = d.kind == "f"
        finite: bool | None = None
        for k in range(n):
            ax = 2 + k
            taps = axis_taps(mode, in_shape[ax], out_shape[ax], align, scales[k], single, shortcut)
            if dense and len(taps[0]) > 1 and in_shape[ax] <= _DENSE_MAX_IN:
                if finite is None:  # Note [Dense resampling]
                    finite = bool(xp.all(xp.isfinite(a)))
                if finite:
                    a = _apply(kit, a, ax, _matrix(kit, taps, in_shape[ax], cd, self._device))
                    continue
            a = _gather(kit, a, ax, taps, self._device)
        return kit.wrap(a, d, self._device)

    kernel.__name__ = kernel.__qualname__ = name
    return guard(name, kernel, kit.key_name)


def upsample_backward(kit: Kit, name: str) -> Kernel:
    """The kernel of ``aten::<name>_backward``: ``(grad_output, output_size, input_size,
    [align_corners,] *scales)``, the transpose of the forward."""
    mode, n, has_align = UPSAMPLE[name]
    bname = name + "_backward"
    shortcut = mode in _BACKWARD_SHORTCUT

    def kernel(
        grad_output: Tensor, output_size: Sequence[int], input_size: Sequence[int], *rest: Any
    ) -> Tensor:
        align, scales = _split(has_align, n, rest)
        in_shape = tuple(int(s) for s in input_size)
        full = check_upsample(n, in_shape, output_size)
        g_shape = tuple(int(s) for s in grad_output._data.shape)
        if len(g_shape) != n + 2:
            raise OpError(
                f"Expected grad_output to be a tensor of dimension {n + 2} but got: dimension "
                f"{len(g_shape)}"
            )
        for i, (want, got) in enumerate(zip(full, g_shape, strict=True)):
            if want != got:
                raise OpError(
                    f"Expected grad_output to have the same shape as output; output.size({i}) = "
                    f"{want} but got grad_output.size({i}) = {got}"
                )
        d = grad_output._dtype
        if d.kind != "f":
            raise _not_implemented(bname, _DTYPE_KERNEL[mode], d)
        cd = kit.accumulate[d]
        single = cd != kit.storage.get(_dt.float64)
        g = kit.cast(grad_output._data, cd)
        for k in range(n):
            ax = 2 + k
            taps = axis_taps(mode, in_shape[ax], full[ax], align, scales[k], single, shortcut)
            g = _apply_transposed(
                kit, g, ax, _matrix(kit, taps, in_shape[ax], cd, grad_output._device)
            )
        return kit.wrap(g, d, grad_output._device)

    kernel.__name__ = kernel.__qualname__ = bname
    return guard(bname, kernel, kit.key_name)


# --- pixel shuffle ------------------------------------------------------------------------


def pixel_shuffle(kit: Kit, self: Tensor, upscale_factor: int) -> Tensor:
    xp = kit.xp
    shape = tuple(int(s) for s in self._data.shape)
    if len(shape) < 3:
        raise OpError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{len(shape)} dimension(s)"
        )
    r = int(upscale_factor)
    if r <= 0:
        raise OpError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = shape
    if c % (r * r) != 0:
        raise OpError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    nb = len(batch)
    a = xp.reshape(self._data, (*batch, c // (r * r), r, r, h, w))
    b = list(range(nb))
    a = xp.permute_dims(a, (*b, nb, nb + 3, nb + 1, nb + 4, nb + 2))
    a = xp.reshape(a, (*batch, c // (r * r), h * r, w * r))
    return kit.wrap(kit.contiguous_copy(a), self._dtype, self._device)


def pixel_unshuffle(kit: Kit, self: Tensor, downscale_factor: int) -> Tensor:
    xp = kit.xp
    shape = tuple(int(s) for s in self._data.shape)
    if len(shape) < 3:
        raise OpError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{len(shape)} dimension(s)"
        )
    r = int(downscale_factor)
    if r <= 0:
        raise OpError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = shape
    if h % r != 0:
        raise OpError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            f"input.size(-2)={h} is not divisible by {r}"
        )
    if w % r != 0:
        raise OpError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            f"input.size(-1)={w} is not divisible by {r}"
        )
    nb = len(batch)
    a = xp.reshape(self._data, (*batch, c, h // r, r, w // r, r))
    b = list(range(nb))
    a = xp.permute_dims(a, (*b, nb, nb + 2, nb + 4, nb + 1, nb + 3))
    a = xp.reshape(a, (*batch, c * r * r, h // r, w // r))
    return kit.wrap(kit.contiguous_copy(a), self._dtype, self._device)


# --- grid sampling --------------------------------------------------------------------------

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2


def check_grid_sampler(input_shape: Sequence[int], grid_shape: Sequence[int], n: int,
                       mode: int) -> None:  # fmt: skip
    """PyTorch's ``check_grid_sampler_common`` and ``check_grid_sampler_{n}d``."""
    si, sg = fmt_shape(input_shape), fmt_shape(grid_shape)
    if len(input_shape) != len(grid_shape):
        raise OpError(
            "grid_sampler(): expected grid to have same number of dimensions as input, but got "
            f"input with sizes {si} and grid with sizes {sg}"
        )
    if input_shape[0] != grid_shape[0]:
        raise OpError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {si} and grid with sizes {sg}"
        )
    if grid_shape[-1] != len(input_shape) - 2:
        raise OpError(
            f"grid_sampler(): expected grid to have size {len(input_shape) - 2} in last "
            f"dimension, but got grid with sizes {sg}"
        )
    for i in range(2, len(input_shape)):
        if input_shape[i] <= 0:
            raise OpError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                f"has sizes {si} with dimension {i} being empty"
            )
    if len(input_shape) != n + 2:
        raise OpError(
            f"grid_sampler(): expected {n + 2}D input and grid with same number of dimensions, "
            f"but got input with sizes {si} and grid with sizes {sg}"
        )
    if n == 3 and mode == BICUBIC:
        raise OpError("grid_sampler(): bicubic interpolation only supports 4D input")
    if mode not in (BILINEAR, NEAREST, BICUBIC):
        raise OpError(f"grid_sampler(): unknown interpolation mode {mode}")


class _Coords:
    """Coordinate arithmetic of the grid samplers on arrays of one dtype."""

    def __init__(self, kit: Kit, padding: int, align: bool) -> None:
        if padding not in (ZEROS, BORDER, REFLECTION):
            raise OpError(f"grid_sampler(): unknown padding mode {padding}")
        self.kit, self.xp, self.padding, self.align = kit, kit.xp, padding, align

    def unnormalize(self, x: Any, size: int) -> tuple[Any, float]:
        """The coordinate in pixels, and its derivative in ``x``."""
        if self.align:
            return (x + 1) * ((size - 1) / 2), (size - 1) / 2
        return ((x + 1) * size - 1) / 2, size / 2

    def pad(self, x: Any, size: int) -> tuple[Any, Any]:
        """``x`` after padding (border clamps, reflection reflects then clamps), and the
        derivative (an array of -1, 0, 1, or 1.0 where there is no padding)."""
        xp = self.xp
        if self.padding == ZEROS:
            return x, 1.0
        if self.padding == REFLECTION:
            lo2, hi2 = (0, 2 * (size - 1)) if self.align else (-1, 2 * size - 1)
            x, mult = self._reflect(x, lo2, hi2)
        else:
            mult = 1.0
        inside = (x > 0) & (x < size - 1)
        clipped = xp.clip(x, 0, size - 1)
        return clipped, self.kit.cast(inside, x.dtype) * mult

    def _reflect(self, x: Any, twice_low: int, twice_high: int) -> tuple[Any, Any]:
        xp = self.xp
        if twice_low == twice_high:
            return xp.zeros_like(x), xp.zeros_like(x)
        low = twice_low / 2
        span = (twice_high - twice_low) / 2
        shifted = x - low
        one = xp.ones_like(shifted)  # the standard's where takes no two scalars
        sign = xp.where(shifted < 0, -one, one)
        mag = xp.abs(shifted)
        extra = xp.remainder(mag, span)
        flips = xp.floor(mag / span)
        even = xp.remainder(flips, 2) == 0
        out = xp.where(even, extra + low, span - extra + low)
        return out, self.kit.cast(xp.where(even, sign, -sign), x.dtype)

    def safe(self, x: Any) -> Any:
        # safe_downgrade_to_int_range: inf and nan read as far outside (-100)
        xp = self.xp
        return xp.where(xp.isfinite(x) & (xp.abs(x) < 2.0**62), x, -100.0)


def _grid_taps(
    co: _Coords, mode: int, x: Any, size: int, nonfinite: bool
) -> tuple[list[tuple[Any, Any, Any]], Any]:
    """The taps of one spatial dim of a grid: ``[(position, weight, d weight / d x)]``, the
    positions in the input padded by one zero on each side (Note [Grid sampling]), and
    ``d x_pixels / d x``. ``nonfinite``: the grid holds inf or nan (read as far outside)."""
    xp, kit = co.xp, co.kit
    i64 = kit.storage[_dt.int64]

    def padded(pos: Any) -> Any:
        # a position outside the input lands on the zero border (-1 or size)
        return kit.cast(xp.clip(pos, -1, size), i64) + 1

    if mode == BICUBIC:
        ix, mult = co.unnormalize(x, size)
        if nonfinite:
            ix = co.safe(ix)
        lo = xp.floor(ix)
        t = ix - lo
        a = _CUBIC_A
        coeffs = (_cubic2(t + 1, a), _cubic1(t, a), _cubic1(1 - t, a), _cubic2(2 - t, a))

        def d1(v: Any) -> Any:
            return (3 * (a + 2) * v - 2 * (a + 3)) * v

        def d2(v: Any) -> Any:
            return (3 * a * v - 10 * a) * v + 8 * a

        dcoeffs = (d2(t + 1), d1(t), -d1(1 - t), -d2(2 - t))
        taps = []
        for k in range(4):
            pos, _ = co.pad(lo + (k - 1), size)
            taps.append((padded(pos), coeffs[k], dcoeffs[k]))
        return taps, mult
    ix, m1 = co.unnormalize(x, size)
    ix, m2 = co.pad(ix, size)
    if nonfinite:
        ix = co.safe(ix)
    mult = m2 * m1
    if mode == NEAREST:
        return [(padded(xp.round(ix)), None, None)], mult
    lo = xp.floor(ix)
    frac = ix - lo
    taps = [(padded(lo), 1 - frac, -1.0), (padded(lo + 1), frac, 1.0)]
    return taps, mult


class _Grid:
    """What the grid samplers' forward and backward share: the checked arguments, the taps of
    each spatial dim, and the input as rows of channels at padded flat positions."""

    def __init__(
        self, kit: Kit, input: Tensor, grid: Tensor, n: int, mode: int, padding: int,
        align: bool, name: str,
    ) -> None:  # fmt: skip
        xp = kit.xp
        ishape = tuple(int(v) for v in input._data.shape)
        gshape = tuple(int(v) for v in grid._data.shape)
        check_grid_sampler(ishape, gshape, n, mode)
        kit.same_device(input, grid)
        d = input._dtype
        if d.kind != "f":
            raise _not_implemented(name, f"{name.split('_backward')[0]}_cpu_kernel_impl", d)
        if grid._dtype is not d:
            raise OpError(
                f"expected scalar type {torch_name(d)} but found {torch_name(grid._dtype)}"
            )
        self.kit, self.n, self.mode = kit, n, mode
        self.cd = cd = kit.accumulate[d]
        self.batch, self.channels = ishape[0], ishape[1]
        self.spatial = ishape[2:]
        self.padded = tuple(v + 2 for v in self.spatial)
        self.gshape = gshape
        self.q = math.prod(gshape[1:-1])
        self.device = input._device
        co = _Coords(kit, padding, align)
        g = xp.reshape(kit.cast(grid._data, cd), (self.batch * self.q, n))
        nonfinite = not bool(xp.all(xp.isfinite(g)))
        # per spatial dim k (input order), the grid component n - 1 - k (x is the last dim)
        self.taps: list[list[tuple[Any, Any, Any]]] = []
        self.mults: list[Any] = []
        for k in range(n):
            taps, mult = _grid_taps(co, mode, g[:, n - 1 - k], self.spatial[k], nonfinite)
            self.taps.append(taps)
            self.mults.append(mult)
        with kit.on(self.device):
            base = xp.arange(self.batch, dtype=kit.storage[_dt.int64]) * math.prod(self.padded)
        self.rows = xp.reshape(
            xp.broadcast_to(xp.reshape(base, (self.batch, 1)), (self.batch, self.q)),
            (self.batch * self.q,),
        )

    def source(self, a: Any) -> Any:
        """``(N, C, *spatial)`` as rows of channels, ``(N * prod(padded), C)``, with a zero
        border of one element around every spatial dim."""
        xp, kit = self.kit.xp, self.kit
        with kit.on(self.device):
            out = xp.zeros((self.batch, *self.padded, self.channels), dtype=self.cd)
        inner = (slice(None), *(slice(1, 1 + v) for v in self.spatial), slice(None))
        moved = xp.permute_dims(kit.cast(a, self.cd), (0, *range(2, self.n + 2), 1))
        out[inner] = moved
        return xp.reshape(out, (self.batch * math.prod(self.padded), self.channels))

    def corners(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(len(t)) for t in self.taps)))

    def corner(self, combo: tuple[int, ...]) -> tuple[Any, Any, list[Any]]:
        """The flat position, the weight (None for nearest) and the per-dim weights."""
        flat = self.rows
        stride = math.prod(self.padded)
        ws = []
        for k, t in enumerate(combo):
            pos, w, _ = self.taps[k][t]
            stride //= self.padded[k]
            flat = flat + (pos * stride if stride != 1 else pos)
            ws.append(w)
        weight = None
        for w in ws:
            if w is not None:
                weight = w if weight is None else weight * w
        return flat, weight, ws

    def unflatten(self, rows: Any, spatial: Sequence[int]) -> Any:
        """``(N * prod(spatial), C)`` rows back to ``(N, C, *spatial)``, C-contiguous."""
        xp = self.kit.xp
        a = xp.reshape(rows, (self.batch, *spatial, self.channels))
        a = xp.permute_dims(a, (0, self.n + 1, *range(1, self.n + 1)))
        return self.kit.contiguous_copy(a)


def grid_sampler(kit: Kit, name: str, n: int) -> Kernel:
    xp = kit.xp

    def kernel(
        input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
    ) -> Tensor:
        gs = _Grid(kit, input, grid, n, interpolation_mode, padding_mode, align_corners, name)
        src = gs.source(input._data)
        rows = gs.batch * gs.q
        out = None
        for combo in gs.corners():
            flat, weight, _ = gs.corner(combo)
            term = xp.take(src, flat, axis=0)
            if weight is not None:
                term = term * xp.reshape(weight, (rows, 1))
            out = term if out is None else out + term
        if out is None:
            with kit.on(gs.device):
                out = xp.zeros((rows, gs.channels), dtype=gs.cd)
        return kit.wrap(gs.unflatten(out, gs.gshape[1:-1]), input._dtype, input._device)

    kernel.__name__ = kernel.__qualname__ = name
    return guard(name, kernel, kit.key_name)


def _scatter_add(kit: Kit, ats: list[Any], adds: list[Any], size: int, dtype: Any,
                 device: Any) -> Any:  # fmt: skip
    """A length-``size`` array with ``adds[i][j]`` added at ``ats[i][j]``, by one ``add.at``
    on flat indices (numpy >= 2 runs 1-d ``add.at`` on a fast path)."""
    xp = kit.xp
    at = xp.concat(ats) if len(ats) > 1 else ats[0]
    vals = xp.concat(adds) if len(adds) > 1 else adds[0]
    with kit.on(device):
        out = xp.zeros((size,), dtype=dtype)
    if kit.fancy_setitem:  # numpy, cupy: the index as an array, not a tuple (the fast path)
        xp.add.at(out, at, vals)
    else:
        kit.put(out, (at,), vals, accumulate=True)
    return out


def grid_sampler_backward(kit: Kit, name: str, n: int) -> Kernel:
    xp = kit.xp
    bname = name + "_backward"

    def kernel(
        grad_output: Tensor,
        input: Tensor,
        grid: Tensor,
        interpolation_mode: int,
        padding_mode: int,
        align_corners: bool,
        output_mask: Sequence[bool],
    ) -> tuple[Tensor | None, Tensor | None]:
        gs = _Grid(kit, input, grid, n, interpolation_mode, padding_mode, align_corners, bname)
        rows, c = gs.batch * gs.q, gs.channels
        go = kit.cast(grad_output._data, gs.cd)
        go = xp.reshape(xp.permute_dims(go, (0, *range(2, n + 2), 1)), (rows, c))
        want_input, want_grid = bool(output_mask[0]), bool(output_mask[1])
        i64 = kit.storage[_dt.int64]
        size = gs.batch * math.prod(gs.padded) * c
        with kit.on(gs.device):
            lanes = xp.reshape(xp.arange(c, dtype=i64), (1, c))
            dgrid = [xp.zeros((rows,), dtype=gs.cd) for _ in range(n)]
        ats: list[Any] = []
        adds: list[Any] = []
        src = gs.source(input._data) if want_grid and interpolation_mode != NEAREST else None
        for combo in gs.corners():
            flat, weight, ws = gs.corner(combo)
            if want_input:  # one flat index per element
                ats.append(xp.reshape(xp.reshape(flat, (rows, 1)) * c + lanes, (rows * c,)))
                vals = go if weight is None else go * xp.reshape(weight, (rows, 1))
                adds.append(xp.reshape(vals, (rows * c,)))
            if src is None:
                continue
            # d out / d x_k: this corner's value (0 outside) times the other dims' weights
            # and this one's weight derivative, summed with the gradient over channels
            picked = xp.sum(xp.take(src, flat, axis=0) * go, axis=1)
            for k, t in enumerate(combo):
                part = picked * gs.taps[k][t][2]
                for j, w in enumerate(ws):
                    if j != k:
                        part = part * w
                dgrid[k] = dgrid[k] + part
        grad_grid = None
        if want_grid:
            comps = [dgrid[n - 1 - j] * gs.mults[n - 1 - j] for j in range(n)]  # x first
            gg = xp.reshape(xp.stack(comps, axis=-1), gs.gshape)
            grad_grid = kit.wrap(gg, grid._dtype, grid._device)
        grad_input = None
        if want_input:
            gin = _scatter_add(kit, ats, adds, size, gs.cd, gs.device)
            full = xp.reshape(gin, (gs.batch, *gs.padded, c))
            inner = (slice(None), *(slice(1, 1 + v) for v in gs.spatial), slice(None))
            gi = xp.reshape(full[inner], (gs.batch * math.prod(gs.spatial), c))
            grad_input = kit.wrap(gs.unflatten(gi, gs.spatial), input._dtype, gs.device)
        return grad_input, grad_grid

    kernel.__name__ = kernel.__qualname__ = bname
    return guard(bname, kernel, kit.key_name)


def _named(make: Any, *args: Any) -> Any:
    return lambda kit: make(kit, *args)


KERNELS: dict[str, Kernel] = {
    "pixel_shuffle": pixel_shuffle,
    "pixel_unshuffle": pixel_unshuffle,
}

BUILDERS: dict[str, Any] = {
    **{name: _named(upsample, name) for name in UPSAMPLE},
    **{name + "_backward": _named(upsample_backward, name) for name in UPSAMPLE},
    "grid_sampler_2d": _named(grid_sampler, "grid_sampler_2d", 2),
    "grid_sampler_3d": _named(grid_sampler, "grid_sampler_3d", 3),
    "grid_sampler_2d_backward": _named(grid_sampler_backward, "grid_sampler_2d", 2),
    "grid_sampler_3d_backward": _named(grid_sampler_backward, "grid_sampler_3d", 3),
}


# Note [Channels last through the kernels]: the upsampling kernels keep their source's format
# (the input's forward, the incoming gradient's backward)
# but for the backward kernels PyTorch gives in row-major order
_ROW_MAJOR = frozenset(
    name + "_backward"
    for name in (
        "upsample_bicubic2d", "_upsample_bicubic2d_aa", "upsample_nearest3d",
        "_upsample_nearest_exact3d",
    )
)  # fmt: skip
_KEEPS_FORMAT = frozenset(UPSAMPLE) | {name + "_backward" for name in UPSAMPLE}


def build(kit: Kit) -> Kernels:
    k: Kernels = {
        name: keeps_format_bound(kit, make(kit), row_major=name in _ROW_MAJOR)
        if name in _KEEPS_FORMAT
        else make(kit)
        for name, make in BUILDERS.items()
    }
    k.update((name, guard(name, bind(kit, fn), kit.key_name)) for name, fn in KERNELS.items())
    return k
