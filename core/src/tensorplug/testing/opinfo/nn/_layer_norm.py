"""Samples and oracles of the ``nn`` family, part ``layer_norm``: ``native_layer_norm`` and
``native_layer_norm_backward`` (array_backend/_nn/_layer_norm.py), against float64 numpy: the
statistics over the trailing normalized dims, and the gradients worked out by hand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, OpInfo, S, SampleInput, add, fn, make, np_dtype
from ._norms import _compare_masked

_TOL = {"float16": (2e-2, 2e-2), "bfloat16": (8e-2, 8e-2), "float32": (1e-4, 1e-5)}


def _f64(a: Any) -> Any:
    return None if a is None else np.asarray(a, np.float64)


def _axes(x: Any, normalized_shape: list[int]) -> tuple[int, ...]:
    return tuple(range(x.ndim - len(normalized_shape), x.ndim))


def _ref_native_layer_norm(
    x: Any, normalized_shape: list[int], w: Any, b: Any, eps: float
) -> tuple[Any, ...]:
    x, w, b = _f64(x), _f64(w), _f64(b)
    axes = _axes(x, normalized_shape)
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    out = (x - mean) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out, mean, rstd


def _ln_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("affine", make((2, 3, 4), d, rng), [4], make((4,), d, rng), make((4,), d, rng), 1e-5)
    yield S("two_dims", make((2, 3, 4), d, rng), [3, 4], None, None, 1e-5)
    yield S("weight_1d", make((6,), d, rng), [6], make((6,), d, rng), None, 0.1)


def _ref_ln_backward(
    g: Any, x: Any, normalized_shape: list[int], mean: Any, rstd: Any, w: Any, b: Any, mask: Any
) -> tuple[Any, ...]:
    g, x, mean, rstd, w = _f64(g), _f64(x), _f64(mean), _f64(rstd), _f64(w)
    axes = _axes(x, normalized_shape)
    outer = tuple(range(x.ndim - len(axes)))
    xh = (x - mean) * rstd
    u = g if w is None else g * w
    gi = u - u.mean(axis=axes, keepdims=True) - xh * (u * xh).mean(axis=axes, keepdims=True)
    full = (
        gi * rstd,
        None if w is None else (g * xh).sum(axis=outer),
        None if b is None else g.sum(axis=outer),
    )
    return tuple(v if k else None for v, k in zip(full, mask, strict=True))


def _ln_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    masks = {"affine": [True, True, True], "two_dims": [True, False, False]}
    for s in _ln_samples(d, rng):
        x, shape, w, b, _ = s.args
        _, mean, rstd = _ref_native_layer_norm(*s.args)
        sd = np_dtype(d)
        mask = masks.get(s.name, [False, True, True])
        yield S(s.name, make(x.shape, d, rng), x, shape, mean.astype(sd), rstd.astype(sd), w, b,
                mask)  # fmt: skip


add(
    OpInfo(
        "native_layer_norm",
        op=fn("native_layer_norm"),
        sample_inputs=_ln_samples,
        ref=_ref_native_layer_norm,
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "native_layer_norm_backward",
        op=fn("native_layer_norm_backward"),
        sample_inputs=_ln_backward_samples,
        ref=_ref_ln_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_masked,
    )
)
