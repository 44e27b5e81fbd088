"""Samples and oracles of the ``nn`` family, part ``attention``: scaled_dot_product_attention
and the fused kernels it runs (``_scaled_dot_product_flash_attention_for_cpu`` and its
backward). The oracle is the definition, in float64: softmax of the scaled, masked scores
(zero weights on a row every key is masked from), times the values; the backward's is the
gradient of that definition worked out by hand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, LOWP_TOL_LOOSE, OpInfo, S, SampleInput, add, fn, make


def _scores(q: Any, k: Any, attn_mask: Any, is_causal: bool, scale: float | None) -> Any:
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    sc = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ np.swapaxes(k, -1, -2)) * sc
    if attn_mask is not None:
        m = np.asarray(attn_mask)
        s = np.where(m, s, -np.inf) if m.dtype == bool else s + m.astype(np.float64)
    if is_causal:
        L, S_ = s.shape[-2:]
        s = np.where(np.tri(L, S_, dtype=bool), s, -np.inf)
    return s


def _weights(s: Any) -> tuple[Any, Any]:
    """The softmax of the scores along keys and their log-sum-exp (-inf, zero weights: all
    masked)."""
    top = s.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.exp(s - top)
        total = e.sum(axis=-1, keepdims=True)
        lse = np.log(total) + top
        p = np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
    return p, lse[..., 0]


def _ref_sdpa(
    q: Any,
    k: Any,
    v: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Any:
    if enable_gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    p, _ = _weights(_scores(q, k, attn_mask, is_causal, scale))
    return p @ np.asarray(v, np.float64)


def _ref_flash(
    q: Any,
    k: Any,
    v: Any,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    attn_mask: Any = None,
    scale: float | None = None,
) -> Any:
    p, lse = _weights(_scores(q, k, attn_mask, is_causal, scale))
    return p @ np.asarray(v, np.float64), lse


def _ref_flash_backward(
    g: Any,
    q: Any,
    k: Any,
    v: Any,
    out: Any,
    lse: Any,
    dropout_p: float,
    is_causal: bool,
    *,
    attn_mask: Any = None,
    scale: float | None = None,
) -> Any:
    q64, k64, v64, g64 = (np.asarray(a, np.float64) for a in (q, k, v, g))
    sc = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    p, _ = _weights(_scores(q64, k64, attn_mask, is_causal, scale))
    o = p @ v64  # the oracle's own forward (the sample's out and lse are consistent with it)
    dv = np.swapaxes(p, -1, -2) @ g64
    dp = g64 @ np.swapaxes(v64, -1, -2)
    ds = p * (dp - (g64 * o).sum(-1, keepdims=True)) * sc
    return ds @ k64, np.swapaxes(ds, -1, -2) @ q64, dv


def _qkv(d: str, rng: np.random.Generator, lead: tuple[int, ...], L: int, S_: int) -> list[Any]:
    return [make((*lead, n, 4), d, rng) for n in (L, S_, S_)]


def _sdpa_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("plain", *_qkv(d, rng, (2, 3), 5, 6))
    yield S("causal", *_qkv(d, rng, (2, 2), 5, 5), is_causal=True)
    yield S("causal_rect", *_qkv(d, rng, (2,), 3, 5), is_causal=True)
    mask = rng.random((5, 6)) > 0.4
    mask[1] = False  # a query row that sees no key
    yield S("bool_mask", *_qkv(d, rng, (2, 3), 5, 6), mask)
    yield S("float_mask", *_qkv(d, rng, (2, 3), 5, 6), make((3, 5, 6), d, rng))
    yield S("scale", *_qkv(d, rng, (2,), 5, 6), scale=0.3)
    yield S("2d", *_qkv(d, rng, (), 5, 6))
    yield S("broadcast_kv", make((2, 3, 5, 4), d, rng), *_qkv(d, rng, (1, 3), 5, 6)[1:])
    yield S("value_dim", *_qkv(d, rng, (2,), 5, 6)[:2], make((2, 6, 7), d, rng))
    q = make((2, 4, 5, 4), d, rng)
    yield S("gqa", q, *_qkv(d, rng, (2, 2), 5, 6)[1:], enable_gqa=True)


def _flash_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield S("plain", *_qkv(d, rng, (2, 3), 5, 6))
    yield S("causal", *_qkv(d, rng, (2,), 5, 5), 0.0, True)
    mask = rng.random((5, 6)) > 0.4
    mask[2] = False
    yield S("bool_mask", *_qkv(d, rng, (2,), 5, 6), attn_mask=mask)
    yield S(
        "float_mask_scale", *_qkv(d, rng, (2,), 5, 6), attn_mask=make((5, 6), d, rng), scale=2.0
    )


def _flash_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for sample in _flash_samples(d, rng):
        q, k, v = sample.args[:3]
        rest = sample.args[3:]
        kw = sample.kwargs
        dropout_p, is_causal = (rest + (0.0, False))[:2] if rest else (0.0, False)
        out, lse = _ref_flash(q, k, v, dropout_p, is_causal, **kw)
        g = make(out.shape, d, rng)
        out_d = out.astype(q.dtype)
        lse_d = lse.astype(np.float32 if d in LOWP else q.dtype)
        yield S(sample.name, g, q, k, v, out_d, lse_d, dropout_p, is_causal, **kw)


_TOL = {"float32": (1e-5, 1e-5), **LOWP_TOL_LOOSE}


def _flash_dtype(s: SampleInput, d: str) -> tuple[str, str]:
    return d, "float32" if d in LOWP else d


add(
    OpInfo(
        "scaled_dot_product_attention",
        op=fn("nn.functional.scaled_dot_product_attention"),
        sample_inputs=_sdpa_samples,
        ref=_ref_sdpa,
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "_scaled_dot_product_flash_attention_for_cpu",
        op=fn("_scaled_dot_product_flash_attention_for_cpu"),
        sample_inputs=_flash_samples,
        ref=_ref_flash,
        dtypes=FLOATS + LOWP,
        result_dtype=_flash_dtype,
        returns_names=("output", "logsumexp"),
        tol=_TOL,
    )
)
add(
    OpInfo(
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        op=fn("_scaled_dot_product_flash_attention_for_cpu_backward"),
        sample_inputs=_flash_backward_samples,
        ref=_ref_flash_backward,
        dtypes=FLOATS + LOWP,
        returns_names=("grad_query", "grad_key", "grad_value"),
        tol=_TOL,
    )
)
