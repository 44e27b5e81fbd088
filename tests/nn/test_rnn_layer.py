"""The fused LSTM and GRU layer ``mkldnn_rnn_layer`` (Note [Fused recurrent layer] in
array_backend/_nn/_rnn_layer.py): ``nn.LSTM`` and ``nn.GRU`` run through it and agree with a
loop of ``nn.LSTMCell`` / ``nn.GRUCell`` steps, values and gradients; gradcheck and gradgradcheck in float64; vmap folds
samples into the batch (or loops when the weights are batched); Meta; tp.compile keeps it in
one graph."""

from __future__ import annotations

from typing import Any

import pytest

import tensorplug as tp
from tensorplug.ops import ops

T, B, I, H = 4, 2, 3, 5  # noqa: E741


def _layer(
    x: Any, *w: Any, reverse: bool = False, bias: bool = True, bf: bool = False, hidden: int = H
) -> Any:
    out, hy, cy, _ = ops.aten.mkldnn_rnn_layer.default(
        x, *w[:4], w[4], w[5], reverse, [], 2, hidden, 1, bias, False, bf, True
    )
    return out, hy, cy


def _args(
    dtype: Any = tp.float64, bf: bool = False, sizes: tuple[int, ...] = (T, B, I, H)
) -> list[Any]:
    t, b, i, h = sizes
    shapes = [(b, t, i) if bf else (t, b, i), (4 * h, i), (4 * h, h), (4 * h,), (4 * h,)]
    shapes += [(b, h), (b, h)]
    return [tp.randn(*s, dtype=dtype, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
def test_gradcheck_and_gradgradcheck(reverse: bool) -> None:
    tp.manual_seed(0)
    assert tp.autograd.gradcheck(lambda *a: _layer(*a, reverse=reverse), _args())
    # double backward (the recorded formula) on a small layer: its check is quadratic
    small = _args(sizes=(2, 2, 1, 1))
    assert tp.autograd.gradgradcheck(lambda *a: _layer(*a, reverse=reverse, hidden=1), small)


def test_gradcheck_batch_first_and_without_biases() -> None:
    tp.manual_seed(1)
    args = _args(bf=True)
    assert tp.autograd.gradcheck(lambda *a: _layer(*a, bf=True), args)
    nb = [a for k, a in enumerate(_args()) if k not in (3, 4)]

    def no_bias(x: Any, wi: Any, wh: Any, h: Any, c: Any) -> Any:
        e = x.new_empty([0])
        return _layer(x, wi, wh, e, e, h, c, bias=False)

    assert tp.autograd.gradcheck(no_bias, nb)


def _cell_loop(lstm: Any, x: Any, h: Any, c: Any, suffix: str) -> tuple[Any, Any, Any]:
    cell = tp.nn.LSTMCell(I, H, bias=lstm.bias)
    with tp.no_grad():
        for name in ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if lstm.bias else ()):
            getattr(cell, name).copy_(getattr(lstm, f"{name}_{suffix}"))
    steps = range(T - 1, -1, -1) if suffix.endswith("reverse") else range(T)
    outs: list[Any] = [None] * T
    for t in steps:
        h, c = cell(x[t], (h, c))
        outs[t] = h
    return tp.stack(outs), h, c, cell


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_agrees_with_a_loop_of_cells(bias: bool) -> None:
    tp.manual_seed(2)
    lstm = tp.nn.LSTM(I, H, bias=bias, bidirectional=True)
    x = tp.randn(T, B, I, requires_grad=True)
    h0, c0 = tp.randn(2, B, H), tp.randn(2, B, H)
    out, (hn, cn) = lstm(x, (h0, c0))
    for d, sfx in enumerate(("l0", "l0_reverse")):
        ref, h, c, cell = _cell_loop(lstm, x, h0[d], c0[d], sfx)
        assert tp.allclose(out[..., d * H : (d + 1) * H], ref, atol=1e-6)
        assert tp.allclose(hn[d], h, atol=1e-6) and tp.allclose(cn[d], c, atol=1e-6)
        # the gradients of the weights and the input, from one direction's loss
        g_layer = tp.autograd.grad(
            (out[..., d * H : (d + 1) * H] ** 2).sum() + cn[d].sum(),
            [x, getattr(lstm, f"weight_hh_{sfx}"), getattr(lstm, f"weight_ih_{sfx}")],
            retain_graph=True,
        )
        g_cells = tp.autograd.grad((ref**2).sum() + c.sum(), [x, cell.weight_hh, cell.weight_ih])
        for a, b in zip(g_layer, g_cells, strict=True):
            assert tp.allclose(a, b, atol=1e-5)


def test_autograd_records_one_node_per_layer() -> None:
    lstm = tp.nn.LSTM(I, H)
    out, _ = lstm(tp.randn(T, B, I))
    assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"


def test_vmap_folds_samples_or_loops_over_batched_weights() -> None:
    tp.manual_seed(3)
    lstm = tp.nn.LSTM(I, H, batch_first=True)
    xs = tp.randn(3, B, T, I)
    got = tp.vmap(lambda x: lstm(x)[0])(xs)
    assert tp.allclose(got, tp.stack([lstm(x)[0] for x in xs]), atol=1e-6)
    params = {k: v.detach() for k, v in lstm.named_parameters()}

    def loss(p: Any, x: Any) -> Any:
        return (tp.func.functional_call(lstm, p, (x,))[0] ** 2).sum()

    per_sample = tp.vmap(tp.func.grad(loss), in_dims=(None, 0))(params, xs)
    for k in params:
        ref = tp.stack([tp.func.grad(loss)(params, x)[k] for x in xs])
        assert tp.allclose(per_sample[k], ref, atol=1e-5), k
    stacked = {k: tp.stack([v, v * 0.5, v * 2]) for k, v in params.items()}
    got = tp.vmap(lambda p, x: tp.func.functional_call(lstm, p, (x,))[0])(stacked, xs)
    ref = [
        tp.func.functional_call(lstm, {k: v[i] for k, v in stacked.items()}, (xs[i],))[0]
        for i in range(3)
    ]
    assert tp.allclose(got, tp.stack(ref), atol=1e-6)


def test_meta_shapes() -> None:
    args = [a.detach().to("meta") for a in _args(tp.float32)]
    out, hy, cy, ws = ops.aten.mkldnn_rnn_layer.default(
        *args, False, [], 2, H, 1, True, False, False, True
    )
    assert (out.shape, hy.shape, cy.shape, ws.shape) == ((T, B, H), (B, H), (B, H), (6, T, B, H))


def test_refuses_other_modes_and_bad_batch_sizes() -> None:
    args = [a.detach() for a in _args(tp.float32)]
    with pytest.raises(RuntimeError, match=r"mkldnn_rnn_layer.*only the LSTM .* and the GRU"):
        ops.aten.mkldnn_rnn_layer.default(*args, False, [], 1, H, 1, True, False, False, True)
    packed = [args[0].reshape(T * B, I), *args[1:]]
    for sizes in ([2, 2], [1, 2, 2, 2, 1], [3, 2, 2, 1], [2, 2, 2, 2, 0]):  # sum T * B = 8
        with pytest.raises(RuntimeError, match=r"mkldnn_rnn_layer.*batch_sizes.*non-increasing"):
            ops.aten.mkldnn_rnn_layer.default(
                *packed, False, sizes, 2, H, 1, True, False, False, True
            )


def test_compiled_lstm_is_one_graph_with_the_layer() -> None:
    tp.manual_seed(4)
    lstm = tp.nn.LSTM(I, H, num_layers=2)
    x = tp.randn(T, B, I)

    def step(x: Any) -> Any:
        out, _ = lstm(x)
        loss = (out**2).sum()
        loss.backward()
        return loss

    compiled = tp.compile(step, fullgraph=True)
    want = step(x)
    for _ in range(3):
        got = compiled(x)
    assert tp.allclose(got, want, atol=1e-6)
    assert len(compiled.graphs) == 1


# --- the GRU (mode 3) ---------------------------------------------------------------------------


def _gru(x: Any, *w: Any, reverse: bool = False, hidden: int = H) -> Any:
    out, hy, _, _ = ops.aten.mkldnn_rnn_layer.default(
        x, *w[:4], w[4], w[4], reverse, [], 3, hidden, 1, True, False, False, True
    )
    return out, hy


def _gru_args(sizes: tuple[int, ...] = (T, B, I, H)) -> list[Any]:
    t, b, i, h = sizes
    shapes = [(t, b, i), (3 * h, i), (3 * h, h), (3 * h,), (3 * h,), (b, h)]
    return [tp.randn(*s, dtype=tp.float64, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
def test_gru_gradcheck_and_gradgradcheck(reverse: bool) -> None:
    tp.manual_seed(5)
    assert tp.autograd.gradcheck(lambda *a: _gru(*a, reverse=reverse), _gru_args())
    small = _gru_args((2, 2, 1, 1))
    assert tp.autograd.gradgradcheck(lambda *a: _gru(*a, reverse=reverse, hidden=1), small)


def test_gru_agrees_with_a_loop_of_cells() -> None:
    tp.manual_seed(6)
    gru = tp.nn.GRU(I, H, bidirectional=True, batch_first=True)
    x = tp.randn(B, T, I, requires_grad=True)
    h0 = tp.randn(2, B, H)
    out, hn = gru(x, h0)
    assert out.grad_fn.name() == "TransposeBackward0"  # of the layer's time-major output
    for d, sfx in enumerate(("l0", "l0_reverse")):
        cell = tp.nn.GRUCell(I, H)
        with tp.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(cell, name).copy_(getattr(gru, f"{name}_{sfx}"))
        h, outs = h0[d], [None] * T
        for t in range(T - 1, -1, -1) if d else range(T):
            h = cell(x[:, t], h)
            outs[t] = h
        ref = tp.stack(outs, 1)
        assert tp.allclose(out[..., d * H : (d + 1) * H], ref, atol=1e-6)
        assert tp.allclose(hn[d], h, atol=1e-6)
        got = tp.autograd.grad(
            (out[..., d * H : (d + 1) * H] ** 2).sum() + hn[d].sum(),
            [x, getattr(gru, f"weight_hh_{sfx}"), getattr(gru, f"bias_hh_{sfx}")],
            retain_graph=True,
        )
        want = tp.autograd.grad((ref**2).sum() + h.sum(), [x, cell.weight_hh, cell.bias_hh])
        for a, b in zip(got, want, strict=True):
            assert tp.allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_forward_mode_matches_finite_differences(cls: str) -> None:
    tp.manual_seed(7)
    m = getattr(tp.nn, cls)(I, H).double()
    x, t = tp.randn(T, B, I, dtype=tp.float64), tp.randn(T, B, I, dtype=tp.float64)

    def f(x: Any) -> Any:
        return m(x)[0]

    _, jv = tp.func.jvp(f, (x,), (t,))
    numeric = (f(x + 1e-6 * t) - f(x - 1e-6 * t)) / 2e-6
    assert tp.allclose(jv, numeric, atol=1e-8)


# --- packed input (batch sizes per step) --------------------------------------------------------

SIZES = [3, 3, 2, 1]  # sequences of lengths 4, 3, 2 (sorted longest first, as packing sorts)


def _packed(mode: int, reverse: bool, hidden: int = H, sizes: list[int] = SIZES) -> Any:
    def f(x: Any, wi: Any, wh: Any, bi: Any, bh: Any, h: Any, *c: Any) -> Any:
        out, hy, cy, _ = ops.aten.mkldnn_rnn_layer.default(
            x, wi, wh, bi, bh, h, c[0] if c else h, reverse, sizes, mode, hidden, 1, True,
            False, False, True,
        )  # fmt: skip
        return (out, hy, cy) if c else (out, hy)

    return f


def _packed_args(mode: int, sizes: list[int] = SIZES, i: int = I, h: int = H) -> list[Any]:
    g = 4 if mode == 2 else 3
    b = sizes[0]
    shapes = [(sum(sizes), i), (g * h, i), (g * h, h), (g * h,), (g * h,), (b, h)]
    shapes += [(b, h)] if mode == 2 else []
    return [tp.randn(*s, dtype=tp.float64, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("mode", [2, 3])
def test_packed_gradcheck_and_gradgradcheck(mode: int, reverse: bool) -> None:
    tp.manual_seed(8)
    assert tp.autograd.gradcheck(_packed(mode, reverse), _packed_args(mode))
    small = [2, 1]
    args = _packed_args(mode, small, 1, 1)
    assert tp.autograd.gradgradcheck(_packed(mode, reverse, 1, small), args)


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_packed_layers_run_the_fused_layer_and_agree_with_each_sequence_alone(cls: str) -> None:
    """The packed layer against the same layer on each sequence alone (unpacked, batch 1),
    values and gradients; its output's node is the fused layer's."""
    tp.manual_seed(9)
    m = getattr(tp.nn, cls)(I, H, num_layers=2, bidirectional=True)
    lengths = [2, 4, 3]
    seqs = [tp.randn(n, I, requires_grad=True) for n in lengths]
    packed = tp.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    out, state = m(packed)
    assert out.data.grad_fn.name() == "CatBackward0"  # the directions' outputs joined
    assert out.data.grad_fn.next_functions[0][0].name() == "MkldnnRnnLayerBackward0"
    padded, _ = tp.nn.utils.rnn.pad_packed_sequence(out)
    hn = state[0] if cls == "LSTM" else state
    loss = (padded**2).sum() + hn.sum()
    got = tp.autograd.grad(loss, [*seqs, m.weight_hh_l0, m.weight_ih_l1_reverse])
    ref_loss: Any = 0
    for b, x in enumerate(seqs):
        o, st = m(x.unsqueeze(1))
        h = st[0] if cls == "LSTM" else st
        assert tp.allclose(padded[: lengths[b], b], o[:, 0], atol=1e-6)
        assert tp.allclose(padded[lengths[b] :, b], tp.zeros(1), atol=0)
        assert tp.allclose(hn[:, b], h[:, 0], atol=1e-6)
        if cls == "LSTM":
            assert tp.allclose(state[1][:, b], st[1][:, 0], atol=1e-6)
        ref_loss = ref_loss + (o**2).sum() + h.sum()
    want = tp.autograd.grad(ref_loss, [*seqs, m.weight_hh_l0, m.weight_ih_l1_reverse])
    for a, w in zip(got, want, strict=True):
        assert tp.allclose(a, w, atol=1e-5)


def test_vmap_over_packed_input_loops() -> None:
    tp.manual_seed(10)
    f = _packed(2, False)
    args = [a.detach().float() for a in _packed_args(2)]
    xs = tp.randn(3, *args[0].shape)
    got = tp.vmap(lambda x: f(x, *args[1:])[1])(xs)
    assert tp.allclose(got, tp.stack([f(x, *args[1:])[1] for x in xs]), atol=1e-6)


def test_packed_meta_shapes() -> None:
    args = [a.detach().float().to("meta") for a in _packed_args(2)]
    out, hy, cy, ws = ops.aten.mkldnn_rnn_layer.default(
        *args, True, SIZES, 2, H, 1, True, False, False, True
    )
    n = sum(SIZES)
    assert (out.shape, hy.shape, cy.shape, ws.shape) == ((n, H), (3, H), (3, H), (6, n, H))
