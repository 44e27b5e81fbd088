"""Training steps of vision models against torch eager, in one process, one thread each.

* LeNet-5 (tests/models/reference.py), batch 64 of 1x28x28, cross-entropy, SGD with momentum:
  goal at most 1.0x torch eager;
* a ResNet basic block (two 3x3 convolutions of 64 channels, BatchNorm, ReLU, the identity
  shortcut), batch 32 of 64x32x32, a mean-squared loss, SGD: goal at most 1.0x torch eager;

each eager, and compiled with ``tp.compile`` (the whole step: forward, backward, update).
Both frameworks start from the same weights and data; times are the process's CPU time (best of
7 interleaved rounds), so a loaded machine descheduling it adds nothing. The ResNet block also runs as hand-written
numpy (``numpy_block_step``: the same step with the best numpy convolution we have, im2col of a
few samples at a time + one matmul, the stride-1 input gradient as a convolution with the
flipped weight, batch norm's closed-form gradient): the floor a numpy-backed step can reach, so
the gap to torch splits into "floor vs torch" and "tensorplug vs floor"; and eagerly with
``model.to(memory_format=channels_last)`` and a channels_last input. Run: ``python bench/vision_models.py``
(torch where importable; without it, only tensorplug's times print).
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


# --- the numpy floor of the ResNet block step ---------------------------------------------------


def _cols(x: np.ndarray) -> np.ndarray:
    """The 3x3, padding-1 windows of ``x`` (n, c, h, w): (n, c * 9, h * w), one copy."""
    n, c, h, w = x.shape
    a = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    s = a.strides
    v = np.lib.stride_tricks.as_strided(a, (n, c, 3, 3, h, w), (*s[:2], *s[2:], *s[2:]))
    return v.reshape(n, c * 9, h * w)


def _conv(x: np.ndarray, w: np.ndarray, chunk: int = 1) -> np.ndarray:
    """3x3 convolution, padding 1, no bias: im2col of ``chunk`` samples at a time + matmul."""
    n, _, h, wd = x.shape
    wm = w.reshape(w.shape[0], -1)
    y = np.empty((n, w.shape[0], h * wd), np.float32)
    for i in range(0, n, chunk):
        np.matmul(wm, _cols(x[i : i + chunk]), out=y[i : i + chunk])
    return y.reshape(n, w.shape[0], h, wd)


def _conv_wgrad(x: np.ndarray, g: np.ndarray, chunk: int = 1) -> np.ndarray:
    n, c = x.shape[:2]
    gm = g.reshape(n, g.shape[1], -1)
    gw = np.zeros((g.shape[1], c * 9), np.float32)
    for i in range(0, n, chunk):
        gw += np.matmul(gm[i : i + chunk], _cols(x[i : i + chunk]).transpose(0, 2, 1)).sum(0)
    return gw.reshape(g.shape[1], c, 3, 3)


def _conv_igrad(g: np.ndarray, w: np.ndarray) -> np.ndarray:
    return _conv(g, np.ascontiguousarray(w.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1]))


def _bn(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, ...]:
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    xc = x - mean
    var = np.mean(xc * xc, axis=(0, 2, 3), keepdims=True)
    inv = 1.0 / np.sqrt(var + 1e-5)
    xhat = xc * inv
    return xhat * gamma[:, None, None] + beta[:, None, None], xhat, inv


def _bn_back(g: np.ndarray, xhat: np.ndarray, inv: np.ndarray, gamma: np.ndarray) -> Any:
    m = g.shape[0] * g.shape[2] * g.shape[3]
    gb = g.sum(axis=(0, 2, 3))
    gg = np.einsum("nchw,nchw->c", g, xhat)
    k = (gamma * inv.reshape(-1) / m)[:, None, None]
    gx = k * (m * g - gb[:, None, None] - xhat * gg[:, None, None])
    return gx, gg, gb


def numpy_block_step(x: np.ndarray, target: np.ndarray, state: dict[str, np.ndarray]) -> Any:
    """One training step of the ResNet basic block in numpy (forward, MSE, backward, SGD with
    momentum 0.9, lr 0.01), updating ``state`` (the block's weights and their momenta)."""
    p = state
    y1 = _conv(x, p["conv1.weight"])
    b1, xh1, inv1 = _bn(y1, p["bn1.weight"], p["bn1.bias"])
    r1 = np.maximum(b1, 0, out=b1)
    y2 = _conv(r1, p["conv2.weight"])
    b2, xh2, inv2 = _bn(y2, p["bn2.weight"], p["bn2.bias"])
    s = b2 + x
    out = np.maximum(s, 0)
    diff = out - target
    loss = np.mean(diff * diff)
    g = diff * (2.0 / diff.size)
    g *= s > 0
    g2, gw_bn2, gb_bn2 = _bn_back(g, xh2, inv2, p["bn2.weight"])
    grads = {"conv2.weight": _conv_wgrad(r1, g2), "bn2.weight": gw_bn2, "bn2.bias": gb_bn2}
    gr1 = _conv_igrad(g2, p["conv2.weight"])
    gr1 *= r1 > 0
    g1, grads["bn1.weight"], grads["bn1.bias"] = _bn_back(gr1, xh1, inv1, p["bn1.weight"])
    grads["conv1.weight"] = _conv_wgrad(x, g1)
    for k, gk in grads.items():
        buf = p.setdefault("momentum." + k, np.zeros_like(gk))
        buf *= 0.9
        buf += gk
        p[k] -= 0.01 * buf
    return loss


def make_step(
    fw: Any, build: Any, x: np.ndarray, y: np.ndarray, loss: str, channels_last: bool = False
) -> Any:
    model = build(fw)
    model.load_state_dict({k: fw.tensor(v) for k, v in reference.initial_state(model).items()})
    xt, yt = fw.tensor(x), fw.tensor(y)
    if channels_last:  # the model's weights, the input and the target
        model.to(memory_format=fw.channels_last)
        xt, yt = (t.contiguous(memory_format=fw.channels_last) for t in (xt, yt))
    opt = fw.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
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
    if build is basic_block:
        fns["tensorplug channels_last"] = make_step(tp, build, x, y, loss, channels_last=True)
        state = {k: v.copy() for k, v in reference.initial_state(basic_block(tp)).items()}
        fns["numpy floor"] = lambda: numpy_block_step(x, y, state)
    best = interleaved(fns, number=number, rounds=7, timer=time.process_time)
    print(f"\n{name}")
    for k, t in best.items():
        ratio = f"  {t / best['torch eager']:.2f}x torch eager" if torch is not None else ""
        if "numpy floor" in best and k != "numpy floor":
            ratio += f"  {t / best['numpy floor']:.2f}x the numpy floor"
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
