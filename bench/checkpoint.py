"""Activation checkpointing: the memory it saves and the time it costs, in one process.

A transformer-style stack: 8 residual MLP blocks ``h + Linear(GELU(Linear(LayerNorm(h))))``
(width 256, hidden 1024, 512 rows; the tanh GELU: the exact one's kernel computes erfc in
float64 with temporaries of ~25x its input, which would set the peak by itself), the loss ``sum(h)``, run plain and with each block under
``tensorplug.utils.checkpoint.checkpoint(..., use_reentrant=False)``. Reported: the memory the
graph holds between forward and backward, the peak over forward + backward (tracemalloc,
numpy's arrays included; parameters and their gradients from before are not counted), and the
time of a forward + backward (best of several, without tracemalloc). With torch importable the
same figures for torch.utils.checkpoint are printed beside them.

Run: ``PYTHONPATH=/work/torchenv/lib/python3.11/site-packages uv run python bench/checkpoint.py``.
"""

from __future__ import annotations

import gc
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import tensorplug as tp  # noqa: E402
from tensorplug.utils.checkpoint import checkpoint  # noqa: E402

try:
    import torch
    import torch.utils.checkpoint as tcp

    torch.set_num_threads(1)
except ImportError:
    torch = None  # type: ignore[assignment]

WIDTH, HIDDEN, ROWS, DEPTH = 256, 1024, 512, 8


def stack(nn: Any) -> list[Any]:
    return [
        nn.Sequential(
            nn.LayerNorm(WIDTH),
            nn.Linear(WIDTH, HIDDEN),
            nn.GELU(approximate="tanh"),
            nn.Linear(HIDDEN, WIDTH),
        )
        for _ in range(DEPTH)
    ]


def run(blocks: list[Any], x: Any, ck: Callable[..., Any] | None) -> Any:
    h = x
    for b in blocks:
        h = h + (b(h) if ck is None else ck(b, h, use_reentrant=False))
    return h


def memory(step: Callable[[], Any]) -> tuple[float, float]:
    """(MiB held after the forward, peak MiB over forward + backward)."""
    gc.collect()
    tracemalloc.start()
    out = step()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    out.sum().backward()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return held / 2**20, max(peak, held) / 2**20


def seconds(fn: Callable[[], Any], n: int = 5) -> float:
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    tp.manual_seed(0)
    blocks = stack(tp.nn)
    x = tp.randn(ROWS, WIDTH, requires_grad=True)
    rows = []
    for name, ck in (("plain", None), ("checkpoint", checkpoint)):
        run(blocks, x, ck).sum().backward()  # warm up
        held, peak = memory(lambda ck=ck: run(blocks, x, ck))
        t = seconds(lambda ck=ck: run(blocks, x, ck).sum().backward())
        rows.append((f"tensorplug {name}", held, peak, t))
    if torch is not None:
        tblocks = stack(torch.nn)
        tx = torch.randn(ROWS, WIDTH, requires_grad=True)
        for name, ck in (("plain", None), ("checkpoint", tcp.checkpoint)):
            run(tblocks, tx, ck).sum().backward()
            t = seconds(lambda ck=ck: run(tblocks, tx, ck).sum().backward())
            rows.append((f"torch {name}", float("nan"), float("nan"), t))
    print(f"{DEPTH} blocks, width {WIDTH}, hidden {HIDDEN}, {ROWS} rows")
    print(f"{'':24s} {'held after fwd':>15s} {'peak fwd+bwd':>13s} {'fwd+bwd time':>13s}")
    for name, held, peak, t in rows:
        print(f"{name:24s} {held:12.1f} MiB {peak:9.1f} MiB {t * 1e3:10.1f} ms")
    (_, h0, p0, t0), (_, h1, p1, t1) = rows[:2]
    print(
        f"tensorplug: checkpointing holds {h1 / h0:.2f}x the memory after forward, peaks at "
        f"{p1 / p0:.2f}x, and takes {t1 / t0:.2f}x the time"
    )
    if torch is not None:
        print(f"torch: checkpointing takes {rows[3][3] / rows[2][3]:.2f}x the time")


if __name__ == "__main__":
    main()
