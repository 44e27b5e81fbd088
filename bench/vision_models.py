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
``model.to(memory_format=channels_last)`` and a channels_last input. LeNet-5 has its floor too
(``numpy_lenet_step``: im2col + one batched matmul per convolution, pooling as the maxima of
strided quarters, the input gradient through widened rows, its large arrays in a reused
workspace), checked against tensorplug's loss and gradients before it is timed
(``check_lenet_floor``). Run: ``python bench/vision_models.py``
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


# --- the numpy floor of the LeNet-5 step --------------------------------------------------------

# Its arrays of more than a few hundred KB live in this workspace, reused from step to step: a
# fresh one of that size comes from the C library's mmap and is paged in again on each call
# (about 2000 page faults a step, 3-5 ms of system time, measured), which hand-written code
# avoids by owning its buffers.
_WS: dict[tuple[str, tuple[int, ...]], np.ndarray] = {}


def _ws(name: str, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    key = (name, shape)
    if key not in _WS:
        _WS[key] = np.zeros(shape, dtype)
    return _WS[key]


def _lenet_cols(name: str, a: np.ndarray, k: int) -> np.ndarray:
    """The k x k, stride-1 windows of (already padded) ``a`` (n, c, h, w): (n, c * k * k, L),
    copied into the workspace."""
    n, c, h, w = a.shape
    s = a.strides
    oh, ow = h - k + 1, w - k + 1
    v = np.lib.stride_tricks.as_strided(a, (n, c, k, k, oh, ow), (*s[:2], *s[2:], *s[2:]))
    out = _ws(name, (n, c * k * k, oh * ow))
    np.copyto(out.reshape(n, c, k, k, oh, ow), v)
    return out


def _pool2(name: str, a: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """2x2, stride-2 max pooling of ``a`` (n, c, h, w) as three maxima of the four strided
    quarters, and where each quarter holds the window's first maximum (PyTorch's index)."""
    q = [a[:, :, i::2, j::2] for i in (0, 1) for j in (0, 1)]
    m = np.maximum(q[0], q[1], out=_ws(name, q[0].shape))
    np.maximum(m, np.maximum(q[2], q[3]), out=m)
    first = [q[0] == m]
    taken = first[0].copy()
    for v in q[1:]:
        hit = v == m
        hit &= ~taken
        taken |= hit
        first.append(hit)
    return m, first


def _pool2_back(name: str, g: np.ndarray, first: list[np.ndarray], shape: tuple[int, ...]) -> Any:
    out = _ws(name, shape)
    for (i, j), hit in zip(((0, 0), (0, 1), (1, 0), (1, 1)), first, strict=True):
        np.multiply(g, hit, out=out[:, :, i::2, j::2])
    return out


def _lenet_input_grad(g: np.ndarray, w: np.ndarray, size: int) -> np.ndarray:
    """The input gradient of a stride-1, unpadded k x k convolution: ``w^T @ g`` with ``g``'s
    rows widened to the input's width, so each kernel offset's windows add back as one
    contiguous run per channel (25 adds of long runs instead of 25 of 10-element rows); the
    samples inside the product (``g`` laid out (O, N, widened rows): one product, and each
    offset's windows one contiguous block, added in memory order), then the result copied
    back to (N, C, size, size) (tensorplug's ``_input_grad_wide``)."""
    n, o, oh, ow = g.shape
    c, k = w.shape[1], w.shape[2]
    gw = _ws("igrad.g", (o, n, oh, size))  # its last size - ow columns stay zero
    gw[..., :ow] = g.transpose(1, 0, 2, 3)
    run = oh * size
    cols = _ws("igrad.cols", (c * k * k, n * run))
    np.matmul(w.reshape(o, c * k * k).T, gw.reshape(o, n * run), out=cols)
    cols = cols.reshape(c, k * k, n, run)
    acc = _ws("igrad.acc", (c, n, (size + 1) * size))
    acc[...] = 0
    for i in range(k):
        for j in range(k):
            at = acc[:, :, i * size + j : i * size + j + run]
            np.add(at, cols[:, i * k + j], out=at)
    out = _ws("igrad.out", (n, c, size, size))
    out[...] = acc[:, :, : size * size].reshape(c, n, size, size).transpose(1, 0, 2, 3)
    return out


def numpy_lenet_step(x: np.ndarray, y: np.ndarray, state: dict[str, np.ndarray]) -> Any:
    """One training step of LeNet-5 (tests/models/reference.py) in numpy: forward, mean
    cross-entropy, hand-written backward, SGD with momentum 0.9 and lr 0.01, updating
    ``state`` (the model's weights and their momenta); returns the loss and the gradients.
    The same operations in the model's order, each the fastest numpy we found: the
    convolutions as im2col + one batched matmul (the first layer's columns kept for its weight
    gradient), the second one's input gradient through widened rows
    (:func:`_lenet_input_grad`), pooling as the maxima of strided quarters with PyTorch's
    first-maximum rule for the gradient, the large arrays in a reused workspace."""
    p = state
    n = x.shape[0]
    xp = _ws("x", (n, 1, 32, 32))  # its border stays zero
    xp[:, :, 2:30, 2:30] = x
    cols1 = _lenet_cols("cols1", xp, 5)  # (n, 25, 784)
    y1 = np.matmul(p["conv1.weight"].reshape(6, 25), cols1, out=_ws("y1", (n, 6, 784)))
    y1 += p["conv1.bias"][:, None]
    r1 = np.maximum(y1, 0, out=y1).reshape(n, 6, 28, 28)
    p1, first1 = _pool2("p1", r1)
    cols2 = _lenet_cols("cols2", p1, 5)  # (n, 150, 100)
    y2 = np.matmul(p["conv2.weight"].reshape(16, 150), cols2, out=_ws("y2", (n, 16, 100)))
    y2 += p["conv2.bias"][:, None]
    r2 = np.maximum(y2, 0, out=y2).reshape(n, 16, 10, 10)
    p2, first2 = _pool2("p2", r2)
    f = p2.reshape(n, 400)
    h1 = f @ p["fc1.weight"].T
    h1 += p["fc1.bias"]
    np.maximum(h1, 0, out=h1)
    h2 = h1 @ p["fc2.weight"].T
    h2 += p["fc2.bias"]
    np.maximum(h2, 0, out=h2)
    z = h2 @ p["fc3.weight"].T
    z += p["fc3.bias"]
    # mean cross-entropy and its gradient (softmax - one_hot) / n
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = np.mean(np.log(s[:, 0]) - z[rows, y])
    gz = e / (s * n)
    gz[rows, y] -= 1.0 / n
    grads = {"fc3.weight": gz.T @ h2, "fc3.bias": gz.sum(0)}
    g = gz @ p["fc3.weight"]
    g *= h2 > 0
    grads["fc2.weight"], grads["fc2.bias"] = g.T @ h1, g.sum(0)
    g = g @ p["fc2.weight"]
    g *= h1 > 0
    grads["fc1.weight"], grads["fc1.bias"] = g.T @ f, g.sum(0)
    g = (g @ p["fc1.weight"]).reshape(n, 16, 5, 5)
    g = _pool2_back("g2", g, first2, r2.shape)
    g *= r2 > 0
    g2 = g.reshape(n, 16, 100)
    gw2 = np.matmul(g2, cols2.transpose(0, 2, 1), out=_ws("gw2", (n, 16, 150)))
    grads["conv2.weight"] = gw2.sum(0).reshape(16, 6, 5, 5)
    grads["conv2.bias"] = g2.sum(axis=(0, 2))
    g = _lenet_input_grad(g, p["conv2.weight"], 14)
    g = _pool2_back("g1", g, first1, r1.shape)
    g *= r1 > 0
    g1 = g.reshape(n, 6, 784)
    gw1 = np.matmul(g1, cols1.transpose(0, 2, 1), out=_ws("gw1", (n, 6, 25)))
    grads["conv1.weight"] = gw1.sum(0).reshape(6, 1, 5, 5)
    grads["conv1.bias"] = g1.sum(axis=(0, 2))
    for k, gk in grads.items():
        buf = p.setdefault("momentum." + k, np.zeros_like(gk))
        buf *= 0.9
        buf += gk
        p[k] -= 0.01 * buf
    return loss, grads


def check_lenet_floor(x: np.ndarray, y: np.ndarray, steps: int = 3) -> float:
    """The largest difference, relative to the largest magnitude, between the numpy floor's
    loss and gradients and tensorplug's over ``steps`` training steps from the same weights
    (each step's gradients before the update); raises past float32 tolerance."""
    model = reference.lenet5(tp)
    init = reference.initial_state(model)
    model.load_state_dict({k: tp.tensor(v) for k, v in init.items()})
    opt = tp.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    state = {k: v.copy() for k, v in init.items()}
    xt, yt = tp.tensor(x), tp.tensor(y)
    worst = 0.0
    for _ in range(steps):
        opt.zero_grad()
        out = tp.nn.functional.cross_entropy(model(xt), yt)
        out.backward()
        loss, grads = numpy_lenet_step(x, y, state)
        pairs = [(np.asarray(loss), out.detach().numpy())]
        pairs += [(grads[k], p.grad.numpy()) for k, p in model.named_parameters()]
        for a, b in pairs:
            err = float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))
            worst = max(worst, err)
        opt.step()
    if worst > 1e-4:
        raise AssertionError(f"the LeNet-5 numpy floor differs from tensorplug by {worst:.2e}")
    return worst


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
    else:
        check_lenet_floor(x, y)
        lenet = {k: v.copy() for k, v in reference.initial_state(build(tp)).items()}
        fns["numpy floor"] = lambda: numpy_lenet_step(x, y, lenet)
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
