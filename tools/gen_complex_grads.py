"""Writes tests/complex/data/complex_grads.npz and spectral.json: for each case of
tests/complex/cases.py, PyTorch's outputs and input gradients (PyTorch's conjugate Wirtinger
convention) at the case's inputs and output gradients, and the loss trajectory and trained
weights of the spectral model.

Run with a Python that has torch (never a dependency of tensorplug)::

    python tools/gen_complex_grads.py

tests/complex/test_complex_autograd.py compares tensorplug with these values (and with torch
itself where it is installed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from tests.complex import cases  # noqa: E402

DATA = ROOT / "tests" / "complex" / "data"


def main() -> None:
    torch.set_num_threads(1)
    arrays: dict[str, np.ndarray] = {}
    for name in cases.CASES:
        outs, grads = cases.run(torch, name)
        for i, o in enumerate(outs):
            arrays[f"{name}/out{i}"] = o
        for i, g in enumerate(grads):
            arrays[f"{name}/grad{i}"] = g
    np.savez_compressed(DATA / "complex_grads.npz", **arrays)
    losses, model = cases.train_spectral(torch)
    weights = {
        k: [v.real.tolist(), v.imag.tolist()] if v.is_complex() else v.tolist()
        for k, v in model.state_dict().items()
    }
    spectral = {"torch": torch.__version__, "losses": losses, "state_dict": weights}
    (DATA / "spectral.json").write_text(json.dumps(spectral, indent=1) + "\n", encoding="utf-8")
    print(len(cases.CASES), "cases;", "losses", losses[0], losses[-1])


if __name__ == "__main__":
    main()
