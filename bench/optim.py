"""tp.optim against torch.optim, in one process: one optimizer step over the parameters of the
MLP of bench/autograd.py (784-128-10: a 128x784 and a 10x128 weight, two biases; float32),
gradients already set, single thread.

* Adam and AdamW, each library with its default ``foreach`` (tensorplug: the multi-tensor path,
  ``aten::_foreach_add_`` + ``aten::_fused_adam_``; torch on CPU: its per-parameter loop), and
  with the other path next to it; goal: tensorplug's default <= 1.0x torch's default;
* SGD with momentum, the same way;
* a whole training step of that MLP (batch 64: forward, backward, Adam step, zero_grad),
  eager and under ``tp.compile``, against torch's eager step.

Run: ``python bench/optim.py`` (with torch on the PYTHONPATH for the comparison).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from _timing import interleaved, us  # noqa: E402

import tensorplug as tp  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SHAPES = [(128, 784), (128,), (10, 128), (10,)]


def _arrays() -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal(s) * 0.03).astype(np.float32) for s in SHAPES]
    grads = [(rng.standard_normal(s) * 0.01).astype(np.float32) for s in SHAPES]
    return params, grads


def make_step(lib: Any, name: str, **kwargs: Any) -> Any:
    """``opt.step`` of ``lib.optim.<name>`` over the MLP's parameters, gradients set once."""
    params, grads = _arrays()
    ps = [lib.tensor(p) for p in params]
    for p, g in zip(ps, grads, strict=True):
        p.grad = lib.tensor(g)
    opt = getattr(lib.optim, name)(ps, **kwargs)
    opt.step()  # the state is made on the first step
    return opt.step


def compare(name: str, **kwargs: Any) -> None:
    fns = {
        "tensorplug (foreach default)": make_step(tp, name, **kwargs),
        "tensorplug foreach=False": make_step(tp, name, foreach=False, **kwargs),
    }
    if torch is not None:
        fns["torch (default: per-parameter)"] = make_step(torch, name, **kwargs)
        fns["torch foreach=True"] = make_step(torch, name, foreach=True, **kwargs)
    t = interleaved(fns, number=100, rounds=30, timer=time.process_time)
    args = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    print(f"{name}({args}) step, MLP 784-128-10 parameters, float32")
    base = t.get("torch (default: per-parameter)")
    for what, v in t.items():
        ratio = f"  {v / base:5.2f}x torch" if base else ""
        print(f"  {what:32s} {us(v)}{ratio}")
    if base:
        r = t["tensorplug (foreach default)"] / base
        print(f"  goal: tensorplug <= 1.00x torch (both defaults): {r:.2f}x")


def make_train_step(lib: Any, compiled: bool = False) -> Any:
    """forward + backward + Adam step + zero_grad of the MLP on one batch of 64."""
    params, _ = _arrays()
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((64, 784)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, 64))
    model = lib.nn.Sequential(lib.nn.Linear(784, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10))
    with lib.no_grad():
        for p, v in zip(model.parameters(), params, strict=True):
            p.copy_(lib.tensor(v))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step() -> Any:
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    run = tp.compile(step, fullgraph=True) if compiled else step
    for _ in range(3):  # the state, and tp.compile's traces
        run()
    return run


def training() -> None:
    fns = {
        "tensorplug eager": make_train_step(tp),
        "tensorplug tp.compile": make_train_step(tp, True),
    }
    if torch is not None:
        fns["torch eager"] = make_train_step(torch)
    t = interleaved(fns, number=50, rounds=20, timer=time.process_time)
    print("training step, MLP 784-128-10, batch 64, Adam, float32")
    base = t.get("torch eager")
    for what, v in t.items():
        ratio = f"  {v / base:5.2f}x torch" if base else ""
        print(f"  {what:32s} {us(v)}{ratio}")


def main() -> None:
    if torch is not None:
        torch.set_num_threads(1)
    compare("Adam", lr=1e-3)
    compare("AdamW", lr=1e-3)
    compare("SGD", lr=1e-2, momentum=0.9)
    if "autograd" in tp.plugins.loaded_names() and "tracer" in tp.plugins.loaded_names():
        training()


if __name__ == "__main__":
    main()
