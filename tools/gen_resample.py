"""Generate tests/nn/data/resample.npz: torch 2.13's outputs and gradients of F.interpolate,
F.grid_sample, F.affine_grid and F.pixel_shuffle for the cases tests/nn/test_resample.py
replays, so CI (which has no torch) still compares with PyTorch.

Run with the torch environment (not the uv one)::

    /work/torchenv/bin/python tools/gen_resample.py

``index`` is a JSON list of the cases, each with where its arrays lie (offset and shape) in
one of two flat arrays: ``inputs``, the input ``x`` (and ``grid`` or ``theta``) and the
upstream gradient ``g``, small integers stored as int8 (times their step in ``INPUTS``), and
``results``, torch's float64 results rounded to float32: the output ``y`` and the gradients
``dx`` (and ``dgrid``/``dtheta``). Inputs are drawn from a fixed seed, so
regenerating gives the same file for the same torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parent.parent / "tests" / "nn" / "data" / "resample.npz"

# mode -> spatial dims; align_corners applies to the interpolating modes
INTERP_MODES = {
    "nearest": (1, 2, 3),
    "nearest-exact": (1, 2, 3),
    "area": (1, 2, 3),
    "linear": (1,),
    "bilinear": (2,),
    "bicubic": (2,),
    "trilinear": (3,),
}
ALIGNED = ("linear", "bilinear", "bicubic", "trilinear")


def interpolate_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for mode, dims in INTERP_MODES.items():
        aligns: tuple[bool | None, ...] = (False, True) if mode in ALIGNED else (None,)
        for n in dims:
            side = {1: 7, 2: 5, 3: 4}[n]
            for align in aligns:
                for label, kw in (
                    ("down_size", {"size": [max(side - 2, 1)] * n}),
                    ("up_size", {"size": [side + 3 - k for k in range(n)]}),
                    ("down_scale", {"scale_factor": [0.6] * n}),
                    ("up_scale", {"scale_factor": [1.7 + 0.2 * k for k in range(n)]}),
                    ("twice", {"scale_factor": 2.0}),
                    ("recompute", {"scale_factor": 1.3, "recompute_scale_factor": True}),
                ):
                    cases.append(
                        {"fn": "interpolate", "shape": [1, 2] + [side] * n, "mode": mode,
                         "align_corners": align, "label": label, **kw}
                    )  # fmt: skip
    for mode in ("bilinear", "bicubic"):
        for align in (False, True):
            for label, kw in (
                ("aa_down", {"size": [3, 4]}),
                ("aa_up", {"size": [9, 7]}),
                ("aa_scale", {"scale_factor": 0.45}),
            ):
                cases.append(
                    {"fn": "interpolate", "shape": [1, 2, 8, 9], "mode": mode,
                     "align_corners": align, "antialias": True, "label": label, **kw}
                )  # fmt: skip
    return cases


def grid_cases() -> list[dict[str, Any]]:
    cases = []
    for n, modes in ((2, ("bilinear", "nearest", "bicubic")), (3, ("bilinear", "nearest"))):
        for mode in modes:
            for padding in ("zeros", "border", "reflection"):
                for align in (False, True):
                    cases.append(
                        {"fn": "grid_sample", "shape": [2, 2] + [4, 3, 5][3 - n :],
                         "grid": [2] + [2, 3, 2][3 - n :] + [n], "mode": mode,
                         "padding_mode": padding, "align_corners": align}
                    )  # fmt: skip
    return cases


def other_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for size in ([2, 3, 4, 5], [2, 3, 3, 4, 2]):
        for align in (False, True):
            cases.append({"fn": "affine_grid", "size": size, "align_corners": align})
    cases.append({"fn": "pixel_shuffle", "shape": [2, 8, 3, 2], "factor": 2})
    cases.append({"fn": "pixel_unshuffle", "shape": [2, 2, 6, 4], "factor": 2})
    return cases


def _coarse(rng: np.random.Generator, shape: Any, scale: float, bound: int = 8) -> np.ndarray:
    """Values ``k * scale`` for small integers k: exact in float16, and stored as int8 (the
    test multiplies back), which keeps the file small."""
    return rng.integers(-bound, bound + 1, size=shape).astype(np.float64) * scale


def run(case: dict[str, Any], rng: np.random.Generator) -> dict[str, np.ndarray]:
    fn = case["fn"]
    if fn == "affine_grid":
        size = case["size"]
        n = len(size) - 2
        theta = _coarse(rng, (size[0], n, n + 1), 1 / 8)
        t = torch.tensor(theta, requires_grad=True)
        y = F.affine_grid(t, size, align_corners=case["align_corners"])
        g = _coarse(rng, tuple(y.shape), 1 / 4)
        y.backward(torch.tensor(g))
        return {"theta": theta, "y": y.detach().numpy(), "g": g, "dtheta": t.grad.numpy()}
    x = _coarse(rng, case["shape"], 1 / 4)
    xt = torch.tensor(x, requires_grad=True)
    out: dict[str, np.ndarray] = {"x": x}
    if fn == "interpolate":
        kw = {k: case[k] for k in ("size", "scale_factor", "recompute_scale_factor", "antialias")
              if k in case}  # fmt: skip
        y = F.interpolate(xt, mode=case["mode"], align_corners=case["align_corners"], **kw)
    elif fn == "grid_sample":
        grid = _coarse(rng, case["grid"], 1 / 64, 83)
        gt = torch.tensor(grid, requires_grad=True)
        out["grid"] = grid
        y = F.grid_sample(
            xt, gt, mode=case["mode"], padding_mode=case["padding_mode"],
            align_corners=case["align_corners"],
        )  # fmt: skip
    else:
        y = getattr(F, fn)(xt, case["factor"])
    g = _coarse(rng, tuple(y.shape), 1 / 4)
    y.backward(torch.tensor(g))
    out.update(y=y.detach().numpy(), g=g, dx=xt.grad.numpy())
    if fn == "grid_sample":
        out["dgrid"] = gt.grad.numpy()
    return out


# the inputs, stored as int8 multiples of these steps
INPUTS = {"x": 1 / 4, "g": 1 / 4, "theta": 1 / 8, "grid": 1 / 64}


def main() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(35)
    small: list[np.ndarray] = []  # int8 inputs, flattened one after another
    results: list[np.ndarray] = []  # float32 results
    index = []
    cases = interpolate_cases() + grid_cases() + other_cases()
    for case in cases:
        where: dict[str, list[Any]] = {}
        for k, v in run(case, rng).items():
            if k in INPUTS:  # small integers times INPUTS[k]
                blob, a = small, np.round(v / INPUTS[k]).astype(np.int8)
            else:
                blob, a = results, np.asarray(v, np.float32)
            where[k] = [sum(b.size for b in blob), list(a.shape)]
            blob.append(a.ravel())
        index.append({"case": case, "arrays": where})
    arrays = {
        "index": np.array(json.dumps(index)),
        "inputs": np.concatenate(small),
        "results": np.concatenate(results),
        "torch_version": np.array(torch.__version__),
    }
    np.savez_compressed(OUT, **arrays)
    print(f"{len(cases)} cases, {OUT.stat().st_size} bytes -> {OUT}")


if __name__ == "__main__":
    main()
