"""``F.scaled_dot_product_attention`` forward + backward against torch, in one process, one
thread each, at sequence lengths 128 and 512 (batch 8, 4 heads of 32 features: the GPT block
of issue 30), and its peak memory.

Goals: time at most 1.0x torch; peak memory no higher than the math path's (the composition of
ops, which keeps the ``(L, S)`` weights of every head). tensorplug's memory is traced with
tracemalloc (numpy reports its allocations there); torch's CPU allocator is not, so its math
path is given by the bytes of the ``(B, H, L, S)`` tensors it keeps (scores and weights).
Run: ``python bench/attention.py``.
"""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402

import tensorplug as tp  # noqa: E402
import tensorplug.nn.functional as F  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None

B, H, D = 8, 4, 32


def step_fn(fw: Any, sdpa: Any, q: Any, k: Any, v: Any, g: Any, **kw: Any) -> Any:
    def step() -> None:
        for t in (q, k, v):
            t.grad = None
        out = sdpa(q, k, v, **kw)
        out.backward(g)

    return step


def peak_bytes(fn: Any) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    rng = np.random.default_rng(0)
    for T in (128, 512):
        arrays = [rng.standard_normal((B, H, T, D), dtype=np.float32) for _ in range(4)]
        q, k, v = (tp.tensor(a, requires_grad=True) for a in arrays[:3])
        g = tp.tensor(arrays[3])
        fns = {
            "tensorplug": step_fn(tp, F.scaled_dot_product_attention, q, k, v, g, is_causal=True)
        }
        zero_mask = tp.zeros(T, T).requires_grad_()  # a mask that requires grad: the math path
        math_path = step_fn(tp, F.scaled_dot_product_attention, q, k, v, g, attn_mask=zero_mask)
        if torch is not None:
            tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in arrays[:3])
            tg = torch.tensor(arrays[3])
            fns["torch"] = step_fn(
                torch, torch.nn.functional.scaled_dot_product_attention, tq, tk, tv, tg,
                is_causal=True,
            )  # fmt: skip
        # CPU time of this process: the shared machine deschedules it for long stretches
        best = interleaved(fns, number=3 if T == 512 else 10, rounds=7, timer=time.process_time)
        print(f"\nT={T} (batch {B}, {H} heads of {D}), causal, forward + backward")
        for name, t in best.items():
            ratio = f"  {t / best['torch']:.2f}x torch" if "torch" in best else ""
            print(f"  {name:12s} {t * 1e3:8.2f} ms{ratio}")
        fused, math_ = peak_bytes(fns["tensorplug"]), peak_bytes(math_path)
        weights = B * H * T * T * 4  # one (B, H, L, S) float32 tensor
        print(
            f"  peak memory: fused {fused / 2**20:.1f} MiB, tensorplug's math path "
            f"{math_ / 2**20:.1f} MiB; torch's math path keeps >= 2 x {weights / 2**20:.1f} MiB "
            "of (L, S) tensors"
        )


if __name__ == "__main__":
    main()
