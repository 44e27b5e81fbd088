"""Training steps of vision models against torch eager, in one process, one thread each.

* LeNet-5 (tests/models/reference.py), batch 64 of 1x28x28, cross-entropy, SGD with momentum:
  goal at most 1.0x torch eager;
* a ResNet basic block (two 3x3 convolutions of 64 channels, BatchNorm, ReLU, the identity
  shortcut), batch 32 of 64x32x32, a mean-squared loss, SGD: goal at most 1.0x torch eager;

each eager, and compiled with ``tp.compile`` (the whole step: forward, backward, update).
Both frameworks start from the same weights and data. Run: ``python bench/vision_models.py``
(torch where importable; without it, only tensorplug's times print).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from _timing import interleaved  # noqa: E402

import tensorplug as tp  # noqa: E402
from tests.models import reference  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None


def basic_block(fw: Any) -> Any:
    nn = fw.nn

    class BasicBlock(nn.Module):
        def __init__(self, planes: int = 64) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)

        def forward(self, x: Any) -> Any:
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += x
            return self.relu(out)

    return BasicBlock()


def make_step(fw: Any, build: Any, x: np.ndarray, y: np.ndarray, loss: str) -> Any:
    model = build(fw)
    model.load_state_dict({k: fw.tensor(v) for k, v in reference.initial_state(model).items()})
    opt = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xt, yt = fw.tensor(x), fw.tensor(y)
    F = fw.nn.functional
    lossfn = F.cross_entropy if loss == "ce" else F.mse_loss

    def step() -> Any:
        opt.zero_grad()
        out = lossfn(model(xt), yt)
        out.backward()
        opt.step()
        return out

    return step


def run(name: str, build: Any, x: np.ndarray, y: np.ndarray, loss: str, number: int) -> None:
    fns = {"tensorplug eager": make_step(tp, build, x, y, loss)}
    compiled = tp.compile(make_step(tp, build, x, y, loss))
    for _ in range(3):
        compiled()
    fns["tensorplug compiled"] = compiled
    if torch is not None:
        fns["torch eager"] = make_step(torch, build, x, y, loss)
    best = interleaved(fns, number=number, rounds=7)
    print(f"\n{name}")
    for k, t in best.items():
        ratio = f"  {t / best['torch eager']:.2f}x torch eager" if torch is not None else ""
        print(f"  {k:22s} {t * 1e3:8.2f} ms{ratio}")


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    run("LeNet-5 step (batch 64, 1x28x28, SGD)", reference.lenet5, x, y, "ce", number=5)
    x = rng.standard_normal((32, 64, 32, 32), dtype=np.float32)
    target = rng.standard_normal((32, 64, 32, 32), dtype=np.float32)
    run(
        "ResNet basic block step (batch 32, 64x32x32, BatchNorm, SGD)",
        basic_block,
        x,
        target,
        "mse",
        number=1,
    )


if __name__ == "__main__":
    main()
