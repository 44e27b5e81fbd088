"""Frozen expectations of fractional max pooling (issue 35) from torch: run with
/work/torchenv/bin/python tools/gen_fractional_pool.py; writes tests/nn/data/fractional_pool.json
(inputs, random samples, outputs, indices and the input gradient of a sum, small cases)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parents[1] / "tests" / "nn" / "data" / "fractional_pool.json"

CASES = [
    # name, nd, input shape, kernel, output_size, output_ratio, dtype
    ("2d_size", 2, (2, 2, 7, 8), (2, 3), (4, 3), None, "float32"),
    ("2d_ratio", 2, (1, 3, 9, 10), (3, 2), None, (0.5, 0.7), "float32"),
    ("2d_unbatched_f64", 2, (2, 6, 5), (2, 2), (3, 3), None, "float64"),
    ("2d_one_output", 2, (1, 1, 5, 6), (2, 2), (1, 4), None, "float32"),
    ("3d_size", 3, (1, 2, 5, 6, 5), (2, 2, 3), (3, 4, 2), None, "float32"),
    ("3d_ratio_unbatched", 3, (2, 6, 5, 7), (2, 2, 2), None, (0.6, 0.5, 0.5), "float64"),
]


def main() -> None:
    rng = np.random.default_rng(35)
    out = []
    for name, nd, shape, kernel, size, ratio, dtype in CASES:
        x = rng.standard_normal(shape).astype(dtype)
        batch = shape[0] if len(shape) == nd + 2 else 1
        u = rng.random((batch, shape[-nd - 1], nd)).astype(dtype)
        t = torch.tensor(x, requires_grad=True)
        f = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
        y, i = f(t, kernel, size, ratio, return_indices=True, _random_samples=torch.tensor(u))
        y.sum().backward()
        out.append({
            "name": name, "nd": nd, "kernel": list(kernel),
            "output_size": None if size is None else list(size),
            "output_ratio": None if ratio is None else list(ratio), "dtype": dtype,
            "x": x.tolist(), "samples": u.tolist(), "y": y.detach().numpy().tolist(),
            "indices": i.numpy().tolist(), "grad": t.grad.numpy().tolist(),
        })  # fmt: skip
    OUT.write_text(json.dumps({"torch": torch.__version__, "cases": out}) + "\n")


if __name__ == "__main__":
    main()
