"""Resampling against torch, in one process, one thread each: ``F.interpolate`` bilinear
(forward, and forward + backward) and ``F.grid_sample`` bilinear (forward, and forward +
backward in input and grid), at a UNet decoder's sizes, float32 on CPU.

Each line prints tensorplug's and torch's best per-call CPU time and their ratio over several
rounds of interleaved runs (the shared machine's noise only adds time). Without torch the
tensorplug times are printed alone. Run: ``python bench/resample.py`` (with torch importable:
``PYTHONPATH=<torch site-packages> uv run python bench/resample.py``).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

# one thread for numpy (and so tensorplug) and torch alike
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402
import tensorplug.nn.functional as F  # noqa: E402

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None

# (label, input shape, output size or grid shape)
INTERPOLATE = [
    ("8x64x16x16 -> 32x32", (8, 64, 16, 16), (32, 32)),
    ("4x32x64x64 -> 128x128", (4, 32, 64, 64), (128, 128)),
    ("4x32x64x64 -> 40x40", (4, 32, 64, 64), (40, 40)),
]
GRID_SAMPLE = [
    ("4x16x32x32, grid 32x32", (4, 16, 32, 32), (4, 32, 32, 2)),
    ("2x32x64x64, grid 48x48", (2, 32, 64, 64), (2, 48, 48, 2)),
]


def _tensors(shape: tuple[int, ...], seed: int, grad: bool, low: float = -1.0) -> tuple[Any, Any]:
    a = np.random.default_rng(seed).uniform(low, 1.0, shape).astype(np.float32)
    p = tp.tensor(a)
    p.requires_grad_(grad)
    t = torch.tensor(a).requires_grad_(grad) if torch is not None else None
    return p, t


def _report(label: str, fns: dict[str, Any], number: int) -> None:
    # CPU time of this process: on a loaded shared machine, wall time measures the neighbours
    best = interleaved(fns, number=number, rounds=5, timer=time.process_time)
    line = f"  {label:32s} tensorplug {us(best['tp'])}"
    if "torch" in best:
        line += f"   torch {us(best['torch'])}   ratio {best['tp'] / best['torch']:5.2f}x"
    print(line)


def bench_interpolate() -> None:
    print("F.interpolate(mode='bilinear', align_corners=False), float32")
    for label, shape, size in INTERPOLATE:
        for backward in (False, True):
            p, t = _tensors(shape, 0, backward)
            g = np.ones((shape[0], shape[1], *size), np.float32)
            gp = tp.tensor(g)
            gt = torch.tensor(g) if torch is not None else None

            def run_tp(
                p: Any = p, gp: Any = gp, backward: bool = backward, size: Any = size
            ) -> None:
                y = F.interpolate(p, size=size, mode="bilinear", align_corners=False)
                if backward:
                    y.backward(gp)
                    p.grad = None

            fns = {"tp": run_tp}
            if torch is not None:

                def run_torch(
                    t: Any = t, gt: Any = gt, backward: bool = backward, size: Any = size
                ) -> None:
                    y = TF.interpolate(t, size=size, mode="bilinear", align_corners=False)
                    if backward:
                        y.backward(gt)
                        t.grad = None

                fns["torch"] = run_torch
            _report(f"{label} {'fwd+bwd' if backward else 'fwd'}", fns, 10)


def bench_grid_sample() -> None:
    print("F.grid_sample(mode='bilinear', padding_mode='zeros', align_corners=False), float32")
    for label, shape, gshape in GRID_SAMPLE:
        for backward in (False, True):
            p, t = _tensors(shape, 1, backward)
            gp_, gt_ = _tensors(gshape, 2, backward, low=-1.1)
            out = (shape[0], shape[1], *gshape[1:3])
            ones = np.ones(out, np.float32)
            op, ot = tp.tensor(ones), (torch.tensor(ones) if torch is not None else None)

            def run_tp(p: Any = p, g: Any = gp_, o: Any = op, backward: bool = backward) -> None:
                y = F.grid_sample(p, g, align_corners=False)
                if backward:
                    y.backward(o)
                    p.grad = g.grad = None

            fns = {"tp": run_tp}
            if torch is not None:

                def run_torch(
                    t: Any = t, g: Any = gt_, o: Any = ot, backward: bool = backward
                ) -> None:
                    y = TF.grid_sample(t, g, align_corners=False)
                    if backward:
                        y.backward(o)
                        t.grad = g.grad = None

                fns["torch"] = run_torch
            _report(f"{label} {'fwd+bwd' if backward else 'fwd'}", fns, 5)


def main() -> None:
    if torch is not None:
        torch.set_num_threads(1)
    else:
        print("(torch is not importable: tensorplug's times only)")
    bench_interpolate()
    bench_grid_sample()


if __name__ == "__main__":
    main()
