"""Writes tests/nn/data/rnn.npz: outputs, final states and gradients of PyTorch's recurrent
layers and cells (nn.RNN / LSTM / GRU, RNNCell / LSTMCell / GRUCell) for fixed inputs and
weights, so tests/nn/test_rnn.py compares tensorplug with PyTorch where torch is not installed
(where it is, the test calls :func:`record` itself). Run with a Python that has torch::

    python tools/gen_rnn_fixtures.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "nn" / "data" / "rnn.npz"
I, H, T, B = 3, 4, 5, 3  # noqa: E741 (input size, as PyTorch names it)

# name -> (class, constructor options, input: "padded" | "packed" | "unbatched", given states)
CASES: dict[str, tuple[str, dict[str, Any], str, bool]] = {
    "lstm": ("LSTM", {}, "padded", False),
    "lstm_bi2": ("LSTM", {"num_layers": 2, "bidirectional": True}, "padded", True),
    "lstm_proj": ("LSTM", {"proj_size": 3, "num_layers": 2, "bidirectional": True}, "padded", True),
    "lstm_batch_first": ("LSTM", {"batch_first": True, "bias": False}, "padded", True),
    "lstm_packed": ("LSTM", {"bidirectional": True, "num_layers": 2}, "packed", True),
    "lstm_proj_packed": ("LSTM", {"proj_size": 2, "bidirectional": True}, "packed", False),
    "lstm_unbatched": ("LSTM", {"num_layers": 2}, "unbatched", True),
    "gru": ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}, "padded", True),
    "gru_packed": ("GRU", {"num_layers": 2, "bidirectional": True}, "packed", True),
    "gru_unbatched": ("GRU", {"bias": False}, "unbatched", False),
    "rnn_tanh": ("RNN", {"num_layers": 2}, "padded", True),
    "rnn_relu_packed": ("RNN", {"nonlinearity": "relu", "bidirectional": True}, "packed", False),
    "rnn_unbatched": ("RNN", {"bias": False, "bidirectional": True}, "unbatched", True),
}
CELLS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "rnn_cell": ("RNNCell", {}, True),
    "rnn_cell_relu": ("RNNCell", {"nonlinearity": "relu", "bias": False}, False),
    "lstm_cell": ("LSTMCell", {}, True),
    "lstm_cell_unbatched": ("LSTMCell", {}, False),
    "gru_cell": ("GRUCell", {}, True),
    "gru_cell_nobias": ("GRUCell", {"bias": False}, False),
}
LENGTHS = [4, 5, 2]  # unsorted: the layers sort them (enforce_sorted=False)


def record(name: str) -> dict[str, np.ndarray]:
    """The arrays of one case: ``state/<param>``, the inputs, ``out``, ``h_n`` (``c_n``) and
    ``grad/<x|h0|c0|param>`` of ``sum(out * g_out) + sum(h_n * g_h) (+ sum(c_n * g_c))``."""
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence

    torch.manual_seed(sum(map(ord, name)))
    rng = np.random.default_rng(sum(map(ord, name)))
    rec: dict[str, np.ndarray] = {}

    def arr(*shape: int) -> torch.Tensor:
        return torch.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)

    if name in CELLS:
        cls, kw, batched = CELLS[name]
        m = getattr(torch.nn, cls)(I, H, **kw)
        x = arr(B, I) if batched else arr(I)
        hs = [arr(*x.shape[:-1], H) for _ in range(2 if cls == "LSTMCell" else 1)]
        out = m(x, tuple(hs) if cls == "LSTMCell" else hs[0])
        outs = list(out) if isinstance(out, tuple) else [out]
        gs = [rng.standard_normal(o.shape).astype(np.float32) for o in outs]
        sum((o * torch.tensor(g)).sum() for o, g in zip(outs, gs, strict=True)).backward()
        rec.update(x=x, **{f"h{i}": h for i, h in enumerate(hs)})
        rec.update({f"out{i}": o for i, o in enumerate(outs)})
        rec.update({f"g{i}": g for i, g in enumerate(gs)})
        rec.update({"grad/x": x.grad, **{f"grad/h{i}": h.grad for i, h in enumerate(hs)}})
    else:
        cls, kw, kind, given = CASES[name]
        m = getattr(torch.nn, cls)(I, H, **kw)
        directions = 2 if kw.get("bidirectional") else 1
        layers = kw.get("num_layers", 1) * directions
        hsize = kw.get("proj_size") or H
        if kind == "unbatched":
            x = arr(T, I)
            state_shapes = [(layers, hsize), (layers, H)]
        else:
            x = arr(B, T, I) if kw.get("batch_first") else arr(T, B, I)
            state_shapes = [(layers, B, hsize), (layers, B, H)]
        states = [arr(*s) for s in state_shapes[: 2 if cls == "LSTM" else 1]] if given else []
        inp: Any = x
        if kind == "packed":
            inp = pack_padded_sequence(x, LENGTHS, enforce_sorted=False)
            rec["lengths"] = np.array(LENGTHS)
        hx = None if not given else (tuple(states) if cls == "LSTM" else states[0])
        out, hn = m(inp, hx)
        out_t = out.data if kind == "packed" else out
        finals = list(hn) if cls == "LSTM" else [hn]
        g_out = rng.standard_normal(out_t.shape).astype(np.float32)
        gs = [rng.standard_normal(f.shape).astype(np.float32) for f in finals]
        loss = (out_t * torch.tensor(g_out)).sum()
        loss = loss + sum((f * torch.tensor(g)).sum() for f, g in zip(finals, gs, strict=True))
        loss.backward()
        rec.update(x=x, out=out_t, g_out=g_out, h_n=finals[0], g_h=gs[0], **{"grad/x": x.grad})
        if cls == "LSTM":
            rec.update(c_n=finals[1], g_c=gs[1])
        for i, s in enumerate(states):
            rec[f"h{i}"] = s
            rec[f"grad/h{i}"] = s.grad
    for k, v in m.state_dict().items():
        rec[f"state/{k}"] = v
        rec[f"grad/{k}"] = dict(m.named_parameters())[k].grad
    rec["keys"] = np.array(list(m.state_dict()))
    rec["repr"] = np.array(repr(m))
    return {k: v.detach().numpy() if isinstance(v, torch.Tensor) else v for k, v in rec.items()}


def main() -> None:
    import torch

    torch.set_num_threads(1)
    out: dict[str, np.ndarray] = {}
    for name in [*CASES, *CELLS]:
        for k, v in record(name).items():
            out[f"{name}/{k}"] = v
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(out)} arrays)")


if __name__ == "__main__":
    main()
