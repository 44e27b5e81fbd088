"""Samples and oracles of the ``nn`` family, part ``rnn``: the fused recurrent cells
(``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell``) and their backward kernels. The oracles
are the cells' definitions in float64 (Note [Fused recurrent cells]); the backward ones are
their gradients worked out by hand, from the workspace the forward oracle gives."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, LOWP_TOL_LOOSE, OpInfo, S, SampleInput, add, fn, make


def _f64(*arrays: Any) -> list[Any]:
    return [None if a is None else np.asarray(a, np.float64) for a in arrays]


def _sig(a: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-a))


def _ref_lstm(
    input_gates: Any, hidden_gates: Any, cx: Any, input_bias: Any = None, hidden_bias: Any = None
) -> Any:
    ig, hg, cx, ib, hb = _f64(input_gates, hidden_gates, cx, input_bias, hidden_bias)
    g = ig + hg + (0.0 if ib is None else ib) + (0.0 if hb is None else hb)
    i, f, gg, o = np.split(g, 4, axis=1)
    i, f, gg, o = _sig(i), _sig(f), np.tanh(gg), _sig(o)
    cy = f * cx + i * gg
    return o * np.tanh(cy), cy, np.concatenate([i, f, gg, o], axis=1)


def _ref_lstm_backward(
    ghy: Any, gcy: Any, cx: Any, cy: Any, ws: Any, has_bias: bool
) -> tuple[Any, ...]:
    ghy, gcy, cx, cy, ws = _f64(ghy, gcy, cx, cy, ws)
    i, f, g, o = np.split(ws, 4, axis=1)
    tc = np.tanh(cy)
    dc = np.zeros_like(cx) if gcy is None else gcy.copy()
    do = np.zeros_like(cx)
    if ghy is not None:
        dc += ghy * o * (1 - tc**2)
        do = ghy * tc * o * (1 - o)
    gates = np.concatenate(
        [dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g**2), do], axis=1
    )
    return gates, dc * f, gates.sum(0) if has_bias else None


def _ref_gru(
    input_gates: Any, hidden_gates: Any, hx: Any, input_bias: Any = None, hidden_bias: Any = None
) -> Any:
    ig, hg, hx, ib, hb = _f64(input_gates, hidden_gates, hx, input_bias, hidden_bias)
    ig = ig if ib is None else ig + ib
    hg = hg if hb is None else hg + hb
    xr, xz, xn = np.split(ig, 3, axis=1)
    hr, hz, hn = np.split(hg, 3, axis=1)
    r, z = _sig(xr + hr), _sig(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * hx, np.concatenate([r, z, n, hx, hn], axis=1)


def _ref_gru_backward(ghy: Any, ws: Any, has_bias: bool) -> tuple[Any, ...]:
    ghy, ws = _f64(ghy, ws)
    r, z, n, hx, hn = np.split(ws, 5, axis=1)
    dn = ghy * (1 - z) * (1 - n**2)
    dz = ghy * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    gi = np.concatenate([dr, dz, dn], axis=1)
    gh = np.concatenate([dr, dz, dn * r], axis=1)
    return gi, gh, ghy * z, gi.sum(0) if has_bias else None, gh.sum(0) if has_bias else None


def _lstm_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    B, H = 2, 3
    gates = [make((B, 4 * H), d, rng) for _ in range(2)]
    yield S("plain", *gates, make((B, H), d, rng))
    yield S("biases", *gates, make((B, H), d, rng), make((4 * H,), d, rng), make((4 * H,), d, rng))
    yield S("hidden_bias", *gates, make((B, H), d, rng), hidden_bias=make((4 * H,), d, rng))


def _gru_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    B, H = 2, 3
    gates = [make((B, 3 * H), d, rng) for _ in range(2)]
    yield S("plain", *gates, make((B, H), d, rng))
    yield S("biases", *gates, make((B, H), d, rng), make((3 * H,), d, rng), make((3 * H,), d, rng))


def _as(a: Any, like: Any) -> Any:
    """The oracle's float64 ``a`` in the sample's dtype (that of ``like``)."""
    return np.asarray(a).astype(np.asarray(like).dtype)


def _lstm_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for s in _lstm_samples(d, rng):
        _, cy, ws = _ref_lstm(*s.args, **s.kwargs)
        B, H = cy.shape
        cx = s.args[2]
        rest = (cx, _as(cy, cx), _as(ws, cx))
        yield S(f"{s.name}_both", make((B, H), d, rng), make((B, H), d, rng), *rest, True)
        yield S(f"{s.name}_grad_hy", make((B, H), d, rng), None, *rest, False)


def _gru_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for s in _gru_samples(d, rng):
        hy, ws = _ref_gru(*s.args, **s.kwargs)
        yield S(s.name, make(hy.shape, d, rng), _as(ws, s.args[0]), s.name == "biases")


_TOL = {"float32": (1e-5, 1e-5), **LOWP_TOL_LOOSE}


def _compare_optional(got: Any, expected: Any, s: SampleInput, d: str) -> None:
    """The backward kernels' results, where a bias gradient not asked for is None."""
    assert isinstance(got, tuple) and len(got) == len(expected), f"got {got!r}"
    rtol, atol = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}.get(d, (1e-5, 1e-5))
    for i, (v, e) in enumerate(zip(got, expected, strict=True)):
        if e is None:
            assert v is None, f"result[{i}]: has_bias is False, got {v!r}"
            continue
        assert str(v.dtype).rsplit(".", 1)[-1] == d, f"result[{i}]: dtype {v.dtype} != {d}"
        arr = v.cpu().numpy().astype(np.float64)
        assert arr.shape == e.shape, f"result[{i}]: shape {arr.shape} != {e.shape}"
        np.testing.assert_allclose(arr, e, rtol=rtol, atol=atol, err_msg=f"result[{i}]")


add(
    OpInfo(
        "_thnn_fused_lstm_cell",
        op=fn("_thnn_fused_lstm_cell"),
        sample_inputs=_lstm_samples,
        ref=_ref_lstm,
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "_thnn_fused_lstm_cell_backward_impl",
        op=fn("_thnn_fused_lstm_cell_backward_impl"),
        sample_inputs=_lstm_backward_samples,
        ref=_ref_lstm_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_optional,
    )
)
add(
    OpInfo(
        "_thnn_fused_gru_cell",
        op=fn("_thnn_fused_gru_cell"),
        sample_inputs=_gru_samples,
        ref=_ref_gru,
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "_thnn_fused_gru_cell_backward",
        op=fn("_thnn_fused_gru_cell_backward"),
        sample_inputs=_gru_backward_samples,
        ref=_ref_gru_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_optional,
    )
)
