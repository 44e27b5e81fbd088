"""A GPT-style block's training step (batch 8, T 64, d 128, 4 heads, vocab 256, one block,
AdamW; the model of tests/models/gpt.py, causal attention through
``F.scaled_dot_product_attention``), tensorplug eagerly and with the whole step under
``tp.compile``, against torch eagerly: one process, one thread each, in CPU time (``time.process_time``).

Goal: at most 1.0x torch eager. Run with torch importable (HELPERS.md):
``PYTHONPATH=<torch site-packages> python bench/gpt.py [--mha] [--profile]``; ``--profile``
prints cProfile's top functions of tensorplug's eager step (with ``--compiled``: the
compiled step).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))

from _timing import interleaved  # noqa: E402

import tensorplug as tp  # noqa: E402
from tests.models import gpt  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None

CONFIG = {"vocab": 256, "block_size": 64, "d": 128, "heads": 4, "layers": 1}
BATCH = 8


def make_step(lib: Any, attention: str, compiled: bool) -> Any:
    model = gpt.make_model(lib, attention, **CONFIG)
    gpt.copy_weights(lib, model)
    opt = gpt.optimizer(lib, model)
    step = gpt.train_step(lib, model, opt)
    if compiled:
        step = lib.compile(step)
    x, y = gpt.batches(1, BATCH, CONFIG["block_size"], CONFIG["vocab"])[0]
    xt, yt = lib.tensor(x), lib.tensor(y)
    for _ in range(3):  # AdamW's state; tp.compile's confirming traces
        step(xt, yt)
    return lambda: step(xt, yt)


def main() -> None:
    attention = "mha" if "--mha" in sys.argv else "sdpa"
    fns = {
        "tensorplug eager": make_step(tp, attention, False),
        "tensorplug compiled": make_step(tp, attention, True),
    }
    if torch is not None:
        fns["torch eager"] = make_step(torch, attention, False)
    if "--profile" in sys.argv:
        import cProfile
        import pstats

        fn = fns["tensorplug compiled" if "--compiled" in sys.argv else "tensorplug eager"]
        prof = cProfile.Profile()
        prof.runcall(lambda: [fn() for _ in range(20)])
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    # CPU time of this process: the shared machine deschedules it for long stretches
    best = interleaved(fns, number=5, rounds=7, timer=time.process_time)
    print(
        f"GPT-style block training step ({attention}): batch {BATCH}, T {CONFIG['block_size']}, "
        f"d {CONFIG['d']}, {CONFIG['heads']} heads, vocab {CONFIG['vocab']}, AdamW"
    )
    for name, t in best.items():
        ratio = f"  {t / best['torch eager']:.2f}x torch eager" if "torch eager" in best else ""
        print(f"  {name:20s} {t * 1e3:8.2f} ms{ratio}")


if __name__ == "__main__":
    main()
