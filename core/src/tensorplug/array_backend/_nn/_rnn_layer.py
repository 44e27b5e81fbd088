"""Part ``rnn_layer`` of the ``nn`` family of the array kit: one direction of one LSTM or GRU
layer over a whole sequence (unpacked, or packed with its batch sizes), and its backward, as
one kernel each (PyTorch's ``mkldnn_rnn_layer`` and ``mkldnn_rnn_layer_backward`` schemas;
there oneDNN's, here the kit's):

* ``mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse,
  batch_sizes, mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train)``
  returns ``(output, hy, cy, workspace)``;
* ``mkldnn_rnn_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output,
  hy_, cy_, grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers,
  has_biases, train, bidirectional, batch_sizes, batch_first, workspace)`` returns
  ``(grad_input, grad_weight_ih, grad_weight_hh, grad_bias, grad_bias, grad_hx, grad_cx)``.

Note [Fused recurrent layer]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``nn.LSTM`` and ``nn.GRU`` (Note [Recurrent time loop] in nn/rnn.py) run each direction of each
layer through ``mkldnn_rnn_layer``: the time loop runs inside the kernel, so autograd records
one node per layer and direction instead of two per time step. The weights are PyTorch's
``weight_ih`` ``(G*H, I)``, ``weight_hh`` ``(G*H, H)`` and the biases ``(G*H,)`` (``weight2``
and ``weight3``, ignored when ``has_biases`` is false), the gates ``i, f, g, o`` (LSTM, G = 4)
or ``r, z, n`` (GRU, G = 3) as in Note [Fused recurrent cells]. ``mode`` is PyTorch's numbering
of the cell kinds (0 RNN_RELU, 1 RNN_TANH, 2 LSTM, 3 GRU); the kernel runs the LSTM and the GRU
and refuses the rest. ``num_layers``, ``bidirectional`` and ``train`` describe the caller and
change nothing.

The kernels work on rows: the input is ``(N, I)``, time step after time step, step ``t``
holding ``batch_sizes[t]`` rows (a packed sequence's data: the sequences sorted longest first,
so a step's rows are those of the sequences still running), or ``(T, B, I)`` reshaped to ``T *
B`` rows (``batch_sizes`` empty, every step ``B`` rows). The state a step reads is the
previous step's rows (in the loop's direction) and, for the sequences that start at that step
(the reverse direction of a packed input), the initial state's; the final state of each
sequence is its last step's rows. The backward carries the state gradients in ``(B, H)``
arrays whose first ``batch_sizes[t]`` rows step ``t`` updates: the rows of the sequences not
running keep theirs, so the arrays end as the initial states' gradients.

The forward makes the input's share of the gates for every row with one product, then per
step the hidden state's product and the gates' elementwise work, in place (``out=``) in arrays
made once per call. The LSTM's gate rows are scaled by -1 (``i, f, o``) and -2 (``g``) in the
weights and biases, so that one ``exp``, add and reciprocal over the step's contiguous ``(n,
4H)`` block give the three sigmoids and ``sigmoid(2a)``, and ``tanh(a) = 2 sigmoid(2a) - 1``
two passes over ``g``. The activated gates are then copied into the workspace's planes ``(6,
N, H)`` (``(6, T, B, H)`` unpacked) of ``i, f, g, o, c, tanh(c)``, so that every later pass,
forward and backward, runs on contiguous rows (the gates' columns of one ``(N, 4H)`` array
are strided, and each strided pass measured several times a contiguous one's cost). The GRU's
workspace is planes ``(4, N, H)`` of ``r, z, n`` and ``h W_hn^T + b_hn``, its sigmoids one
pass over ``r`` and ``z``. The backward walks the steps in the opposite order: a step costs the gate
gradients (the LSTM's as the per-step cell's backward, on the planes' rows) and one product
``(n, 4H) x (4H, H)`` (``(n, 3H) x (3H, H)``) for the hidden state's gradient. The weight
gradients are one product each over all rows: ``(G*H, N) x (N, I)`` for ``weight_ih`` and
``(G*H, N) x (N, H)`` for ``weight_hh`` against the hidden state each step read (unpacked, two
products on ``h0``'s and the output's rows instead of making that array), and the input's
gradient one ``(N, G*H) x (G*H, I)``. The LSTM's biases get the same gradient, the gate
gradients summed over the rows. At batch 32, hidden 128, 32 steps the products are most of
the time (1.5 ms of a 2.8 ms forward, 3.2 ms of a 4.4 ms backward). Half precision computes in
float32 and is rounded once. Namespaces without ``out=`` (Meta, the standard's) run the same
code storing each result with ``setitem`` (:class:`_Into`).
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
_OP = "mkldnn_rnn_layer"
_OP_BW = "mkldnn_rnn_layer_backward"


def _check_mode(op: str, mode: int) -> None:
    if mode not in _GATES:
        raise OpError(
            f"{op}: only the LSTM (mode 2) and the GRU (mode 3) are implemented, but got mode "
            f"{mode}; run the plain RNN through nn.RNN"
        )


def _check_shapes(
    op: str, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, hx: Any, cx: Any, H: int,
    mode: int, packed: bool,
) -> None:  # fmt: skip
    n = _GATES[mode]
    rows = 2 if packed else 3
    ok = x.ndim == rows and w_ih.ndim == 2 and w_hh.ndim == 2 and hx.ndim == 2 and cx.ndim == 2
    if ok:
        B, I = hx.shape[0] if packed else x.shape[1], x.shape[-1]  # noqa: E741
        ok = (
            tuple(w_ih.shape) == (n * H, I)
            and tuple(w_hh.shape) == (n * H, H)
            and tuple(hx.shape) == (B, H)
            and tuple(cx.shape) == (B, H)
            and all(b is None or tuple(b.shape) == (n * H,) for b in (b_ih, b_hh))
        )
    if not ok:
        what = "packed input (sum(batch_sizes), input_size)" if packed else (
            "input (seq_len, batch, input_size)"
        )  # fmt: skip
        raise OpError(
            f"{op}: expected {what}, weight_ih ({n} * hidden_size, input_size), weight_hh "
            f"({n} * hidden_size, hidden_size), biases ({n} * hidden_size,) and states (batch, "
            f"hidden_size) with hidden_size {H}, but got input {fmt_shape(x.shape)}, weights "
            f"{fmt_shape(w_ih.shape)} and {fmt_shape(w_hh.shape)}, states {fmt_shape(hx.shape)} "
            f"and {fmt_shape(cx.shape)}"
        )


def _sizes(op: str, batch_sizes: Any, x: Any, hx: Any) -> list[int]:
    """A packed input's batch sizes, checked: positive, non-increasing, the first the states'
    batch, summing to the data's rows (PyTorch's PackedSequence)."""
    sizes = [int(n) for n in batch_sizes]
    rows = x.shape[0] if x.ndim == 2 else -1
    b0 = hx.shape[0] if hx.ndim == 2 else -1
    ok = sizes[0] == b0 and sum(sizes) == rows
    ok = (
        ok
        and all(n > 0 for n in sizes)
        and all(a >= b for a, b in zip(sizes, sizes[1:], strict=False))
    )
    if not ok:
        raise OpError(
            f"{op}: expected batch_sizes positive and non-increasing, the first the states' "
            f"batch and their sum the packed input's rows (a PackedSequence's), but got "
            f"batch_sizes {sizes} for input {fmt_shape(x.shape)} and states "
            f"{fmt_shape(hx.shape)}; pack the sequences with nn.utils.rnn.pack_padded_sequence"
        )
    return sizes


class _Rows:
    """Where each time step's rows are in the ``(N, ...)`` arrays of a layer (Note [Fused
    recurrent layer]): step ``t`` has ``sizes[t]`` rows from ``starts[t]``, the sequences still
    running, longest first."""

    def __init__(self, sizes: list[int], reverse: bool) -> None:
        self.sizes = sizes
        self.T = len(sizes)
        self.starts = [0] * self.T
        for t in range(1, self.T):
            self.starts[t] = self.starts[t - 1] + sizes[t - 1]
        self.reverse = reverse
        self.uniform = all(n == sizes[0] for n in sizes)

    def order(self) -> range:
        T = self.T
        return range(T - 1, -1, -1) if self.reverse else range(T)

    def rows(self, t: int) -> slice:
        return slice(self.starts[t], self.starts[t] + self.sizes[t])

    def prev(self, xp: Any, y: Any, init: Any, t: int) -> Any:
        """The state step ``t`` reads, ``(sizes[t], H)``: the previous step's (in the loop's
        direction) rows of ``y``, and ``init``'s for the sequences that start at ``t``."""
        n = self.sizes[t]
        p = t + 1 if self.reverse else t - 1
        if p < 0 or p >= self.T:
            return init[:n, ...]
        m = min(n, self.sizes[p])
        a = y[self.starts[p] : self.starts[p] + m, ...]
        return a if m == n else xp.concat([a, init[m:n, ...]], axis=0)

    def prev_all(self, xp: Any, y: Any, init: Any) -> Any:
        """:meth:`prev` of every step, ``(N, H)`` in the rows' order."""
        B = self.sizes[0] if self.T else init.shape[0]
        if not self.T:
            return y
        if self.uniform:
            if self.reverse:
                return xp.concat([y[B:, ...], init], axis=0)
            return xp.concat([init, y[: y.shape[0] - B, ...]], axis=0)
        return xp.concat([self.prev(xp, y, init, t) for t in range(self.T)], axis=0)

    def last(self, xp: Any, y: Any, init: Any) -> Any:
        """The final state of every sequence, ``(B, H)``: the rows of the last step each ran
        (in the loop's direction), ``init`` for a layer without steps."""
        T = self.T
        if not T:
            return init
        if self.reverse or self.uniform:
            t = 0 if self.reverse else T - 1
            return y[self.starts[t] : self.starts[t] + self.sizes[t], ...]
        parts = []
        for t in range(T - 1, -1, -1):  # the rows ending at t: [sizes[t + 1], sizes[t])
            lo = self.sizes[t + 1] if t + 1 < T else 0
            if self.sizes[t] > lo:
                parts.append(y[self.starts[t] + lo : self.starts[t] + self.sizes[t], ...])
        return xp.concat(parts, axis=0)


class _Into:
    """The namespace's functions writing into ``out=`` where it can (numpy's and CuPy's ufuncs),
    else computing and storing with ``setitem`` (the Meta namespace, the standard's)."""

    multiply: Any
    add: Any
    subtract: Any
    exp: Any
    reciprocal: Any
    tanh: Any
    matmul: Any

    def __init__(self, kit: Kit) -> None:
        xp = kit.xp
        self.writes = kit.writes_out
        for name in ("multiply", "add", "subtract", "exp", "reciprocal", "tanh", "matmul"):
            setattr(self, name, self._with_out(getattr(xp, name)))

    def _with_out(self, fn: Any) -> Any:
        if self.writes:
            return fn

        def into(*args: Any, out: Any) -> Any:
            out[...] = fn(*args)
            return out

        return into


def _operands(kit: Kit, d: _dt.dtype, device: Any, *ts: Tensor | None) -> list[Any]:
    acc = kit.accumulate[d]
    return [None if t is None else kit.cast(kit.operand(t, d, device), acc) for t in ts]


def _rows_of(
    op: str, xp: Any, x: Any, batch_sizes: Any, hx: Any, reverse: bool
) -> tuple[Any, _Rows]:
    """The input as ``(N, I)`` rows, step after step, and where each step's rows are."""
    if len(batch_sizes):
        return x, _Rows(_sizes(op, batch_sizes, x, hx), reverse)
    T, B, I = x.shape  # noqa: E741
    return xp.reshape(x, (T * B, I)), _Rows([B] * T, reverse)


def _time_major(xp: Any, a: Any, packed: bool, batch_first: bool) -> Any:
    if a is None or packed or not batch_first:
        return a
    return xp.permute_dims(a, (1, 0, 2))


def _flat(xp: Any, a: Any, packed: bool) -> Any:
    return a if a is None or packed else xp.reshape(a, (a.shape[0] * a.shape[1], a.shape[2]))


def _unflat(xp: Any, a: Any, rows: _Rows, packed: bool, batch_first: bool) -> Any:
    """``(N, K)`` rows back as ``(T, B, K)`` (``(B, T, K)`` batch first) for an unpacked input."""
    if packed:
        return a
    B = rows.sizes[0] if rows.T else 0
    return _time_major(xp, xp.reshape(a, (rows.T, B, a.shape[1])), False, batch_first)


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
    _check_mode(_OP, mode)
    biases = (weight2, weight3) if has_biases else (None, None)
    d = _dtype(_OP, input, weight0, weight1, *biases, hx_, cx_)
    xp = kit.xp
    device = input._device
    x, w_ih, w_hh, b_ih, b_hh, h, c = _operands(
        kit, d, device, input, weight0, weight1, *biases, hx_, cx_
    )
    packed = len(batch_sizes) > 0
    if x.ndim == 3:
        x = _time_major(xp, x, packed, batch_first)
    H = hidden_size
    _check_shapes(_OP, x, w_ih, w_hh, b_ih, b_hh, h, c, H, mode, packed)
    X, rows = _rows_of(_OP, xp, x, batch_sizes, h, reverse)
    with kit.quiet():
        into = _Into(kit)
        if mode == _GRU:
            y, hy, ws = _gru_forward(xp, into, X, rows, w_ih, w_hh, b_ih, b_hh, h)
            cy = c  # the GRU has no cell state: cy is cx passed through
        else:
            y, hy, cy, ws = _lstm_forward(xp, into, X, rows, w_ih, w_hh, b_ih, b_hh, h, c)
        y = _unflat(xp, y, rows, packed, batch_first)
        if not packed:  # the planes (k, N, H) as (k, T, B, H)
            ws = xp.reshape(ws, (ws.shape[0], rows.T, h.shape[0], H))
    wrap = kit.wrap
    return wrap(y, d, device), wrap(hy, d, device), wrap(cy, d, device), wrap(ws, d, device)


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
    _check_mode(_OP_BW, mode)
    d = _dtype(_OP_BW, input, weight1, weight2, hx_, cx_tmp, output, workspace)
    xp = kit.xp
    device = input._device
    x, w_ih, w_hh, h0, c0, y, ws, gy, ghy, gcy = _operands(
        kit, d, device, input, weight1, weight2, hx_, cx_tmp, output, workspace,
        grad_output, grad_hy, grad_cy,
    )  # fmt: skip
    packed = len(batch_sizes) > 0
    x, y, gy = (_time_major(xp, a, packed, batch_first) for a in (x, y, gy))
    H = hidden_size
    _check_shapes(_OP_BW, x, w_ih, w_hh, None, None, h0, c0, H, mode, packed)
    X, rows = _rows_of(_OP_BW, xp, x, batch_sizes, h0, reverse)
    B = h0.shape[0]
    N = X.shape[0]
    k = 6 if mode == _LSTM else 4
    want = (k, N, H) if packed else (k, rows.T, B, H)
    if tuple(ws.shape) != want:
        raise OpError(
            f"{_OP_BW}: expected a workspace of shape {fmt_shape(want)} from mkldnn_rnn_layer, "
            f"but got {fmt_shape(ws.shape)}"
        )
    y, gy = _flat(xp, y, packed), _flat(xp, gy, packed)
    if not packed:
        ws = xp.reshape(ws, (k, N, H))
    with kit.quiet():
        into = _Into(kit)
        # the running state gradients: the final states', updated in place step by step
        dh = xp.zeros((B, H), dtype=X.dtype) if ghy is None else ghy + 0
        if mode == _GRU:
            gx, gw_ih, gw_hh, gb_ih, gb_hh = _gru_backward(
                xp, into, X, rows, w_ih, w_hh, h0, y, ws, gy, dh, has_biases
            )
            dc = xp.zeros_like(c0) if gcy is None else gcy  # cy is cx passed through
        else:
            dc = xp.zeros((B, H), dtype=X.dtype) if gcy is None else gcy + 0
            gx, gw_ih, gw_hh, gb_ih = _lstm_backward(
                xp, into, X, rows, w_ih, w_hh, h0, c0, y, ws, gy, dh, dc, has_biases
            )
            gb_hh = gb_ih  # both biases get the same gradient
        gx = _unflat(xp, gx, rows, packed, batch_first)
    wrap = kit.wrap
    return (
        wrap(gx, d, device), wrap(gw_ih, d, device), wrap(gw_hh, d, device),
        None if gb_ih is None else wrap(gb_ih, d, device),
        None if gb_hh is None else wrap(gb_hh, d, device),
        wrap(dh, d, device), wrap(dc, d, device),
    )  # fmt: skip


def _lstm_forward(
    xp: Any, into: _Into, X: Any, rows: _Rows, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
    h0: Any, c0: Any,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """The LSTM's loop: the output rows ``(N, H)``, the final states and the workspace ``(6,
    N, H)``, planes of the activated gates ``i, f, g, o``, ``c`` and ``tanh(c)``."""
    N, I = X.shape  # noqa: E741
    B, H = h0.shape
    # sigmoid(a) = 1 / (1 + exp(-a)) and tanh(a) = 2 sigmoid(2a) - 1: with the rows of i, f, o
    # scaled by -1 and g's by -2, one exp, add and reciprocal activate the four gates
    scale = xp.reshape(xp.asarray([-1.0, -1.0, -2.0, -1.0], dtype=X.dtype), (4, 1, 1))
    w_ih_s = xp.reshape(xp.reshape(w_ih, (4, H, I)) * scale, (4 * H, I))
    w_hh_t = xp.permute_dims(xp.reshape(xp.reshape(w_hh, (4, H, H)) * scale, (4 * H, H)), (1, 0))
    gx = xp.matmul(X, xp.permute_dims(w_ih_s, (1, 0)))  # the input's share, every step's
    if b_ih is not None:
        bias = xp.reshape(xp.reshape(b_ih + b_hh, (4, H, 1)) * scale, (4 * H,))
        into.add(gx, bias, out=gx)
    ws = xp.empty((6, N, H), dtype=X.dtype)
    y = xp.empty((N, H), dtype=X.dtype)
    hg = xp.empty((B, 4 * H), dtype=X.dtype)
    ig = xp.empty((B, H), dtype=X.dtype)
    for t in rows.order():
        r, n = rows.rows(t), rows.sizes[t]
        h, c = rows.prev(xp, y, h0, t), rows.prev(xp, ws[4, ...], c0, t)
        gates = gx[r, ...]
        into.add(gates, into.matmul(h, w_hh_t, out=hg[:n, ...]), out=gates)
        into.exp(gates, out=gates)
        into.add(gates, 1, out=gates)
        into.reciprocal(gates, out=gates)
        for k in range(4):  # into the planes: every later pass on contiguous rows
            ws[k, r, ...] = gates[:, k * H : (k + 1) * H]
        i, f, g, o, ct, tc = (ws[k, r, ...] for k in range(6))
        into.multiply(g, 2, out=g)
        into.subtract(g, 1, out=g)
        into.multiply(f, c, out=ct)
        into.add(ct, into.multiply(i, g, out=ig[:n, ...]), out=ct)
        into.tanh(ct, out=tc)
        into.multiply(o, tc, out=y[r, ...])
    return y, rows.last(xp, y, h0), rows.last(xp, ws[4, ...], c0), ws


def _lstm_backward(
    xp: Any, into: _Into, X: Any, rows: _Rows, w_ih: Any, w_hh: Any, h0: Any, c0: Any, y: Any,
    ws: Any, gy: Any, dh: Any, dc: Any, has_biases: bool,
) -> tuple[Any, Any, Any, Any]:  # fmt: skip
    """The LSTM's gradients ``(input, weight_ih, weight_hh, bias)``; ``dh`` and ``dc`` come in
    as the final states' gradients and leave as the initial states'."""
    N, H = y.shape
    dg = xp.empty((N, 4 * H), dtype=X.dtype)
    for t in reversed(rows.order()):
        r, n = rows.rows(t), rows.sizes[t]
        dhv, dcv = dh[:n, ...], dc[:n, ...]
        if gy is not None:
            into.add(dhv, gy[r, ...], out=dhv)
        i, f, g, o, _, tc = (ws[k, r, ...] for k in range(6))
        # the cell's backward (Note [Fused recurrent cells]) on the step's rows
        into.add(dcv, dhv * o * (1 - tc * tc), out=dcv)
        D = dg[r, ...]
        D[:, :H] = dcv * g * i * (1 - i)
        D[:, H : 2 * H] = dcv * rows.prev(xp, ws[4, ...], c0, t) * f * (1 - f)
        D[:, 2 * H : 3 * H] = dcv * i * (1 - g * g)
        D[:, 3 * H :] = dhv * tc * o * (1 - o)
        into.multiply(dcv, f, out=dcv)
        into.matmul(D, w_hh, out=dhv)
    dg_t = xp.permute_dims(dg, (1, 0))
    gw_ih = xp.matmul(dg_t, X)
    gw_hh = _weight_grad(xp, dg, y, h0, rows)
    gx = xp.matmul(dg, w_ih)
    return gx, gw_ih, gw_hh, (xp.sum(dg, axis=0) if has_biases else None)


def _weight_grad(xp: Any, dg: Any, y: Any, h0: Any, rows: _Rows) -> Any:
    """``dg^T @ h_prev`` over all rows (``weight_hh``'s gradient), ``h_prev`` the hidden state
    each step read; unpacked, as two products on the output's and ``h0``'s rows, without
    making ``h_prev``."""
    N, B = y.shape[0], h0.shape[0]
    if not rows.uniform or N == 0:
        return xp.matmul(xp.permute_dims(dg, (1, 0)), rows.prev_all(xp, y, h0))
    first, rest = (
        (dg[N - B :, ...], dg[: N - B, ...]) if rows.reverse else (dg[:B, ...], dg[B:, ...])
    )
    prev = y[B:, ...] if rows.reverse else y[: N - B, ...]
    g = xp.matmul(xp.permute_dims(first, (1, 0)), h0)
    return g + xp.matmul(xp.permute_dims(rest, (1, 0)), prev)


def _gru_forward(
    xp: Any, into: _Into, X: Any, rows: _Rows, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any,
    h0: Any,
) -> tuple[Any, Any, Any]:  # fmt: skip
    """The GRU's loop (Note [Fused recurrent cells]'s gates ``r, z, n``): the output rows, the
    final hidden state and the workspace ``(4, N, H)``, planes of ``r, z, n`` and ``h W_hn^T +
    b_hn``."""
    N = X.shape[0]
    B, H = h0.shape
    gx = xp.matmul(X, xp.permute_dims(w_ih, (1, 0)))
    if b_ih is not None:
        into.add(gx, b_ih, out=gx)
    w_hh_t = xp.permute_dims(w_hh, (1, 0))
    ws = xp.empty((4, N, H), dtype=X.dtype)
    y = xp.empty((N, H), dtype=X.dtype)
    hg_buf = xp.empty((B, 3 * H), dtype=X.dtype)
    rz_buf = xp.empty((B, 2 * H), dtype=X.dtype)
    for t in rows.order():
        r, n = rows.rows(t), rows.sizes[t]
        h = rows.prev(xp, y, h0, t)
        hg = into.matmul(h, w_hh_t, out=hg_buf[:n, ...])
        if b_hh is not None:
            into.add(hg, b_hh, out=hg)
        gi = gx[r, ...]
        # sigmoid(a) = 1 / (1 + exp(-a)) of r and z at once, on a contiguous block
        rz = into.subtract(0, gi[:, : 2 * H], out=rz_buf[:n, ...])
        into.subtract(rz, hg[:, : 2 * H], out=rz)
        into.exp(rz, out=rz)
        into.add(rz, 1, out=rz)
        into.reciprocal(rz, out=rz)
        rg, z, nn, hn = (ws[k, r, ...] for k in range(4))
        rg[...] = rz[:, :H]
        z[...] = rz[:, H:]
        hn[...] = hg[:, 2 * H :]
        into.multiply(rg, hn, out=nn)
        into.add(nn, gi[:, 2 * H :], out=nn)
        into.tanh(nn, out=nn)
        ht = y[r, ...]
        into.subtract(h, nn, out=ht)
        into.multiply(ht, z, out=ht)
        into.add(ht, nn, out=ht)
    return y, rows.last(xp, y, h0), ws


def _gru_backward(
    xp: Any, into: _Into, X: Any, rows: _Rows, w_ih: Any, w_hh: Any, h0: Any, y: Any, ws: Any,
    gy: Any, dh: Any, has_biases: bool,
) -> tuple[Any, ...]:  # fmt: skip
    """The GRU's gradients (the fused cell's backward, Note [Fused recurrent cells], step by
    step), the weights' over all steps at once: ``(input, weight_ih, weight_hh, bias_ih,
    bias_hh)``; ``dh`` comes in as the final state's gradient and leaves as the initial's."""
    N, H = y.shape
    h_prev = rows.prev_all(xp, y, h0)
    dgi = xp.empty((N, 3 * H), dtype=X.dtype)
    dgh = xp.empty((N, 3 * H), dtype=X.dtype)
    for t in reversed(rows.order()):
        r, n = rows.rows(t), rows.sizes[t]
        dhv = dh[:n, ...]
        if gy is not None:
            into.add(dhv, gy[r, ...], out=dhv)
        rg, z, nn, hn = (ws[k, r, ...] for k in range(4))
        grad_hx = dhv * z
        dn = (dhv - grad_hx) * (1 - nn * nn)
        dz = dhv * (h_prev[r, ...] - nn) * z * (1 - z)
        dr = dn * hn * rg * (1 - rg)
        di, dhg = dgi[r, ...], dgh[r, ...]
        di[:, :H] = dr
        di[:, H : 2 * H] = dz
        di[:, 2 * H :] = dn
        dhg[:, : 2 * H] = di[:, : 2 * H]
        into.multiply(dn, rg, out=dhg[:, 2 * H :])
        into.add(grad_hx, into.matmul(dhg, w_hh, out=dhv), out=dhv)
    gw_ih = xp.matmul(xp.permute_dims(dgi, (1, 0)), X)
    gw_hh = xp.matmul(xp.permute_dims(dgh, (1, 0)), h_prev)
    gx = xp.matmul(dgi, w_ih)
    gb_ih = xp.sum(dgi, axis=0) if has_biases else None
    gb_hh = xp.sum(dgh, axis=0) if has_biases else None
    return gx, gw_ih, gw_hh, gb_ih, gb_hh


KERNELS: dict[str, Kernel] = {_OP: rnn_layer, _OP_BW: rnn_layer_backward}


def build(kit: Kit) -> Kernels:
    return {name: bind(kit, fn) for name, fn in KERNELS.items()}
