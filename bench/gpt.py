"""A GPT-style block's training step (batch 8, T 64, d 128, 4 heads, vocab 256, one block,
AdamW; the model of tests/models/gpt.py, causal attention through
``F.scaled_dot_product_attention``), tensorplug eagerly and with the whole step under
``tp.compile``, against torch eagerly: one process, one thread each, in CPU time (``time.process_time``).

Goal: at most 1.0x torch eager. The floor: the step's matrix products alone, as raw numpy
calls of the same shapes and layouts (recorded from one eager step). Run with torch importable (HELPERS.md):
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

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402

# The floor: the step's matrix products alone. numpy's matmul is wrapped before tensorplug's
# kernels bind it, so that one step's products (operand shapes, dtypes and layouts) can be
# recorded and replayed as raw numpy calls (the wrapper costs a Python call per product, ~100
# a step, well under 1% of it).
_GEMMS: list[tuple[Any, Any]] | None = None
_matmul = np.matmul


def _layout(a: Any) -> Any:
    transposed = a.ndim >= 2 and not a.flags.c_contiguous and a.swapaxes(-1, -2).flags.c_contiguous
    return tuple(a.shape), a.dtype, transposed


def _recording_matmul(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
    if _GEMMS is not None and isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        _GEMMS.append((_layout(a), _layout(b)))
    return _matmul(a, b, *args, **kwargs)


np.matmul = _recording_matmul  # type: ignore[assignment]

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


def gemm_floor(step: Any) -> Any:
    """The matrix products one call of ``step`` makes, replayed on numpy arrays of the same
    shapes, dtypes and layouts (transposed views where the kernel passed one)."""
    global _GEMMS
    _GEMMS = []
    step()
    recorded, _GEMMS = _GEMMS, None
    rng = np.random.default_rng(0)

    def make(layout: Any) -> Any:
        shape, dtype, transposed = layout
        if transposed:
            shape = (*shape[:-2], shape[-1], shape[-2])
        a = rng.standard_normal(shape).astype(dtype)
        return a.swapaxes(-1, -2) if transposed else a

    pairs = [(make(a), make(b)) for a, b in recorded]
    return lambda: [_matmul(a, b) for a, b in pairs]


def main() -> None:
    attention = "mha" if "--mha" in sys.argv else "sdpa"
    fns = {
        "tensorplug eager": make_step(tp, attention, False),
        "tensorplug compiled": make_step(tp, attention, True),
    }
    if torch is not None:
        fns["torch eager"] = make_step(torch, attention, False)
    fns["floor: the GEMMs"] = gemm_floor(fns["tensorplug eager"])
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
    floor = best["floor: the GEMMs"]
    for name in ("tensorplug eager", "tensorplug compiled"):
        print(f"  {name} / floor: {best[name] / floor:.2f}x")


if __name__ == "__main__":
    main()
