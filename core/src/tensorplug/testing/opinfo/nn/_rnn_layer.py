"""Samples and oracles of the ``nn`` family, part ``rnn_layer``: one LSTM or GRU layer over a
whole sequence (``mkldnn_rnn_layer``) and its backward (Note [Fused recurrent layer] in
array_backend/_nn/_rnn_layer.py). The oracles run the layer's definition step by step in
float64; the backward one carries the hidden and cell gradients back through the steps and
sums each step's weight gradient."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._core import FLOATS, LOWP, LOWP_TOL_LOOSE, OpInfo, S, SampleInput, add, fn, make
from ._rnn import _as, _compare_optional

_LSTM = 2
_GRU = 3


def _f64(*arrays: Any) -> list[Any]:
    return [None if a is None else np.asarray(a, np.float64) for a in arrays]


def _sig(a: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-a))


def _order(T: int, reverse: bool) -> list[int]:
    return list(range(T - 1, -1, -1)) if reverse else list(range(T))


def _lstm_gates(
    x: Any, h: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, has_biases: bool, H: int
) -> tuple[Any, Any, Any, Any]:
    """One step's activated LSTM gates ``i, f, g, o``."""
    g = x @ w_ih.T + h @ w_hh.T + ((b_ih + b_hh) if has_biases else 0.0)
    return _sig(g[:, :H]), _sig(g[:, H : 2 * H]), np.tanh(g[:, 2 * H : 3 * H]), _sig(g[:, 3 * H :])


def _ref_unpacked(
    x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, h: Any, c: Any, reverse: bool, mode: int,
    H: int, has_biases: bool,
) -> tuple[Any, ...]:  # fmt: skip
    """The layer on time-major float64 ``x``: the output, the final states, and the gates ``(T,
    B, 4H)`` with the LSTM's ``c`` and ``tanh(c)`` ``(2, T, B, H)``."""
    T, B, _ = x.shape
    out = np.zeros((T, B, H))
    gates = np.zeros((T, B, 4 * H))
    states = np.zeros((2, T, B, H))
    for t in _order(T, reverse):
        if mode == _GRU:
            ig = x[t] @ w_ih.T + (b_ih if has_biases else 0.0)
            hg = h @ w_hh.T + (b_hh if has_biases else 0.0)
            r = _sig(ig[:, :H] + hg[:, :H])
            z = _sig(ig[:, H : 2 * H] + hg[:, H : 2 * H])
            n = np.tanh(ig[:, 2 * H :] + r * hg[:, 2 * H :])
            h = (1 - z) * n + z * h
            gates[t] = np.concatenate([r, z, n, hg[:, 2 * H :]], axis=1)
        else:
            i, f, gg, o = _lstm_gates(x[t], h, w_ih, w_hh, b_ih, b_hh, has_biases, H)
            c = f * c + i * gg
            h = o * np.tanh(c)
            gates[t] = np.concatenate([i, f, gg, o], axis=1)
            states[:, t] = c, np.tanh(c)
        out[t] = h
    return out, h, c, gates, states


def _sequences(sizes: list[int]) -> list[list[int]]:
    """A packed input's rows of each sequence, step by step."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    return [
        [int(starts[t]) + b for t in range(len(sizes)) if sizes[t] > b] for b in range(sizes[0])
    ]


def _ref_layer(
    input: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, hx: Any, cx: Any, reverse: bool,
    batch_sizes: Any, mode: int, hidden_size: int, num_layers: int, has_biases: bool,
    bidirectional: bool, batch_first: bool, train: bool,
) -> tuple[Any, ...]:  # fmt: skip
    """The outputs and the workspace: planes ``(k, T, B, H)`` (``(k, N, H)`` packed), the
    LSTM's ``i, f, g, o, c, tanh(c)``, the GRU's ``r, z, n, hn``. A packed input runs each
    sequence alone."""
    x, w_ih, w_hh, b_ih, b_hh, h, c = _f64(input, w_ih, w_hh, b_ih, b_hh, hx, cx)
    H = hidden_size
    w = (w_ih, w_hh, b_ih, b_hh)
    if len(batch_sizes):
        N = x.shape[0]
        out, gates, states = np.zeros((N, H)), np.zeros((N, 4 * H)), np.zeros((2, N, H))
        hy, cy = np.zeros_like(h), np.zeros_like(c)
        for b, rows in enumerate(_sequences(list(batch_sizes))):
            o, hy[b], cy[b], g, st = _ref_unpacked(
                x[rows][:, None], *w, h[b : b + 1], c[b : b + 1], reverse, mode, H, has_biases
            )
            out[rows], gates[rows], states[:, rows] = o[:, 0], g[:, 0], st[:, :, 0]
    else:
        if batch_first:
            x = x.transpose(1, 0, 2)
        out, hy, cy, gates, states = _ref_unpacked(x, *w, h, c, reverse, mode, H, has_biases)
        if batch_first:
            out = out.transpose(1, 0, 2)
    planes = np.moveaxis(gates.reshape(*gates.shape[:-1], 4, H), -2, 0)
    if mode == _GRU:
        return out, hy, c, planes
    return out, hy, cy, np.concatenate([planes, states])


def _ref_layer_backward(
    input: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, hx: Any, cx: Any, output: Any,
    hy: Any, cy: Any, grad_output: Any, grad_hy: Any, grad_cy: Any, reverse: bool, mode: int,
    hidden_size: int, num_layers: int, has_biases: bool, train: bool, bidirectional: bool,
    batch_sizes: Any, batch_first: bool, workspace: Any,
) -> tuple[Any, ...]:  # fmt: skip
    if len(batch_sizes):  # each sequence alone, its weight gradients summed
        x, hx, cx, gy, ghy, gcy = _f64(input, hx, cx, grad_output, grad_hy, grad_cy)
        gx, dh, dc = np.zeros_like(x), np.zeros_like(hx), np.zeros_like(cx)
        sums: list[Any] = [0.0] * 4
        for b, rows in enumerate(_sequences(list(batch_sizes))):
            r = _ref_layer_backward(
                x[rows][:, None], w_ih, w_hh, b_ih, b_hh, hx[b : b + 1], cx[b : b + 1], None,
                None, None, None if gy is None else gy[rows][:, None],
                None if ghy is None else ghy[b : b + 1], None if gcy is None else gcy[b : b + 1],
                reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional, [],
                False, None,
            )  # fmt: skip
            gx[rows], dh[b], dc[b] = r[0][:, 0], r[5][0], r[6][0]
            sums = [a if v is None else a + v for a, v in zip(sums, r[1:5], strict=True)]
        gb = sums[2:] if has_biases else [None, None]
        return gx, sums[0], sums[1], gb[0], gb[1], dh, dc
    x, w_ih, w_hh, hx, cx, gy, ghy, gcy = _f64(
        input, w_ih, w_hh, hx, cx, grad_output, grad_hy, grad_cy
    )
    if batch_first:
        x = x.transpose(1, 0, 2)
        gy = None if gy is None else gy.transpose(1, 0, 2)
    T, B, _ = x.shape
    H = hidden_size
    if mode == _GRU:
        b_ih, b_hh = _f64(b_ih, b_hh)
        return _ref_gru_backward(x, w_ih, w_hh, b_ih, b_hh, hx, gy, ghy, gcy, cx, reverse,
                                 has_biases, batch_first)  # fmt: skip
    # the forward again, keeping every step's values
    steps, h, c = {}, hx, cx
    order = _order(T, reverse)
    for t in order:
        i, f, gg, o = _lstm_gates(x[t], h, w_ih, w_hh, b_ih, b_hh, has_biases, H)
        steps[t] = (i, f, gg, o, c, h)
        c = f * c + i * gg
        h = o * np.tanh(c)
    dh = np.zeros((B, H)) if ghy is None else ghy
    dc = np.zeros((B, H)) if gcy is None else gcy
    gx, gw_ih, gw_hh, gb = np.zeros_like(x), np.zeros_like(w_ih), np.zeros_like(w_hh), 0.0
    for t in reversed(order):
        i, f, gg, o, c_prev, h_prev = steps[t]
        tc = np.tanh(f * c_prev + i * gg)
        if gy is not None:
            dh = dh + gy[t]
        dc = dc + dh * o * (1 - tc**2)
        d = np.concatenate(
            [dc * gg * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - gg**2), dh * tc * o * (1 - o)],
            axis=1,
        )  # fmt: skip
        dc = dc * f
        dh = d @ w_hh
        gx[t] = d @ w_ih
        gw_ih += d.T @ x[t]
        gw_hh += d.T @ h_prev
        gb = gb + d.sum(0)
    if batch_first:
        gx = gx.transpose(1, 0, 2)
    bias = gb if has_biases else None
    return gx, gw_ih, gw_hh, bias, bias, dh, dc


def _ref_gru_backward(
    x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, hx: Any, gy: Any, ghy: Any, gcy: Any,
    cx: Any, reverse: bool, has_biases: bool, batch_first: bool,
) -> tuple[Any, ...]:  # fmt: skip
    T, B, _ = x.shape
    H = hx.shape[1]
    steps, h = {}, hx
    order = _order(T, reverse)
    for t in order:
        ig = x[t] @ w_ih.T + (b_ih if has_biases else 0.0)
        hg = h @ w_hh.T + (b_hh if has_biases else 0.0)
        r = _sig(ig[:, :H] + hg[:, :H])
        z = _sig(ig[:, H : 2 * H] + hg[:, H : 2 * H])
        n = np.tanh(ig[:, 2 * H :] + r * hg[:, 2 * H :])
        steps[t] = (r, z, n, hg[:, 2 * H :], h)
        h = (1 - z) * n + z * h
    dh = np.zeros((B, H)) if ghy is None else ghy
    gx, gw_ih, gw_hh = np.zeros_like(x), np.zeros_like(w_ih), np.zeros_like(w_hh)
    gbi, gbh = np.zeros(3 * H), np.zeros(3 * H)
    for t in reversed(order):
        r, z, n, hn, h_prev = steps[t]
        if gy is not None:
            dh = dh + gy[t]
        dn = dh * (1 - z) * (1 - n**2)
        dz = dh * (h_prev - n) * z * (1 - z)
        dr = dn * hn * r * (1 - r)
        di = np.concatenate([dr, dz, dn], axis=1)
        dhg = np.concatenate([dr, dz, dn * r], axis=1)
        gx[t] = di @ w_ih
        gw_ih += di.T @ x[t]
        gw_hh += dhg.T @ h_prev
        gbi, gbh = gbi + di.sum(0), gbh + dhg.sum(0)
        dh = dh * z + dhg @ w_hh
    if batch_first:
        gx = gx.transpose(1, 0, 2)
    gcx = np.zeros_like(cx) if gcy is None else gcy  # the GRU's cy is cx passed through
    if not has_biases:
        gbi = gbh = None
    return gx, gw_ih, gw_hh, gbi, gbh, dh, gcx


_T, _B, _I, _H = 3, 2, 3, 2


def _layer_args(d: str, rng: np.random.Generator, batch_first: bool, mode: int) -> list[Any]:
    x = make((_B, _T, _I) if batch_first else (_T, _B, _I), d, rng)
    g = 4 if mode == _LSTM else 3
    shapes = [(g * _H, _I), (g * _H, _H), (g * _H,), (g * _H,), (_B, _H), (_B, _H)]
    return [x, *(make(s, d, rng) for s in shapes)]


_CASES = {  # name: (mode, reverse, has_biases, batch_first)
    "plain": (_LSTM, False, True, False),
    "reverse": (_LSTM, True, True, False),
    "no_biases": (_LSTM, False, False, False),
    "batch_first": (_LSTM, False, True, True),
    "gru": (_GRU, False, True, False),
    "gru_reverse_no_biases": (_GRU, True, False, True),
}
# packed input: sequences of lengths 3, 2, 2, 1 (batch sizes 4, 3, 1)
_PACKED = {"packed": (_LSTM, False), "packed_reverse": (_LSTM, True), "gru_packed": (_GRU, True)}
_SIZES = [4, 3, 1]


def _layer_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for name, (mode, reverse, has_biases, batch_first) in _CASES.items():
        args = _layer_args(d, rng, batch_first, mode)
        yield S(name, *args, reverse, [], mode, _H, 1, has_biases, False, batch_first, True)
    for name, (mode, reverse) in _PACKED.items():
        g = 4 if mode == _LSTM else 3
        shapes = [(sum(_SIZES), _I), (g * _H, _I), (g * _H, _H), (g * _H,), (g * _H,)]
        shapes += [(_SIZES[0], _H), (_SIZES[0], _H)]
        args = [make(sh, d, rng) for sh in shapes]
        yield S(name, *args, reverse, _SIZES, mode, _H, 1, True, False, False, True)


def _layer_backward_samples(d: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for s in _layer_samples(d, rng):
        a = s.args
        x, w_ih, w_hh, b_ih, b_hh, hx, cx = a[:7]
        reverse, sizes, mode, has_biases, batch_first = a[7], a[8], a[9], a[12], a[14]
        out, hy, cy, ws = (_as(r, x) for r in _ref_layer(*a))
        grads = [make(out.shape, d, rng), make(hy.shape, d, rng), make(cy.shape, d, rng)]
        if s.name in ("plain", "packed"):  # only the output's gradient
            grads[1] = grads[2] = None
        if s.name in ("reverse", "gru_reverse_no_biases"):  # only the final states'
            grads[0] = None
        head = (x, w_ih, w_hh, b_ih, b_hh, hx, cx, out, hy, cy, *grads)
        yield S(s.name, *head, reverse, mode, _H, 1, has_biases, True, False, sizes, batch_first,
                ws)  # fmt: skip


_TOL = {"float32": (1e-5, 1e-5), **LOWP_TOL_LOOSE}

add(
    OpInfo(
        "mkldnn_rnn_layer",
        op=fn("mkldnn_rnn_layer"),
        sample_inputs=_layer_samples,
        ref=_ref_layer,
        dtypes=FLOATS + LOWP,
        tol=_TOL,
    )
)
add(
    OpInfo(
        "mkldnn_rnn_layer_backward",
        op=fn("mkldnn_rnn_layer_backward"),
        sample_inputs=_layer_backward_samples,
        ref=_ref_layer_backward,
        dtypes=FLOATS + LOWP,
        compare=_compare_optional,
    )
)
