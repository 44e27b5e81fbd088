"""An LSTM classifier's training step against torch eager, in one process, one thread each
(issue 30): batch 32, 32 time steps, 32 input features, hidden 128, 10 classes, Adam. torch
runs its fused C++ LSTM; tensorplug runs the layer as one ``mkldnn_rnn_layer`` whose kernel
loops over the steps (Note [Fused recurrent layer] in array_backend/_nn/_rnn_layer.py), eagerly
and under ``tp.compile``. The floor: a hand-written numpy LSTM forward + backward of the same
sizes (the layer alone, with no head, loss or optimizer), what a Python time loop over numpy
costs at least. Times are CPU time (``time.process_time``).

Goal: at most 1.0x torch eager. Run: ``python bench/rnn.py``; ``--gru``: the same classifier
with a GRU (no floor); ``--forms``: the other forms of the layers (packed sequences of varying
lengths, bidirectional, two layers with dropout, ``proj_size``), each a forward and backward of
the layer alone (the sum of its squared outputs), tensorplug eager against torch eager.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402

import tensorplug as tp  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None

B, T, I, H, C = 32, 32, 32, 128, 10  # noqa: E741


GRU = "--gru" in sys.argv


def classifier(lib: Any) -> Any:
    nn = lib.nn

    class LSTMClassifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = (nn.GRU if GRU else nn.LSTM)(I, H, batch_first=True)
            self.head = nn.Linear(H, C)

        def forward(self, x: Any) -> Any:
            _, state = self.lstm(x)
            return self.head((state if GRU else state[0])[-1])

    return LSTMClassifier()


def train_step(lib: Any, model: Any, x: Any, y: Any) -> Any:
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def step() -> Any:
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def numpy_lstm(x: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b: np.ndarray) -> Any:
    """Forward and backward of one LSTM layer over (T, B, I), the gradient of sum(h_T)."""

    def sig(a: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-a))

    def step() -> None:
        gx = x @ w_ih.T + b  # every step's input product at once
        h = np.zeros((B, H), np.float32)
        c = np.zeros((B, H), np.float32)
        saved = []
        for t in range(T):
            g = gx[t] + h @ w_hh.T
            i, f, gg, o = (
                sig(g[:, :H]),
                sig(g[:, H : 2 * H]),
                np.tanh(g[:, 2 * H : 3 * H]),
                sig(g[:, 3 * H :]),
            )
            c_prev, h_prev = c, h
            c = f * c + i * gg
            tc = np.tanh(c)
            h = o * tc
            saved.append((i, f, gg, o, c_prev, tc, h_prev))
        dh = np.ones((B, H), np.float32)
        dc = np.zeros((B, H), np.float32)
        dw_hh = np.zeros_like(w_hh)
        dgates = np.empty((T, B, 4 * H), np.float32)
        for t in range(T - 1, -1, -1):
            i, f, gg, o, c_prev, tc, h_prev = saved[t]
            dc = dc + dh * o * (1 - tc * tc)
            d = dgates[t]
            d[:, :H] = dc * gg * i * (1 - i)
            d[:, H : 2 * H] = dc * c_prev * f * (1 - f)
            d[:, 2 * H : 3 * H] = dc * i * (1 - gg * gg)
            d[:, 3 * H :] = dh * tc * o * (1 - o)
            dc = dc * f
            dw_hh += d.T @ h_prev
            dh = d @ w_hh
        flat = dgates.reshape(T * B, 4 * H)
        _ = flat.T @ x.reshape(T * B, I), flat.sum(0), (flat @ w_ih).reshape(T, B, I)

    return step


FORMS: dict[str, tuple[str, dict[str, Any], bool]] = {  # name: (class, options, packed input)
    "LSTM packed": ("LSTM", {}, True),
    "GRU packed": ("GRU", {}, True),
    "LSTM bidirectional": ("LSTM", {"bidirectional": True}, False),
    "LSTM 2 layers, dropout": ("LSTM", {"num_layers": 2, "dropout": 0.1}, False),
    "GRU bidirectional packed": ("GRU", {"bidirectional": True}, True),
    "LSTM proj_size 64": ("LSTM", {"proj_size": 64}, False),
}


def form_step(lib: Any, name: str, x: np.ndarray, lengths: list[int]) -> Any:
    cls, kw, packed = FORMS[name]
    layer = getattr(lib.nn, cls)(I, H, batch_first=True, **kw)
    inp: Any = lib.tensor(x)
    if packed:
        inp = lib.nn.utils.rnn.pack_padded_sequence(
            inp, lib.tensor(lengths), batch_first=True, enforce_sorted=False
        )

    def step() -> Any:
        out, _ = layer(inp)
        loss = ((out.data if packed else out) ** 2).sum()
        loss.backward()
        return loss

    return step


def forms() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, T, I), dtype=np.float32)
    lengths = [int(n) for n in rng.integers(T // 2, T + 1, B)]
    print(f"layer forward + backward (batch {B}, T {T}, input {I}, hidden {H}; packed lengths "
          f"{T // 2}-{T})")  # fmt: skip
    for name in FORMS:
        tp.manual_seed(0)
        fns = {"tensorplug": form_step(tp, name, x, lengths)}
        if torch is not None:
            fns["torch"] = form_step(torch, name, x, lengths)
        best = interleaved(fns, number=3, rounds=7, timer=time.process_time)
        ratio = f"  {best['tensorplug'] / best['torch']:.2f}x torch" if "torch" in best else ""
        print(f"  {name:26s} {best['tensorplug'] * 1e3:8.2f} ms{ratio}")


def main() -> None:
    if "--forms" in sys.argv:
        forms()
        return
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, T, I), dtype=np.float32)
    y = rng.integers(0, C, B)
    tp.manual_seed(0)
    model = classifier(tp)
    fns = {"tensorplug": train_step(tp, model, tp.tensor(x), tp.tensor(y))}
    cmodel = classifier(tp)
    fns["tp.compile"] = tp.compile(train_step(tp, cmodel, tp.tensor(x), tp.tensor(y)))
    if torch is not None:
        tmodel = classifier(torch)
        fns["torch"] = train_step(torch, tmodel, torch.tensor(x), torch.tensor(y))
    s = 1 / np.sqrt(H)
    w_ih, w_hh = (rng.uniform(-s, s, (4 * H, n)).astype(np.float32) for n in (I, H))
    b = rng.uniform(-s, s, 4 * H).astype(np.float32)
    if not GRU:
        fns["numpy floor"] = numpy_lstm(np.ascontiguousarray(x.transpose(1, 0, 2)), w_ih, w_hh, b)
    # CPU time of this process: the shared machine deschedules it for long stretches
    best = interleaved(fns, number=5, rounds=7, timer=time.process_time)
    kind = "GRU" if GRU else "LSTM"
    print(f"{kind} classifier training step (batch {B}, T {T}, input {I}, hidden {H}, Adam)")
    for name, t in best.items():
        ratio = f"  {t / best['torch']:.2f}x torch" if "torch" in best else ""
        print(f"  {name:12s} {t * 1e3:8.2f} ms{ratio}")


if __name__ == "__main__":
    main()
