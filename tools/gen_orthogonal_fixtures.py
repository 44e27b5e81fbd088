"""Writes tests/nn/data/orthogonal.json: PyTorch's ``parametrizations.orthogonal`` on small
Linear layers (each map, tall, square and wide weights, with and without trivialization):
the state_dict, an input, the output, the weight and the gradient of ``original``. Run with a
Python that has torch: ``python tools/gen_orthogonal_fixtures.py``."""

from __future__ import annotations

import json
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[1] / "tests" / "nn" / "data" / "orthogonal.json"
CASES = [
    ("matrix_exp", (4, 4)),
    ("cayley", (5, 3)),
    ("householder", (3, 5)),
    ("householder", (6, 4)),
]


def main() -> None:
    torch.manual_seed(0)
    out = {}
    for m, shape in CASES:
        for triv in (True, False):
            lin = torch.nn.Linear(shape[1], shape[0])
            torch.nn.utils.parametrizations.orthogonal(
                lin, orthogonal_map=m, use_trivialization=triv
            )
            x = torch.randn(2, shape[1])
            y = lin(x)
            y.pow(2).sum().backward()
            out[f"{m}-{shape[0]}x{shape[1]}-{triv}"] = {
                "state": {k: v.tolist() for k, v in lin.state_dict().items()},
                "x": x.tolist(),
                "y": y.tolist(),
                "weight": lin.weight.tolist(),
                "grad": lin.parametrizations.weight.original.grad.tolist(),
            }
    OUT.write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main()
