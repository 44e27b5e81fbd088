"""Part ``rnn`` of the ``nn`` family of the array kit: the fused recurrent cells that
``nn.LSTM`` and ``nn.GRU`` run once per time step (PyTorch's names and schemas):

* ``_thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias)`` returns
  ``(hy, cy, workspace)``;
* ``_thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias)``
  returns ``(grad_gates, grad_cx, grad_bias)``;
* ``_thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias, hidden_bias)`` returns
  ``(hy, workspace)``;
* ``_thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias)`` returns
  ``(grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias)``.

Note [Fused recurrent cells]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A step of a recurrent layer is two matrix products (the input's, done for every step at once
before the loop, and the hidden state's) and then elementwise work on the gate pre-activations.
These kernels do that elementwise work in one call, so a step costs the products and one
dispatch, however many gates there are. The gates are PyTorch's: LSTM ``i, f, g, o`` in that
order along dim 1 (``cy = f * cx + i * g``, ``hy = o * tanh(cy)``); GRU ``r, z, n``, with
``n = tanh(x_n + b_in + r * (h_n + b_hn))`` and ``hy = (1 - z) * n + z * hx``. The workspace
holds what the backward needs: the LSTM's four activated gates ``(B, 4H)``; the GRU's ``r, z,
n``, ``hx`` and ``h_n + b_hn``, ``(B, 5H)``. The gradients of both gate pre-activations are the
same for the LSTM (one ``grad_gates``); the GRU's differ on ``n``. The bias gradients are the
gate gradients summed over the batch. Half precision computes in float32 and is rounded once;
the operands promote together (under autocast the gates arrive in bfloat16 and the cell state
in float32).
"""

from __future__ import annotations

from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape, torch_name


def _dtype(op: str, *ts: Tensor | None) -> _dt.dtype:
    d: _dt.dtype | None = None
    for t in ts:
        if t is not None:
            d = t._dtype if d is None else _dt.promote_types(d, t._dtype)
    assert d is not None
    if d.kind != "f":
        raise OpError(f"\"{op}\" not implemented for '{torch_name(d)}'")
    return d


def _check_gates(op: str, n: int, ig: Tensor, hg: Tensor, h: Tensor, ib: Any, hb: Any) -> None:
    gs, hs, xs = tuple(ig._data.shape), tuple(hg._data.shape), tuple(h._data.shape)
    if len(xs) != 2 or gs != hs or gs != (xs[0], n * xs[1]):
        raise OpError(
            f"{op}: expected input_gates and hidden_gates of shape (batch, {n} * hidden) and a "
            f"state of shape (batch, hidden), but got {fmt_shape(gs)}, {fmt_shape(hs)} and "
            f"{fmt_shape(xs)}"
        )
    for b in (ib, hb):
        if b is not None and tuple(b._data.shape) != (gs[1],):
            raise OpError(
                f"{op}: expected biases of shape ({gs[1]},), but got {fmt_shape(b._data.shape)}"
            )


def _sigmoid(xp: Any, a: Any) -> Any:
    return 1 / (1 + xp.exp(-a))


def _ops(kit: Kit, d: _dt.dtype, device: Any, *ts: Tensor | None) -> list[Any]:
    acc = kit.accumulate[d]
    return [None if t is None else kit.cast(kit.operand(t, d, device), acc) for t in ts]


def _pre(ig: Any, hg: Any, ib: Any, hb: Any) -> Any:
    g = ig + hg
    if ib is not None:
        g += ib
    if hb is not None:
        g += hb
    return g


def fused_lstm_cell(
    kit: Kit,
    input_gates: Tensor,
    hidden_gates: Tensor,
    cx: Tensor,
    input_bias: Tensor | None = None,
    hidden_bias: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    op = "_thnn_fused_lstm_cell"
    d = _dtype(op, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    _check_gates(op, 4, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    xp = kit.xp
    device = input_gates._device
    ig, hg, c, ib, hb = _ops(kit, d, device, input_gates, hidden_gates, cx, input_bias, hidden_bias)
    H = c.shape[1]
    with kit.quiet():
        g = _pre(ig, hg, ib, hb)
        ws = xp.concat(
            [
                _sigmoid(xp, g[:, : 2 * H]),
                xp.tanh(g[:, 2 * H : 3 * H]),
                _sigmoid(xp, g[:, 3 * H :]),
            ],
            axis=1,
        )
        i, f, gg, o = ws[:, :H], ws[:, H : 2 * H], ws[:, 2 * H : 3 * H], ws[:, 3 * H :]
        cy = f * c + i * gg
        hy = o * xp.tanh(cy)
    return kit.wrap(hy, d, device), kit.wrap(cy, d, device), kit.wrap(ws, d, device)


def fused_lstm_cell_backward_impl(
    kit: Kit,
    grad_hy: Tensor | None,
    grad_cy: Tensor | None,
    cx: Tensor,
    cy: Tensor,
    workspace: Tensor,
    has_bias: bool,
) -> tuple[Tensor, Tensor, Tensor | None]:
    op = "_thnn_fused_lstm_cell_backward_impl"
    d = _dtype(op, grad_hy, grad_cy, cx, cy, workspace)
    xp = kit.xp
    device = workspace._device
    gh, gc, c, c1, ws = _ops(kit, d, device, grad_hy, grad_cy, cx, cy, workspace)
    H = c.shape[1]
    i, f, g, o = ws[:, :H], ws[:, H : 2 * H], ws[:, 2 * H : 3 * H], ws[:, 3 * H :]
    with kit.quiet():
        tc = xp.tanh(c1)
        dc = xp.zeros_like(c) if gc is None else gc
        if gh is not None:
            dc = dc + gh * o * (1 - tc * tc)
        do = xp.zeros_like(c) if gh is None else gh * tc * o * (1 - o)
        di = dc * g * i * (1 - i)
        df = dc * c * f * (1 - f)
        dg = dc * i * (1 - g * g)
        grad_gates = xp.concat([di, df, dg, do], axis=1)
        grad_cx = dc * f
    gb = kit.wrap(xp.sum(grad_gates, axis=0), d, device) if has_bias else None
    return kit.wrap(grad_gates, d, device), kit.wrap(grad_cx, d, device), gb


def fused_gru_cell(
    kit: Kit,
    input_gates: Tensor,
    hidden_gates: Tensor,
    hx: Tensor,
    input_bias: Tensor | None = None,
    hidden_bias: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    op = "_thnn_fused_gru_cell"
    d = _dtype(op, input_gates, hidden_gates, hx, input_bias, hidden_bias)
    _check_gates(op, 3, input_gates, hidden_gates, hx, input_bias, hidden_bias)
    xp = kit.xp
    device = input_gates._device
    ig, hg, h, ib, hb = _ops(kit, d, device, input_gates, hidden_gates, hx, input_bias, hidden_bias)
    H = h.shape[1]
    with kit.quiet():
        if ib is not None:
            ig = ig + ib
        if hb is not None:
            hg = hg + hb
        rz = _sigmoid(xp, ig[:, : 2 * H] + hg[:, : 2 * H])
        r, z = rz[:, :H], rz[:, H:]
        hn = hg[:, 2 * H :]
        n = xp.tanh(ig[:, 2 * H :] + r * hn)
        hy = n + z * (h - n)
        ws = xp.concat([rz, n, h, hn], axis=1)
    return kit.wrap(hy, d, device), kit.wrap(ws, d, device)


def fused_gru_cell_backward(
    kit: Kit, grad_hy: Tensor, workspace: Tensor, has_bias: bool
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor | None]:
    op = "_thnn_fused_gru_cell_backward"
    d = _dtype(op, grad_hy, workspace)
    xp = kit.xp
    device = workspace._device
    g, ws = _ops(kit, d, device, grad_hy, workspace)
    H = g.shape[1]
    if tuple(ws.shape) != (g.shape[0], 5 * H):
        raise OpError(
            f"{op}: expected a workspace of shape (batch, 5 * hidden), but got "
            f"{fmt_shape(ws.shape)} for grad_hy {fmt_shape(g.shape)}"
        )
    r, z, n, h, hn = (ws[:, k * H : (k + 1) * H] for k in range(5))
    with kit.quiet():
        grad_hx = g * z
        dn = (g - grad_hx) * (1 - n * n)
        dz = g * (h - n) * z * (1 - z)
        dr = dn * hn * r * (1 - r)
        gi = xp.concat([dr, dz, dn], axis=1)
        gh = xp.concat([dr, dz, dn * r], axis=1)
    out_gi, out_gh = kit.wrap(gi, d, device), kit.wrap(gh, d, device)
    bi = kit.wrap(xp.sum(gi, axis=0), d, device) if has_bias else None
    bh = kit.wrap(xp.sum(gh, axis=0), d, device) if has_bias else None
    return out_gi, out_gh, kit.wrap(grad_hx, d, device), bi, bh


KERNELS: dict[str, Kernel] = {
    "_thnn_fused_lstm_cell": fused_lstm_cell,
    "_thnn_fused_lstm_cell_backward_impl": fused_lstm_cell_backward_impl,
    "_thnn_fused_gru_cell": fused_gru_cell,
    "_thnn_fused_gru_cell_backward": fused_gru_cell_backward,
}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
