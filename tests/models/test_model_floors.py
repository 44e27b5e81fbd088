"""The hand-written numpy floors of the LeNet-5 training step (bench/vision_models.py) and of
the GPT-style block's (bench/gpt.py) compute what tensorplug's steps compute: the same loss and
gradients over a few steps (and, for the GPT step, the same AdamW update), to float32
tolerance. The benchmark's floor is only a floor if it does the same work."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
from needs import autograd

autograd()

BENCH = Path(__file__).resolve().parents[2] / "bench" / "vision_models.py"


def _bench() -> object:
    """The bench script as a module; the entries it puts on ``sys.path`` go again after."""
    spec = importlib.util.spec_from_file_location("_vision_models_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


def test_lenet_floor_matches_tensorplug() -> None:
    bench = _bench()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, 16)
    assert bench.check_lenet_floor(x, y, steps=3) < 1e-4  # type: ignore[attr-defined]


def test_gpt_floor_matches_tensorplug() -> None:
    # bench/gpt.py wraps np.matmul at import (to record the step's products): put it back
    spec = importlib.util.spec_from_file_location("_gpt_bench", BENCH.parent / "gpt.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    path, matmul = list(sys.path), np.matmul
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
        np.matmul = matmul
    grads, params = module.check_numpy_floor(steps=2)  # type: ignore[attr-defined]
    assert grads < 1e-4 and params < 1e-6
