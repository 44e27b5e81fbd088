"""Samples and oracles of the ``nn`` family, part ``embedding``: embedding_bag and its
padding_idx overload (Note [Embedding bags] in composites/nn.py), against a loop over the
bags in numpy."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, OpInfo, S, SampleInput, add, dtype_name, fn, make


def _ref_embedding_bag(
    weight: Any,
    indices: Any,
    offsets: Any,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Any = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[Any, ...]:
    w = np.asarray(weight, np.float64)
    idx = np.asarray(indices, np.int64)
    offs = np.asarray(offsets, np.int64)
    n, dim = len(idx), w.shape[1]
    bags = len(offs) - (1 if include_last_offset else 0)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += w.shape[0]
    out = np.zeros((bags, dim))
    offset2bag = np.zeros(n, np.int64)
    size = np.zeros(bags, np.int64)
    max_indices = np.zeros((bags, dim), np.int64)
    for b in range(bags):
        start = offs[b]
        end = offs[b + 1] if b + 1 < len(offs) else n
        offset2bag[start:end] = b
        sel = [j for j in range(start, end) if idx[j] != padding_idx]
        rows = w[idx[sel]]
        if per_sample_weights is not None:
            rows = rows * np.asarray(per_sample_weights, np.float64)[sel][:, None]
        size[b] = len(sel)
        if not sel:
            continue
        if mode == 0:
            out[b] = rows.sum(0)
        elif mode == 1:
            out[b] = rows.mean(0)
        else:
            out[b] = rows.max(0)
            max_indices[b] = idx[sel][rows.argmax(0)]
    if mode == 0:
        zeros = np.zeros(bags, np.int64)
        o2b = offset2bag if padding_idx is not None else np.zeros(0, np.int64)
        return out, o2b, zeros, zeros
    return out, offset2bag, size, size if mode == 1 else max_indices


def _bag_dtypes(s: SampleInput, d: str) -> tuple[str, ...]:
    return (dtype_name(s.args[0]), "int64", "int64", "int64")


def _i(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _bag_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    w = lambda: make((10, 3), d, rng)  # noqa: E731
    idx = _i([1, 2, 4, 5, 4, 3, 2, 9])
    for mode in (0, 1, 2):
        yield S(f"mode{mode}", w(), idx, _i([0, 4, 4]), False, mode)  # an empty middle bag
    yield S("last_offset", w(), idx, _i([0, 3, 8]), False, 1, False, None, True)
    yield S("per_sample_weights", w(), idx, _i([0, 5]), False, 0, False, make((8,), d, rng))
    yield S("int32", w(), idx.astype(np.int32), _i([0, 2]).astype(np.int32), False, 2)
    yield S("empty", w(), _i([]), _i([0, 0]), False, 1)


def _padding_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    w = lambda: make((10, 3), d, rng)  # noqa: E731
    idx = _i([1, 2, 4, 5, 2, 2, 3, 9])
    for mode in (0, 1, 2):
        yield S(f"mode{mode}", w(), idx, _i([0, 4, 4, 6]), False, mode, False, None, False, 2)
    yield S("negative", w(), idx, _i([0, 4]), False, 1, False, None, False, -1)
    yield S("none", w(), idx, _i([0, 4]), False, 2, False, None, False, None)


add(
    OpInfo(
        "embedding_bag",
        op=fn("embedding_bag"),
        sample_inputs=_bag_samples,
        ref=_ref_embedding_bag,
        dtypes=FLOATS,
        result_dtype=_bag_dtypes,
    )
)
add(
    OpInfo(
        "embedding_bag.padding_idx",
        op=fn("embedding_bag"),
        sample_inputs=_padding_samples,
        ref=_ref_embedding_bag,
        dtypes=FLOATS,
        result_dtype=_bag_dtypes,
    )
)
