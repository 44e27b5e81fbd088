"""Part ``rnn_layer`` of the ``nn`` family of the array kit: one direction of one LSTM layer
over a whole sequence, and its backward, as one kernel each (PyTorch's ``mkldnn_rnn_layer``
and ``mkldnn_rnn_layer_backward`` schemas; there oneDNN's, here the kit's):

* ``mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
  batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train)``
  returns ``(output, hy, cy, workspace)``;
* ``mkldnn_rnn_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output,
  hy_, cy_, grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers,
  has_biases, train, bidirectional, batch_sizes, batch_first, workspace)`` returns
  ``(grad_input, grad_weight_ih, grad_weight_hh, grad_bias, grad_bias, grad_hx, grad_cx)``.

Note [Fused recurrent layer]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``nn.LSTM`` (Note [Recurrent time loop] in nn/rnn.py) runs each direction of each layer of an
unpacked input through ``mkldnn_rnn_layer``: the time loop runs inside the kernel, so autograd
records one node per layer and direction instead of two per time step. The weights are
PyTorch's ``weight_ih`` ``(4H, I)``, ``weight_hh`` ``(4H, H)`` and the biases ``(4H,)``
(``weight2`` and ``weight3``, ignored when ``has_biases`` is false), the gates ``i, f, g, o``
as in Note [Fused recurrent cells]. ``mode`` is PyTorch's numbering of the cell kinds (0
RNN_RELU, 1 RNN_TANH, 2 LSTM, 3 GRU); the kernel runs the LSTM (2) on an unpacked input
(``batch_sizes`` empty) and refuses the rest. ``num_layers``, ``bidirectional`` and ``train``
describe the caller and change nothing.

The forward makes the input's share of the gates for every step with one product over the
``T * B`` rows, then per step the hidden state's product and the gates' elementwise work,
writing each step's activated gates, cell state and its tanh into the workspace ``(6, T,
B, H)`` (six planes: ``i, f, g, o, c, tanh(c)``). The products are most of the time (at batch
32, hidden 128, 32 steps: 1.5 ms of a 2.8 ms forward, 3.2 ms of a 4.4 ms backward); writing
the loops' elementwise work into preallocated arrays with ``out=`` measured no faster. The backward walks the steps in the opposite order, carrying the hidden and cell
gradients; a step costs the gate gradients and one product ``(B, 4H) x (4H, H)`` for the
hidden state's gradient. The weight gradients are one product each over all steps: ``(4H, T
* B) x (T * B, I)`` for ``weight_ih`` and ``(4H, T * B) x (T * B, H)`` for ``weight_hh``
against the hidden states each step read (``hx`` then the outputs), and the input's gradient
one ``(T * B, 4H) x (4H, I)``. Both biases get the same gradient, the gate gradients summed
over steps and batch. The arithmetic is the per-step cell's (the same formulas in the same
order), so the layer agrees with the step-by-step path to float32 rounding. Half precision
computes in float32 and is rounded once.
"""

from __future__ import annotations

from typing import Any

from ... import dtypes as _dt
from ...tensor import Tensor
from .._kit import Kernel, Kernels, Kit, OpError, bind, fmt_shape
from ._rnn import _dtype  # the cells' dtype rule: floating types, promoted

_LSTM = 2
_GRU = 3
_GATES = {_LSTM: 4, _GRU: 3}
_PLANES = {_LSTM: 6, _GRU: 4}  # the workspace's: LSTM i, f, g, o, c, tanh(c); GRU r, z, n, hn
_OP = "mkldnn_rnn_layer"
_OP_BW = "mkldnn_rnn_layer_backward"


def _check_mode(op: str, mode: int, batch_sizes: Any) -> None:
    if mode not in _GATES:
        raise OpError(
            f"{op}: only the LSTM (mode 2) and the GRU (mode 3) are implemented, but got mode "
            f"{mode}; run the plain RNN through nn.RNN"
        )
    if len(batch_sizes):
        raise OpError(
            f"{op}: packed input (non-empty batch_sizes) is not supported; run packed "
            "sequences through nn.LSTM, which loops over the batch sizes"
        )


def _check_shapes(
    op: str, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, hx: Any, cx: Any, H: int,
    mode: int,
) -> None:  # fmt: skip
    n = _GATES[mode]
    ok = x.ndim == 3 and w_ih.ndim == 2 and w_hh.ndim == 2 and hx.ndim == 2 and cx.ndim == 2
    if ok:
        B, I = x.shape[1], x.shape[2]  # noqa: E741
        ok = (
            tuple(w_ih.shape) == (n * H, I)
            and tuple(w_hh.shape) == (n * H, H)
            and tuple(hx.shape) == (B, H)
            and tuple(cx.shape) == (B, H)
            and all(b is None or tuple(b.shape) == (n * H,) for b in (b_ih, b_hh))
        )
    if not ok:
        raise OpError(
            f"{op}: expected input (seq_len, batch, input_size), weight_ih ({n} * hidden_size, "
            f"input_size), weight_hh ({n} * hidden_size, hidden_size), biases ({n} * hidden_size,) "
            f"and states (batch, hidden_size) with hidden_size {H}, but got input "
            f"{fmt_shape(x.shape)}, weights {fmt_shape(w_ih.shape)} and {fmt_shape(w_hh.shape)}, "
            f"states {fmt_shape(hx.shape)} and {fmt_shape(cx.shape)}"
        )


def _operands(kit: Kit, d: _dt.dtype, device: Any, *ts: Tensor | None) -> list[Any]:
    acc = kit.accumulate[d]
    return [None if t is None else kit.cast(kit.operand(t, d, device), acc) for t in ts]


def _steps(T: int, reverse: bool) -> range:
    return range(T - 1, -1, -1) if reverse else range(T)


def _sigmoid(xp: Any, a: Any) -> Any:
    return 1 / (1 + xp.exp(-a))


def rnn_layer(
    kit: Kit,
    input: Tensor,
    weight0: Tensor,
    weight1: Tensor,
    weight2: Tensor,
    weight3: Tensor,
    hx_: Tensor,
    cx_: Tensor,
    reverse: bool,
    batch_sizes: Any,
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    bidirectional: bool,
    batch_first: bool,
    train: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    _check_mode(_OP, mode, batch_sizes)
    biases = (weight2, weight3) if has_biases else (None, None)
    d = _dtype(_OP, input, weight0, weight1, *biases, hx_, cx_)
    xp = kit.xp
    device = input._device
    x, w_ih, w_hh, b_ih, b_hh, h, c = _operands(
        kit, d, device, input, weight0, weight1, *biases, hx_, cx_
    )
    if batch_first and x.ndim == 3:
        x = xp.permute_dims(x, (1, 0, 2))
    H = hidden_size
    _check_shapes(_OP, x, w_ih, w_hh, b_ih, b_hh, h, c, H, mode)
    T, B, I = x.shape  # noqa: E741
    with kit.quiet():
        gx = xp.matmul(xp.reshape(x, (T * B, I)), xp.permute_dims(w_ih, (1, 0)))
        if mode == _GRU:
            out, h, ws = _gru_forward(xp, gx, T, w_hh, b_ih, b_hh, h, reverse)
            if batch_first:
                out = xp.permute_dims(out, (1, 0, 2))
            wrap = kit.wrap
            # the GRU has no cell state: cy is cx passed through
            return wrap(out, d, device), wrap(h, d, device), wrap(c, d, device), wrap(ws, d, device)
        for b in (b_ih, b_hh):
            if b is not None:
                gx = gx + b
        gx = xp.reshape(gx, (T, B, 4 * H))
        w_hh_t = xp.permute_dims(w_hh, (1, 0))
        ws = xp.empty((6, T, B, H), dtype=gx.dtype)
        out = xp.empty((T, B, H), dtype=gx.dtype)
        for t in _steps(T, reverse):
            g = gx[t, ...] + xp.matmul(h, w_hh_t)
            i = _sigmoid(xp, g[:, :H])
            f = _sigmoid(xp, g[:, H : 2 * H])
            gg = xp.tanh(g[:, 2 * H : 3 * H])
            o = _sigmoid(xp, g[:, 3 * H :])
            c = f * c + i * gg
            tc = xp.tanh(c)
            h = o * tc
            for k, a in enumerate((i, f, gg, o, c, tc)):
                ws[k, t, ...] = a
            out[t, ...] = h
        if batch_first:
            out = xp.permute_dims(out, (1, 0, 2))
    return (
        kit.wrap(out, d, device),
        kit.wrap(h, d, device),
        kit.wrap(c, d, device),
        kit.wrap(ws, d, device),
    )


def rnn_layer_backward(
    kit: Kit,
    input: Tensor,
    weight1: Tensor,
    weight2: Tensor,
    weight3: Tensor,
    weight4: Tensor,
    hx_: Tensor,
    cx_tmp: Tensor,
    output: Tensor,
    hy_: Tensor,
    cy_: Tensor,
    grad_output: Tensor | None,
    grad_hy: Tensor | None,
    grad_cy: Tensor | None,
    reverse: bool,
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    train: bool,
    bidirectional: bool,
    batch_sizes: Any,
    batch_first: bool,
    workspace: Tensor,
) -> tuple[Tensor, Tensor, Tensor, Tensor | None, Tensor | None, Tensor, Tensor]:
    _check_mode(_OP_BW, mode, batch_sizes)
    d = _dtype(_OP_BW, input, weight1, weight2, hx_, cx_tmp, output, workspace)
    xp = kit.xp
    device = input._device
    x, w_ih, w_hh, h0, c0, y, ws, gy, ghy, gcy = _operands(
        kit, d, device, input, weight1, weight2, hx_, cx_tmp, output, workspace,
        grad_output, grad_hy, grad_cy,
    )  # fmt: skip
    if batch_first:
        x = xp.permute_dims(x, (1, 0, 2))
        y = xp.permute_dims(y, (1, 0, 2))
        if gy is not None:
            gy = xp.permute_dims(gy, (1, 0, 2))
    H = hidden_size
    _check_shapes(_OP_BW, x, w_ih, w_hh, None, None, h0, c0, H, mode)
    T, B, I = x.shape  # noqa: E741
    if tuple(ws.shape) != (_PLANES[mode], T, B, H):
        raise OpError(
            f"{_OP_BW}: expected a workspace of shape {fmt_shape((_PLANES[mode], T, B, H))} "
            f"from mkldnn_rnn_layer, but got {fmt_shape(ws.shape)}"
        )
    if mode == _GRU:
        with kit.quiet():
            gx, gw_ih, gw_hh, gb_ih, gb_hh, dh = _gru_backward(
                xp, x, w_ih, w_hh, h0, y, ws, gy, ghy, reverse, has_biases
            )
            if batch_first:
                gx = xp.permute_dims(gx, (1, 0, 2))
        wrap = kit.wrap
        dc = xp.zeros_like(c0) if gcy is None else gcy  # cy is cx passed through
        return (
            wrap(gx, d, device), wrap(gw_ih, d, device), wrap(gw_hh, d, device),
            None if gb_ih is None else wrap(gb_ih, d, device),
            None if gb_hh is None else wrap(gb_hh, d, device),
            wrap(dh, d, device), wrap(dc, d, device),
        )  # fmt: skip
    with kit.quiet():
        dh = xp.zeros((B, H), dtype=x.dtype) if ghy is None else ghy
        dc = xp.zeros((B, H), dtype=x.dtype) if gcy is None else gcy
        dgates = xp.empty((T, B, 4 * H), dtype=x.dtype)
        order = list(_steps(T, reverse))
        for n in range(T - 1, -1, -1):
            t = order[n]
            if gy is not None:
                dh = dh + gy[t, ...]
            i, f, g, o, _, tc = (ws[k, t, ...] for k in range(6))
            c_prev = c0 if n == 0 else ws[4, order[n - 1], ...]
            dc = dc + dh * o * (1 - tc * tc)
            dgates[t, :, :H] = dc * g * i * (1 - i)
            dgates[t, :, H : 2 * H] = dc * c_prev * f * (1 - f)
            dgates[t, :, 2 * H : 3 * H] = dc * i * (1 - g * g)
            dgates[t, :, 3 * H :] = dh * tc * o * (1 - o)
            dc = dc * f
            dh = xp.matmul(dgates[t, ...], w_hh)
        h_prev = _h_prev(xp, h0, y, reverse)
        flat = xp.reshape(dgates, (T * B, 4 * H))
        flat_t = xp.permute_dims(flat, (1, 0))
        gw_ih = xp.matmul(flat_t, xp.reshape(x, (T * B, I)))
        gw_hh = xp.matmul(flat_t, xp.reshape(h_prev, (T * B, H)))
        gx = xp.reshape(xp.matmul(flat, w_ih), (T, B, I))
        if batch_first:
            gx = xp.permute_dims(gx, (1, 0, 2))
        gb = xp.sum(flat, axis=0) if has_biases else None
    wrap = kit.wrap
    bias = None if gb is None else wrap(gb, d, device)
    bias2 = None if gb is None else wrap(gb, d, device)
    return (
        wrap(gx, d, device),
        wrap(gw_ih, d, device),
        wrap(gw_hh, d, device),
        bias,
        bias2,
        wrap(dh, d, device),
        wrap(dc, d, device),
    )


def _h_prev(xp: Any, h0: Any, y: Any, reverse: bool) -> Any:
    """The hidden state each step read, ``(T, B, H)``: ``hx`` first, then the previous step's
    output (in the direction of the loop)."""
    T, B, H = y.shape
    if not T:
        return xp.zeros((0, B, H), dtype=y.dtype)
    h0e = xp.reshape(h0, (1, B, H))
    if reverse:
        return xp.concat([y[1:, ...], h0e], axis=0)
    return xp.concat([h0e, y[:-1, ...]], axis=0)


def _gru_forward(
    xp: Any, gx: Any, T: int, w_hh: Any, b_ih: Any, b_hh: Any, h: Any, reverse: bool
) -> tuple[Any, Any, Any]:
    """The GRU's loop (Note [Fused recurrent cells]'s gates ``r, z, n``): the output, the last
    hidden state and the workspace ``(4, T, B, H)`` of ``r, z, n`` and ``h_n + b_hn``."""
    B, H = h.shape
    if b_ih is not None:
        gx = gx + b_ih
    gx = xp.reshape(gx, (T, B, 3 * H))
    w_hh_t = xp.permute_dims(w_hh, (1, 0))
    ws = xp.empty((4, T, B, H), dtype=gx.dtype)
    out = xp.empty((T, B, H), dtype=gx.dtype)
    for t in _steps(T, reverse):
        ig = gx[t, ...]
        hg = xp.matmul(h, w_hh_t)
        if b_hh is not None:
            hg = hg + b_hh
        rz = _sigmoid(xp, ig[:, : 2 * H] + hg[:, : 2 * H])
        r, z = rz[:, :H], rz[:, H:]
        hn = hg[:, 2 * H :]
        n = xp.tanh(ig[:, 2 * H :] + r * hn)
        h = n + z * (h - n)
        for k, a in enumerate((r, z, n, hn)):
            ws[k, t, ...] = a
        out[t, ...] = h
    return out, h, ws


def _gru_backward(
    xp: Any, x: Any, w_ih: Any, w_hh: Any, h0: Any, y: Any, ws: Any, gy: Any, ghy: Any,
    reverse: bool, has_biases: bool,
) -> tuple[Any, ...]:  # fmt: skip
    """The GRU's gradients (the fused cell's backward, Note [Fused recurrent cells], step by
    step), the weights' over all steps at once: ``(input, weight_ih, weight_hh, bias_ih,
    bias_hh, hx)``."""
    T, B, I = x.shape  # noqa: E741
    H = h0.shape[1]
    h_prev = _h_prev(xp, h0, y, reverse)
    dh = xp.zeros((B, H), dtype=x.dtype) if ghy is None else ghy
    dgi = xp.empty((T, B, 3 * H), dtype=x.dtype)
    dgh = xp.empty((T, B, 3 * H), dtype=x.dtype)
    for t in reversed(list(_steps(T, reverse))):
        if gy is not None:
            dh = dh + gy[t, ...]
        r, z, n, hn = (ws[k, t, ...] for k in range(4))
        grad_hx = dh * z
        dn = (dh - grad_hx) * (1 - n * n)
        dz = dh * (h_prev[t, ...] - n) * z * (1 - z)
        dr = dn * hn * r * (1 - r)
        dgi[t, :, :H] = dr
        dgi[t, :, H : 2 * H] = dz
        dgi[t, :, 2 * H :] = dn
        dgh[t, :, :H] = dr
        dgh[t, :, H : 2 * H] = dz
        dgh[t, :, 2 * H :] = dn * r
        dh = grad_hx + xp.matmul(dgh[t, ...], w_hh)
    fi = xp.reshape(dgi, (T * B, 3 * H))
    fh = xp.reshape(dgh, (T * B, 3 * H))
    gw_ih = xp.matmul(xp.permute_dims(fi, (1, 0)), xp.reshape(x, (T * B, I)))
    gw_hh = xp.matmul(xp.permute_dims(fh, (1, 0)), xp.reshape(h_prev, (T * B, H)))
    gx = xp.reshape(xp.matmul(fi, w_ih), (T, B, I))
    gb_ih = xp.sum(fi, axis=0) if has_biases else None
    gb_hh = xp.sum(fh, axis=0) if has_biases else None
    return gx, gw_ih, gw_hh, gb_ih, gb_hh, dh


KERNELS: dict[str, Kernel] = {_OP: rnn_layer, _OP_BW: rnn_layer_backward}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
