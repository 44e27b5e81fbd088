"""Samples and oracles of the ``nn`` family, part ``fractional``: fractional max pooling
(``fractional_max_pool2d/3d`` and their backward kernels). The oracle builds each plane's window
starts with PyTorch's ``generate_intervals`` in the sample's numpy dtype and visits every window
element by element, independent of the kit's gathered-offsets kernel."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

import tensorplug as tp

from .._core import FLOATS, OpInfo, S, SampleInput, add, fn, make


def _intervals(u: Any, size: int, out: int, pool: int) -> list[int]:
    """PyTorch's generate_intervals, in ``u``'s numpy dtype."""
    t = type(u)
    seq = [0] * out
    if out > 1:
        alpha = t(size - pool) / t(out - 1)
        for i in range(out - 1):
            seq[i] = int((t(i) + u) * alpha) - int(u * alpha)
    if out > 0:
        seq[out - 1] = size - pool
    return seq


def _ref(nd: int, x: Any, kernel: Any, out: Any, samples: Any) -> tuple[Any, Any]:
    x = np.asarray(x)
    samples = np.asarray(samples)
    lead = x.shape[:-nd]
    spatial = x.shape[-nd:]
    planes = x.reshape(-1, *spatial)
    channels = x.shape[-nd - 1]
    values = np.zeros((planes.shape[0], *out), x.dtype)
    index = np.zeros((planes.shape[0], *out), np.int64)
    col = (1, 0) if nd == 2 else (0, 1, 2)  # the samples hold (W, H) in 2-d, (T, H, W) in 3-d
    for p in range(planes.shape[0]):
        u = samples[p // channels, p % channels]
        starts = [_intervals(u[col[i]], spatial[i], out[i], kernel[i]) for i in range(nd)]
        for o in itertools.product(*(range(n) for n in out)):
            best, at = -math.inf, -1
            for k in itertools.product(*(range(n) for n in kernel)):
                pos = tuple(starts[i][o[i]] + k[i] for i in range(nd))
                v = planes[p][pos]
                if at < 0 or v > best or np.isnan(v):
                    best, at = v, int(np.ravel_multi_index(pos, spatial))
            values[(p, *o)] = best
            index[(p, *o)] = at
    return values.reshape(*lead, *out), index.reshape(*lead, *out)


def _fractional(nd: int) -> Any:
    f = getattr(tp.nn.functional, f"fractional_max_pool{nd}d")

    def call(x: Any, kernel: Any, out: Any, samples: Any) -> Any:
        return f(x, kernel, output_size=out, return_indices=True, _random_samples=samples)

    call.__name__ = f"nn.functional.fractional_max_pool{nd}d"
    return call


def _cases(nd: int, d: str) -> list[tuple[str, tuple[int, ...], list[int], list[int]]]:
    if d == "float64":  # one small sample: gradcheck and gradgradcheck visit every element
        # (Note [Fewer float64 samples] in _pooling.py)
        if nd == 2:
            return [("small", (1, 1, 4, 5), [2, 2], [2, 3])]
        return [("small", (1, 1, 3, 4, 4), [1, 2, 2], [2, 2, 2])]
    if nd == 2:
        return [
            ("batched", (2, 2, 7, 8), [2, 3], [4, 3]),
            ("unbatched", (2, 6, 6), [2, 2], [3, 3]),
            ("single_window", (1, 1, 5, 6), [3, 2], [1, 5]),
        ]
    return [
        ("batched", (1, 2, 4, 5, 5), [2, 2, 3], [2, 3, 2]),
        ("unbatched", (1, 4, 5, 4), [2, 2, 2], [2, 3, 2]),
    ]


def _samples(nd: int, backward: bool) -> Any:
    def gen(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for name, shape, kernel, out in _cases(nd, d):
            batch = shape[0] if len(shape) == nd + 2 else 1
            x = make(shape, d, rng)
            u = rng.random((batch, shape[-nd - 1], nd)).astype(d)
            if not backward:
                yield S(name, x, kernel, out, u)
                continue
            g = make((*shape[:-nd], *out), d, rng)
            yield S(name, g, x, kernel, out, _ref(nd, x, kernel, out, u)[1])

    return gen


def _scatter(nd: int, g: Any, x: Any, indices: Any) -> Any:
    x = np.asarray(x)
    planes = np.zeros((math.prod(x.shape[:-nd]), math.prod(x.shape[-nd:])), np.float64)
    gp = np.asarray(g, np.float64).reshape(planes.shape[0], -1)
    ip = np.asarray(indices).reshape(planes.shape[0], -1)
    for p in range(planes.shape[0]):
        np.add.at(planes[p], ip[p], gp[p])
    return planes.reshape(x.shape)


for _nd in (2, 3):
    add(
        OpInfo(
            f"fractional_max_pool{_nd}d",
            op=_fractional(_nd),
            sample_inputs=_samples(_nd, False),
            ref=lambda x, k, o, u, _nd=_nd: _ref(_nd, x, k, o, u),
            dtypes=FLOATS,
            result_dtype=lambda s, d: (d, "int64"),
        )
    )
    add(
        OpInfo(
            f"fractional_max_pool{_nd}d_backward",
            op=fn(f"fractional_max_pool{_nd}d_backward"),
            sample_inputs=_samples(_nd, True),
            ref=lambda g, x, k, o, i, _nd=_nd: _scatter(_nd, g, x, i),
            dtypes=FLOATS,
        )
    )
