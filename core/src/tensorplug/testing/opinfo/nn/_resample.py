"""Samples and oracles of the ``nn`` family, part ``resample``: the upsampling operators (and
their ``.vec`` overloads and backward kernels), the grid samplers (and their backward
kernels), ``affine_grid_generator`` and ``pixel_shuffle``/``pixel_unshuffle``.

The oracles are written from PyTorch's definitions with explicit loops over output positions,
in float64, not from the kit's code: each output element is the sum of its input elements'
weights (:func:`_weights_1d` gives them per dim, as PyTorch's coordinate maps define them), a
backward kernel adds the gradient back along the same weights, and a grid sampler's gradient in
the grid is a central difference of the weights along the coordinate.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, LOWP_TOL_LOOSE, OpInfo, S, SampleInput, add, fn, make, same

# --- upsampling ------------------------------------------------------------------------------

# op -> (mode, spatial dims, takes align_corners)
_UPSAMPLE: dict[str, tuple[str, int, bool]] = {
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
# PyTorch's kernels that copy a dim of equal sizes (and nearest's that halve a doubled one)
_FORWARD_COPIES = {
    "upsample_nearest2d", "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
    "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa",
}  # fmt: skip
_BACKWARD_COPIES = {"nearest", "nearest-exact", "linear", "cubic"}


def _keys(x: float, a: float) -> float:
    """Keys' cubic convolution kernel with parameter ``a``."""
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a
    return 0.0


def _weights_1d(
    mode: str, n_in: int, n_out: int, align: bool, scale: float | None, copies: bool
) -> list[list[tuple[int, float]]]:
    """For each output position of one dim, its input positions and their weights."""
    if copies and n_in == n_out:
        return [[(o, 1.0)] for o in range(n_out)]
    if copies and mode == "nearest" and n_out == 2 * n_in:
        return [[(o // 2, 1.0)] for o in range(n_out)]
    ratio = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    if mode in ("nearest", "nearest-exact"):
        shift = 0.5 if mode == "nearest-exact" else 0.0
        return [[(min(math.floor((o + shift) * ratio), n_in - 1), 1.0)] for o in range(n_out)]
    if align:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    rows: list[list[tuple[int, float]]] = []
    for o in range(n_out):
        if mode in ("linear_aa", "cubic_aa"):
            # PIL's filters: a window widened by the ratio when shrinking, normalized
            half = (1.0 if mode == "linear_aa" else 2.0) * max(ratio, 1.0)
            center = ratio * (o + 0.5)
            lo = max(int(center - half + 0.5), 0)
            hi = min(int(center + half + 0.5), n_in)
            stretch = max(ratio, 1.0)

            def f(x: float) -> float:
                x = abs(x)
                if mode == "linear_aa":
                    return max(0.0, 1.0 - x)
                return _keys(x, -0.5)

            ws = [(j, f((j - center + 0.5) / stretch)) for j in range(lo, hi)]
            total = sum(w for _, w in ws)
            rows.append([(j, w / total if total else w) for j, w in ws])
            continue
        src = ratio * o if align else ratio * (o + 0.5) - 0.5
        if mode == "linear":
            src = max(src, 0.0)
            i = min(math.floor(src), n_in - 1)
            t = min(src - i, 1.0)
            rows.append([(i, 1 - t), (min(i + 1, n_in - 1), t)])
        else:  # cubic, borders clamped
            i = math.floor(src)
            t = src - i
            rows.append(
                [(min(max(i + k, 0), n_in - 1), _keys(t - k, -0.75)) for k in (-1, 0, 1, 2)]
            )
    return rows


def _upsample_rows(
    name: str, in_shape: Sequence[int], out_sizes: Sequence[int], rest: Sequence[Any],
    backward: bool,
) -> list[list[list[tuple[int, float]]]]:  # fmt: skip
    mode, n, aligned = _UPSAMPLE[name]
    align = bool(rest[0]) if aligned else False
    scales = list(rest[1:] if aligned else rest) + [None] * n
    copies = mode in _BACKWARD_COPIES if backward else name in _FORWARD_COPIES
    return [
        _weights_1d(mode, in_shape[2 + k], out_sizes[k], align, scales[k], copies) for k in range(n)
    ]


def _resample(x: np.ndarray, rows: list[list[list[tuple[int, float]]]]) -> np.ndarray:
    """Every output position of ``x`` (N, C, *spatial) as the sum over the product of its
    dims' (position, weight) lists."""
    out_sizes = [len(r) for r in rows]
    y = np.zeros((*x.shape[:2], *out_sizes))
    for o in itertools.product(*(range(s) for s in out_sizes)):
        for taps in itertools.product(*(rows[k][o[k]] for k in range(len(rows)))):
            w = math.prod(t[1] for t in taps)
            y[(..., *o)] += w * x[(..., *(t[0] for t in taps))]
    return y


def _resample_back(
    g: np.ndarray, in_shape: Sequence[int], rows: list[list[list[tuple[int, float]]]]
) -> np.ndarray:
    gx = np.zeros(tuple(in_shape))
    for o in itertools.product(*(range(len(r)) for r in rows)):
        for taps in itertools.product(*(rows[k][o[k]] for k in range(len(rows)))):
            w = math.prod(t[1] for t in taps)
            gx[(..., *(t[0] for t in taps))] += w * g[(..., *o)]
    return gx


def _ref_upsample(name: str) -> Callable[..., Any]:
    def ref(x: Any, output_size: Sequence[int], *rest: Any) -> Any:
        x = np.asarray(x, np.float64)
        return _resample(x, _upsample_rows(name, x.shape, output_size, rest, False))

    return ref


def _ref_upsample_vec(name: str) -> Callable[..., Any]:
    aligned = _UPSAMPLE[name][2]

    def ref(x: Any, output_size: Any, *rest: Any) -> Any:
        x = np.asarray(x, np.float64)
        factors = rest[-1]
        n = x.ndim - 2
        if output_size is None:
            output_size = [int(x.shape[2 + k] * factors[k]) for k in range(n)]
            scales = list(factors)
        else:
            scales = [None] * n
        head = [rest[0]] if aligned else []
        return _resample(x, _upsample_rows(name, x.shape, output_size, head + scales, False))

    return ref


def _ref_upsample_backward(name: str) -> Callable[..., Any]:
    def ref(g: Any, output_size: Sequence[int], input_size: Sequence[int], *rest: Any) -> Any:
        rows = _upsample_rows(name, input_size, output_size, rest, True)
        return _resample_back(np.asarray(g, np.float64), input_size, rows)

    return ref


def _thin(d: str, samples: Iterator[SampleInput], keep: int = 2) -> Iterator[SampleInput]:
    """All samples for float32; the first ``keep`` for the other dtypes (the kernels are
    dtype-generic: one code path, the dtype only casts), to keep the suite fast."""
    return samples if d == "float32" else itertools.islice(samples, keep)


def _upsample_cases(name: str) -> list[tuple[str, list[int], list[int], list[float | None]]]:
    """(label, input shape, output size, scales) of an op's samples."""
    n = _UPSAMPLE[name][1]
    side = {1: 6, 2: 4, 3: 3}[n]
    shape = [2, 1] + [side] * n
    return [
        ("down", shape, [side - 2] * n, [None] * n),
        ("up", shape, [side + 3 - k for k in range(n)], [None] * n),
        ("up_scaled", shape, [int(side * 1.7)] * n, [1.7] * n),
        ("same_size_scaled", shape, [side] * n, [1.05] * n),
    ]


def _upsample_samples(name: str) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    aligned = _UPSAMPLE[name][2]

    def all_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for label, shape, size, scales in _upsample_cases(name):
            for align in (False, True) if aligned else (None,):
                head = [] if align is None else [align]
                tag = "" if align is None else ("_align" if align else "_half_pixel")
                yield S(label + tag, make(shape, d, rng), size, *head, *scales)
                if label == "down" and align is not True:
                    yield S("empty_batch" + tag, make([0, *shape[1:]], d, rng), size, *head)

    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        return _thin(d, all_samples(d, rng))

    return samples


def _upsample_vec_samples(
    name: str,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    aligned = _UPSAMPLE[name][2]
    n = _UPSAMPLE[name][1]

    def all_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        side = {1: 5, 2: 4, 3: 3}[n]
        shape = [1, 2] + [side] * n
        for align in (False, True) if aligned else (None,):
            head = [] if align is None else [align]
            yield S("size", make(shape, d, rng), [side + 2] * n, *head, None)
            yield S(
                "scale_factors",
                make(shape, d, rng),
                None,
                *head,
                [1.5 + 0.25 * k for k in range(n)],
            )
            yield S("shrink_factors", make(shape, d, rng), None, *head, [0.7] * n)

    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        return _thin(d, all_samples(d, rng), 1)

    return samples


def _upsample_backward_samples(
    name: str,
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    aligned = _UPSAMPLE[name][2]

    def all_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for label, shape, size, scales in _upsample_cases(name):
            for align in (False, True) if aligned else (None,):
                head = [] if align is None else [align]
                g = make(shape[:2] + size, d, rng)
                yield S(label, g, size, shape, *head, *scales)

    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        return _thin(d, all_samples(d, rng), 1)

    return samples


_LOWP_SPOT_CHECKS = ("upsample_nearest2d", "upsample_bilinear2d", "upsample_bicubic2d")

for _name in _UPSAMPLE:
    add(
        OpInfo(
            _name,
            op=fn(_name),
            sample_inputs=_upsample_samples(_name),
            ref=_ref_upsample(_name),
            dtypes=FLOATS + (LOWP if _name in _LOWP_SPOT_CHECKS else ()),
            result_dtype=same,
            tol=LOWP_TOL_LOOSE,
        )
    )
    add(
        OpInfo(
            f"{_name}.vec",
            op=fn(_name),
            sample_inputs=_upsample_vec_samples(_name),
            ref=_ref_upsample_vec(_name),
            dtypes=FLOATS,
            result_dtype=same,
        )
    )
    add(
        OpInfo(
            f"{_name}_backward",
            op=fn(f"{_name}_backward"),
            sample_inputs=_upsample_backward_samples(_name),
            ref=_ref_upsample_backward(_name),
            dtypes=FLOATS,
            result_dtype=same,
        )
    )


# --- pixel shuffle -------------------------------------------------------------------------


def _ref_pixel_shuffle(x: Any, r: int) -> Any:
    x = np.asarray(x)
    *batch, c, h, w = x.shape
    out = np.empty((*batch, c // (r * r), h * r, w * r), x.dtype)
    for ch, i, j in itertools.product(range(c // (r * r)), range(h * r), range(w * r)):
        out[..., ch, i, j] = x[..., ch * r * r + (i % r) * r + (j % r), i // r, j // r]
    return out


def _ref_pixel_unshuffle(x: Any, r: int) -> Any:
    x = np.asarray(x)
    *batch, c, h, w = x.shape
    out = np.empty((*batch, c * r * r, h // r, w // r), x.dtype)
    for ch, i, j in itertools.product(range(c), range(h), range(w)):
        out[..., ch * r * r + (i % r) * r + (j % r), i // r, j // r] = x[..., ch, i, j]
    return out


def _pixel_shuffle_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("4d", make((2, 8, 2, 3), d, rng), 2)
    yield S("3d", make((9, 2, 2), d, rng), 3)
    yield S("5d", make((2, 1, 4, 1, 2), d, rng), 2)
    yield S("factor_1", make((1, 3, 2, 2), d, rng), 1)


def _pixel_unshuffle_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("4d", make((2, 2, 4, 6), d, rng), 2)
    yield S("3d", make((1, 6, 3), d, rng), 3)
    yield S("5d", make((2, 1, 1, 2, 4), d, rng), 2)


add(
    OpInfo(
        "pixel_shuffle",
        op=fn("pixel_shuffle"),
        sample_inputs=_pixel_shuffle_samples,
        ref=_ref_pixel_shuffle,
        dtypes=FLOATS + ("int64",),
    )
)
add(
    OpInfo(
        "pixel_unshuffle",
        op=fn("pixel_unshuffle"),
        sample_inputs=_pixel_unshuffle_samples,
        ref=_ref_pixel_unshuffle,
        dtypes=FLOATS + ("int64",),
    )
)


# --- grid sampling and affine grids --------------------------------------------------------


def _coordinate(v: float, size: int, padding: int, align: bool) -> float:
    """A grid coordinate in pixels after padding (PyTorch's grid_sampler_compute_source_index)."""
    v = (v + 1) / 2 * (size - 1) if align else ((v + 1) * size - 1) / 2
    return _pad(v, size, padding, align)


def _pad(v: float, size: int, padding: int, align: bool) -> float:
    if padding == 2:  # reflection about the borders (align: the centres of the edge pixels)
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        span = hi - lo
        if span <= 0:
            v = 0.0
        else:
            d = abs(v - lo)
            flips, extra = math.floor(d / span), math.fmod(d, span)
            v = lo + extra if flips % 2 == 0 else hi - extra
    if padding >= 1:
        v = min(max(v, 0.0), size - 1.0)
    return v


def _grid_taps(mode: int, g: Sequence[float], spatial: Sequence[int], padding: int,
               align: bool) -> list[tuple[tuple[int, ...], float]]:  # fmt: skip
    """The input positions (in input dim order) and weights one grid point reads; positions
    outside the input are left out (they read 0)."""
    n = len(spatial)
    per_dim: list[list[tuple[int, float]]] = []
    for k in range(n):
        size, v = spatial[k], g[n - 1 - k]  # the grid's x is the last dim
        if mode == 2:  # bicubic: the 4 neighbours of the unpadded coordinate, each padded
            c = (v + 1) / 2 * (size - 1) if align else ((v + 1) * size - 1) / 2
            i = math.floor(c)
            per_dim.append(
                [
                    (int(_pad(i + j, size, padding, align)), _keys(c - i - j, -0.75))
                    for j in (-1, 0, 1, 2)
                ]
            )
        else:
            c = _coordinate(v, size, padding, align)
            if mode == 1:
                per_dim.append([(int(round(c)), 1.0)])
            else:
                i = math.floor(c)
                per_dim.append([(i, 1 - (c - i)), (i + 1, c - i)])
    taps = []
    for combo in itertools.product(*per_dim):
        pos = tuple(p for p, _ in combo)
        if all(0 <= p < spatial[k] for k, p in enumerate(pos)):
            taps.append((pos, math.prod(w for _, w in combo)))
    return taps


def _grid_points(grid: np.ndarray) -> Iterator[tuple[int, tuple[int, ...]]]:
    for idx in itertools.product(*(range(s) for s in grid.shape[:-1])):
        yield idx[0], idx


def _ref_grid_sampler(x: Any, grid: Any, mode: int, padding: int, align: bool) -> Any:
    x, grid = np.asarray(x, np.float64), np.asarray(grid, np.float64)
    spatial = x.shape[2:]
    out = np.zeros((x.shape[0], x.shape[1], *grid.shape[1:-1]))
    for n, idx in _grid_points(grid):
        for pos, w in _grid_taps(mode, grid[idx], spatial, padding, align):
            out[(n, slice(None), *idx[1:])] += w * x[(n, slice(None), *pos)]
    return out


_STEP = 1e-6


def _ref_grid_sampler_backward(
    g: Any, x: Any, grid: Any, mode: int, padding: int, align: bool, mask: Sequence[bool]
) -> Any:
    g, x, grid = (np.asarray(a, np.float64) for a in (g, x, grid))
    spatial = x.shape[2:]
    gx = np.zeros_like(x)
    ggrid = np.zeros_like(grid)
    for n, idx in _grid_points(grid):
        go = g[(n, slice(None), *idx[1:])]
        for pos, w in _grid_taps(mode, grid[idx], spatial, padding, align):
            gx[(n, slice(None), *pos)] += w * go
        if mode == 1:
            continue  # nearest: no gradient in the grid
        for c in range(grid.shape[-1]):  # a central difference of the sampled value
            vals = []
            for step in (_STEP, -_STEP):
                moved = grid[idx].copy()
                moved[c] += step
                v = sum(
                    w * float(np.dot(x[(n, slice(None), *pos)], go))
                    for pos, w in _grid_taps(mode, moved, spatial, padding, align)
                )
                vals.append(v)
            ggrid[(*idx, c)] = (vals[0] - vals[1]) / (2 * _STEP)
    return (gx if mask[0] else None, ggrid if mask[1] else None)


def _grid(shape: Sequence[int], d: str, rng: np.random.Generator) -> np.ndarray:
    # inside [-1.2, 1.2], kept off the places where the weights have a kink (integer pixel
    # coordinates, the borders), so that the central difference is the derivative
    return make(shape, d, rng, -1.2, 1.2)


# the float64 samples, which the gradient checks run up to third order: small, one of each
# mode, every padding and both alignments among them
_GRID_FLOAT64 = {2: ((0, 0, False), (1, 1, True), (2, 2, False)), 3: ((0, 0, False), (1, 2, True))}


def _grid_samples(
    n: int, with_grad: bool
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def one(d: str, rng: np.random.Generator, mode: int, padding: int, align: bool,
            small: bool) -> SampleInput:  # fmt: skip
        spatial = ([2, 3] if n == 2 else [2, 2, 2]) if small else [2, 3, 4][3 - n :]
        out = ([2, 2] if n == 2 else [1, 1, 2]) if small else [1, 2, 3][3 - n :]
        batch, channels = (1, 1) if small else (2 if n == 2 else 1, 2)
        x = make([batch, channels, *spatial], d, rng)
        grid = _grid([batch, *out, n], d, rng)
        name = "_".join(
            (
                ("bilinear", "nearest", "bicubic")[mode],
                ("zeros", "border", "reflection")[padding],
                "align" if align else "half_pixel",
            )
        )
        if with_grad:
            g = make([batch, channels, *out], d, rng)
            mask = [True, True] if padding != 1 else [False, True]
            return S(name, g, x, grid, mode, padding, align, mask)
        return S(name, x, grid, mode, padding, align)

    def samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        if d == "float64":
            for mode, padding, align in _GRID_FLOAT64[n]:
                yield one(d, rng, mode, padding, align, True)
            return
        modes = (0, 1, 2) if n == 2 else (0, 1)
        every = list(itertools.product(modes, (0, 1, 2), (False, True)))
        for mode, padding, align in every if d == "float32" else every[:3]:
            yield one(d, rng, mode, padding, align, False)

    return samples


def _backward_compare(got: Any, want: Any, s: SampleInput, d: str) -> None:
    tol = 1e-4 if d == "float32" else 1e-6
    for g_, w_ in zip(got, want, strict=True):
        if w_ is None:
            assert g_ is None
            continue
        np.testing.assert_allclose(np.asarray(g_, np.float64), w_, rtol=tol, atol=tol)


for _n in (2, 3):
    add(
        OpInfo(
            f"grid_sampler_{_n}d",
            op=fn(f"grid_sampler_{_n}d"),
            sample_inputs=_grid_samples(_n, False),
            ref=_ref_grid_sampler,
            dtypes=FLOATS + LOWP,
            tol=LOWP_TOL_LOOSE,
        )
    )
    add(
        OpInfo(
            f"grid_sampler_{_n}d_backward",
            op=fn(f"grid_sampler_{_n}d_backward"),
            sample_inputs=_grid_samples(_n, True),
            ref=_ref_grid_sampler_backward,
            dtypes=("float32", "float64"),
            compare=_backward_compare,
        )
    )

add(
    OpInfo(
        "grid_sampler",
        op=fn("grid_sampler"),
        sample_inputs=lambda d, rng: itertools.chain(
            itertools.islice(_grid_samples(2, False)(d, rng), 0, None, 5),
            itertools.islice(_grid_samples(3, False)(d, rng), 0, None, 5),
        ),
        ref=_ref_grid_sampler,
        dtypes=FLOATS,
    )
)


def _ref_affine_grid(theta: Any, size: Sequence[int], align: bool) -> Any:
    theta = np.asarray(theta, np.float64)
    spatial = list(size[2:])
    k = len(spatial)

    def line(steps: int) -> list[float]:
        if steps <= 1:
            return [0.0] * steps
        pts = [-1 + 2 * i / (steps - 1) for i in range(steps)]
        return pts if align else [p * (steps - 1) / steps for p in pts]

    lines = [line(spatial[k - 1 - j]) for j in range(k)]  # x along the last dim
    out = np.zeros((size[0], *spatial, k))
    for n in range(size[0]):
        for idx in itertools.product(*(range(s) for s in spatial)):
            base = [lines[j][idx[k - 1 - j]] for j in range(k)] + [1.0]
            out[(n, *idx)] = theta[n] @ np.asarray(base)
    return out


def _affine_grid_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for align in (False, True):
        yield S("2d", make((2, 2, 3), d, rng), [2, 3, 4, 5], align)
        yield S("3d", make((1, 3, 4), d, rng), [1, 1, 2, 3, 4], align)
        yield S("unit_width", make((1, 2, 3), d, rng), [1, 1, 3, 1], align)


add(
    OpInfo(
        "affine_grid_generator",
        op=fn("affine_grid_generator"),
        sample_inputs=_affine_grid_samples,
        ref=_ref_affine_grid,
        dtypes=FLOATS,
    )
)
