"""Writes tests/models/data/sequence_models.npz: the initial weights, the data and PyTorch's
20-step Adam loss trajectories of two sequence models, an LSTM classifier and a two-layer GRU
next-step regressor, so tests/models/test_sequence_models.py checks that tensorplug trains them
the same way where torch is not installed (where it is, the test runs torch itself).

The models are written once, as a PyTorch user writes them, against a module ``lib`` that is
``torch`` or ``tensorplug`` (:func:`models`). Run with a Python that has torch::

    python tools/gen_sequence_models.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "models" / "data" / "sequence_models.npz"
STEPS = 20
LR = 1e-2
# the LSTM classifier: (batch, time, features) -> one of CLASSES; the GRU: next-step regression
B, T, FEATURES, HIDDEN, CLASSES = 8, 10, 6, 16, 3
GRU_FEATURES, GRU_HIDDEN = 4, 12


def models(lib: Any) -> tuple[type, type]:
    """The two model classes, written against ``lib`` (``torch`` or ``tensorplug``)."""
    nn = lib.nn

    class LSTMClassifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(FEATURES, HIDDEN, batch_first=True)
            self.head = nn.Linear(HIDDEN, CLASSES)

        def forward(self, x: Any) -> Any:
            _, (h_n, _) = self.lstm(x)
            return self.head(h_n[-1])

    class GRUSequenceModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gru = nn.GRU(GRU_FEATURES, GRU_HIDDEN, num_layers=2)
            self.out = nn.Linear(GRU_HIDDEN, GRU_FEATURES)

        def forward(self, x: Any) -> Any:
            y, _ = self.gru(x)  # (T, B, hidden): a prediction at every step
            return self.out(y)

    return LSTMClassifier, GRUSequenceModel


def data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(30)
    return {
        "lstm_x": rng.standard_normal((STEPS, B, T, FEATURES)).astype(np.float32),
        "lstm_y": rng.integers(0, CLASSES, (STEPS, B)),
        # sine waves of random phases: the next step is predictable
        "gru_x": np.sin(
            0.6 * np.arange(T)[None, :, None, None]
            + rng.uniform(0, 2 * np.pi, (STEPS, 1, B, GRU_FEATURES))
        ).astype(np.float32),
    }


def train(lib: Any, which: str, state: dict[str, Any] | None, d: dict[str, np.ndarray]) -> Any:
    """Train one model for STEPS Adam steps from ``state`` (``None``: its own initialization);
    returns the model, its initial state (as numpy) and the losses."""
    LSTMClassifier, GRUSequenceModel = models(lib)
    model = LSTMClassifier() if which == "lstm" else GRUSequenceModel()
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    init = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    opt = lib.optim.Adam(model.parameters(), lr=LR)
    losses = []
    for i in range(STEPS):
        opt.zero_grad()
        if which == "lstm":
            logits = model(lib.tensor(d["lstm_x"][i]))
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(d["lstm_y"][i]))
        else:
            x = lib.tensor(d["gru_x"][i])
            loss = lib.nn.functional.mse_loss(model(x[:-1]), x[1:])
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return model, init, np.array(losses)


def main() -> None:
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    d = data()
    out: dict[str, np.ndarray] = {}  # (the data is drawn again from its seed: data())
    for which in ("lstm", "gru"):
        _, init, losses = train(torch, which, None, d)
        out[f"{which}/losses"] = losses
        out.update({f"{which}/state/{k}": v for k, v in init.items()})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
