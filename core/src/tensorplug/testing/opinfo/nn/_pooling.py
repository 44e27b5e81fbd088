"""Samples and oracles of the ``nn`` family, part ``pooling``: max, average and adaptive pooling,
their backward kernels and max unpooling. The oracles visit every window element by element
(loops over output positions, as PyTorch's reference CPU kernels read), independent of the
kit's strided-slice kernels."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

import tensorplug as tp

from .._core import FLOATS, INTS, LOWP, OpInfo, S, SampleInput, add, fn, make


def _aten_call(name: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(tp.ops.aten, name).default(*args, **kwargs)

    call.__name__ = f"tp.ops.aten.{name}.default"
    return call


# Note [Fewer float64 samples]
# tests/autograd/test_formulas.py runs gradcheck and gradgradcheck (on every backend) on each
# float64 sample, and the backward kernels' double backward is a third derivative: the samples
# that only vary shapes (unbatched inputs, empty batches) are left to the other dtypes.

_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-6)}


def _n(v: Any, nd: int) -> list[int]:
    v = [int(x) for x in (v if isinstance(v, list | tuple) else [v])]
    return v * nd if len(v) == 1 else v


def _out(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    o = (-(-num // s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


def _tile(nd: int) -> tuple[int, ...]:
    """A spatial shape that kernel 2 tiles; small in 3-d, where gradgradcheck visits every
    element (tests/autograd/test_formulas.py)."""
    return (4, 4) if nd == 2 else (2, 2, 4)


def _planes(x: np.ndarray, nd: int) -> tuple[np.ndarray, tuple[int, ...]]:
    return x.reshape(-1, *x.shape[-nd:]), x.shape[:-nd]


# --- max pooling ------------------------------------------------------------------------------


def _ref_max_pool(nd: int, x: Any, kernel_size: Any, stride: Any = (), padding: Any = 0,
                  dilation: Any = 1, ceil_mode: bool = False) -> tuple[Any, Any]:  # fmt: skip
    ks = _n(kernel_size, nd)
    st = _n(stride, nd) if len(np.atleast_1d(stride)) else ks
    pd, dl = _n(padding, nd), _n(dilation, nd)
    planes, lead = _planes(np.asarray(x), nd)
    spatial = planes.shape[1:]
    out = [_out(spatial[i], ks[i], st[i], pd[i], dl[i], ceil_mode) for i in range(nd)]
    values = np.zeros((planes.shape[0], *out), np.float64)
    index = np.zeros((planes.shape[0], *out), np.int64)
    for p in range(planes.shape[0]):
        for o in itertools.product(*(range(n) for n in out)):
            best, at = -math.inf, -1
            for k in itertools.product(*(range(n) for n in ks)):
                pos = [o[i] * st[i] - pd[i] + k[i] * dl[i] for i in range(nd)]
                if any(q < 0 or q >= spatial[i] for i, q in enumerate(pos)):
                    continue
                v = float(planes[p][tuple(pos)])
                flat = int(np.ravel_multi_index(pos, spatial))
                if at < 0 or v > best or math.isnan(v):
                    best, at = v, flat
            values[(p, *o)] = best
            index[(p, *o)] = at
    return values.reshape(*lead, *out), index.reshape(*lead, *out)


def _max_pool_samples(nd: int) -> Any:
    # small 3-d samples: gradgradcheck visits every element (tests/autograd/test_formulas.py)
    big = 5 if nd == 2 else 3

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        sp = _tile(nd)
        yield S("tiles", make((1, 2, *sp) if nd == 2 else (1, 1, *sp), d, rng), [2] * nd)
        if d != "float64":  # Note [Fewer float64 samples]
            yield S("unbatched_overlap", make((1, *(big,) * nd), d, rng), [3], [1])
        if d in FLOATS or d in INTS:
            yield S("pad_ceil", make((1, 1, *(big,) * nd), d, rng), [3], [2], [1], [1], True)
            if nd == 2:
                yield S("dilation", make((1, 1, 6, 6), d, rng), [2], [1], [1], [2])
            yield S("empty_batch", make((0, 2, *sp), d, rng), [2])
        if d == "float32" or d in INTS:  # not float64: ties have no finite differences
            # many equal values: the first maximum of each window is the index, on the
            # unpadded fast path (tiles, gaps between windows, overlapping windows) too
            x = make((2, 2, *(big,) * nd), d, rng)
            x[...] = rng.integers(-1, 2, size=x.shape)
            yield S("ties", x, [2])
            yield S("ties_gaps", x, [2], [3])
            yield S("ties_overlap", x, [3], [1])
        if d == "float32":  # not float64: gradcheck's samples; NaN has no finite differences
            x = make((1, 2, *sp), d, rng)
            x[0, 0].flat[1] = np.nan
            x[0, 0].flat[sp[-1]] = np.nan  # two in one window: the last one's index
            x[0, 1].flat[:3] = -np.inf
            yield S("nan_and_inf", x, [2])

    return gen


for _nd in (2, 3):
    add(
        OpInfo(
            f"max_pool{_nd}d_with_indices",
            op=fn(f"nn.functional.max_pool{_nd}d_with_indices"),
            sample_inputs=_max_pool_samples(_nd),
            ref=lambda *a, _nd=_nd, **k: _ref_max_pool(_nd, *a, **k),
            dtypes=FLOATS + INTS + LOWP,
            result_dtype=lambda s, d: (d, "int64"),
            tol=_TOL,
        )
    )
    add(
        OpInfo(
            f"max_pool{_nd}d",
            op=fn(f"max_pool{_nd}d"),
            sample_inputs=_max_pool_samples(_nd),
            ref=lambda *a, _nd=_nd, **k: _ref_max_pool(_nd, *a, **k)[0],
            dtypes=FLOATS + LOWP,
            tol=_TOL,
        )
    )


def _max_pool1d_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("batched", make((2, 3, 7), d, rng), [2])
    yield S("pad_ceil", make((3, 6), d, rng), [3], [2], [1], [1], True)
    yield S("dilation", make((1, 2, 8), d, rng), [2], [1], [1], [3])


def _ref_max_pool1d(x: Any, k: Any, s: Any = (), p: Any = 0, d: Any = 1, c: bool = False) -> Any:
    x = np.asarray(x)
    v, i = _ref_max_pool(2, x[..., None, :], [1, *_n(k, 1)], [1, *_n(s, 1)] if len(np.atleast_1d(s)) else [1, *_n(k, 1)], [0, *_n(p, 1)], [1, *_n(d, 1)], c)  # fmt: skip
    return v[..., 0, :], i[..., 0, :]


add(
    OpInfo(
        "max_pool1d_with_indices",
        op=fn("max_pool1d_with_indices"),
        sample_inputs=_max_pool1d_samples,
        ref=_ref_max_pool1d,
        dtypes=FLOATS,
        result_dtype=lambda s, d: (d, "int64"),
    )
)
add(
    OpInfo(
        "max_pool1d",
        op=fn("max_pool1d"),
        sample_inputs=_max_pool1d_samples,
        ref=lambda *a, **k: _ref_max_pool1d(*a, **k)[0],
        dtypes=FLOATS,
    )
)


def _scatter_ref(shape: tuple[int, ...], nd: int, g: Any, indices: Any) -> Any:
    out = np.zeros(shape, np.float64)
    planes = out.reshape(-1, math.prod(shape[-nd:]))
    gp = np.asarray(g, np.float64).reshape(planes.shape[0], -1)
    ip = np.asarray(indices).reshape(planes.shape[0], -1)
    for p in range(planes.shape[0]):
        np.add.at(planes[p], ip[p], gp[p])
    return out


def _max_pool_backward_samples(nd: int) -> Any:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        big = 5 if nd == 2 else 3
        cases = [
            ("tiles", (1, 2, *_tile(nd)), [2] * nd, [2] * nd, [0] * nd, [1] * nd, False),
            ("overlap_pad_ceil", (1, 1, *(big,) * nd), [3] * nd, [2] * nd, [1] * nd, [1] * nd,
             True),
        ]  # fmt: skip
        for name, shape, k, s, p, dl, c in cases:
            x = make(shape, d, rng)
            _, idx = _ref_max_pool(nd, x, k, s, p, dl, c)
            g = make(idx.shape, d, rng)
            yield S(name, g, x, k, s, p, dl, c, idx)

    return gen


for _nd in (2, 3):
    add(
        OpInfo(
            f"max_pool{_nd}d_with_indices_backward",
            op=fn(f"max_pool{_nd}d_with_indices_backward"),
            sample_inputs=_max_pool_backward_samples(_nd),
            ref=lambda g, x, *a, _nd=_nd: _scatter_ref(x.shape, _nd, g, a[-1]),
            dtypes=FLOATS + LOWP,
            tol=_TOL,
        )
    )


# --- average pooling --------------------------------------------------------------------------


def _ref_avg_pool(nd: int, x: Any, kernel_size: Any, stride: Any = (), padding: Any = 0,
                  ceil_mode: bool = False, count_include_pad: bool = True,
                  divisor_override: Any = None) -> Any:  # fmt: skip
    ks = _n(kernel_size, nd)
    st = _n(stride, nd) if len(np.atleast_1d(stride)) else ks
    pd = _n(padding, nd)
    x = np.asarray(x)
    integral = x.dtype.kind in "iu"
    planes, lead = _planes(x, nd)
    spatial = planes.shape[1:]
    out = [_out(spatial[i], ks[i], st[i], pd[i], 1, ceil_mode) for i in range(nd)]
    r = np.zeros((planes.shape[0], *out), np.int64 if integral else np.float64)
    for p in range(planes.shape[0]):
        for o in itertools.product(*(range(n) for n in out)):
            lo = [o[i] * st[i] - pd[i] for i in range(nd)]
            hi = [min(lo[i] + ks[i], spatial[i] + pd[i]) for i in range(nd)]
            pool = math.prod(hi[i] - lo[i] for i in range(nd))
            lo_c = [max(v, 0) for v in lo]
            hi_c = [min(hi[i], spatial[i]) for i in range(nd)]
            window = planes[p][tuple(slice(a, b) for a, b in zip(lo_c, hi_c, strict=True))]
            if divisor_override is not None:
                div = divisor_override
            elif count_include_pad:
                div = pool
            else:
                div = math.prod(b - a for a, b in zip(lo_c, hi_c, strict=True))
            total = window.astype(np.int64 if integral else np.float64).sum()
            if integral:
                r[(p, *o)] = int(total / div) if abs(total) < 2**52 else total // div
            else:
                r[(p, *o)] = total / div
    return r.reshape(*lead, *out)


def _avg_pool_samples(nd: int) -> Any:
    big = 5 if nd == 2 else 4

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("tiles", make((1, 2, *_tile(nd)), d, rng), [2] * nd)
        if d != "float64":  # Note [Fewer float64 samples]
            yield S("unbatched", make((1, *(big,) * nd), d, rng), [3], [1])
        if d in FLOATS or d in INTS:
            yield S(
                "exclude_pad_ceil", make((1, 1, *(big,) * nd), d, rng), [3], [2], [1], True,
                False,
            )  # fmt: skip
            yield S("divisor", make((1, 1, *(3,) * nd), d, rng), [2], [1], [1],
                    divisor_override=3)  # fmt: skip

    return gen


for _nd in (2, 3):
    add(
        OpInfo(
            f"avg_pool{_nd}d",
            op=fn(f"nn.functional.avg_pool{_nd}d"),
            sample_inputs=_avg_pool_samples(_nd),
            ref=lambda *a, _nd=_nd, **k: _ref_avg_pool(_nd, *a, **k),
            dtypes=FLOATS + INTS + LOWP,
            tol=_TOL,
        )
    )


def _ref_avg_pool1d(x: Any, k: Any, s: Any = (), p: Any = 0, c: bool = False,
                    cip: bool = True) -> Any:  # fmt: skip
    kk = _n(k, 1)
    ss = _n(s, 1) if len(np.atleast_1d(s)) else kk
    return _ref_avg_pool(2, np.asarray(x)[..., None, :], [1, *kk], [1, *ss], [0, *_n(p, 1)],
                         c, cip)[..., 0, :]  # fmt: skip


def _avg_pool1d_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("batched", make((2, 3, 7), d, rng), [2])
    yield S("pad_ceil_exclude", make((3, 6), d, rng), [3], [2], [1], True, False)


add(
    OpInfo(
        "avg_pool1d",
        op=fn("avg_pool1d"),
        sample_inputs=_avg_pool1d_samples,
        ref=_ref_avg_pool1d,
        dtypes=FLOATS,
    )
)


def _avg_backward_ref(nd: int, g: Any, x: Any, *args: Any) -> Any:
    """The transpose of the forward, by its Jacobian: the forward of each unit input."""
    x = np.asarray(x, np.float64)
    g = np.asarray(g, np.float64)
    planes, _ = _planes(x, nd)
    gp = g.reshape(planes.shape[0], -1)
    r = np.zeros_like(planes)
    for j in range(math.prod(planes.shape[1:])):
        e = np.zeros(planes.shape[1:])
        e.flat[j] = 1.0
        col = _ref_avg_pool(nd, e[None], *args).reshape(-1)
        r.reshape(planes.shape[0], -1)[:, j] = gp @ col
    return r.reshape(x.shape)


def _avg_backward_samples(nd: int) -> Any:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        big = 5 if nd == 2 else 3
        cases = [
            ("tiles", (1, 2, *_tile(nd)), [2] * nd, [2] * nd, [0] * nd, False, True, None),
            ("pad_ceil_exclude", (1, 1, *(big,) * nd), [3] * nd, [2] * nd, [1] * nd, True,
             False, None),
            ("divisor", (1, 1, *(3,) * nd), [2] * nd, [1] * nd, [1] * nd, False, True, 3),
        ]  # fmt: skip
        for name, shape, k, s, p, c, cip, div in cases:
            x = make(shape, d, rng)
            g = make(_ref_avg_pool(nd, x, k, s, p, c, cip, div).shape, d, rng)
            yield S(name, g, x, k, s, p, c, cip, div)

    return gen


for _nd in (2, 3):
    add(
        OpInfo(
            f"avg_pool{_nd}d_backward",
            op=fn(f"avg_pool{_nd}d_backward"),
            sample_inputs=_avg_backward_samples(_nd),
            ref=lambda g, x, *a, _nd=_nd: _avg_backward_ref(_nd, g, x, *a),
            dtypes=FLOATS + LOWP,
            tol=_TOL,
        )
    )


# --- adaptive pooling -------------------------------------------------------------------------


def _bounds(size: int, out: int) -> list[tuple[int, int]]:
    return [(math.floor(o * size / out), math.ceil((o + 1) * size / out)) for o in range(out)]


def _ref_adaptive(nd: int, kind: str, x: Any, output_size: Any) -> Any:
    out = _n(output_size, nd)
    planes, lead = _planes(np.asarray(x, np.float64), nd)
    spatial = planes.shape[1:]
    bounds = [_bounds(spatial[i], out[i]) for i in range(nd)]
    values = np.zeros((planes.shape[0], *out))
    index = np.zeros((planes.shape[0], *out), np.int64)
    for p in range(planes.shape[0]):
        for o in itertools.product(*(range(n) for n in out)):
            box = tuple(slice(*bounds[i][o[i]]) for i in range(nd))
            w = planes[p][box]
            if kind == "avg":
                values[(p, *o)] = w.mean()
                continue
            best, at = -math.inf, -1
            for k in itertools.product(*(range(n) for n in w.shape)):
                v = w[k]
                if at < 0 or v > best or math.isnan(v):
                    best = v
                    at = int(np.ravel_multi_index(
                        [bounds[i][o[i]][0] + k[i] for i in range(nd)], spatial
                    ))  # fmt: skip
            values[(p, *o)] = best
            index[(p, *o)] = at
    v, i = values.reshape(*lead, *out), index.reshape(*lead, *out)
    return v if kind == "avg" else (v, i)


def _adaptive_samples(nd: int) -> Any:
    big = 5 if nd == 2 else 3

    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield S("uneven", make((1, 1, *(big,) * nd), d, rng), [2 if nd == 3 else 3] * nd)
        if d != "float64":  # Note [Fewer float64 samples]
            yield S("unbatched_divides", make((1, *_tile(nd)), d, rng), [2] * nd)
        if d == "float32":
            yield S("global", make((2, 2, *(3,) * nd), d, rng), [1] * nd)
            yield S("larger", make((1, 1, *(2,) * nd), d, rng), [3] * nd)
            yield S("empty_batch", make((0, 2, *_tile(nd)), d, rng), [2] * nd)

    return gen


for _nd in (2, 3):
    for _name, _op in (
        (f"_adaptive_avg_pool{_nd}d", fn(f"_adaptive_avg_pool{_nd}d")),
        (f"adaptive_avg_pool{_nd}d", fn(f"nn.functional.adaptive_avg_pool{_nd}d")),
    ):
        add(
            OpInfo(
                _name,
                op=_op,
                sample_inputs=_adaptive_samples(_nd),
                ref=lambda x, o, _nd=_nd: _ref_adaptive(_nd, "avg", x, o),
                dtypes=FLOATS + LOWP,
                tol=_TOL,
            )
        )
    add(
        OpInfo(
            f"adaptive_max_pool{_nd}d",
            op=fn(f"nn.functional.adaptive_max_pool{_nd}d_with_indices"),
            sample_inputs=_adaptive_samples(_nd),
            ref=lambda x, o, _nd=_nd: _ref_adaptive(_nd, "max", x, o),
            dtypes=FLOATS + LOWP,
            result_dtype=lambda s, d: (d, "int64"),
            tol=_TOL,
        )
    )


def _adaptive_backward_ref(nd: int, g: Any, x: Any) -> Any:
    x = np.asarray(x, np.float64)
    g = np.asarray(g, np.float64)
    out = list(g.shape[-nd:])
    planes, _ = _planes(x, nd)
    r = np.zeros_like(planes).reshape(planes.shape[0], -1)
    gp = g.reshape(planes.shape[0], -1)
    for j in range(r.shape[1]):
        e = np.zeros(planes.shape[1:])
        e.flat[j] = 1.0
        r[:, j] = gp @ _ref_adaptive(nd, "avg", e[None], out).reshape(-1)
    return r.reshape(x.shape)


def _adaptive_backward_samples(nd: int, kind: str) -> Any:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        big = 5 if nd == 2 else 3
        for name, shape, out in (
            ("uneven", (1, 1, *(big,) * nd), [2 if nd == 3 else 3] * nd),
            ("unbatched", (1, *_tile(nd)), [2] * nd),
        ):
            x = make(shape, d, rng)
            g = make((*shape[:-nd], *out), d, rng)
            if kind == "avg":
                yield S(name, g, x)
            else:
                yield S(name, g, x, _ref_adaptive(nd, "max", x, out)[1])

    return gen


for _nd in (2, 3):
    add(
        OpInfo(
            f"_adaptive_avg_pool{_nd}d_backward",
            op=fn(f"_adaptive_avg_pool{_nd}d_backward"),
            sample_inputs=_adaptive_backward_samples(_nd, "avg"),
            ref=lambda g, x, _nd=_nd: _adaptive_backward_ref(_nd, g, x),
            dtypes=FLOATS + LOWP,
            tol=_TOL,
        )
    )
    add(
        OpInfo(
            f"adaptive_max_pool{_nd}d_backward",
            op=fn(f"adaptive_max_pool{_nd}d_backward"),
            sample_inputs=_adaptive_backward_samples(_nd, "max"),
            ref=lambda g, x, i, _nd=_nd: _scatter_ref(x.shape, _nd, g, i),
            dtypes=FLOATS + LOWP,
            tol=_TOL,
        )
    )


def _adaptive1d_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("uneven", make((2, 3, 7), d, rng), [3])
    yield S("unbatched", make((3, 6), d, rng), [2])


add(
    OpInfo(
        "adaptive_avg_pool1d",
        op=fn("adaptive_avg_pool1d"),
        sample_inputs=_adaptive1d_samples,
        ref=lambda x, o: _ref_adaptive(2, "avg", np.asarray(x)[..., None, :], [1, *o])[..., 0, :],
        dtypes=FLOATS,
    )
)
add(
    OpInfo(
        "adaptive_max_pool1d",
        op=fn("adaptive_max_pool1d"),
        sample_inputs=_adaptive1d_samples,
        ref=lambda x, o: tuple(
            r[..., 0, :] for r in _ref_adaptive(2, "max", np.asarray(x)[..., None, :], [1, *o])
        ),
        dtypes=FLOATS,
        result_dtype=lambda s, d: (d, "int64"),
    )
)


# --- max unpooling ----------------------------------------------------------------------------


def _ref_unpool(nd: int, x: Any, indices: Any, output_size: Any, *rest: Any) -> Any:
    x = np.asarray(x, np.float64)
    lead = x.shape[:-nd]
    out = np.zeros((*lead, *output_size))
    planes = out.reshape(-1, math.prod(output_size))
    xp = x.reshape(planes.shape[0], -1)
    ip = np.asarray(indices).reshape(planes.shape[0], -1)
    for p in range(planes.shape[0]):
        planes[p][ip[p]] = xp[p]
    return out


def _unpool_samples(nd: int) -> Any:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        extra = ([2] * nd, [0] * nd) if nd == 3 else ()
        big = 5 if nd == 2 else 3
        for name, shape in (("batched", (2, 1, *_tile(nd))), ("unbatched", (1, *(big,) * nd))):
            x = make(shape, d, rng)
            v, i = _ref_max_pool(nd, x, [2] * nd)
            out = list(shape[-nd:])
            yield S(name, v.astype(x.dtype), i, out, *extra)
        x = make((1, 1, *_tile(nd)), d, rng)
        v, i = _ref_max_pool(nd, x, [2] * nd)
        yield S("larger_output", v.astype(x.dtype), i, [n + 1 for n in _tile(nd)], *extra)

    return gen


for _nd in (2, 3):
    add(
        OpInfo(
            f"max_unpool{_nd}d",
            # F.max_unpool2d takes torch's Python arguments (kernel_size, ...): the op's
            # signature is the overload's
            op=_aten_call(f"max_unpool{_nd}d"),
            sample_inputs=_unpool_samples(_nd),
            ref=lambda *a, _nd=_nd: _ref_unpool(_nd, *a),
            dtypes=FLOATS + INTS + LOWP,
            tol=_TOL,
        )
    )
