"""The recurrent layers and cells and ``nn.utils.rnn`` against PyTorch 2.13: its values recorded
by tools/gen_rnn_fixtures.py (data/rnn.npz) from PyTorch's ``state_dict`` loaded here, and
PyTorch itself where it is installed; the packing functions; their errors."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from needs import autograd

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn.utils import rnn as R
from tests.tool_scripts import load_tool

autograd()

gen = load_tool("gen_rnn_fixtures")
DATA = np.load(Path(__file__).parent / "data" / "rnn.npz")


def _fixture(name: str) -> dict[str, np.ndarray]:
    return {k[len(name) + 1 :]: DATA[k] for k in DATA.files if k.startswith(name + "/")}


def _close(got: Any, want: np.ndarray, tol: float = 1e-5) -> None:
    assert got is not None
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=tol, atol=tol)


def _module(name: str, r: dict[str, np.ndarray]) -> nn.Module:
    cls, kw = (gen.CELLS[name][:2]) if name in gen.CELLS else gen.CASES[name][:2]
    m = getattr(nn, cls)(gen.I, gen.H, **kw)
    state = {k[6:]: tp.tensor(v) for k, v in r.items() if k.startswith("state/")}
    assert list(m.state_dict()) == list(r["keys"])  # PyTorch's names, in its order
    assert repr(m) == str(r["repr"])
    m.load_state_dict(state)
    return m


def _check(name: str, r: dict[str, np.ndarray]) -> None:
    m = _module(name, r)
    x = tp.tensor(r["x"], requires_grad=True)
    hs = [tp.tensor(r[f"h{i}"], requires_grad=True) for i in range(2) if f"h{i}" in r]
    if name in gen.CELLS:
        out = m(x, tuple(hs) if isinstance(m, nn.LSTMCell) else hs[0])
        outs = list(out) if isinstance(out, tuple) else [out]
        for i, o in enumerate(outs):
            _close(o, r[f"out{i}"])
        loss = sum((o * tp.tensor(r[f"g{i}"])).sum() for i, o in enumerate(outs))
    else:
        lstm = isinstance(m, nn.LSTM)
        inp: Any = x
        if "lengths" in r:
            inp = R.pack_padded_sequence(x, r["lengths"].tolist(), enforce_sorted=False)
        hx = (tuple(hs) if lstm else hs[0]) if hs else None
        out, hn = m(inp, hx)
        if "lengths" in r:
            assert isinstance(out, R.PackedSequence)
            out = out.data
        finals = list(hn) if lstm else [hn]
        _close(out, r["out"])
        _close(finals[0], r["h_n"])
        loss = (out * tp.tensor(r["g_out"])).sum() + (finals[0] * tp.tensor(r["g_h"])).sum()
        if lstm:
            _close(finals[1], r["c_n"])
            loss = loss + (finals[1] * tp.tensor(r["g_c"])).sum()
    loss.backward()
    _close(x.grad, r["grad/x"])
    for i, h in enumerate(hs):
        _close(h.grad, r[f"grad/h{i}"])
    for k, p in m.named_parameters():
        _close(p.grad, r[f"grad/{k}"])


NAMES = [*gen.CASES, *gen.CELLS]


@pytest.mark.parametrize("name", NAMES)
def test_matches_pytorchs_recorded_values(name: str) -> None:
    _check(name, _fixture(name))


@pytest.mark.parametrize("name", ["lstm_packed", "gru", "lstm_cell"])
def test_matches_pytorch_live(name: str) -> None:
    pytest.importorskip("torch")
    _check(name, gen.record(name))


# --- construction ---------------------------------------------------------------------------


def test_defaults_init_and_weights() -> None:
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    assert m.all_weights[1][0] is m.weight_ih_l0_reverse
    assert [p.shape for p in m.all_weights[2]] == [(16, 4), (16, 2), (16,), (16,), (2, 4)]
    assert m._flat_weights_names[:5] == [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"
    ]  # fmt: skip
    assert all(float(p.abs().max()) <= 0.5 for p in m.parameters())  # U(-1/sqrt(4), 1/sqrt(4))
    m.flatten_parameters()
    assert nn.GRU(2, 3).weight_hh_l0.shape == (9, 3) and nn.RNN(2, 3).weight_ih_l0.shape == (3, 2)
    assert repr(nn.GRUCell(2, 3, bias=False)) == "GRUCell(2, 3, bias=False)"
    assert repr(nn.RNNCell(2, 3, nonlinearity="relu")) == "RNNCell(2, 3, nonlinearity=relu)"
    # positional arguments in PyTorch's order (RNN's fourth is nonlinearity)
    assert nn.RNN(2, 3, 1, "relu").nonlinearity == "relu"


@pytest.mark.parametrize(
    ("make", "exc", "msg"),
    [
        (lambda: nn.LSTM(3, 4, dropout=1.5), ValueError, "dropout should be a number in range"),
        (lambda: nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller than"),
        (lambda: nn.LSTM(3, 4, proj_size=-1), ValueError, "proj_size should be a positive"),
        (lambda: nn.GRU(3, 4, proj_size=2), ValueError, "only supported for LSTM"),
        (lambda: nn.RNN(3, 4, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
        (lambda: nn.LSTM(3, 0), ValueError, "hidden_size must be greater than zero"),
        (lambda: nn.LSTM(3, 4.0), TypeError, "hidden_size should be of type int, got: float"),
        (lambda: nn.LSTM(3, 4, num_layers=0), ValueError, "num_layers must be greater than"),
    ],
)
def test_constructor_errors(make: Any, exc: type, msg: str) -> None:
    with pytest.raises(exc, match=msg):
        make()


def test_dropout_on_one_layer_warns_and_acts_between_layers_only_in_training() -> None:
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)
    tp.manual_seed(0)
    m = nn.LSTM(3, 4, num_layers=2, dropout=0.9)
    x = tp.randn(5, 2, 3)
    a, b = m(x)[0], m(x)[0]
    assert not tp.allclose(a, b)  # dropout draws anew each call in training
    m.eval()
    assert tp.equal(m(x)[0], m(x)[0])


# --- forward errors (PyTorch's messages) ------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "exc", "msg"),
    [
        (lambda m: m(tp.randn(5)), ValueError, "LSTM: Expected input to be 2D or 3D, got 1D"),
        (lambda m: m(tp.randn(5, 2, 4)), RuntimeError, "input.size\\(-1\\) must be equal to "
         "input_size. Expected 3, got 4"),
        (lambda m: m(tp.randn(5, 2, 3, dtype=tp.float64)), ValueError,
         "RNN input dtype \\(tensorplug.float64\\) does not match weight dtype"),
        (lambda m: m(tp.randn(5, 2, 3), (tp.zeros(1, 3, 4), tp.zeros(1, 2, 4))), RuntimeError,
         "Expected hidden\\[0\\] size \\(1, 2, 4\\), got \\[1, 3, 4\\]"),
        (lambda m: m(tp.randn(5, 2, 3), (tp.zeros(1, 2, 4), tp.zeros(1, 2, 5))), RuntimeError,
         "Expected hidden\\[1\\] size \\(1, 2, 4\\), got \\[1, 2, 5\\]"),
        (lambda m: m(tp.randn(5, 2, 3), (tp.zeros(2, 4), tp.zeros(2, 4))), RuntimeError,
         "For batched 3-D input, hx and cx should also be 3-D but got \\(2-D, 2-D\\) tensors"),
        (lambda m: m(tp.randn(5, 3), (tp.zeros(1, 1, 4), tp.zeros(1, 1, 4))), RuntimeError,
         "For unbatched 2-D input, hx and cx should also be 2-D"),
    ],
)  # fmt: skip
def test_lstm_forward_errors(call: Any, exc: type, msg: str) -> None:
    with pytest.raises(exc, match=msg):
        call(nn.LSTM(3, 4))


def test_gru_rnn_and_cell_forward_errors() -> None:
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 4\\), got \\[1, 3, 4\\]"):
        nn.GRU(3, 4)(tp.randn(5, 2, 3), tp.zeros(1, 3, 4))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D"):
        nn.RNN(3, 4)(tp.randn(5, 2, 3), tp.zeros(2, 4))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D tensor"):
        nn.RNN(3, 4)(tp.randn(5, 2, 3, 1))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D"):
        nn.GRUCell(3, 4)(tp.randn(1, 2, 3))
    with pytest.raises(ValueError, match="LSTMCell: Expected hx\\[1\\] to be 1D or 2D, got 3D"):
        nn.LSTMCell(3, 4)(tp.randn(2, 3), (tp.zeros(2, 4), tp.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 2 expected 3"):
        nn.RNNCell(3, 4)(tp.randn(2, 2))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        nn.GRUCell(3, 4)(tp.randn(2, 3), tp.zeros(3, 4))


def test_default_states_are_zeros() -> None:
    m = nn.LSTM(3, 4, proj_size=2, num_layers=2)
    x = tp.randn(5, 2, 3)
    zeros = (tp.zeros(2, 2, 2), tp.zeros(2, 2, 4))
    assert tp.equal(m(x)[0], m(x, zeros)[0])


# --- nn.utils.rnn ------------------------------------------------------------------------------


def test_pack_and_pad_round_trip() -> None:
    seqs = [tp.arange(n * 2.0).reshape(n, 2) + 10 * i for i, n in enumerate([2, 4, 1])]
    padded = R.pad_sequence(seqs)
    assert padded.shape == (4, 3, 2)
    assert R.pad_sequence(seqs, batch_first=True, padding_value=-1.0)[0, 3, 0].item() == -1.0
    left = R.pad_sequence(seqs, batch_first=True, padding_side="left")
    assert tp.equal(left[0, 2:], seqs[0])
    p = R.pack_sequence(seqs, enforce_sorted=False)
    assert p.batch_sizes.tolist() == [3, 2, 1, 1]
    assert p.sorted_indices.tolist() == [1, 0, 2] and p.unsorted_indices.tolist() == [1, 0, 2]
    # the packed data: step 0 of sequences 1, 0, 2, step 1 of 1, 0, ...
    assert p.data[:, 0].tolist() == [10.0, 0.0, 20.0, 12.0, 2.0, 14.0, 16.0]
    out, lengths = R.pad_packed_sequence(p, batch_first=True, padding_value=-2.0, total_length=5)
    assert out.shape == (3, 5, 2) and lengths.tolist() == [2, 4, 1]
    assert out[2, 1, 0].item() == -2.0
    for a, b in zip(R.unpack_sequence(p), seqs, strict=True):
        assert tp.equal(a, b)
    for a, b in zip(R.unpad_sequence(padded, [2, 4, 1]), seqs, strict=True):
        assert tp.equal(a, b)


def test_packing_is_differentiable() -> None:
    x = tp.randn(4, 2, 3, requires_grad=True)
    p = R.pack_padded_sequence(x, [4, 2])
    out, _ = R.pad_packed_sequence(p)
    out.sum().backward()
    assert x.grad[:, 0].sum().item() == 12.0 and x.grad[2:, 1].abs().sum().item() == 0.0


@pytest.mark.parametrize(
    ("call", "exc", "msg"),
    [
        (lambda: R.pack_padded_sequence(tp.zeros(3, 2, 1), [1, 2]), RuntimeError,
         "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"),
        (lambda: R.pack_padded_sequence(tp.zeros(3, 2, 1), [2, 0]), RuntimeError,
         "Length of all samples has to be greater than 0"),
        (lambda: R.pack_padded_sequence(tp.zeros(3, 2, 1), [2, 1, 1]), RuntimeError,
         "Expected `len\\(lengths\\)` to be equal to batch_size, but got 3 \\(batch_size=2\\)"),
        (lambda: R.pad_sequence([tp.zeros(2)], padding_side="x"), RuntimeError,
         "Expected padding_side to be one of left or right, but got x."),
        (lambda: R.pad_packed_sequence(R.pack_sequence([tp.zeros(3)]), total_length=2),
         ValueError, "Expected total_length to be at least the length of the longest sequence"),
    ],
)  # fmt: skip
def test_packing_errors(call: Any, exc: type, msg: str) -> None:
    with pytest.raises(exc, match=msg):
        call()


def test_layers_take_sorted_packed_input_and_return_packed() -> None:
    m = nn.GRU(2, 3, bidirectional=True)
    seqs = [tp.randn(n, 2) for n in (4, 3, 1)]
    out, h = m(R.pack_sequence(seqs))
    assert isinstance(out, R.PackedSequence) and out.sorted_indices is None
    for s, o, k in zip(seqs, R.unpack_sequence(out), range(3), strict=True):
        alone, h_alone = m(s)  # each sequence alone, unbatched
        np.testing.assert_allclose(o.detach().numpy(), alone.detach().numpy(), atol=1e-6)
        np.testing.assert_allclose(h[:, k].detach().numpy(), h_alone.detach().numpy(), atol=1e-6)


def test_no_warning_on_a_plain_forward() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(2, 3, batch_first=True)(tp.randn(2, 4, 2))
